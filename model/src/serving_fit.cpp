// calibrate --serve --fit (docs/serving.md, "Held to published figures"): the serving constants
// fitted on the published rows, and each source group predicted by a fit made without it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpubench/model/serving.hpp"

namespace gpubench::model {

namespace {

// A fitted constant: where it lives, its range, and the grid the search starts from.
struct knob {
  std::string name;  // "allreduce_latency_us" or "STACK.FIELD"
  double lo;
  double hi;
  double* (*at)(serving_constants& sc, const std::string& stack);
  std::string stack;  // "" for a constant of every engine
};

double* step_overhead(serving_constants& sc, const std::string& stack) {
  for (serving_stack& s : sc.stacks) {
    if (s.name == stack) return &s.step_overhead_us;
  }
  return nullptr;
}
double* matmul(serving_constants& sc, const std::string& stack) {
  for (serving_stack& s : sc.stacks) {
    if (s.name == stack) return &s.matmul_efficiency;
  }
  return nullptr;
}
double* memory(serving_constants& sc, const std::string& stack) {
  for (serving_stack& s : sc.stacks) {
    if (s.name == stack) return &s.memory_efficiency;
  }
  return nullptr;
}
double* allreduce(serving_constants& sc, const std::string& /*stack*/) {
  return &sc.allreduce_latency_us;
}

constexpr int grid_points = 7;
constexpr int refinements = 2;
constexpr double missing_log_error = 0.6931;  // log 2: a figure the model does not give

}  // namespace

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
  for (auto& [cell, e] : cells) {
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    total += n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
  }
  return cells.empty() ? 0 : total / static_cast<double>(cells.size());
}

namespace {

json rows_without(const json& doc, const std::string& group, bool keep) {
  json out = doc;
  out["rows"] = json::array();
  for (const json& row : doc.at("rows")) {
    if ((row.at("source_group") == group) == keep) out["rows"].push_back(row);
  }
  return out;
}

// Coordinate search: each knob over a grid of its range, the best kept, then a finer grid
// around it.
serving_constants fit_on(const json& doc, const std::string& file, const constants& c,
                         serving_constants sc, const std::vector<knob>& knobs) {
  double best = fit_objective(check_serving(doc, file, c, sc));
  for (int pass = 0; pass <= refinements; ++pass) {
    for (const knob& k : knobs) {
      double* value = k.at(sc, k.stack);
      if (value == nullptr) continue;
      const double span = (k.hi - k.lo) / std::pow(grid_points - 1, pass);
      const double lo = std::max(k.lo, *value - span / 2);
      const double hi = std::min(k.hi, *value + span / 2);
      const double start = *value;
      double chosen = start;
      for (int i = 0; i < grid_points; ++i) {
        *value = lo + (hi - lo) * i / (grid_points - 1);
        const double score = fit_objective(check_serving(doc, file, c, sc));
        if (score < best - 1e-12) {
          best = score;
          chosen = *value;
        }
      }
      *value = chosen;
    }
  }
  return sc;
}

}  // namespace

serving_fit fit_serving(const json& doc, const std::string& file, const constants& c,
                        const serving_constants& sc) {
  std::set<std::string> stacks;
  std::set<std::string> groups;
  for (const json& row : doc.at("rows")) {
    stacks.insert(row.at("stack").get<std::string>());
    groups.insert(row.at("source_group").get<std::string>());
  }
  std::vector<knob> knobs{{"allreduce_latency_us", 1, 40, allreduce, ""}};
  for (const std::string& stack : stacks) {
    knobs.push_back({stack + ".step_overhead_us", 0, 3000, step_overhead, stack});
    knobs.push_back({stack + ".matmul_efficiency", 0.5, 1, matmul, stack});
    knobs.push_back({stack + ".memory_efficiency", 0.5, 1, memory, stack});
  }
  serving_fit out;
  out.fitted = fit_on(doc, file, c, sc, knobs);
  for (const knob& k : knobs) {
    if (const double* v = k.at(out.fitted, k.stack)) out.values.emplace_back(k.name, *v);
  }
  out.in_fit = check_serving(doc, file, c, out.fitted);
  // Held out: each source group predicted by the constants fitted on the others; the checks of
  // the groups joined into one.
  json held = doc;
  held["rows"] = json::array();
  std::vector<serving_check_row> rows;
  for (const std::string& group : groups) {
    const serving_constants without = fit_on(rows_without(doc, group, false), file, c, sc, knobs);
    serving_check part = check_serving(rows_without(doc, group, true), file, c, without);
    for (serving_check_row& r : part.rows) rows.push_back(std::move(r));
  }
  // The summary of the joined rows: check_serving's medians, recomputed over all of them.
  out.held_out.rows = rows;
  std::map<std::string, std::vector<double>> errors;
  std::map<std::pair<std::string, std::string>, std::vector<double>> group_errors;
  for (const serving_check_row& r : rows) {
    for (const auto& [name, published, predicted] : r.figures) {
      const double e = std::isfinite(predicted) ? std::abs(predicted / published - 1) : 1.0;
      errors[name].push_back(e);
      group_errors[{r.source_group, name}].push_back(e);
    }
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  for (const auto& [name, e] : errors) {
    out.held_out.by_figure[name] = {static_cast<int>(e.size()), median(e)};
  }
  for (const auto& [key, e] : group_errors) {
    out.held_out.by_group[key] = {static_cast<int>(e.size()), median(e)};
  }
  out.held_out.naive = out.in_fit.naive;  // the naive roofline fits nothing
  return out;
}

}  // namespace gpubench::model
