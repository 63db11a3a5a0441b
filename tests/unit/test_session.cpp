// run_session: the `gpubench run` orchestration, in process, against a test registry and a
// machine described by the test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fake_benchmarks.hpp"
#include "gpubench/harness/session.hpp"
#include "temp_dir.hpp"

using namespace gpubench;
using gpubench::testing::fake_behaviour;
using gpubench::testing::fake_definition;
using gpubench::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

struct session_fixture {
  temp_dir dir;
  registry benchmarks;
  system_info machine;
  session_request request;

  session_fixture() {
    const fs::path suite_file = dir.path / "suite.json";
    std::ofstream(suite_file) << R"({"schema": "gpubench.suite/1", "name": "tiny",
      "defaults": {"repetitions": 2, "warmup_iterations": 0, "iterations": 1},
      "benchmarks": [{"id": "*"}]})";
    request.suite = suite_file.string();
    request.out = (dir.path / "out").string();
    request.argv = {"gpubench", "run"};
    machine.host = "testhost";
    machine.cpu.cores = machine.cpu.cores_available = 1;
  }

  session_result run() {
    session_environment environment;
    environment.benchmarks = &benchmarks;
    environment.discover = [this] { return machine; };
    return run_session(request, environment);
  }
};

}  // namespace

TEST_CASE("a session runs the plan and holds the results it wrote", "[session]") {
  session_fixture f;
  f.benchmarks.add(fake_definition("fake.one"));
  const session_result s = f.run();
  CHECK(s.code == exit_ok);
  REQUIRE(s.holds_results);
  CHECK(s.results_path == fs::path(f.request.out) / "results.json");
  CHECK(s.outcome.ok == 1);
  CHECK_FALSE(s.idle_gpus);
  REQUIRE(s.document.results.size() == 1);
  CHECK(s.document.meta.suite == "tiny");
  CHECK(s.document.meta.argv == std::vector<std::string>{"gpubench", "run"});
  CHECK(s.document.system.host == "testhost");
  const results_document on_disk = read_results(s.results_path);
  CHECK(on_disk.results.size() == 1);
  CHECK(on_disk.results[0].id == "fake.one");
  // The default scratch folder, left empty, is removed.
  CHECK_FALSE(fs::exists(fs::path(f.request.out) / "scratch"));
}

TEST_CASE("bad input ends a session with exit 2 before anything is created", "[session]") {
  session_fixture f;
  f.benchmarks.add(fake_definition("fake.one"));
  f.request.only = {"no.such"};
  const session_result s = f.run();
  CHECK(s.code == exit_bad_input);
  CHECK_FALSE(s.holds_results);
  CHECK_FALSE(fs::exists(f.request.out));

  session_fixture g;
  g.benchmarks.add(fake_definition("fake.one"));
  g.request.gpus = "0";  // the machine has no GPU 0
  CHECK(g.run().code == exit_bad_input);
  CHECK_FALSE(fs::exists(g.request.out));
}

TEST_CASE("a failed case, or GPUs that never ran, make the session's exit 1", "[session]") {
  session_fixture failing;
  fake_behaviour bad;
  bad.verification_passes = false;
  failing.benchmarks.add(fake_definition("fake.bad", bad));
  const session_result failed = failing.run();
  CHECK(failed.code == exit_failure);
  CHECK(failed.outcome.failed == 1);

  session_fixture idle;
  idle.machine.gpus.resize(2);  // listed (say by NVML), but nothing can drive them
  benchmark_definition gpu = fake_definition("fake.gpu");
  gpu.set_needs_gpu().set_supported(
      [](const context&) { return std::optional<std::string>("no usable driver"); });
  idle.benchmarks.add(std::move(gpu));
  idle.benchmarks.add(fake_definition("fake.host"));
  const session_result s = idle.run();
  CHECK(s.code == exit_failure);
  CHECK(s.outcome.failed == 0);
  CHECK_THAT(s.idle_gpus.value_or(""),
             Catch::StartsWith("the machine has 2 GPU(s), but every GPU benchmark was skipped "
                               "(fake.gpu: no usable driver)"));
  CHECK(exit_code_of(s) == exit_failure);
}
