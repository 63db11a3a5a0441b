// The text `gpubench run` and `gpubench size` print on stdout: one row per metric of each
// result; a sizing with its components; the sizing of a run's workloads.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/core/results.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/serving.hpp"
#include "gpubench/reports/report.hpp"

namespace gpubench::reports {

// Benchmarks skipped whole (on no GPU: every GPU benchmark) are one line per reason after the
// table (skipped_line), not a row each.
void print_summary(std::ostream& out, const results_document& doc);
// "skipped, no GPU found (...): gemm, hbm.copy, pcie.h2d (3)": benchmarks skipped for one reason,
// in the order given.
[[nodiscard]] std::string skipped_line(const std::string& reason,
                                       const std::vector<std::string>& ids);
// The benchmarks of `skipped` (id, reason) grouped by reason, the reasons in the order they first
// appear; the lines skipped_line writes.
[[nodiscard]] std::vector<std::string> skipped_lines(
    const std::vector<std::pair<std::string, std::string>>& skipped);
// "noisy: 2 measurement(s) spread more than 10% between repetitions ...: cpu.augment threads=16;
// ...": the ok results with a metric above vocabulary::noisy_cv, one line; "" without any.
[[nodiscard]] std::string noisy_line(const std::vector<result>& results);
// gpubench size's text: the prediction, every component's ceiling, the advice, what was assumed.
void print_sizing(std::ostream& out, const model::sizing& s);
// size --serve's text: the rates and latencies, the KV cache, each phase's time split, the limit
// and what would move it.
void print_serving(std::ostream& out, const model::serving_result& r);
// size --serve --search: how many layouts meet the targets, and the ten best.
void print_serving_layouts(std::ostream& out, const std::vector<model::serving_layout>& layouts);
// size --search: how many layouts fit, and the ten fastest of them.
void print_layouts(std::ostream& out, const std::vector<model::layout>& layouts);
// The sizing summary `run` prints for its workloads against what it just measured.
void print_sizing_summary(std::ostream& out, const machine_report& report,
                          const std::string& results_file);

}  // namespace gpubench::reports
