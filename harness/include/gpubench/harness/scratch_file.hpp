// Test files that gpubench creates for storage benchmarks. Created exclusively (O_EXCL, no
// following of links) under a folder the user named; removed when the object goes away, on error
// and on interrupt. A file gpubench did not create is never opened for writing or removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace gpubench {

class removed_on_stop;

// The 64-bit word at byte `offset` (a multiple of 8) of a scratch file filled with `seed`:
// pseudo-random, so devices that compress or deduplicate cannot shortcut the reads, and every
// read can be checked against it.
[[nodiscard]] std::uint64_t scratch_word(std::uint64_t offset, std::uint64_t seed) noexcept;

class scratch_file {
 public:
  // Creates gpubench-scratch-<pid>-<n>.dat in `dir` and writes `bytes` (a multiple of 4096) of
  // the pattern. Throws api_error (disk full, permissions) after removing what it created, and
  // std::runtime_error("interrupted") if a stop signal arrives while it writes; a second signal
  // (an immediate stop) still removes it.
  scratch_file(const std::filesystem::path& dir, std::uint64_t bytes, std::uint64_t seed);
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  ~scratch_file();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t size() const noexcept { return bytes_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::filesystem::path path_;
  std::uint64_t bytes_;
  std::uint64_t seed_;
  std::unique_ptr<removed_on_stop> stop_guard_;  // removed even on a stop at once
};

// What backs a folder: the block device (partition resolved to its disk), whether it is NVMe and
// rotational, its model, the filesystem type and mount point.
struct storage_info {
  std::string device;  // "nvme0n1", "" when not a block device (tmpfs, network)
  std::string model;
  bool nvme = false;
  bool rotational = false;
  std::string filesystem;
  std::string mount_point;
};
[[nodiscard]] storage_info describe_storage(const std::filesystem::path& dir);

// The room on the filesystem under a folder, as statvfs tells it.
struct filesystem_space {
  std::uint64_t device = 0;  // st_dev: folders with the same one share the space below
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};
[[nodiscard]] filesystem_space space_of(const std::filesystem::path& dir);

// The most bytes (a multiple of `block`) each of the test files may take when one file goes in
// each folder of `spaces`, so that every filesystem keeps at least 1 GiB and a tenth of itself
// free after all the files on it are written: folders on one filesystem share its room.
[[nodiscard]] std::uint64_t room_per_test_file(const std::vector<filesystem_space>& spaces,
                                               std::uint64_t block);

}  // namespace gpubench
