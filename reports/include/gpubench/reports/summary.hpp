// The text `gpubench run` and `gpubench size` print on stdout: one row per metric of each
// result; a sizing with its components; the sizing of a run's workloads.
#pragma once

#include <ostream>

#include "gpubench/core/results.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/reports/report.hpp"

namespace gpubench::reports {

void print_summary(std::ostream& out, const results_document& doc);
// gpubench size's text: the prediction, every component's ceiling, the advice, what was assumed.
void print_sizing(std::ostream& out, const model::sizing& s);
// size --search: how many layouts fit, and the ten fastest of them.
void print_layouts(std::ostream& out, const std::vector<model::layout>& layouts);
// The sizing summary `run` prints for its workloads against what it just measured.
void print_sizing_summary(std::ostream& out, const machine_report& report,
                          const std::string& results_file);

}  // namespace gpubench::reports
