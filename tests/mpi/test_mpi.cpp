// Multi-rank runs through the real launcher (CTest label `mpi`): `mpirun` on this machine, with
// ranks given different node names to stand for nodes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>

#include "../cli/process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> small_quick{"run",
                                           "--suite",
                                           "quick",
                                           "--axis",
                                           "host.membw:array_bytes=64MiB",
                                           "--axis",
                                           "nvme.*:file_bytes=256MiB",
                                           "--axis",
                                           "cpu.augment:threads=1"};

// mpirun with one rank per entry: each entry is (node name, extra environment, gpubench args).
struct rank_spec {
  std::string node;
  std::vector<std::string> env;
  std::vector<std::string> args;
};

process_result mpirun(const std::vector<rank_spec>& ranks) {
  std::vector<std::string> argv{MPIEXEC, "--allow-run-as-root", "--oversubscribe"};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1", "-x", "GPUBENCH_NODE_NAME=" + ranks[i].node});
    for (const auto& e : ranks[i].env) {
      argv.insert(argv.end(), {"-x", e});
    }
    argv.push_back(GPUBENCH_EXE);
    argv.insert(argv.end(), ranks[i].args.begin(), ranks[i].args.end());
  }
  return run_program(argv);
}

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("two ranks on two nodes write one results file with both nodes' results", "[mpi]") {
  temp_dir dir;
  const auto args = plus(small_quick, {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"node-a", {}, args}, {"node-b", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  CHECK(doc["meta"]["mpi_ranks"] == 2);
  REQUIRE(doc["nodes"].size() == 2);
  CHECK(doc["nodes"][0]["host"] == "node-a");
  CHECK(doc["nodes"][1]["host"] == "node-b");
  CHECK(doc["nodes"][1]["ranks"] == json::array({1}));
  CHECK(doc["nodes"][1]["system"]["cpu"]["cores"].get<int>() >= 1);
  std::set<std::pair<std::string, int>> host_results;
  for (const auto& res : doc["results"]) {
    REQUIRE(res.contains("rank"));
    REQUIRE(res.contains("host"));
    const std::string id = res["id"];
    if (id == "host.membw" || id == "cpu.augment" || id.rfind("nvme.", 0) == 0) {
      CHECK(res["status"] == "ok");
      host_results.insert({id, res["rank"].get<int>()});
      if (id == "host.membw") {
        // The node's rank widened its launcher binding: every core of the node is measured.
        const int rank = res["rank"].get<int>();
        CHECK(res["axes"]["threads"] == doc["nodes"][rank]["system"]["cpu"]["cores_available"]);
        CHECK(res["axes"]["threads"] == doc["nodes"][rank]["system"]["cpu"]["cores"]);
      }
    } else if (doc["nodes"][0]["system"]["gpus"].empty()) {
      CHECK(res["status"] == "skipped");
      CHECK_FALSE(res["reason"].get<std::string>().empty());
    }
  }
  for (int rank : {0, 1}) {
    for (const char* id : {"host.membw", "cpu.augment", "nvme.seq_read", "nvme.rand_read"}) {
      INFO(id << " rank " << rank);
      CHECK(host_results.count({id, rank}) == 1);
    }
  }
  CHECK_THAT(r.out, Catch::Contains("rank 1@node-b"));
  // Only rank 0 wrote: one results folder, one summary.
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 5);
  CHECK(r.out.find("results: ") == r.out.rfind("results: "));
}

TEST_CASE("two ranks on one node run the host benchmarks once", "[mpi]") {
  temp_dir dir;
  const auto args = plus({"run", "--only", "host.membw", "--axis", "host.membw:array_bytes=16MiB",
                          "--axis", "host.membw:kernel=triad"},
                         {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"same", {}, args}, {"same", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["nodes"].size() == 1);
  CHECK(doc["nodes"][0]["ranks"] == json::array({0, 1}));
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["rank"] == 0);
}

TEST_CASE("ranks that disagree stop with exit 2, naming the ranks", "[mpi]") {
  temp_dir dir;
  const auto out = std::vector<std::string>{"--out", (dir.path / "o").string()};
  const auto suite = mpirun({{"a", {}, plus({"run", "--suite", "quick"}, out)},
                             {"b", {}, plus({"run", "--suite", "full"}, out)}});
  CHECK(suite.exit_code == 2);
  CHECK_THAT(suite.err,
             Catch::Contains("ranks disagree on the suite and its options: rank 0 has 'quick") &&
                 Catch::Contains("rank 1 has 'full"));
  CHECK_FALSE(fs::exists(dir.path / "o"));

  // One node sees two GPUs (a stand-in NVML), the other none.
  const std::string fake = std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR;
  const auto gpus =
      mpirun({{"a", {}, plus(small_quick, out)}, {"b", {fake}, plus(small_quick, out)}});
  CHECK(gpus.exit_code == 2);
  CHECK_THAT(
      gpus.err,
      Catch::Contains("ranks disagree on the GPU count per node: rank 0 has '0'; rank 1 has '2'"));

  // Three ranks on a node with two GPUs.
  const auto crowded = mpirun({{"n", {fake}, plus(small_quick, out)},
                               {"n", {fake}, plus(small_quick, out)},
                               {"n", {fake}, plus(small_quick, out)}});
  CHECK(crowded.exit_code == 2);
  CHECK_THAT(crowded.err, Catch::Contains("node n runs 3 ranks but has 2 GPUs"));

  // A bad flag on every rank: reported once.
  const auto bad =
      mpirun({{"a", {}, {"run", "--only", "no.such"}}, {"b", {}, {"run", "--only", "no.such"}}});
  CHECK(bad.exit_code == 2);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') >= 1);
  CHECK_THAT(bad.err, Catch::Contains("rank 0: --only: expected a known benchmark id"));
}
