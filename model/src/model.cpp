#include "gpubench/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpubench/errors.hpp"
#include "gpubench/json_reader.hpp"
#include "gpubench/text.hpp"
#include "gpubench/config_paths.hpp"

namespace gpubench::model {
namespace {

constexpr double giga = 1e9;
constexpr double tera = 1e12;
constexpr std::int64_t gemm_tile = 128;  // output tile of a large cuBLAS kernel (128x128)
constexpr double gemm_min_split_k = 256;

struct constant_field {
  const char* name;
  double constants::*member;
};

constexpr constant_field constant_fields[] = {
    {"matmul_efficiency", &constants::matmul_efficiency},
    {"conv_efficiency", &constants::conv_efficiency},
    {"memory_efficiency", &constants::memory_efficiency},
    {"kernel_overhead_us", &constants::kernel_overhead_us},
    {"comm_overlap", &constants::comm_overlap},
    {"loader_efficiency", &constants::loader_efficiency},
    {"page_cache_fraction", &constants::page_cache_fraction},
    {"network_efficiency", &constants::network_efficiency},
    {"nvlink_busbw_fraction", &constants::nvlink_busbw_fraction},
    {"pcie_busbw_fraction", &constants::pcie_busbw_fraction},
    {"allreduce_latency_us", &constants::allreduce_latency_us},
    {"ddp_bucket_bytes", &constants::ddp_bucket_bytes},
    {"default_augment_per_core", &constants::default_augment_per_core},
    {"default_network_gbps", &constants::default_network_gbps},
    {"default_launch_latency_us", &constants::default_launch_latency_us},
    {"loader_cores_reserved_per_gpu", &constants::loader_cores_reserved_per_gpu},
};

std::string fmt(double value, int digits = 3) {
  char buffer[64];
  const double magnitude = std::abs(value);
  if (magnitude >= 100 && magnitude < 1e12) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  }
  return buffer;
}

// Optimizer traffic per parameter in bytes (fp32 master state): SGD with momentum reads weight,
// gradient and momentum and writes weight and momentum (5 x 4); Adam(W) adds the second moment
// (7 x 4); LAMB adds the norm passes (8 x 4). Mixed precision adds the half copy of the weights
// and the gradient unscale (2 + 8).
double optimizer_bytes_per_param(const std::string& optimizer, const std::string& precision) {
  double bytes = optimizer == "sgd" ? 20 : optimizer == "lamb" ? 32 : 28;
  if (precision != "fp32" && precision != "tf32") bytes += 10;
  return bytes;
}

std::string basis_of(const figure* f) {
  return f ? std::string(to_string(f->from)) : "unknown";
}

// Log-linear interpolation of (x, y) points sorted by x, clamped at the ends.
double interpolate_log(const std::vector<std::pair<double, double>>& points, double x) {
  if (points.size() == 1 || x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (x <= points[i].first) {
      const auto& [x0, y0] = points[i - 1];
      const auto& [x1, y1] = points[i];
      const double t = std::log(x / x0) / std::log(x1 / x0);
      return y0 + t * (y1 - y0);
    }
  }
  return points.back().second;
}

double hbm_GBps(const hardware_profile& hw, std::string* basis_out) {
  if (const figure* f = hw.find("gpu.hbm_GBps")) {
    if (basis_out) *basis_out = to_string(f->from);
    return f->value;
  }
  const auto peak = hw.value("gpu.hbm_peak_GBps");
  if (!peak)
    throw input_error(hw.origin + ": the profile has no GPU memory bandwidth (gpu.hbm_GBps)");
  if (basis_out) *basis_out = "catalog";
  return *peak * hw.value("gpu.hbm_efficiency").value_or(0.8);
}

struct allreduce_model {
  double busbw_GBps = 0;
  std::string basis;
  std::string detail;
  std::vector<std::pair<double, double>> measured;  // bytes -> busbw, when measured at this size
};

allreduce_model allreduce_for(const hardware_profile& hw, const constants& c, int gpus_per_node,
                              int nodes, std::vector<std::string>& assumed) {
  allreduce_model model;
  const int ranks = gpus_per_node * nodes;
  if (!hw.allreduce.empty() && hw.allreduce_ranks == ranks) {
    for (const auto& p : hw.allreduce) model.measured.emplace_back(p.bytes, p.GBps);
    std::sort(model.measured.begin(), model.measured.end());
    model.busbw_GBps = model.measured.back().second;
    model.basis = "measured";
    model.detail = "nccl.all_reduce busbw by message size, " + std::to_string(ranks) + " GPUs";
    return model;
  }
  if (gpus_per_node > 1) {
    if (const figure* f = hw.find("interconnect.busbw_GBps")) {
      model.busbw_GBps = f->value;
      model.basis = to_string(f->from);
      model.detail = "interconnect.busbw_GBps";
    } else if (const auto nvlink = hw.value("nvlink.bidir_GBps")) {
      model.busbw_GBps = *nvlink / 2 * c.nvlink_busbw_fraction;
      model.basis = "catalog";
      model.detail =
          "NVLink " + fmt(*nvlink) + " GB/s bidirectional x 1/2 x " + fmt(c.nvlink_busbw_fraction);
      assumed.push_back("interconnect.busbw_GBps (from NVLink)");
    } else {
      const double h2d = hw.value("pcie.h2d_GBps").value_or(12.5);
      model.busbw_GBps = h2d * c.pcie_busbw_fraction;
      model.basis = "catalog";
      model.detail = "GPUs share PCIe only: " + fmt(h2d) + " GB/s x " + fmt(c.pcie_busbw_fraction);
      assumed.push_back("interconnect.busbw_GBps (over PCIe)");
    }
  } else {
    model.busbw_GBps = std::numeric_limits<double>::infinity();
  }
  if (nodes > 1) {
    double gbps = c.default_network_gbps;
    std::string net_basis = "default";
    if (const figure* f = hw.find("network.gbps")) {
      gbps = f->value;
      net_basis = std::string(to_string(f->from));
    } else {
      assumed.push_back("network.gbps (default " + fmt(c.default_network_gbps) + ")");
    }
    const double network_busbw = gbps / 8 * c.network_efficiency;
    if (network_busbw < model.busbw_GBps) {
      model.busbw_GBps = network_busbw;
      model.basis = net_basis;
      model.detail = "inter-node: " + fmt(gbps) + " Gb/s per node x " + fmt(c.network_efficiency);
    }
  }
  return model;
}

// Seconds to allreduce `bytes` across `ranks` GPUs.
double allreduce_seconds(const allreduce_model& m, const constants& c, double bytes, int ranks) {
  if (ranks <= 1 || bytes <= 0) return 0;
  double busbw = m.busbw_GBps;
  if (!m.measured.empty()) busbw = std::min(busbw, interpolate_log(m.measured, bytes));
  const double factor = 2.0 * (ranks - 1) / ranks;  // ring allreduce: nccl-tests' bus factor
  return c.allreduce_latency_us * 1e-6 + bytes * factor / (busbw * giga);
}

component make_component(std::string name, std::optional<double> ceiling, std::string basis,
                         std::string detail) {
  component comp;
  comp.name = std::move(name);
  comp.samples_per_s = ceiling;
  comp.basis = std::move(basis);
  comp.detail = std::move(detail);
  return comp;
}

struct gpu_times {
  step_breakdown step;
  double params = 0;
  double kernels = 0;
  double tokens_per_sample = 1;
  std::string compute_basis;
  std::string memory_basis;
  double work() const { return step.compute_s + step.memory_s + step.optimizer_s + step.launch_s; }
  // The framework issues kernels asynchronously: the GPU waits for the host only when issuing
  // the step takes longer than running it.
  double busy() const { return std::max(work(), step.host_s); }
};

// One micro-batch on one GPU; the optimizer runs once per w.gradient_accumulation of them.
gpu_times gpu_step(const hardware_profile& hw, const workload& w, const constants& c,
                   const std::string& precision, int batch, int ranks,
                   std::vector<std::string>& assumed) {
  gpu_times out;
  workload at = w;
  at.precision = precision;
  const step_ops ops = expand(at, batch);
  out.params = ops.params;
  out.kernels = ops.kernels;
  out.tokens_per_sample = ops.tokens_per_sample;
  const std::string dtype = gemm_dtype(precision);
  const double act = activation_bytes(precision);
  std::string hbm_basis;
  const double hbm = hbm_GBps(hw, &hbm_basis) * giga;
  out.memory_basis = hbm_basis;
  bool any_measured = false;
  bool any_catalog = false;
  for (const op& o : ops.ops) {
    if (o.kind == op_kind::memory) {
      out.step.memory_s += o.bytes * o.count / (hbm * c.memory_efficiency);
      out.step.bytes += o.bytes * o.count;
      continue;
    }
    bool measured = false;
    const double tflops = gemm_tflops(hw, dtype, o.m, o.n, o.k, o.batched, &measured);
    (measured ? any_measured : any_catalog) = true;
    const double flops =
        2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
    const double efficiency = o.kind == op_kind::conv ? c.conv_efficiency : c.matmul_efficiency;
    const double t_flop = flops / (tflops * tera * efficiency);
    const double elements = static_cast<double>(o.m * o.k + o.k * o.n) +
                            (o.fused_output ? 0.0 : static_cast<double>(o.m * o.n));
    const double t_mem = elements * act / (hbm * c.memory_efficiency);
    out.step.flops += flops * o.count;
    out.step.bytes += elements * act * o.count;
    if (t_flop >= t_mem) {
      out.step.compute_s += t_flop * o.count;
    } else {
      out.step.memory_s += t_mem * o.count;
    }
  }
  const double sharding = w.strategy == "fsdp" ? ranks : 1;  // FSDP shards optimizer state
  const double optimizer_bytes = ops.params * optimizer_bytes_per_param(w.optimizer, precision) /
                                 sharding / w.gradient_accumulation;
  out.step.optimizer_s = optimizer_bytes / (hbm * c.memory_efficiency);
  out.step.bytes += optimizer_bytes;
  const double launch_latency =
      hw.value("gpu.launch_latency_us").value_or(c.default_launch_latency_us);
  out.step.launch_s = ops.kernels * launch_latency * 1e-6;
  out.step.host_s = ops.kernels * c.kernel_overhead_us * 1e-6;
  out.compute_basis = any_measured && !any_catalog ? "measured"
                      : any_measured               ? "measured+catalog"
                                                   : "catalog";
  if (any_catalog && !hw.gemm.empty()) {
    assumed.push_back("gemm " + dtype + " rate (not measured at this dtype)");
  }
  return out;
}

void check_runs(const hardware_profile& hw, const std::string& precision) {
  const std::string dtype = gemm_dtype(precision);
  const bool measured = std::any_of(hw.gemm.begin(), hw.gemm.end(),
                                    [&](const gemm_point& p) { return p.dtype == dtype; });
  if (!measured && !hw.value("gpu.peak_tflops." + dtype)) {
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

}  // namespace

const std::vector<std::string>& constants::fitted_names() {
  static const std::vector<std::string> names{"matmul_efficiency", "conv_efficiency",
                                              "memory_efficiency", "comm_overlap"};
  return names;
}

double& constants::at(const std::string& name) {
  for (const auto& field : constant_fields) {
    if (name == field.name) return this->*field.member;
  }
  throw input_error("unknown model constant '" + name + "'");
}

double constants::at(const std::string& name) const {
  return const_cast<constants*>(this)->at(name);
}

constants parse_constants(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "fitted_on", "constants"});
  if (root.get_string("schema") != "gpubench.model-constants/1") {
    root.fail("schema", "\"gpubench.model-constants/1\"");
  }
  constants c;
  const json_reader table = root.member("constants");
  for (const auto& field : constant_fields) {
    const json_reader entry = table.member(field.name);
    entry.expect_object({"value", "fitted", "source"});
    c.*field.member = entry.get_number("value", 0, 1e12);
    c.sources[field.name] = entry.find_string("source").value_or("");
  }
  for (const auto& item : table.node().items()) {
    const std::string& key = item.key();
    if (std::none_of(std::begin(constant_fields), std::end(constant_fields),
                     [&key](const constant_field& f) { return key == f.name; })) {
      table.fail(key, "a known model constant");
    }
  }
  return c;
}

constants load_constants() {
  const auto path = config_dir() / "model" / "constants.json";
  return parse_constants(read_json_file(path), path.string());
}

json to_json(const constants& c) {
  json out = json::object();
  for (const auto& field : constant_fields) out[field.name] = c.*field.member;
  return out;
}

double gemm_tflops(const hardware_profile& hw, const std::string& dtype, std::int64_t m,
                   std::int64_t n, std::int64_t k, std::int64_t batched, bool* measured) {
  std::vector<std::pair<double, double>> curve;  // equivalent cube side -> TFLOP/s
  for (const gemm_point& p : hw.gemm) {
    if (p.dtype != dtype) continue;
    if (p.m == m && p.n == n && p.k == k) {
      if (measured) *measured = true;
      return p.tflops;
    }
    curve.emplace_back(
        std::cbrt(static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k)),
        p.tflops);
  }
  const double cube = std::cbrt(static_cast<double>(m) * static_cast<double>(n) *
                                static_cast<double>(k) * static_cast<double>(batched));
  if (!curve.empty()) {
    std::sort(curve.begin(), curve.end());
    if (measured) *measured = true;
    return interpolate_log(curve, cube);
  }
  if (measured) *measured = false;
  const auto peak = hw.value("gpu.peak_tflops." + dtype);
  if (!peak) throw input_error(hw.origin + ": no " + dtype + " GEMM rate in the profile");
  const double efficiency = hw.value("gpu.gemm_efficiency." + dtype).value_or(0.8);
  // Wave quantisation: a launch with fewer output tiles than SMs leaves SMs idle, unless the
  // library splits K (cuBLAS/cuDNN do for deep, narrow products such as weight gradients); a
  // split keeps at least gemm_min_split_k of K.
  const double sms = hw.value("gpu.sm_count").value_or(100);
  const auto tiles_along = [](std::int64_t size) { return (size + gemm_tile - 1) / gemm_tile; };
  const double output_tiles = static_cast<double>(tiles_along(m) * tiles_along(n) * batched);
  const double max_splits = std::max(1.0, std::floor(static_cast<double>(k) / gemm_min_split_k));
  const double splits = std::clamp(std::ceil(sms / output_tiles), 1.0, max_splits);
  const double tiles = output_tiles * splits;
  const double waves = std::ceil(tiles / sms);
  const double wave_efficiency = tiles / (waves * sms);
  return *peak * efficiency * wave_efficiency;
}

std::string batch_text(const sizing& s) {
  std::string text = "batch " + std::to_string(s.batch_per_gpu);
  if (s.gradient_accumulation > 1) {
    text += " x " + std::to_string(s.gradient_accumulation) + " accumulated";
  }
  return text;
}

sizing predict(const hardware_profile& hw, const workload& w, const constants& c,
               const run_options& options) {
  sizing s;
  s.workload = w.name;
  s.hardware = hw.origin;
  s.sample_unit = w.sample_unit;
  s.precision = options.precision.value_or(w.precision);
  if (std::find(precision_names().begin(), precision_names().end(), s.precision) ==
      precision_names().end()) {
    throw input_error("--precision: expected one of " + join(precision_names()) + ", got '" +
                      s.precision + "'");
  }
  check_runs(hw, s.precision);
  s.batch_per_gpu = options.batch.value_or(w.batch_per_gpu);
  s.gradient_accumulation = w.gradient_accumulation;
  // GPUs per node: the command line, else the workload (for a bare GPU entry), else the machine.
  if (options.gpus) {
    if (!hw.scalable && *options.gpus > hw.gpus_per_node) {
      throw input_error("--gpus " + std::to_string(*options.gpus) + ": " + hw.origin + " has " +
                        std::to_string(hw.gpus_per_node) +
                        " GPU(s) per node; use --nodes for more");
    }
    s.gpus_per_node = *options.gpus;
  } else if (hw.scalable && w.gpus) {
    s.gpus_per_node = *w.gpus;
  } else {
    s.gpus_per_node = hw.gpus_per_node;
  }
  s.nodes = options.nodes.value_or(w.nodes);
  const int ranks = s.gpus_per_node * s.nodes;
  const double samples_per_step = static_cast<double>(ranks) * s.batch_per_gpu;

  for (const auto& [key, fig] : hw.figures) {
    if (fig.from == basis::catalog && hw.kind == "measured") s.assumed.push_back(key);
  }
  s.notes = hw.notes;

  // --- GPU step ---------------------------------------------------------------------------
  gpu_times gpu = gpu_step(hw, w, c, s.precision, s.batch_per_gpu, ranks, s.assumed);
  step_breakdown& step = gpu.step;
  s.tokens_per_sample = gpu.tokens_per_sample;

  // --- Communication ----------------------------------------------------------------------
  const allreduce_model ar = allreduce_for(hw, c, s.gpus_per_node, s.nodes, s.assumed);
  const double backward_s = (step.compute_s + step.memory_s) * 2.0 / 3.0;
  double exchange_s = 0;  // one whole gradient exchange (per micro-batch, or per accumulation)
  if (ranks > 1) {
    if (w.strategy == "fsdp") {
      // All-gather the parameters for forward and backward, reduce-scatter the gradients: three
      // passes of the parameters, each moving (n-1)/n of them through every GPU's links. All
      // three run for every micro-batch: FSDP reduce-scatters each micro-batch's gradients
      // unless no_sync() keeps unsharded gradients, which full sharding exists to avoid.
      const double param_bytes = activation_bytes(s.precision);
      const double volume = 3.0 * gpu.params * param_bytes * (ranks - 1) / ranks;
      double busbw = ar.busbw_GBps;
      if (!ar.measured.empty()) busbw = std::min(busbw, interpolate_log(ar.measured, 64e6));
      exchange_s = step.communication_s = volume / (busbw * giga);
      step.communication_exposed_s =
          std::max(step.communication_s - c.comm_overlap * gpu.busy(), 0.05 * step.communication_s);
    } else {
      const double grad_bytes =
          gpu.params * 4.0;  // fp32 gradients (DDP with AMP keeps fp32 params)
      const double bucket = std::min(c.ddp_bucket_bytes, grad_bytes);
      const double buckets = std::ceil(grad_bytes / bucket);
      const double last = grad_bytes - (buckets - 1) * bucket;
      exchange_s = (buckets - 1) * allreduce_seconds(ar, c, bucket, ranks) +
                   allreduce_seconds(ar, c, last, ranks);
      // The last bucket is reduced after the backward pass ends: it can never be hidden. With
      // accumulation the gradients are exchanged after the last micro-batch only (DDP's
      // no_sync()): one exchange per `gradient_accumulation` micro-batches.
      step.communication_s = exchange_s / w.gradient_accumulation;
      step.communication_exposed_s = std::max(exchange_s - c.comm_overlap * backward_s,
                                              allreduce_seconds(ar, c, last, ranks)) /
                                     w.gradient_accumulation;
    }
  }

  // --- Anchoring to a measured reference point --------------------------------------------
  if (w.reference) {
    const reference_point& ref = *w.reference;
    const hardware_profile ref_hw = load_hardware(ref.hardware);
    const std::string ref_precision = ref.precision.value_or(s.precision);
    check_runs(ref_hw, ref_precision);
    const int ref_per_node = std::min(ref.gpus, ref_hw.scalable ? ref.gpus : ref_hw.gpus_per_node);
    const int ref_nodes = (ref.gpus + ref_per_node - 1) / ref_per_node;
    std::vector<std::string> ignored;
    workload ref_w = w;
    ref_w.reference.reset();
    ref_w.gradient_accumulation = ref.gradient_accumulation.value_or(w.gradient_accumulation);
    const gpu_times ref_gpu =
        gpu_step(ref_hw, ref_w, c, ref_precision, ref.batch_per_gpu, ref.gpus, ignored);
    run_options ref_options;
    ref_options.gpus = ref_per_node;
    ref_options.nodes = ref_nodes;
    ref_options.batch = ref.batch_per_gpu;
    ref_options.precision = ref_precision;
    workload ref_synthetic = ref_w;
    ref_synthetic.data.source = "synthetic";
    hardware_profile scaled_ref = ref_hw;
    scaled_ref.scalable = true;
    const sizing ref_model = predict(scaled_ref, ref_synthetic, c, ref_options);
    const double actual_step = ref.batch_per_gpu / (ref.samples_per_s / ref.gpus);
    // The modelled step of the reference (all but the exposed communication) against what it
    // measured: every part of this machine's modelled step is scaled by that ratio.
    const double ref_work = ref_gpu.busy();
    const double actual_work = actual_step - ref_model.step.communication_exposed_s;
    if (actual_work > 0 && ref_work > 0) {
      step.anchor_factor = actual_work / ref_work;
      for (double* part :
           {&step.compute_s, &step.memory_s, &step.optimizer_s, &step.launch_s, &step.host_s}) {
        *part *= step.anchor_factor;
      }
      s.anchored = true;
      s.notes.push_back("anchored on " + fmt(ref.samples_per_s) + " samples/s measured on " +
                        ref.hardware + " (" + std::to_string(ref.gpus) + " GPUs, batch " +
                        std::to_string(ref.batch_per_gpu) + "): GPU work scaled by " +
                        fmt(step.anchor_factor));
    } else {
      s.notes.push_back(
          "reference point ignored: its step time is below the modelled "
          "communication time");
    }
  }
  step.gpu_step_s = gpu.busy() + step.communication_exposed_s;
  const double gpu_ceiling = samples_per_step / step.gpu_step_s;

  // --- Input pipeline (per node; runs beside the GPUs) --------------------------------------
  std::optional<double> cpu_ceiling;
  std::optional<double> storage_ceiling;
  std::optional<double> pcie_ceiling;
  component cpu = make_component("cpu", std::nullopt, "not_applicable", "");
  component storage = make_component("storage", std::nullopt, "not_applicable", "");
  component pcie = make_component("pcie", std::nullopt, "not_applicable", "");
  const data_spec& data = w.data;
  double loader_cores = 0;
  double per_core = 0;
  if (data.source == "synthetic") {
    cpu.detail = storage.detail = pcie.detail = "synthetic data: no input pipeline";
  } else {
    if (data.pipeline == "jpeg_rrc_flip_normalize") {
      const figure* rate = hw.find("cpu.augment_per_core");
      per_core = rate ? rate->value : c.default_augment_per_core;
      if (!rate) s.assumed.push_back("cpu.augment_per_core (default " + fmt(per_core) + "/s)");
      // Decoding dominates and scales with the source pixels: rescale from the measured size.
      const double measured_pixels = hw.value("cpu.augment_image_pixels").value_or(500.0 * 375.0);
      per_core *= measured_pixels / (static_cast<double>(data.image_width) * data.image_height);
      if (data.loader == "python") per_core *= c.loader_efficiency;
      if (const figure* cores = hw.find("cpu.cores")) {
        loader_cores =
            std::max(1.0, cores->value - c.loader_cores_reserved_per_gpu * s.gpus_per_node);
        if (data.loader_workers_per_gpu) {
          loader_cores = std::min(
              loader_cores, static_cast<double>(*data.loader_workers_per_gpu) * s.gpus_per_node);
        }
        cpu_ceiling = per_core * loader_cores * s.nodes;
        cpu = make_component("cpu", cpu_ceiling, rate ? basis_of(rate) : "default",
                             fmt(loader_cores) + " loader cores x " + fmt(per_core) +
                                 " samples/s per core (" + data.loader + " loader, " +
                                 std::to_string(data.image_width) + "x" +
                                 std::to_string(data.image_height) + " JPEG)");
        if (cores->from == basis::user) cpu.basis = "set";
      } else {
        cpu = make_component("cpu", std::nullopt, "unknown",
                             "CPU core count unknown for this profile");
      }
    } else {
      cpu.detail = "token pipeline: no per-sample CPU decode";
    }
    const double memory_bytes = hw.value("memory.GB").value_or(0) * giga;
    const bool fits_in_cache = data.dataset_bytes > 0 && memory_bytes > 0 &&
                               data.dataset_bytes <= c.page_cache_fraction * memory_bytes;
    if (fits_in_cache) {
      storage = make_component("storage", std::nullopt, basis_of(hw.find("memory.GB")),
                               "dataset (" + fmt(data.dataset_bytes / giga) +
                                   " GB) fits in the page cache after the first epoch");
    } else if (const figure* read = hw.find("storage.read_GBps")) {
      storage_ceiling = read->value * giga / data.bytes_per_sample_stored * s.nodes;
      storage = make_component("storage", storage_ceiling, basis_of(read),
                               fmt(read->value) + " GB/s random reads / " +
                                   fmt(data.bytes_per_sample_stored / 1e3) + " kB per sample");
    } else {
      storage = make_component("storage", std::nullopt, "unknown",
                               "storage read rate unknown for this profile");
    }
    const figure* all = hw.find("pcie.h2d_all_GBps");
    const figure* one = hw.find("pcie.h2d_GBps");
    if (data.bytes_per_sample_h2d > 0 && (all || one)) {
      const double per_node = all ? all->value : one->value * s.gpus_per_node;
      if (!all) s.assumed.push_back("pcie.h2d_all_GBps (per-GPU rate x GPUs)");
      pcie_ceiling = per_node * giga / data.bytes_per_sample_h2d * s.nodes;
      pcie = make_component("pcie", pcie_ceiling, basis_of(all ? all : one),
                            fmt(per_node) + " GB/s host-to-GPU per node / " +
                                fmt(data.bytes_per_sample_h2d / 1e3) + " kB per sample");
    }
  }

  // --- Prediction and the limit -------------------------------------------------------------
  double predicted = gpu_ceiling;
  std::string limit;
  for (const auto& [name, ceiling] :
       {std::pair{"cpu", cpu_ceiling}, std::pair{"storage", storage_ceiling},
        std::pair{"pcie", pcie_ceiling}}) {
    if (ceiling && *ceiling < predicted) {
      predicted = *ceiling;
      limit = name;
    }
  }
  // A step bound by issuing kernels counts as compute: the GPU idles between small kernels.
  const double compute_part =
      std::max(step.compute_s + step.launch_s, step.host_s - step.memory_s - step.optimizer_s);
  const double memory_part = step.memory_s + step.optimizer_s;
  if (limit.empty()) {
    limit = compute_part >= memory_part ? "gpu_compute" : "gpu_memory";
    if (step.communication_exposed_s > std::max(compute_part, memory_part)) limit = "communication";
  }
  s.predicted_samples_per_s = predicted;
  s.per_gpu_samples_per_s = predicted / ranks;
  s.limiting_component = limit;
  s.step = step;

  const double gpu_busy_share = predicted / gpu_ceiling;  // < 1 when the input pipeline limits
  auto gpu_component = [&](const char* name, double seconds, std::string basis,
                           std::string detail) {
    component comp =
        make_component(name, seconds > 0 ? std::optional(samples_per_step / seconds) : std::nullopt,
                       std::move(basis), std::move(detail));
    comp.utilization = seconds / step.gpu_step_s * gpu_busy_share;
    return comp;
  };
  const std::string tag = s.anchored ? "anchored" : "";
  s.components.push_back(gpu_component(
      "gpu_compute", compute_part, tag.empty() ? gpu.compute_basis : tag,
      fmt(step.flops / 1e12) + " TFLOP per step at " + gemm_dtype(s.precision) + "; " +
          fmt(gpu.kernels) + " kernels, " + fmt(step.host_s * 1e3) + " ms to issue"));
  s.components.push_back(gpu_component("gpu_memory", memory_part,
                                       tag.empty() ? gpu.memory_basis : tag,
                                       "memory-bound kernels and the " + w.optimizer + " step"));
  if (ranks > 1) {
    component comm = gpu_component(
        "communication", step.communication_exposed_s, ar.basis,
        (w.strategy == "fsdp" ? "FSDP gather/scatter of " : "gradient allreduce of ") +
            fmt(gpu.params * (w.strategy == "fsdp" ? activation_bytes(s.precision) : 4.0) / 1e6) +
            " MB over " + std::to_string(ranks) + " GPUs at " + fmt(ar.busbw_GBps) +
            " GB/s busbw (" + ar.detail + "); " + fmt(step.communication_s * 1e3) + " ms, " +
            fmt(step.communication_exposed_s * 1e3) + " ms not hidden");
    s.components.push_back(comm);
  } else {
    s.components.push_back(make_component("communication", std::nullopt, "not_applicable",
                                          "one GPU: no gradient exchange"));
  }
  for (component* comp : {&pcie, &storage, &cpu}) {
    if (comp->samples_per_s) comp->utilization = predicted / *comp->samples_per_s;
    s.components.push_back(*comp);
  }

  // --- What would move the limit ------------------------------------------------------------
  auto& rec = s.recommendations;
  const double gpu_rate = gpu_ceiling;
  if (limit == "cpu") {
    const double cores_needed =
        gpu_rate / s.nodes / per_core + c.loader_cores_reserved_per_gpu * s.gpus_per_node;
    rec.push_back("CPU data preparation limits the job: needs " + fmt(std::ceil(cores_needed)) +
                  " cores per node (" +
                  fmt(std::ceil(cores_needed - loader_cores -
                                c.loader_cores_reserved_per_gpu * s.gpus_per_node)) +
                  " more) to keep " + std::to_string(s.gpus_per_node) + " GPUs fed at " +
                  fmt(gpu_rate) + " samples/s");
    if (data.loader == "python") {
      rec.push_back("a native loader (DALI CPU or a C++ pipeline) runs about " +
                    fmt(1 / c.loader_efficiency, 2) +
                    "x faster per core than torchvision/PIL "
                    "workers; GPU JPEG decoding (DALI mixed) removes most of the CPU work");
    }
  }
  if (limit == "storage") {
    const double needed = gpu_rate / s.nodes * data.bytes_per_sample_stored / giga;
    rec.push_back("storage limits the job: needs " + fmt(needed) +
                  " GB/s of random reads per node to keep the GPUs busy");
    const double memory_bytes = hw.value("memory.GB").value_or(0) * giga;
    if (data.dataset_bytes > 0) {
      rec.push_back("the dataset (" + fmt(data.dataset_bytes / giga) + " GB) does not fit in " +
                    fmt(c.page_cache_fraction * 100, 2) + "% of RAM (" + fmt(memory_bytes / giga) +
                    " GB): " + fmt(std::ceil(data.dataset_bytes / c.page_cache_fraction / giga)) +
                    " GB of RAM would serve epochs after the first from the page cache");
    }
  }
  if (limit == "pcie") {
    const double needed = gpu_rate / s.nodes * data.bytes_per_sample_h2d / giga;
    rec.push_back(
        "host-to-GPU copies limit the job: needs " + fmt(needed) +
        " GB/s per node; send uint8 images and normalise on the GPU, or use GPU decoding");
  }
  if (limit == "communication") {
    const double hidden_budget = c.comm_overlap * backward_s;
    // Only the last micro-batch's backward pass can hide the exchange.
    const double factor = exchange_s / std::max(hidden_budget, 1e-12);
    rec.push_back("gradient exchange limits the job: " + fmt(step.communication_exposed_s * 1e3) +
                  " ms per step is not hidden; about " + fmt(factor, 2) + "x the bus bandwidth (" +
                  fmt(ar.busbw_GBps * factor) + " GB/s) would hide it under the backward pass");
    if (s.nodes > 1) {
      rec.push_back("across nodes that is about " +
                    fmt(ar.busbw_GBps * factor * 8 / c.network_efficiency) +
                    " Gb/s of network per node; larger batches or gradient accumulation also "
                    "amortise it");
    }
  }
  const bool issue_bound = step.host_s > gpu.work();
  if (limit == "gpu_compute" && issue_bound) {
    rec.push_back("issuing kernels limits the job: " + fmt(gpu.kernels) + " kernels take " +
                  fmt(step.host_s * 1e3) + " ms of CPU time per step against " +
                  fmt(gpu.work() * 1e3) +
                  " ms of GPU work; a larger batch per GPU, CUDA graphs or a compiled model "
                  "(torch.compile) move it");
  } else if (limit == "gpu_compute") {
    rec.push_back("GPU math limits the job (" + fmt(step.flops / step.gpu_step_s / 1e12 / 1, 3) +
                  " TFLOP/s per GPU achieved): a faster GPU, more GPUs or a lower precision "
                  "(bf16/fp8) moves it");
  }
  if (limit == "gpu_memory") {
    rec.push_back("GPU memory bandwidth limits the job: memory-bound kernels take " +
                  fmt(memory_part * 1e3) + " ms of a " + fmt(step.gpu_step_s * 1e3) +
                  " ms step; fused kernels (torch.compile), a larger batch or a GPU with faster "
                  "HBM move it");
  }
  // The next limit after this one.
  std::vector<std::pair<double, std::string>> ceilings;
  for (const component& comp : s.components) {
    if (comp.samples_per_s && comp.name != limit)
      ceilings.emplace_back(*comp.samples_per_s, comp.name);
  }
  std::sort(ceilings.begin(), ceilings.end());
  if (!ceilings.empty()) {
    rec.push_back("after " + limit + ", the next ceiling is " + ceilings.front().second + " at " +
                  fmt(ceilings.front().first) + " samples/s");
  }
  for (const component& comp : s.components) {
    if (comp.basis == "unknown") {
      rec.push_back(comp.name + " not modelled (" + comp.detail +
                    "): measure it with gpubench run "
                    "on the machine or state it with --set");
    }
  }
  return s;
}

json to_json(const sizing& s, const hardware_profile& hw, const workload& w, const constants& c) {
  json components = json::object();
  for (const component& comp : s.components) {
    components[comp.name] = {{"samples_per_s", comp.samples_per_s},
                             {"utilization", comp.utilization},
                             {"basis", comp.basis},
                             {"detail", comp.detail}};
  }
  json out = json::object();
  out["schema"] = sizing_schema;
  out["workload"] = s.workload;
  out["hardware"] = s.hardware;
  out["sample"] = s.sample_unit;
  out["predicted_samples_per_s"] = s.predicted_samples_per_s;
  out["per_gpu_samples_per_s"] = s.per_gpu_samples_per_s;
  if (s.sample_unit == "sequence") {
    out["predicted_tokens_per_s"] = s.predicted_samples_per_s * s.tokens_per_sample;
  }
  out["limiting_component"] = s.limiting_component;
  out["components"] = std::move(components);
  out["step"] = {{"gpu_step_s", s.step.gpu_step_s},
                 {"compute_s", s.step.compute_s},
                 {"memory_s", s.step.memory_s},
                 {"optimizer_s", s.step.optimizer_s},
                 {"launch_s", s.step.launch_s},
                 {"host_s", s.step.host_s},
                 {"bytes", s.step.bytes},
                 {"communication_s", s.step.communication_s},
                 {"communication_exposed_s", s.step.communication_exposed_s},
                 {"flops", s.step.flops},
                 {"anchor_factor", s.step.anchor_factor}};
  out["recommendations"] = s.recommendations;
  out["notes"] = s.notes;
  out["assumed"] = s.assumed;
  out["anchored"] = s.anchored;
  out["inputs"] = {
      {"gpus_per_node", s.gpus_per_node}, {"nodes", s.nodes},
      {"batch_per_gpu", s.batch_per_gpu}, {"gradient_accumulation", s.gradient_accumulation},
      {"precision", s.precision},         {"workload", to_json(w)},
      {"hardware", to_json(hw)},          {"constants", to_json(c)}};
  return out;
}

}  // namespace gpubench::model
