// calibrate --serve: the serving model against published serving figures
// (configs/calibration/serving.json; docs/serving.md, "Held to published figures"), which fit
// one constant; --fit predicts each source group by a fit made without it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "components.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/calibration.hpp"
#include "gpubench/model/serving.hpp"

namespace gpubench::model {

namespace {

using detail::fmt;

// What a figure the model does not give counts as in the fit's objective: |log 2|.
constexpr double missing_log_error = 0.6931;

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The naive roofline (issue 42's yardstick) for the figures it gives: a prompt's FLOPs (2 per
// parameter per token) at the datasheet peak for the time to first token; the weights read once
// at the datasheet bandwidth for a decode step; offline, per request the first plus O decode
// steps each shared by the sequences the KV cache holds.
std::map<std::string, double> naive_figures(const hardware_profile& hw, const serving_result& r,
                                            const std::string& dtype, double bytes_per_weight) {
  std::map<std::string, double> out;
  const auto peak = hw.value(fig::peak_tflops, dtype);
  const auto bandwidth = hw.value(fig::hbm_peak);
  if (!peak || !bandwidth || !r.fits) return out;
  const double group = r.tensor * r.pipeline;
  const double weights = r.weights_GB_per_gpu * 1e9 * group;
  const double params = weights / bytes_per_weight;
  const double prefill =
      2 * params * static_cast<double>(r.input_tokens) / (*peak * detail::tera * group);
  const double step = weights / (*bandwidth * detail::giga * group);
  out["ttft_ms"] = prefill * 1e3;
  out["tpot_ms"] = step * 1e3;
  if (r.max_concurrency > 0) {
    const double batch = std::max(1.0, r.max_concurrency / r.replicas);
    out["output_tokens_per_s"] = r.replicas * static_cast<double>(r.output_tokens) /
                                 (prefill + static_cast<double>(r.output_tokens) * step / batch);
  }
  return out;
}

}  // namespace

serving_check check_serving(const json& doc, const std::string& file, const constants& c,
                            const serving_constants& sc) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "rows", "left_out"});
  if (root.get_string("schema") != "gpubench.serving-rows/1") {
    root.fail("schema", "\"gpubench.serving-rows/1\"");
  }
  serving_check out;
  for (const json_reader& row : root.elements("rows", 1)) {
    row.expect_object({"id", "source", "source_group", "model", "preset", "engine", "stack", "gpu",
                       "catalog", "gpus", "tensor", "pipeline", "weights", "kv_cache",
                       "input_tokens", "output_tokens", "load", "published", "notes"});
    serving_check_row result;
    result.id = static_cast<int>(row.get_int("id", 0, 1 << 30));
    result.source_group = row.get_string("source_group");
    const hardware_profile hw = load_catalog(row.get_string("catalog"));
    const workload w = load_workload(row.get_string("preset"));
    serving_options o;
    o.gpus = static_cast<int>(row.get_int("gpus", 1, 1 << 20));
    o.tensor = static_cast<int>(row.get_int("tensor", 1, 1024));
    o.pipeline = static_cast<int>(row.get_int("pipeline", 1, 1024));
    o.weights = row.get_string("weights");
    o.kv_cache = row.get_string("kv_cache");
    o.input_tokens = row.get_int("input_tokens", 1, 1 << 30);
    o.output_tokens = row.get_int("output_tokens", 1, 1 << 30);
    o.stack = row.get_string("stack");
    const json_reader load = row.member("load");
    load.expect_object({"kind", "value"});
    const std::string kind = load.get_string("kind");
    if (kind == "batch") {
      o.load = serving_load::batch;
    } else if (kind == "concurrency") {
      o.load = serving_load::concurrency;
    } else if (kind == "rate") {
      o.load = serving_load::rate;
    } else if (kind != "max_throughput") {
      load.fail("kind", "batch, concurrency, rate or max_throughput");
    }
    if (o.load != serving_load::max_throughput) o.load_value = load.get_number("value", 1e-9, 1e9);
    serving_result r;
    try {
      r = predict_serving(hw, w, c, sc, o);
    } catch (const input_error& e) {
      throw input_error(file + ": row " + std::to_string(result.id) + ": " + e.what());
    }
    result.what = w.name + " on " + std::to_string(r.gpus) + " x " + hw.name + ", tp " +
                  std::to_string(o.tensor) + ", " + o.weights + ", " +
                  std::to_string(o.input_tokens) + "/" + std::to_string(o.output_tokens) + ", " +
                  kind + (o.load == serving_load::max_throughput ? "" : " " + fmt(o.load_value)) +
                  ", " + o.stack;
    const std::map<std::string, double> all_naive =
        naive_figures(hw, r, serving_weight_dtype(o.weights), serving_weight_bytes(o.weights));
    // Each published figure beside the model's figure of the same name: the serving JSON's.
    const json predicted = to_json(r).at("serving");
    const json_reader published = row.member("published");
    for (const auto& item : published.node().items()) {
      if (!predicted.contains(item.key())) published.fail(item.key(), "a figure of size --serve");
      const double value = published.get_number(item.key(), 1e-12, 1e15);
      const json& model_value = predicted.at(item.key());
      const double mine = model_value.is_number() ? model_value.get<double>()
                                                  : std::numeric_limits<double>::quiet_NaN();
      result.figures.emplace_back(item.key(), value, mine);
      // The naive roofline's throughput is the offline one: it knows no load.
      const bool naive_applies =
          item.key() != "output_tokens_per_s" || o.load == serving_load::max_throughput;
      if (const auto naive = all_naive.find(item.key());
          naive_applies && naive != all_naive.end()) {
        result.naive[item.key()] = naive->second;
      }
    }
    out.rows.push_back(std::move(result));
  }
  summarise(out);
  return out;
}

void summarise(serving_check& check) {
  std::map<std::string, std::vector<double>> errors;
  std::map<std::pair<std::string, std::string>, std::vector<double>> group_errors;
  std::map<std::string, std::vector<double>> naive_errors;
  for (const serving_check_row& row : check.rows) {
    for (const auto& [name, published, predicted] : row.figures) {
      // No figure where one was published counts as wholly wrong.
      const double error = std::isfinite(predicted) ? std::abs(predicted / published - 1) : 1.0;
      errors[name].push_back(error);
      group_errors[{row.source_group, name}].push_back(error);
      if (const auto naive = row.naive.find(name); naive != row.naive.end()) {
        naive_errors[name].push_back(std::abs(naive->second / published - 1));
      }
    }
  }
  const auto fill = [](auto& into, const auto& samples) {
    into.clear();
    for (const auto& [key, e] : samples) into[key] = {static_cast<int>(e.size()), median_of(e)};
  };
  fill(check.by_figure, errors);
  fill(check.by_group, group_errors);
  fill(check.naive, naive_errors);
}

// One source's rows share its harness, so they speak as one voice (as the training fit).
double fit_objective(const serving_check& check) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> cells;
  for (const serving_check_row& row : check.rows) {
    for (const auto& [name, published, predicted] : row.figures) {
      cells[{row.source_group, name}].push_back(
          std::isfinite(predicted) ? std::abs(std::log(predicted / published)) : missing_log_error);
    }
  }
  double total = 0;
  for (const auto& [cell, e] : cells) total += median_of(e);
  return cells.empty() ? 0 : total / static_cast<double>(cells.size());
}

json to_json(const serving_check& check) {
  json rows = json::array();
  for (const serving_check_row& r : check.rows) {
    json figures = json::object();
    for (const auto& [name, published, predicted] : r.figures) {
      figures[name] = {{"published", published},
                       {"predicted", std::isfinite(predicted) ? json(predicted) : json(nullptr)}};
    }
    rows.push_back({{"id", r.id},
                    {"source_group", r.source_group},
                    {"what", r.what},
                    {"figures", std::move(figures)},
                    {"naive", r.naive}});
  }
  json figures = json::object();
  for (const auto& [name, v] : check.by_figure) {
    figures[name] = {{"rows", v.first}, {"median_abs_error", v.second}};
  }
  json groups = json::array();
  for (const auto& [key, v] : check.by_group) {
    groups.push_back({{"source_group", key.first},
                      {"figure", key.second},
                      {"rows", v.first},
                      {"median_abs_error", v.second}});
  }
  json naive = json::object();
  for (const auto& [name, v] : check.naive) {
    naive[name] = {{"rows", v.first}, {"median_abs_error", v.second}};
  }
  return json{{"schema", "gpubench.serving-calibration/1"},
              {"figures", std::move(figures)},
              {"naive", std::move(naive)},
              {"source_groups", std::move(groups)},
              {"rows", std::move(rows)}};
}

std::string to_markdown(const serving_check& check) {
  const auto percent = [](double v) { return std::isfinite(v) ? fmt(v * 100) + "%" : "-"; };
  std::string out =
      "Serving: size --serve against published figures (configs/calibration/serving.json). One "
      "serving constant, graph_kernel_gap_us, is fitted on them (`calibrate --serve --fit` "
      "predicts each source group by a fit made without it). Median |predicted / "
      "published - 1|; a figure the model does not give (does not fit, over capacity) counts "
      "as 100%. The naive roofline: a prompt's FLOPs at the datasheet peak (TTFT), the weights "
      "at the datasheet bandwidth (TPOT), both for the offline output tokens/s.\n\n| figure | "
      "rows | median | naive roofline |\n|---|---|---|---|\n";
  for (const auto& [name, v] : check.by_figure) {
    const auto naive = check.naive.find(name);
    out += "| " + name + " | " + std::to_string(v.first) + " | " + percent(v.second) + " | " +
           (naive == check.naive.end() ? std::string("-")
                                       : percent(naive->second.second) + " (" +
                                             std::to_string(naive->second.first) + " rows)") +
           " |\n";
  }
  out += "\n| source group | figure | rows | median |\n|---|---|---|---|\n";
  for (const auto& [key, v] : check.by_group) {
    out += "| " + key.first + " | " + key.second + " | " + std::to_string(v.first) + " | " +
           percent(v.second) + " |\n";
  }
  out += "\n| row | source group | what | published -> predicted |\n|---|---|---|---|\n";
  for (const serving_check_row& r : check.rows) {
    std::vector<std::string> parts;
    for (const auto& [name, published, predicted] : r.figures) {
      parts.push_back(name + " " + fmt(published) + " -> " +
                      (std::isfinite(predicted)
                           ? fmt(predicted) + " (" + (predicted >= published ? "+" : "") +
                                 fmt((predicted / published - 1) * 100) + "%)"
                           : std::string("none")));
    }
    out += "| " + std::to_string(r.id) + " | " + r.source_group + " | " + r.what + " | " +
           join(parts, "; ") + " |\n";
  }
  return out;
}

// The figures a serving answer carries a band for.
constexpr const char* banded_figures[] = {"output_tokens_per_s", "ttft_ms", "tpot_ms"};
constexpr const char* serving_bands_schema = "gpubench.serving-bands/1";

std::vector<serving_band> serving_bands(const serving_check& check) {
  std::vector<serving_band> out;
  for (const char* figure : banded_figures) {
    struct sample {
      double ratio;
      const std::string* group;
    };
    std::vector<sample> samples;
    for (const serving_check_row& row : check.rows) {
      for (const auto& [name, published, predicted] : row.figures) {
        if (name == figure && std::isfinite(predicted) && predicted > 0) {
          samples.push_back({published / predicted, &row.source_group});
        }
      }
    }
    serving_band b;
    b.figure = figure;
    b.rows = static_cast<int>(samples.size());
    if (samples.empty()) continue;
    std::vector<band_sample> all;
    all.reserve(samples.size());
    for (const sample& s : samples) all.push_back({s.ratio, *s.group});
    std::tie(b.low, b.high) = ratio_band(all);
    // Held out by source: each row against the band its own source group had no part in.
    int inside = 0;
    int counted = 0;
    for (const sample& s : samples) {
      std::vector<band_sample> others;
      for (const sample& o : samples) {
        if (*o.group != *s.group) others.push_back({o.ratio, *o.group});
      }
      if (others.empty()) continue;
      const auto [low, high] = ratio_band(others);
      ++counted;
      inside += s.ratio >= low && s.ratio <= high ? 1 : 0;
    }
    b.held_out_coverage = counted > 0 ? static_cast<double>(inside) / counted : 0;
    out.push_back(b);
  }
  return out;
}

json to_json(const std::vector<serving_band>& bands) {
  json list = json::array();
  for (const serving_band& b : bands) {
    list.push_back({{"figure", b.figure},
                    {"rows", b.rows},
                    {"low", b.low},
                    {"high", b.high},
                    {"held_out_coverage", b.held_out_coverage}});
  }
  return json{{"schema", serving_bands_schema},
              {"about",
               "gpubench calibrate --serve --bands: per figure, published / predicted over the "
               "published serving rows (configs/calibration/serving.json), each predicted by the "
               "fit made without its source group, the split-conformal ranks that hold at least "
               "`coverage` of a next row between, and "
               "how often a band built "
               "without a source group held that group's rows (docs/serving.md, 'Error band')"},
              {"coverage", band_coverage},
              {"bands", std::move(list)}};
}

std::vector<serving_band> parse_serving_bands(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "coverage", "bands"});
  if (root.get_string("schema") != serving_bands_schema) {
    root.fail("schema", std::string("\"") + serving_bands_schema + "\"");
  }
  std::vector<serving_band> out;
  for (const json_reader& e : root.elements("bands", 0)) {
    e.expect_object({"figure", "rows", "low", "high", "held_out_coverage"});
    serving_band b;
    b.figure = e.get_string("figure");
    b.rows = static_cast<int>(e.get_int("rows", 1, 1 << 30));
    b.low = e.get_number("low", 1e-6, 1e6);
    b.high = e.get_number("high", b.low, 1e6);
    b.held_out_coverage = e.get_number("held_out_coverage", 0, 1);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<serving_band> load_serving_bands() {
  const auto path = config_dir() / "model" / "serving_bands.json";
  return parse_serving_bands(read_json_file(path), path.string());
}

void apply_serving_bands(serving_result& r, const std::vector<serving_band>& bands) {
  if (!r.fits || r.over_capacity) return;
  const json figures = to_json(r).at("serving");
  std::vector<std::string> parts;
  for (const serving_band& b : bands) {
    const json& value = figures.at(b.figure);
    if (!value.is_number() || value.get<double>() <= 0) continue;
    const double v = value.get<double>();
    r.interval[b.figure] = {v * b.low, v * b.high};
    parts.push_back(b.figure + ": " + std::to_string(b.rows) + " runs, " +
                    fmt(b.held_out_coverage * 100) +
                    "% of a source's runs inside the band built without it");
  }
  if (!parts.empty()) {
    r.interval_basis = fmt(band_coverage * 100) +
                       "% of the published serving runs (configs/calibration/serving.json), each "
                       "source weighing the same and each run predicted by a fit made without its "
                       "source, fell in this range around the model's answers: " +
                       join(parts, "; ");
  }
}

}  // namespace gpubench::model
