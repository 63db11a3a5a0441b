// What bounds a watched job: the samples of watch.jsonl summarised and held against this machine's
// ceilings (measured with --results, else the catalog's or what the machine reports).
// docs/watch.md.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/vocabulary/figures.hpp"
#include "gpubench/vocabulary/verdicts.hpp"
#include "gpubench/watch/sample.hpp"

namespace gpubench::watch {

// A ceiling the verdict compares with: a figure of the machine, in that figure's unit, and where
// it came from.
struct ceiling {
  const vocabulary::figure_def* figure = nullptr;
  double value = 0;
  std::string basis;   // measured | catalog | set | reported (by the machine itself)
  std::string origin;  // the --results given, or the catalog entry chosen for the GPU
  std::string source;  // where the figure itself came from
};
struct ceilings {
  std::vector<ceiling> known;
  // The ceiling of a figure, or nullptr where the machine's figures lack it.
  [[nodiscard]] const ceiling* find(const vocabulary::figure_def& f) const;
};

// The figures a watched job is held against (storage reads, host-to-GPU per GPU, the network per
// node, NVLink per GPU both ways), from a hardware profile; `origin` names where it came from.
[[nodiscard]] ceilings ceilings_of(const model::hardware_profile& hw, const std::string& origin);

// Medians over the samples (the job's typical interval), the figures the verdict reads.
struct summary {
  int samples = 0;
  double duration_s = 0;
  double cpu_cores_used = 0;
  double cpu_cores_allowed = 0;
  // Of the CPUs the job may run on: what other processes ran and what a hypervisor held back,
  // and so what the job could have had, at most its allowance. Samples without them (files of
  // an older gpubench) leave the allowance whole.
  double cpu_cores_outside_job = 0;
  double cpu_cores_stolen = 0;
  double cpu_cores_available = 0;
  std::vector<std::pair<std::string, double>> state_shares;  // "S" -> share of process-samples
  double busiest_thread_cores = 0;  // the busiest thread's share of one core
  int threads_saturated = 0;        // threads at saturated_thread of a core or more
  // The threads at saturated_thread or more in a typical sample: name, share of a core, whether
  // they belong to the job's first process (the training loop) rather than a worker.
  struct thread_load {
    std::string name;
    pid_t pid = 0;
    double cores = 0;
    bool in_root = false;
  };
  std::vector<thread_load> saturated_threads;
  // The training loops and their workers (a DataLoader's are the loop's child processes), medians
  // over the samples that had workers: how busy each worker was against the CPU it could get
  // (its busiest thread running or waiting for a core, less what a hypervisor held back), and
  // how busy the loop's own process was while they worked.
  struct loader_load {
    int samples = 0;  // the samples with workers
    int loops = 0;
    int workers = 0;              // every loop's together
    double worker_cpu_cores = 0;  // the mean worker's
    double worker_busy = 0;       // the mean worker's share of the time, 0..1
    bool busy_measured = false;   // from schedstat; else a worker's share of one core
    double main_cpu_cores = 0;    // the busiest loop's process
    double main_busy = 0;
    loop_process main;  // the loop's process and workers of a typical sample, to name
    std::vector<loop_process> named_workers;
  };
  loader_load loader;
  int job_gpus = 0;  // GPUs the job's processes held contexts on
  int machine_gpus = 0;
  std::optional<double> gpu_busy;         // 0..1, the job's GPUs
  std::optional<double> gpu_memory_busy;  // 0..1
  std::optional<double> pcie_rx_GBps;     // the busiest job GPU's
  std::optional<double> nvlink_GBps;      // the busiest job GPU's, both directions together
  double job_read_GBps = 0;               // from devices
  double job_read_call_GBps = 0;          // through read(): the page cache included
  std::string busiest_disk;
  double disk_busy = 0;  // 0..1
  double disk_read_GBps = 0;
  double disk_read_wait_ms = 0;
  std::string busiest_link;
  double link_GBps = 0;  // the busier direction
  std::optional<double> link_speed_Gbps;
};

[[nodiscard]] summary summarize(const std::vector<interval>& samples);

struct verdict {
  vocabulary::component limiting_component = vocabulary::component::none;
  std::vector<std::string> evidence;
  std::vector<std::string> advice;
};

// Near a ceiling: this share of it or more.
inline constexpr double near_ceiling = 0.8;

[[nodiscard]] verdict judge(const summary& s, const ceilings& c);

[[nodiscard]] json to_json(const summary& s);
[[nodiscard]] json to_json(const verdict& v);
[[nodiscard]] json to_json(const ceilings& c);

}  // namespace gpubench::watch
