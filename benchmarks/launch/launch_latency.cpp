// gpu.launch_latency: what one kernel launch costs, by launch path.
//   stream: a batch of launches back to back on one stream, then one synchronize; the time per
//           launch is the steady-state launch cost (CPU submission or GPU turnaround, whichever
//           is slower).
//   sync:   launch, then synchronize, for each launch: the round trip a host loop that waits on
//           every kernel pays.
//   graph:  the same batch captured once into a CUDA graph and launched as one graph.
#include "gpubench/benchmark.hpp"
#include "gpubench/config.hpp"
#include "gpubench/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/cuda.hpp"
#include "kernels/launch.cuh"
#endif

namespace gpubench {
namespace {

#if GPUBENCH_HAVE_CUDA
class launch_latency final : public instance {
 public:
  launch_latency(const context& /*ctx*/, const axis_values& values)
      : device_(static_cast<int>(values.get_int64("gpu"))),
        mode_(values.get_string("mode")),
        batch_(values.get_int64("batch")) {
    if (batch_ < 1) {
      throw std::invalid_argument("gpu.launch_latency: batch must be at least 1");
    }
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device_));
    counter_ = cuda::device_buffer(sizeof(unsigned long long));
    stream_ = std::make_unique<cuda::stream>();
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, counter_.size(), stream_->get()));
    if (mode_ == "graph") {
      GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_->get(), cudaStreamCaptureModeThreadLocal));
      for (std::int64_t i = 0; i < batch_; ++i) {
        kernels::enqueue_counter_kernel(counter_.as<unsigned long long>(), stream_->get());
      }
      GPUBENCH_CUDA_CHECK(cudaStreamEndCapture(stream_->get(), &graph_));
      GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
    } else if (mode_ != "stream" && mode_ != "sync") {
      throw std::invalid_argument("gpu.launch_latency: unknown mode '" + mode_ + "'");
    }
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
  }

  launch_latency(const launch_latency&) = delete;
  launch_latency& operator=(const launch_latency&) = delete;
  ~launch_latency() override {
    if (graph_exec_ != nullptr) cudaGraphExecDestroy(graph_exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.items = static_cast<double>(batch_)};
  }

  std::optional<double> run_iteration() override {
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device_));
    auto* counter = counter_.as<unsigned long long>();
    if (mode_ == "graph") {
      GPUBENCH_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_->get()));
    } else {
      for (std::int64_t i = 0; i < batch_; ++i) {
        kernels::enqueue_counter_kernel(counter, stream_->get());
        if (mode_ == "sync") {
          GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
        }
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
    }
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
    launches_ += static_cast<unsigned long long>(batch_);
    return std::nullopt;
  }

  [[nodiscard]] verification verify() override {
    unsigned long long counted = 0;
    GPUBENCH_CUDA_CHECK(
        cudaMemcpy(&counted, counter_.get(), sizeof counted, cudaMemcpyDeviceToHost));
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
  cuda::device_buffer counter_;
  std::unique_ptr<cuda::stream> stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
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
      .add_metric("us", metric_kind::us_per_item)
      .set_timing(timing::host_wall)
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
