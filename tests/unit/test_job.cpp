#include <catch2/catch.hpp>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/harness/job.hpp"

using namespace gpubench;

TEST_CASE("the job layout groups ranks by node", "[job]") {
  const std::vector<std::string> nodes{"a", "a", "b", "a", "b"};
  const job_layout r3 = compute_layout(nodes, 3);
  CHECK(r3.size == 5);
  CHECK(r3.node == "a");
  CHECK(r3.local_rank == 2);
  CHECK(r3.local_size == 3);
  CHECK_FALSE(r3.node_leader);
  CHECK(r3.node_count == 2);
  CHECK(r3.node_index == 0);
  const job_layout r2 = compute_layout(nodes, 2);
  CHECK(r2.node_leader);
  CHECK(r2.local_rank == 0);
  CHECK(r2.local_size == 2);
  CHECK(r2.node_index == 1);
  CHECK(r2.node_ranks == std::vector<std::vector<int>>{{0, 1, 3}, {2, 4}});
  CHECK(r3.node_ranks == r2.node_ranks);
  const job_layout alone = compute_layout({"x"}, 0);
  CHECK(alone.size == 1);
  CHECK(alone.node_leader);
  CHECK(alone.node_ranks == std::vector<std::vector<int>>{{0}});
}

TEST_CASE("disagreeing ranks are named, rank 0's value first", "[job]") {
  CHECK_NOTHROW(require_agreement("the build", {"1.0", "1.0", "1.0"}));
  try {
    require_agreement("the build", {"2.0", "1.0", "2.0", "1.0"});
    FAIL("no error");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()) ==
          "ranks disagree on the build: ranks 0,2 have '2.0'; ranks 1,3 have '1.0'");
  }
  try {
    require_agreement("the suite", {"quick", "full"});
    FAIL("no error");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()) ==
          "ranks disagree on the suite: rank 0 has 'quick'; rank 1 has 'full'");
  }
}

TEST_CASE("a single process is a job of one", "[job]") {
  const auto j = job::start();
  CHECK(j->layout().size == 1);
  CHECK_FALSE(j->distributed());
  CHECK(j->all_gather("x") == std::vector<std::string>{"x"});
  CHECK(j->gather_to_root("y") == std::vector<std::string>{"y"});
  j->barrier();
}

TEST_CASE("results measured by a rank keep its host and rank through JSON", "[job]") {
  results_document doc;
  result r;
  r.id = "host.membw";
  r.host = "node-7";
  r.rank = 13;
  doc.results.push_back(r);
  doc.nodes.push_back(node_entry{"node-7", {12, 13}, system_info{}});
  const json j = doc;
  CHECK(j["results"][0]["host"] == "node-7");
  CHECK(j["results"][0]["rank"] == 13);
  CHECK(j["nodes"][0]["ranks"] == json::array({12, 13}));
  const auto back = j.get<results_document>();
  CHECK(back.results[0].rank == 13);
  CHECK(back.nodes.at(0).host == "node-7");
  // A single-process file has neither.
  results_document single;
  single.results.push_back(result{});
  const json s = single;
  CHECK_FALSE(s.contains("nodes"));
  CHECK_FALSE(s["results"][0].contains("rank"));
}
