// One watch.jsonl line from two snapshots written here: which CPUs the machine figures sum, and
// over whose interval each rate is taken. The live sampler is in tests/cli/test_watch.cpp.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "gpubench/watch/sampler.hpp"

using gpubench::json;
using namespace gpubench::watch;

namespace {

// A job of one process that used `job_cpu_s` of CPU by `t`, on a machine whose CPUs `cpus` had
// been busy `busy_s` by `machine_t`.
snapshot at(double t, double machine_t, double job_cpu_s, std::vector<int> cpus, double busy_s,
            double steal_s) {
  snapshot s;
  s.t = t;
  s.machine_t = machine_t;
  s.gpu_t = machine_t;
  s.root = 100;
  process_counters job;
  job.pid = 100;
  job.name = "train";
  job.state = 'R';
  job.cpu_seconds = job_cpu_s;
  s.processes.push_back(job);
  s.machine.cpu.cpus = std::move(cpus);
  s.machine.cpu.busy_s = busy_s;
  s.machine.cpu.steal_s = steal_s;
  return s;
}

}  // namespace

TEST_CASE("watch sample: machine CPU rates over the machine's own reads", "[watch]") {
  // The walk took 0.5 s between the walks' starts, the /proc/stat reads 0.4 s apart.
  const snapshot before = at(1.0, 1.1, 10.0, {0, 1, 2, 3}, 100.0, 5.0);
  const snapshot after = at(1.5, 1.5, 11.0, {0, 1, 2, 3}, 101.2, 5.2);
  const json s = interval_sample(before, after, 4);
  CHECK(s.at("job").at("cpu_cores_used").get<double>() == Approx(2.0));  // 1 s over 0.5 s
  const json& cpu = s.at("cpu");
  CHECK(cpu.at("cpus").get<int>() == 4);
  CHECK(cpu.at("busy_cores").get<double>() == Approx(3.0));  // 1.2 s over 0.4 s
  CHECK(cpu.at("outside_job_cores").get<double>() == Approx(1.0));
  CHECK(cpu.at("stolen_cores").get<double>() == Approx(0.5));
}

TEST_CASE("watch sample: an affinity moved to as many other CPUs gives no machine CPU figure",
          "[watch]") {
  // CPUs 0-1 before, 2-3 after: the busy times are of different CPUs and their difference
  // means nothing, though the counts agree.
  const snapshot before = at(1.0, 1.0, 10.0, {0, 1}, 100.0, 0.0);
  const snapshot after = at(1.5, 1.5, 10.5, {2, 3}, 300.0, 0.0);
  const json cpu = json(interval_sample(before, after, 2)).at("cpu");
  CHECK(cpu.at("cpus").get<int>() == 0);
  CHECK(cpu.at("busy_cores").get<double>() == 0.0);
  CHECK(cpu.at("outside_job_cores").get<double>() == 0.0);
}

TEST_CASE("watch --pid: a pid that now names a process started later counts as ended", "[watch]") {
  const pid_t self = getpid();
  const std::uint64_t started = start_ticks_of(self);
  REQUIRE(started > 0);
  CHECK_FALSE(has_ended(self, started));
  CHECK(has_ended(self, started + 1));  // the process it was is gone; this one came later
  CHECK_FALSE(has_ended(self));         // unchecked: alive
}
