// gpu.burn: sustained matrix multiplies on every GPU of the run at once for `duration_s`, as
// gpu-burn and DCGM's targeted stress do. The run is cut into one-second slices of a fixed number
// of multiplies per GPU; each slice is timed with CUDA events and followed by an NVML sample
// (clocks, temperature, power, throttle reasons) taken while the next slice is already running,
// so the GPU is never idle when it is observed. Like gpu-burn, every product lands in a ring of
// result buffers filling the GPU's memory and every element of it is compared, bit for bit, with
// a reference product made before the load: a GPU that computes wrong when hot fails the case.
// Reported: the sustained rate, its drop from the first to the last tenth of the run, every
// throttle reason seen and the mismatches counted (docs/methodology.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/gpu_memory.hpp"
#include "gpubench/harness/gpu_monitor.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/vocabulary/measurements.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/harness/cuda.hpp"
#include "gpubench/kernels/gemm.cuh"
#endif

namespace gpubench {
namespace {

namespace burn_gpu = vocabulary::measurements::burn_gpu;

// Rate over a run of slices: their FLOPs over their time, so a slow slice weighs what it lasted.
struct slice_rate {
  double flops = 0;
  double seconds = 0;
  [[nodiscard]] double tflops() const { return seconds > 0 ? flops / seconds / 1e12 : 0; }
};

#if GPUBENCH_HAVE_CUDA
constexpr std::size_t burn_workspace_bytes = std::size_t{32} << 20;
constexpr int burn_autotune_candidates = 4;
constexpr double burn_autotune_warmup_s = 0.2;
constexpr int burn_check_samples = 256;
constexpr double slice_seconds = 1.0;
// At most this many result buffers per GPU (the memory they fill is what gpu-burn stresses; past
// a slice's worth, more buffers change nothing).
constexpr std::size_t max_ring_buffers = 4096;

kernels::gemm_dtype burn_dtype(const std::string& name, int device) {
  if (name == "auto") {
    // The widest tensor-core type the GPU has: the most power a GEMM can draw from it.
    return kernels::compute_capability(device) >=
                   kernels::gemm_min_compute_capability(kernels::gemm_dtype::bf16)
               ? kernels::gemm_dtype::bf16
               : kernels::gemm_dtype::fp16;
  }
  const kernels::gemm_dtype dtype = kernels::parse_gemm_dtype(name);
  kernels::require_gemm_dtype(dtype, device);
  return dtype;
}

// One GPU's share: its multiply, the reference result every product is compared with, the ring
// of result buffers that fills its memory, and the events and counters of each slice.
struct burn_lane {
  explicit burn_lane(int gpu) : device(gpu), stream(gpu) {}
  int device;
  std::string pci_bus_id;
  std::optional<int> sm_max_mhz;
  kernels::gemm_dtype dtype{};
  cuda::stream stream;
  std::unique_ptr<kernels::lt_gemm> gemm;  // uses stream
  kernels::gemm_check reference_check;     // the reference D against float64, before the load
  std::vector<cuda::device_buffer> ring;   // products land here in turn
  std::size_t next = 0;                    // the ring buffer the next product lands in
  int multiplies_per_slice = 1;
  cuda::device_buffer mismatches;  // one counter per slice (device)
  struct group {                   // up to ring.size() products, then their comparisons
    cuda::event begin;
    cuda::event end;
    int multiplies;
  };
  std::vector<std::vector<group>> slices;  // slices[s]: the groups of slice s
  std::vector<cuda::event> slice_done;     // after slice s's comparisons
};

class gpu_burn final : public instance {
 public:
  gpu_burn(const context& ctx, const axis_values& values)
      : shape_(parse_gemm_shape(values.get_string("shape"))),
        slices_(
            static_cast<int>(static_cast<double>(values.get_int64("duration_s")) / slice_seconds)) {
    std::string why_not;
    monitor_ = gpu_monitor::open(why_not);
    monitor_problem_ = why_not;
    std::uint32_t seed = 0xb0b0u;
    for (int device : ctx.gpu_indices()) {
      auto l = std::make_unique<burn_lane>(device);
      for (const auto& gpu : ctx.system().gpus) {
        if (gpu.index == device) {
          l->pci_bus_id = gpu.pci_bus_id;
          l->sm_max_mhz = gpu.clocks.sm_max_mhz;
        }
      }
      l->dtype = burn_dtype(values.get_string("dtype"), device);
      l->gemm = std::make_unique<kernels::lt_gemm>(l->stream, l->dtype, shape_.m, shape_.n,
                                                   shape_.k, burn_workspace_bytes, seed++);
      const kernels::gemm_tuning tuning =
          l->gemm->autotune(burn_autotune_candidates, burn_autotune_warmup_s);
      l->multiplies_per_slice = static_cast<int>(
          std::clamp(std::ceil(slice_seconds / tuning.seconds_per_multiply), 1.0, 1e6));
      // The reference: one product on the cool GPU, checked against float64 samples.
      l->gemm->enqueue();
      l->reference_check = l->gemm->check(burn_check_samples);
      make_ring(*l);
      make_slices(*l);
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
      l->next = 0;
      cuda::enqueue_zero(l->mismatches, l->stream);
    }
    samples_.assign(lanes_.size(), {});
    const auto start = std::chrono::steady_clock::now();
    enqueue_slice(0);
    for (int s = 0; s < slices_; ++s) {
      // Two slices in flight: the GPU stays busy while the host waits and samples.
      if (s + 1 < slices_) enqueue_slice(s + 1);
      for (auto& l : lanes_) {
        GPUBENCH_CUDA_CHECK(cudaEventSynchronize(l->slice_done[static_cast<std::size_t>(s)].get()));
      }
      const double at =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (std::size_t i = 0; i < lanes_.size(); ++i) record_sample(i, at);
      if (interrupt_requested()) {
        for (auto& l : lanes_) l->stream.synchronize();
        throw std::runtime_error("interrupted during the sustained load");
      }
    }
    double longest = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      burn_lane& l = *lanes_[i];
      std::vector<unsigned long long> per_slice(static_cast<std::size_t>(slices_));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(per_slice.data(), l.mismatches.get(), l.mismatches.size(),
                                          cudaMemcpyDeviceToHost, l.stream.get()));
      l.stream.synchronize();
      double total = 0;
      for (int s = 0; s < slices_; ++s) {
        double seconds = 0;
        for (const auto& g : l.slices[static_cast<std::size_t>(s)]) {
          seconds += cuda::elapsed_seconds(g.begin, g.end);
        }
        auto& slice = samples_[i][static_cast<std::size_t>(s)];
        slice.seconds = seconds;
        slice.mismatches = per_slice[static_cast<std::size_t>(s)];
        total += seconds;
      }
      longest = std::max(longest, total);
    }
    return longest;
  }

  [[nodiscard]] verification verify() override {
    verification v;
    std::string detail;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const burn_lane& l = *lanes_[i];
      const kernels::gemm_check& c = l.reference_check;
      const unsigned long long wrong = mismatched_elements(i);
      char text[320];
      std::snprintf(text, sizeof text,
                    "GPU %d: reference product %d of %d sampled outputs outside %.0e of float64; "
                    "%llu products under load, every element compared with it bit for bit: %llu "
                    "differ",
                    l.device, c.wrong, c.samples, c.tolerance, products(l), wrong);
      detail += (detail.empty() ? "" : "; ") + std::string(text);
      if (c.wrong != 0 || wrong != 0) v.passed = false;
    }
    v.detail = detail;
    return v;
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double /*seconds_per_iteration*/) const override {
    double worst_drop = -1e300;
    double slowest = 1e300;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      worst_drop = std::max(worst_drop, drop_pct(i));
      slowest = std::min(slowest, whole_run(i).tflops());
    }
    if (lanes_.empty()) return {};
    return {{"min_gpu_TFLOPs", slowest}, {"drop_pct", worst_drop}};
  }

  [[nodiscard]] json info() const override {
    json gpus = json::array();
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const burn_lane& l = *lanes_[i];
      std::set<std::string> reasons;
      std::optional<int> hottest;
      std::optional<double> most_power;
      std::optional<int> sm_low;
      std::optional<int> sm_high;
      std::vector<double> sm_clocks;
      json timeline = json::array();
      const auto& samples = i < samples_.size() ? samples_[i] : std::vector<sample>{};
      for (const auto& s : samples) {
        json point{{"t_s", s.at_s}, {"TFLOPs", s.tflops(l)}, {"mismatches", s.mismatches}};
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
      const auto tenths = tenth_rates(i);
      gpus.push_back(json{
          {burn_gpu::gpu, l.device},
          {"pci_bus_id", l.pci_bus_id},
          {burn_gpu::dtype, kernels::gemm_dtype_name(l.dtype)},
          {burn_gpu::rate, whole_run(i).tflops()},
          {burn_gpu::first_tenth, tenths.first.tflops()},
          {burn_gpu::last_tenth, tenths.second.tflops()},
          {burn_gpu::drop, drop_pct(i)},
          {burn_gpu::throttle_reasons, std::vector<std::string>(reasons.begin(), reasons.end())},
          {"sm_mhz_min", sm_low},
          {"sm_mhz_max", sm_high},
          {burn_gpu::sm_mhz_median, sm_clocks.empty() ? json() : json(summarize(sm_clocks).median)},
          {burn_gpu::sm_max_mhz, l.sm_max_mhz},
          {"temperature_C_max", hottest},
          {"power_W_max", most_power},
          {"multiplies_per_slice", l.multiplies_per_slice},
          {"result_buffers", l.ring.size()},
          {"result_buffer_bytes", l.gemm->d_bytes()},
          {"products_compared", products(l)},
          {"elements_compared",
           static_cast<double>(products(l)) * static_cast<double>(l.gemm->d_elements())},
          {"mismatched_elements", mismatched_elements(i)},
          {"reference_check", json{{"samples", l.reference_check.samples},
                                   {"wrong", l.reference_check.wrong},
                                   {"worst_error", l.reference_check.worst_error},
                                   {"tolerance", l.reference_check.tolerance}}},
          {"samples", std::move(timeline)}});
    }
    json out{{"m", shape_.m},
             {"n", shape_.n},
             {"k", shape_.k},
             {"library", "cuBLASLt"},
             {"slices", slices_},
             {"slice_target_s", slice_seconds},
             {"drop", "100 * (first tenth - last tenth) / first tenth of the run's slices"},
             {"check",
              "every product under load compared bit for bit with a reference product made before "
              "the load (itself checked against float64 samples)"},
             {"gpus", std::move(gpus)}};
    if (!monitor_) out["nvml"] = "not sampled: " + monitor_problem_;
    return out;
  }

 private:
  struct sample {
    double at_s = 0;     // host time since the start when the slice ended
    double seconds = 0;  // the slice's GPU time in multiplies (comparisons excluded)
    unsigned long long mismatches = 0;
    std::optional<gpu_sample> gpu;
    [[nodiscard]] double tflops(const burn_lane& l) const {
      return seconds > 0 ? l.gemm->flops() * l.multiplies_per_slice / seconds / 1e12 : 0;
    }
  };

  // As many result buffers as fit in the usable share of the GPU's free memory (gpu-burn fills
  // memory the same way), at least one.
  static void make_ring(burn_lane& l) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    {
      const cuda::device_scope scope(l.device);
      GPUBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    }
    const std::size_t bytes = l.gemm->d_bytes();
    const auto usable =
        static_cast<std::size_t>(static_cast<double>(free_bytes) * usable_free_fraction);
    const std::size_t count = std::clamp<std::size_t>(
        usable / bytes, 1, std::min<std::size_t>(max_ring_buffers, l.multiplies_per_slice));
    l.ring.reserve(count);
    for (std::size_t i = 0; i < count; ++i) l.ring.emplace_back(l.device, bytes);
  }

  // Each slice: groups of up to ring-size products, each group timed by its own events, its
  // products compared after its end event (so comparisons are not timed as multiplies).
  void make_slices(burn_lane& l) const {
    const int per_group = static_cast<int>(l.ring.size());
    l.mismatches = cuda::device_buffer(
        l.device, sizeof(unsigned long long) * static_cast<std::size_t>(slices_));
    for (int s = 0; s < slices_; ++s) {
      std::vector<burn_lane::group> groups;
      for (int done = 0; done < l.multiplies_per_slice; done += per_group) {
        groups.push_back({cuda::event(l.device), cuda::event(l.device),
                          std::min(per_group, l.multiplies_per_slice - done)});
      }
      l.slices.push_back(std::move(groups));
      l.slice_done.emplace_back(l.device);
    }
  }

  void enqueue_slice(int s) {
    for (auto& lp : lanes_) {
      burn_lane& l = *lp;
      auto* counter = l.mismatches.as<unsigned long long>() + s;
      for (auto& g : l.slices[static_cast<std::size_t>(s)]) {
        g.begin.record(l.stream);
        for (int i = 0; i < g.multiplies; ++i) {
          l.gemm->enqueue_into(
              l.ring[(l.next + static_cast<std::size_t>(i)) % l.ring.size()].get());
        }
        g.end.record(l.stream);
        for (int i = 0; i < g.multiplies; ++i) {
          l.gemm->enqueue_compare(l.ring[l.next].get(), counter);
          l.next = (l.next + 1) % l.ring.size();
        }
      }
      l.slice_done[static_cast<std::size_t>(s)].record(l.stream);
    }
  }

  void record_sample(std::size_t lane_index, double at) {
    const burn_lane& l = *lanes_[lane_index];
    sample s;
    s.at_s = at;
    if (monitor_) {
      s.gpu = monitor_->sample(l.pci_bus_id);
      if (s.gpu && s.gpu->throttle_reasons == std::vector<std::string>{"gpu_idle"}) {
        s.gpu->throttle_reasons.clear();  // sampled between kernels: not a slowdown
      }
    }
    samples_[lane_index].push_back(std::move(s));
  }

  [[nodiscard]] unsigned long long products(const burn_lane& l) const {
    return static_cast<unsigned long long>(l.multiplies_per_slice) *
           static_cast<unsigned long long>(slices_);
  }
  [[nodiscard]] unsigned long long mismatched_elements(std::size_t lane_index) const {
    unsigned long long total = 0;
    if (lane_index < samples_.size()) {
      for (const auto& s : samples_[lane_index]) total += s.mismatches;
    }
    return total;
  }
  [[nodiscard]] slice_rate rate_of(std::size_t lane_index, std::size_t from, std::size_t to) const {
    slice_rate r;
    if (lane_index >= samples_.size()) return r;
    const burn_lane& l = *lanes_[lane_index];
    const auto& samples = samples_[lane_index];
    for (std::size_t i = from; i < to && i < samples.size(); ++i) {
      r.flops += l.gemm->flops() * l.multiplies_per_slice;
      r.seconds += samples[i].seconds;
    }
    return r;
  }
  [[nodiscard]] slice_rate whole_run(std::size_t lane_index) const {
    return rate_of(lane_index, 0, static_cast<std::size_t>(slices_));
  }
  [[nodiscard]] std::pair<slice_rate, slice_rate> tenth_rates(std::size_t lane_index) const {
    const auto n = static_cast<std::size_t>(slices_);
    const std::size_t tenth = std::max<std::size_t>(1, (n + 9) / 10);
    return {rate_of(lane_index, 0, tenth), rate_of(lane_index, n - std::min(n, tenth), n)};
  }
  [[nodiscard]] double drop_pct(std::size_t lane_index) const {
    const auto [first, last] = tenth_rates(lane_index);
    return first.tflops() > 0 ? 100.0 * (first.tflops() - last.tflops()) / first.tflops() : 0;
  }

  gemm_shape shape_;
  int slices_;
  std::vector<std::unique_ptr<burn_lane>> lanes_;
  std::vector<std::vector<sample>> samples_;  // per lane, per slice
  std::unique_ptr<gpu_monitor> monitor_;
  std::string monitor_problem_;
};
#endif

std::vector<std::string> burn_dtype_choices() {
  std::vector<std::string> choices{"auto"};
  choices.insert(choices.end(), gemm_dtypes.begin(), gemm_dtypes.end());
  return choices;
}

benchmark_definition burn_definition() {
  benchmark_definition def("gpu.burn");
  def.set_description(
         "Sustained GEMM on every GPU at once for duration_s: sustained rate, drop, throttling "
         "(NVML sampled each second)")
      // One sustained run by default: a burn per precision would multiply the run's length.
      .add_choice_axis("dtype", burn_dtype_choices(), "auto: bf16 where the GPU has it, else fp16",
                       {"auto"})
      .add_axis(axis{"shape", axis_kind::string, "MxNxK, or N for a square multiply",
                     [](const context&) { return std::vector<axis_value>{"8192x8192x8192"}; },
                     [](const axis_value& v) { (void)parse_gemm_shape(std::get<std::string>(v)); }})
      .add_axis("duration_s", axis_kind::integer, {std::int64_t{60}},
                "seconds of sustained load (run --duration)")
      .set_range("duration_s", axis_range{1, std::int64_t{7} * 24 * 3600})
      .add_metric("TFLOPs", metric_kind::compute, units::TFLOPs)
      .add_extra_metric("min_gpu_TFLOPs", units::TFLOPs, better::higher)
      .add_extra_metric("drop_pct", units::percent, better::lower)
      .set_timing(timing::manual)
      .set_single_iteration()
      .set_needs_gpu()
      .set_supported(cublaslt_gpu_unavailable_reason);
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
