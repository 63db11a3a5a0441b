#include "outliers.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "gpubench/core/format.hpp"
#include "gpubench/core/statistics.hpp"
#include "rules.hpp"

namespace gpubench::acceptance::detail {

namespace {

// 1.4826 x MAD estimates the standard deviation of normally distributed figures.
constexpr double mad_to_sd = 1.4826;

}  // namespace

void add_measurements(const results_document& doc, const std::string& host, figure_values& out) {
  const std::vector<gpu_view> gpus = gpus_of(doc);
  // GPU by (node, index), once: a merged file holds 100,000 GPUs and a result for each.
  const auto hash = [](const std::pair<std::string, int>& key) {
    return std::hash<std::string>()(key.first) * 31 + std::hash<int>()(key.second);
  };
  std::unordered_map<std::pair<std::string, int>, const gpu_info*, decltype(hash)> by_index(
      gpus.size(), hash);
  // A GPU's host is its node's, or "" for the one machine (gpus_of); a result's the same
  // (host_of).
  for (const gpu_view& g : gpus) by_index[{g.host, g.gpu->index}] = g.gpu;
  for (const result& r : doc.results) {
    if (r.status != result_status::ok) continue;
    const std::string node = host_of(r, doc);
    const std::string where_measured = node.empty() ? host : node;
    std::optional<int> gpu;
    if (const auto index = axis_number(r.axes, "gpu")) gpu = static_cast<int>(*index);
    const gpu_info* info = nullptr;
    if (gpu) {
      const auto it = by_index.find({node, *gpu});
      if (it != by_index.end()) info = it->second;
    }
    const std::string where = gpu ? format_axes(r.axes, "gpu") : format_axes(r.axes);
    for (const auto& [name, m] : r.metrics) {
      if (!std::isfinite(m.median)) continue;
      std::string key = r.id;
      if (!where.empty()) key.append(" ").append(where);
      key.append(" ").append(name);
      out[key].push_back({where_measured, gpu, info, m.median, m.unit.unit, m.unit.direction});
    }
  }
}

std::optional<spread> spread_of(const std::vector<measurement>& values,
                                const outlier_settings& settings) {
  std::vector<double> v;
  v.reserve(values.size());
  for (const measurement& m : values) v.push_back(m.value);
  return spread_of(std::move(v), settings);
}

std::optional<spread> spread_of(std::vector<double> v, const outlier_settings& settings) {
  if (v.size() < settings.min_members || v.empty()) return std::nullopt;
  const double median = summarize(v).median;  // finite values only (add_measurements)
  if (median == 0) return std::nullopt;
  std::vector<double> distance;
  distance.reserve(v.size());
  for (const double x : v) distance.push_back(std::abs(x - median));
  const double robust_sd = mad_to_sd * summarize(distance).median / std::abs(median);
  return spread{median, std::max(settings.min_deviation, settings.mad_multiple * robust_sd)};
}

double deviation(const measurement& m, const spread& s) {
  return (m.value - s.median) / s.median;
}

bool stands_out(const measurement& m, const spread& s) {
  return std::abs(deviation(m, s)) > s.threshold;
}

bool worse(const measurement& m, const spread& s) {
  return m.direction == better::higher ? m.value < s.median : m.value > s.median;
}

std::string signed_percent(double share) {
  std::string text = share > 0 ? "+" : "";
  return text.append(format_number(share * 100)).append("%");
}

}  // namespace gpubench::acceptance::detail
