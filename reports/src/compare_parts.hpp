// The parts of gpubench compare one file each: training (compare.cpp), serving
// (compare_serving.cpp), rendering (compare_render.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/reports/compare.hpp"

namespace gpubench::reports {

// The machines within tie_share of the best value (highest, or lowest when `lower`).
[[nodiscard]] std::vector<std::size_t> ties(const std::vector<std::optional<double>>& values,
                                            bool lower);

// The fastest (highest rate) and cheapest (lowest cost) machines, and those tied with each.
struct best_machines {
  std::optional<std::size_t> fastest;
  std::optional<std::size_t> cheapest;
  std::vector<std::size_t> fastest_ties;
  std::vector<std::size_t> cheapest_ties;
};
[[nodiscard]] best_machines pick_best(const std::vector<std::optional<double>>& rates,
                                      const std::vector<std::optional<double>>& costs);
// Sets a compared workload's fastest, cheapest and their ties (training or serving alike).
template <typename Compared>
void set_best(Compared& w, const std::vector<std::optional<double>>& rates,
              const std::vector<std::optional<double>>& costs) {
  best_machines best = pick_best(rates, costs);
  w.fastest = best.fastest;
  w.cheapest = best.cheapest;
  w.fastest_ties = std::move(best.fastest_ties);
  w.cheapest_ties = std::move(best.cheapest_ties);
}
// "fastest", "cheapest", both or neither for machine i; "(tie)" when another is within
// tie_share of it.
[[nodiscard]] std::string best_label(const std::vector<std::size_t>& fastest_ties,
                                     const std::vector<std::size_t>& cheapest_ties, std::size_t i);

// compare --serve: each workload (a decoder) on each machine, its best layout and its cost.
// Throws input_error when no workload is named or one is not a decoder.
[[nodiscard]] std::vector<compared_serving> compare_serving(
    const std::vector<compared_machine>& machines, const std::vector<std::string>& workloads,
    const compare_options& options);
[[nodiscard]] json serving_json(const comparison& c);  // [] without --serve
// The serving tables of the text and the HTML page ("" without --serve).
[[nodiscard]] std::string serving_text(const comparison& c);
[[nodiscard]] std::string serving_html(const comparison& c);

}  // namespace gpubench::reports
