// The watch verdict on samples written here: what the CPU rule concludes when the job's cores
// are shared, when an older sample has no machine CPU figures, and when a loop waits on its
// DataLoader workers. The live jobs are in tests/cli/test_watch.cpp; these pin the arithmetic
// they cannot control.
#include <catch2/catch.hpp>

#include "gpubench/watch/verdict.hpp"

using gpubench::json;
using namespace gpubench::watch;
namespace vocabulary = gpubench::vocabulary;

namespace {

// `cpu` null: a sample without the machine's CPU figures.
interval sample(double job_cores, double allowed, const json& cpu) {
  json s{{"schema", "gpubench.watch/1"},
         {"t", 0.5},
         {"interval_s", 0.5},
         {"job",
          {{"processes", 1},
           {"cpu_cores_used", job_cores},
           {"cpu_cores_allowed", allowed},
           {"states", {{"R", 1}}},
           {"rss_GB", 0.1},
           {"read_GBps", 0.0},
           {"read_call_GBps", 0.0},
           {"context_switches_per_s", 10.0},
           {"top", json::array()},
           {"threads_saturated", 0},
           {"busiest_threads", json::array()}}},
         {"disks", json::array()},
         {"network", json::array()},
         {"infiniband", json::array()},
         {"gpus", json::array()}};
  if (!cpu.is_null()) s["cpu"] = cpu;
  // Read back as watch.jsonl's lines are: a sample without "cpu" has no machine CPU figures.
  return s.get<interval>();
}

json machine_cpu(int cpus, double busy, double outside, double stolen) {
  return {{"cpus", cpus},
          {"busy_cores", busy},
          {"outside_job_cores", outside},
          {"stolen_cores", stolen}};
}

// A training loop (pid 100, on GPU 0, busy `gpu_percent`) whose process ran `main_cores` and was
// busy `main_busy` of the time, fed by `workers` worker processes that each ran `worker_cores`
// and were busy (running or waiting for a core) `worker_busy` of the time (null: no schedstat).
interval loader_sample(double allowed, const json& cpu, int gpu_percent, double main_cores,
                       const json& main_busy, int workers, double worker_cores,
                       const json& worker_busy) {
  interval s = sample(main_cores + workers * worker_cores, allowed, cpu);
  json j = s;
  j["job"]["processes"] = 1 + workers;
  j["job"]["main_processes"] = json::array({{{"pid", 100},
                                             {"parent", 1},
                                             {"name", "python3"},
                                             {"cpu_cores", main_cores},
                                             {"busy", main_busy}}});
  for (int i = 0; i < workers; ++i) {
    j["job"]["workers"].push_back({{"pid", 101 + i},
                                   {"parent", 100},
                                   {"name", "pt_data_worker"},
                                   {"cpu_cores", worker_cores},
                                   {"busy", worker_busy}});
  }
  j["job"]["busiest_threads"] = json::array({{{"pid", 101},
                                              {"tid", 101},
                                              {"name", "python3"},
                                              {"in_root", false},
                                              {"cpu_cores", worker_cores}}});
  j["gpus"] = json::array({{{"index", 0},
                            {"name", "NVIDIA H100 80GB HBM3"},
                            {"uuid", "GPU-0"},
                            {"pci_bus_id", "0000:01:00.0"},
                            {"utilization_percent", gpu_percent},
                            {"job_pids", {100}}}});
  return j.get<interval>();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

}  // namespace

TEST_CASE("watch verdict: a job given every core it could have on shared cores is CPU-bound",
          "[watch]") {
  // 8 cores allowed; other processes run 3 and the hypervisor holds back 1: the job's 3.8 is
  // 95% of the 4 it could have, though only 48% of its allowance.
  const std::vector<interval> samples(5, sample(3.8, 8, machine_cpu(8, 6.8, 3.0, 1.0)));
  const gpubench::watch::summary s = summarize(samples);
  CHECK(s.cpu_cores_outside_job == Approx(3.0));
  CHECK(s.cpu_cores_stolen == Approx(1.0));
  CHECK(s.cpu_cores_available == Approx(4.0));
  const verdict v = judge(s, {});
  CHECK(v.limiting_component == vocabulary::component::cpu);
  CHECK_THAT(joined(v.evidence),
             Catch::Contains("other processes ran 3 cores' worth on them and the hypervisor "
                             "held back 1 (steal), leaving the job 4 (95% of that used)"));
  CHECK_THAT(joined(v.advice), Catch::Contains("exclusive allocation"));
}

TEST_CASE("watch verdict: an idle job on a busy machine is not CPU-bound", "[watch]") {
  // The job sleeps (0.1 core) while others run 7.5 of its 8: it could have had 0.5 and used a
  // fifth of that.
  const gpubench::watch::summary s =
      summarize(std::vector<interval>(5, sample(0.1, 8, machine_cpu(8, 7.6, 7.5, 0))));
  CHECK(s.cpu_cores_available == Approx(0.5));
  CHECK(judge(s, {}).limiting_component == vocabulary::component::none);
}

TEST_CASE("watch verdict: a little sharing leaves the allowance whole", "[watch]") {
  // 0.2 of 8 cores elsewhere is under a quarter core and a tenth: no shared-cores finding, and
  // 6 of 8 used (75%) is not near the ceiling.
  const gpubench::watch::summary s =
      summarize(std::vector<interval>(5, sample(6.0, 8, machine_cpu(8, 6.2, 0.2, 0))));
  const verdict v = judge(s, {});
  CHECK(v.limiting_component == vocabulary::component::none);
  CHECK_THAT(joined(v.evidence), !Catch::Contains("shared"));
}

TEST_CASE("watch verdict: samples without machine CPU figures judge on the allowance", "[watch]") {
  // Files from before the cpu key, or a machine without /proc/stat (cpus 0).
  for (const json& cpu : {json(), machine_cpu(0, 0, 0, 0)}) {
    const gpubench::watch::summary s = summarize(std::vector<interval>(5, sample(1.0, 2, cpu)));
    CHECK(s.cpu_cores_available == Approx(2.0));
    CHECK(s.cpu_cores_outside_job == 0);
    CHECK(judge(s, {}).limiting_component == vocabulary::component::none);
  }
}

// Issue 40, item 11: one worker at 0.6 of a core and the loop's process at 0.07 while the GPU
// waits, on a machine whose other processes leave the job no idle core. The worker never reaches
// 85% of a core, yet it wanted one 97% of the time (ran 0.6, waited on a run queue the rest).
TEST_CASE("watch verdict: a loop waiting on one DataLoader worker on a busy machine says so",
          "[watch]") {
  const std::vector<interval> samples(
      5, loader_sample(8, machine_cpu(8, 7.97, 7.3, 0), 30, 0.07, 0.08, 1, 0.6, 0.97));
  const gpubench::watch::summary s = summarize(samples);
  CHECK(s.loader.workers == 1);
  CHECK(s.loader.worker_busy == Approx(0.97));
  CHECK(s.loader.busy_measured);
  CHECK(s.loader.main_busy == Approx(0.08));
  const verdict v = judge(s, {});
  INFO(joined(v.evidence) + joined(v.advice));
  CHECK(v.limiting_component == vocabulary::component::cpu);
  CHECK_THAT(joined(v.evidence),
             Catch::Contains("1 worker process of the training loop's python3 (pid 100): "
                             "pt_data_worker (pid 101); busy 97% of the time (running, or "
                             "waiting for a core), using 0.6 core(s) each; the loop's process "
                             "busy 8% (0.07 cores), its GPUs ran kernels 30% of the time"));
  CHECK_THAT(joined(v.advice),
             Catch::Contains("1 DataLoader worker feeds the loop; it is busy 97% of the time the "
                             "loop waits, and no core is idle to add one (idle cores: 0.03)"));
  // Not the generic advice of a job that uses every core it could have.
  CHECK_THAT(joined(v.advice), !Catch::Contains("CPU data preparation bounds the job"));
}

TEST_CASE("watch verdict: a loop waiting on its workers with idle cores is told how many to add",
          "[watch]") {
  // 16 cores, 6 used elsewhere: 9.33 idle. The GPU is busy 30% of the time, so it could take
  // 1 / 0.3 = 3.33 times the batches; the one worker, busy 97%, gives 0.97 of its full rate, so
  // ceil(1 x 0.97 x 3.33) = 4 workers would keep the GPU busy, well within the idle cores.
  const std::vector<interval> samples(
      5, loader_sample(16, machine_cpu(16, 6.67, 6.0, 0), 30, 0.07, 0.08, 1, 0.6, 0.97));
  const verdict v = judge(summarize(samples), {});
  INFO(joined(v.evidence) + joined(v.advice));
  CHECK(v.limiting_component == vocabulary::component::cpu);
  CHECK_THAT(
      joined(v.advice),
      Catch::Contains("1 DataLoader worker feeds the loop; it is busy 97% of the time the "
                      "loop waits: raise num_workers to 4 (idle cores: 9.33); the GPUs "
                      "could take about 3.33x the batches before they are busy all the time"));
  CHECK_THAT(joined(v.evidence), Catch::Contains("leaving 9.33 idle"));

  // Two workers on 2.5 idle cores: the GPU could take 5 times the batches (10 workers' worth),
  // but the idle cores feed 2 more workers busy 95% each.
  const std::vector<interval> few_cores(
      5, loader_sample(4, machine_cpu(4, 1.5, 0, 0), 10, 0.1, 0.1, 2, 0.7, 0.95));
  const verdict w = judge(summarize(few_cores), {});
  INFO(joined(w.advice));
  CHECK_THAT(
      joined(w.advice),
      Catch::Contains("2 DataLoader workers feed the loop; they are busy 95% of the time "
                      "the loop waits: raise num_workers to 4 (idle cores: 2.5); the GPUs "
                      "could take about 10x the batches before they are busy all the time, more "
                      "than the idle cores can feed"));
}

TEST_CASE("watch verdict: workers that wait on the loop, or a loop busy itself, are not the bound",
          "[watch]") {
  // The worker sleeps most of the time (busy 30%): it keeps up.
  CHECK(summarize(std::vector<interval>(
                      5, loader_sample(16, machine_cpu(16, 0.5, 0, 0), 50, 0.2, 0.25, 1, 0.3, 0.3)))
            .loader.worker_busy == Approx(0.3));
  CHECK(judge(summarize(std::vector<interval>(
                  5, loader_sample(16, machine_cpu(16, 0.5, 0, 0), 50, 0.2, 0.25, 1, 0.3, 0.3))),
              {})
            .limiting_component == vocabulary::component::none);
  // The loop's own thread is flat out: the loop bounds it, not its workers.
  const verdict loop =
      judge(summarize(std::vector<interval>(
                5, loader_sample(16, machine_cpu(16, 2, 0, 0), 20, 1.0, 0.99, 1, 0.9, 0.95))),
            {});
  CHECK_THAT(joined(loop.advice), !Catch::Contains("num_workers"));
  // Samples without schedstat (an older file, a kernel without it): a worker at 0.6 of a core
  // is judged on its share of one core, as before, and not named the bound.
  const gpubench::watch::summary old = summarize(std::vector<interval>(
      5, loader_sample(16, machine_cpu(16, 6.67, 6.0, 0), 30, 0.07, json(), 1, 0.6, json())));
  CHECK_FALSE(old.loader.busy_measured);
  CHECK(old.loader.worker_busy == Approx(0.6));
  CHECK(judge(old, {}).limiting_component == vocabulary::component::none);
}
