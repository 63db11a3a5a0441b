// Reading /proc and /sys: shared by system discovery and the storage description of a folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpubench::detail {

// The first line of a sysfs/procfs file without trailing blanks; "" when unreadable.
[[nodiscard]] std::string read_first_line(const std::filesystem::path& path);

struct mount_entry {
  std::string device;
  std::string mount_point;
  std::string type;
};
// /proc/self/mounts, in its order.
[[nodiscard]] std::vector<mount_entry> read_mounts();

struct block_device_facts {
  std::string model;
  bool nvme = false;
  bool rotational = false;
};
// What /sys says of a whole disk, given its /sys/block/NAME (or resolved /sys/devices/...) folder.
[[nodiscard]] block_device_facts describe_block_device(const std::filesystem::path& sys_dir);

}  // namespace gpubench::detail
