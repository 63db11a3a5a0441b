#include "calibration_rows.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/parallel.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {
namespace {

using detail::prepared_row;

// A reference is the same training job on other hardware: the same model settings (an
// activation-checkpointed run is not a reference for one without); batch and accumulation may
// differ.
bool same_model(const workload& a, const workload& b) {
  return a.model.preset == b.model.preset && a.model.params == b.model.params &&
         a.model.flags == b.model.flags && a.strategy == b.strategy && a.optimizer == b.optimizer &&
         a.stack == b.stack;
}

double abs_error(double predicted, double published) {
  return std::abs(predicted / published - 1.0);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double predict_row(const prepared_row& p, const constants& c) {
  return predict(p.hw, p.w, c, p.options).samples_per_s_if_it_fit;
}

double peak_flops(const prepared_row& p) {
  return *p.hw.value_in(fig::peak_tflops, vocabulary::units::FLOPs, gemm_dtype(p.row.precision));
}

// The naive first-principles answer: every GPU runs at one fraction of its datasheet peak, the
// fraction that best fits the rows it is fitted on (the median of their published/peak ratios).
double naive_utilization(const std::vector<prepared_row>& rows, const std::string& left_out) {
  std::vector<double> log_ratios;
  for (const prepared_row& p : rows) {
    if (!p.row.usable || p.row.source_group == left_out) continue;
    const double at_peak = peak_flops(p) * p.row.gpus / p.row.flops_per_sample;
    log_ratios.push_back(std::log(p.row.published / at_peak));
  }
  return log_ratios.empty() ? 0 : std::exp(median(log_ratios));
}

// The first-principles error of a fit: the mean over (family, source group) cells of each cell's
// median absolute log error, so neither a family nor a source with many rows outvotes the others:
// one source's rows share its systematic errors (its loader, its padding), so they are one voice.
double fit_objective(const std::vector<const prepared_row*>& rows, const constants& c) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;
  for (const prepared_row* p : rows) {
    errors[{p->row.family, p->row.source_group}].push_back(
        std::abs(std::log(predict_row(*p, c) / p->row.published)));
  }
  double total = 0;
  for (const auto& [cell, e] : errors) total += median(e);
  return errors.empty() ? 0 : total / static_cast<double>(errors.size());
}

struct fit_range {
  const char* name;
  double lo;
  double hi;
};
constexpr fit_range fit_ranges[] = {
    {"matmul_efficiency", 0.2, 1.0},     {"conv_efficiency", 0.1, 1.0},
    {"memory_efficiency", 0.1, 1.0},     {"comm_overlap", 0.0, 1.0},
    {"memory_pass_fraction", 0.05, 1.0}, {"kernel_overhead_us", 0.0, 40.0}};

const fit_range& range_of(const std::string& name) {
  for (const fit_range& r : fit_ranges) {
    if (name == r.name) return r;
  }
  throw input_error("configs/model/constants.json: " + name + " cannot be fitted (fitted: " + [] {
    std::vector<std::string> names;
    for (const fit_range& r : fit_ranges) names.emplace_back(r.name);
    return join(names);
  }() + ")");
}

// The value a stack's fit moves: a base constant for the first stack, the stack's own otherwise.
double& fitted_value(constants& c, std::size_t stack, const std::string& name) {
  return stack == 0 ? c.at(name) : c.stacks[stack].values.at(name);
}

std::vector<std::string> fitted_names_of(const constants& c, std::size_t stack) {
  return stack == 0 ? constants::fitted_names() : c.stacks[stack].fitted;
}

// A constant's fit range; for a stack that improves on another, only the side of the other's
// value that makes no step slower (docs/model.md, "Software stacks").
std::pair<double, double> bounds_of(const constants& c, std::size_t stack,
                                    const std::string& name) {
  const fit_range& r = range_of(name);
  const constants::stack_entry& entry = c.stacks[stack];
  if (stack == 0 || entry.improves_on.empty() || entry.slower_because.contains(name)) {
    return {r.lo, r.hi};
  }
  const double was = c.for_stack(entry.improves_on).at(name);
  return constants::faster_way(name) == better::higher ? std::pair{std::max(r.lo, was), r.hi}
                                                       : std::pair{r.lo, std::min(r.hi, was)};
}

// Fits every stack in order (the others inherit the first stack's base values) on the usable
// rows outside `left_out`. A stack with no such rows keeps no values of its own: its rows are
// predicted with the base constants.
constants fit(const std::vector<prepared_row>& all, constants c, const std::string& left_out) {
  for (std::size_t stack = 0; stack < c.stacks.size(); ++stack) {
    std::vector<const prepared_row*> rows;
    for (const prepared_row& p : all) {
      // A row the model flags unsupported (Transformer-XL) is reported, never fitted: its errors
      // would move the constants every supported job is sized with.
      if (p.row.usable && p.row.supported && p.row.stack == c.stacks[stack].name &&
          p.row.source_group != left_out) {
        rows.push_back(&p);
      }
    }
    const std::vector<std::string> names = fitted_names_of(c, stack);
    if (rows.empty()) {
      for (const std::string& name : names) {
        if (stack > 0) c.stacks[stack].values.erase(name);
      }
      continue;
    }
    double best = fit_objective(rows, c);
    for (int round = 0; round < 3; ++round) {
      for (const std::string& name : names) {
        const auto [lo, hi] = bounds_of(c, stack, name);
        constexpr int steps = 40;
        for (int i = 0; i <= steps; ++i) {
          constants trial = c;
          fitted_value(trial, stack, name) = lo + (hi - lo) * i / steps;
          const double score = fit_objective(rows, trial);
          if (score < best - 1e-12) {
            best = score;
            c = std::move(trial);
          }
        }
      }
    }
  }
  return c;
}

// Anchored: the same source, model, framework, precision and GPU count on another GPU.
void anchor_row(prepared_row& p, const std::vector<prepared_row>& rows, const constants& c) {
  for (const prepared_row& q : rows) {
    if (!q.row.usable || q.row.gpu == p.row.gpu || q.row.source != p.row.source ||
        q.row.model != p.row.model || q.row.gpus != p.row.gpus ||
        q.row.framework != p.row.framework || q.row.precision != p.row.precision ||
        !same_model(q.w, p.w) || q.w.tensor != p.w.tensor || q.w.pipeline != p.w.pipeline ||
        q.w.expert != p.w.expert || q.w.expert_tensor != p.w.expert_tensor ||
        q.w.expert_dispatcher != p.w.expert_dispatcher ||
        q.w.expert_overlap != p.w.expert_overlap) {
      continue;
    }
    p.row.reference = q.row.id;
    workload anchored = p.w;
    anchored.reference = reference_point{
        "catalog:" + q.row.gpu,    q.row.gpus, q.row.batch, q.row.published, q.row.precision,
        q.w.gradient_accumulation, nullptr};
    resolve_reference(anchored);
    // The reference machine's network is the same cluster's.
    p.row.anchored = predict(p.hw, anchored, c, p.options).samples_per_s_if_it_fit;
    p.row.naive = q.row.published * peak_flops(p) / peak_flops(q);
    return;
  }
}

error_summary summarize(const std::vector<const calibration_row*>& rows, std::string family,
                        std::string generation) {
  error_summary s;
  s.family = std::move(family);
  s.generation = std::move(generation);
  std::vector<double> in_fit;
  std::vector<double> held_out;
  std::vector<double> naive;
  std::vector<double> anchored;
  std::vector<double> naive_anchored;
  for (const calibration_row* r : rows) {
    s.supported = s.supported && r->supported;
    in_fit.push_back(abs_error(*r->first_principles, r->published));
    held_out.push_back(abs_error(*r->held_out, r->published));
    naive.push_back(abs_error(*r->naive_first_principles, r->published));
    if (r->anchored) {
      anchored.push_back(abs_error(*r->anchored, r->published));
      naive_anchored.push_back(abs_error(*r->naive, r->published));
    }
  }
  s.rows = static_cast<int>(rows.size());
  s.in_fit_median = median(in_fit);
  s.held_out_median = median(held_out);
  s.held_out_worst = held_out.empty() ? 0 : *std::max_element(held_out.begin(), held_out.end());
  s.naive_median = median(naive);
  s.anchored_rows = static_cast<int>(anchored.size());
  s.anchored_median = median(anchored);
  s.anchored_worst = anchored.empty() ? 0 : *std::max_element(anchored.begin(), anchored.end());
  s.naive_anchored_median = median(naive_anchored);
  return s;
}

}  // namespace

namespace {

// Slices of the rows across families, each with its own held-out target (docs/model.md,
// "Calibration"): a new slice is one row here.
struct calibration_slice {
  std::string_view name;
  bool (*member)(const calibration_row&);
};
constexpr std::array<calibration_slice, 2> calibration_slices{{
    {"fp8",
     [](const calibration_row& r) { return precision_of(r.precision).casts_linear_layers(); }},
    {"blackwell", [](const calibration_row& r) { return r.generation == "blackwell"; }},
}};

}  // namespace

calibration_report calibrate(const std::vector<calibration_set>& sets, const constants& c,
                             const calibration_progress& progress) {
  std::vector<prepared_row> rows = detail::prepare(sets);
  for (prepared_row& p : rows) {
    if (!p.row.usable) continue;
    const sizing s = predict(p.hw, p.w, c, p.options);
    p.row.first_principles = s.samples_per_s_if_it_fit;
    p.row.memory_GiB = s.memory.per_gpu_GiB;
    p.row.capacity_GiB = s.memory.capacity_GiB;
    // The whole model's: a GPU of a tensor x pipeline split runs 1/(T x P) of a sample's FLOPs.
    p.row.flops_per_sample = s.step.flops / s.batch_per_gpu * p.w.tensor * p.w.pipeline;
    p.row.supported = s.supported;
  }
  // Held out: each source group predicted by constants fitted without it.
  std::vector<std::string> groups;
  for (const prepared_row& p : rows) {
    if (p.row.usable &&
        std::find(groups.begin(), groups.end(), p.row.source_group) == groups.end()) {
      groups.push_back(p.row.source_group);
    }
  }
  // Each group's refit reads every row but writes only its own rows' held-out fields, so the
  // groups are fitted on all cores at once; the rows' other fields are not written meanwhile.
  const auto hold_out = [&](const std::string& group) {
    const constants held = fit(rows, c, group);
    const double utilization = naive_utilization(rows, group);
    for (prepared_row& p : rows) {
      if (!p.row.usable || p.row.source_group != group) continue;
      p.row.held_out = predict_row(p, held);
      p.row.naive_first_principles =
          utilization * peak_flops(p) * p.row.gpus / p.row.flops_per_sample;
      anchor_row(p, rows, held);
    }
  };
  std::size_t done = 0;
  std::mutex done_lock;
  parallel_for(groups.size(), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      hold_out(groups[i]);
      const std::lock_guard<std::mutex> hold(done_lock);
      ++done;
      if (progress) progress(done, groups.size());
    }
  });
  calibration_report report;
  std::map<std::string, std::vector<const calibration_row*>> by_family;
  std::map<std::pair<std::string, std::string>, std::vector<const calibration_row*>> by_generation;
  std::vector<const calibration_row*> all;
  report.rows.reserve(rows.size());
  for (const prepared_row& p : rows) report.rows.push_back(p.row);
  for (const calibration_row& r : report.rows) {
    if (!r.usable) continue;
    by_family[r.family].push_back(&r);
    by_generation[{r.family, r.generation}].push_back(&r);
    all.push_back(&r);
  }
  for (const auto& [family, members] : by_family) {
    report.families.push_back(summarize(members, family, ""));
  }
  for (const auto& [key, members] : by_generation) {
    report.generations.push_back(summarize(members, key.first, key.second));
  }
  for (const calibration_slice& slice : calibration_slices) {
    std::vector<const calibration_row*> members;
    for (const calibration_row* r : all) {
      if (slice.member(*r)) members.push_back(r);
    }
    if (members.empty()) continue;
    report.slices.push_back(summarize(members, std::string(slice.name), ""));
  }
  report.all = summarize(all, "all", "");
  report.bands = error_bands(report.rows);
  report.shared_bands = shared_bands(report.rows);
  report.all.supported = true;  // "all" reports every row, flagged families too
  for (std::size_t i = 0; i < c.stacks.size(); ++i) {
    stack_fit f;
    f.stack = c.stacks[i].name;
    for (const calibration_row& r : report.rows) {
      if (!r.usable || r.stack != f.stack) continue;
      ++f.rows;
      if (std::find(f.sources.begin(), f.sources.end(), r.source_group) == f.sources.end()) {
        f.sources.push_back(r.source_group);
      }
    }
    // A stack with no rows in these sets was fitted no values of its own (fit): it runs with
    // what it inherits, which is what it reports.
    const constants runs_with = c.for_stack(f.stack);
    for (const std::string& name : fitted_names_of(c, i)) {
      f.constants.emplace_back(name, runs_with.at(name));
    }
    report.stacks.push_back(std::move(f));
  }
  return report;
}

constants fit_constants(const std::vector<calibration_set>& sets, constants start) {
  return fit(detail::prepare(sets), std::move(start), "");
}

}  // namespace gpubench::model
