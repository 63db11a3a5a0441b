#include "gpubench/model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "gpubench/config_paths.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/json_reader.hpp"
#include "gpubench/text.hpp"

namespace gpubench::model {
namespace {

struct model_rule {
  std::string match;
  std::string family;
  json workload;
};

struct mapping {
  std::vector<model_rule> models;
  std::map<std::size_t, json> row_details;  // row index -> merge patch of its workload
  std::vector<std::pair<std::string, std::string>> unusable;    // match -> why
  std::vector<std::pair<std::string, std::string>> gpus;        // row gpu prefix -> catalog
  std::vector<std::pair<std::string, std::string>> precisions;  // prefix -> precision
  std::vector<std::pair<std::string, double>> networks;         // system match -> Gb/s
};

mapping load_mapping() {
  const auto path = config_dir() / "calibration" / "models.json";
  const json doc = read_json_file(path);
  const json_reader root(doc, path.string());
  root.expect_object(
      {"schema", "about", "models", "row_details", "unusable", "gpus", "precisions", "networks"});
  mapping m;
  for (const json_reader& e : root.elements("models", 1)) {
    e.expect_object({"match", "family", "workload"});
    m.models.push_back({e.get_string("match"), e.get_string("family"), e.node().at("workload")});
  }
  for (const json_reader& e : root.elements("row_details")) {
    e.expect_object({"rows", "workload", "why"});
    if (!e.node().at("workload").is_object()) e.member("workload").fail_here("an object");
    for (const json_reader& row : e.elements("rows", 1)) {
      if (!row.node().is_number_unsigned()) row.fail_here("a row index");
      m.row_details[row.node().get<std::size_t>()] = e.node().at("workload");
    }
  }
  for (const json_reader& e : root.elements("unusable")) {
    e.expect_object({"match", "why"});
    m.unusable.emplace_back(e.get_string("match"), e.get_string("why"));
  }
  for (const json_reader& e : root.elements("gpus", 1)) {
    e.expect_object({"match", "catalog"});
    m.gpus.emplace_back(e.get_string("match"), e.get_string("catalog"));
  }
  for (const json_reader& e : root.elements("precisions", 1)) {
    e.expect_object({"match", "precision"});
    m.precisions.emplace_back(e.get_string("match"), e.get_string("precision"));
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

std::vector<prepared_row> prepare(const json& published, const std::string& file) {
  const mapping map = load_mapping();
  const json_reader root(published, file);
  std::vector<prepared_row> rows;
  std::map<std::string, hardware_profile> catalog;
  const auto entries = root.elements("rows", 1);
  if (!map.row_details.empty() && map.row_details.rbegin()->first >= entries.size()) {
    throw input_error("configs/calibration/models.json: row_details names row " +
                      std::to_string(map.row_details.rbegin()->first) + ", but " + file + " has " +
                      std::to_string(entries.size()) + " rows");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json_reader& e = entries[i];
    prepared_row p;
    calibration_row& r = p.row;
    r.index = i;
    r.source = e.get_string("source");
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
    auto reject = [&](std::string why) {
      r.why_not = std::move(why);
      rows.push_back(p);
    };
    if (auto it = std::find_if(map.unusable.begin(), map.unusable.end(),
                               [&](const auto& u) {
                                 return contains(r.model, u.first) ||
                                        contains(r.framework, u.first);
                               });
        it != map.unusable.end()) {
      reject(it->second);
      continue;
    }
    const auto rule = std::find_if(map.models.begin(), map.models.end(),
                                   [&](const model_rule& m) { return contains(r.model, m.match); });
    if (rule == map.models.end()) {
      reject("no workload mapping for this model");
      continue;
    }
    const auto gpu_map = std::find_if(map.gpus.begin(), map.gpus.end(),
                                      [&](const auto& g) { return gpu.starts_with(g.first); });
    if (gpu_map == map.gpus.end()) {
      reject("no catalog entry for GPU " + gpu);
      continue;
    }
    const auto prec = std::find_if(map.precisions.begin(), map.precisions.end(),
                                   [&](const auto& pr) { return precision.starts_with(pr.first); });
    if (prec == map.precisions.end()) {
      reject("precision '" + precision + "' not mapped");
      continue;
    }
    if (r.batch == 0) {
      reject("no batch size per GPU");
      continue;
    }
    r.family = rule->family;
    r.gpu = gpu_map->second;
    r.precision = prec->second;
    json wdoc = rule->workload;
    wdoc["schema"] = workload_schema;
    wdoc["name"] = r.model;
    wdoc["precision"] = r.precision;
    wdoc["batch_per_gpu"] = r.batch;
    if (const auto detail = map.row_details.find(i); detail != map.row_details.end()) {
      wdoc.merge_patch(detail->second);
    }
    if (!wdoc.contains("data")) wdoc["data"] = json::object();
    wdoc["data"]["source"] = "synthetic";  // the rows are GPU-bound benchmark runs
    p.w = parse_workload(wdoc, file + " row " + std::to_string(i));
    if (!catalog.contains(r.gpu)) catalog.emplace(r.gpu, load_catalog(r.gpu));
    p.hw = catalog.at(r.gpu);
    p.hw.scalable = true;
    const int per_node = std::min(r.gpus, 8);
    p.options.gpus = per_node;
    p.options.nodes = (r.gpus + per_node - 1) / per_node;
    p.options.precision = r.precision;
    for (const auto& [match, gbps] : map.networks) {
      if (contains(system, match)) {
        p.hw.set("network.gbps", gbps, basis::catalog, "calibration mapping: " + match);
        break;
      }
    }
    if (p.hw.value(std::string("gpu.peak_tflops.") + gemm_dtype(r.precision)) == std::nullopt) {
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
    rows.push_back(std::move(p));
  }
  return rows;
}

// A reference is the same training job on other hardware: the same model settings (an
// activation-checkpointed run is not a reference for one without); batch and accumulation may
// differ.
bool same_model(const workload& a, const workload& b) {
  return a.model.preset == b.model.preset && a.model.params == b.model.params &&
         a.model.flags == b.model.flags && a.strategy == b.strategy && a.optimizer == b.optimizer;
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

void predict_first_principles(std::vector<prepared_row>& rows, const constants& c) {
  for (prepared_row& p : rows) {
    if (!p.row.usable) continue;
    const sizing s = predict(p.hw, p.w, c, p.options);
    p.row.first_principles = s.predicted_samples_per_s;
    p.row.flops_per_sample = s.step.flops / s.batch_per_gpu;
  }
}

double peak_flops(const prepared_row& p) {
  return *p.hw.value(std::string("gpu.peak_tflops.") + gemm_dtype(p.row.precision)) * 1e12;
}

// The naive first-principles answer: every GPU runs at one fraction of its datasheet peak, the
// fraction that best fits the whole calibration set (median of the published/peak ratios).
double naive_first_principles(std::vector<prepared_row>& rows) {
  std::vector<double> log_ratios;
  for (const prepared_row& p : rows) {
    if (!p.row.usable) continue;
    const double at_peak = peak_flops(p) * p.row.gpus / p.row.flops_per_sample;
    log_ratios.push_back(std::log(p.row.published / at_peak));
  }
  std::sort(log_ratios.begin(), log_ratios.end());
  const std::size_t n = log_ratios.size();
  const double utilization =
      n == 0
          ? 0
          : std::exp(n % 2 ? log_ratios[n / 2] : 0.5 * (log_ratios[n / 2 - 1] + log_ratios[n / 2]));
  for (prepared_row& p : rows) {
    if (!p.row.usable) continue;
    p.row.naive_first_principles =
        utilization * peak_flops(p) * p.row.gpus / p.row.flops_per_sample;
  }
  return utilization;
}

double fit_objective(std::vector<prepared_row>& rows, const constants& c) {
  predict_first_principles(rows, c);
  std::map<std::string, std::vector<double>> errors;
  for (const prepared_row& p : rows) {
    if (p.row.first_principles) {
      errors[p.row.family].push_back(std::abs(std::log(*p.row.first_principles / p.row.published)));
    }
  }
  double total = 0;
  for (const auto& [family, e] : errors) total += median(e);
  return errors.empty() ? 0 : total / static_cast<double>(errors.size());
}

}  // namespace

calibration_report calibrate(const json& published, const std::string& file, const constants& c) {
  std::vector<prepared_row> rows = prepare(published, file);
  predict_first_principles(rows, c);
  calibration_report report;
  report.naive_utilization = naive_first_principles(rows);
  // Anchored: the same source, model, framework, precision and GPU count on another GPU.
  for (prepared_row& p : rows) {
    if (!p.row.usable) continue;
    for (const prepared_row& q : rows) {
      if (!q.row.usable || q.row.gpu == p.row.gpu || q.row.source != p.row.source ||
          q.row.model != p.row.model || q.row.gpus != p.row.gpus ||
          q.row.framework != p.row.framework || q.row.precision != p.row.precision ||
          !same_model(q.w, p.w)) {
        continue;
      }
      p.row.reference = q.row.index;
      workload anchored = p.w;
      anchored.reference = reference_point{
          "catalog:" + q.row.gpu,    q.row.gpus, q.row.batch, q.row.published, q.row.precision,
          q.w.gradient_accumulation, nullptr};
      resolve_reference(anchored);
      // The reference machine's network is the same cluster's.
      hardware_profile hw = p.hw;
      p.row.anchored = predict(hw, anchored, c, p.options).predicted_samples_per_s;
      p.row.naive = q.row.published * peak_flops(p) / peak_flops(q);
      break;
    }
  }
  std::vector<double> all_fp;
  std::vector<double> all_naive_fp;
  std::vector<double> all_anchored;
  std::vector<double> all_naive;
  std::map<std::string, std::vector<double>> fp;
  std::map<std::string, std::vector<double>> nfp;
  std::map<std::string, std::vector<double>> fp_anchored_rows;
  std::map<std::string, std::vector<double>> an;
  std::map<std::string, std::vector<double>> nv;
  for (const prepared_row& p : rows) {
    report.rows.push_back(p.row);
    const calibration_row& r = p.row;
    if (!r.usable) continue;
    fp[r.family].push_back(abs_error(*r.first_principles, r.published));
    all_fp.push_back(fp[r.family].back());
    nfp[r.family].push_back(abs_error(*r.naive_first_principles, r.published));
    all_naive_fp.push_back(nfp[r.family].back());
    if (r.anchored) {
      fp_anchored_rows[r.family].push_back(fp[r.family].back());
      an[r.family].push_back(abs_error(*r.anchored, r.published));
      nv[r.family].push_back(abs_error(*r.naive, r.published));
      all_anchored.push_back(an[r.family].back());
      all_naive.push_back(nv[r.family].back());
    }
  }
  for (const auto& [family, errors] : fp) {
    family_summary f;
    f.family = family;
    f.rows = static_cast<int>(errors.size());
    f.fp_median = median(errors);
    f.fp_worst = *std::max_element(errors.begin(), errors.end());
    f.naive_fp_median = median(nfp[family]);
    f.naive_fp_worst = *std::max_element(nfp[family].begin(), nfp[family].end());
    if (an.contains(family)) {
      f.anchored_rows = static_cast<int>(an[family].size());
      f.fp_on_anchored_rows_median = median(fp_anchored_rows[family]);
      f.anchored_median = median(an[family]);
      f.anchored_worst = *std::max_element(an[family].begin(), an[family].end());
      f.naive_median = median(nv[family]);
      f.naive_worst = *std::max_element(nv[family].begin(), nv[family].end());
    }
    report.families.push_back(f);
  }
  report.fp_median = median(all_fp);
  report.naive_fp_median = median(all_naive_fp);
  report.anchored_median = median(all_anchored);
  report.naive_median = median(all_naive);
  return report;
}

constants fit_constants(const json& published, const std::string& file, constants start) {
  std::vector<prepared_row> rows = prepare(published, file);
  struct range {
    const char* name;
    double lo;
    double hi;
  };
  const range ranges[] = {{"matmul_efficiency", 0.2, 1.0},
                          {"conv_efficiency", 0.1, 1.0},
                          {"memory_efficiency", 0.1, 1.0},
                          {"comm_overlap", 0.0, 1.0}};
  constants best = std::move(start);
  double best_score = fit_objective(rows, best);
  for (int round = 0; round < 4; ++round) {
    for (const range& r : ranges) {
      constexpr int steps = 60;
      for (int i = 0; i <= steps; ++i) {
        constants trial = best;
        trial.at(r.name) = r.lo + (r.hi - r.lo) * i / steps;
        const double score = fit_objective(rows, trial);
        if (score < best_score - 1e-12) {
          best_score = score;
          best = trial;
        }
      }
    }
  }
  return best;
}

json to_json(const calibration_report& report) {
  json rows = json::array();
  for (const calibration_row& r : report.rows) {
    json row = {{"index", r.index}, {"model", r.model},  {"framework", r.framework},
                {"gpu", r.gpu},     {"gpus", r.gpus},    {"precision", r.precision},
                {"batch", r.batch}, {"usable", r.usable}};
    if (!r.usable) {
      row["why_not"] = r.why_not;
    } else {
      row["family"] = r.family;
      row["published_samples_per_s"] = r.published;
      row["first_principles"] = *r.first_principles;
      row["naive_first_principles"] = r.naive_first_principles;
      row["flops_per_sample"] = r.flops_per_sample;
      row["anchored"] = r.anchored;
      row["naive"] = r.naive;
      row["reference_row"] = r.reference;
    }
    rows.push_back(std::move(row));
  }
  json families = json::array();
  for (const family_summary& f : report.families) {
    families.push_back(
        {{"family", f.family},
         {"rows", f.rows},
         {"first_principles_median_abs_error", f.fp_median},
         {"first_principles_worst_abs_error", f.fp_worst},
         {"naive_first_principles_median_abs_error", f.naive_fp_median},
         {"naive_first_principles_worst_abs_error", f.naive_fp_worst},
         {"anchored_rows", f.anchored_rows},
         {"first_principles_median_abs_error_on_anchored_rows", f.fp_on_anchored_rows_median},
         {"anchored_median_abs_error", f.anchored_median},
         {"anchored_worst_abs_error", f.anchored_worst},
         {"naive_median_abs_error", f.naive_median},
         {"naive_worst_abs_error", f.naive_worst}});
  }
  return {{"schema", "gpubench.calibration/1"},
          {"first_principles_median_abs_error", report.fp_median},
          {"naive_first_principles_median_abs_error", report.naive_fp_median},
          {"naive_utilization", report.naive_utilization},
          {"anchored_median_abs_error", report.anchored_median},
          {"naive_median_abs_error", report.naive_median},
          {"families", families},
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
  // Two tables: first-principles against the naive peak-FLOP/s answer over every row, then the
  // anchored rows against the reference scaled by peak FLOP/s (first-principles on the same rows
  // beside them).
  std::snprintf(line, sizeof line, "%.3f", report.naive_utilization);
  out += "First-principles; naive = datasheet peak x " + std::string(line) +
         " (one utilisation for every row) / FLOP per sample.\n\n"
         "| family | rows | first-principles median | worst | naive median | worst |\n"
         "|---|---|---|---|---|---|\n";
  for (const family_summary& f : report.families) {
    out += "| " + f.family + " | " + std::to_string(f.rows) + " | " + pct(f.fp_median) + " | " +
           pct(f.fp_worst) + " | " + pct(f.naive_fp_median) + " | " + pct(f.naive_fp_worst) +
           " |\n";
  }
  out +=
      "| **all** | | " + pct(report.fp_median) + " | | " + pct(report.naive_fp_median) + " | |\n\n";
  out +=
      "Anchored on another GPU of the same source; naive = the reference row x target peak / "
      "reference peak.\n\n"
      "| family | rows | anchored median | worst | naive median | worst | first-principles median "
      "on these rows |\n|---|---|---|---|---|---|---|\n";
  for (const family_summary& f : report.families) {
    if (f.anchored_rows == 0) continue;
    out += "| " + f.family + " | " + std::to_string(f.anchored_rows) + " | " +
           pct(f.anchored_median) + " | " + pct(f.anchored_worst) + " | " + pct(f.naive_median) +
           " | " + pct(f.naive_worst) + " | " + pct(f.fp_on_anchored_rows_median) + " |\n";
  }
  out += "| **all** | | " + pct(report.anchored_median) + " | | " + pct(report.naive_median) +
         " | | |\n\n";
  out +=
      "| # | model | framework | GPU | GPUs | precision | batch | published | first-principles "
      "| naive first-principles | anchored (ref #) | naive anchored |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
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
    if (r.reference) anchored += " (#" + std::to_string(*r.reference) + ")";
    const std::vector<std::string> cells{std::to_string(r.index),
                                         r.model,
                                         r.framework,
                                         r.gpu,
                                         std::to_string(r.gpus),
                                         r.precision,
                                         std::to_string(r.batch),
                                         published,
                                         cell(r.first_principles),
                                         cell(r.naive_first_principles),
                                         anchored,
                                         cell(r.naive)};
    out += "| ";
    out += join(cells, " | ");
    out += " |\n";
  }
  out += "\nRows not used:\n\n";
  for (const calibration_row& r : report.rows) {
    if (r.usable) continue;
    out += "- #" + std::to_string(r.index) + " " + r.model + " (" + r.framework +
           "): " + r.why_not + "\n";
  }
  return out;
}

}  // namespace gpubench::model
