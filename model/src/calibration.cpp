#include "gpubench/model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {
namespace {

struct model_rule {
  std::string match;
  std::string family;
  json workload;
};

struct gpu_rule {
  std::string match;
  std::string catalog;
  std::string generation;
};

struct precision_rule {
  std::string match;
  std::string precision;
  std::string otherwise;  // when the GPU has no rate at `precision` ("" for none)
};

struct mapping {
  std::vector<std::string> sets;  // file names in configs/calibration/
  std::vector<model_rule> models;
  std::vector<std::pair<std::string, std::string>> stacks;  // framework/precision text -> stack
  std::map<std::pair<std::string, std::size_t>, json> row_details;  // (set, row) -> merge patch
  std::vector<std::pair<std::string, std::string>> unusable;        // match -> why
  std::vector<gpu_rule> gpus;                                       // row gpu prefix -> catalog
  std::vector<precision_rule> precisions;                           // prefix -> precision
  std::vector<std::pair<std::string, double>> networks;             // system match -> Gb/s
};

std::filesystem::path mapping_path() {
  return config_dir() / "calibration" / "models.json";
}

std::string set_name(const std::string& file) {
  return std::filesystem::path(file).stem().string();
}

mapping load_mapping() {
  const auto path = mapping_path();
  const json doc = read_json_file(path);
  const json_reader root(doc, path.string());
  root.expect_object({"schema", "about", "sets", "models", "stacks", "row_details", "unusable",
                      "gpus", "precisions", "networks"});
  mapping m;
  for (const json_reader& e : root.elements("sets", 1)) {
    if (!e.node().is_string()) e.fail_here("a file name in configs/calibration/");
    m.sets.push_back(e.node().get<std::string>());
  }
  for (const json_reader& e : root.elements("models", 1)) {
    e.expect_object({"match", "family", "workload"});
    m.models.push_back({e.get_string("match"), e.get_string("family"), e.node().at("workload")});
  }
  for (const json_reader& e : root.elements("stacks")) {
    e.expect_object({"match", "stack"});
    m.stacks.emplace_back(e.get_string("match"), e.get_string("stack"));
  }
  for (const json_reader& e : root.elements("row_details")) {
    e.expect_object({"set", "rows", "workload", "why"});
    if (!e.node().at("workload").is_object()) e.member("workload").fail_here("an object");
    const std::string set = e.find_string("set").value_or("calibration");
    if (std::none_of(m.sets.begin(), m.sets.end(),
                     [&](const std::string& f) { return set_name(f) == set; })) {
      e.fail("set", "the name of a listed set without .json");
    }
    for (const json_reader& row : e.elements("rows", 1)) {
      if (!row.node().is_number_unsigned()) row.fail_here("a row index");
      m.row_details[{set, row.node().get<std::size_t>()}] = e.node().at("workload");
    }
  }
  for (const json_reader& e : root.elements("unusable")) {
    e.expect_object({"match", "why"});
    m.unusable.emplace_back(e.get_string("match"), e.get_string("why"));
  }
  for (const json_reader& e : root.elements("gpus", 1)) {
    e.expect_object({"match", "catalog", "generation"});
    m.gpus.push_back({e.get_string("match"), e.get_string("catalog"), e.get_string("generation")});
  }
  for (const json_reader& e : root.elements("precisions", 1)) {
    e.expect_object({"match", "precision", "otherwise"});
    m.precisions.push_back({e.get_string("match"), e.get_string("precision"),
                            e.find_string("otherwise").value_or("")});
  }
  for (const json_reader& e : root.elements("networks")) {
    e.expect_object({"match", "gbps"});
    m.networks.emplace_back(e.get_string("match"), e.get_number("gbps", 1, 1e7));
  }
  return m;
}

struct prepared_row {
  calibration_row row;
  workload w;
  hardware_profile hw;
  run_options options;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The unit a held-out fit leaves out: the repository and its top folder ("NVIDIA/
// DeepLearningExamples:PyTorch", "lambdal/deeplearning-benchmark:pytorch"), so one team's
// READMEs or one benchmark run's tables go out together.
std::string source_group(const std::string& source) {
  const std::size_t colon = source.find(':');
  if (colon == std::string::npos) return source.substr(0, source.find(' '));
  const std::size_t end = source.find_first_of("/ ", colon + 1);
  return source.substr(0, end);
}

bool has_rate(const hardware_profile& hw, const std::string& precision) {
  return hw.value(fig::peak_tflops, gemm_dtype(precision)).has_value();
}

std::vector<prepared_row> prepare(const std::vector<calibration_set>& sets) {
  const mapping map = load_mapping();
  std::vector<prepared_row> rows;
  std::map<std::string, hardware_profile> catalog;
  for (const calibration_set& set : sets) {
    const std::string set_id = set_name(set.file);
    const json_reader root(set.doc, set.file);
    root.expect_object({"about", "rows"});
    const auto entries = root.elements("rows", 1);
    for (const auto& [key, detail] : map.row_details) {
      if (key.first == set_id && key.second >= entries.size()) {
        throw input_error(mapping_path().string() + ": row_details names row " + set_id + "#" +
                          std::to_string(key.second) + ", but " + set.file + " has " +
                          std::to_string(entries.size()) + " rows");
      }
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const json_reader& e = entries[i];
      prepared_row p;
      calibration_row& r = p.row;
      r.id = set_id + "#" + std::to_string(i);
      r.source = e.get_string("source");
      r.source_group = source_group(r.source);
      r.model = e.get_string("model");
      r.framework = e.find_string("framework").value_or("");
      r.gpus = static_cast<int>(e.get_int("gpus", 1, 100000));
      r.batch = e.node().contains("batch_per_gpu") && e.node().at("batch_per_gpu").is_null()
                    ? 0
                    : static_cast<int>(e.find_int("batch_per_gpu", 1, 1 << 24).value_or(0));
      const double throughput = e.get_number("throughput", 0, 1e12);
      const std::string unit = e.get_string("unit");
      const std::string gpu = e.get_string("gpu");
      const std::string precision = e.get_string("precision");
      const std::string system = e.find_string("system").value_or("");
      const std::string data = e.find_string("data").value_or("");
      auto reject = [&](std::string why) {
        r.why_not = std::move(why);
        rows.push_back(p);
      };
      if (auto it = std::find_if(map.unusable.begin(), map.unusable.end(),
                                 [&](const auto& u) {
                                   return contains(r.model, u.first) ||
                                          contains(r.framework, u.first) || contains(data, u.first);
                                 });
          it != map.unusable.end()) {
        reject(it->second);
        continue;
      }
      const auto rule =
          std::find_if(map.models.begin(), map.models.end(),
                       [&](const model_rule& m) { return contains(r.model, m.match); });
      if (rule == map.models.end()) {
        reject("no workload mapping for this model");
        continue;
      }
      const auto gpu_map = std::find_if(map.gpus.begin(), map.gpus.end(), [&](const gpu_rule& g) {
        return gpu.starts_with(g.match);
      });
      if (gpu_map == map.gpus.end()) {
        reject("no catalog entry for GPU " + gpu);
        continue;
      }
      const auto prec =
          std::find_if(map.precisions.begin(), map.precisions.end(),
                       [&](const precision_rule& pr) { return precision.starts_with(pr.match); });
      if (prec == map.precisions.end()) {
        reject("precision '" + precision + "' not mapped");
        continue;
      }
      if (r.batch == 0) {
        reject("no batch size per GPU");
        continue;
      }
      r.family = rule->family;
      r.gpu = gpu_map->catalog;
      r.generation = gpu_map->generation;
      if (!catalog.contains(r.gpu)) catalog.emplace(r.gpu, load_catalog(r.gpu));
      p.hw = catalog.at(r.gpu);
      p.hw.scalable = true;
      r.precision = !has_rate(p.hw, prec->precision) && !prec->otherwise.empty() ? prec->otherwise
                                                                                 : prec->precision;
      const std::string stack_text = r.framework + " | " + precision;
      const auto stack = std::find_if(map.stacks.begin(), map.stacks.end(), [&](const auto& st) {
        return contains(stack_text, st.first);
      });
      json wdoc = rule->workload;
      wdoc["schema"] = workload_schema;
      wdoc["name"] = r.model;
      wdoc["precision"] = r.precision;
      wdoc["batch_per_gpu"] = r.batch;
      if (stack != map.stacks.end()) wdoc["stack"] = stack->second;
      if (const auto detail = map.row_details.find({set_id, i}); detail != map.row_details.end()) {
        wdoc.merge_patch(detail->second);
      }
      if (!wdoc.contains("data")) wdoc["data"] = json::object();
      wdoc["data"]["source"] = "synthetic";  // the rows are GPU-bound benchmark runs
      p.w = parse_workload(wdoc, set.file + " row " + std::to_string(i));
      r.stack = p.w.stack;
      const int per_node = std::min(r.gpus, 8);
      p.options.gpus = per_node;
      p.options.nodes = (r.gpus + per_node - 1) / per_node;
      p.options.precision = r.precision;
      for (const auto& [match, gbps] : map.networks) {
        if (contains(system, match)) {
          p.hw.set(fig::network, gbps, basis::catalog, "calibration mapping: " + match);
          break;
        }
      }
      if (!has_rate(p.hw, r.precision)) {
        reject(r.gpu + " has no " + gemm_dtype(r.precision) + " rate");
        continue;
      }
      // Throughput in samples/s over all GPUs.
      if (contains(unit, "TFLOP/s")) {
        reject("published as achieved TFLOP/s per GPU, not a throughput");
        continue;
      }
      double samples = throughput;
      if (contains(unit, "PER GPU") || contains(unit, "per GPU")) samples *= r.gpus;
      if (unit.starts_with("tokens/s")) samples /= expand(p.w, 1).tokens_per_sample;
      r.published = samples;
      r.usable = true;
      r.supported = !unsupported_reason(p.w);
      rows.push_back(std::move(p));
    }
  }
  return rows;
}

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
    {"memory_pass_fraction", 0.05, 1.0}, {"nchw_conv_passes", 0.0, 16.0},
    {"kernel_overhead_us", 0.0, 40.0}};

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
        const fit_range& r = range_of(name);
        constexpr int steps = 40;
        for (int i = 0; i <= steps; ++i) {
          constants trial = c;
          fitted_value(trial, stack, name) = r.lo + (r.hi - r.lo) * i / steps;
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
        !same_model(q.w, p.w)) {
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

std::vector<calibration_set> default_calibration_sets() {
  std::vector<calibration_set> sets;
  for (const std::string& name : load_mapping().sets) {
    const auto path = config_dir() / "calibration" / name;
    sets.push_back({read_json_file(path), path.string()});
  }
  return sets;
}

calibration_report calibrate(const std::vector<calibration_set>& sets, const constants& c) {
  std::vector<prepared_row> rows = prepare(sets);
  for (prepared_row& p : rows) {
    if (!p.row.usable) continue;
    const sizing s = predict(p.hw, p.w, c, p.options);
    p.row.first_principles = s.samples_per_s_if_it_fit;
    p.row.memory_GB = s.memory.per_gpu_GB;
    p.row.capacity_GB = s.memory.capacity_GB;
    p.row.flops_per_sample = s.step.flops / s.batch_per_gpu;
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
  for (const std::string& group : groups) {
    const constants held = fit(rows, c, group);
    const double utilization = naive_utilization(rows, group);
    for (prepared_row& p : rows) {
      if (!p.row.usable || p.row.source_group != group) continue;
      p.row.held_out = predict_row(p, held);
      p.row.naive_first_principles =
          utilization * peak_flops(p) * p.row.gpus / p.row.flops_per_sample;
      anchor_row(p, rows, held);
    }
  }
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
  report.all = summarize(all, "all", "");
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
    for (const std::string& name : fitted_names_of(c, i)) {
      f.constants.emplace_back(name, i == 0 ? c.at(name) : c.stacks[i].values.at(name));
    }
    report.stacks.push_back(std::move(f));
  }
  return report;
}

constants fit_constants(const std::vector<calibration_set>& sets, constants start) {
  return fit(prepare(sets), std::move(start), "");
}

namespace {

json summary_json(const error_summary& s) {
  json out = {{"family", s.family},
              {"rows", s.rows},
              {"first_principles_in_fit_median_abs_error", s.in_fit_median},
              {"first_principles_held_out_median_abs_error", s.held_out_median},
              {"first_principles_held_out_worst_abs_error", s.held_out_worst},
              {"naive_first_principles_held_out_median_abs_error", s.naive_median},
              {"anchored_rows", s.anchored_rows},
              {"anchored_held_out_median_abs_error", s.anchored_median},
              {"anchored_held_out_worst_abs_error", s.anchored_worst},
              {"naive_anchored_median_abs_error", s.naive_anchored_median}};
  if (!s.generation.empty()) out["generation"] = s.generation;
  out["supported"] = s.supported;
  return out;
}

}  // namespace

json to_json(const calibration_report& report) {
  json rows = json::array();
  for (const calibration_row& r : report.rows) {
    json row = {{"id", r.id},       {"model", r.model},   {"framework", r.framework},
                {"gpu", r.gpu},     {"gpus", r.gpus},     {"precision", r.precision},
                {"batch", r.batch}, {"usable", r.usable}, {"source_group", r.source_group}};
    if (!r.usable) {
      row["why_not"] = r.why_not;
    } else {
      row["family"] = r.family;
      row["stack"] = r.stack;
      row["generation"] = r.generation;
      row["published_samples_per_s"] = r.published;
      row["first_principles"] = *r.first_principles;
      row["first_principles_held_out"] = *r.held_out;
      row["naive_first_principles"] = r.naive_first_principles;
      row["flops_per_sample"] = r.flops_per_sample;
      row["anchored"] = r.anchored;
      row["naive"] = r.naive;
      row["reference_row"] = r.reference;
    }
    rows.push_back(std::move(row));
  }
  json families = json::array();
  for (const error_summary& f : report.families) families.push_back(summary_json(f));
  json generations = json::array();
  for (const error_summary& g : report.generations) generations.push_back(summary_json(g));
  json stacks = json::array();
  for (const stack_fit& s : report.stacks) {
    json fitted = json::object();
    for (const auto& [name, value] : s.constants) fitted[name] = value;
    stacks.push_back(
        {{"stack", s.stack}, {"rows", s.rows}, {"sources", s.sources}, {"fitted", fitted}});
  }
  return {{"schema", "gpubench.calibration/2"},
          {"all", summary_json(report.all)},
          {"stacks", stacks},
          {"families", families},
          {"generations", generations},
          {"rows", rows}};
}

std::string to_markdown(const calibration_report& report) {
  char line[512];
  std::string out;
  auto pct = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", v * 100);
    return std::string(b);
  };
  out +=
      "Software stacks: the constants fitted on each stack's rows (the others are the first "
      "stack's).\n\n"
      "| stack | rows | sources | fitted |\n|---|---|---|---|\n";
  for (const stack_fit& s : report.stacks) {
    std::vector<std::string> fitted;
    for (const auto& [name, value] : s.constants) {
      std::snprintf(line, sizeof line, "%s %.3g", name.c_str(), value);
      fitted.emplace_back(line);
    }
    out += "| " + s.stack + " | " + std::to_string(s.rows) + " | " + join(s.sources, ", ") + " | " +
           (fitted.empty() ? "-" : join(fitted, ", ")) + " |\n";
  }
  // Per family, then per family and GPU generation: median absolute errors on rows left out of
  // the fit (their whole source group), beside the in-fit figure and the naive answers.
  const std::string header =
      "| rows | first-principles held out | worst | naive first-principles held out | in fit | "
      "anchored rows | anchored held out | worst | naive anchored |\n";
  const std::string rule = "|---|---|---|---|---|---|---|---|---|---|\n";
  auto summary_cells = [&](const error_summary& s) {
    std::string cells = std::to_string(s.rows) + " | " + pct(s.held_out_median) + " | " +
                        pct(s.held_out_worst) + " | " + pct(s.naive_median) + " | " +
                        pct(s.in_fit_median) + " | " + std::to_string(s.anchored_rows) + " | ";
    if (s.anchored_rows > 0) {
      cells += pct(s.anchored_median) + " | " + pct(s.anchored_worst) + " | " +
               pct(s.naive_anchored_median);
    } else {
      cells += "- | - | -";
    }
    return cells + " |\n";
  };
  out +=
      "\nMedian |predicted/published - 1| per family. Held out: predicted by constants fitted "
      "without the row's source group; naive first-principles = datasheet peak x the median "
      "published/peak ratio of the other sources / FLOP per sample; naive anchored = the "
      "reference row x target peak / reference peak.\n\n| family " +
      header + rule;
  const auto name = [](const error_summary& s) {
    return s.supported ? s.family : s.family + " (unsupported)";
  };
  for (const error_summary& f : report.families) out += "| " + name(f) + " | " + summary_cells(f);
  out += "| **all** | " + summary_cells(report.all);
  out += "\nPer family and GPU generation:\n\n| family | generation " + header + "|---" + rule;
  for (const error_summary& g : report.generations) {
    out += "| " + name(g) + " | " + g.generation + " | " + summary_cells(g);
  }
  out +=
      "\n| row | model | framework | stack | GPU | GPUs | precision | batch | published | "
      "first-principles | held out | naive first-principles | anchored (ref) | naive anchored "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const calibration_row& r : report.rows) {
    if (!r.usable) continue;
    auto cell = [&](const std::optional<double>& v) {
      if (!v) return std::string("-");
      std::snprintf(line, sizeof line, "%.0f (%+.0f%%)", *v, (*v / r.published - 1) * 100);
      return std::string(line);
    };
    std::snprintf(line, sizeof line, "%.0f", r.published);
    const std::string published(line);  // cell() reuses the buffer
    std::string anchored = cell(r.anchored);
    if (r.reference) anchored += " (" + *r.reference + ")";
    const std::vector<std::string> cells{r.id,
                                         r.model,
                                         r.framework,
                                         r.stack,
                                         r.gpu,
                                         std::to_string(r.gpus),
                                         r.precision,
                                         std::to_string(r.batch),
                                         published,
                                         cell(r.first_principles),
                                         cell(r.held_out),
                                         cell(r.naive_first_principles),
                                         anchored,
                                         cell(r.naive)};
    out += "| ";
    out += join(cells, " | ");
    out += " |\n";
  }
  // The memory model against runs that ran: each published row fit on its GPUs.
  std::vector<const calibration_row*> counted;
  std::vector<const calibration_row*> over;
  for (const calibration_row& r : report.rows) {
    if (!r.usable || !r.capacity_GB) continue;
    counted.push_back(&r);
    if (r.memory_GB > *r.capacity_GB) over.push_back(&r);
  }
  std::vector<double> shares;
  shares.reserve(counted.size());
  for (const calibration_row* r : counted) shares.push_back(r->memory_GB / *r->capacity_GB);
  std::sort(shares.begin(), shares.end());
  out +=
      "\nGPU memory: every published run ran, so each must fit. The model's memory per GPU is "
      "within its GPU's capacity for " +
      std::to_string(counted.size() - over.size()) + " of " + std::to_string(counted.size()) +
      " rows";
  if (!shares.empty()) {
    out += " (median " + pct(shares[shares.size() / 2]) + " of capacity, highest " +
           pct(shares.back()) + ")";
  }
  out += over.empty() ? ".\n" : "; over it:\n\n";
  for (const calibration_row* r : over) {
    std::snprintf(line, sizeof line, "%.1f GB of %.0f GB", r->memory_GB, *r->capacity_GB);
    out += "- " + r->id + " " + r->model + " on " + r->gpu + ", batch " + std::to_string(r->batch) +
           ": " + line + "\n";
  }
  out += "\nRows not used:\n\n";
  for (const calibration_row& r : report.rows) {
    if (r.usable) continue;
    out += "- " + r.id + " " + r.model + " (" + r.framework + "): " + r.why_not + "\n";
  }
  return out;
}

}  // namespace gpubench::model
