// `gpubench validate` end to end: the synthetic fixtures of tests/data (one healthy machine, and
// one patch of it per fault), the shipped specs, spec files with mistakes, fleet baselines, and
// the health fields the stand-in NVML reports for a real run on this machine.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "fixtures.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;

namespace {

const std::string data = GPUBENCH_TEST_DATA_DIR;

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

// "rule subject" of every rule with this status.
std::set<std::string> rules_with(const json& v, const std::string& status) {
  std::set<std::string> out;
  for (const auto& r : v["rules"]) {
    if (r["status"] == status)
      out.insert(r["rule"].get<std::string>() + " " + r["subject"].get<std::string>());
  }
  return out;
}

// The fault's fixture (fixtures.hpp) written into `dir`: its path.
std::string fault_fixture(const temp_dir& dir, const std::string& name) {
  const std::string path = (dir.path / ("validate-" + name + ".json")).string();
  write_file(path, fault_document(data, name).dump(1));
  return path;
}

json validate_json(const std::vector<std::string>& args, int expected_exit) {
  std::vector<std::string> all{"validate"};
  all.insert(all.end(), args.begin(), args.end());
  all.emplace_back("--json");
  const auto r = run_gpubench(all);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == expected_exit);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("validate: a healthy machine passes every rule of its own spec, exit 0",
          "[cli][validate]") {
  const auto r = run_gpubench({"validate", data + "/validate-healthy.json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(last_line(r.out) == "PASS: 39 rules against spec h100-sxm5-80gb");
  const json v = validate_json({data + "/validate-healthy.json"}, 0);
  CHECK(v["schema"] == "gpubench.validation/1");
  CHECK(v["spec"]["name"] == "h100-sxm5-80gb");
  CHECK(v["passed"] == true);
  CHECK(v["counts"]["fail"] == 0);
  CHECK(v["counts"]["missing"] == 0);
  CHECK(v["counts"]["pass"] == 39);
  // Every kind of rule took part.
  std::set<std::string> kinds;
  for (const auto& rule : v["rules"]) kinds.insert(rule["rule"].get<std::string>());
  for (const char* kind :
       {"gpu model", "pcie link", "ecc", "memory errors", "nvlink links", "power limit",
        "throttling", "sustained drop", "sustained rate", "sm clock", "peer access", "gemm bf16",
        "gemm fp8", "hbm copy", "pcie h2d", "pcie d2h", "p2p copy uni"}) {
    CHECK(kinds.count(kind) == 1);
  }
}

TEST_CASE("a results file whose name is not UTF-8 still gives valid --json, the byte replaced",
          "[cli][validate]") {
  // Paths are bytes: a Latin-1 name (0xE9) used to end --json with nlohmann's type_error.316.
  temp_dir dir;
  const std::string file = (dir.path / "r\xe9sultats.json").string();
  std::filesystem::copy_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json", file);
  const json v = validate_json({file}, 0);
  CHECK(v["passed"] == true);
  CHECK_THAT(v.dump(), Catch::Contains("r\xef\xbf\xbdsultats.json"));  // U+FFFD in UTF-8
}

TEST_CASE("validate names each fault of the fixtures and exits 1", "[cli][validate]") {
  const std::map<std::string, std::set<std::string>> faults{
      {"pcie-gen3-x8", {"pcie link GPU 1", "pcie h2d GPU 1", "pcie d2h GPU 1"}},
      {"thermal-throttle",
       {"throttling GPU 1", "sustained drop GPU 1", "sustained rate GPU 1", "sm clock GPU 1"}},
      {"hbm-low", {"hbm copy GPU 0"}},
      {"hbm-implausible", {"hbm copy GPU 0"}},
      {"nvlink-missing", {"nvlink links GPU 1", "p2p copy uni GPUs 0>1", "p2p copy uni GPUs 1>0"}},
  };
  temp_dir dir;
  for (const auto& [name, expected] : faults) {
    INFO(name);
    const std::string file = fault_fixture(dir, name);
    const json v = validate_json({file}, 1);
    CHECK(v["passed"] == false);
    CHECK(rules_with(v, "fail") == expected);
    CHECK(rules_with(v, "missing").empty());
    const auto text = run_gpubench({"validate", file});
    CHECK(text.exit_code == 1);
    CHECK_THAT(last_line(text.out), Catch::StartsWith("FAIL: " + std::to_string(expected.size()) +
                                                      " failed, 0 not measured, of 39 rules"));
    CHECK_THAT(last_line(text.out), Catch::Contains(*expected.begin()));
  }
  // The link rule says what it saw under load, the throttle rule which reasons were forbidden.
  const json pcie = validate_json({fault_fixture(dir, "pcie-gen3-x8")}, 1);
  for (const auto& rule : pcie["rules"]) {
    if (rule["rule"] == "pcie link" && rule["subject"] == "GPU 1") {
      CHECK(rule["measured"] == "Gen3 x8 under load");
      CHECK(rule["expected"] == "Gen5 x16");
    }
  }
  const json hot = validate_json({fault_fixture(dir, "thermal-throttle")}, 1);
  for (const auto& rule : hot["rules"]) {
    if (rule["rule"] == "throttling" && rule["subject"] == "GPU 1") {
      CHECK(rule["measured"] == "hw_thermal_slowdown, sw_thermal_slowdown");
    }
  }
}

TEST_CASE("validate: an implausible gemm figure fails its own rule, not the burn's",
          "[cli][validate]") {
  // The burn's sustained rate is held to the gemm figure of its dtype and shape; 1e300 TFLOP/s
  // used to fail that row too, with a detail that blamed the sustained load.
  temp_dir dir;
  const json v = validate_json({fault_fixture(dir, "gemm-implausible")}, 1);
  CHECK(rules_with(v, "fail") == std::set<std::string>{"gemm bf16 GPU 0"});
  CHECK(rules_with(v, "missing") == std::set<std::string>{"sustained rate GPU 0"});
  for (const auto& rule : v["rules"]) {
    if (rule["rule"] == "gemm bf16" && rule["subject"] == "GPU 0") {
      CHECK_THAT(rule["detail"].get<std::string>(), Catch::StartsWith("implausible"));
    }
    if (rule["rule"] == "sustained rate" && rule["subject"] == "GPU 0") {
      CHECK_THAT(rule["detail"].get<std::string>(),
                 Catch::Contains("no usable gemm reference") &&
                     Catch::Contains("first tenth (740 TFLOP/s)"));
    }
    if (rule["rule"] == "sustained rate" && rule["subject"] == "GPU 1") {
      CHECK(rule["status"] == "pass");
    }
  }
}

TEST_CASE("validate: a system spec adds the system's rules to its GPU's", "[cli][validate]") {
  const json v = validate_json({data + "/validate-healthy.json", "--spec", "dgx-h100"}, 1);
  CHECK(v["spec"]["name"] == "dgx-h100");
  CHECK(rules_with(v, "fail").count("gpu count machine") == 1);
  CHECK(rules_with(v, "n/a").count("allreduce busbw machine") == 1);  // needs 8 GPUs
  CHECK(rules_with(v, "pass").count("hbm copy GPU 0") == 1);          // from h100-sxm5-80gb
}

// One InfiniBand NDR port, up, as the results file records it.
json ndr_port(const std::string& device, const std::string& netdev) {
  return {{"device", device},
          {"port", 1},
          {"link_layer", "InfiniBand"},
          {"state", "ACTIVE"},
          {"physical_state", "LinkUp"},
          {"rate_Gbps", 400.0},
          {"width", "4X"},
          {"firmware", "28.39.1002"},
          {"netdev", netdev}};
}

// The InfiniBand ports of a system spec (dgx-h100: 8 at 400 Gb/s): all up, one down, none read.
TEST_CASE("validate: every network port up at the expected rate", "[cli][validate]") {
  temp_dir dir;
  json doc = json::parse(read_file(data + "/validate-healthy.json"));
  json ports = json::array();
  for (int i = 0; i < 8; ++i) ports.push_back(ndr_port("mlx5_" + std::to_string(i), ""));
  doc["system"]["network_ports"] = ports;
  write_file(dir.path / "up.json", doc.dump());
  json v = validate_json({(dir.path / "up.json").string(), "--spec", "dgx-h100"}, 1);
  CHECK(rules_with(v, "pass").count("network ports machine") == 1);

  doc["system"]["network_ports"][3]["state"] = "DOWN";
  doc["system"]["network_ports"][3]["physical_state"] = "Polling";
  doc["system"]["network_ports"][5]["rate_Gbps"] = 200.0;  // trained down to HDR
  write_file(dir.path / "down.json", doc.dump());
  v = validate_json({(dir.path / "down.json").string(), "--spec", "dgx-h100"}, 1);
  CHECK(rules_with(v, "fail").count("network ports machine") == 1);
  for (const json& rule : v["rules"]) {
    if (rule["rule"] != "network ports") continue;
    CHECK(rule["measured"] == "6 of 8 up at rate");
    CHECK(rule["detail"] ==
          "mlx5_3/1 DOWN (Polling), 400 Gb/s; mlx5_5/1 ACTIVE (LinkUp), 200 Gb/s");
  }
  // The healthy fixture records no port: missing, not passed.
  v = validate_json({data + "/validate-healthy.json", "--spec", "dgx-h100"}, 1);
  CHECK(rules_with(v, "missing").count("network ports machine") == 1);
}

TEST_CASE("info reads InfiniBand ports: state, rate, width, firmware, interface", "[cli]") {
  temp_dir dir;
  const auto port = dir.path / "mlx5_0" / "ports" / "1";
  std::filesystem::create_directories(port);
  std::filesystem::create_directories(dir.path / "mlx5_0" / "device" / "net" / "ibp12s0");
  write_file(dir.path / "mlx5_0" / "fw_ver", "28.39.1002\n");
  write_file(port / "link_layer", "InfiniBand\n");
  write_file(port / "state", "4: ACTIVE\n");
  write_file(port / "phys_state", "5: LinkUp\n");
  write_file(port / "rate", "400 Gb/sec (4X NDR)\n");
  const auto r =
      run_gpubench({"info", "--json"}, {}, {"GPUBENCH_INFINIBAND_DIR=" + dir.path.string()});
  REQUIRE(r.exit_code == 0);
  const json ports = json::parse(r.out).at("network_ports");
  REQUIRE(ports.size() == 1);
  CHECK(ports[0] == ndr_port("mlx5_0", "ibp12s0"));
  const auto text = run_gpubench({"info"}, {}, {"GPUBENCH_INFINIBAND_DIR=" + dir.path.string()});
  CHECK_THAT(text.out,
             Catch::Contains("port     mlx5_0/1: InfiniBand ACTIVE (LinkUp), 400 Gb/s 4X, ibp12s0, "
                             "firmware 28.39.1002"));
}

TEST_CASE("validate: every shipped spec loads", "[cli][validate]") {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUBENCH_SOURCE_DIR) + "/configs/specs")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path());
    const auto r = run_gpubench(
        {"validate", data + "/validate-healthy.json", "--spec", entry.path().stem().string()});
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.err.empty());
  }
}

TEST_CASE("validate: bad specs and results without a spec are one-line errors, exit 2",
          "[cli][validate]") {
  temp_dir dir;
  const auto spec_error = [&](const std::string& text, const std::string& needle) {
    const auto file = dir.path / "spec.json";
    write_file(file, text);
    const auto r =
        run_gpubench({"validate", data + "/validate-healthy.json", "--spec", file.string()});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::Contains(file.string()) && Catch::Contains(needle));
  };
  spec_error(R"({"schema":"gpubench.spec/1","name":"x","figures":[{"name":"g","benchmark":"gemm",
      "metric":"TFLOPs","expected":"fast"}]})",
             "/figures/0/expected");
  spec_error(R"({"schema":"gpubench.spec/1","name":"x","catalog":"h100-sxm5-80gb","figures":[
      {"name":"g","benchmark":"gemm","metric":"TFLOPs","expected":{"catalog":["gpu.nope"]}}]})",
             "/figures/0/expected/catalog/0");
  spec_error(R"({"schema":"gpubench.spec/1","name":"x","health":{"pcie":{"gen":12}}})",
             "/health/pcie/gen");
  spec_error(R"({"schema":"gpubench.spec/1","name":"x","health":{"ecc":"yes"}})", "/health/ecc");
  spec_error(R"({"schema":"gpubench.spec/2","name":"x"})", "/schema");
  spec_error(R"({"schema":"gpubench.spec/1","name":"x","figures":[{"name":"g","benchmark":"gemm",
      "metric":"TFLOPs","expected":700,"floor":1.5}]})",
             "/figures/0/floor");
  spec_error("{", "");

  const auto unknown = run_gpubench({"validate", data + "/validate-healthy.json", "--spec", "h99"});
  CHECK(unknown.exit_code == 2);
  // 45 specs: the command that lists them, not the list.
  CHECK_THAT(unknown.err,
             Catch::Contains("--spec h99") && Catch::Contains("gpubench list --names specs"));

  const auto no_gpu = run_gpubench(
      {"validate", std::string(GPUBENCH_SOURCE_DIR) + "/docs/examples/results-ci-vm.json"});
  CHECK(no_gpu.exit_code == 2);
  CHECK_THAT(no_gpu.err, Catch::Contains("no spec applies") && Catch::Contains("--spec"));
  // Named explicitly, a GPU spec fails a machine without GPUs rather than passing it.
  const json none =
      validate_json({std::string(GPUBENCH_SOURCE_DIR) + "/docs/examples/results-ci-vm.json",
                     "--spec", "h100-sxm5-80gb"},
                    1);
  CHECK(rules_with(none, "fail").count("gpu model machine") == 1);
}

TEST_CASE("validate --baseline flags figures worse than the fleet median", "[cli][validate]") {
  temp_dir dir;
  const std::vector<std::string> fleet{"--baseline", data + "/validate-healthy.json",
                                       fault_fixture(dir, "pcie-gen3-x8"),
                                       fault_fixture(dir, "nvlink-missing")};
  std::vector<std::string> args{fault_fixture(dir, "hbm-low")};
  args.insert(args.end(), fleet.begin(), fleet.end());
  const json v = validate_json(args, 1);
  CHECK(v["baseline"].size() == 3);
  const auto failed = rules_with(v, "fail");
  CHECK(failed.count("hbm copy GPU 0") == 1);  // the spec's floor
  CHECK(failed.count("baseline hbm.copy GBps gpu=0 array_bytes=1073741824") == 1);
  CHECK(failed.size() == 2);
  // Within the tolerance of the median: the same machine passes against its fleet.
  std::vector<std::string> same{data + "/validate-healthy.json"};
  same.insert(same.end(), fleet.begin(), fleet.end());
  same.insert(same.end(), {"--baseline-tolerance", "5"});
  const json ok = validate_json(same, 0);
  CHECK(ok["counts"]["pass"].get<int>() > 39);
}

TEST_CASE("validate reads the health NVML reported during a real run", "[cli][validate]") {
  // The stand-in libnvidia-ml.so.1: GPU 0 healthy; GPU 1 on a Gen3 x8 link, 16 of 18 NVLink
  // links up, and an uncorrectable memory error whose row remap waits for a reset.
  temp_dir dir;
  const std::vector<std::string> env{std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR};
  const auto run =
      run_gpubench({"run", "--only", "host.membw", "--axis", "host.membw:array_bytes=16MiB",
                    "--axis", "host.membw:kernel=copy", "--out", (dir.path / "o").string()},
                   {}, env);
  REQUIRE(run.exit_code == 0);
  const auto results = (dir.path / "o" / "results.json").string();
  if (json::parse(read_file(results))["system"]["gpu_status"]["cuda"] == "ok") {
    SUCCEED("a real GPU is present: the stand-in NVML does not describe it");
    return;
  }
  write_file(dir.path / "fake.json", R"({"schema":"gpubench.spec/1","name":"fake",
      "health":{"pcie":{"gen":5,"width":16},"ecc":true,"nvlink_links":18}})");
  const json v = validate_json({results, "--spec", (dir.path / "fake.json").string()}, 1);
  CHECK(rules_with(v, "fail") ==
        std::set<std::string>{"pcie link GPU 1", "nvlink links GPU 1", "memory errors GPU 1"});
  CHECK(rules_with(v, "pass") == std::set<std::string>{"pcie link GPU 0", "ecc GPU 0", "ecc GPU 1",
                                                       "nvlink links GPU 0",
                                                       "memory errors GPU 0"});
  for (const auto& rule : v["rules"]) {
    if (rule["rule"] == "memory errors" && rule["subject"] == "GPU 1") {
      CHECK_THAT(rule["measured"].get<std::string>(), Catch::Contains("row remap waits"));
    }
  }
}

TEST_CASE("validate: the inputs the fuzzer once broke it with are judged, not errors",
          "[cli][validate]") {
  // tests/fuzz/regressions/results/: results files the fuzz target found a failure with (here, a
  // gemm shape gpubench never writes beside a gpu.burn result). The fuzzer replays them too.
  const auto folder =
      std::filesystem::path(GPUBENCH_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "results";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    ++files;
    const auto r = run_gpubench({"validate", entry.path().string(), "--spec", "h100-sxm5-80gb"});
    INFO(entry.path() << ": " << r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK_THAT(r.err, !Catch::Contains("error:"));
  }
  CHECK(files > 0);
}

namespace {

const json* rule_of(const json& v, const std::string& rule, const std::string& subject) {
  for (const json& r : v["rules"]) {
    if (r["rule"] == rule && r["subject"] == subject) return &r;
  }
  return nullptr;
}

}  // namespace

// The rule of the specs' "siblings": each GPU of a node against the median of the node's GPUs,
// with the statistic and thresholds of `gpubench fleet`.
TEST_CASE("validate: a GPU 13% slower than its seven siblings fails, named by index and bus id",
          "[cli][validate]") {
  // Eight healthy GPUs whose figures differ by up to +-2%: every GPU passes its siblings.
  json v = validate_json({data + "/validate-8gpu.json"}, 0);
  CHECK(v["result"] == "pass");
  CHECK(rules_with(v, "pass").count("siblings GPU 0") == 1);
  CHECK(rules_with(v, "pass").count("siblings GPU 7") == 1);
  // GPU 5 13% slower at fp16, bf16 and tf32: above the spec's floors, so only its siblings
  // tell (the user's node passed validate, exit 0, before the rule).
  temp_dir dir;
  const std::string slow = fault_fixture(dir, "gpu5-slow");
  v = validate_json({slow}, 1);
  CHECK(rules_with(v, "fail") == std::set<std::string>{"siblings GPU 5"});
  const json* rule = rule_of(v, "siblings", "GPU 5");
  REQUIRE(rule != nullptr);
  CHECK(rule->at("gpu") == 5);
  CHECK(rule->at("pci_bus_id") == "0000:ab:00.0");
  const std::string detail = rule->at("detail");
  for (const char* dtype : {"dtype=fp16", "dtype=bf16", "dtype=tf32"}) {
    CHECK_THAT(detail, Catch::Contains(dtype));
  }
  CHECK_THAT(detail, !Catch::Contains("dtype=fp8"));
  CHECK(rule->at("measured_value").get<double>() <
        rule->at("floor_value").get<double>());  // below median x (1 - threshold)
  const auto text = run_gpubench({"validate", slow});
  CHECK(text.exit_code == 1);
  CHECK_THAT(last_line(text.out), Catch::StartsWith("FAIL: 1 failed") &&
                                      Catch::Contains("siblings GPU 5 (0000:ab:00.0)"));

  // Tuned in a spec of one's own: the fleet's thresholds, a warning instead of a failure...
  const auto spec = [&](const std::string& siblings) {
    const auto file = dir.path / "siblings.json";
    write_file(file, R"({"schema": "gpubench.spec/1", "name": "tuned",
                         "extends": "h100-sxm5-80gb", "health": {"siblings": )" +
                         siblings + "}}");
    return file.string();
  };
  v = validate_json({slow, "--spec", spec(R"({"worse": "warn"})")}, 0);
  CHECK(v["result"] == "warn");
  CHECK(rules_with(v, "warn") == std::set<std::string>{"siblings GPU 5"});
  // ... or a wider threshold that 13% stays within.
  v = validate_json({slow, "--spec", spec(R"({"min_deviation": 0.2})")}, 0);
  CHECK(rules_with(v, "fail").empty());
  // Two GPUs have no median to hold either to.
  v = validate_json({data + "/validate-healthy.json"}, 0);
  CHECK(rules_with(v, "n/a").count("siblings machine") == 1);
  // A mistake in the rule is exit 2 with its JSON path.
  const auto bad = run_gpubench({"validate", slow, "--spec", spec(R"({"worse": "maybe"})")});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("/health/siblings/worse"));
}

TEST_CASE("validate: a warning is the verdict WARN, named with its GPU's bus id, exit 0",
          "[cli][validate]") {
  temp_dir dir;
  const std::string file = fault_fixture(dir, "fp8-warn");
  const json v = validate_json({file}, 0);
  CHECK(v["result"] == "warn");
  CHECK(v["passed"] == true);
  CHECK(v["counts"]["warn"] == 1);
  CHECK(rules_with(v, "warn") == std::set<std::string>{"gemm fp8 GPU 3"});
  const json* rule = rule_of(v, "gemm fp8", "GPU 3");
  REQUIRE(rule != nullptr);
  CHECK(rule->at("pci_bus_id") == "0000:5d:00.0");
  const auto text = run_gpubench({"validate", file});
  CHECK(text.exit_code == 0);
  CHECK_THAT(last_line(text.out),
             Catch::StartsWith("WARN: ") &&
                 Catch::Contains("1 warning: gemm fp8 GPU 3 (0000:5d:00.0) 1060 TFLOP/s"));
  // Above the verdict, every failure and warning in full: none hides among 160 passing rows.
  CHECK_THAT(text.out, Catch::Contains("Failures and warnings (1):\n  gemm fp8 GPU 3 "
                                       "(0000:5d:00.0): WARN, 1060 TFLOP/s, floor 1090 TFLOP/s"));
}

TEST_CASE("validate: a fleet's merged file is counted per rule in text, every rule in --json",
          "[cli][validate]") {
  temp_dir dir;
  const std::string file = (dir.path / "fleet.json").string();
  const auto made = run_program({"/usr/bin/python3",
                                 std::string(GPUBENCH_SOURCE_DIR) + "/tools/make_fleet_results.py",
                                 "400", file, "--health"});
  REQUIRE(made.exit_code == 0);
  const json v = validate_json({file, "--spec", "dgx-h100"}, 1);
  std::size_t gemm_bf16 = 0;
  for (const auto& r : v["rules"]) gemm_bf16 += r["rule"] == "gemm bf16" ? 1 : 0;
  CHECK(gemm_bf16 == 400);  // one per GPU
  REQUIRE(v["rules"].size() > 2000);

  const auto r = run_gpubench({"validate", file, "--spec", "dgx-h100"});
  REQUIRE(r.exit_code == 1);
  // One row per rule with its counts, not one per GPU and rule.
  CHECK_THAT(r.out, Catch::Contains("RULE             SUBJECTS  PASS  WARN  FAIL  MISSING  N/A"));
  std::size_t rows = 0;
  for (std::size_t at = r.out.find("\ngemm bf16 "); at != std::string::npos;
       at = r.out.find("\ngemm bf16 ", at + 1)) {
    ++rows;
    const std::string row = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    CHECK_THAT(row, Catch::StartsWith("gemm bf16        400       400   0     0     0        0"));
    CHECK_THAT(row, Catch::Contains("TFLOP/s (node-0"));  // the lowest and highest, and where
  }
  CHECK(rows == 1);
  // What did not pass is still named in full: the network ports no node measured.
  CHECK_THAT(r.out, Catch::Contains("\n  network ports node-00049 ports: MISSING"));
  CHECK(last_line(r.out) == v["verdict"].get<std::string>());
}
