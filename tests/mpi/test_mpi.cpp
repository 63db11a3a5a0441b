// Multi-rank runs through the real launcher (CTest label `mpi`): `mpirun` on this machine, with
// ranks given different node names to stand for nodes.
#include <catch2/catch.hpp>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "../cli/doc_table.hpp"
#include "../cli/process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> small_quick{
    "run", "--suite", "quick", "--axis", "host.membw:array_bytes=64MiB", "--axis",
    "nvme.*:file_bytes=256MiB",
    // Fewer reads in flight, so fewer per repetition: the
    // ranks share one disk and these tests run serially.
    "--axis", "nvme.*:queue_depth=4", "--axis", "cpu.augment:threads=1",
    // A per-node CPU case is there already (cpu.augment); the DataLoader's would add a minute.
    "--skip", "cpu.dataloader"};

// mpirun with one rank per entry: each entry is (node name, extra environment, gpubench args).
struct rank_spec {
  std::string node;
  std::vector<std::string> env;
  std::vector<std::string> args;
  std::vector<std::string> wrapper = {};  // runs gpubench (its path and args follow)
};

process_result mpirun(const std::vector<rank_spec>& ranks) {
  std::vector<std::string> argv{MPIEXEC, "--allow-run-as-root", "--oversubscribe"};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1", "-x", "GPUBENCH_NODE_NAME=" + ranks[i].node});
    for (const auto& e : ranks[i].env) {
      argv.insert(argv.end(), {"-x", e});
    }
    argv.insert(argv.end(), ranks[i].wrapper.begin(), ranks[i].wrapper.end());
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
    if (id == "host.membw" || id == "cpu.augment" || id.rfind("nvme.", 0) == 0 ||
        id == "net.pairwise") {
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
    for (const char* id :
         {"host.membw", "cpu.augment", "nvme.seq_read", "nvme.rand_read", "net.pairwise"}) {
      INFO(id << " rank " << rank);
      CHECK(host_results.count({id, rank}) == 1);
    }
  }
  CHECK_THAT(r.out, Catch::Contains("rank 1@node-b"));
  // Only rank 0 wrote: one results folder, one summary.
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 5);
  CHECK(r.out.find("results: ") == r.out.rfind("results: "));
}

TEST_CASE("net.pairwise measures every link between three nodes, both ways", "[mpi]") {
  temp_dir dir;
  const auto args = plus({"run", "--only", "net.pairwise", "--axis", "net.pairwise:bytes=256KiB",
                          "--axis", "net.pairwise:sweeps=2"},
                         {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"node-a", {}, args}, {"node-b", {}, args}, {"node-c", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["results"].size() == 3);  // one per node
  std::set<std::string> hosts;
  for (const auto& res : doc["results"]) {
    INFO(res.dump());
    REQUIRE(res["status"] == "ok");
    CHECK(res["verified"] == true);
    hosts.insert(res["host"].get<std::string>());
    const json& info = res["info"];
    CHECK(info["nodes"] == json::array({"node-a", "node-b", "node-c"}));
    CHECK(info["window"] == 16);  // 64 MiB of 256 KiB messages, capped at 16 in flight
    REQUIRE(info["links"].size() == 6);
    std::set<std::pair<std::string, std::string>> links;
    for (const auto& link : info["links"]) {
      links.insert({link["from"].get<std::string>(), link["to"].get<std::string>()});
      CHECK(link["GBps"].get<double>() > 0);
      CHECK(link["GBps_min"].get<double>() <= link["GBps"].get<double>());
      CHECK(link["GBps"].get<double>() <= link["GBps_max"].get<double>());
      CHECK(link["latency_us"].get<double>() > 0);
    }
    CHECK(links.size() == 6);
    CHECK(info["findings"].contains("verdict"));
    // Every node's result holds the same matrix; its metrics are its own links'.
    CHECK(info["links"] == doc["results"][0]["info"]["links"]);
    const json& m = res["metrics"];
    CHECK(m["send_GBps_min"]["median"].get<double>() > 0);
    CHECK(m["receive_GBps_min"]["median"].get<double>() > 0);
    CHECK(m["latency_us_max"]["median"].get<double>() > 0);
    CHECK(m["link_GBps_median"]["unit"] == "GB/s");
  }
  CHECK(hosts == std::set<std::string>{"node-a", "node-b", "node-c"});
}

TEST_CASE("net.pairwise_nccl across two nodes names what it lacks here", "[mpi]") {
  // Two nodes of an MPI job, but this build machine has no GPU (or no NCCL): each node's leader
  // reports the case skipped with that reason, and the job ends cleanly.
  temp_dir dir;
  const auto args =
      plus({"run", "--only", "net.pairwise_nccl"}, {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"node-a", {}, args}, {"node-b", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE_FALSE(doc["results"].empty());
  if (!doc["nodes"][0]["system"]["gpus"].empty()) return;  // a GPU node: not what this checks
  for (const auto& res : doc["results"]) {
    INFO(res.dump());
    CHECK(res["id"] == "net.pairwise_nccl");
    CHECK(res["status"] == "skipped");
    CHECK_THAT(res["reason"].get<std::string>(),
               Catch::Contains("GPU") || Catch::StartsWith("built without"));
  }
}

TEST_CASE("net.pairwise_nccl pairs local rank r of every node and names a rank without a rail",
          "[mpi]") {
  // node-a runs two ranks, node-b one: rail 0 (ranks 0 and 2) exists, rank 1 has no peer on
  // node-b. Every rank reports the case (it runs per rank, on its own GPU).
  temp_dir dir;
  const auto args =
      plus({"run", "--only", "net.pairwise_nccl"}, {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"node-a", {}, args}, {"node-a", {}, args}, {"node-b", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["results"].size() == 3);
  std::set<int> ranks;
  for (const auto& res : doc["results"]) {
    INFO(res.dump());
    CHECK(res["id"] == "net.pairwise_nccl");
    const int rank = res["rank"].get<int>();
    ranks.insert(rank);
    if (rank != 1) continue;
    CHECK(res["status"] == "skipped");
    const std::string reason = res["reason"].get<std::string>();
    if (reason.rfind("built without", 0) == 0) continue;  // a build without CUDA or NCCL
    CHECK(reason ==
          "local rank 1 of node-a has no rail: node node-b runs 1 rank, so only rail 0 is "
          "measured (local rank r of every node pairs with local rank r; launch as many ranks on "
          "every node)");
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
}

TEST_CASE("net.pairwise on one node is skipped with the reason", "[mpi]") {
  temp_dir dir;
  const auto args = plus({"run", "--only", "net.pairwise"}, {"--out", (dir.path / "o").string()});
  const auto r = mpirun({{"same", {}, args}, {"same", {}, args}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["status"] == "skipped");
  CHECK_THAT(doc["results"][0]["reason"].get<std::string>(),
             Catch::StartsWith("needs 2 or more nodes in an MPI job"));
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
  CHECK_THAT(crowded.err,
             Catch::Contains("node n, rank 2: local rank 2 of 3 on a node where the ranks see 2 "
                             "GPUs: start one rank per GPU"));

  // A bad flag on every rank: reported once.
  const auto bad =
      mpirun({{"a", {}, {"run", "--only", "no.such"}}, {"b", {}, {"run", "--only", "no.such"}}});
  CHECK(bad.exit_code == 2);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') >= 1);
  CHECK_THAT(bad.err, Catch::Contains("rank 0: --only: expected a known benchmark id"));
}

TEST_CASE(
    "a rank killed mid-run ends the job without a hang, rank 0 keeping its results, as "
    "docs/reliability.md lists",
    "[mpi][reliability]") {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  const auto args = plus({"run", "--suite", "quick", "--only", "host.membw", "--axis",
                          "host.membw:array_bytes=16MiB,32MiB,48MiB,64MiB", "--out", out.string()},
                         {});
  // Rank 1 is SIGKILLed once rank 0 has saved its first result. Open MPI then signals rank 0
  // (SIGTERM, SIGKILL a second later) and ends the job.
  const std::string results = (out / "results.json").string();
  const std::vector<std::string> killer{"/bin/sh", "-c",
                                        "\"$@\" & p=$!; until grep -qs '\"id\"' " + results +
                                            "; do sleep 0.05; done; kill -9 $p; wait $p",
                                        "sh"};
  const auto start = std::chrono::steady_clock::now();
  const auto r = mpirun({{"a", {}, args}, {"b", {}, args, killer}});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(seconds < 60);
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["meta"]["interrupted"] == true);
  REQUIRE_FALSE(doc["results"].empty());
  for (const auto& res : doc["results"]) CHECK(res["status"] == "ok");
  CHECK_THAT(r.err, Catch::Contains("holds rank 0's finished results only"));
  check_docs_table("mpi fault", "tests/mpi/test_mpi.cpp",
                   "| fault | how the test provokes it | what gpubench did |\n|---|---|---|\n"
                   "| an MPI rank dies mid-run | `kill -9` of rank 1 (of 2, under mpirun) once "
                   "rank 0 saved its first result | mpirun ends the job at once, exit non-zero; "
                   "rank 0 leaves its barrier on the launcher's SIGTERM, exits 3 and keeps its "
                   "finished results in results.json marked interrupted (no gather: the other "
                   "ranks' results are lost) |\n");
}
