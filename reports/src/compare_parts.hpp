// The parts of gpubench compare one file each: training (compare.cpp), serving
// (compare_serving.cpp), rendering (compare_render.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/reports/compare.hpp"

namespace gpubench::reports {

// The machines within tie_share of the best value (highest, or lowest when `lower`).
[[nodiscard]] std::vector<std::size_t> ties(const std::vector<std::optional<double>>& values,
                                            bool lower);

// compare --serve: each workload (a decoder) on each machine, its best layout and its cost.
// Throws input_error when no workload is named or one is not a decoder.
[[nodiscard]] std::vector<compared_serving> compare_serving(
    const std::vector<compared_machine>& machines, const std::vector<std::string>& workloads,
    const compare_options& options);
[[nodiscard]] json serving_question_json(const serving_question& q);
[[nodiscard]] json serving_json(const comparison& c);  // [] without --serve
// The serving tables of the text and the HTML page ("" without --serve).
[[nodiscard]] std::string serving_text(const comparison& c);
[[nodiscard]] std::string serving_html(const comparison& c);

}  // namespace gpubench::reports
