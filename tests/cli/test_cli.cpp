// End-to-end tests of the real binary on this machine.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "fixtures.hpp"
#include "one_line_error.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("run --suite quick writes a results file with host.membw measured", "[cli][long]") {
  temp_dir dir;
  // cpu.dataloader's skip path here (GPUBENCH_PYTHON names no interpreter); its real run is
  // loader.dataloader_ceiling_vs_torch's.
  const auto r = run_gpubench({"run", "--suite", "quick", "--out", (dir.path / "out").string()}, {},
                              {"GPUBENCH_PYTHON=/nonexistent/python3"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "out" / "results.json"));
  CHECK(doc["schema"] == "gpubench.results/1");
  CHECK(doc["meta"]["suite"] == "quick");
  CHECK(doc["meta"]["build_type"] == "Release");
  CHECK(doc["meta"]["interrupted"] == false);
  CHECK(doc["system"]["cpu"]["cores"].get<int>() >= 1);
  const bool has_gpu = !doc["system"]["gpus"].empty();
  int membw_ok = 0;
  int pairwise_nccl = 0;
  int dataloader = 0;
  std::set<std::string> gpu_ids;
  std::set<std::string> host_ids;
  for (const auto& res : doc["results"]) {
    const std::string id = res["id"];
    if (id == "host.membw") {
      CHECK(res["status"] == "ok");
      CHECK(res["verified"] == true);
      CHECK(res["metrics"]["GBps"]["median"].get<double>() > 0.1);
      CHECK(res["metrics"]["GBps"]["n"] == 5);
      CHECK(res["axes"].contains("kernel"));
      // The case's own time: at least its 5 repetitions of at least 0.1 s each.
      CHECK(res["wall_s"].get<double>() >= 0.5);
      ++membw_ok;
    } else if (id.rfind("nvme.", 0) == 0 || id == "cpu.augment") {
      host_ids.insert(id);
      // Host benchmarks run here, unless the results folder (the default scratch) is on tmpfs.
      INFO(res.dump());
      CHECK((res["status"] == "ok" ||
             (res["status"] == "skipped" &&
              res["reason"].get<std::string>().find("tmpfs") != std::string::npos)));
    } else if (id == "cpu.dataloader") {
      // Skipped, naming the interpreter it tried.
      INFO(res.dump());
      ++dataloader;
      CHECK(res["status"] == "skipped");
      CHECK(res["reason"] ==
            "no python3 with torch and torchvision found (tried /nonexistent/python3 (not an "
            "executable file))");
    } else if (id == "net.pairwise") {
      // One process is one node: the network between nodes is not there to measure.
      CHECK(res["status"] == "skipped");
      CHECK_FALSE(res.contains("wall_s"));  // skipped before it ran
      CHECK_THAT(res["reason"].get<std::string>(), Catch::StartsWith("needs 2 or more nodes") ||
                                                       Catch::StartsWith("built without MPI"));
    } else if (id == "net.pairwise_nccl") {
      // The same between GPUs: no second node, or no GPU, or a build without MPI/CUDA/NCCL.
      CHECK(res["status"] == "skipped");
      CHECK_THAT(res["reason"].get<std::string>(),
                 Catch::StartsWith("needs 2 or more nodes") || Catch::StartsWith("built without") ||
                     (Catch::Contains("GPU") && Catch::StartsWith("no ")));
      ++pairwise_nccl;
    } else {
      gpu_ids.insert(id);
      if (!has_gpu) {
        INFO(id);
        CHECK(res["status"] == "skipped");
        CHECK_THAT(res["reason"].get<std::string>(),
                   Catch::Contains("GPU") || Catch::Contains("CUDA"));
      }
    }
  }
  CHECK(membw_ok == 2);  // copy and triad in the quick suite
  CHECK(pairwise_nccl == 1);
  CHECK(dataloader >= 1);
  CHECK(host_ids == std::set<std::string>{"nvme.seq_read", "nvme.rand_read", "cpu.augment"});
  // Every GPU benchmark of the quick suite reports, skipped or not.
  for (const char* id :
       {"gemm", "gpu.launch_latency", "hbm.copy", "hbm.triad", "hbm.read", "hbm.write", "pcie.h2d",
        "pcie.d2h", "pcie.bidir", "pcie.h2d_all", "pcie.d2h_all", "p2p.copy"}) {
    INFO(id);
    CHECK(gpu_ids.count(id) == 1);
  }
  // stdout: the summary table and where the results went.
  CHECK_THAT(r.out,
             Catch::Contains("host.membw") && Catch::Contains("GBps") &&
                 Catch::Contains("results: " + (dir.path / "out" / "results.json").string()));
  // stderr is not a terminal here: one line per case, no carriage returns.
  CHECK_THAT(r.err, Catch::Contains("[1/") && Catch::Contains("host.membw kernel=triad"));
  CHECK(r.err.find('\r') == std::string::npos);
}

TEST_CASE("list --json describes every benchmark, its availability and the suites", "[cli]") {
  const auto r = run_gpubench({"list", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  std::map<std::string, json> by_id;
  for (const auto& b : doc["benchmarks"]) by_id[b["id"]] = b;
  REQUIRE(by_id.count("host.membw") == 1);
  REQUIRE(by_id.count("gpu.launch_latency") == 1);
  CHECK(by_id["host.membw"]["available"] == true);
  CHECK(by_id["host.membw"]["metrics"] == json::array({"GBps"}));
  CHECK(by_id["host.membw"]["metric_units"]["GBps"] ==
        json{{"unit", "GB/s"}, {"better", "higher"}});
  // Every axis with the values a run here would sweep, available or not.
  for (const auto& a : by_id["host.membw"]["axes"]) {
    if (a["name"] == "kernel")
      CHECK(a["defaults"] == json::array({"copy", "scale", "add", "triad"}));
  }
  for (const auto& a : by_id["gemm"]["axes"]) {
    if (a["name"] == "dtype") CHECK(a["defaults"].size() == 7);
  }
  const auto text = run_gpubench({"list"});
  CHECK_THAT(text.out, Catch::Contains("kernel=copy,scale,add,triad") &&
                           Catch::Contains("dtype=fp16,bf16,...,nvfp4 (7 values)"));
  const auto& latency = by_id["gpu.launch_latency"];
  if (latency["available"] == false) {
    CHECK_FALSE(latency["reason"].get<std::string>().empty());
  }
  std::set<std::string> suites;
  for (const auto& s : doc["suites"]) suites.insert(s["name"]);
  CHECK(suites.count("quick") == 1);
  CHECK(suites.count("full") == 1);
}

TEST_CASE("info --json gives the system block", "[cli]") {
  const auto r = run_gpubench({"info", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["memory_bytes"].get<std::uint64_t>() > 0);
  CHECK(doc["cpu"]["threads"].get<int>() >= 1);
  CHECK(doc["numa"].is_array());
  CHECK(doc["disks"].is_array());
  CHECK(doc["gpus"].is_array());
  if (doc["gpus"].empty()) {
    CHECK_FALSE(doc["gpu_status"]["reason"].get<std::string>().empty());
  }
  const auto text = run_gpubench({"info"});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("cpu ") && Catch::Contains("memory "));
}

TEST_CASE("bad flags and unknown ids give exit 2 and one clear line", "[cli]") {
  check_one_line_error(run_gpubench({"run", "--bogus"}), "--bogus");
  check_one_line_error(run_gpubench({"frobnicate"}), "frobnicate");
  check_one_line_error(run_gpubench({"run", "--only", "nosuch.bench"}), "nosuch.bench");
  check_one_line_error(run_gpubench({"run", "--skip", "gpu.nothing"}), "gpu.nothing");
  check_one_line_error(run_gpubench({"run", "--suite", "nosuchsuite"}), "nosuchsuite");
  check_one_line_error(run_gpubench({"run", "--suite", "/nonexistent/suite.json"}),
                       "/nonexistent/suite.json: expected an existing file");
  check_one_line_error(run_gpubench({"run", "--axis", "host.membw:colour=red"}), "colour");
  check_one_line_error(run_gpubench({"run", "--axis", "host.membw:array_bytes=-5"}), "array_bytes");
  check_one_line_error(run_gpubench({"run", "--axis", "host.membw"}), "ID:AXIS=VALUE");
  check_one_line_error(run_gpubench({"run", "--gpus", "7"}), "--gpus");
  check_one_line_error(run_gpubench({"run", "--gpus", "a,b"}), "--gpus");
  check_one_line_error(run_gpubench({"list", "--json=maybe"}), "json");
}

TEST_CASE("a bad suite file names the file and the JSON path", "[cli]") {
  temp_dir dir;
  const fs::path suite = dir.path / "mine.json";
  write_file(
      suite,
      R"({"schema":"gpubench.suite/1","name":"mine","benchmarks":[{"id":"host.membw","repetitions":-1}]})");
  check_one_line_error(
      run_gpubench({"run", "--suite", suite.string()}),
      suite.string() + ": /benchmarks/0/repetitions: expected an integer from 1 to 1000");
  write_file(suite, "not json");
  check_one_line_error(run_gpubench({"run", "--suite", suite.string()}), "valid JSON");
  check_one_line_error(run_gpubench({"run", "--suite", dir.path.string() + "/"}), "regular file");
}

TEST_CASE("a user's own suite file runs", "[cli]") {
  temp_dir dir;
  const fs::path suite = dir.path / "mine.json";
  write_file(suite, R"({"schema":"gpubench.suite/1","name":"mine",
    "defaults":{"repetitions":3,"warmup_iterations":1,"iterations":2},
    "benchmarks":[{"id":"host.membw","axes":{"kernel":"add","array_bytes":"8MiB","threads":1}}]})");
  const auto r =
      run_gpubench({"run", "--suite", suite.string(), "--out", (dir.path / "o").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["results"].size() == 1);
  const auto& res = doc["results"][0];
  CHECK(res["axes"] == json{{"kernel", "add"}, {"threads", 1}, {"array_bytes", 8 << 20}});
  CHECK(res["metrics"]["GBps"]["n"] == 3);
  CHECK(res["info"]["iterations_per_repetition"] == json::array({2, 2, 2}));
}

TEST_CASE("GPUs come from NVML loaded at run time", "[cli]") {
  // The stand-in libnvidia-ml.so.1 reports two GPUs; CUDA has no driver here, so the GPUs are
  // listed from NVML alone and the GPU benchmarks say why they cannot use them.
  const std::vector<std::string> env{std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR};
  const auto r = run_gpubench({"info", "--json"}, {}, env);
  REQUIRE(r.exit_code == 0);
  const json info = json::parse(r.out);
  if (info["gpu_status"]["cuda"] == "ok") {
    SUCCEED("a real CUDA device is present; the stand-in NVML is not what lists GPUs here");
    return;
  }
  CHECK(info["gpu_status"]["nvml"] == "ok");
  CHECK(info["gpu_status"]["driver_version"] == "999.99.1");
  CHECK(info["gpu_status"]["nvml_gpu_count"] == 2);
  CHECK(info["gpu_status"]["cuda_visible_devices"].is_null());
  REQUIRE(info["gpus"].size() == 2);
  const json& healthy = info["gpus"][0];
  CHECK(healthy["name"] == "Fake GPU 0");
  CHECK(healthy["pci_bus_id"] == "0000:1b:00.0");
  CHECK(healthy["memory_bytes"] == 80ULL << 30);
  CHECK(healthy["pcie"] == json{{"gen", 5}, {"width", 16}, {"max_gen", 5}, {"max_width", 16}});
  CHECK(healthy["power_limit_W"] == 700.0);
  CHECK(healthy["clocks"]["sm_max_mhz"] == 1980);
  CHECK(healthy["ecc_enabled"] == true);
  CHECK(healthy["nvlink_links_up"] == 18);
  CHECK(healthy["memory_errors"]["uncorrected_volatile"] == 0);
  CHECK(healthy["memory_errors"]["row_remap_pending"] == false);
  CHECK(healthy["throttle_reasons"] == json::array({"gpu_idle"}));
  CHECK(healthy["compute_capability"] == "");
  const json& degraded = info["gpus"][1];
  CHECK(degraded["pcie"]["gen"] == 3);
  CHECK(degraded["pcie"]["width"] == 8);
  CHECK(degraded["temperature_C"] == 87);
  CHECK(degraded["nvlink_links_up"] == 16);
  CHECK(degraded["memory_errors"]["uncorrected_aggregate"] == 1);
  CHECK(degraded["memory_errors"]["remapped_rows_uncorrectable"] == 1);
  CHECK(degraded["memory_errors"]["row_remap_pending"] == true);
  CHECK(degraded["memory_errors"]["row_remap_failure"] == false);
  CHECK(degraded["memory_errors"]["retired_pages_pending"].is_null());
  CHECK(degraded["throttle_reasons"] == json::array({"sw_power_cap", "hw_thermal_slowdown"}));

  const auto list = run_gpubench({"list", "--json"}, {}, env);
  REQUIRE(list.exit_code == 0);
  const json listed = json::parse(list.out);  // kept alive: the loop walks into it
  for (const auto& b : listed["benchmarks"]) {
    if (b["id"] == "gpu.launch_latency") {
      CHECK(b["available"] == false);
      CHECK_THAT(b["reason"].get<std::string>(),
                 Catch::Contains("GPUs present but") || Catch::Contains("without CUDA"));
    }
  }
  const auto text = run_gpubench({"info"}, {}, env);
  CHECK_THAT(text.out, Catch::Contains("PCIe gen 3 x8 (max gen 5 x16)"));
}

TEST_CASE("a run where NVML sees GPUs but no GPU benchmark ran exits 1, saying why", "[cli]") {
  // A burn-in script must not pass a box whose GPUs never ran: here the stand-in NVML shows two
  // GPUs that CUDA (no driver) cannot use.
  temp_dir dir;
  const std::vector<std::string> env{std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR};
  const auto r = run_gpubench(
      {"run", "--only", "gpu.launch_latency,host.membw", "--axis", "host.membw:array_bytes=16MiB",
       "--axis", "host.membw:kernel=copy", "--out", (dir.path / "o").string()},
      {}, env);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  if (doc["system"]["gpu_status"]["cuda"] == "ok") {
    SUCCEED("a real GPU is present: the GPU benchmark ran");
    return;
  }
  INFO(r.err);
  CHECK(r.exit_code == 1);
  // The reason is the first GPU benchmark's skip: CUDA without a driver, or a build without it.
  CHECK_THAT(r.err, Catch::Contains("gpubench: error: the machine has 2 GPU(s), but every GPU "
                                    "benchmark was skipped (gpu.launch_latency: ") &&
                        (Catch::Contains("GPUs present but the CUDA runtime cannot use them: no "
                                         "NVIDIA driver loaded") ||
                         Catch::Contains("built without CUDA")) &&
                        Catch::Contains("): no GPU was tested"));
  CHECK(doc["system"]["gpu_status"]["nvml_gpu_count"] == 2);
  // What could run was measured and kept.
  bool host_ok = false;
  for (const auto& res : doc["results"])
    host_ok |= res["id"] == "host.membw" && res["status"] == "ok";
  CHECK(host_ok);
  // Without a GPU benchmark in the plan there is nothing to miss.
  const auto host_only =
      run_gpubench({"run", "--only", "host.membw", "--axis", "host.membw:array_bytes=16MiB",
                    "--axis", "host.membw:kernel=copy", "--out", (dir.path / "h").string()},
                   {}, env);
  CHECK(host_only.exit_code == 0);
  // Nor when CUDA_VISIBLE_DEVICES hides every GPU: the user chose to test none.
  const auto hidden =
      run_gpubench({"run", "--only", "gpu.launch_latency", "--out", (dir.path / "v").string()}, {},
                   {env[0], "CUDA_VISIBLE_DEVICES="});
  INFO(hidden.err);
  CHECK(hidden.exit_code == 0);
}

TEST_CASE("CUDA_VISIBLE_DEVICES hides GPUs from NVML's list as CUDA would", "[cli]") {
  const std::string fake = std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR;
  const auto info_with = [&](const std::string& visible) {
    const auto r = run_gpubench({"info", "--json"}, {}, {fake, "CUDA_VISIBLE_DEVICES=" + visible});
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  const json second = info_with("1");
  if (second["gpu_status"]["cuda"] == "ok") {
    SUCCEED("a real GPU is present: CUDA itself applies the variable");
    return;
  }
  CHECK(second["gpu_status"]["cuda_visible_devices"] == "1");
  CHECK(second["gpu_status"]["nvml_gpu_count"] == 2);
  REQUIRE(second["gpus"].size() == 1);
  CHECK(second["gpus"][0]["name"] == "Fake GPU 1");
  const json by_uuid = info_with("GPU-00000000-0000-0000-0000-000000000000");
  REQUIRE(by_uuid["gpus"].size() == 1);
  CHECK(by_uuid["gpus"][0]["name"] == "Fake GPU 0");
  const json hidden = info_with("");
  CHECK(hidden["gpus"].empty());
  CHECK_THAT(hidden["gpu_status"]["reason"].get<std::string>(), Catch::StartsWith("no GPU found"));
}

TEST_CASE("axis values a benchmark cannot take are refused before the run", "[cli]") {
  check_one_line_error(
      run_gpubench({"run", "--axis", "host.membw:kernel=dot"}),
      "--axis host.membw:kernel: expected one of copy, scale, add, triad, got 'dot'");
  check_one_line_error(run_gpubench({"run", "--axis", "gemm:shape=12x34"}),
                       "--axis gemm:shape: expected a shape N (square) or MxNxK, got '12x34'");
  check_one_line_error(run_gpubench({"run", "--axis", "gemm:dtype=fp4"}), "got 'fp4'");
  check_one_line_error(run_gpubench({"run", "--axis", "gemm:layout=TT"}),
                       "--axis gemm:layout: expected one of TN, NN, NT, got 'TT'");
  check_one_line_error(run_gpubench({"run", "--axis", "p2p.copy:pair=1>1"}), "SRC>DST");
}

TEST_CASE("bad --scratch values give exit 2 and one clear line", "[cli]") {
  temp_dir dir;
  check_one_line_error(
      run_gpubench({"run", "--only", "nvme.seq_read", "--scratch", (dir.path / "absent").string()}),
      "expected an existing folder");
  write_file(dir.path / "a-file", "x");
  check_one_line_error(
      run_gpubench({"run", "--only", "nvme.seq_read", "--scratch", (dir.path / "a-file").string()}),
      "expected a folder, got a file");
  check_one_line_error(run_gpubench({"run", "--only", "nvme.seq_read", "--scratch", ","}),
                       "--scratch");
  // Nothing was created for a run that never started.
  CHECK_FALSE(fs::exists(dir.path / "gpubench-results"));
}

TEST_CASE("run: --scratch repeats, and a folder with a comma in its name is one folder", "[cli]") {
  temp_dir dir;
  fs::create_directories(dir.path / "x,y");
  fs::create_directories(dir.path / "z");
  const auto r = run_gpubench({"run", "--suite", "quick", "--only", "host.membw", "--axis",
                               "host.membw:array_bytes=16MiB", "--axis", "host.membw:kernel=copy",
                               "--scratch", (dir.path / "x,y").string(), "--scratch",
                               (dir.path / "z").string(), "--out", (dir.path / "o").string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // The same folder twice would put two test files on one device and call it two.
  check_one_line_error(
      run_gpubench({"run", "--only", "nvme.seq_read", "--scratch",
                    (dir.path / "z").string() + "," + (dir.path / "z" / ".").string()}),
      "expected each folder once");
}

TEST_CASE("storage benchmarks on tmpfs are skipped with the reason", "[cli]") {
  if (!fs::exists("/dev/shm")) return;
  temp_dir dir;
  const auto r = run_gpubench(
      {"run", "--only", "nvme.*", "--scratch", "/dev/shm", "--out", (dir.path / "o").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  REQUIRE(doc["results"].size() == 2);
  for (const auto& res : doc["results"]) {
    CHECK(res["status"] == "skipped");
    CHECK_THAT(res["reason"].get<std::string>(), Catch::Contains("tmpfs"));
  }
}

TEST_CASE("storage and CPU benchmarks measure, verify and clean up", "[cli][long]") {
  temp_dir dir;
  const fs::path scratch = fs::current_path() / ("scratch-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  const auto r =
      run_gpubench({"run", "--suite", "quick", "--only", "nvme.*,cpu.augment", "--scratch",
                    scratch.string(), "--axis", "nvme.*:file_bytes=256MiB", "--axis",
                    "cpu.augment:threads=1", "--out", (dir.path / "o").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  std::set<std::string> ids;
  for (const auto& res : doc["results"]) {
    const std::string id = res["id"];
    ids.insert(id);
    INFO(id << " " << res.dump());
    CHECK(res["status"] == "ok");
    CHECK(res["verified"] == true);
    if (id.rfind("nvme.", 0) == 0) {
      CHECK(res["metrics"]["GBps"]["median"].get<double>() > 0);
      CHECK(res["metrics"]["iops"]["median"].get<double>() > 0);
      CHECK(res["info"]["o_direct"] == true);
      CHECK_FALSE(res["info"]["storage"][0]["filesystem"].get<std::string>().empty());
    } else {
      CHECK(res["metrics"]["samples_per_s"]["median"].get<double>() > 1);
      CHECK(res["metrics"].contains("samples_per_s_per_core"));
      CHECK(res["metrics"].contains("jpeg_MBps"));
      CHECK(res["info"]["mean_jpeg_bytes"].get<double>() > 60000);
    }
  }
  CHECK(ids == std::set<std::string>{"nvme.seq_read", "nvme.rand_read", "cpu.augment"});
  // The test files are gone; the folder the user named is left as it was.
  CHECK(fs::is_empty(scratch));
  fs::remove(scratch);
}

TEST_CASE("size --json gives gpubench.sizing/1 with every component", "[cli][model]") {
  const auto r = run_gpubench(
      {"size", "--workload", "resnet50", "--hardware", "catalog:aws-p5.48xlarge", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("schema") == "gpubench.sizing/1");
  CHECK(doc.at("predicted_samples_per_s").get<double>() > 0);
  CHECK(doc.at("per_gpu_samples_per_s").get<double>() ==
        Approx(doc.at("predicted_samples_per_s").get<double>() / 8));
  for (const char* name :
       {"gpu_compute", "gpu_memory", "communication", "pcie", "storage", "cpu"}) {
    INFO(name);
    CHECK(doc.at("components").contains(name));
  }
  const std::string limit = doc.at("limiting_component");
  CHECK(doc.at("components").contains(limit));
  CHECK_FALSE(doc.at("recommendations").empty());
  CHECK(doc.at("inputs").at("hardware").at("figures").contains("price.usd_per_hour"));

  // What-if: a 64-core box with 16 GPUs in 2 nodes over a 100 Gb/s network.
  const auto what_if = run_gpubench({"size", "--workload", "resnet50", "--hardware",
                                     "catalog:h100-sxm5-80gb", "--gpus", "8", "--nodes", "2",
                                     "--set", "cpu.cores=64", "--set", "network.gbps=100", "--set",
                                     "memory.GB=1000", "--set", "storage.read_GBps=8", "--json"});
  REQUIRE(what_if.exit_code == 0);
  const json w = json::parse(what_if.out);
  CHECK(w.at("inputs").at("nodes") == 2);
  CHECK(w.at("components").at("cpu").at("basis") == "set");
  // The human-readable form names the limit and the next ceiling.
  const auto text = run_gpubench({"size", "--workload", "gpt2-large"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("limited by") && Catch::Contains("next ceiling"));
}

TEST_CASE("size sizes a job on the H200 systems people rent", "[cli][model]") {
  // Llama-3-8B on two p5e.48xlarge: 8 H200 per node over a 3200 Gb/s EFA network; no public
  // on-demand price, and the sizing says why instead of failing.
  const auto r = run_gpubench({"size", "--workload", "llama3-8b", "--hardware",
                               "catalog:aws-p5e.48xlarge", "--nodes", "2", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("inputs").at("nodes") == 2);
  const json& hardware = doc.at("inputs").at("hardware");
  CHECK(hardware.at("gpu_model") == "h200-sxm-141gb");
  CHECK(hardware.at("network").at("description") == "32 x 100 Gb/s Ethernet (ENA) with EFA");
  CHECK(hardware.at("figures").at("network.gbps").at("value") == 3200);
  CHECK_THAT(hardware.at("unknown").at("price.usd_per_hour").get<std::string>(),
             Catch::Contains("Capacity Blocks"));
  CHECK(doc.at("predicted_samples_per_s").get<double>() > 0);
}

// Issue 40, item 6: a bare H200 on two nodes assumed a 100 Gb/s network, came out
// communication-bound at 115 tokens/s per GPU, and said so only at the end.
TEST_CASE("a bare GPU on several nodes assumes its systems' network and says so first",
          "[cli][model]") {
  const auto r = run_gpubench({"size", "--workload", "llama3-8b", "--hardware",
                               "catalog:h200-sxm-141gb", "--gpus", "8", "--nodes", "2"});
  REQUIRE(r.exit_code == 0);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  CHECK_THAT(first, Catch::Contains("network 3200 Gb/s per node between nodes, assumed (typical "
                                    "of the 5 catalog systems with this GPU") &&
                        Catch::Contains("--set network.gbps=N"));
  CHECK_THAT(r.out, Catch::Contains("limited by gpu_compute"));
  const auto j = run_gpubench({"size", "--workload", "llama3-8b", "--hardware",
                               "catalog:h200-sxm-141gb", "--gpus", "8", "--nodes", "2", "--json"});
  REQUIRE(j.exit_code == 0);
  const json doc = json::parse(j.out);
  CHECK_THAT(doc.at("network_assumption").get<std::string>(), Catch::StartsWith("3200 Gb/s"));
  CHECK(doc.at("predicted_tokens_per_s").get<double>() / 16 > 500);
  // One node: nothing crosses a network, nothing is assumed.
  const auto one = run_gpubench({"size", "--workload", "llama3-8b", "--hardware",
                                 "catalog:h200-sxm-141gb", "--gpus", "8", "--json"});
  REQUIRE(one.exit_code == 0);
  CHECK(json::parse(one.out).at("network_assumption").is_null());
}

TEST_CASE("size --search ranks the layouts that fit and keep the batch per step", "[cli][model]") {
  // Llama-2-7B on two DGX H100s: 16 GPUs, batch 2 x 1 per GPU, 32 samples per step.
  const auto r = run_gpubench({"size", "--workload", "llama2-7b", "--hardware", "catalog:dgx-h100",
                               "--nodes", "2", "--search", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  const json& layouts = doc.at("layouts");
  REQUIRE(layouts.size() > 10);
  const int per_step = doc.at("inputs").at("batch_per_gpu").get<int>() *
                       doc.at("inputs").at("gradient_accumulation").get<int>() * 16;
  bool fitting = true;
  bool roomy = true;
  double previous = 1e300;
  for (const json& l : layouts) {
    INFO(l.dump());
    const int t = l.at("tensor");
    const int p = l.at("pipeline");
    const int d = l.at("data");
    CHECK(t * p * d == 16);
    CHECK(d * l.at("micro_batch").get<int>() * l.at("gradient_accumulation").get<int>() ==
          per_step);
    CHECK(32 % t == 0);  // Llama-2-7B's heads
    CHECK(8 % t == 0);   // a tensor group stays in a node
    const bool fits = l.at("fits");
    const bool within = l.at("within_headroom");
    CHECK((fitting || !fits));  // every layout that fits comes before any that does not
    CHECK((roomy || !within));  // and those within the headroom before those above it
    CHECK((!within || fits));
    if (roomy && !within) previous = 1e300;  // the tight ones, fastest first again
    fitting = fits;
    roomy = within;
    if (fits) {
      const double rate = l.at("predicted_samples_per_s");
      CHECK(rate <= previous);
      previous = rate;
      CHECK(l.at("per_gpu_GiB").get<double>() <= 80);
      CHECK(within == (l.at("per_gpu_GiB").get<double>() <= 0.9 * 80));
    } else {
      CHECK(l.at("predicted_samples_per_s").is_null());
    }
  }
  CHECK(layouts.front().at("fits") == true);
  // The text form: the count and the ten fastest.
  const auto text = run_gpubench({"size", "--workload", "llama2-7b", "--hardware",
                                  "catalog:dgx-h100", "--nodes", "2", "--search"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out,
             Catch::Contains("fit in GPU memory, ") &&
                 Catch::Contains(" within the headroom (those first); the fastest ten:") &&
                 Catch::Contains("micro-batch  accumulation"));
  // A CNN has no tensor or pipeline split: only data-parallel layouts.
  const auto cnn = run_gpubench(
      {"size", "--workload", "resnet50", "--hardware", "catalog:dgx-h100", "--search", "--json"});
  REQUIRE(cnn.exit_code == 0);
  const json cnn_doc = json::parse(cnn.out);  // kept alive for the loop over its member
  for (const json& l : cnn_doc.at("layouts")) {
    CHECK(l.at("tensor") == 1);
    CHECK(l.at("pipeline") == 1);
  }
}

TEST_CASE("size rejects bad workload files and settings with exit 2 and one line", "[cli][model]") {
  temp_dir dir;
  const fs::path file = dir.path / "w.json";
  write_file(
      file,
      R"({"schema":"gpubench.workload/1","name":"w","model":{"preset":"gpt","layers":"many"}})");
  check_one_line_error(run_gpubench({"size", "--workload", file.string()}),
                       file.string() + ": /model/layers: expected an integer");
  write_file(file, R"({"schema":"gpubench.workload/1","name":"w","model":{"preset":"resnet50"},
                       "data":{"dataset_bytes":1e30}})");
  check_one_line_error(run_gpubench({"size", "--workload", file.string()}), "/data/dataset_bytes");
  write_file(file, "");
  check_one_line_error(run_gpubench({"size", "--workload", file.string()}), file.string());
  check_one_line_error(run_gpubench({"size", "--workload", "resnet51"}), "resnet50");
  check_one_line_error(run_gpubench({"size", "--workload", "resnet50", "--hardware", "catalog:x"}),
                       "catalog name");
  check_one_line_error(
      run_gpubench({"size", "--workload", "resnet50", "--set", "network.gbps=NaN"}),
      "network.gbps");
  check_one_line_error(run_gpubench({"size", "--workload", "resnet50", "--gpus", "0"}), "--gpus");
}

TEST_CASE(
    "size --serve --json gives gpubench.serving/1 with rates, latencies, the KV cache and "
    "each phase's split",
    "[cli][model][serving]") {
  const auto r = run_gpubench({"size", "--serve", "--workload", "llama3.1-70b", "--hardware",
                               "catalog:dgx-h100", "--tensor", "4", "--weights", "fp8",
                               "--input-tokens", "2048", "--output-tokens", "256", "--concurrency",
                               "64", "--ttft-ms", "2000", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("schema") == "gpubench.serving/1");
  CHECK(doc.at("replicas") == 2);
  const json& s = doc.at("serving");
  for (const char* key :
       {"output_tokens_per_s", "output_tokens_per_s_per_gpu", "requests_per_s", "ttft_ms",
        "tpot_ms", "e2e_latency_ms", "concurrency", "max_concurrency", "weights_GB_per_gpu",
        "kv_cache_GB_per_gpu", "kv_bytes_per_token", "limiting_component"}) {
    INFO(key);
    CHECK(s.contains(key));
  }
  // 64 in flight over two replicas; 70B's K and V: 2 x 80 layers x 8 heads x 128 x 2 bytes (the
  // KV cache stays bf16 unless --kv-cache says otherwise, as vLLM's "auto").
  CHECK(s.at("concurrency").get<double>() == Approx(64).epsilon(0.01));
  CHECK(s.at("kv_bytes_per_token") == 327680);
  CHECK(s.at("output_tokens_per_s_per_gpu").get<double>() ==
        Approx(s.at("output_tokens_per_s").get<double>() / 8));
  CHECK(s.at("e2e_latency_ms").get<double>() ==
        Approx(s.at("ttft_ms").get<double>() + 255 * s.at("tpot_ms").get<double>()));
  for (const char* phase : {"prefill", "decode"}) {
    for (const char* key : {"time_ms", "gemm_ms", "attention_ms", "communication_ms", "overhead_ms",
                            "limiting_component"}) {
      CHECK(s.at(phase).contains(key));
    }
  }
  CHECK(s.at("ttft_met").is_boolean());
  // The text answer names the limit.
  const auto text =
      run_gpubench({"size", "--serve", "--workload", "llama3.1-8b", "--hardware",
                    "catalog:h100-sxm5-80gb", "--input-tokens", "128", "--output-tokens", "128"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("output tokens/s") && Catch::Contains("limited by") &&
                           Catch::Contains("time to first token"));
}

TEST_CASE("size --serve --search ranks splits, precisions and loads within the latency targets",
          "[cli][model][serving]") {
  const std::vector<std::string> base = {
      "size",           "--serve", "--workload",      "llama3.1-70b",
      "--input-tokens", "2048",    "--output-tokens", "256",
      "--ttft-ms",      "1000",    "--tpot-ms",       "50",
      "--search",       "--json"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_gpubench(args);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out).at("layouts");
  };
  // On one DGX H100: the most output tokens/s per GPU within the targets first.
  const json layouts = with({"--hardware", "catalog:dgx-h100"});
  REQUIRE(layouts.size() > 20);
  bool meeting = true;
  double previous = 1e300;
  std::set<std::string> precisions;
  for (const json& l : layouts) {
    INFO(l.dump());
    const int t = l.at("tensor");
    CHECK(t * l.at("pipeline").get<int>() * l.at("replicas").get<int>() == 8);
    CHECK(64 % t == 0);  // Llama 3.1 70B's heads
    const bool meets = l.at("meets_targets");
    CHECK((meeting || !meets));
    if (meets) {
      CHECK(l.at("ttft_ms").get<double>() <= 1000);
      CHECK(l.at("tpot_ms").get<double>() <= 50);
      CHECK(l.at("output_tokens_per_s_per_gpu").get<double>() <= previous);
      previous = l.at("output_tokens_per_s_per_gpu");
      precisions.insert(l.at("weights").get<std::string>());
    }
    meeting = meets;
  }
  // The H100 runs bf16 and fp8, not fp4; --weights keeps the search to one.
  CHECK(precisions == std::set<std::string>{"bf16", "fp8"});
  for (const json& l : with({"--hardware", "catalog:dgx-h100", "--weights", "bf16"})) {
    CHECK(l.at("weights") == "bf16");
  }
  // With a rate: the fewest GPUs that carry it within the targets, first.
  const json by_rate = with({"--hardware", "catalog:h100-sxm5-80gb", "--rate", "50"});
  REQUIRE(by_rate.size() > 4);
  REQUIRE(by_rate.at(0).at("meets_targets").get<bool>());
  int fewest = 0;
  for (const json& l : by_rate) {
    if (!l.at("meets_targets").get<bool>()) break;
    CHECK(l.at("gpus").get<int>() >= fewest);
    fewest = l.at("gpus");
    CHECK(l.at("requests_per_s").get<double>() == Approx(50));
  }
}

TEST_CASE(
    "size --serve: a model that does not fit is exit 0 with memory_capacity, bad input is "
    "exit 2 naming the flag",
    "[cli][model][serving]") {
  const auto big = run_gpubench({"size", "--serve", "--workload", "llama3.1-70b", "--hardware",
                                 "catalog:h100-sxm5-80gb", "--input-tokens", "2048",
                                 "--output-tokens", "256", "--json"});
  REQUIRE(big.exit_code == 0);
  const json doc = json::parse(big.out);
  CHECK(doc.at("serving").at("limiting_component") == "memory_capacity");
  CHECK(doc.at("serving").at("output_tokens_per_s").is_null());
  const std::vector<std::string> base = {"size",
                                         "--serve",
                                         "--workload",
                                         "llama3.1-8b",
                                         "--hardware",
                                         "catalog:dgx-h100",
                                         "--input-tokens",
                                         "128",
                                         "--output-tokens",
                                         "128"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gpubench(args);
  };
  check_one_line_error(with({"--tensor", "3"}), "--tensor 3");
  check_one_line_error(with({"--weights", "fp4"}), "--weights fp4 needs nvfp4 GEMMs");
  check_one_line_error(with({"--rate", "0"}), "--rate");
  check_one_line_error(with({"--rate", "nan"}), "--rate");
  check_one_line_error(with({"--concurrency", "4", "--rate", "2"}), "--rate");
  check_one_line_error(with({"--stack", "tgi"}), "--stack tgi");
  check_one_line_error(run_gpubench({"size", "--serve", "--workload", "llama3.1-8b",
                                     "--input-tokens", "0", "--output-tokens", "8"}),
                       "--input-tokens");
  check_one_line_error(run_gpubench({"size", "--workload", "llama3.1-8b", "--tensor", "2"}),
                       "--serve");
}

// The whole calibration (both sets, a held-out fit per source) runs once in CI, in the unit test
// "calibration: both sets, ...", which also checks its Markdown against docs/model.md. Here the
// command's own wiring on a few rows: the text and --json of one report.
TEST_CASE("calibrate prints the stacks, the held-out tables and the rows of the files given",
          "[cli][model]") {
  const std::string sets = std::string(GPUBENCH_SOURCE_DIR) + "/configs/calibration/";
  json few = json::parse(read_file(sets + "calibration.json"));
  few.erase("row_details");
  json rows = json::array();
  for (const auto& row : few["rows"]) {
    if (row.value("model", "").starts_with("ResNet-50") && rows.size() < 6) rows.push_back(row);
  }
  REQUIRE(rows.size() == 6);
  few["rows"] = rows;
  temp_dir dir;
  const std::string file = (dir.path / "resnet-rows.json").string();
  write_file(file, few.dump());
  const auto r = run_gpubench({"calibrate", file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| resnet50 |"));
  CHECK_THAT(r.out, Catch::Contains("| pytorch |"));
  CHECK_THAT(r.out, Catch::Contains("| resnet-rows#0 | ResNet-50 v1.5 (224x224) | PyTorch (NGC "
                                    "21.03) | pytorch | a100-sxm4-80gb | 1 | tf32 | 256 | 938 | "));
  const auto as_json = run_gpubench({"calibrate", file, "--json"});
  REQUIRE(as_json.exit_code == 0);
  const json report = json::parse(as_json.out);
  CHECK(report["rows"].size() == 6);
  // --fit on rows of one stack: the stacks with none report what they inherit (was map::at).
  const auto fitted = run_gpubench({"calibrate", file, "--fit"});
  INFO(fitted.err);
  CHECK(fitted.exit_code == 0);
  CHECK_THAT(fitted.out, Catch::Contains("| pytorch |"));
}

TEST_CASE("calibrate: a set that is not a calibration set is exit 2 with one line naming it",
          "[cli][model]") {
  temp_dir dir;
  const auto file = dir.path / "mine.json";
  write_file(file, R"({"about": "x", "rows": [{"source": "s"}]})");
  check_one_line_error(run_gpubench({"calibrate", file.string()}), "/rows/0/model");
  // A file named like a listed set is held to that set's row_details.
  const auto named = dir.path / "calibration.json";
  write_file(named, R"({"about": "x", "rows": [{"source": "s", "model": "m", "gpus": 1,
                        "throughput": 1, "unit": "images/s", "gpu": "g", "precision": "p"}]})");
  check_one_line_error(run_gpubench({"calibrate", named.string()}),
                       "row_details names row calibration#");
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

// Golden files: regenerate with `build/gpubench report tests/data/results-2gpu-fixture.json
// --md tests/data/golden/report.md --csv tests/data/golden/report.csv` and review the diff: every
// line is what a user's ticket or spreadsheet gets.
TEST_CASE("report writes the Markdown and CSV of the golden files, line for line",
          "[cli][report]") {
  temp_dir dir;
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  const auto r = run_gpubench({"report", data + "/results-2gpu-fixture.json", "--md",
                               (dir.path / "report.md").string(), "--csv",
                               (dir.path / "report.csv").string()});
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"report.md", "report.csv"}) {
    INFO(name);
    const auto written = split_lines(read_file(dir.path / name));
    const auto golden = split_lines(read_file(data + "/golden/" + name));
    CHECK(written.size() == golden.size());
    for (std::size_t i = 0; i < std::min(written.size(), golden.size()); ++i) {
      INFO("line " << i + 1);
      CHECK(written[i] == golden[i]);
    }
  }
}

TEST_CASE("report: where the time went, per benchmark, the longest rank standing for the ranks",
          "[cli][report]") {
  // The fixture with case times: hbm.copy on two ranks at once (3 s and 5 s: the run waited
  // 5 s), host.membw's two cases on rank 0 one after the other (1 s + 2 s).
  json doc =
      json::parse(read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/results-2gpu-fixture.json"));
  int copies = 0;
  int membw = 0;
  for (auto& res : doc["results"]) {
    if (res["id"] == "hbm.copy") {
      res["rank"] = copies;
      res["host"] = "node";
      res["wall_s"] = copies++ == 0 ? 3.0 : 5.0;
    } else if (res["id"] == "host.membw") {
      res["rank"] = 0;
      res["host"] = "node";
      res["wall_s"] = ++membw;
    }
  }
  REQUIRE(copies == 2);
  REQUIRE(membw == 2);
  temp_dir dir;
  write_file(dir.path / "timed.json", doc.dump());
  const auto r = run_gpubench({"report", (dir.path / "timed.json").string(), "--md",
                               (dir.path / "r.md").string(), "--csv", (dir.path / "r.csv").string(),
                               "--html", (dir.path / "r.html").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(read_file(dir.path / "r.md"),
             Catch::Contains("## Where the time went\n\n| benchmark | cases | seconds | "
                             "share |\n|---|---|---|---|\n| hbm.copy | 2 | 5 | 62.5% |\n| "
                             "host.membw | 2 | 3 | 37.5% |\n"));
  const std::string csv = read_file(dir.path / "r.csv");
  CHECK_THAT(csv, Catch::Contains("time,hbm.copy,,wall_s,5,s,,,,,,\"2 case(s), 62.5% of the "
                                  "run's case time\"\r\n"));
  CHECK_THAT(read_file(dir.path / "r.html"), Catch::Contains("<table id=\"time-table\">"));
  // A file without case times (the golden fixture) has no such section.
  const auto plain =
      run_gpubench({"report", std::string(GPUBENCH_TEST_DATA_DIR) + "/results-2gpu-fixture.json"});
  CHECK(plain.out.find("Where the time went") == std::string::npos);
}

TEST_CASE("report: the numbers of the Markdown and the CSV agree", "[cli][report]") {
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  const auto md = run_gpubench({"report", data + "/results-2gpu-fixture.json"});
  REQUIRE(md.exit_code == 0);
  temp_dir dir;
  REQUIRE(run_gpubench({"report", data + "/results-2gpu-fixture.json", "--csv",
                        (dir.path / "r.csv").string()})
              .exit_code == 0);
  const std::string csv = read_file(dir.path / "r.csv");
  // The fixture's hbm.copy median is 2900 GB/s on a 3350 GB/s H100: 86.6% of the datasheet.
  CHECK_THAT(md.out, Catch::Contains("| hbm.copy | gpu=0 array_bytes=1073741824 | GBps | 2900 | "
                                     "GB/s | 86.6% |"));
  CHECK_THAT(csv, Catch::Contains("measured,hbm.copy,gpu=0 array_bytes=1073741824,GBps,2900,GB/s,"
                                  "86.5672,"));
  CHECK_THAT(md.out, Catch::Contains("| pcie.bidir |  | skipped | fixture: skipped to show a "
                                     "reason |"));
  CHECK_THAT(csv, Catch::Contains("failed,nccl.alltoall,bytes=1048576,"));
}

TEST_CASE(
    "report: a fleet's merged file shows each figure once over its GPUs, and CSV keeps them all",
    "[cli][report]") {
  temp_dir dir;
  const std::string file = (dir.path / "fleet.json").string();
  REQUIRE(run_program({"/usr/bin/python3",
                       std::string(GPUBENCH_SOURCE_DIR) + "/tools/make_fleet_results.py", "1000",
                       file, "--health"})
              .exit_code == 0);
  const fs::path md = dir.path / "r.md";
  const fs::path csv = dir.path / "r.csv";
  const fs::path html = dir.path / "r.html";
  REQUIRE(run_gpubench(
              {"report", file, "--md", md.string(), "--csv", csv.string(), "--html", html.string()})
              .exit_code == 0);
  // CSV: every GPU's figure, from which the spread is computed here.
  std::vector<double> gemm;
  std::istringstream csv_lines(read_file(csv));
  for (std::string line; std::getline(csv_lines, line);) {
    if (line.rfind("measured,gemm,gpu=", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string c; std::getline(fields, c, ',');) cells.push_back(c);
    gemm.push_back(std::stod(cells.at(4)));
  }
  REQUIRE(gemm.size() == 1000);
  std::sort(gemm.begin(), gemm.end());
  const double median = (gemm[499] + gemm[500]) / 2;

  const std::string text = read_file(md);
  CHECK_THAT(text, Catch::Contains("2375 figures, more than 2000: each is shown once"));
  CHECK(text.find("| gemm | gpu=") == std::string::npos);  // no row per GPU
  const std::string head = "| gemm | dtype=bf16 shape=8192x8192x8192 | TFLOPs | 1000 GPUs | ";
  const std::size_t at = text.find(head);
  REQUIRE(at != std::string::npos);
  std::vector<std::string> cells;
  std::istringstream row(text.substr(at + 1, text.find('\n', at) - at - 1));
  for (std::string c; std::getline(row, c, '|');) cells.push_back(c);
  REQUIRE(cells.size() >= 11);
  CHECK(std::stod(cells[4]) == Approx(median).epsilon(0.001));
  CHECK(std::stod(cells[5]) == Approx(gemm.front()).epsilon(0.001));
  CHECK(std::stod(cells[6]) == Approx(gemm.back()).epsilon(0.001));
  CHECK_THAT(cells[5], Catch::Contains(" (node-"));
  CHECK_THAT(cells[5], Catch::Contains(" GPU "));
  // The passing rules counted per rule, as validate's text counts them.
  CHECK_THAT(text, Catch::Contains("| rule | subjects | pass | warn | fail | missing | n/a |"));
  CHECK_THAT(text, Catch::Contains("| gemm bf16 | 1000 | 1000 | 0 | 0 | 0 | 0 | "));
  CHECK(std::count(text.begin(), text.end(), '\n') < 300);
  const std::string page = read_file(html);
  CHECK_THAT(page, Catch::Contains("<th>measured on</th>"));
  std::size_t rows = 0;
  for (std::size_t p = page.find("<tr>"); p != std::string::npos; p = page.find("<tr>", p + 1))
    ++rows;
  CHECK(rows < 300);
}

TEST_CASE("report: each ceilings chart draws the prediction first, then the ceilings",
          "[cli][report]") {
  temp_dir dir;
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  REQUIRE(run_gpubench({"report", data + "/results-2gpu-fixture.json", "--html",
                        (dir.path / "r.html").string()})
              .exit_code == 0);
  const std::string html = read_file(dir.path / "r.html");
  // bert-large is limited by GPU math: its ceiling stands above the prediction, which the
  // chart shows as its own bar, the highlighted one.
  const auto chart = html.find("Component ceilings: bert-large</figcaption>");
  REQUIRE(chart != std::string::npos);
  const std::string svg = html.substr(chart, html.find("</figure>", chart) - chart);
  const auto predicted = svg.find(">predicted<");
  const auto limit = svg.find("(the limit: the largest part of the GPU step)");
  REQUIRE(predicted != std::string::npos);
  REQUIRE(limit != std::string::npos);
  CHECK(predicted < limit);
  CHECK_THAT(svg, Catch::Contains("1921 sequences/s (the prediction)"));  // golden report.md
}

namespace {

// The text between `from` and the next `to` (or the end).
std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const auto start = text.find(from);
  if (start == std::string::npos) return "";
  const auto end = text.find(to, start + from.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

// What one sends a manager: the verdict with every warning first, what the machine will do and
// what it costs, the passing rules folded away, and charts drawn to the scale that matters.
TEST_CASE("report: the verdict and its warnings first, what the machine will do, charts to scale",
          "[cli][report]") {
  temp_dir dir;
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  // Eight H100s, GPU 3's fp8 GEMM under its advisory floor; a workload that does not fit.
  write_file(dir.path / "node.json", fault_document(data, "fp8-warn").dump());
  write_file(dir.path / "huge.json",
             R"({"schema": "gpubench.workload/1", "name": "gpt2-large-batch-256",
                 "model": {"preset": "gpt2-large"}, "precision": "amp_bf16",
                 "batch_per_gpu": 256, "optimizer": "adamw", "data": {"source": "synthetic"}})");
  const auto r =
      run_gpubench({"report", (dir.path / "node.json").string(), "--workload",
                    (dir.path / "huge.json").string(), "--workload", "llama2-7b", "--set",
                    "price.usd_per_hour=98.32", "--md", (dir.path / "r.md").string(), "--html",
                    (dir.path / "r.html").string(), "--csv", (dir.path / "r.csv").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  const std::string md = read_file(dir.path / "r.md");
  const std::string top = md.substr(0, md.find("\n## "));
  CHECK_THAT(top, Catch::Contains("\n**Verdict:** WARN: 161 rules against spec h100-sxm5-80gb; 1 "
                                  "warning: gemm fp8 GPU 3 (0000:5d:00.0) 1060 TFLOP/s"));
  CHECK_THAT(top, Catch::Contains("| gemm fp8 | GPU 3 (0000:5d:00.0) | 1060 TFLOP/s | 1211 TFLOP/s "
                                  "| 1090 TFLOP/s (90%) | warn |"));
  const std::string will_do = between(md, "## What this machine will do", "\n## ");
  CHECK_THAT(will_do, Catch::Contains("The run took 10 min (2026-01-01T00:00:00Z to "
                                      "2026-01-01T00:10:00Z)."));
  // A job that does not fit has no rate and no range; one that runs carries its 80% range.
  CHECK_THAT(will_do, Catch::Contains("| gpt2-large-batch-256 | - | - | sequences/s | - | "
                                      "memory_capacity | measured | no, "));
  CHECK_THAT(will_do, Catch::Contains("| workload | predicted | 80% range | unit |"));
  CHECK(std::regex_search(will_do,
                          std::regex(R"(\| llama2-7b \| [0-9.]+ \| [0-9.]+ to [0-9.]+ \|)")));
  CHECK_THAT(will_do, Catch::Contains("| llama2-7b | ") && Catch::Contains(" | yes, ") &&
                          Catch::Contains(" | $98.3 | $"));
  // The passing rules after a count line; the warning is not among them.
  const std::string rules = between(md, "## Acceptance (spec h100-sxm5-80gb)", "\n## ");
  CHECK_THAT(rules, Catch::Contains("\n**160 rules passed**; 1 did not (at the top).\n\n| rule |"));
  CHECK_THAT(rules, !Catch::Contains("| warn |") && Catch::Contains("| pass |"));
  CHECK(md.find("## What this machine will do") < md.find("## Acceptance"));

  // The cost per million samples is the price over the samples of an hour, as in compare.
  const std::string csv = read_file(dir.path / "r.csv");
  double rate = 0;
  double cost = 0;
  for (const std::string& row :
       {std::string("predicted_samples_per_s,"), std::string("usd_per_million_samples,")}) {
    const auto at = csv.find("sizing,llama2-7b,");
    REQUIRE(at != std::string::npos);
    const auto field = csv.find(row, at);
    REQUIRE(field != std::string::npos);
    (row[0] == 'p' ? rate : cost) = std::stod(csv.substr(field + row.size()));
  }
  CHECK(cost == Approx(98.32 / (rate * 3600) * 1e6).epsilon(1e-4));
  CHECK_THAT(csv, Catch::Contains("\r\ntime,run,,wall_s,600,s,"));

  const std::string html = read_file(dir.path / "r.html");
  const std::string summary = between(html, "<section id=\"summary\">", "</section>");
  CHECK_THAT(summary, Catch::Contains("<p class=\"verdict warn\" id=\"verdict\">Verdict: WARN: "));
  CHECK_THAT(summary, Catch::Contains("<table id=\"not-passed\">"));
  CHECK(summary.find("id=\"not-passed\"") < summary.find("id=\"will-do\""));
  CHECK_THAT(html, Catch::Contains("<details id=\"passed-rules\"><summary>160 rules passed; 1 did "
                                   "not (in the summary)</summary>"));
  // No rate ceilings for the job that does not fit (they would be drawn to PCIe's millions).
  const std::string none = between(html, "id=\"chart-ceilings-0\"", "</figure>");
  CHECK_THAT(none, Catch::Contains("No rate: the job does not fit in GPU memory"));
  CHECK_THAT(none, !Catch::Contains("<svg"));
  CHECK_THAT(html, Catch::Contains("id=\"chart-memory-0\""));
  // llama2-7b's axis ends at 5x its prediction; the ceilings beyond it are cut and marked.
  const std::string capped = between(html, "id=\"chart-ceilings-1\"", "</figure>");
  CHECK_THAT(capped,
             Catch::Contains("class=\"bar capped\"") && Catch::Contains("class=\"cap-marker\"") &&
                 Catch::Contains("» beyond the axis, which ends at its first tick past 5x the "
                                 "highlighted bar"));
  double top_tick = 0;
  const std::string tick_mark = "class=\"tick\">";
  for (auto at = capped.find(tick_mark); at != std::string::npos;
       at = capped.find(tick_mark, at + 1)) {
    const auto start = at + tick_mark.size();
    const std::string tick = capped.substr(start, capped.find('<', start) - start);
    if (!tick.empty() && std::isdigit(static_cast<unsigned char>(tick[0]))) {
      top_tick = std::max(top_tick, std::stod(tick));
    }
  }
  // The first 1-2-2.5-5 tick at or past 5x: a step is at most twice a fifth of the range.
  CHECK(top_tick >= 5 * rate);
  CHECK(top_tick <= 7 * rate);
}

TEST_CASE("report: a missing results file or a bad --set is a one-line error, exit 2",
          "[cli][report]") {
  const auto missing = run_gpubench({"report", "/nonexistent/results.json", "--md", "/dev/null"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/results.json"));
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  const auto bad =
      run_gpubench({"report", data + "/results-2gpu-fixture.json", "--set", "gpu.model=nosuchgpu"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("nosuchgpu"));
}

TEST_CASE(
    "compare --serve: each machine's best serving layout within the targets, $ per million "
    "output tokens, the fastest and the cheapest",
    "[cli][serving]") {
  temp_dir dir;
  const std::string html = (dir.path / "serve.html").string();
  const auto r = run_gpubench({"compare", "catalog:dgx-h100", "catalog:dgx-b200",
                               "catalog:aws-p5.48xlarge", "--serve", "--workload", "llama3.1-70b",
                               "--input-tokens", "2048", "--output-tokens", "256", "--ttft-ms",
                               "1000", "--tpot-ms", "50", "--json", "--html", html});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("workloads").empty());  // serving replaces the training sizing
  CHECK(doc.at("options").at("serve").at("input_tokens") == 2048);
  const json& served = doc.at("serving").at(0);
  CHECK(served.at("workload") == "llama3.1-70b");
  const json& machines = served.at("machines");
  REQUIRE(machines.size() == 3);
  for (const json& m : machines) {
    INFO(m.dump());
    const json& best = m.at("best");
    REQUIRE(best.is_object());
    CHECK(best.at("meets_targets") == true);
    CHECK(best.at("ttft_ms").get<double>() <= 1000);
    CHECK(best.at("tpot_ms").get<double>() <= 50);
    CHECK(best.at("gpus") == 8);
  }
  // The same DGX H100 box rented as p5.48xlarge sizes alike; only the rental has a price:
  // $/hour / (output tokens/s x 3600) x 10^6.
  CHECK(machines.at(0).at("best").at("output_tokens_per_s") ==
        machines.at(2).at("best").at("output_tokens_per_s"));
  CHECK(machines.at(0).at("usd_per_million_output_tokens").is_null());
  const double rate = machines.at(2).at("best").at("output_tokens_per_s");
  const double usd_per_hour = doc.at("machines").at(2).at("usd_per_hour");
  CHECK(machines.at(2).at("usd_per_million_output_tokens").get<double>() ==
        Approx(usd_per_hour / (rate * 3600) * 1e6));
  CHECK(served.at("cheapest") == 2);
  CHECK(served.at("fastest") == 1);  // B200 at fp4
  const std::string page = read_file(html);
  CHECK_THAT(page, Catch::Contains("llama3.1-70b served") &&
                       Catch::Contains("$ per million output tokens"));
  // Without tokens or a model: exit 2, one line.
  check_one_line_error(
      run_gpubench({"compare", "catalog:dgx-h100", "--serve", "--workload", "llama3.1-70b"}),
      "--input-tokens and --output-tokens are required");
  check_one_line_error(run_gpubench({"compare", "catalog:dgx-h100", "--input-tokens", "10"}),
                       "--serve");
}

TEST_CASE(
    "report --serve adds the serving section: the throughput-latency curve, the best "
    "layouts, their figures in the CSV",
    "[cli][serving]") {
  temp_dir dir;
  const std::string html = (dir.path / "r.html").string();
  const std::string md = (dir.path / "r.md").string();
  const std::string csv = (dir.path / "r.csv").string();
  const std::string results = std::string(GPUBENCH_SOURCE_DIR) + "/tests/data/validate-8gpu.json";
  const auto r = run_gpubench({"report", results, "--html", html, "--md", md, "--csv", csv,
                               "--serve", "llama3.1-70b", "--input-tokens", "2048",
                               "--output-tokens", "256", "--tpot-ms", "50"});
  REQUIRE(r.exit_code == 0);
  const std::string page = read_file(html);
  CHECK_THAT(page, Catch::Contains("id=\"serving\"") && Catch::Contains("id=\"chart-serving\"") &&
                       Catch::Contains("time per output token (ms)"));
  CHECK_THAT(page, !Catch::Contains("nan"));
  const std::string markdown = read_file(md);
  CHECK_THAT(markdown, Catch::Contains("## Serving") &&
                           Catch::Contains("llama3.1-70b: 2048 tokens in, 256 out, vllm"));
  const std::string table = read_file(csv);
  CHECK_THAT(table, Catch::Contains("serving,llama3.1-70b,") &&
                        Catch::Contains(",output_tokens_per_s_per_gpu,") &&
                        Catch::Contains(",tpot_ms,"));
  check_one_line_error(run_gpubench({"report", results, "--serve", "llama3.1-70b"}),
                       "--input-tokens and --output-tokens are required");
  check_one_line_error(run_gpubench({"report", results, "--serve", "bert-large", "--input-tokens",
                                     "8", "--output-tokens", "8"}),
                       "decoder language model");
}

TEST_CASE("compare: ratios, cost per million samples, epoch time and the best choice",
          "[cli][report]") {
  const auto r = run_gpubench({"compare", "catalog:aws-p4d.24xlarge", "catalog:aws-p5.48xlarge",
                               "catalog:dgx-h100", "--workload", "resnet50", "--json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("schema") == "gpubench.compare/1");
  REQUIRE(doc.at("machines").size() == 3);
  const json& w = doc.at("workloads").at(0);
  CHECK(w.at("workload") == "resnet50");
  const double epoch = w.at("samples_per_epoch").get<double>();
  CHECK(epoch == Approx(140e9 / 110000));  // dataset bytes / stored bytes per sample
  double best_rate = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const json& cell = w.at("machines").at(i);
    const double rate = cell.at("predicted_samples_per_s").get<double>();
    best_rate = std::max(best_rate, rate);
    const json& price = doc.at("machines").at(i).at("usd_per_hour");
    if (price.is_null()) {
      CHECK(cell.at("usd_per_million_samples").is_null());  // the DGX has no sourced price
    } else {
      CHECK(cell.at("usd_per_million_samples").get<double>() ==
            Approx(price.get<double>() / (rate * 3600) * 1e6));
    }
    CHECK(cell.at("epoch_hours").get<double>() == Approx(epoch / rate / 3600));
  }
  const auto fastest = w.at("fastest").get<std::size_t>();
  CHECK(w.at("machines").at(fastest).at("predicted_samples_per_s").get<double>() == best_rate);
  CHECK_FALSE(w.at("cheapest").is_null());
  // Figures carry their ratio to the first machine.
  bool saw_ratio = false;
  for (const json& f : doc.at("figures")) {
    const json& first = f.at("machines").at(0);
    const json& second = f.at("machines").at(1);
    if (first.is_null() || second.is_null() || first.at("value").get<double>() == 0) continue;
    CHECK(second.at("ratio_to_first").get<double>() ==
          Approx(second.at("value").get<double>() / first.at("value").get<double>()));
    saw_ratio = true;
  }
  CHECK(saw_ratio);
}

TEST_CASE("compare: the rental question, nodes, a price override, cost per token and a budget",
          "[cli][report]") {
  // 4 nodes of each, one price overridden, Llama 2 7B (a sequence model) for 2e12 tokens.
  auto r = run_gpubench({"compare", "catalog:aws-p5.48xlarge", "catalog:aws-p4d.24xlarge",
                         "catalog:azure-nd96isr-h100-v5", "--workload", "llama2-7b", "--nodes", "4",
                         "--tokens", "2e12", "--set",
                         "catalog:aws-p5.48xlarge:price.usd_per_hour=40", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json doc = json::parse(r.out);
  CHECK(doc.at("options").at("nodes") == 4);
  CHECK(doc.at("machines").at(0).at("usd_per_hour") == 40.0);
  for (const json& m : doc.at("machines")) {
    CHECK(m.at("network").at("basis") == "catalog");  // every machine's network basis shown
  }
  const json& w = doc.at("workloads").at(0);
  const double tokens_per_sequence = 4096;  // llama2-7b's sequence length
  CHECK(w.at("budget_samples").get<double>() == Approx(2e12 / tokens_per_sequence));
  const json& p5 = w.at("machines").at(0);
  CHECK(p5.at("nodes") == 4);
  CHECK(p5.at("fits") == true);
  const double rate = p5.at("predicted_samples_per_s").get<double>();
  const double per_hour = 40.0 * 4;  // the price is per node
  CHECK(p5.at("usd_per_million_samples").get<double>() == Approx(per_hour / (rate * 3600) * 1e6));
  CHECK(p5.at("usd_per_million_tokens").get<double>() ==
        Approx(p5.at("usd_per_million_samples").get<double>() / tokens_per_sequence));
  const double hours = 2e12 / tokens_per_sequence / rate / 3600;
  CHECK(p5.at("budget_hours").get<double>() == Approx(hours));
  CHECK(p5.at("budget_usd").get<double>() == Approx(hours * per_hour));
  // The A100 40GB does not hold the model: it is shown so, with no rate or cost.
  const json& p4d = w.at("machines").at(1);
  CHECK(p4d.at("fits") == false);
  CHECK(p4d.at("predicted_samples_per_s") == 0.0);
  CHECK(p4d.at("usd_per_million_samples").is_null());
  // The two H100 machines run at the same predicted rate: a tie for fastest, not a winner.
  CHECK(w.at("ties").at("fastest") == json::array({0, 2}));
  CHECK(w.at("ties").at("cheapest") == json::array({0}));
  r = run_gpubench({"compare", "catalog:aws-p5.48xlarge", "catalog:azure-nd96isr-h100-v5",
                    "--workload", "llama2-7b", "--nodes", "4"});
  CHECK_THAT(r.out, Catch::Contains("fastest (tie), cheapest"));
  CHECK_THAT(r.out, Catch::Contains("3200 Gb/s (catalog)"));

  // --epochs over --dataset-samples; an image model has no cost per token.
  r = run_gpubench({"compare", "catalog:aws-p5.48xlarge", "catalog:aws-p4d.24xlarge", "--workload",
                    "resnet50", "--gpus", "4", "--epochs", "90", "--dataset-samples", "1281167",
                    "--json"});
  REQUIRE(r.exit_code == 0);
  doc = json::parse(r.out);
  const json& images = doc.at("workloads").at(0);
  CHECK(images.at("budget_samples").get<double>() == Approx(90.0 * 1281167));
  for (const json& cell : images.at("machines")) {
    CHECK(cell.at("gpus_per_node") == 4);
    CHECK(cell.at("usd_per_million_tokens").is_null());
    CHECK(cell.at("budget_hours").get<double>() ==
          Approx(90.0 * 1281167 / cell.at("predicted_samples_per_s").get<double>() / 3600));
  }

  // Bad input: one clear line, exit 2.
  check_one_line_error(run_gpubench({"compare", "catalog:dgx-h100", "catalog:aws-p5.48xlarge",
                                     "--set", "catalog:nosuch:price.usd_per_hour=1"}),
                       "no machine 'catalog:nosuch' in the comparison");
  CHECK(
      run_gpubench({"compare", "catalog:dgx-h100", "--tokens", "1e9", "--epochs", "1"}).exit_code ==
      2);
}

TEST_CASE("run writes report.html and report.md beside results.json", "[cli][report]") {
  temp_dir dir;
  const auto r = run_gpubench({"run", "--only", "cpu.augment", "--axis", "cpu.augment:threads=1",
                               "--out", (dir.path / "o").string()});
  REQUIRE(r.exit_code == 0);
  const std::string html = read_file(dir.path / "o" / "report.html");
  CHECK_THAT(html, Catch::Contains("<section id=\"summary\">"));
  CHECK_THAT(html, Catch::Contains("cpu.augment"));
  CHECK_THAT(read_file(dir.path / "o" / "report.md"),
             Catch::Contains("# gpubench report") && Catch::Contains("## Where the time went") &&
                 Catch::Contains("| cpu.augment | 1 |"));
  CHECK_THAT(html, Catch::Contains("<table id=\"time-table\">"));
  CHECK_THAT(r.out, Catch::Contains("report.html"));
  // The verdict of the GPUs' spec, or (without a GPU) why there is none.
  CHECK_THAT(r.out, Catch::Contains("\nacceptance: FAIL: ") ||
                        Catch::Contains("\nacceptance: not validated: "));
}

// Issue 40: cpu.augment measured on a busy machine (cv 21.7%) became "needs 58 cores" without a
// word. A figure whose repetitions spread above the noise threshold is marked where it is read.
TEST_CASE("a noisy measurement is marked in the report and said first by a sizing resting on it",
          "[cli][report][size]") {
  const std::string data = GPUBENCH_TEST_DATA_DIR;
  // Ordered: the report prints axes in the file's order.
  auto doc = nlohmann::ordered_json::parse(read_file(data + "/results-2gpu-fixture.json"));
  int augment = 0;
  for (auto& res : doc["results"]) {
    if (res["id"] != "cpu.augment") continue;
    for (auto& [name, metric] : res["metrics"].items()) metric["cv"] = 0.217;
    ++augment;
  }
  REQUIRE(augment == 2);
  temp_dir dir;
  const std::string noisy = (dir.path / "noisy.json").string();
  write_file(noisy, doc.dump());

  // resnet50 on the fixture is limited by the CPU's data preparation.
  const auto sized = run_gpubench({"size", "--hardware", noisy, "--workload", "resnet50"});
  INFO(sized.out << sized.err);
  REQUIRE(sized.exit_code == 0);
  REQUIRE_THAT(sized.out, Catch::Contains("limited by cpu"));
  const auto caveat = sized.out.find(
      "the limit (cpu) rests on a noisy measurement: cpu.augment_per_core (cv 21.7%)");
  REQUIRE(caveat != std::string::npos);
  // Before the advice that rests on it.
  const auto advice = sized.out.find("needs ");
  REQUIRE(advice != std::string::npos);
  CHECK(caveat < advice);
  CHECK_THAT(sized.out,
             Catch::Matches("(.|\n)*\ncpu \\* +[0-9.]+ +[0-9.]+% +derived, noisy (.|\n)*"));
  const json as_json = json::parse(
      run_gpubench({"size", "--hardware", noisy, "--workload", "resnet50", "--json"}).out);
  CHECK(as_json["components"]["cpu"]["noisy"] == json::array({"cpu.augment_per_core (cv 21.7%)"}));
  CHECK(as_json["recommendations"][0].get<std::string>().starts_with("the limit (cpu)"));

  // The same workload on the fixture as measured (cv 4.7%): no such word.
  const auto steady = run_gpubench(
      {"size", "--hardware", data + "/results-2gpu-fixture.json", "--workload", "resnet50"});
  CHECK(steady.out.find("the limit (cpu) rests on") == std::string::npos);

  // The report marks the figure in its table and says so where the limit is given.
  REQUIRE(run_gpubench(
              {"report", noisy, "--md", (dir.path / "r.md").string(), "--workload", "resnet50"})
              .exit_code == 0);
  const std::string md = read_file(dir.path / "r.md");
  CHECK_THAT(md, Catch::Contains("| cpu.augment | image_width=500 image_height=375 output_size=224 "
                                 "threads=2 | samples_per_s_per_core |"));
  CHECK_THAT(md, Catch::Contains("| 21.7% noisy |"));
  // Derived: the fixture has no cpu.dataloader, so the python loader's rate is cpu.augment's
  // times loader_efficiency.
  CHECK_THAT(md, Catch::Contains("| cpu | derived, noisy |"));
}

// Issue 41: a pipeline that does not divide the layers (Llama 3.1 405B's 126 on 8 stages) was
// exit 2 "a divisor"; Megatron-LM splits it, counting the embedding and the loss as layers.
TEST_CASE("size splits layers a pipeline does not divide as Megatron does, the slowest stage",
          "[cli][model]") {
  temp_dir dir;
  const auto sized = [&](const std::string& name, const std::string& model, int pipeline,
                         int tensor, int gpus, int nodes) {
    const auto file = dir.path / (name + ".json");
    write_file(file,
               R"({"schema": "gpubench.workload/1", "name": ")" + name + R"(", "model": )" + model +
                   R"(, "precision": "amp_bf16", "batch_per_gpu": 1,
                         "gradient_accumulation": 32, "optimizer": "adamw",
                         "data": {"source": "synthetic"},
                         "parallel": {"strategy": "ddp", "tensor": )" +
                   std::to_string(tensor) + R"(, "pipeline": )" + std::to_string(pipeline) + "}}");
    const auto r =
        run_gpubench({"size", "--hardware", "catalog:dgx-h100", "--workload", file.string(),
                      "--gpus", std::to_string(gpus), "--nodes", std::to_string(nodes), "--json"});
    INFO(name << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  // Llama 3 8B's 32 layers: 6 stages take 4 (+ embedding), 6, 6, 6, 6 and 4 (+ the loss). The
  // last stage, 4 layers and the vocabulary projection, is the slowest, as in an even split over
  // 8 stages: the same step on one GPU.
  const std::string llama3 = R"({"preset": "llama3-8b"})";
  const json six = sized("p6", llama3, 6, 1, 6, 1);
  const json eight = sized("p8", llama3, 8, 1, 8, 1);
  CHECK(six["step"]["flops"].get<double>() == Approx(eight["step"]["flops"].get<double>()));
  // Fewer stages, the same slowest stage: less bubble.
  CHECK(six["per_gpu_samples_per_s"].get<double>() > eight["per_gpu_samples_per_s"].get<double>());
  // Llama 3.1 405B's shape: 126 layers on 8 stages of 8 GPUs (15, 16 x 6, 15).
  const std::string llama405 = R"({"preset": "llama3-8b", "layers": 126, "hidden": 16384,
      "heads": 128, "kv_heads": 8, "ffn": 53248})";
  const json big = sized("l405", llama405, 8, 8, 8, 8);
  CHECK(big["memory"]["per_gpu_GiB"].get<double>() > 0);
  CHECK(big["step"]["flops"].get<double>() > 0);
  // A middle stage of 16 layers runs more than the last's 15 and the vocabulary projection.
  const json last_like = sized("l405-120", R"({"preset": "llama3-8b", "layers": 120,
      "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn": 53248})",
                               8, 8, 8, 8);
  CHECK(big["step"]["flops"].get<double>() > last_like["step"]["flops"].get<double>());
  // More stages than the layers allow: exit 2, one line naming the field.
  const auto file = dir.path / "too-many.json";
  write_file(file, R"({"schema": "gpubench.workload/1", "name": "x", "model": {"preset":
      "llama3-8b"}, "parallel": {"pipeline": 20}})");
  check_one_line_error(run_gpubench({"size", "--workload", file.string()}), "at most 17 stages");
}

// Issue 41: fp8 training converts the linear layers only (Transformer Engine, torchao): attention's
// products and the vocabulary projection stay in bf16, so even a GPU with boundless fp8 GEMMs
// cannot take a job past what those leave. Before, every GEMM of the step ran at the fp8 rate.
TEST_CASE("fp8 speeds up the linear layers only: attention and the vocabulary projection stay bf16",
          "[cli][model]") {
  const auto rate = [](const std::string& precision, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"size",      "--hardware",  "catalog:dgx-h100", "--workload",
                                  "llama3-8b", "--precision", precision,          "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_gpubench(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["predicted_samples_per_s"].get<double>();
  };
  const double bf16 = rate("amp_bf16", {});
  const double fp8 = rate("fp8", {});
  // torchao's float8 runs Llama 3 8B about 1.25x its bf16 rate on H100; the model said 2x and
  // more with every GEMM in fp8 at an assumed 0.8 of the fp8 peak (now 1.45x).
  CHECK(fp8 > bf16);
  CHECK(fp8 < 1.6 * bf16);
  // The bf16 GEMMs left in the step hold it: a faster bf16 GEMM speeds the fp8 job up too.
  CHECK(rate("fp8", {"--set", "gpu.peak_tflops.bf16=3000"}) > fp8 * 1.05);
}
