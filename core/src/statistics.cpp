#include "gpubench/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace gpubench {

summary summarize(std::span<const double> samples) {
  if (samples.empty()) {
    throw std::invalid_argument("summarize: no samples");
  }
  for (double x : samples) {
    if (!std::isfinite(x)) {
      throw std::invalid_argument("summarize: a sample is not finite");
    }
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();

  summary s;
  s.n = n;
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (n >= 2) {
    const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    double squares = 0;
    for (double x : sorted) {
      squares += (x - mean) * (x - mean);
    }
    const double stddev = std::sqrt(squares / static_cast<double>(n - 1));
    s.cv = mean != 0 ? stddev / std::abs(mean) : 0;
  }
  return s;
}

}  // namespace gpubench
