// The GPU step (docs/model.md): each operation at the slower of its GEMM rate and its memory
// traffic, the optimizer's parameter-sized traffic, the launch gaps, and the host's time to issue
// the kernels, which overlaps the GPU's work.
#include <algorithm>
#include <cmath>

#include "components.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {

namespace {

constexpr std::int64_t gemm_tile = 128;  // output tile of a large cuBLAS kernel (128x128)
constexpr double gemm_min_split_k = 256;

// Mixed precision adds the half copy of the weights (read fp32, write half) and the gradient
// unscale to the optimizer's fp32 traffic.
constexpr double mixed_precision_optimizer_bytes = 10;
// torch.optim before 2.0 zeroes every gradient with its own kernel (zero_grad(set_to_none=False)).
constexpr double zero_grad_passes = 1;
// Multi-tensor kernels (apex and torch's multi_tensor_apply, fused or foreach) take at most 36
// tensors (four tensor lists) and 320 blocks of 65536 elements per launch.
constexpr double multi_tensor_max_tensors = 36;
constexpr double multi_tensor_max_elements = 320.0 * 65536.0;

double hbm_GBps(const hardware_profile& hw, basis* basis_out) {
  const auto bandwidth = gpu_memory_GBps(hw);
  if (!bandwidth) {
    throw input_error(hw.origin + ": the profile has no GPU memory bandwidth (" +
                      vocabulary::key_of(fig::hbm) + ")");
  }
  const figure* measured = hw.find(fig::hbm);
  if (basis_out) *basis_out = measured ? measured->from : basis::catalog;
  return *bandwidth;
}

}  // namespace

std::optional<double> gpu_memory_GBps(const hardware_profile& hw) {
  if (const figure* f = hw.find(fig::hbm)) return f->value;
  const auto peak = hw.value(fig::hbm_peak);
  if (!peak) return std::nullopt;
  return *peak * hw.value(fig::hbm_efficiency).value_or(0.8);
}

std::optional<double> gemm_roof_tflops(const hardware_profile& hw, const std::string& dtype) {
  double best = 0;
  for (const gemm_point& p : hw.gemm) {
    if (p.dtype == dtype) best = std::max(best, p.tflops);
  }
  if (best > 0) return best;
  const auto peak = hw.value(fig::peak_tflops, dtype);
  if (!peak) return std::nullopt;
  return *peak * hw.value(fig::gemm_efficiency, dtype).value_or(0.8);
}

double gemm_tflops(const hardware_profile& hw, const std::string& dtype, std::int64_t m,
                   std::int64_t n, std::int64_t k, std::int64_t batched, bool* measured) {
  return detail::gemm_rates(hw, dtype).tflops(m, n, k, batched, measured);
}

namespace detail {

gemm_rates::gemm_rates(const hardware_profile& hw, const std::string& dtype) {
  for (const gemm_point& p : hw.gemm) {
    if (p.dtype != dtype) continue;
    points_.push_back(&p);
    curve_.emplace_back(
        std::cbrt(static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k)),
        p.tflops);
  }
  std::sort(curve_.begin(), curve_.end());
  if (!curve_.empty()) return;
  peak_ = hw.value(fig::peak_tflops, dtype);
  efficiency_ = hw.value(fig::gemm_efficiency, dtype).value_or(0.8);
  sms_ = hw.value(fig::sm_count).value_or(100);
  missing_ = hw.origin + ": no " + dtype + " GEMM rate in the profile";
}

double gemm_rates::worst_cv() const {
  double worst = 0;
  for (const gemm_point* p : points_) worst = std::max(worst, p->cv);
  return worst;
}

double gemm_rates::tflops(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batched,
                          bool* measured) const {
  for (const gemm_point* p : points_) {
    if (p->m == m && p->n == n && p->k == k) {
      if (measured) *measured = true;
      return p->tflops;
    }
  }
  const double cube = std::cbrt(static_cast<double>(m) * static_cast<double>(n) *
                                static_cast<double>(k) * static_cast<double>(batched));
  if (!curve_.empty()) {
    if (measured) *measured = true;
    return interpolate_log(curve_, cube);
  }
  if (measured) *measured = false;
  if (!peak_) throw input_error(missing_);
  // Wave quantisation: a launch with fewer output tiles than SMs leaves SMs idle, unless the
  // library splits K (cuBLAS/cuDNN do for deep, narrow products such as weight gradients); a
  // split keeps at least gemm_min_split_k of K.
  // In double: a serving step of many sequences multiplies past what int64 holds.
  const auto tiles_along = [](std::int64_t size) {
    return std::ceil(static_cast<double>(size) / static_cast<double>(gemm_tile));
  };
  const double output_tiles = tiles_along(m) * tiles_along(n) * static_cast<double>(batched);
  const double max_splits = std::max(1.0, std::floor(static_cast<double>(k) / gemm_min_split_k));
  const double splits = std::clamp(std::ceil(sms_ / output_tiles), 1.0, max_splits);
  const double tiles = output_tiles * splits;
  const double waves = std::ceil(tiles / sms_);
  const double wave_efficiency = tiles / (waves * sms_);
  return *peak_ * efficiency_ * wave_efficiency;
}

optimizer_cost optimizer_step(const workload& w, const std::string& precision, double params,
                              double tensors) {
  const optimizer_kind& kind = optimizer_of(w.optimizer);
  const double extra = precision_of(precision).mixed ? mixed_precision_optimizer_bytes : 0;
  const double launches = std::max(std::ceil(tensors / multi_tensor_max_tensors),
                                   std::ceil(params / multi_tensor_max_elements));
  optimizer_cost cost;
  if (w.optimizer_impl == "fused") {
    cost.bytes_per_param = kind.fused_bytes + extra;
    cost.kernels = launches;
  } else if (w.optimizer_impl == "foreach") {
    cost.bytes_per_param = kind.unfused_passes * 4 + extra;
    cost.kernels = kind.ops * launches;
  } else {
    cost.bytes_per_param = (kind.unfused_passes + zero_grad_passes) * 4 + extra;
    cost.kernels = (kind.ops + zero_grad_passes) * tensors;
  }
  return cost;
}

gpu_times gpu_step(const hardware_profile& hw, const workload& w, const constants& c,
                   const std::string& precision, int batch, const data_parallel& dp,
                   std::vector<std::string>& assumed) {
  gpu_times out;
  workload at = w;
  at.precision = precision;
  out.ops = expand(at, batch);
  const step_ops& ops = out.ops;
  out.params = ops.params;
  out.kernels = ops.kernels;
  out.tokens_per_sample = ops.tokens_per_sample;
  const std::string dtype = gemm_dtype(precision);
  // On CUDA cores Winograd beats the implicit GEMM for 3x3 stride-1 convolutions; tensor-core
  // dtypes keep the implicit GEMM (docs/model.md, "Winograd").
  const bool winograd_pays = !find_gemm_dtype(dtype)->tensor_cores;
  const double act = activation_bytes(precision);
  basis hbm_basis = basis::catalog;
  const double hbm = hbm_GBps(hw, &hbm_basis) * giga;
  out.memory_basis = hbm_basis;
  cite_noise(out.noisy_memory, hw, fig::hbm);
  bool any_measured = false;
  bool any_catalog = false;
  const gemm_rates rates(hw, dtype);
  const std::string other_dtype(precision_of(precision).other_gemm_dtype);
  const std::optional<gemm_rates> other_rates =
      other_dtype == dtype ? std::nullopt
                           : std::optional<gemm_rates>(std::in_place, hw, other_dtype);
  for (const op& o : ops.ops) {
    if (o.kind == op_kind::memory) {
      // The presets count eager kernels; a fusing stack moves only part of that traffic.
      const double bytes = o.bytes * o.count * c.memory_pass_fraction;
      out.step.memory_s += bytes / (hbm * c.memory_efficiency);
      out.step.bytes += bytes;
      continue;
    }
    bool measured = false;
    const gemm_rates& op_rates = o.linear || !other_rates ? rates : *other_rates;
    const double tflops = op_rates.tflops(o.m, o.n, o.k, o.batched, &measured);
    (measured ? any_measured : any_catalog) = true;
    const double flops =
        2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
    const double efficiency = o.kind == op_kind::conv ? c.conv_efficiency : c.matmul_efficiency;
    const double executed = o.winograd && winograd_pays ? flops / c.winograd_flop_reduction : flops;
    const double t_flop = executed / (tflops * tera * efficiency);
    const auto in_hbm = [&](std::uint8_t operand, std::int64_t rows, std::int64_t cols) {
      if ((o.on_chip & operand) != 0) return 0.0;
      return static_cast<double>(rows * cols) / ((o.unfolded & operand) != 0 ? o.unfold : 1.0);
    };
    const double elements =
        in_hbm(operand_a, o.m, o.k) + in_hbm(operand_b, o.k, o.n) + in_hbm(operand_c, o.m, o.n);
    const double t_mem = elements * act / (hbm * c.memory_efficiency);
    out.step.flops += flops * o.count;
    out.step.bytes += elements * act * o.count;
    if (t_flop >= t_mem) {
      out.step.compute_s += t_flop * o.count;
    } else {
      out.step.memory_s += t_mem * o.count;
    }
  }
  out.step.memory_s += ops.nchw_conv_bytes * c.nchw_conv_passes / (hbm * c.memory_efficiency);
  out.step.bytes += ops.nchw_conv_bytes * c.nchw_conv_passes;
  // A sharding strategy splits the optimizer state and keeps each wrapped unit's parameters as
  // one flat tensor.
  const double sharding = strategy_of(w.strategy).shards(dp.per_node, dp.nodes).optimizer;
  const bool flat = w.strategy != parallel_strategy::ddp;
  const optimizer_cost optimizer = optimizer_step(w, precision, ops.params / sharding,
                                                  flat ? ops.param_groups : ops.param_tensors);
  if (w.optimizer_impl == "per_tensor" && ops.param_tensors <= 0) {
    assumed.push_back(
        "parameter tensors not stated (model.param_tensors): the per-tensor "
        "optimizer's kernels are not counted");
  }
  const double optimizer_bytes =
      ops.params * optimizer.bytes_per_param / sharding / w.gradient_accumulation;
  out.step.optimizer_s = optimizer_bytes / (hbm * c.memory_efficiency);
  out.step.bytes += optimizer_bytes;
  out.kernels += optimizer.kernels / w.gradient_accumulation;
  const double launch_latency = hw.value(fig::launch_latency).value_or(c.default_launch_latency_us);
  out.step.launch_s = out.kernels * launch_latency * 1e-6;
  out.step.host_s = out.kernels * c.kernel_overhead_us * 1e-6;
  if (any_measured) cite_noise(out.noisy_compute, "gemm " + dtype, rates.worst_cv());
  cite_noise(out.noisy_compute, hw, fig::launch_latency);
  out.compute_basis = any_measured && !any_catalog ? basis::measured
                      : any_measured               ? basis::measured_and_catalog
                                                   : basis::catalog;
  if (any_catalog && !hw.gemm.empty()) {
    assumed.push_back("gemm " + dtype + " rate (not measured at this dtype)");
  }
  return out;
}

void check_runs(const hardware_profile& hw, const std::string& precision) {
  const std::string dtype = gemm_dtype(precision);
  const bool measured = std::any_of(hw.gemm.begin(), hw.gemm.end(),
                                    [&](const gemm_point& p) { return p.dtype == dtype; });
  if (!measured && !hw.value(fig::peak_tflops, dtype)) {
    if (hw.gpu_model.empty() && hw.gemm.empty()) {
      throw input_error(hw.origin + ": the profile has no GPU figures (" + hw.description +
                        "); size against a catalog GPU with --set gpu.model=NAME or "
                        "--hardware catalog:NAME");
    }
    throw input_error(hw.origin + ": precision " + precision + " needs " + dtype +
                      " GEMMs, which " + (hw.gpu_model.empty() ? hw.name : hw.gpu_model) +
                      " does not have");
  }
}

double compute_part(const step_breakdown& step) {
  // The pipeline bubble is time the GPUs wait for work: it counts with the compute.
  return std::max(step.compute_s + step.launch_s, step.host_s - step.memory_s - step.optimizer_s) +
         step.pipeline_bubble_s;
}

double memory_part(const step_breakdown& step) {
  return step.memory_s + step.optimizer_s;
}

std::vector<std::string> faster_precisions(const hardware_profile& hw,
                                           const std::string& precision) {
  const auto peak = [&](std::string_view gemm_dtype) {
    return hw.value(fig::peak_tflops, gemm_dtype).value_or(0.0);
  };
  const double current = peak(precision_of(precision).gemm_dtype);
  std::vector<std::string> faster;
  for (const training_precision& p : training_precisions()) {
    if (peak(p.gemm_dtype) > current) faster.emplace_back(p.name);
  }
  return faster;
}

void advise_gpu(component_id limit, const gpu_times& gpu, const step_breakdown& step,
                const hardware_profile& hw, const std::string& precision,
                std::vector<std::string>& advice) {
  const bool issue_bound = step.host_s > gpu.work();
  if (limit == component_id::gpu_compute && issue_bound) {
    advice.push_back("issuing kernels limits the job: " + fmt(gpu.kernels) + " kernels take " +
                     fmt(step.host_s * 1e3) + " ms of CPU time per step against " +
                     fmt(gpu.work() * 1e3) +
                     " ms of GPU work; a larger batch per GPU, CUDA graphs or a compiled model "
                     "(torch.compile) move it");
  } else if (limit == component_id::gpu_compute) {
    const std::vector<std::string> faster = faster_precisions(hw, precision);
    advice.push_back("GPU math limits the job (" + fmt(step.flops / step.gpu_step_s / 1e12 / 1, 3) +
                     " TFLOP/s per GPU achieved): a faster GPU" +
                     (faster.empty()
                          ? std::string(" or more GPUs")
                          : ", more GPUs or a lower precision (" + join(faster, "/") + ")") +
                     " moves it");
  }
  if (limit == component_id::gpu_memory) {
    advice.push_back("GPU memory bandwidth limits the job: memory-bound kernels take " +
                     fmt(memory_part(step) * 1e3) + " ms of a " + fmt(step.gpu_step_s * 1e3) +
                     " ms step; fused kernels (torch.compile), a larger batch or a GPU with "
                     "faster HBM move it");
  }
}

}  // namespace detail

}  // namespace gpubench::model
