#include "detail/procfs.hpp"

#include <fstream>

namespace gpubench::detail {

std::string read_first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\t')) {
    line.pop_back();
  }
  return line;
}

std::vector<mount_entry> read_mounts() {
  std::vector<mount_entry> mounts;
  std::ifstream in("/proc/self/mounts");
  mount_entry entry;
  std::string rest;
  while (in >> entry.device >> entry.mount_point >> entry.type && std::getline(in, rest)) {
    mounts.push_back(entry);
  }
  return mounts;
}

block_device_facts describe_block_device(const std::filesystem::path& sys_dir) {
  block_device_facts facts;
  facts.model = read_first_line(sys_dir / "device" / "model");
  facts.nvme = sys_dir.filename().string().rfind("nvme", 0) == 0;
  facts.rotational = read_first_line(sys_dir / "queue" / "rotational") == "1";
  return facts;
}

}  // namespace gpubench::detail
