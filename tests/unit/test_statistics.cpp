#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "gpubench/core/statistics.hpp"
#include "gpubench/harness/benchmark.hpp"

using gpubench::summarize;

TEST_CASE("summary of an odd number of samples", "[statistics]") {
  const std::vector<double> samples{5, 1, 3};
  const auto s = summarize(samples);
  CHECK(s.n == 3);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  // mean 3, sample stddev 2
  CHECK(s.cv == Approx(2.0 / 3.0));
}

TEST_CASE("median of an even number of samples is the mean of the middle two", "[statistics]") {
  const std::vector<double> samples{4, 1, 3, 2};
  const auto s = summarize(samples);
  CHECK(s.median == 2.5);
  CHECK(s.cv == Approx(std::sqrt(5.0 / 3.0) / 2.5));
}

TEST_CASE("one sample has no spread", "[statistics]") {
  const std::vector<double> samples{7};
  const auto s = summarize(samples);
  CHECK(s.median == 7);
  CHECK(s.cv == 0);
  CHECK(s.n == 1);
}

TEST_CASE("summarize refuses empty and non-finite input", "[statistics]") {
  CHECK_THROWS_AS(summarize(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(summarize(std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()}),
                  std::invalid_argument);
  CHECK_THROWS_AS(summarize(std::vector<double>{std::numeric_limits<double>::infinity()}),
                  std::invalid_argument);
}

TEST_CASE("metric formulas follow docs/methodology.md", "[statistics]") {
  using gpubench::derive_metric;
  using gpubench::metric_kind;
  namespace units = gpubench::units;
  const gpubench::work w{.bytes_read = 2e9, .bytes_written = 1e9, .flops = 4e12, .items = 500};
  CHECK(derive_metric(metric_kind::bandwidth, w, 0.5, units::GBps) == Approx(6.0));
  CHECK(derive_metric(metric_kind::bandwidth, w, 0.5, units::Gbps) == Approx(48.0));
  CHECK(derive_metric(metric_kind::compute, w, 2.0, units::TFLOPs) == Approx(2.0));
  CHECK(derive_metric(metric_kind::items_per_s, w, 0.25, units::per_s) == Approx(2000));
  CHECK(derive_metric(metric_kind::time_per_item, w, 0.001, units::us) == Approx(2.0));
  CHECK(derive_metric(metric_kind::time_per_iteration, w, 0.001, units::us) == Approx(1000));
  CHECK(derive_metric(metric_kind::time_per_iteration, w, 0.001, units::ms) == Approx(1));
  CHECK_THROWS_AS(derive_metric(metric_kind::bandwidth, w, 0, units::GBps), std::invalid_argument);
  CHECK_THROWS_AS(derive_metric(metric_kind::time_per_item, gpubench::work{}, 1, units::us),
                  std::invalid_argument);
  // A unit of another dimension is a bug in the benchmark, not a conversion.
  CHECK_THROWS_AS(derive_metric(metric_kind::compute, w, 1, units::GBps), std::logic_error);
}
