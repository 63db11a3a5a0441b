// hbm.copy, hbm.scale, hbm.add, hbm.triad, hbm.read, hbm.write: device-memory bandwidth with
// BabelStream's kernels, 16-byte vector accesses, a grid covering the array, 4 loads in flight
// per thread and input.
// Bytes counted: arrays read + arrays written (docs/methodology.md).
#include <stdexcept>
#include <string_view>

#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/gpu_memory.hpp"
#include "gpubench/kernels/stream.cuh"
#endif

namespace gpubench {
namespace {

// BabelStream's table: arrays each op reads and writes per element.
struct hbm_op {
  std::string_view id;
  std::string_view what;
  int arrays_read;
  int arrays_written;
};
constexpr hbm_op hbm_ops[] = {
    {"hbm.copy", "c = a", 1, 1},
    {"hbm.scale", "b = s*c", 1, 1},
    {"hbm.add", "c = a + b", 2, 1},
    {"hbm.triad", "a = b + s*c", 2, 1},
    {"hbm.read", "sum(a), read only", 1, 0},
    {"hbm.write", "c = constant, write only", 0, 1},
};

#if GPUBENCH_HAVE_CUDA
kernels::stream_op to_kernel_op(std::string_view id) {
  if (id == "hbm.copy") return kernels::stream_op::copy;
  if (id == "hbm.scale") return kernels::stream_op::scale;
  if (id == "hbm.add") return kernels::stream_op::add;
  if (id == "hbm.triad") return kernels::stream_op::triad;
  if (id == "hbm.read") return kernels::stream_op::read;
  return kernels::stream_op::write;
}

class hbm_benchmark final : public instance {
 public:
  hbm_benchmark(const hbm_op& op, const context& /*ctx*/, const axis_values& values)
      : op_(op),
        kernel_op_(to_kernel_op(op.id)),
        device_(static_cast<int>(values.get_int64("gpu"))),
        array_bytes_(static_cast<std::size_t>(values.get_int64("array_bytes")) / 16 * 16),
        stream_(device_),
        start_(device_),
        stop_(device_) {
    const cuda::device_scope scope(device_);
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // The array size only has to defeat the L2: where three arrays of the requested size do not
    // fit, the largest that do (still at least 4x the L2) measure the same bandwidth.
    int l2_bytes = 0;
    GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_));
    const std::uint64_t minimum = 4 * static_cast<std::uint64_t>(l2_bytes);
    const auto fitting = largest_fitting_buffer(array_bytes_, 3, free_bytes, minimum, 1ULL << 20);
    if (!fitting) {
      throw skip_case(gpu_memory_shortage(
          device_, free_bytes, total_bytes,
          "3 arrays of at least 4x the L2 (" + format_bytes(minimum) + " each)"));
    }
    if (*fitting < array_bytes_) {
      note_ = "stepped down from 3 arrays of " + format_bytes(array_bytes_) + ": " +
              gpu_memory_shortage(device_, free_bytes, total_bytes, "them");
      requested_bytes_ = array_bytes_;
      array_bytes_ = static_cast<std::size_t>(*fitting);
    }
    const std::size_t elements = array_bytes_ / sizeof(double);
    blocks_ = kernels::stream_grid_blocks(elements);

    a_ = cuda::device_buffer(device_, array_bytes_);
    b_ = cuda::device_buffer(device_, array_bytes_);
    c_ = cuda::device_buffer(device_, array_bytes_);
    partial_ = cuda::device_buffer(device_, sizeof(double) * static_cast<std::size_t>(blocks_));
    wrong_ = cuda::device_buffer(device_, sizeof(unsigned long long));
    arrays_ = {a_.as<double>(), b_.as<double>(), c_.as<double>(), partial_.as<double>(), elements};
    kernels::enqueue_stream_init(arrays_, stream_);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    stream_.synchronize();
  }

  [[nodiscard]] work work_per_iteration() const override {
    const auto bytes = static_cast<double>(array_bytes_);
    return work{.bytes_read = op_.arrays_read * bytes, .bytes_written = op_.arrays_written * bytes};
  }

  std::optional<double> run_iteration() override {
    start_.record(stream_);
    kernels::enqueue_stream_op(kernel_op_, arrays_, stream_);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    stop_.record(stream_);
    return cuda::elapsed_seconds(start_, stop_);
  }

  [[nodiscard]] verification verify() override {
    cuda::enqueue_zero(wrong_, stream_);
    kernels::enqueue_stream_check(kernel_op_, arrays_, wrong_.as<unsigned long long>(), stream_);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    unsigned long long wrong = 0;
    GPUBENCH_CUDA_CHECK(
        cudaMemcpyAsync(&wrong, wrong_.get(), sizeof wrong, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    verification v;
    v.passed = wrong == 0;
    v.detail = "checked all " + std::to_string(3 * arrays_.elements) +
               " elements of a, b, c on the GPU: " + std::to_string(wrong) + " wrong";
    if (kernel_op_ == kernels::stream_op::read) {
      // The partial sums of the last pass must add up to exactly elements x init_a.
      std::vector<double> partial(static_cast<std::size_t>(blocks_));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(partial.data(), partial_.get(), partial_.size(),
                                          cudaMemcpyDeviceToHost, stream_.get()));
      stream_.synchronize();
      double sum = 0;
      for (double p : partial) sum += p;
      const double expected = static_cast<double>(arrays_.elements) * kernels::stream_init_a;
      v.passed = v.passed && sum == expected;
      v.detail +=
          "; sum of a " + std::to_string(sum) + " (expected " + std::to_string(expected) + ")";
    }
    return v;
  }

  [[nodiscard]] json info() const override {
    json out{
        {"array_bytes", array_bytes_},
        {"operation", op_.what},
        {"blocks", blocks_},
        {"threads_per_block", kernels::stream_block_size},
        {"access", "double2 (16-byte) loads and stores, " + std::to_string(kernels::stream_unroll) +
                       " per thread and array, grid covering the array"},
        {"bytes_counted", "arrays read + arrays written (BabelStream)"}};
    if (!note_.empty()) {
      out["array_bytes_requested"] = requested_bytes_;
      out["notes"] = json::array({note_});
    }
    return out;
  }

 private:
  const hbm_op& op_;
  kernels::stream_op kernel_op_;
  int device_;
  std::size_t array_bytes_;
  std::size_t requested_bytes_ = 0;
  std::string note_;  // why the arrays are smaller than asked
  int blocks_ = 0;
  cuda::stream stream_;
  cuda::event start_;
  cuda::event stop_;
  cuda::device_buffer a_, b_, c_, partial_, wrong_;
  kernels::stream_arrays arrays_{};
};
#endif

// At least 4x the largest L2 among the GPUs, and 1 GiB by default.
std::vector<axis_value> default_array_bytes(const context& ctx) {
  std::uint64_t bytes = std::uint64_t{1} << 30;
  for (const auto& gpu : ctx.system().gpus) {
    bytes = std::max<std::uint64_t>(bytes, 4 * gpu.l2_bytes.value_or(0));
  }
  return {static_cast<std::int64_t>(bytes)};
}

// Arrays that defeat every GPU's L2 (4x the largest, 1 MiB at least), in whole 16-byte vectors.
axis_range array_bytes_range(const context& ctx) {
  std::int64_t minimum = std::int64_t{1} << 20;
  for (const auto& gpu : ctx.system().gpus) {
    minimum = std::max(minimum, 4 * static_cast<std::int64_t>(gpu.l2_bytes.value_or(0)));
  }
  minimum = (minimum + 15) / 16 * 16;
  return {minimum, std::int64_t{1} << 40, 16};
}

benchmark_definition hbm_definition(const hbm_op& op) {
  benchmark_definition def{std::string(op.id)};
  def.set_description("GPU memory bandwidth: " + std::string(op.what))
      .add_axis(gpu_axis())
      .add_axis(axis{"array_bytes", axis_kind::bytes, "bytes per array (3 arrays, >= 4x L2)",
                     default_array_bytes})
      .set_range("array_bytes", array_bytes_range)
      .add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .set_timing(timing::manual)
      .set_needs_gpu()
      .set_supported(cuda_gpu_unavailable_reason);
#if GPUBENCH_HAVE_CUDA
  def.set_factory([&op](const context& ctx, const axis_values& values) {
    return std::make_unique<hbm_benchmark>(op, ctx, values);
  });
#else
  def.set_factory(unavailable_factory("built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(hbm_definition(hbm_ops[0]));
GPUBENCH_REGISTER(hbm_definition(hbm_ops[1]));
GPUBENCH_REGISTER(hbm_definition(hbm_ops[2]));
GPUBENCH_REGISTER(hbm_definition(hbm_ops[3]));
GPUBENCH_REGISTER(hbm_definition(hbm_ops[4]));
GPUBENCH_REGISTER(hbm_definition(hbm_ops[5]));

}  // namespace
}  // namespace gpubench
