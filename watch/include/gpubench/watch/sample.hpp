// One line of watch.jsonl: what a watched job and its machine did over one interval, as rates and
// shares. The sampler writes it, the verdict, the page and the status line read it, and its JSON
// comes from these fields alone (docs/watch.md lists them).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"

namespace gpubench::watch {

inline constexpr const char* watch_schema = "gpubench.watch/1";

// One of the job's busiest processes.
struct process_load {
  pid_t pid = 0;
  std::string name;
  std::string state;  // R, S, D, ... (/proc/PID/stat)
  double cpu_cores = 0;
  double rss_GB = 0;
  double read_GBps = 0;  // from block devices
};
GPUBENCH_JSON_FIELDS(process_load, pid, name, state, cpu_cores, rss_GB, read_GBps)

// One of the job's busiest threads: a stage on one thread is bound at one core.
struct thread_load {
  pid_t pid = 0;
  pid_t tid = 0;
  std::string name;
  bool in_root = false;  // a thread of the job's first process (the training loop)
  double cpu_cores = 0;
};
GPUBENCH_JSON_FIELDS(thread_load, pid, tid, name, in_root, cpu_cores)

// A training loop's process or one of its workers. The loop's process is the one of the job's
// processes holding a GPU context (the job's first without a GPU); its workers are its child
// processes, as DataLoader's are, each with its own descendants' CPU.
struct loop_process {
  pid_t pid = 0;
  pid_t parent = 0;
  std::string name;
  double cpu_cores = 0;
  // Share of the interval its busiest thread ran or waited on a run queue for a core: how busy
  // it was against the CPU it could get, where a shared core keeps cpu_cores below 1. Null
  // where the kernel keeps no schedstat.
  std::optional<double> busy;
};
GPUBENCH_JSON_FIELDS(loop_process, pid, parent, name, cpu_cores, busy)

// The job: every process of its tree together.
struct job_load {
  std::size_t processes = 0;
  double cpu_cores_used = 0;
  double cpu_cores_allowed = 0;
  std::map<std::string, int> states;  // process state -> how many processes were in it
  double rss_GB = 0;
  double read_GBps = 0;       // from devices
  double read_call_GBps = 0;  // through read(): the page cache included
  double context_switches_per_s = 0;
  std::vector<process_load> top;  // the busiest five, busiest first
  int threads_saturated = 0;
  std::vector<thread_load> busiest_threads;  // the busiest five, busiest first
  std::vector<loop_process> main_processes;  // the training loops' processes
  std::vector<loop_process> workers;         // their child processes (DataLoader workers)
};
GPUBENCH_JSON_FIELDS(job_load, processes, cpu_cores_used, cpu_cores_allowed, states, rss_GB,
                     read_GBps, read_call_GBps, context_switches_per_s, top, threads_saturated,
                     busiest_threads, main_processes, workers)

// The CPUs the job may run on: what ran on them besides the job, and what a hypervisor held back.
// `cpus` 0: no figures (the job's affinity changed over the interval, or a file from before they
// were sampled).
struct machine_cpu_load {
  std::size_t cpus = 0;
  double busy_cores = 0;
  double outside_job_cores = 0;
  double stolen_cores = 0;
  [[nodiscard]] bool known() const { return cpus > 0; }
};
GPUBENCH_JSON_FIELDS(machine_cpu_load, cpus, busy_cores, outside_job_cores, stolen_cores)

struct disk_load {
  std::string device;
  double read_GBps = 0;
  double reads_per_s = 0;
  double read_wait_ms = 0;  // per completed read, queue and service together
  double busy_percent = 0;
};
GPUBENCH_JSON_FIELDS(disk_load, device, read_GBps, reads_per_s, read_wait_ms, busy_percent)

// A network interface or an InfiniBand port.
struct link_load {
  double rx_GBps = 0;
  double tx_GBps = 0;
  std::optional<double> speed_Gbps;  // as the link reports it
};
struct interface_load : link_load {
  std::string interface;
};
GPUBENCH_JSON_FIELDS(interface_load, interface, rx_GBps, tx_GBps, speed_Gbps)
struct port_load : link_load {
  std::string port;  // "mlx5_0/1"
};
GPUBENCH_JSON_FIELDS(port_load, port, rx_GBps, tx_GBps, speed_Gbps)

// One GPU of the machine (NVML); null where NVML gave nothing.
struct gpu_load {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  std::optional<int> utilization_percent;
  std::optional<int> memory_utilization_percent;
  std::optional<double> memory_used_GB;
  std::optional<double> memory_total_GB;
  std::optional<int> sm_mhz;
  std::optional<double> power_W;
  std::optional<int> temperature_C;
  std::vector<std::string> throttle_reasons;
  std::optional<double> pcie_rx_GBps;  // host to GPU
  std::optional<double> pcie_tx_GBps;
  std::optional<double> nvlink_rx_GBps;
  std::optional<double> nvlink_tx_GBps;
  std::vector<int> job_pids;  // the job's processes holding a context on it
  [[nodiscard]] bool used_by_job() const { return !job_pids.empty(); }
  // Both NVLink directions together, where NVML counts them.
  [[nodiscard]] std::optional<double> nvlink_GBps() const {
    if (!nvlink_rx_GBps || !nvlink_tx_GBps) return std::nullopt;
    return *nvlink_rx_GBps + *nvlink_tx_GBps;
  }
};
GPUBENCH_JSON_FIELDS(gpu_load, index, name, uuid, pci_bus_id, utilization_percent,
                     memory_utilization_percent, memory_used_GB, memory_total_GB, sm_mhz, power_W,
                     temperature_C, throttle_reasons, pcie_rx_GBps, pcie_tx_GBps, nvlink_rx_GBps,
                     nvlink_tx_GBps, job_pids)

struct interval {
  std::string schema = watch_schema;
  double t = 0;  // seconds since the watch began, at the interval's end
  double interval_s = 0;
  machine_cpu_load cpu;
  job_load job;
  std::vector<disk_load> disks;
  std::vector<interface_load> network;
  std::vector<port_load> infiniband;
  std::vector<gpu_load> gpus;
};
GPUBENCH_JSON_FIELDS(interval, schema, t, interval_s, cpu, job, disks, network, infiniband, gpus)

// A link's busier direction, by its name (an interface, or a port), over every link of a sample.
struct link_rate {
  std::string name;
  double GBps = 0;
  std::optional<double> speed_Gbps;
};
[[nodiscard]] std::vector<link_rate> link_rates(const interval& sample);

}  // namespace gpubench::watch
