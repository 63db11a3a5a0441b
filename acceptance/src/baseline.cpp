// Fleet baselines: every figure against the median of many machines' results.
#include <map>

#include "gpubench/core/format.hpp"
#include "gpubench/core/statistics.hpp"
#include "rules.hpp"

namespace gpubench::acceptance {

namespace {
std::string figure_key(const result& r, const std::string& metric) {
  return r.id + " " + format_axes(r.axes) + " " + metric;
}
}  // namespace

baseline make_baseline(const std::vector<std::string>& files) {
  baseline base;
  std::map<std::string, std::vector<double>> values;
  for (const std::string& file : files) {
    const results_document doc = read_results(file);
    base.files.push_back(file);
    for (const result& r : doc.results) {
      if (r.status != result_status::ok) continue;
      for (const auto& [metric, stats] : r.metrics) {
        values[figure_key(r, metric)].push_back(stats.median);
      }
    }
  }
  for (auto& [key, list] : values) {
    base.median[key] = summarize(list).median;
    base.machines[key] = list.size();
  }
  return base;
}

void check_against_baseline(validation& v, const results_document& doc, const baseline& base,
                            double tolerance_pct) {
  v.baseline_files = base.files;
  for (const result& r : doc.results) {
    if (r.status != result_status::ok) continue;
    for (const auto& [metric, stats] : r.metrics) {
      const std::string key = figure_key(r, metric);
      const auto it = base.median.find(key);
      if (it == base.median.end() || it->second == 0) continue;
      const double ratio = stats.median / it->second;
      const bool lower = stats.unit.direction == better::lower;
      const double limit = lower ? 1 + tolerance_pct / 100 : 1 - tolerance_pct / 100;
      const bool ok = lower ? ratio <= limit : ratio >= limit;
      rule_outcome o;
      o.rule = "baseline " + r.id + " " + metric;
      o.subject = format_axes(r.axes);
      if (!detail::host_of(r, doc).empty()) o.subject = r.host + " " + o.subject;
      o.unit = stats.unit.unit;
      o.measured_value = stats.median;
      o.expected_value = it->second;
      o.floor_value = it->second * limit;
      o.measured = detail::with_unit(stats.median, o.unit);
      o.expected = detail::with_unit(it->second, o.unit);
      o.floor = (lower ? "<= " : ">= ") + detail::with_unit(it->second * limit, o.unit);
      o.status = ok ? rule_status::pass : rule_status::fail;
      o.detail = "median of " + std::to_string(base.machines.at(key)) + " machines; " +
                 format_number(100 * (ratio - 1)) + "% from it";
      v.rules.push_back(std::move(o));
    }
  }
}

}  // namespace gpubench::acceptance
