// The watch verdict on samples written here: what the CPU rule concludes when the job's cores
// are shared, and when an older sample has no machine CPU figures. The live jobs are in
// tests/cli/test_watch.cpp; these pin the arithmetic they cannot control.
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
