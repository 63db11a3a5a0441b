// host.membw: host memory bandwidth with the STREAM kernels over every core.
// Threads are pinned one per physical core; each worker first-touches the part of the arrays it
// later streams, so pages land on its own NUMA node. Bytes are counted as STREAM counts them
// (docs/methodology.md): arrays read + arrays written, write-allocate traffic not counted.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/thread_pool.hpp"

namespace gpubench {
namespace {

// BabelStream's table: what each kernel reads and writes per element is data, not code.
struct stream_kernel {
  std::string_view name;
  int arrays_read;
  int arrays_written;
};
constexpr stream_kernel stream_kernels[] = {
    {"copy", 1, 1},   // c = a
    {"scale", 1, 1},  // b = s * c
    {"add", 2, 1},    // c = a + b
    {"triad", 2, 1},  // a = b + s * c
};

// The kernels' names, in the table's order: the kernel axis's choices.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const stream_kernel& k : stream_kernels) names.emplace_back(k.name);
  return names;
}

// Initial values and the scalar. Every kernel writes an array it does not read, so running it any
// number of times leaves the same, exactly representable, values: the check is exact.
constexpr double init_a = 1.0;
constexpr double init_b = 2.0;
constexpr double init_c = 3.0;
constexpr double scalar = 3.0;

constexpr std::size_t page_alignment = std::size_t{2} << 20;  // lets the kernel use huge pages
constexpr std::size_t chunk_alignment = 64 / sizeof(double);  // whole cache lines per worker
constexpr std::int64_t max_threads = 4096;
// At 1 MiB per array, every one of max_threads workers still gets whole cache lines.
constexpr std::int64_t min_array_bytes = std::int64_t{1} << 20;
static_assert(min_array_bytes / 8 >= static_cast<std::int64_t>(chunk_alignment) * max_threads);

struct free_deleter {
  void operator()(double* p) const noexcept { std::free(p); }  // NOLINT: aligned_alloc'd
};
using array_ptr = std::unique_ptr<double[], free_deleter>;

array_ptr allocate_array(std::size_t elements) {
  const std::size_t bytes =
      (elements * sizeof(double) + page_alignment - 1) / page_alignment * page_alignment;
  // Left untouched here: the pinned workers touch it first.
  auto* p = static_cast<double*>(std::aligned_alloc(page_alignment, bytes));  // NOLINT
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  // Huge pages cut first-touch faults and TLB misses; a refusal only costs speed.
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  return array_ptr(p);
}

void copy_kernel(const double* __restrict a, double* __restrict c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
}
void scale_kernel(const double* __restrict c, double* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) b[i] = scalar * c[i];
}
void add_kernel(const double* __restrict a, const double* __restrict b, double* __restrict c,
                std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void triad_kernel(const double* __restrict b, const double* __restrict c, double* __restrict a,
                  std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

class host_membw final : public instance {
 public:
  host_membw(const context& ctx, const axis_values& values)
      : kernel_(find_kernel(values.get_string("kernel"))),
        threads_(static_cast<int>(values.get_int64("threads"))),
        elements_(static_cast<std::size_t>(values.get_int64("array_bytes")) / sizeof(double)) {
    (void)ctx;
    a_ = allocate_array(elements_);
    b_ = allocate_array(elements_);
    c_ = allocate_array(elements_);
    pool_ = std::make_unique<pinned_thread_pool>(threads_);
    pool_->run([this](int worker) {
      const auto [begin, end] = chunk(worker);
      for (std::size_t i = begin; i < end; ++i) {
        a_[i] = init_a;
        b_[i] = init_b;
        c_[i] = init_c;
      }
    });
  }

  [[nodiscard]] work work_per_iteration() const override {
    const double array_bytes = static_cast<double>(elements_ * sizeof(double));
    return work{.bytes_read = kernel_.arrays_read * array_bytes,
                .bytes_written = kernel_.arrays_written * array_bytes};
  }

  std::optional<double> run_iteration() override {
    pool_->run([this](int worker) {
      const auto [begin, end] = chunk(worker);
      const std::size_t n = end - begin;
      double* a = a_.get() + begin;
      double* b = b_.get() + begin;
      double* c = c_.get() + begin;
      if (kernel_.name == "copy") {
        copy_kernel(a, c, n);
      } else if (kernel_.name == "scale") {
        scale_kernel(c, b, n);
      } else if (kernel_.name == "add") {
        add_kernel(a, b, c, n);
      } else {
        triad_kernel(b, c, a, n);
      }
    });
    return std::nullopt;
  }

  [[nodiscard]] verification verify() override {
    double expect_a = init_a;
    double expect_b = init_b;
    double expect_c = init_c;
    if (kernel_.name == "copy") expect_c = init_a;
    if (kernel_.name == "scale") expect_b = scalar * init_c;
    if (kernel_.name == "add") expect_c = init_a + init_b;
    if (kernel_.name == "triad") expect_a = init_b + scalar * init_c;

    std::vector<std::size_t> wrong(static_cast<std::size_t>(threads_), 0);
    pool_->run([&](int worker) {
      const auto [begin, end] = chunk(worker);
      std::size_t bad = 0;
      for (std::size_t i = begin; i < end; ++i) {
        bad += (a_[i] != expect_a) + (b_[i] != expect_b) + (c_[i] != expect_c);
      }
      wrong[static_cast<std::size_t>(worker)] = bad;
    });
    std::size_t total_wrong = 0;
    for (std::size_t bad : wrong) total_wrong += bad;
    verification v;
    v.passed = total_wrong == 0;
    v.detail = "checked all " + std::to_string(3 * elements_) +
               " elements of a, b, c: " + std::to_string(total_wrong) + " wrong";
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{{"threads", threads_},
                {"cpus", pool_->bound_cpus()},
                {"array_bytes", elements_ * sizeof(double)},
                {"element", "float64"},
                {"bytes_counted", "arrays read + arrays written (STREAM)"}};
  }

 private:
  static const stream_kernel& find_kernel(const std::string& name) {
    for (const auto& k : stream_kernels) {
      if (k.name == name) return k;
    }
    throw std::invalid_argument("host.membw: unknown kernel '" + name + "' (" +
                                join(kernel_names(), ", ") + ")");
  }

  // Worker w's contiguous share of the arrays, in whole cache lines.
  [[nodiscard]] std::pair<std::size_t, std::size_t> chunk(int worker) const {
    const std::size_t lines = elements_ / chunk_alignment;
    const auto w = static_cast<std::size_t>(worker);
    const auto t = static_cast<std::size_t>(threads_);
    const std::size_t begin = lines * w / t * chunk_alignment;
    const std::size_t end = w + 1 == t ? elements_ : lines * (w + 1) / t * chunk_alignment;
    return {begin, end};
  }

  const stream_kernel& kernel_;
  int threads_;
  std::size_t elements_;
  array_ptr a_;
  array_ptr b_;
  array_ptr c_;
  std::unique_ptr<pinned_thread_pool> pool_;
};

// From 1 MiB to what leaves half of the RAM free (3 arrays), in whole doubles.
axis_range host_array_bytes_range(const context& ctx) {
  const std::uint64_t memory = ctx.system().memory_bytes;
  const std::int64_t largest =
      memory == 0 ? std::int64_t{1} << 50 : static_cast<std::int64_t>(memory / 2 / 3 / 8 * 8);
  return {min_array_bytes, std::max(largest, min_array_bytes), 8};
}

// STREAM's rule: each array at least 4x the last-level cache, so caches cannot serve it. Never
// below 256 MiB; never so large that the 3 arrays take over 3/8 of RAM.
std::vector<axis_value> host_default_array_bytes(const context& ctx) {
  const std::uint64_t mib = 1 << 20;
  std::uint64_t bytes =
      std::max<std::uint64_t>(4 * ctx.system().last_level_cache_bytes(), 256 * mib);
  if (ctx.system().memory_bytes != 0) {
    bytes = std::min(bytes, ctx.system().memory_bytes / 8);
  }
  bytes = (bytes + mib - 1) / mib * mib;
  return {static_cast<std::int64_t>(bytes)};
}

benchmark_definition host_membw_definition() {
  benchmark_definition def("host.membw");
  def.set_description("Host memory bandwidth: STREAM copy/scale/add/triad on every core")
      .add_choice_axis("kernel", kernel_names(), "STREAM kernel")
      .add_axis(axis{"threads", axis_kind::integer, "worker threads, one per physical core",
                     [](const context& ctx) {
                       return std::vector<axis_value>{std::int64_t{ctx.host_cores()}};
                     }})
      .add_axis(axis{"array_bytes", axis_kind::bytes, "bytes per array (3 arrays)",
                     host_default_array_bytes})
      .set_range("threads", axis_range{1, max_threads})
      .set_range("array_bytes", host_array_bytes_range)
      .add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .set_timing(timing::host_wall)
      .set_scope(run_scope::per_node)
      .set_instance<host_membw>();
  return def;
}

GPUBENCH_REGISTER(host_membw_definition());

}  // namespace
}  // namespace gpubench
