// gpubench watch: what a running job and its machine are doing, read from outside each interval
// (/proc, /sys and NVML), with no change to the job. docs/watch.md.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/harness/gpu_monitor.hpp"
#include "gpubench/watch/sample.hpp"

namespace gpubench::watch {

// Cumulative CPU time of one thread (/proc/PID/task/TID/stat): a stage that runs on one thread
// is bound at one core however many the job may use.
struct thread_counters {
  pid_t tid = 0;
  std::string name;
  double cpu_seconds = 0;
  // Time it ran or waited on a run queue for a core (/proc/PID/task/TID/schedstat): how long it
  // wanted a core, whether or not it got one. Absent where the kernel keeps no schedstat.
  std::optional<double> runnable_seconds;
};

// Cumulative counters of one process (/proc/PID/stat, status, io).
struct process_counters {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string name;
  char state = '?';        // R running, S sleeping, D uninterruptible (mostly I/O), ...
  double cpu_seconds = 0;  // user + system
  double rss_GB = 0;
  // When it started, in clock ticks after boot: with the pid, what names one process (a pid is
  // reused once its process is gone).
  std::uint64_t start_ticks = 0;
  std::uint64_t context_switches = 0;       // voluntary + involuntary
  std::optional<std::uint64_t> read_bytes;  // from the block device (io: read_bytes)
  std::optional<std::uint64_t> read_chars;  // through read() and friends (io: rchar)
  std::vector<thread_counters> threads;
};

// Cumulative counters of the machine.
struct machine_counters {
  struct disk {
    std::uint64_t sectors_read = 0;
    std::uint64_t reads = 0;
    std::uint64_t read_ms = 0;  // time reads spent queued and in service
    std::uint64_t busy_ms = 0;  // time the device had I/O in flight
  };
  struct link {
    std::uint64_t rx_bytes = 0;
    std::uint64_t tx_bytes = 0;
    std::optional<double> speed_Gbps;  // as the link reports it
  };
  // The CPUs the job may run on (/proc/stat): what they spent running anything, and what the
  // hypervisor held back from them (steal), so a job sharing its cores is told from one that
  // wants no more.
  struct cpu_time {
    std::vector<int> cpus;  // the CPUs summed: the job's that /proc/stat lists (online ones)
    double busy_s = 0;      // user, nice, system, irq, softirq
    double steal_s = 0;     // a virtual machine's: runnable, but the host ran something else
  };
  cpu_time cpu;
  std::map<std::string, disk> disks;       // whole devices (/sys/block), no partitions
  std::map<std::string, link> interfaces;  // /proc/net/dev, without lo
  std::map<std::string, link> infiniband;  // "mlx5_0/1": port counters
};

// A snapshot: the job's processes, the machine and the GPUs at one instant.
struct snapshot {
  double t = 0;  // seconds since the watch began (steady clock), when the tree's walk began
  // When the machine's counters and NVML were read: a walk of a large tree under load takes
  // milliseconds that vary, and each counter's rate is taken over its own reads' interval.
  double machine_t = 0;
  double gpu_t = 0;
  pid_t root = 0;                           // the job's first process
  std::vector<process_counters> processes;  // the job's tree, root first
  machine_counters machine;
  std::vector<gpu_activity> gpus;
};

class sampler {
 public:
  // Watches `root` and every process descended from it. NVML is optional: without it the
  // samples have no GPUs and `gpu_why_not` says why.
  explicit sampler(pid_t root);
  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;
  ~sampler();

  // Reads everything now; keeps the job's affinity for the intervals after its root has exited.
  [[nodiscard]] snapshot take(double t);
  // Cores the job may use: the root's CPU affinity as last read (online CPUs only), capped by
  // its cgroup's cpu.max quota.
  [[nodiscard]] double allowed_cores() const;
  [[nodiscard]] const std::string& gpu_why_not() const { return gpu_why_not_; }

 private:
  pid_t root_;
  // The CPUs the job may run on, as last read: once the root has exited its affinity cannot be
  // read, and the last interval must sum the same CPUs as the one before.
  cpu_set_t job_cpus_{};
  std::unique_ptr<gpu_monitor> gpus_;
  std::string gpu_why_not_;
};

// A thread that keeps a core this busy (share of one core) runs flat out.
inline constexpr double saturated_thread = 0.85;

// The interval between two snapshots as rates and shares: one line of watch.jsonl.
[[nodiscard]] interval interval_sample(const snapshot& before, const snapshot& after,
                                       double allowed_cores);

// Whether `pid` names a process this user may read (its /proc/PID/io is readable); the reason
// when not.
[[nodiscard]] std::optional<std::string> why_not_watchable(pid_t pid);

// An attached process has ended when it is gone, a zombie (its parent has not reaped it yet), or
// its pid now names another process (its start time is not `start_ticks`; 0: not checked).
[[nodiscard]] bool has_ended(pid_t pid, std::uint64_t start_ticks = 0);
// The process's start time (process_counters::start_ticks); 0 when it is gone.
[[nodiscard]] std::uint64_t start_ticks_of(pid_t pid);

}  // namespace gpubench::watch
