// Like held against like (docs/validate.md, "Fleets"): one figure measured on several GPUs or
// nodes, each value against the median of them all, with a threshold that widens with the
// figure's spread. `gpubench fleet` holds every node's figures to the fleet's; the siblings rule
// of a spec holds each GPU of a node to the node's other GPUs. Internal to acceptance/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/acceptance/validate.hpp"

namespace gpubench::acceptance::detail {

// One value of a figure, and whose it is.
struct measurement {
  std::string host;
  std::optional<int> gpu;  // absent for a node-level figure (host memory, NVMe, CPU)
  // The GPU's entry in the file's system section, where the file has one for it (its UUID and
  // bus id): pointed to, not copied, for each of a fleet's 100,000 GPUs' figures.
  const gpu_info* gpu_entry = nullptr;
  double value = 0;
  std::string unit;
  better direction = better::higher;
};

// Figure ("gemm dtype=bf16 shape=8192x8192x8192 TFLOPs": benchmark, axes but `gpu`, metric) ->
// every value of it.
using figure_values = std::map<std::string, std::vector<measurement>>;

// The median of every ok result's metrics of `doc`, added to `out`. `host` names the machine of
// a single-node file; a multi-node file's results name their own.
void add_measurements(const results_document& doc, const std::string& host, figure_values& out);

// Where a figure's values sit: their median, and how far from it one stands out.
struct spread {
  double median = 0;
  double threshold = 0;  // max(min_deviation, mad_multiple x 1.4826 x MAD / |median|)
};
// nullopt where there is nothing to hold the values to: fewer than settings.min_members, or a
// median of zero.
[[nodiscard]] std::optional<spread> spread_of(std::vector<double> values,
                                              const outlier_settings& settings);
[[nodiscard]] std::optional<spread> spread_of(const std::vector<measurement>& values,
                                              const outlier_settings& settings);

// (value - median) / median.
[[nodiscard]] double deviation(const measurement& m, const spread& s);
// Beyond the threshold; worse: in the figure's worse direction (a lower rate, a longer time).
[[nodiscard]] bool stands_out(const measurement& m, const spread& s);
[[nodiscard]] bool worse(const measurement& m, const spread& s);
// A deviation as text: "-12.9%", "+6%".
[[nodiscard]] std::string signed_percent(double share);

}  // namespace gpubench::acceptance::detail
