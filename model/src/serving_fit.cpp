// calibrate --serve --fit (docs/serving.md, "Held to published figures"): the serving constants
// fitted on the published rows, and each source group predicted by a fit made without it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpubench/model/serving.hpp"

namespace gpubench::model {

namespace {

// A fitted constant: an engine's field (`stack` names the engine) or, without one, the
// allreduce latency every engine shares; its range.
struct knob {
  std::string name;  // "allreduce_latency_us" or "STACK.FIELD"
  double lo;
  double hi;
  double serving_stack::*field;  // nullptr: serving_constants::allreduce_latency_us
  std::string stack;

  [[nodiscard]] double* in(serving_constants& sc) const {
    if (field == nullptr) return &sc.allreduce_latency_us;
    for (serving_stack& s : sc.stacks) {
      if (s.name == stack) return &(s.*field);
    }
    return nullptr;
  }
};

constexpr int grid_points = 7;
constexpr int refinements = 2;

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
      double* value = k.in(sc);
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
  std::vector<knob> knobs{{"allreduce_latency_us", 1, 40, nullptr, ""}};
  for (const std::string& stack : stacks) {
    knobs.push_back(
        {stack + ".step_overhead_us", 0, 3000, &serving_stack::step_overhead_us, stack});
    knobs.push_back(
        {stack + ".matmul_efficiency", 0.5, 1, &serving_stack::matmul_efficiency, stack});
    knobs.push_back(
        {stack + ".memory_efficiency", 0.5, 1, &serving_stack::memory_efficiency, stack});
  }
  serving_fit out;
  out.fitted = fit_on(doc, file, c, sc, knobs);
  for (const knob& k : knobs) {
    if (const double* v = k.in(out.fitted)) out.values.emplace_back(k.name, *v);
  }
  out.in_fit = check_serving(doc, file, c, out.fitted);
  // Held out: each source group predicted by the constants fitted on the others; the checks of
  // the groups joined into one.
  std::vector<serving_check_row> rows;
  for (const std::string& group : groups) {
    const serving_constants without = fit_on(rows_without(doc, group, false), file, c, sc, knobs);
    serving_check part = check_serving(rows_without(doc, group, true), file, c, without);
    for (serving_check_row& r : part.rows) rows.push_back(std::move(r));
  }
  out.held_out.rows = std::move(rows);
  summarise(out.held_out);
  return out;
}

}  // namespace gpubench::model
