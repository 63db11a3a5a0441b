// The sizing model's driver (docs/model.md): the GPU step, the exchange its parallelism strategy
// needs, anchoring on a reference point, the input pipeline beside it; the prediction is the
// slowest of them, with every component's ceiling and what would move the limit.
#include "gpubench/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "components.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/query.hpp"

namespace gpubench::model {

namespace detail {

std::string fmt(double value, int digits) {
  return format_number(value, digits);
}

basis basis_of(const figure* f) {
  return f ? f->from : basis::unknown;
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

void cite_noise(std::vector<std::string>& noisy, const std::string& what, double cv) {
  if (cv > vocabulary::noisy_cv) noisy.push_back(what + " (cv " + fmt(cv * 100) + "%)");
}

// The key is spelt only for a noisy figure: every prediction (thousands in a fit or a layout
// search) asks for each figure its ceilings rest on.
void cite_noise(std::vector<std::string>& noisy, const hardware_profile& hw, const figure_def& f) {
  const figure* measured = hw.find(f);
  if (measured && measured->cv > vocabulary::noisy_cv) {
    cite_noise(noisy, vocabulary::key_of(f), measured->cv);
  }
}

component make_component(component_id name, std::optional<double> ceiling, basis from,
                         std::string detail) {
  component comp;
  comp.name = name;
  comp.samples_per_s = ceiling;
  comp.basis = from;
  comp.detail = std::move(detail);
  return comp;
}

}  // namespace detail

using detail::fmt;

std::string batch_text(const sizing& s) {
  std::string text = "batch " + std::to_string(s.batch_per_gpu);
  if (s.gradient_accumulation > 1) {
    text += " x " + std::to_string(s.gradient_accumulation) + " accumulated";
  }
  return text;
}

std::optional<std::string> unsupported_reason(const workload& w) {
  if (const auto flag = w.model.flags.find("relative_position");
      flag != w.model.flags.end() && flag->second) {
    // docs/model.md, "Transformer-XL": the published rates of one model on one GPU disagree by
    // more than the model's error, so no fit can vouch for it.
    return "unsupported: relative-position attention (Transformer-XL) is outside what the "
           "calibration confirms: published rates for the same model and GPU disagree by up to "
           "2.5x, so this prediction may be off by more than 2x (docs/model.md)";
  }
  if (expert_count(w.model) > 0) {
    // docs/model.md, "Mixture of experts": counted, not yet confirmed by the calibration rows.
    return "unsupported: mixture of experts is counted (routed FLOPs, every expert's weights, "
           "the all-to-all) but the calibration does not confirm it: held out, runs of many "
           "fine-grained experts (Qwen3, GPT-OSS) are missed most, and the range given is the "
           "one the published MoE runs showed (docs/model.md, 'Mixture of experts')";
  }
  return std::nullopt;
}

namespace {

sizing predict_with(const hardware_profile& hw, const workload& w, const constants& given,
                    const run_options& options, bool advise);

// What the phases of a prediction share: the job's data-parallel layout and the model of its step.
struct step_model {
  detail::data_parallel dp;
  double samples_per_step = 0;
  detail::gpu_times gpu;
  detail::allreduce_model ar;
  detail::exchange exchange;
  double backward_s = 0;
  double gpu_ceiling = 0;  // samples/s the GPU step alone allows
  detail::input_pipeline in;
};

// The sizing's frame: the job as given and the machine it runs on (precision, batch, GPUs per
// node, nodes), the figures assumed from the catalog and the notes.
sizing frame(const hardware_profile& hw, const workload& w, const run_options& options) {
  sizing s;
  s.workload = w.name;
  s.hardware = hw.origin;
  s.sample_unit = w.sample_unit;
  s.stack = w.stack;
  s.precision = options.precision.value_or(w.precision);
  if (std::find(precision_names().begin(), precision_names().end(), s.precision) ==
      precision_names().end()) {
    throw input_error("--precision: expected one of " + join(precision_names()) + ", got '" +
                      s.precision + "'" + did_you_mean(s.precision, precision_names()));
  }
  detail::check_runs(hw, s.precision);
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
  for (const auto& [key, fig] : hw.figures) {
    if (fig.from == basis::catalog && hw.kind == "measured") s.assumed.push_back(key);
  }
  s.notes = hw.notes;
  if (auto why = unsupported_reason(w)) {
    s.supported = false;
    s.notes.push_back(std::move(*why));
  }
  return s;
}

// The GPU step, then the exchange its strategy needs (both before anchoring: the reference is
// modelled the same way, and its exposed communication is taken off its measured step), the
// model-parallel groups' times, and the input pipeline beside the GPUs.
step_model model_step(const hardware_profile& hw, const workload& w, const constants& c,
                      sizing& s) {
  step_model m;
  // With a tensor x pipeline split, one data-parallel replica is T x P GPUs.
  m.dp = detail::data_parallel_group(w, s.gpus_per_node, s.nodes);
  // The data-parallel group counts each context-parallel group's GPUs, which share samples.
  m.samples_per_step = static_cast<double>(m.dp.ranks()) * s.batch_per_gpu / w.context;
  m.gpu = detail::gpu_step(hw, w, c, s.precision, s.batch_per_gpu, m.dp, s.assumed);
  step_breakdown& step = m.gpu.step;
  s.tokens_per_sample = m.gpu.tokens_per_sample;
  m.ar = detail::allreduce_for(hw, c, m.dp.per_node, m.dp.nodes, s.assumed);
  m.backward_s = detail::backward_seconds(step);
  if (m.dp.ranks() > 1) {
    m.exchange = detail::strategy_of(w.strategy).cost(m.gpu, m.ar, c, w, s.precision, m.dp.ranks());
    step.communication_s = m.exchange.per_step_s;
    step.communication_exposed_s = m.exchange.exposed_s;
  }
  detail::anchor(w, c, s.precision, step, s);
  detail::model_parallel_times(hw, c, w, m.gpu, s.gpus_per_node, step);
  step.gpu_step_s =
      m.gpu.busy() + step.communication_exposed_s + step.tensor_parallel_s + step.pipeline_bubble_s;
  m.gpu_ceiling = m.samples_per_step / step.gpu_step_s;
  m.in = detail::input_ceilings(hw, w, c, s.gpus_per_node, s.nodes, s.assumed);
  detail::add_activation_offload(hw, m.gpu.ops.offloaded_activation_bytes, m.samples_per_step, m.in,
                                 s.assumed);
  if (m.ar.network_assumed && m.ar.nodes > 1) {
    s.network_assumption =
        fmt(m.ar.network_gbps) + " Gb/s per node between nodes, assumed (" +
        m.ar.network_assumed_from.substr(0, m.ar.network_assumed_from.find(':')) +
        "): --set network.gbps=N";
  }
  return m;
}

// The rate and what limits it: the input pipeline only where it is slower than the GPU step, else
// the step's largest part; no rate where the job does not fit in GPU memory.
void choose_limit(const hardware_profile& hw, const workload& w, const constants& c,
                  const step_model& m, sizing& s) {
  const step_breakdown& step = m.gpu.step;
  double predicted = m.gpu_ceiling;
  std::optional<component_id> input_limit;
  for (const component* comp : {&m.in.cpu, &m.in.storage, &m.in.pcie}) {
    if (comp->samples_per_s && *comp->samples_per_s < predicted) {
      predicted = *comp->samples_per_s;
      input_limit = comp->name;
    }
  }
  const double compute_part = detail::compute_part(step);
  const double memory_part = detail::memory_part(step);
  component_id limit = input_limit.value_or(compute_part >= memory_part ? component_id::gpu_compute
                                                                        : component_id::gpu_memory);
  if (!input_limit &&
      step.communication_exposed_s + step.tensor_parallel_s > std::max(compute_part, memory_part)) {
    limit = component_id::communication;
  }
  // A job that does not fit in GPU memory runs at no rate: the rate it would reach is kept apart.
  s.memory = detail::memory_per_gpu(hw, w, c, s.precision, m.gpu.ops, s.batch_per_gpu, m.dp);
  s.samples_per_s_if_it_fit = predicted;
  if (!s.memory.fits) {
    limit = component_id::memory_capacity;
    predicted = 0;
  }
  s.predicted_samples_per_s = predicted;
  s.per_gpu_samples_per_s = predicted / (s.gpus_per_node * s.nodes);
  s.limiting_component = limit;
  s.step = step;
}

// Every component's own ceiling and how much of it the predicted rate uses.
void add_components(const workload& w, const step_model& m, sizing& s) {
  const step_breakdown& step = m.gpu.step;
  const double gpu_busy_share =
      s.predicted_samples_per_s / m.gpu_ceiling;  // < 1 when the input pipeline limits
  auto gpu_component = [&](component_id name, double seconds, basis from, std::string detail,
                           const std::vector<std::string>& noisy) {
    component comp = detail::make_component(
        name, seconds > 0 ? std::optional(m.samples_per_step / seconds) : std::nullopt, from,
        std::move(detail));
    comp.utilization = seconds / step.gpu_step_s * gpu_busy_share;
    comp.noisy = noisy;
    return comp;
  };
  s.components.push_back(gpu_component(
      component_id::gpu_compute, detail::compute_part(step),
      s.anchored ? basis::anchored : m.gpu.compute_basis,
      fmt(step.flops / 1e12) + " TFLOP per step at " + gemm_dtype(s.precision) + "; " +
          fmt(m.gpu.kernels) + " kernels, " + fmt(step.host_s * 1e3) + " ms to issue" +
          (step.pipeline_bubble_s > 0
               ? "; " + fmt(step.pipeline_bubble_s * 1e3) + " ms in the pipeline bubble"
               : std::string()),
      m.gpu.noisy_compute));
  s.components.push_back(gpu_component(component_id::gpu_memory, detail::memory_part(step),
                                       s.anchored ? basis::anchored : m.gpu.memory_basis,
                                       "memory-bound kernels and the " + w.optimizer + " step",
                                       m.gpu.noisy_memory));
  if (s.gpus_per_node * s.nodes > 1) {
    std::string detail;
    if (m.dp.ranks() > 1) {
      detail = m.exchange.what + fmt(m.exchange.bytes / 1e6) + " MB over " +
               std::to_string(m.dp.ranks()) + " GPUs at " + fmt(m.ar.busbw_GBps) + " GB/s busbw (" +
               m.ar.detail + "); " + fmt(step.communication_s * 1e3) + " ms, " +
               fmt(step.communication_exposed_s * 1e3) + " ms not hidden";
    }
    if (step.tensor_parallel_s > 0) {
      // The groups whose exchanges these are: the expert and context splits too, where used.
      std::string groups =
          "tensor " + std::to_string(w.tensor) + " x pipeline " + std::to_string(w.pipeline);
      if (w.expert > 1) {
        groups += ", expert " + std::to_string(w.expert) + " (" +
                  std::string(to_string(w.expert_dispatcher)) +
                  (detail::expert_overlapped(w) ? ", overlapped" : "") + ")";
      }
      if (w.expert_tensor > 1) groups += ", expert tensor " + std::to_string(w.expert_tensor);
      if (w.context > 1) groups += ", context " + std::to_string(w.context);
      detail += (detail.empty() ? "" : "; ") + groups + ": " + fmt(step.tensor_parallel_s * 1e3) +
                " ms of the groups' exchanges not hidden";
    }
    s.components.push_back(gpu_component(component_id::communication,
                                         step.communication_exposed_s + step.tensor_parallel_s,
                                         m.ar.basis, detail, m.ar.noisy));
  } else {
    s.components.push_back(detail::make_component(component_id::communication, std::nullopt,
                                                  basis::not_applicable,
                                                  "one GPU: no gradient exchange"));
  }
  for (component comp : {m.in.pcie, m.in.storage, m.in.cpu}) {
    if (comp.samples_per_s) comp.utilization = s.predicted_samples_per_s / *comp.samples_per_s;
    s.components.push_back(std::move(comp));
  }
}

// Extra nodes that barely add (or take away) throughput: against the fewest nodes that hold one
// model replica (one node unless tensor x pipeline spans more).
void advise_nodes(const hardware_profile& hw, const workload& w, const constants& given,
                  const run_options& options, const step_model& m, sizing& s) {
  // The smaller job must still split as this one does: whole tensor x pipeline replicas, the
  // context split over what is left, the expert split over a pipeline stage's GPUs.
  const auto splits_alike = [&](int nodes) {
    return s.nodes % nodes == 0 && detail::splits_whole(w, s.gpus_per_node, nodes);
  };
  int base_nodes = 1;
  while (base_nodes < s.nodes && !splits_alike(base_nodes)) ++base_nodes;
  if (base_nodes >= s.nodes) return;
  run_options fewer = options;
  fewer.nodes = base_nodes;
  const double predicted = s.predicted_samples_per_s;
  const double base_rate = predict_with(hw, w, given, fewer, false).predicted_samples_per_s;
  const double times = static_cast<double>(s.nodes) / base_nodes;
  const double scaling = predicted / (base_rate * times);
  if (scaling < 0.5) {
    const std::string base_name =
        base_nodes == 1 ? "one node's" : std::to_string(base_nodes) + " nodes'";
    s.recommendations.push_back(std::to_string(s.nodes) + " nodes predict " +
                                fmt(predicted / base_rate) + "x " + base_name + " " +
                                fmt(base_rate) + " samples/s (" + fmt(scaling * 100) +
                                "% scaling efficiency): the exchange between nodes (" +
                                m.ar.detail + ") takes the rest, so each added node buys little");
  }
}

// After the limit, the next ceiling; and every component nothing states a figure for.
void advise_ceilings(sizing& s) {
  std::vector<std::pair<double, std::string>> ceilings;
  for (const component& comp : s.components) {
    if (comp.samples_per_s && comp.name != s.limiting_component)
      ceilings.emplace_back(*comp.samples_per_s, to_string(comp.name));
  }
  std::sort(ceilings.begin(), ceilings.end());
  if (!ceilings.empty()) {
    s.recommendations.push_back("after " + std::string(to_string(s.limiting_component)) +
                                ", the next ceiling is " + ceilings.front().second + " at " +
                                fmt(ceilings.front().first) + " samples/s");
  }
  for (const component& comp : s.components) {
    if (comp.basis == basis::unknown) {
      s.recommendations.push_back(std::string(to_string(comp.name)) + " not modelled (" +
                                  comp.detail +
                                  "): measure it with gpubench run "
                                  "on the machine or state it with --set");
    }
  }
}

// The fastest tensor x pipeline x data layout of the same GPUs that holds within the headroom
// (size --search ranks them all), for a job that does not fit or fits above its headroom.
void advise_layout(const hardware_profile& hw, const workload& w, const constants& given,
                   const run_options& options, sizing& s) {
  if (w.family != "transformer" || w.model.preset.empty()) return;
  run_options plain = options;
  plain.advise = false;
  const std::vector<layout> found = search_layouts(hw, w, given, plain);
  const auto best =
      std::find_if(found.begin(), found.end(), [](const layout& l) { return l.within_headroom; });
  if (best == found.end()) {
    s.recommendations.push_back("no tensor x pipeline x data layout of these " +
                                std::to_string(s.gpus_per_node * s.nodes) +
                                " GPUs holds the job within the headroom (size --search)");
    return;
  }
  const double now = s.predicted_samples_per_s;
  std::string text =
      "the fastest layout of these GPUs within the headroom (size --search): tensor " +
      std::to_string(best->tensor) + " x pipeline " + std::to_string(best->pipeline) + " x data " +
      std::to_string(best->data) +
      (best->expert > 1 ? ", expert " + std::to_string(best->expert) : std::string()) +
      (best->expert_tensor > 1 ? ", expert tensor " + std::to_string(best->expert_tensor)
                               : std::string()) +
      (best->context > 1 ? ", context " + std::to_string(best->context) : std::string()) +
      ", micro-batch " + std::to_string(best->micro_batch) + " x " +
      std::to_string(best->accumulation) + " accumulated, " +
      (best->activation_checkpointing  ? "full checkpointing"
       : best->selective_checkpointing ? "selective checkpointing"
                                       : "no checkpointing") +
      ", " + std::string(to_string(best->strategy)) + ": " + detail::GiB_text(best->per_gpu_GiB) +
      " per GPU, " + fmt(best->predicted_samples_per_s) + " samples/s";
  if (now > 0) {
    text += " (now " + fmt(now) + "; " +
            (best->predicted_samples_per_s < now
                 ? fmt((1 - best->predicted_samples_per_s / now) * 100) +
                       "% slower: the price of the headroom)"
                 : "faster)");
  }
  s.recommendations.push_back(std::move(text));
}

// What would move the limit: each part's own advice, then the node count, the next ceiling and
// what is unknown (asking the model about other layouts of the same job, without advice).
void advise(const hardware_profile& hw, const workload& w, const constants& given,
            const constants& c, const run_options& options, const step_model& m, sizing& s) {
  auto& advice = s.recommendations;
  if (!s.memory.within_headroom) {
    const auto memory_with = [&](const workload& changed, int batch, int nodes) {
      return detail::memory_per_gpu(hw, changed, c, s.precision, batch, s.gpus_per_node, nodes);
    };
    const auto rate_with = [&](const workload& changed, int batch, int nodes) {
      run_options at = options;
      at.batch = batch;
      at.nodes = nodes;
      return predict_with(hw, changed, given, at, false).predicted_samples_per_s;
    };
    detail::advise_memory(s, w, memory_with, rate_with, advice);
    advise_layout(hw, w, given, options, s);
    if (!s.memory.fits) return;
  }
  const component_id limit = s.limiting_component;
  detail::advise_input(limit, m.in, hw, w, c, s.gpus_per_node, s.nodes, m.gpu_ceiling, advice);
  if (limit == component_id::communication) {
    const auto rate_with = [&](const workload& changed) {
      return predict_with(hw, changed, given, options, false).predicted_samples_per_s;
    };
    detail::advise_communication(m.exchange, m.ar, c, m.gpu.step, m.backward_s, w,
                                 s.predicted_samples_per_s, rate_with, advice);
  }
  detail::advise_gpu(limit, m.gpu, m.gpu.step, hw, s.precision, advice);
  detail::advise_unknown_network(m.ar, c, s.nodes, advice);
  advise_nodes(hw, w, given, options, m, s);
  advise_ceilings(s);
}

// Noisy measurements under the answer (issue 40): the limit's first, before the advice that rests
// on it, the other components' in the notes.
void say_noise(sizing& s, bool advising) {
  for (const component& comp : s.components) {
    if (comp.noisy.empty()) continue;
    const bool limit = comp.name == s.limiting_component;
    const std::string name(to_string(comp.name));
    std::string text = (limit ? "the limit (" + name + ")" : name + "'s ceiling") +
                       " rests on a noisy measurement: " + join(comp.noisy) +
                       ": its repetitions spread more than the " + fmt(vocabulary::noisy_cv * 100) +
                       "% a steady measurement stays under (a busy machine?); rerun it on an idle "
                       "machine before acting on " +
                       (limit ? "this limit and the advice below" : "this ceiling");
    if (limit && advising) {
      s.recommendations.insert(s.recommendations.begin(), std::move(text));
    } else {
      s.notes.push_back(std::move(text));
    }
  }
}

// The prediction; with `advise`, also what would move its limit.
sizing predict_with(const hardware_profile& hw, const workload& w, const constants& given,
                    const run_options& options, bool advise_too) {
  // The workload's software stack brings its own fitted efficiencies.
  const bool as_given = w.stack == given.stack;
  const constants for_stack = as_given ? constants{} : given.for_stack(w.stack);
  const constants& c = as_given ? given : for_stack;
  sizing s = frame(hw, w, options);
  // A bare GPU entry on several nodes: the network of the systems built on that GPU, assumed.
  std::optional<hardware_profile> networked;
  if (s.nodes > 1 && !hw.find(fig::network) && hw.typical_network_gbps_per_gpu) {
    networked = hw;
    networked->set(fig::network, *hw.typical_network_gbps_per_gpu * s.gpus_per_node,
                   basis::assumed_default, hw.typical_network_from);
  }
  const hardware_profile& on = networked ? *networked : hw;
  const step_model m = model_step(on, w, c, s);
  choose_limit(on, w, c, m, s);
  add_components(w, m, s);
  if (advise_too) advise(on, w, given, c, options, m, s);
  say_noise(s, advise_too);
  // The band belongs to the answer, not to the predictions calibration and the searches make.
  if (advise_too) s.interval = detail::interval_for(s, w, on, c);
  return s;
}

}  // namespace

sizing predict(const hardware_profile& hw, const workload& w, const constants& given,
               const run_options& options) {
  return predict_with(hw, w, given, options, options.advise);
}

json to_json(const sizing& s, const hardware_profile& hw, const workload& w, const constants& c) {
  json components = json::object();
  for (const component& comp : s.components) {
    components[std::string(to_string(comp.name))] = {{"samples_per_s", comp.samples_per_s},
                                                     {"utilization", comp.utilization},
                                                     {"basis", comp.basis},
                                                     {"detail", comp.detail},
                                                     {"noisy", comp.noisy}};
    if (comp.range) {
      components[std::string(to_string(comp.name))]["range"] = {{"low", comp.range->first},
                                                                {"high", comp.range->second}};
    }
  }
  json out = json::object();
  out["schema"] = sizing_schema;
  out["workload"] = s.workload;
  out["hardware"] = s.hardware;
  out["sample"] = s.sample_unit;
  // A job that does not fit has no rate: null, not a number that looks like one.
  const auto rate = [&](double value) { return s.memory.fits ? json(value) : json(nullptr); };
  out["predicted_samples_per_s"] = rate(s.predicted_samples_per_s);
  out["per_gpu_samples_per_s"] = rate(s.per_gpu_samples_per_s);
  if (s.sample_unit == "sequence") {
    out["predicted_tokens_per_s"] = rate(s.predicted_samples_per_s * s.tokens_per_sample);
  }
  json parts = json::object();
  for (const memory_part& part : s.memory.parts) {
    parts[part.name] = {{"GiB", part.GiB}, {"detail", part.detail}};
  }
  out["memory"] = {{"fits", s.memory.fits},
                   {"within_headroom", s.memory.within_headroom},
                   {"headroom", s.memory.headroom},
                   {"per_gpu_GiB", s.memory.per_gpu_GiB},
                   {"capacity_GiB", s.memory.capacity_GiB ? json(*s.memory.capacity_GiB) : json()},
                   {"capacity_basis", s.memory.capacity_basis},
                   {"parts", std::move(parts)},
                   {"unknown", s.memory.unknown}};
  out["limiting_component"] = s.limiting_component;
  out["stack"] = s.stack;
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
                 {"tensor_parallel_s", s.step.tensor_parallel_s},
                 {"pipeline_bubble_s", s.step.pipeline_bubble_s},
                 {"flops", s.step.flops},
                 {"anchor_factor", s.step.anchor_factor}};
  out["recommendations"] = s.recommendations;
  out["notes"] = s.notes;
  out["assumed"] = s.assumed;
  out["network_assumption"] = s.network_assumption.empty() ? json() : json(s.network_assumption);
  out["anchored"] = s.anchored;
  out["supported"] = s.supported;
  if (s.interval) {
    out["interval"] = {
        {"low", s.interval->low},           {"high", s.interval->high},
        {"coverage", s.interval->coverage}, {"held_out_coverage", s.interval->held_out_coverage},
        {"family", s.interval->family},     {"shared", s.interval->shared},
        {"method", s.interval->method},     {"rows", s.interval->rows},
        {"widened", s.interval->widened},   {"basis", s.interval->basis()}};
  } else {
    out["interval"] = nullptr;
  }
  out["inputs"] = {
      {"gpus_per_node", s.gpus_per_node}, {"nodes", s.nodes},
      {"batch_per_gpu", s.batch_per_gpu}, {"gradient_accumulation", s.gradient_accumulation},
      {"precision", s.precision},         {"workload", to_json(w)},
      {"hardware", to_json(hw)},          {"constants", to_json(c.for_stack(w.stack))}};
  return out;
}

}  // namespace gpubench::model
