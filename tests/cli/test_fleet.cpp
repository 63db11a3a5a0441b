// `gpubench fleet` end to end: fleets made from the 2-GPU fixture, each node's figures moved by
// run-to-run noise within +-2%, one GPU made 12% slower at bf16; folders, CSV, exit codes.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;

namespace {

// Writes `nodes` results files into `dir`: node-N with GPU UUIDs of its own and every median
// moved by a fixed pseudo-random factor in [0.98, 1.02]; `slow` names the node whose GPU 1 runs
// bf16 GEMMs 12% slower.
void write_fleet(const std::filesystem::path& dir, int nodes, int slow) {
  const json base =
      json::parse(read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/results-2gpu-fixture.json"));
  for (int n = 0; n < nodes; ++n) {
    json doc = base;
    doc["system"]["host"] = "node-" + std::to_string(n);
    for (json& g : doc["system"]["gpus"]) {
      g["uuid"] = "GPU-" + std::to_string(n) + "-" + g["index"].dump();
    }
    int k = 0;
    for (json& r : doc["results"]) {
      if (!r.contains("metrics")) continue;
      const bool slow_gpu = n == slow && r["id"] == "gemm" && r["axes"].value("gpu", -1) == 1 &&
                            r["axes"].value("dtype", "") == "bf16";
      for (auto& [name, m] : r["metrics"].items()) {
        const double noise = 1 + 0.02 * std::sin(1.7 * (++k) + 2.3 * n);
        m["median"] = m["median"].get<double>() * noise * (slow_gpu ? 0.88 : 1.0);
      }
    }
    write_file(dir / ("node-" + std::to_string(n) + ".json"), doc.dump());
  }
}

}  // namespace

TEST_CASE("fleet: a GPU 12% slower than its fleet stands out while noise of 2% does not",
          "[cli][fleet]") {
  temp_dir dir;
  write_fleet(dir.path, 4, 2);
  const auto r = run_gpubench(
      {"fleet", dir.path.string(), "--json", "--csv", (dir.path / "fleet.csv").string()});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const json f = json::parse(r.out);
  CHECK(f.at("schema") == "gpubench.fleet/1");
  CHECK(f.at("passed") == false);
  REQUIRE(f.at("nodes").size() == 4);
  CHECK(f.at("nodes").at(0).at("host") == "node-0");
  CHECK(f.at("figures_compared").get<int>() >= 20);
  // Only the slow GPU's bf16 GEMMs (one per shape in the fixture), each about 12% under.
  REQUIRE(!f.at("outliers").empty());
  for (const json& o : f.at("outliers")) {
    INFO(o.dump());
    CHECK(o.at("host") == "node-2");
    CHECK(o.at("gpu") == 1);
    CHECK(o.at("uuid") == "GPU-2-1");
    CHECK(o.at("figure").get<std::string>().rfind("gemm dtype=bf16 ", 0) == 0);
    CHECK(o.at("worse") == true);
    CHECK(o.at("deviation").get<double>() == Approx(-0.12).margin(0.03));
    CHECK(o.at("threshold").get<double>() >= 0.05);
  }
  // The same rows for a ticket.
  const std::string csv = read_file(dir.path / "fleet.csv");
  CHECK(csv.rfind("kind,host,gpu,uuid,subject,verdict,value,fleet_median,", 0) == 0);
  CHECK(csv.find("\noutlier,node-2,1,GPU-2-1,gemm dtype=bf16 ") != std::string::npos);
  CHECK(csv.find("\nnode,node-3,") != std::string::npos);

  // The text names the node and the figure.
  const auto text = run_gpubench({"fleet", dir.path.string()});
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("node-2  GPU 1 (0000:19:00.0)  gemm dtype=bf16") != std::string::npos);
  // The fixture lacks the same measurements on every node (no ECC, power, ... figures): one line
  // for the four, not one each.
  CHECK(text.out.find("4 nodes (node-0, node-1, node-2, node-3): ") != std::string::npos);
  CHECK(text.out.find("node-0: ") == std::string::npos);
}

TEST_CASE("fleet: every node passing its spec and nothing standing out is exit 0", "[cli][fleet]") {
  temp_dir dir;
  const auto results = dir.path / "results";
  std::filesystem::create_directories(results);
  write_fleet(results, 5, -1);
  // A spec the fixture meets (its bf16 GEMM is under the shipped H100 spec's floor).
  write_file(dir.path / "spec.json",
             R"({"schema": "gpubench.spec/1", "name": "fleet-test", "description": "",
                 "figures": [{"name": "hbm copy", "benchmark": "hbm.copy", "metric": "GBps",
                              "per": "gpu", "expected": 2540.0, "floor": 0.75}]})");
  auto r = run_gpubench(
      {"fleet", results.string(), "--spec", (dir.path / "spec.json").string(), "--json"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const json f = json::parse(r.out);
  CHECK(f.at("passed") == true);
  CHECK(f.at("outliers").empty());
  for (const json& n : f.at("nodes")) CHECK(n.at("verdict") == "pass");

  // Files named one by one count as the folder does; the shipped spec fails the fixture's bf16.
  r = run_gpubench({"fleet", (results / "node-0.json").string(), (results / "node-1.json").string(),
                    (results / "node-2.json").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.out.rfind("FAIL: 3 nodes, 0 pass, 0 warn, 3 fail", 0) == 0);
}

namespace {

// Eight-GPU nodes (tests/data/validate-8gpu.json) named `hosts`, each with the fault its name
// says (fixtures.hpp) or none: "ok-1", "warn-fp8", "fail-gpu5".
void write_eight_gpu_fleet(const std::filesystem::path& dir,
                           const std::vector<std::string>& hosts) {
  const std::string data_dir = GPUBENCH_TEST_DATA_DIR;
  for (const std::string& host : hosts) {
    nlohmann::ordered_json doc =
        host.rfind("warn-fp8", 0) == 0 ? fault_document(data_dir, "fp8-warn")
        : host.rfind("fail-gpu5", 0) == 0
            ? fault_document(data_dir, "gpu5-slow")
            : nlohmann::ordered_json::parse(read_file(data_dir + "/validate-8gpu.json"));
    doc["system"]["host"] = host;
    write_file(dir / (host + ".json"), doc.dump());
  }
}

}  // namespace

// One verdict model (vocabulary::verdict): a node that only warned is WARN in the fleet as in
// validate (exit 0), counted and named, and the nodes that need a look come first.
TEST_CASE("fleet: warnings are named and counted, nodes that fail or warn first", "[cli][fleet]") {
  temp_dir dir;
  write_eight_gpu_fleet(dir.path, {"ok-1", "ok-2", "warn-fp8", "ok-3"});
  auto r = run_gpubench({"fleet", dir.path.string(), "--json"});
  INFO(r.err);
  CHECK(r.exit_code == 0);  // a warning does not fail the fleet, as it does not fail validate
  json f = json::parse(r.out);
  CHECK(f.at("passed") == true);
  CHECK(f.at("verdict") == "warn");
  CHECK(f.at("node_counts") == json({{"pass", 3}, {"warn", 1}, {"fail", 0}}));
  const json& warned = f.at("nodes").at(0);
  CHECK(warned.at("host") == "warn-fp8");
  CHECK(warned.at("verdict") == "warn");
  CHECK(warned.at("rules_warned") == 1);
  CHECK(warned.at("rules_failed") == 0);
  REQUIRE(warned.at("warnings").size() == 1);
  CHECK_THAT(warned.at("warnings").at(0).get<std::string>(),
             Catch::StartsWith("gemm fp8 GPU 3 (0000:5d:00.0): WARN, 1060 TFLOP/s"));
  const json& finding = warned.at("findings").at(0);
  CHECK(finding.at("rule") == "gemm fp8");
  CHECK(finding.at("status") == "warn");
  CHECK(finding.at("gpu") == 3);
  CHECK(finding.at("pci_bus_id") == "0000:5d:00.0");
  for (std::size_t i = 1; i < 4; ++i) CHECK(f.at("nodes").at(i).at("verdict") == "pass");

  r = run_gpubench({"fleet", dir.path.string()});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("WARN: 4 nodes, 3 pass, 1 warn, 0 fail;"));
  CHECK_THAT(r.out, Catch::Contains("\nwarn-fp8: gemm fp8 GPU 3 (0000:5d:00.0): WARN, 1060 "));

  // A node whose GPU 5 is 13% slower than its siblings fails (the spec's siblings rule) and comes
  // first, the warning next; its GPU named by index and bus id.
  write_eight_gpu_fleet(dir.path, {"fail-gpu5"});
  r = run_gpubench({"fleet", dir.path.string(), "--json"});
  CHECK(r.exit_code == 1);
  f = json::parse(r.out);
  CHECK(f.at("verdict") == "fail");
  std::vector<std::string> order;
  for (const json& n : f.at("nodes")) order.push_back(n.at("host"));
  CHECK(order == std::vector<std::string>{"fail-gpu5", "warn-fp8", "ok-1", "ok-2", "ok-3"});
  const json& failed = f.at("nodes").at(0);
  CHECK(failed.at("families").at("siblings") == "fail");
  CHECK(failed.at("findings").at(0).at("pci_bus_id") == "0000:ab:00.0");
  bool outlier_named = false;
  for (const json& o : f.at("outliers")) {
    if (o.at("host") == "fail-gpu5" && o.at("gpu") == 5) {
      CHECK(o.at("pci_bus_id") == "0000:ab:00.0");
      CHECK(o.at("verdict") == "fail");
      outlier_named = true;
    }
  }
  CHECK(outlier_named);
}

// An acceptance check that passed over a broken file would hide exactly the broken node: every
// .json of the folder that is not a readable results file fails the fleet, named, as does a host
// name two files share.
TEST_CASE(
    "fleet: a truncated, other-schema or duplicate-host file in a folder fails the fleet, "
    "named",
    "[cli][fleet]") {
  temp_dir dir;
  write_eight_gpu_fleet(dir.path, {"ok-1", "ok-2"});
  const std::string whole = read_file((dir.path / "ok-1.json").string());
  write_file(dir.path / "ok-3.json", whole.substr(0, whole.size() / 2));  // cut off mid-write
  write_file(dir.path / "watch.json", R"({"schema": "gpubench.watch/1"})");
  auto r = run_gpubench({"fleet", dir.path.string(), "--json"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  json f = json::parse(r.out);
  CHECK(f.at("node_counts") == json({{"pass", 2}, {"warn", 0}, {"fail", 2}}));
  std::map<std::string, std::string> problems;
  for (const json& n : f.at("nodes")) {
    if (!n.at("problems").empty()) problems[n.at("file")] = n.at("problems").at(0);
  }
  CHECK_THAT(problems[(dir.path / "ok-3.json").string()],
             Catch::Contains("not a readable results file") && Catch::Contains("valid JSON"));
  CHECK_THAT(problems[(dir.path / "watch.json").string()],
             Catch::Contains("schema 'gpubench.watch/1'"));
  r = run_gpubench({"fleet", dir.path.string()});
  CHECK_THAT(r.out,
             Catch::Contains((dir.path / "watch.json").string() + ": not a readable results file"));

  // Two files of one host: both measured nodes stay, the second is failed and names the first.
  std::filesystem::remove(dir.path / "ok-3.json");
  std::filesystem::remove(dir.path / "watch.json");
  std::filesystem::copy_file(dir.path / "ok-2.json", dir.path / "ok-2-again.json");
  r = run_gpubench({"fleet", dir.path.string()});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("ok-2: its host name is also " +
                                    (dir.path / "ok-2-again.json").string() + "'s"));

  // A folder of bad files only: exit 2, and the one line names them and why.
  temp_dir bad;
  write_file(bad.path / "cut.json", whole.substr(0, whole.size() / 2));
  write_file(bad.path / "watch.json", R"({"schema": "gpubench.watch/1"})");
  r = run_gpubench({"fleet", bad.path.string()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no gpubench.results/1 file in this folder (" +
                                    (bad.path / "cut.json").string() + ": ") &&
                        Catch::Contains((bad.path / "watch.json").string() +
                                        ": not a gpubench.results/1 file (schema "
                                        "'gpubench.watch/1')"));
}

TEST_CASE("fleet: bad input is exit 2 with one line", "[cli][fleet]") {
  temp_dir dir;
  write_file(dir.path / "notes.txt", "not results");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fleet"},
        std::vector<std::string>{"fleet", (dir.path / "absent").string()},
        std::vector<std::string>{"fleet", dir.path.string()},  // no results file in it
        std::vector<std::string>{"fleet", (dir.path / "notes.txt").string()},
        std::vector<std::string>{"fleet",
                                 std::string(GPUBENCH_TEST_DATA_DIR) + "/results-2gpu-fixture.json",
                                 "--spec", "nosuch"}}) {
    const auto r = run_gpubench(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("export --prometheus: bad input is exit 2 with one line", "[cli][export]") {
  temp_dir dir;
  write_file(dir.path / "other.json", R"({"schema": "gpubench.suite/1"})");
  write_file(dir.path / "fleet.json",
             R"({"schema": "gpubench.fleet/1", "passed": true, "nodes": [], "outliers": []})");
  const std::string fixture = std::string(GPUBENCH_TEST_DATA_DIR) + "/results-2gpu-fixture.json";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", fixture},  // no format named
        std::vector<std::string>{"export", "--prometheus", (dir.path / "absent.json").string()},
        std::vector<std::string>{"export", "--prometheus", (dir.path / "other.json").string()},
        std::vector<std::string>{"export", "--prometheus", fixture, "--spec", "nosuch"},
        // A fleet check's nodes were validated when it was made.
        std::vector<std::string>{"export", "--prometheus", (dir.path / "fleet.json").string(),
                                 "--spec", "h100-sxm5-80gb"}}) {
    const auto r = run_gpubench(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // --out writes the file whole; standard output then stays empty.
  const auto r = run_gpubench(
      {"export", "--prometheus", fixture, "--out", (dir.path / "gpubench.prom").string()});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(read_file(dir.path / "gpubench.prom").find("# TYPE gpubench_gemm_tflops gauge\n") !=
        std::string::npos);
}
