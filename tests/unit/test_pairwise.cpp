// net.pairwise's schedule and its reading of a link matrix (benchmarks/net/pairwise_analysis).
#include <catch2/catch.hpp>

#include <set>

#include "gpubench/benchmarks/net/pairwise_analysis.hpp"
#include "gpubench/benchmarks/net/pairwise_links.hpp"

using namespace gpubench;

namespace {
pairwise::matrix uniform(std::size_t n, double value) {
  return pairwise::matrix(n, std::vector<double>(n, value));
}
const std::vector<std::string> four{"a", "b", "c", "d"};
}  // namespace

TEST_CASE("pairwise rounds: every pair meets once and no node is in two pairs of a round",
          "[unit][pairwise]") {
  CHECK(pairwise::rounds(1).empty());
  for (int n = 2; n <= 17; ++n) {
    INFO(n << " nodes");
    const auto rounds = pairwise::rounds(n);
    CHECK(static_cast<int>(rounds.size()) == (n % 2 == 0 ? n - 1 : n));
    std::set<std::pair<int, int>> met;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [low, high] : round) {
        CHECK(low < high);
        CHECK(low >= 0);
        CHECK(high < n);
        CHECK(busy.insert(low).second);
        CHECK(busy.insert(high).second);
        CHECK(met.insert({low, high}).second);
      }
      // Everyone plays every round, but for one node sitting out when the count is odd.
      CHECK(static_cast<int>(busy.size()) == (n % 2 == 0 ? n : n - 1));
    }
    CHECK(static_cast<int>(met.size()) == n * (n - 1) / 2);
  }
}

TEST_CASE("pairwise findings: a healthy matrix names nothing", "[unit][pairwise]") {
  auto GBps = uniform(4, 24.0);
  GBps[0][1] = 23.0;  // noise
  GBps[2][3] = 24.6;
  const json f = pairwise::findings(GBps, uniform(4, 3.0), four);
  CHECK(f["median_link_GBps"].get<double>() == Approx(24.0));
  CHECK(f["median_latency_us"].get<double>() == Approx(3.0));
  CHECK(f["slow_nodes"].empty());
  CHECK(f["slow_links"].empty());
  CHECK(f["slow_latency_pairs"].empty());
  CHECK_THAT(f["verdict"].get<std::string>(),
             Catch::StartsWith("every link within 80% of the reference link (24 GB/s, 3 us)"));
}

TEST_CASE("pairwise findings: a node whose every link is slow is named, not its links",
          "[unit][pairwise]") {
  auto GBps = uniform(4, 24.0);
  for (std::size_t j = 0; j < 4; ++j) {
    GBps[2][j] = 11.0;  // node c at half rate both ways: a port trained at half speed
    GBps[j][2] = 12.0;
  }
  const json f = pairwise::findings(GBps, uniform(4, 3.0), four);
  REQUIRE(f["slow_nodes"].size() == 1);
  CHECK(f["slow_nodes"][0]["node"] == "c");
  CHECK(f["slow_nodes"][0]["median_GBps"].get<double>() == Approx(11.5));
  CHECK(f["reference_link_GBps"].get<double>() == Approx(24.0));
  CHECK(f["slow_links"].empty());
  CHECK_THAT(f["verdict"].get<std::string>(), Catch::StartsWith("c: its links run at 11.5 GB/s"));
}

TEST_CASE("pairwise findings: one slow direction of one pair is that link", "[unit][pairwise]") {
  auto GBps = uniform(4, 24.0);
  GBps[0][3] = 10.0;
  GBps[1][2] = 19.5;  // 0.81 of the median: within noise and drift, not named
  const json f = pairwise::findings(GBps, uniform(4, 3.0), four);
  CHECK(f["slow_nodes"].empty());
  REQUIRE(f["slow_links"].size() == 1);
  CHECK(f["slow_links"][0]["from"] == "a");
  CHECK(f["slow_links"][0]["to"] == "d");
  CHECK(f["slow_links"][0]["of_median"].get<double>() == Approx(10.0 / 24.0));
  CHECK(f["verdict"] == "a -> d: 10 GB/s, 41.7% of the reference link");
}

TEST_CASE("pairwise findings: with two nodes a slow direction is a link, never a node",
          "[unit][pairwise]") {
  pairwise::matrix GBps{{0, 20.0}, {8.0, 0}};
  const json f = pairwise::findings(GBps, uniform(2, 2.0), {"a", "b"});
  CHECK(f["median_link_GBps"].get<double>() == Approx(14.0));
  CHECK(f["reference_link_GBps"].get<double>() == Approx(17.0));  // the upper quartile
  CHECK(f["slow_nodes"].empty());
  REQUIRE(f["slow_links"].size() == 1);
  CHECK(f["slow_links"][0]["from"] == "b");
}

TEST_CASE("pairwise findings: latency names the node every slow round trip shares",
          "[unit][pairwise]") {
  const std::vector<std::string> six{"a", "b", "c", "d", "e", "f"};
  auto latency = uniform(6, 2.0);
  for (std::size_t j = 0; j < 6; ++j) {
    latency[1][j] = 9.0;
    latency[j][1] = 9.0;
  }
  latency[3][4] = 7.0;  // one slow pair apart from node b
  latency[4][3] = 7.0;
  const json f = pairwise::findings(uniform(6, 24.0), latency, six);
  CHECK(f["reference_latency_us"].get<double>() == Approx(2.0));
  CHECK(f["slow_latency_nodes"] == json::array({"b"}));
  REQUIRE(f["slow_latency_pairs"].size() == 1);
  CHECK(f["slow_latency_pairs"][0]["nodes"] == json::array({"d", "e"}));
  CHECK(f["slow_nodes"].empty());
}

TEST_CASE("pairwise rails: as many as the node with the fewest ranks", "[unit][pairwise]") {
  CHECK(pairwise::rail_count(compute_layout({"a", "a", "b", "a", "b"}, 0)) == 2);
  CHECK(pairwise::rail_count(compute_layout({"a", "b", "a", "b"}, 3)) == 2);
  CHECK(pairwise::rail_count(compute_layout({"a", "a", "a", "b"}, 1)) == 1);
  CHECK(pairwise::rail_count(compute_layout({"a"}, 0)) == 1);
}
