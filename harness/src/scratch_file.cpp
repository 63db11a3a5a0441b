#include "gpubench/harness/scratch_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <stdexcept>
#include <vector>

#include "detail/procfs.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/stop_cleanup.hpp"
#include "gpubench/harness/runner.hpp"

namespace gpubench {

namespace fs = std::filesystem;

std::uint64_t scratch_word(std::uint64_t offset, std::uint64_t seed) noexcept {
  std::uint64_t x = (offset / 8) * 0x9E3779B97F4A7C15ULL + seed;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

namespace {
std::atomic<unsigned> scratch_counter{0};
}

scratch_file::scratch_file(const fs::path& dir, std::uint64_t bytes, std::uint64_t seed)
    : bytes_(bytes), seed_(seed) {
  if (bytes == 0 || bytes % 4096 != 0) {
    throw std::invalid_argument("scratch_file: size must be a positive multiple of 4096");
  }
  int fd = -1;
  // A fresh name; O_EXCL refuses an existing file (or a link planted under the name).
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    path_ = dir / ("gpubench-scratch-" + std::to_string(::getpid()) + "-" +
                   std::to_string(scratch_counter.fetch_add(1)) + ".dat");
    fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      throw_system_error("open(" + path_.string() + ", O_CREAT|O_EXCL)", errno);
    }
  }
  if (fd < 0) {
    throw std::runtime_error("scratch_file: no free file name in " + dir.string());
  }
  stop_guard_ = std::make_unique<removed_on_stop>(path_);
  const auto fail = [&](const std::string& call, int error) {
    ::close(fd);
    ::unlink(path_.c_str());
    throw_system_error(call, error);
  };
  constexpr std::size_t chunk = std::size_t{8} << 20;
  constexpr std::uint64_t sync_window = std::uint64_t{64} << 20;  // a multiple of chunk
  std::vector<std::uint64_t> buffer(chunk / 8);
  for (std::uint64_t offset = 0; offset < bytes; offset += chunk) {
    if (interrupt_requested()) {
      ::close(fd);
      ::unlink(path_.c_str());
      throw std::runtime_error("interrupted while writing the scratch file");
    }
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, bytes - offset));
    for (std::size_t i = 0; i < n / 8; ++i) buffer[i] = scratch_word(offset + 8 * i, seed);
    std::size_t done = 0;
    while (done < n) {
      const ssize_t w = ::pwrite(fd, reinterpret_cast<const char*>(buffer.data()) + done, n - done,
                                 static_cast<off_t>(offset + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("pwrite(" + path_.string() + ")", errno);
      }
      done += static_cast<std::size_t>(w);
    }
    // Written back as it goes, a window behind: the fsync below then has little left to do, so
    // a stop signal is not held up for the minutes a multi-GB flush can take, and the page
    // cache holds no more than a window of dirty data.
    const std::uint64_t written = offset + n;
    if (written % sync_window == 0) {
      (void)::sync_file_range(fd, static_cast<off_t>(written - sync_window),
                              static_cast<off_t>(sync_window), SYNC_FILE_RANGE_WRITE);
      if (written >= 2 * sync_window) {
        (void)::sync_file_range(
            fd, static_cast<off_t>(written - 2 * sync_window), static_cast<off_t>(sync_window),
            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      }
    }
  }
  if (::fsync(fd) != 0) fail("fsync(" + path_.string() + ")", errno);
  // The data is on the device; drop it from the page cache so nothing buffered is measured.
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

scratch_file::~scratch_file() {
  ::unlink(path_.c_str());
}

storage_info describe_storage(const fs::path& dir) {
  storage_info info;
  // Filesystem: the longest mount point that contains the folder.
  std::error_code ec;
  const fs::path absolute = fs::weakly_canonical(dir, ec);
  std::size_t best = 0;
  const std::string a = absolute.string();
  for (const detail::mount_entry& m : detail::read_mounts()) {
    const std::string& mount_point = m.mount_point;
    const bool contains =
        a == mount_point ||
        (a.rfind(mount_point, 0) == 0 &&
         (mount_point == "/" || (a.size() > mount_point.size() && a[mount_point.size()] == '/')));
    if (contains && mount_point.size() >= best) {
      best = mount_point.size();
      info.filesystem = m.type;
      info.mount_point = mount_point;
    }
  }
  // Block device: st_dev -> /sys/dev/block/MAJ:MIN -> the disk (a partition's parent).
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return info;
  }
  const fs::path sys = fs::path("/sys/dev/block") /
                       (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
  fs::path real = fs::canonical(sys, ec);
  if (ec) {
    return info;
  }
  if (fs::exists(real / "partition", ec)) {
    real = real.parent_path();
  }
  info.device = real.filename().string();
  const detail::block_device_facts facts = detail::describe_block_device(real);
  info.model = facts.model;
  info.nvme = facts.nvme;
  info.rotational = facts.rotational;
  return info;
}

filesystem_space space_of(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw_system_error("stat(" + dir.string() + ")", errno);
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) throw_system_error("statvfs(" + dir.string() + ")", errno);
  return {static_cast<std::uint64_t>(st.st_dev),
          static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize,
          static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize};
}

std::uint64_t room_per_test_file(const std::vector<filesystem_space>& spaces, std::uint64_t block) {
  std::map<std::uint64_t, std::uint64_t> files_on;  // device -> test files that go on it
  for (const auto& space : spaces) ++files_on[space.device];
  std::uint64_t room = UINT64_MAX;
  for (const auto& space : spaces) {
    const std::uint64_t keep =
        std::max<std::uint64_t>(std::uint64_t{1} << 30, space.total_bytes / 10);
    const std::uint64_t spare = space.free_bytes > keep ? space.free_bytes - keep : 0;
    room = std::min(room, spare / files_on[space.device] / block * block);
  }
  return spaces.empty() ? 0 : room;
}

}  // namespace gpubench
