// The short summary `gpubench run` prints on stdout: one row per metric of each result.
#pragma once

#include <ostream>

#include "gpubench/results.hpp"

namespace gpubench::reports {

void print_summary(std::ostream& out, const results_document& doc);

}  // namespace gpubench::reports
