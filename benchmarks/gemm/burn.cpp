// gpu.burn: sustained matrix multiplies on every GPU of the run at once for `duration_s`, as
// gpu-burn and DCGM's targeted stress do. The run is cut into one-second slices of a fixed number
// of multiplies per GPU; each slice is timed with CUDA events and followed by an NVML sample
// (clocks, temperature, power, throttle reasons) taken while the next slice is already running,
// so the GPU is never idle when it is observed. Reported: the sustained rate, its drop from the
// first to the last tenth of the run, and every throttle reason seen (docs/methodology.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "gpubench/benchmark.hpp"
#include "gpubench/config.hpp"
#include "gpubench/context.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/gpu_monitor.hpp"
#include "gpubench/runner.hpp"
#include "gpubench/statistics.hpp"
#include "gpubench/text.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/cuda.hpp"
#include "kernels/gemm.cuh"
#endif

namespace gpubench {
namespace {

// Rate over a run of slices: their FLOPs over their time, so a slow slice weighs what it lasted.
struct slice_rate {
  double flops = 0;
  double seconds = 0;
  [[nodiscard]] double tflops() const { return seconds > 0 ? flops / seconds / 1e12 : 0; }
};

#if GPUBENCH_HAVE_CUDA
constexpr std::size_t workspace_bytes = std::size_t{32} << 20;
constexpr int autotune_candidates = 4;
constexpr int check_samples = 256;
constexpr double slice_seconds = 1.0;

kernels::gemm_dtype burn_dtype(const std::string& name, int device) {
  int major = 0;
  int minor = 0;
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const int capability = major * 10 + minor;
  if (name == "auto") {
    // The widest tensor-core type the GPU has: the most power a GEMM can draw from it.
    return capability >= kernels::gemm_min_compute_capability(kernels::gemm_dtype::bf16)
               ? kernels::gemm_dtype::bf16
               : kernels::gemm_dtype::fp16;
  }
  const kernels::gemm_dtype dtype = kernels::parse_gemm_dtype(name);
  const int needed = kernels::gemm_min_compute_capability(dtype);
  if (capability < needed) {
    throw skip_case(name + " needs compute capability " + std::to_string(needed / 10) + "." +
                    std::to_string(needed % 10) + "; GPU " + std::to_string(device) + " has " +
                    std::to_string(major) + "." + std::to_string(minor));
  }
  return dtype;
}

class gpu_burn final : public instance {
 public:
  gpu_burn(const context& ctx, const axis_values& values)
      : shape_(parse_gemm_shape(values.get_string("shape"))),
        slices_(
            static_cast<int>(static_cast<double>(values.get_int64("duration_s")) / slice_seconds)) {
    if (slices_ < 1) {
      throw std::invalid_argument("gpu.burn: duration_s must be at least 1");
    }
    std::string why_not;
    monitor_ = gpu_monitor::open(why_not);
    monitor_problem_ = why_not;
    std::uint32_t seed = 0xb0b0u;
    for (int device : ctx.gpu_indices()) {
      auto l = std::make_unique<lane>();
      l->device = device;
      for (const auto& gpu : ctx.system().gpus) {
        if (gpu.index == device) l->pci_bus_id = gpu.pci_bus_id;
      }
      GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
      l->dtype = burn_dtype(values.get_string("dtype"), device);
      l->stream = std::make_unique<cuda::stream>();
      l->gemm = std::make_unique<kernels::lt_gemm>(device, l->dtype, shape_.m, shape_.n, shape_.k,
                                                   workspace_bytes, seed++);
      const double seconds = l->gemm->autotune(autotune_candidates, l->stream->get());
      l->multiplies_per_slice =
          static_cast<int>(std::clamp(std::ceil(slice_seconds / seconds), 1.0, 1e6));
      l->marks = std::vector<cuda::event>(static_cast<std::size_t>(slices_) + 1);
      lanes_.push_back(std::move(l));
    }
  }

  [[nodiscard]] work work_per_iteration() const override {
    double flops = 0;
    for (const auto& l : lanes_) flops += l->gemm->flops() * l->multiplies_per_slice * slices_;
    return work{.flops = flops};
  }

  std::optional<double> run_iteration() override {
    for (auto& l : lanes_) {
      l->samples.clear();
      GPUBENCH_CUDA_CHECK(cudaSetDevice(l->device));
      GPUBENCH_CUDA_CHECK(cudaEventRecord(l->marks[0].get(), l->stream->get()));
    }
    const auto start = std::chrono::steady_clock::now();
    enqueue_slice(0);
    for (int s = 0; s < slices_; ++s) {
      // Two slices in flight: the GPU stays busy while the host waits and samples.
      if (s + 1 < slices_) enqueue_slice(s + 1);
      for (auto& l : lanes_) {
        GPUBENCH_CUDA_CHECK(cudaEventSynchronize(l->marks[s + 1].get()));
      }
      const double at =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (auto& l : lanes_) record_sample(*l, at);
      if (interrupt_requested()) {
        for (auto& l : lanes_) GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l->stream->get()));
        throw std::runtime_error("interrupted during the sustained load");
      }
    }
    double longest = 0;
    for (auto& l : lanes_) {
      for (int s = 0; s < slices_; ++s) {
        const double seconds = cuda::elapsed_seconds(l->marks[s], l->marks[s + 1]);
        l->samples[static_cast<std::size_t>(s)].seconds = seconds;
      }
      longest = std::max(longest, cuda::elapsed_seconds(l->marks[0], l->marks[slices_]));
    }
    return longest;
  }

  [[nodiscard]] verification verify() override {
    verification v;
    std::string detail;
    for (auto& l : lanes_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(l->device));
      const kernels::gemm_check c = l->gemm->check(check_samples, l->stream->get());
      char text[160];
      std::snprintf(text, sizeof text, "GPU %d: %d of %d sampled outputs outside %.0e", l->device,
                    c.wrong, c.samples, c.tolerance);
      detail += (detail.empty() ? "" : "; ") + std::string(text);
      if (c.wrong != 0) v.passed = false;
    }
    v.detail = "after the sustained load, against a float64 reference: " + detail;
    return v;
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double /*seconds_per_iteration*/) const override {
    double worst_drop = -1e300;
    double slowest = 1e300;
    for (const auto& l : lanes_) {
      worst_drop = std::max(worst_drop, drop_pct(*l));
      slowest = std::min(slowest, whole_run(*l).tflops());
    }
    if (lanes_.empty()) return {};
    return {{"min_gpu_TFLOPs", slowest}, {"drop_pct", worst_drop}};
  }

  [[nodiscard]] json info() const override {
    json gpus = json::array();
    for (const auto& l : lanes_) {
      std::set<std::string> reasons;
      std::optional<int> hottest;
      std::optional<double> most_power;
      std::optional<int> sm_low;
      std::optional<int> sm_high;
      std::vector<double> sm_clocks;
      json timeline = json::array();
      for (const auto& s : l->samples) {
        json point{{"t_s", s.at_s}, {"TFLOPs", s.tflops(*l)}};
        if (s.gpu) {
          for (const auto& r : s.gpu->throttle_reasons) reasons.insert(r);
          const auto& c = s.gpu->clocks;
          if (c.sm_mhz) {
            sm_clocks.push_back(*c.sm_mhz);
            sm_low = std::min(sm_low.value_or(*c.sm_mhz), *c.sm_mhz);
            sm_high = std::max(sm_high.value_or(*c.sm_mhz), *c.sm_mhz);
          }
          if (s.gpu->temperature_C) {
            hottest = std::max(hottest.value_or(*s.gpu->temperature_C), *s.gpu->temperature_C);
          }
          if (s.gpu->power_W) {
            most_power = std::max(most_power.value_or(*s.gpu->power_W), *s.gpu->power_W);
          }
          point["sm_mhz"] = c.sm_mhz;
          point["temperature_C"] = s.gpu->temperature_C;
          point["power_W"] = s.gpu->power_W;
          point["throttle_reasons"] = s.gpu->throttle_reasons;
        }
        timeline.push_back(std::move(point));
      }
      const auto tenths = tenth_rates(*l);
      gpus.push_back(
          json{{"gpu", l->device},
               {"pci_bus_id", l->pci_bus_id},
               {"dtype", kernels::gemm_dtype_name(l->dtype)},
               {"TFLOPs", whole_run(*l).tflops()},
               {"first_tenth_TFLOPs", tenths.first.tflops()},
               {"last_tenth_TFLOPs", tenths.second.tflops()},
               {"drop_pct", drop_pct(*l)},
               {"throttle_reasons_seen", std::vector<std::string>(reasons.begin(), reasons.end())},
               {"sm_mhz_min", sm_low},
               {"sm_mhz_max", sm_high},
               {"sm_mhz_median", sm_clocks.empty() ? json() : json(summarize(sm_clocks).median)},
               {"sm_max_mhz", l->sm_max_mhz},
               {"temperature_C_max", hottest},
               {"power_W_max", most_power},
               {"multiplies_per_slice", l->multiplies_per_slice},
               {"samples", std::move(timeline)}});
    }
    json out{{"m", shape_.m},
             {"n", shape_.n},
             {"k", shape_.k},
             {"library", "cuBLASLt"},
             {"slices", slices_},
             {"slice_target_s", slice_seconds},
             {"drop", "100 * (first tenth - last tenth) / first tenth of the run's slices"},
             {"gpus", std::move(gpus)}};
    if (!monitor_) out["nvml"] = "not sampled: " + monitor_problem_;
    return out;
  }

 private:
  struct lane;
  struct sample {
    double at_s = 0;     // host time since the start when the slice ended
    double seconds = 0;  // the slice's GPU time
    std::optional<gpu_sample> gpu;
    [[nodiscard]] double tflops(const lane& l) const {
      return seconds > 0 ? l.gemm->flops() * l.multiplies_per_slice / seconds / 1e12 : 0;
    }
  };
  struct lane {
    int device = 0;
    std::string pci_bus_id;
    kernels::gemm_dtype dtype{};
    std::unique_ptr<cuda::stream> stream;
    std::unique_ptr<kernels::lt_gemm> gemm;
    int multiplies_per_slice = 1;
    std::vector<cuda::event> marks;  // marks[s] .. marks[s + 1] bound slice s
    std::vector<sample> samples;
    std::optional<int> sm_max_mhz;
  };

  void enqueue_slice(int s) {
    for (auto& l : lanes_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(l->device));
      for (int i = 0; i < l->multiplies_per_slice; ++i) l->gemm->enqueue(l->stream->get());
      GPUBENCH_CUDA_CHECK(cudaEventRecord(l->marks[s + 1].get(), l->stream->get()));
    }
  }

  void record_sample(lane& l, double at) const {
    sample s;
    s.at_s = at;
    if (monitor_) {
      s.gpu = monitor_->sample(l.pci_bus_id);
      if (s.gpu && s.gpu->clocks.sm_max_mhz) l.sm_max_mhz = s.gpu->clocks.sm_max_mhz;
      if (s.gpu && s.gpu->throttle_reasons == std::vector<std::string>{"gpu_idle"}) {
        s.gpu->throttle_reasons.clear();  // sampled between kernels: not a slowdown
      }
    }
    l.samples.push_back(std::move(s));
  }

  [[nodiscard]] static slice_rate rate_of(const lane& l, std::size_t from, std::size_t to) {
    slice_rate r;
    for (std::size_t i = from; i < to && i < l.samples.size(); ++i) {
      r.flops += l.gemm->flops() * l.multiplies_per_slice;
      r.seconds += l.samples[i].seconds;
    }
    return r;
  }
  [[nodiscard]] static slice_rate whole_run(const lane& l) {
    return rate_of(l, 0, l.samples.size());
  }
  [[nodiscard]] static std::pair<slice_rate, slice_rate> tenth_rates(const lane& l) {
    const std::size_t n = l.samples.size();
    const std::size_t tenth = std::max<std::size_t>(1, (n + 9) / 10);
    return {rate_of(l, 0, tenth), rate_of(l, n - std::min(n, tenth), n)};
  }
  [[nodiscard]] static double drop_pct(const lane& l) {
    const auto [first, last] = tenth_rates(l);
    return first.tflops() > 0 ? 100.0 * (first.tflops() - last.tflops()) / first.tflops() : 0;
  }

  gemm_shape shape_;
  int slices_;
  std::vector<std::unique_ptr<lane>> lanes_;
  std::unique_ptr<gpu_monitor> monitor_;
  std::string monitor_problem_;
};
#endif

benchmark_definition burn_definition() {
  benchmark_definition def("gpu.burn");
  def.set_description(
         "Sustained GEMM on every GPU at once for duration_s: sustained rate, drop, throttling "
         "(NVML sampled each second)")
      .add_choice_axis("dtype", {"auto", "fp16", "bf16", "tf32", "fp32", "fp8"},
                       "auto: bf16 where the GPU has it, else fp16")
      .add_axis(axis{"shape", axis_kind::string, "MxNxK, or N for a square multiply",
                     [](const context&) { return std::vector<axis_value>{"8192x8192x8192"}; },
                     [](const axis_value& v) { (void)parse_gemm_shape(std::get<std::string>(v)); }})
      .add_axis(axis{"duration_s", axis_kind::integer, "seconds of sustained load (run --duration)",
                     [](const context&) { return std::vector<axis_value>{std::int64_t{60}}; },
                     [](const axis_value& v) {
                       const auto seconds = std::get<std::int64_t>(v);
                       if (seconds < 1 || seconds > std::int64_t{7} * 24 * 3600) {
                         throw std::invalid_argument("seconds from 1 to 604800");
                       }
                     }})
      .add_metric("TFLOPs", metric_kind::compute_TFLOPs)
      .set_timing(timing::manual)
      .set_single_iteration()
      .set_supported(cuda_gpu_unavailable_reason);
#if GPUBENCH_HAVE_CUDA
  def.set_instance<gpu_burn>();
#else
  def.set_factory(unavailable_factory("built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(burn_definition());

}  // namespace
}  // namespace gpubench
