// nvme.seq_read, nvme.rand_read: storage read rate with io_uring and O_DIRECT (as fio's
// io_uring engine with direct=1 does), from a file gpubench writes in each --scratch folder.
// Registered buffers, one ring per thread, queue_depth reads in flight per ring. Every page read
// is checked against the pattern the file was written with. Where io_uring is refused (seccomp,
// old kernels) a pread engine with queue_depth threads per ring takes over, labelled as such.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/scratch_file.hpp"
#include "gpubench/harness/thread_pool.hpp"

#if GPUBENCH_HAVE_URING
#include <liburing.h>
#endif

namespace gpubench {
namespace {

constexpr std::uint64_t file_seed = 0x6e766d65ULL;
constexpr std::uint64_t page = 4096;
constexpr std::uint64_t max_block = std::uint64_t{64} << 20;
constexpr std::uint64_t min_file_bytes = std::uint64_t{64} << 20;

// Filesystems whose "reads" never reach a storage device.
bool memory_backed(const std::string& fs_type) {
  return fs_type == "tmpfs" || fs_type == "ramfs" || fs_type == "devtmpfs" || fs_type == "proc" ||
         fs_type == "sysfs";
}

struct aligned_deleter {
  void operator()(char* p) const noexcept { std::free(p); }  // NOLINT: posix_memalign'd
};
using aligned_buffer = std::unique_ptr<char, aligned_deleter>;

aligned_buffer allocate_aligned(std::size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, page, bytes) != 0) throw std::bad_alloc();
  return aligned_buffer(static_cast<char*>(p));
}

// Checks the first word of every page of a block read from `offset`; returns the pages wrong.
std::uint64_t check_block(const char* data, std::uint64_t offset, std::uint64_t bytes) {
  std::uint64_t wrong = 0;
  for (std::uint64_t p = 0; p < bytes; p += page) {
    std::uint64_t word = 0;
    std::memcpy(&word, data + p, sizeof word);
    wrong += word != scratch_word(offset + p, file_seed);
  }
  return wrong;
}

// One reader: a file descriptor, queue_depth buffers, and where it reads next.
struct reader {
  int fd = -1;
  std::uint64_t file_bytes = 0;
  std::uint64_t region_begin = 0;  // sequential: this reader's part of the file
  std::uint64_t region_end = 0;
  std::uint64_t cursor = 0;
  std::mt19937_64 random;
  std::vector<aligned_buffer> buffers;
#if GPUBENCH_HAVE_URING
  io_uring ring{};
  bool ring_ready = false;
#endif
  ~reader() {
#if GPUBENCH_HAVE_URING
    if (ring_ready) io_uring_queue_exit(&ring);
#endif
    if (fd >= 0) ::close(fd);
  }
};

class nvme_read final : public instance {
 public:
  nvme_read(bool sequential, const context& ctx, const axis_values& values)
      : sequential_(sequential),
        block_(static_cast<std::uint64_t>(values.get_int64("block_size"))),
        depth_(static_cast<int>(values.get_int64("queue_depth"))),
        threads_(static_cast<int>(values.get_int64("threads"))) {
    const auto& dirs = ctx.options().scratch_dirs;
    if (dirs.empty()) throw skip_case("no scratch folder given (--scratch)");

    std::uint64_t wanted =
        static_cast<std::uint64_t>(values.get_int64("file_bytes")) / block_ * block_;
    std::vector<filesystem_space> spaces;
    for (const auto& dir : dirs) {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) {
        throw std::runtime_error("scratch folder " + dir.string() +
                                 " is gone (it existed when the run started)");
      }
      const storage_info where = describe_storage(dir);
      if (memory_backed(where.filesystem)) {
        throw skip_case("scratch folder " + dir.string() + " is on " + where.filesystem +
                        " (memory, not a storage device)");
      }
      storage_.push_back(where);
      spaces.push_back(space_of(dir));
    }
    // Each filesystem keeps its reserve after all the files on it (two folders, one disk).
    const std::uint64_t room = room_per_test_file(spaces, block_);
    if (room < std::max(min_file_bytes, block_)) {
      std::vector<std::string> names;
      names.reserve(dirs.size());
      for (const auto& dir : dirs) names.push_back(dir.string());
      throw skip_case("not enough free space in " + join(names) + " for " +
                      std::to_string(dirs.size()) + " test file(s) of at least " +
                      format_bytes(std::max(min_file_bytes, block_)) +
                      " (each filesystem keeps 1 GiB and a tenth of itself free)");
    }
    if (room < wanted) {
      reduced_from_ = wanted;
      wanted = room;
    }
    for (const auto& dir : dirs) {
      try {
        files_.push_back(std::make_unique<scratch_file>(dir, wanted, file_seed));
      } catch (const api_error& e) {
        // Space ran out under us (another writer, a quota, a file size limit): the device is not
        // at fault and nothing was measured; scratch_file removed what it wrote.
        const std::string& name = e.error_name();
        if (name == "ENOSPC" || name == "EFBIG" || name == "EDQUOT") {
          throw skip_case("no room for the " + std::to_string(wanted) + "-byte test file in " +
                          dir.string() + ": writing it failed with " + name + " (" +
                          (name == "EFBIG" ? "file size limit" : "out of space") + ")");
        }
        throw;
      }
    }
    file_bytes_ = wanted;
    // Enough reads per iteration that filling and draining the queue at its ends (about one
    // queue depth of reads) costs under 1%: at least 100 x queue_depth, and 1 GiB (sequential)
    // or 256 MiB (random) over all threads.
    ios_per_reader_ = std::max<std::uint64_t>(
        100 * static_cast<std::uint64_t>(depth_),
        (sequential_ ? (std::uint64_t{1} << 30) : (std::uint64_t{256} << 20)) / block_ /
            static_cast<std::uint64_t>(threads_));

    for (int t = 0; t < threads_; ++t) {
      auto r = std::make_unique<reader>();
      const auto& file = files_[static_cast<std::size_t>(t) % files_.size()];
      r->fd = ::open(file->path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);
      if (r->fd < 0) {
        if (errno == EINVAL) {
          throw skip_case("O_DIRECT is not supported on " + storage_[0].filesystem + " at " +
                          file->path().parent_path().string());
        }
        throw_system_error("open(" + file->path().string() + ", O_DIRECT)", errno);
      }
      r->file_bytes = file_bytes_;
      // Reader t reads file t % F; the readers of one file split it into contiguous regions.
      const std::uint64_t file_count = files_.size();
      const auto tt = static_cast<std::uint64_t>(t);
      const std::uint64_t share =
          (static_cast<std::uint64_t>(threads_) - tt % file_count + file_count - 1) / file_count;
      const std::uint64_t index = tt / file_count;
      const std::uint64_t blocks = file_bytes_ / block_;
      r->region_begin = blocks * index / share * block_;
      r->region_end = blocks * (index + 1) / share * block_;
      if (r->region_end <= r->region_begin) r->region_end = r->region_begin + block_;
      r->cursor = r->region_begin;
      r->random.seed(0x5eed + static_cast<std::uint64_t>(t));
      for (int d = 0; d < depth_; ++d) r->buffers.push_back(allocate_aligned(block_));
      readers_.push_back(std::move(r));
    }
    engine_ = open_engine();
    pool_ = std::make_unique<pinned_thread_pool>(threads_);
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.bytes_read = static_cast<double>(block_ * ios_per_reader_ * readers_.size()),
                .items = static_cast<double>(ios_per_reader_ * readers_.size())};
  }

  std::optional<double> run_iteration() override {
    pool_->run([&](int worker) {
      reader& r = *readers_[static_cast<std::size_t>(worker)];
      if (engine_ == "io_uring") {
        read_with_uring(r);
      } else {
        read_with_pread(r);
      }
    });
    return std::nullopt;
  }

  [[nodiscard]] verification verify() override {
    verification v;
    v.passed = wrong_pages_ == 0 && checked_pages_ > 0;
    v.detail = "first word of every 4 KiB page read checked against the file's pattern: " +
               std::to_string(checked_pages_.load()) + " pages, " +
               std::to_string(wrong_pages_.load()) + " wrong";
    return v;
  }

  [[nodiscard]] json info() const override {
    json devices = json::array();
    for (const auto& s : storage_) {
      devices.push_back(json{{"device", s.device},
                             {"model", s.model},
                             {"nvme", s.nvme},
                             {"rotational", s.rotational},
                             {"filesystem", s.filesystem},
                             {"mount_point", s.mount_point}});
    }
    json out{{"engine", engine_},
             {"o_direct", true},
             {"pattern", sequential_ ? "sequential, each thread its own part of the file"
                                     : "random block-aligned offsets over the whole file"},
             {"file_bytes", file_bytes_},
             {"files", files_.size()},
             {"reads_per_thread_per_iteration", ios_per_reader_},
             {"storage", std::move(devices)}};
    if (reduced_from_) {
      out["file_bytes_reduced_from"] = reduced_from_;
      out["notes"] = json::array({"test file stepped down from " + std::to_string(reduced_from_) +
                                  " to " + std::to_string(file_bytes_) +
                                  " bytes to leave the filesystem its free space"});
    }
    if (!uring_problem_.empty()) out["io_uring_refused"] = uring_problem_;
    return out;
  }

 private:
  std::string open_engine() {
#if GPUBENCH_HAVE_URING
    for (auto& r : readers_) {
      const int rc = io_uring_queue_init(static_cast<unsigned>(depth_), &r->ring, 0);
      if (rc < 0) {
        uring_problem_ = "io_uring_queue_init: " + errno_name(-rc);
        break;
      }
      r->ring_ready = true;
      std::vector<iovec> iov;
      for (auto& b : r->buffers) iov.push_back(iovec{b.get(), block_});
      if (const int reg =
              io_uring_register_buffers(&r->ring, iov.data(), static_cast<unsigned>(iov.size()));
          reg < 0) {
        uring_problem_ = "io_uring_register_buffers: " + errno_name(-reg);
        break;
      }
    }
    if (uring_problem_.empty()) return "io_uring";
    for (auto& r : readers_) {
      if (r->ring_ready) io_uring_queue_exit(&r->ring);
      r->ring_ready = false;
    }
#else
    uring_problem_ = "built without liburing";
#endif
    return "pread (io_uring unavailable)";
  }

  std::uint64_t next_offset(reader& r) const {
    if (sequential_) {
      const std::uint64_t offset = r.cursor;
      r.cursor += block_;
      if (r.cursor >= r.region_end) r.cursor = r.region_begin;
      return offset;
    }
    return r.random() % (r.file_bytes / block_) * block_;
  }

  void count(const char* data, std::uint64_t offset) {
    checked_pages_ += block_ / page;
    wrong_pages_ += check_block(data, offset, block_);
  }

#if GPUBENCH_HAVE_URING
  void read_with_uring(reader& r) {
    std::vector<std::uint64_t> offsets(static_cast<std::size_t>(depth_));
    std::uint64_t submitted = 0;
    std::uint64_t completed = 0;
    const auto submit = [&](int slot) {
      io_uring_sqe* sqe = io_uring_get_sqe(&r.ring);
      offsets[static_cast<std::size_t>(slot)] = next_offset(r);
      io_uring_prep_read_fixed(sqe, r.fd, r.buffers[static_cast<std::size_t>(slot)].get(),
                               static_cast<unsigned>(block_),
                               offsets[static_cast<std::size_t>(slot)], slot);
      io_uring_sqe_set_data64(sqe, static_cast<std::uint64_t>(slot));
      ++submitted;
    };
    for (int slot = 0; slot < depth_ && submitted < ios_per_reader_; ++slot) submit(slot);
    // On a stop signal no more reads are queued; those in flight are drained (their buffers are
    // the ring's) and the case ends.
    bool stopping = false;
    while (completed < submitted) {
      stopping = stopping || interrupt_requested();
      if (const int rc = io_uring_submit_and_wait(&r.ring, 1); rc < 0 && rc != -EINTR) {
        throw_system_error("io_uring_submit_and_wait", -rc);
      }
      io_uring_cqe* cqe = nullptr;
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_for_each_cqe(&r.ring, head, cqe) {
        ++seen;
        const auto slot = static_cast<int>(io_uring_cqe_get_data64(cqe));
        if (cqe->res < 0) throw_system_error("io_uring read", -cqe->res);
        if (static_cast<std::uint64_t>(cqe->res) != block_) {
          throw std::runtime_error("short read: " + std::to_string(cqe->res) + " of " +
                                   std::to_string(block_) + " bytes");
        }
        count(r.buffers[static_cast<std::size_t>(slot)].get(),
              offsets[static_cast<std::size_t>(slot)]);
        ++completed;
        if (!stopping && submitted < ios_per_reader_) submit(slot);
      }
      io_uring_cq_advance(&r.ring, seen);
    }
    if (stopping) stop_if_interrupted("during the reads");
  }
#else
  void read_with_uring(reader&) {
    throw std::logic_error("built without liburing");
  }
#endif

  // queue_depth threads, each with one read in flight.
  void read_with_pread(reader& r) {
    std::atomic<std::uint64_t> issued{0};
    std::mutex offset_lock;
    std::exception_ptr error;
    std::mutex error_lock;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(depth_));
    for (int d = 0; d < depth_; ++d) {
      threads.emplace_back([&, d] {
        try {
          char* buffer = r.buffers[static_cast<std::size_t>(d)].get();
          while (!interrupt_requested() && issued.fetch_add(1) < ios_per_reader_) {
            std::uint64_t offset = 0;
            {
              std::lock_guard lock(offset_lock);
              offset = next_offset(r);
            }
            const ssize_t n = ::pread(r.fd, buffer, block_, static_cast<off_t>(offset));
            if (n < 0) throw_system_error("pread", errno);
            if (static_cast<std::uint64_t>(n) != block_) throw std::runtime_error("short read");
            count(buffer, offset);
          }
        } catch (...) {
          std::lock_guard lock(error_lock);
          if (!error) error = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
    stop_if_interrupted("during the reads");
  }

  bool sequential_;
  std::uint64_t block_;
  int depth_;
  int threads_;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t reduced_from_ = 0;
  std::uint64_t ios_per_reader_ = 0;
  std::vector<storage_info> storage_;
  std::vector<std::unique_ptr<scratch_file>> files_;
  std::vector<std::unique_ptr<reader>> readers_;
  std::string engine_;
  std::string uring_problem_;
  std::unique_ptr<pinned_thread_pool> pool_;
  std::atomic<std::uint64_t> checked_pages_{0};
  std::atomic<std::uint64_t> wrong_pages_{0};
};

benchmark_definition nvme_definition(bool sequential) {
  benchmark_definition def(sequential ? "nvme.seq_read" : "nvme.rand_read");
  def.set_description(sequential
                          ? "Storage sequential read rate (io_uring, O_DIRECT)"
                          : "Storage random read rate at dataset-sample size (io_uring, O_DIRECT)")
      .add_axis("block_size", axis_kind::bytes,
                {std::int64_t{sequential ? (1 << 20) : (128 << 10)}}, "bytes per read")
      .add_axis("queue_depth", axis_kind::integer, {std::int64_t{32}}, "reads in flight per thread")
      .add_axis(axis{"threads", axis_kind::integer, "threads (one io_uring each)",
                     [sequential](const context& ctx) {
                       return std::vector<axis_value>{
                           std::int64_t{sequential ? 1 : ctx.host_cores()}};
                     }})
      .add_axis("file_bytes", axis_kind::bytes, {std::int64_t{4} << 30},
                "test file size per scratch folder (bounded by free space)")
      .set_range("block_size",
                 axis_range{static_cast<std::int64_t>(page), static_cast<std::int64_t>(max_block),
                            static_cast<std::int64_t>(page)})
      .set_range("queue_depth", axis_range{1, 1024})
      .set_range("threads", axis_range{1, 1024})
      .set_range("file_bytes",
                 axis_range{static_cast<std::int64_t>(min_file_bytes), std::int64_t{1} << 50})
      .add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .add_metric("iops", metric_kind::items_per_s, units::io_per_s)
      .set_timing(timing::host_wall)
      .set_scope(run_scope::per_node)
      .set_factory([sequential](const context& ctx, const axis_values& values) {
        return std::make_unique<nvme_read>(sequential, ctx, values);
      });
  return def;
}

GPUBENCH_REGISTER(nvme_definition(true));
GPUBENCH_REGISTER(nvme_definition(false));

}  // namespace
}  // namespace gpubench
