#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "fake_benchmarks.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/exit_codes.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/stop_cleanup.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/shared_resources.hpp"
#include "temp_dir.hpp"

using namespace gpubench;
using gpubench::testing::fake_behaviour;
using gpubench::testing::fake_definition;
using gpubench::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

struct run_fixture {
  fs::path dir;
  results_document doc;
  run_fixture() {
    std::string pattern = (fs::temp_directory_path() / "gpubench-runner-XXXXXX").string();
    dir = mkdtemp(pattern.data());
  }
  ~run_fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  run_outcome run(const registry& r, run_settings settings = {}) {
    const auto ctx = gpubench::testing::empty_context();
    suite s;
    s.name = "test";
    s.defaults = settings;
    s.entries.push_back(suite_entry{"*", {}, {}, {}, {}, {}});
    return run_plan(make_plan(s, {}, r, ctx), ctx, doc, dir / "results.json");
  }
};

run_settings fixed(int repetitions, std::int64_t iterations, int warmup) {
  run_settings s;
  s.repetitions = repetitions;
  s.iterations = iterations;
  s.warmup_iterations = warmup;
  return s;
}

}  // namespace

TEST_CASE("manual times become metrics through Google Benchmark", "[runner]") {
  fake_behaviour b;
  b.seconds_per_iteration = 1e-3;
  b.bytes_per_iteration = 2e6;  // 2e6 B / 1 ms = 2 GB/s
  registry r;
  r.add(fake_definition("fake.bw", b));
  run_fixture f;
  const auto outcome = f.run(r, fixed(4, 3, 2));
  CHECK(outcome.ok == 1);
  REQUIRE(f.doc.results.size() == 1);
  const result& res = f.doc.results[0];
  CHECK(res.status == result_status::ok);
  REQUIRE(res.metrics.size() == 1);
  CHECK(res.metrics[0].second.unit.unit == "GB/s");
  CHECK(res.metrics[0].first == "GBps");
  CHECK(res.metrics[0].second.median == Approx(2.0));
  CHECK(res.metrics[0].second.n == 4);
  CHECK(res.metrics[0].second.cv == Approx(0).margin(1e-9));
  CHECK(res.verified == true);
  CHECK(res.info.get()["iterations_per_repetition"] == json::array({3, 3, 3, 3}));
  // Warm-up ran but was not counted: 2 + 4 x 3 calls in all.
  CHECK(*b.calls == 14);
  // The file on disk holds the same result.
  const auto on_disk = read_results(f.dir / "results.json");
  REQUIRE(on_disk.results.size() == 1);
  CHECK(on_disk.results[0].metrics[0].second.median == Approx(2.0));
}

TEST_CASE("one failing case is recorded and the run goes on", "[runner]") {
  fake_behaviour throws_later;
  throws_later.throw_on_iteration = 3;
  fake_behaviour throws_early;
  throws_early.throw_in_constructor = true;
  fake_behaviour bad_data;
  bad_data.verification_passes = false;
  registry r;
  r.add(fake_definition("a.iteration_error", throws_later));
  r.add(fake_definition("b.constructor_error", throws_early));
  r.add(fake_definition("c.bad_data", bad_data));
  r.add(fake_definition("d.fine"));
  run_fixture f;
  const auto outcome = f.run(r, fixed(3, 2, 1));
  CHECK(outcome.failed == 3);
  CHECK(outcome.ok == 1);
  REQUIRE(f.doc.results.size() == 4);
  CHECK(f.doc.results[0].status == result_status::failed);
  CHECK(f.doc.results[0].error == "fake: iteration failed");
  CHECK(f.doc.results[1].error == "fake: constructor failed");
  CHECK(f.doc.results[2].status == result_status::failed);
  CHECK(f.doc.results[2].verified == false);
  CHECK(f.doc.results[2].error == "verification failed: 3 wrong");
  CHECK(f.doc.results[3].status == result_status::ok);
}

TEST_CASE("adaptive iteration counts reach the minimum time", "[runner]") {
  fake_behaviour b;
  b.seconds_per_iteration = 1e-3;
  registry r;
  r.add(fake_definition("fake.adaptive", b));
  run_fixture f;
  run_settings s;
  s.repetitions = 2;
  s.min_time_s = 0.05;
  s.warmup_iterations = 0;
  (void)f.run(r, s);
  REQUIRE(f.doc.results.at(0).status == result_status::ok);
  for (const auto& n : f.doc.results[0].info.get()["iterations_per_repetition"]) {
    CHECK(static_cast<double>(n.get<std::int64_t>()) * 1e-3 >= 0.05 * 0.999);
  }
}

TEST_CASE("skipped benchmarks become one skipped result with the reason", "[runner]") {
  registry r;
  r.add(fake_definition("gpu.x").set_supported(
      [](const context&) { return std::optional<std::string>("no GPU found (test)"); }));
  run_fixture f;
  const auto outcome = f.run(r);
  CHECK(outcome.skipped == 1);
  REQUIRE(f.doc.results.size() == 1);
  CHECK(f.doc.results[0].status == result_status::skipped);
  CHECK(f.doc.results[0].reason == "no GPU found (test)");
}

TEST_CASE("a case that cannot run here is recorded as skipped with its reason", "[runner]") {
  registry r;
  auto def = fake_definition("p2p.like");
  def.set_factory([](const context&, const axis_values&) -> std::unique_ptr<instance> {
    throw skip_case("no peer access between GPU 0 and GPU 1");
  });
  r.add(std::move(def));
  run_fixture f;
  const auto outcome = f.run(r, fixed(2, 1, 0));
  CHECK(outcome.skipped == 1);
  CHECK(outcome.failed == 0);
  REQUIRE(f.doc.results.size() == 1);
  CHECK(f.doc.results[0].status == result_status::skipped);
  CHECK(f.doc.results[0].reason == "no peer access between GPU 0 and GPU 1");
}

TEST_CASE("a machine with GPUs whose GPU benchmarks were all skipped fails the run", "[runner]") {
  benchmark_definition gpu = fake_definition("fake.gpu");
  gpu.set_needs_gpu();
  const benchmark_definition host = fake_definition("fake.host");
  const std::vector<planned_benchmark> plan{{&gpu, {}, std::string("no GPU"), {}},
                                            {&host, {}, std::nullopt, {}}};
  results_document doc;
  doc.system.gpus.resize(2);  // listed by NVML: CUDA cannot use them
  result skipped;
  skipped.id = "fake.gpu";
  skipped.status = result_status::skipped;
  skipped.reason = "GPUs present but the CUDA runtime cannot use them: no NVIDIA driver loaded";
  result measured;
  measured.id = "fake.host";
  doc.results = {skipped, measured};
  CHECK(idle_gpus_problem(plan, doc) ==
        "the machine has 2 GPU(s), but every GPU benchmark was skipped (fake.gpu: GPUs present but "
        "the CUDA runtime cannot use them: no NVIDIA driver loaded): no GPU was tested");

  // GPUs seen on another node of a multi-node run count too.
  results_document multi = doc;
  multi.system.gpus.clear();
  CHECK_FALSE(idle_gpus_problem(plan, multi));
  multi.nodes.push_back(node_entry{"n2", {1}, system_info{}});
  multi.nodes.back().system.gpus.resize(8);
  CHECK_THAT(idle_gpus_problem(plan, multi).value_or(""), Catch::StartsWith("the machine has 8"));

  // One GPU case that ran (even one that failed: that fails the run anyway) is enough.
  results_document ran = doc;
  ran.results[0].status = result_status::failed;
  CHECK_FALSE(idle_gpus_problem(plan, ran));
  // No GPU benchmark in the plan (--only host.membw), or no GPU listed (none in the machine, or
  // CUDA_VISIBLE_DEVICES hiding them all, though NVML counts them): nothing to say.
  CHECK_FALSE(idle_gpus_problem({plan[1]}, doc));
  results_document hidden = doc;
  hidden.system.gpus.clear();
  hidden.system.gpu_status.nvml_gpu_count = 2;
  CHECK_FALSE(idle_gpus_problem(plan, hidden));
}

TEST_CASE("shared resources are found by key and type and destroyed newest first", "[runner]") {
  std::vector<std::string> destroyed;
  struct tracked {
    std::vector<std::string>* log = nullptr;
    std::string name;
    tracked() = default;
    tracked(const tracked&) = delete;
    tracked& operator=(const tracked&) = delete;
    ~tracked() { log->push_back(name); }
  };
  const auto make = [&](const std::string& name) {
    auto item = std::make_unique<tracked>();
    item->log = &destroyed;
    item->name = name;
    return item;
  };
  {
    shared_resources store;
    store.add("a", make("a"));
    store.add("b", make("b"));
    CHECK(store.find<tracked>("a")->name == "a");
    CHECK(store.find<tracked>("c") == nullptr);
    CHECK_THROWS_AS(store.find<int>("a"), std::logic_error);
    CHECK_THROWS_AS(store.add("a", std::make_unique<int>(1)), std::logic_error);
    store.remove("a");
    CHECK(store.size() == 1);
    store.add("c", make("c"));
  }
  CHECK(destroyed == std::vector<std::string>{"a", "c", "b"});
}

TEST_CASE("a metric a benchmark computes without declaring it fails its case", "[runner]") {
  class extra final : public gpubench::testing::fake_instance {
   public:
    extra() : fake_instance(fake_behaviour{}) {}
    [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
        double /*seconds*/) const override {
      return {{"undeclared_GBps", 1.0}};
    }
  };
  registry r;
  r.add(fake_definition("fake.extra").set_factory([](const context&, const axis_values&) {
    return std::make_unique<extra>();
  }));
  run_fixture f;
  const auto outcome = f.run(r, fixed(1, 1, 0));
  CHECK(outcome.failed == 1);
  REQUIRE(f.doc.results.size() == 1);
  CHECK_THAT(f.doc.results[0].error, Catch::Contains("metric 'undeclared_GBps' is not declared"));
}

TEST_CASE("the first stop signal asks, the second stops at once and removes registered files",
          "[runner]") {
  temp_dir dir;
  const fs::path scratch = dir.path / "gpubench-scratch-test.dat";
  const fs::path unregistered = dir.path / "kept.dat";
  std::ofstream(scratch) << "x";
  std::ofstream(unregistered) << "x";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    install_interrupt_handlers();
    const removed_on_stop guard(scratch);
    { const removed_on_stop released(unregistered); }  // unregistered again: left alone
    ::raise(SIGINT);
    if (!interrupt_requested()) ::_exit(10);
    ::raise(SIGHUP);  // any stop signal counts as the second
    ::_exit(11);      // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == exit_interrupted);
  CHECK_FALSE(fs::exists(scratch));
  CHECK(fs::exists(unregistered));
}

TEST_CASE("a results file of 100k results is written so that it reads back",
          "[runner][scale][long]") {
  // A many-rank NCCL sweep: each rank's result with its host, rank, axes, three metrics and info.
  results_document doc;
  doc.meta.version = "0.1.0";
  doc.meta.started = doc.meta.finished = "2026-11-24T00:00:00Z";
  doc.system.host = "node-000";
  const std::vector<double> samples{101.5, 102.25, 99.75, 100.5, 100.0};
  for (int i = 0; i < 100000; ++i) {
    result r;
    r.id = "nccl.all_reduce";
    r.axes = {{"bytes", std::int64_t{8} << (i % 31)}, {"placement", "out_of_place"}};
    for (const char* name : {"time_us", "algbw_GBps", "busbw_GBps"}) {
      r.metrics.emplace_back(name, metric_summary(summarize(samples), {"GB/s", better::higher}));
    }
    r.verified = true;
    r.info = json{{"timing", "manual"},
                  {"warmup_iterations", 5},
                  {"iterations_per_repetition", {20, 20, 20, 20, 20}},
                  {"nranks", 1024},
                  {"verification", "every element of every rank's output matched"}};
    r.host = "node-" + std::to_string(i % 128);
    r.rank = i % 1024;
    doc.results.push_back(std::move(r));
  }
  temp_dir dir;
  const fs::path file = dir.path / "results.json";
  run_outcome outcome;
  save_results(file, doc, outcome);
  REQUIRE(outcome.save_error.empty());
  CHECK(outcome.results_saved == 100000);
  // Past the 64 MiB the readers once refused, which is why this test exists.
  CHECK(fs::file_size(file) > (std::uintmax_t{64} << 20));
  CHECK(fs::file_size(file) <= max_json_file_bytes);
  const results_document back = read_results(file);
  CHECK(back.results.size() == 100000);
  CHECK(back.results.back().rank == 99999 % 1024);
}
