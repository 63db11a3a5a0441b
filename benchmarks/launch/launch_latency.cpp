// gpu.launch_latency: what one kernel launch costs, by launch path.
//   stream: a batch of launches back to back on one stream, then one synchronize; the time per
//           launch is the steady-state launch cost (CPU submission or GPU turnaround, whichever
//           is slower).
//   sync:   launch, then synchronize, for each launch: the round trip a host loop that waits on
//           every kernel pays.
//   graph:  the same batch captured once into a CUDA graph and launched as one graph.
#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/harness/cuda.hpp"
#include "gpubench/kernels/launch.cuh"
#endif

namespace gpubench {
namespace {

#if GPUBENCH_HAVE_CUDA
struct graph_deleter {
  void operator()(cudaGraph_t graph) const noexcept { (void)cudaGraphDestroy(graph); }
};
struct graph_exec_deleter {
  void operator()(cudaGraphExec_t exec) const noexcept { (void)cudaGraphExecDestroy(exec); }
};

class launch_latency final : public instance {
 public:
  launch_latency(const context& /*ctx*/, const axis_values& values)
      : device_(static_cast<int>(values.get_int64("gpu"))),
        mode_(values.get_string("mode")),
        batch_(values.get_int64("batch")),
        stream_(device_),
        counter_(device_, sizeof(unsigned long long)) {
    if (mode_ != "graph" && mode_ != "stream" && mode_ != "sync") {
      throw std::invalid_argument("gpu.launch_latency: unknown mode '" + mode_ + "'");
    }
    const cuda::device_scope scope(device_);
    cuda::enqueue_zero(counter_, stream_);
    if (mode_ == "graph") {
      GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
      for (std::int64_t i = 0; i < batch_; ++i) {
        kernels::enqueue_counter_kernel(counter_.as<unsigned long long>(), stream_.get());
      }
      cudaGraph_t graph = nullptr;
      GPUBENCH_CUDA_CHECK(cudaStreamEndCapture(stream_.get(), &graph));
      graph_ = {device_, graph};
      cudaGraphExec_t exec = nullptr;
      GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      graph_exec_ = {device_, exec};
    }
    stream_.synchronize();
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.items = static_cast<double>(batch_)};
  }

  std::optional<double> run_iteration() override {
    // One scope for the whole batch: what is timed is the launches, not device switching.
    const cuda::device_scope scope(device_);
    auto* counter = counter_.as<unsigned long long>();
    if (mode_ == "graph") {
      GPUBENCH_CUDA_CHECK(cudaGraphLaunch(graph_exec_.get(), stream_.get()));
    } else {
      for (std::int64_t i = 0; i < batch_; ++i) {
        kernels::enqueue_counter_kernel(counter, stream_.get());
        if (mode_ == "sync") {
          GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
        }
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
    }
    stream_.synchronize();
    launches_ += static_cast<unsigned long long>(batch_);
    return std::nullopt;
  }

  [[nodiscard]] verification verify() override {
    unsigned long long counted = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&counted, counter_.get(), sizeof counted,
                                        cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    verification v;
    v.passed = counted == launches_;
    v.detail = "kernel runs counted on the GPU: " + std::to_string(counted) + " of " +
               std::to_string(launches_) + " launched";
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{{"launches_per_iteration", batch_}, {"kernel", "1 block x 1 thread, one store"}};
  }

 private:
  int device_;
  std::string mode_;
  std::int64_t batch_;
  cuda::stream stream_;
  cuda::device_buffer counter_;
  cuda::device_handle<cudaGraph_t, graph_deleter> graph_;
  cuda::device_handle<cudaGraphExec_t, graph_exec_deleter> graph_exec_;
  unsigned long long launches_ = 0;
};
#endif

benchmark_definition launch_latency_definition() {
  benchmark_definition def("gpu.launch_latency");
  def.set_description("Kernel launch overhead: stream launches, launch+sync round trip, CUDA graph")
      .add_axis(gpu_axis())
      .add_choice_axis("mode", {"stream", "sync", "graph"},
                       "launch path: stream (back to back), sync (wait after each), graph")
      .add_axis("batch", axis_kind::integer, {std::int64_t{1000}}, "launches per timed iteration")
      .set_range("batch", axis_range{1, 1000000})
      .add_metric("us", metric_kind::time_per_item, units::us)
      .set_timing(timing::host_wall)
      .set_needs_gpu()
      .set_supported(cuda_gpu_unavailable_reason);
#if GPUBENCH_HAVE_CUDA
  def.set_instance<launch_latency>();
#else
  def.set_factory(unavailable_factory("gpu.launch_latency: built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(launch_latency_definition());

}  // namespace
}  // namespace gpubench
