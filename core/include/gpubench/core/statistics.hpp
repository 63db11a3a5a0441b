// Summary statistics over repetitions: what every metric in a results file carries.
#pragma once

#include <cstddef>
#include <span>

#include "gpubench/core/json.hpp"

namespace gpubench {

struct summary {
  double median = 0;
  double min = 0;
  double max = 0;
  double cv = 0;  // sample standard deviation / mean; 0 when n < 2
  std::size_t n = 0;
};
GPUBENCH_JSON_FIELDS(summary, median, min, max, cv, n)

// Summarizes the samples (one per repetition). Throws std::invalid_argument when empty or when
// a sample is not finite.
[[nodiscard]] summary summarize(std::span<const double> samples);

}  // namespace gpubench
