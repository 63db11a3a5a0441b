#include <catch2/catch.hpp>

#include "gpubench/benchmarks/nccl/busbw.hpp"
#include "gpubench/harness/benchmark.hpp"

using namespace gpubench::collectives;

TEST_CASE("busbw factors are nccl-tests'", "[nccl]") {
  // all_reduce moves 2(n-1)/n of the message over each link: 8 GPUs -> 1.75.
  CHECK(bus_factor(collective::all_reduce, 8) == Approx(1.75));
  CHECK(bus_factor(collective::all_reduce, 2) == Approx(1.0));
  CHECK(bus_factor(collective::all_gather, 8) == Approx(0.875));
  CHECK(bus_factor(collective::reduce_scatter, 4) == Approx(0.75));
  CHECK(bus_factor(collective::alltoall, 16) == Approx(15.0 / 16));
  CHECK(bus_factor(collective::broadcast, 8) == Approx(1.0));
  // A 1 GiB all_reduce in 10 ms on 8 GPUs: algbw 107.4 GB/s, busbw 187.9 GB/s.
  const double algbw = (1ULL << 30) / 0.010 / 1e9;
  CHECK(algbw == Approx(107.374));
  CHECK(algbw * bus_factor(collective::all_reduce, 8) == Approx(187.905));
}

TEST_CASE("every collective registers itself with nccl-tests' metrics", "[nccl]") {
  for (const auto& spec : collective_specs) {
    INFO(spec.id);
    const auto* def = gpubench::registry::global().find(spec.id);
    REQUIRE(def != nullptr);
    std::vector<std::string> metrics;
    for (const auto& m : def->metrics()) metrics.push_back(m.name);
    CHECK(metrics == std::vector<std::string>{"us", "algbw_GBps", "busbw_GBps"});
    CHECK(def->find_metric("busbw_GBps")->written().unit == "GB/s");
    CHECK(def->find_metric("us")->direction == gpubench::better::lower);
    CHECK(def->find_axis("bytes") != nullptr);
    CHECK(def->find_axis("placement") != nullptr);
  }
}
