#include "gpubench/watch/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "gpubench/core/format.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/watch/sampler.hpp"

namespace gpubench::watch {

namespace {

namespace fig = vocabulary::figures;
namespace units = vocabulary::units;

std::string pct(double share) {
  return format_number(share * 100) + "%";
}

// The job's typical interval: a start-up or a final phase does not move it as it moves a mean.
double median(const std::vector<double>& v) {
  return v.empty() ? 0 : gpubench::summarize(v).median;  // not watch::summarize
}

using vocabulary::component;

struct finding {
  vocabulary::component component;
  double nearness = 0;  // share of the ceiling reached; the highest names the limit
  std::vector<std::string> evidence;
  std::vector<std::string> advice;
};

using rule = std::function<std::optional<finding>(const summary&, const ceilings&)>;

std::string basis_note(const ceiling& c) {
  return " (" + c.basis + (c.origin.empty() ? "" : ", " + c.origin) + ")";
}

// The share of `limit` that `measured` reached, when both are known and it is near the ceiling.
std::optional<double> near_share(const std::optional<double>& measured, const ceiling* limit) {
  if (!measured || limit == nullptr || limit->value <= 0) return std::nullopt;
  const double share = *measured / limit->value;
  if (share < near_ceiling) return std::nullopt;
  return share;
}

// Cores the job was allowed but could not have (other processes, a hypervisor), when enough to
// matter: a quarter of a core, or a tenth of the allowance.
double cores_taken(const summary& s) {
  const double taken = std::max(0.0, s.cpu_cores_allowed - s.cpu_cores_available);
  return taken >= std::max(0.25, 0.1 * s.cpu_cores_allowed) ? taken : 0.0;
}

// How much of the CPU it could have the job used: of the allowance, less what others took.
double cpu_share(const summary& s) {
  const double could_have = s.cpu_cores_allowed - cores_taken(s);
  return could_have > 0 ? s.cpu_cores_used / could_have : 0.0;
}

// What other processes and the hypervisor took of the job's cores, and what that left it.
std::string shared_cores(const summary& s) {
  return "its cores were shared: other processes ran " + format_number(s.cpu_cores_outside_job) +
         " cores' worth on them" +
         (s.cpu_cores_stolen > 0.05
              ? " and the hypervisor held back " + format_number(s.cpu_cores_stolen) + " (steal)"
              : std::string()) +
         ", leaving the job " + format_number(s.cpu_cores_available) + " (" + pct(cpu_share(s)) +
         " of that used)";
}

// The training loop waits on its DataLoader workers: they are busy (running, or waiting for a
// core they could not get) while the loop's process is not, nor the GPUs. Judged on the time a
// worker wanted a core rather than on the CPU it got, so a shared machine that gives each worker
// a fraction of a core still shows its workers flat out.
bool loader_bound(const summary& s) {
  const summary::loader_load& l = s.loader;
  return l.workers > 0 && 2 * l.samples >= s.samples && !(s.gpu_busy && *s.gpu_busy >= 0.85) &&
         l.worker_busy >= near_ceiling && l.main_busy < saturated_thread;
}

std::string workers_text(int n) {
  return std::to_string(n) + (n == 1 ? " DataLoader worker feeds" : " DataLoader workers feed");
}

// How many workers would keep the loop fed, derived in docs/watch.md ("The loader's workers"):
// the input rate grows with the workers at the rate each busy worker gives now, until the GPUs or
// the loop's own process are busy all the time, and each added worker wants a core as busy as
// the present ones are.
struct worker_count {
  int raise_to = 0;       // 0: no idle core for one more
  double speedup = 0;     // how much faster the loop could take batches; 0: not bounded here
  bool by_cores = false;  // the idle cores stop short of the rate the loop could take
};

worker_count workers_needed(const summary& s, int loops, int per_loop, double idle) {
  const summary::loader_load& l = s.loader;
  worker_count k;
  const double busiest = std::max(s.gpu_busy.value_or(0.0), l.main_busy);
  k.speedup = busiest > 0 ? 1 / busiest : 0;
  const int by_cores = per_loop + static_cast<int>(std::floor(idle / (loops * l.worker_busy)));
  if (by_cores <= per_loop) return k;
  const double by_rate = k.speedup > 0 ? std::ceil(per_loop * l.worker_busy * k.speedup - 1e-9)
                                       : std::numeric_limits<double>::infinity();
  k.by_cores = by_cores < by_rate;
  k.raise_to = std::max(per_loop + 1, k.by_cores ? by_cores : static_cast<int>(by_rate));
  return k;
}

std::optional<finding> loader_finding(const summary& s) {
  if (!loader_bound(s)) return std::nullopt;
  const summary::loader_load& l = s.loader;
  const int loops = std::max(1, l.loops);
  const int per_loop =
      std::max(1, static_cast<int>(std::lround(static_cast<double>(l.workers) / loops)));
  // In hundredths of a core: what the counters' timing leaves below that is no idle core.
  const double idle =
      std::round(std::max(0.0, s.cpu_cores_available - s.cpu_cores_used) * 100) / 100;
  finding f{component::cpu, l.worker_busy, {}, {}};
  std::string names;
  for (std::size_t i = 0; i < l.named_workers.size() && i < 3; ++i) {
    names += (i ? ", " : "") + l.named_workers[i].name + " (pid " +
             std::to_string(l.named_workers[i].pid) + ")";
  }
  if (l.named_workers.size() > 3) names += ", ...";
  f.evidence.push_back(
      std::to_string(l.workers) + (l.workers == 1 ? " worker process" : " worker processes") +
      " of the training loop's " + l.main.name + " (pid " + std::to_string(l.main.pid) +
      (loops > 1 ? " and " + std::to_string(loops - 1) + " more loop(s)" : std::string()) +
      "): " + names + "; busy " + pct(l.worker_busy) +
      (l.busy_measured ? " of the time (running, or waiting for a core), using "
                       : " of the time (as a share of one core: no schedstat), using ") +
      format_number(l.worker_cpu_cores) + " core(s) each; the loop's process busy " +
      pct(l.main_busy) + " (" + format_number(l.main_cpu_cores) + " cores)" +
      (s.gpu_busy ? ", its GPUs ran kernels " + pct(*s.gpu_busy) + " of the time" : std::string()));
  f.evidence.push_back("the job used " + format_number(s.cpu_cores_used) + " of " +
                       format_number(s.cpu_cores_allowed) + " allowed cores, leaving " +
                       format_number(idle) + " idle");
  const worker_count k = workers_needed(s, loops, per_loop, idle);
  // Others on its cores matter when they leave no room for another worker.
  if (k.raise_to == 0 && cores_taken(s) > 0) f.evidence.push_back(shared_cores(s));
  const std::string head = workers_text(per_loop) + (loops > 1 ? " each loop" : " the loop") +
                           "; " + (per_loop == 1 ? "it is" : "they are") + " busy " +
                           pct(l.worker_busy) + " of the time the loop waits";
  if (k.raise_to == 0) {
    f.advice.push_back(
        head + ", and no core is idle to add one (idle cores: " + format_number(idle) +
        "): more workers would share the same cores. More cores for the job (an exclusive "
        "allocation such as Slurm --exclusive or a Kubernetes Guaranteed pod with whole CPUs, "
        "a larger CPU allocation, an instance without steal) or lighter per-sample work "
        "(smaller stored images, GPU decoding such as DALI) moves it");
    return f;
  }
  std::string why;
  if (k.speedup == 0) {
    why = "the loop's process waits nearly all the time, so the idle cores set the number";
  } else {
    const bool gpus = s.gpu_busy && *s.gpu_busy >= l.main_busy;
    why =
        std::string(gpus ? "the GPUs" : "the loop's process") + " could take about " +
        format_number(k.speedup) + "x the batches before " + (gpus ? "they are" : "it is") +
        " busy all the time" +
        (k.by_cores ? ", more than the idle cores can feed: more cores let more workers help" : "");
  }
  f.advice.push_back(head + ": raise num_workers to " + std::to_string(k.raise_to) +
                     " (idle cores: " + format_number(idle) + "); " + why);
  return f;
}

// One row per component: a new one is a new row.
const std::vector<rule>& rules() {
  static const std::vector<rule> table{
      // The GPUs: when the job keeps them busy they are the bound, whatever else is near its
      // own ceiling, so they count above every host part.
      [](const summary& s, const ceilings&) -> std::optional<finding> {
        if (!s.gpu_busy || *s.gpu_busy < 0.85) return std::nullopt;
        const bool memory = s.gpu_memory_busy && *s.gpu_memory_busy >= near_ceiling;
        finding f{memory ? component::gpu_memory : component::gpu_compute, 1 + *s.gpu_busy, {}, {}};
        f.evidence.push_back(
            "the job's " + std::to_string(s.job_gpus) + " GPU(s) ran kernels " + pct(*s.gpu_busy) +
            " of the time" +
            (s.gpu_memory_busy ? ", their memory busy " + pct(*s.gpu_memory_busy) : std::string()));
        f.advice.push_back(
            memory ? "GPU memory traffic bounds it: fused kernels, a larger batch or a GPU with "
                     "more memory bandwidth move it"
                   : "GPU math bounds it: a faster GPU, a lower precision or more GPUs move it");
        return f;
      },
      [](const summary& s, const ceilings&) { return loader_finding(s); },
      [](const summary& s, const ceilings&) -> std::optional<finding> {
        const double share = cpu_share(s);
        // Workers that feed a waiting loop: the rule above says how many more, or that no core
        // is idle for them.
        if (share < near_ceiling || loader_bound(s)) return std::nullopt;
        finding f{component::cpu, share, {}, {}};
        f.evidence.push_back("the job's processes used " + format_number(s.cpu_cores_used) +
                             " of " + format_number(s.cpu_cores_allowed) + " allowed cores (" +
                             pct(s.cpu_cores_used / s.cpu_cores_allowed) + ")");
        if (cores_taken(s) > 0) {
          f.evidence.push_back(shared_cores(s));
          f.advice.push_back(
              "the job is not alone on its cores: an exclusive allocation (Slurm --exclusive, "
              "a Kubernetes Guaranteed pod with whole CPUs, a dedicated or larger instance "
              "where steal is high) gives it the cores it is allowed");
        }
        if (s.gpu_busy) {
          f.evidence.push_back("its GPUs ran kernels only " + pct(*s.gpu_busy) + " of the time");
        }
        f.advice.push_back(
            "CPU data preparation bounds the job: more cores for the loader (a larger CPU "
            "allocation or affinity, more DataLoader workers where cores are free), lighter "
            "decoding (smaller stored images, GPU decoding such as DALI); `gpubench size "
            "--workload W --set cpu.cores=N` predicts the rate with more");
        return f;
      },
      // Threads that run flat out while the machine's cores are mostly free: a loader with too
      // few workers, or a training loop bound by its own thread (Python, kernel launches).
      [](const summary& s, const ceilings&) -> std::optional<finding> {
        if (s.threads_saturated == 0 || s.busiest_thread_cores < saturated_thread) {
          return std::nullopt;
        }
        if (cpu_share(s) >= near_ceiling || loader_bound(s)) {
          return std::nullopt;  // every core it could have is busy, or the loader's rule names it
        }
        if (s.gpu_busy && *s.gpu_busy >= 0.85) return std::nullopt;  // the GPUs' rule names it
        finding f{component::cpu, s.busiest_thread_cores, {}, {}};
        std::string names;
        int in_root = 0;
        int workers = 0;
        for (const auto& t : s.saturated_threads) {
          names += (names.empty() ? "" : ", ") + t.name + " (pid " + std::to_string(t.pid) + ") " +
                   pct(t.cores);
          (t.in_root ? in_root : workers) += 1;
        }
        f.evidence.push_back((s.threads_saturated == 1
                                  ? std::string("one of the job's threads kept a core busy")
                                  : std::to_string(s.threads_saturated) +
                                        " of the job's threads each kept a core busy") +
                             (names.empty() ? std::string() : ": " + names));
        f.evidence.push_back("the job used " + format_number(s.cpu_cores_used) + " of " +
                             format_number(s.cpu_cores_allowed) + " allowed cores" +
                             (s.gpu_busy
                                  ? "; its GPUs ran kernels " + pct(*s.gpu_busy) + " of the time"
                                  : std::string()));
        const double idle = std::max(0.0, s.cpu_cores_allowed - cores_taken(s) - s.cpu_cores_used);
        if (workers > 0) {
          f.advice.push_back(
              "worker processes each run flat out on one core while " + format_number(idle) +
              " of " + format_number(s.cpu_cores_allowed) +
              " allowed cores are idle: more workers (DataLoader num_workers) use them; lighter "
              "per-sample work (smaller stored images, GPU decoding) helps as well");
        }
        if (in_root > 0) {
          f.advice.push_back(
              "the job's own process runs a thread flat out: the training loop (Python, kernel "
              "launches, collation or pinning on the main thread) bounds it; CUDA graphs or "
              "torch.compile (fewer launches), a larger batch per step, or moving per-sample "
              "work to loader workers move it");
        }
        return f;
      },
      [](const summary& s, const ceilings& c) -> std::optional<finding> {
        // A busy device bounds the job only where the job is what reads from it: another
        // process saturating the disk beside a job that sleeps is not the job's limit (its own
        // waits in D state still are).
        const bool job_reads = s.job_read_GBps > 0 && s.job_read_GBps >= 0.5 * s.disk_read_GBps;
        double nearness = job_reads ? s.disk_busy : 0.0;
        std::vector<std::string> evidence;
        if (!s.busiest_disk.empty() && job_reads) {
          evidence.push_back(s.busiest_disk + " read " + format_number(s.disk_read_GBps) +
                             " GB/s, busy " + pct(s.disk_busy) + " of the time, " +
                             format_number(s.disk_read_wait_ms) + " ms per read");
        }
        if (const ceiling* storage = c.find(fig::storage_read);
            storage && storage->value > 0 && job_reads) {
          const double share = s.disk_read_GBps / storage->value;
          nearness = std::max(nearness, share);
          evidence.push_back("storage read " + format_number(s.disk_read_GBps) + " of " +
                             format_number(storage->value) + " GB/s" + basis_note(*storage));
        }
        double waiting = 0;
        for (const auto& [state, share] : s.state_shares) {
          if (state == "D") waiting = share;
        }
        if (waiting >= 0.5) {
          nearness = std::max(nearness, waiting);
          evidence.push_back("the job's processes waited in D state (uninterruptible, I/O) " +
                             pct(waiting) + " of the time");
        }
        if (nearness < near_ceiling) return std::nullopt;
        finding f{component::storage, nearness, evidence, {}};
        f.advice.push_back(
            "storage bounds the job: faster storage or more devices, a dataset that fits in the "
            "page cache, fewer and larger reads (packed shards), or local copies of remote data");
        return f;
      },
      [](const summary& s, const ceilings& c) -> std::optional<finding> {
        const ceiling* h2d = c.find(fig::pcie_h2d);
        const std::optional<double> share = near_share(s.pcie_rx_GBps, h2d);
        if (!share) return std::nullopt;
        finding f{component::pcie, *share, {}, {}};
        f.evidence.push_back("host-to-GPU traffic " + format_number(*s.pcie_rx_GBps) + " of " +
                             format_number(h2d->value) + " GB/s per GPU" + basis_note(*h2d));
        f.advice.push_back(
            "PCIe bounds the job: send compact data (uint8 images, decode and augment on the "
            "GPU), pinned memory, or a machine with a faster host link");
        return f;
      },
      [](const summary& s, const ceilings& c) -> std::optional<finding> {
        // A link reports its speed in the network figure's unit (bits).
        std::optional<double> speed = s.link_speed_Gbps;
        std::string basis = "reported by the link";
        if (const ceiling* network = c.find(fig::network);
            network && network->value > 0 && !speed) {
          speed = network->value;
          basis = network->basis;
        }
        if (!speed || s.busiest_link.empty()) return std::nullopt;
        const double moved = vocabulary::convert(s.link_GBps, units::GBps, fig::network.in);
        const double share = moved / *speed;
        if (share < near_ceiling) return std::nullopt;
        finding f{component::communication, share, {}, {}};
        f.evidence.push_back(s.busiest_link + " moved " + format_number(moved) + " of " +
                             format_number(*speed) + " " + std::string(fig::network.in.symbol) +
                             " (" + basis + ")");
        f.advice.push_back(
            "the network between nodes bounds the job: a faster fabric, HSDP instead of FSDP "
            "across nodes, gradient accumulation (fewer exchanges per sample); `gpubench size "
            "--set " +
            vocabulary::key_of(fig::network) + "=N` predicts the rate with more");
        return f;
      },
      // NVLink between the GPUs of a node. NCCL's kernels keep a GPU "busy" while they wait on
      // the links, so this often shows beside a GPU verdict, as evidence that the GPUs exchange.
      [](const summary& s, const ceilings& c) -> std::optional<finding> {
        const ceiling* nvlink = c.find(fig::nvlink);
        const std::optional<double> share = near_share(s.nvlink_GBps, nvlink);
        if (!share) return std::nullopt;
        finding f{component::communication, *share, {}, {}};
        f.evidence.push_back("NVLink moved " + format_number(*s.nvlink_GBps) + " of " +
                             format_number(nvlink->value) + " GB/s per GPU, both directions" +
                             basis_note(*nvlink));
        f.advice.push_back(
            "NVLink between the GPUs bounds the job: less exchanged per step (a larger batch per "
            "GPU, gradient accumulation, less tensor parallelism), or overlap of the exchanges "
            "with compute; `gpubench size --set " +
            vocabulary::key_of(fig::nvlink) + "=N` predicts the rate with more");
        return f;
      },
  };
  return table;
}

}  // namespace

namespace {

// The job's CPU use, its threads and its processes' states.
void summarize_cpu(const std::vector<interval>& samples, summary& s) {
  std::map<std::string, double> states;
  double process_samples = 0;
  std::vector<double> cpu;
  std::vector<double> cpu_outside;
  std::vector<double> cpu_stolen;
  std::vector<double> cpu_available;
  std::vector<double> busiest_thread;
  std::vector<double> saturated_counts;
  std::vector<const std::vector<thread_load>*> saturated_lists;
  for (const interval& sample : samples) {
    s.duration_s += sample.interval_s;
    const job_load& job = sample.job;
    cpu.push_back(job.cpu_cores_used);
    busiest_thread.push_back(job.busiest_threads.empty() ? 0.0
                                                         : job.busiest_threads.front().cpu_cores);
    saturated_counts.push_back(job.threads_saturated);
    saturated_lists.push_back(&job.busiest_threads);
    s.cpu_cores_allowed = job.cpu_cores_allowed;
    double available = s.cpu_cores_allowed;
    if (sample.cpu.known()) {
      cpu_outside.push_back(sample.cpu.outside_job_cores);
      cpu_stolen.push_back(sample.cpu.stolen_cores);
      available = std::min(available, static_cast<double>(sample.cpu.cpus) -
                                          sample.cpu.outside_job_cores - sample.cpu.stolen_cores);
    }
    // The job had what it used, whatever the counters' timing says.
    cpu_available.push_back(std::max(available, cpu.back()));
    for (const auto& [state, count] : job.states) {
      states[state] += count;
      process_samples += count;
    }
  }
  s.cpu_cores_used = median(cpu);
  s.cpu_cores_outside_job = median(cpu_outside);
  s.cpu_cores_stolen = median(cpu_stolen);
  s.cpu_cores_available = median(cpu_available);
  s.busiest_thread_cores = median(busiest_thread);
  s.threads_saturated = static_cast<int>(median(saturated_counts));
  // The saturated threads of the last sample with the typical count, as the example to name.
  for (std::size_t i = samples.size(); i-- > 0 && s.threads_saturated > 0;) {
    if (static_cast<int>(saturated_counts[i]) != s.threads_saturated) continue;
    for (const thread_load& t : *saturated_lists[i]) {
      if (t.cpu_cores < saturated_thread) break;  // sorted, busiest first
      s.saturated_threads.push_back({t.name, t.pid, t.cpu_cores, t.in_root});
    }
    break;
  }
  for (const auto& [state, count] : states) {
    s.state_shares.emplace_back(state, process_samples > 0 ? count / process_samples : 0.0);
  }
}

// The training loops and their workers, over the samples that had workers.
void summarize_loader(const std::vector<interval>& samples, summary& s) {
  summary::loader_load& l = s.loader;
  std::vector<double> loops;
  std::vector<double> workers;
  std::vector<double> worker_cpu;
  std::vector<double> worker_busy;
  std::vector<double> main_cpu;
  std::vector<double> main_busy;
  int measured = 0;
  const interval* typical = nullptr;
  for (const interval& sample : samples) {
    const job_load& job = sample.job;
    if (job.workers.empty()) continue;
    ++l.samples;
    // What a hypervisor held back of the job's CPUs a thread neither ran nor waited on a run
    // queue for: the share of the time a worker could have been busy at most.
    const double could_run =
        sample.cpu.known()
            ? std::max(0.5, 1 - sample.cpu.stolen_cores / static_cast<double>(sample.cpu.cpus))
            : 1.0;
    double cpu = 0;
    double busy = 0;
    bool all_measured = true;
    for (const loop_process& w : job.workers) {
      cpu += w.cpu_cores;
      busy += std::min(1.0, w.busy.value_or(std::min(1.0, w.cpu_cores)) / could_run);
      all_measured = all_measured && w.busy.has_value();
    }
    measured += all_measured ? 1 : 0;
    const double n = static_cast<double>(job.workers.size());
    loops.push_back(static_cast<double>(job.main_processes.size()));
    workers.push_back(n);
    worker_cpu.push_back(cpu / n);
    worker_busy.push_back(busy / n);
    double loop_cpu = 0;
    double loop_busy = 0;
    for (const loop_process& m : job.main_processes) {
      loop_cpu = std::max(loop_cpu, m.cpu_cores);
      loop_busy = std::max(loop_busy, std::min(1.0, m.busy.value_or(m.cpu_cores) / could_run));
    }
    main_cpu.push_back(loop_cpu);
    main_busy.push_back(loop_busy);
    typical = &sample;
  }
  if (l.samples == 0) return;
  l.loops = static_cast<int>(median(loops));
  l.workers = static_cast<int>(median(workers));
  l.worker_cpu_cores = median(worker_cpu);
  l.worker_busy = median(worker_busy);
  l.busy_measured = 2 * measured > l.samples;
  l.main_cpu_cores = median(main_cpu);
  l.main_busy = median(main_busy);
  // The last sample with the typical number of workers names them.
  for (auto it = samples.rbegin(); it != samples.rend(); ++it) {
    if (static_cast<int>(it->job.workers.size()) == l.workers) {
      typical = &*it;
      break;
    }
  }
  if (!typical->job.main_processes.empty()) l.main = typical->job.main_processes.front();
  l.named_workers = typical->job.workers;
}

// The job's reads, the busiest disk and the busiest link.
void summarize_io(const std::vector<interval>& samples, summary& s) {
  std::vector<double> job_read;
  std::vector<double> job_read_calls;
  std::map<std::string, std::vector<double>> disk_read;
  std::map<std::string, std::vector<double>> disk_busy;
  std::map<std::string, std::vector<double>> disk_wait;
  std::map<std::string, std::vector<double>> link_rate;
  std::map<std::string, std::optional<double>> link_speed;
  for (const interval& sample : samples) {
    job_read.push_back(sample.job.read_GBps);
    job_read_calls.push_back(sample.job.read_call_GBps);
    for (const disk_load& d : sample.disks) {
      disk_read[d.device].push_back(d.read_GBps);
      disk_busy[d.device].push_back(d.busy_percent / 100);
      disk_wait[d.device].push_back(d.read_wait_ms);
    }
    for (const watch::link_rate& l : link_rates(sample)) {
      link_rate[l.name].push_back(l.GBps);
      if (l.speed_Gbps) link_speed[l.name] = l.speed_Gbps;
    }
  }
  s.job_read_GBps = median(job_read);
  s.job_read_call_GBps = median(job_read_calls);
  for (const auto& [name, busy] : disk_busy) {
    const double typical = median(busy);
    if (typical >= s.disk_busy || s.busiest_disk.empty()) {
      s.busiest_disk = name;
      s.disk_busy = typical;
      s.disk_read_GBps = median(disk_read[name]);
      s.disk_read_wait_ms = median(disk_wait[name]);
    }
  }
  for (const auto& [name, rates] : link_rate) {
    const double typical = median(rates);
    if (typical > s.link_GBps || s.busiest_link.empty()) {
      s.busiest_link = name;
      s.link_GBps = typical;
      s.link_speed_Gbps = link_speed[name];
    }
  }
}

// The job's GPUs: how busy, their memory, PCIe and NVLink traffic.
void summarize_gpus(const std::vector<interval>& samples, summary& s) {
  std::vector<double> gpu_busy;
  std::vector<double> gpu_memory;
  std::vector<double> pcie;
  std::vector<double> nvlink;
  bool memory_known = false;
  bool pcie_known = false;
  std::set<unsigned> job_gpus;
  for (const interval& sample : samples) {
    s.machine_gpus = static_cast<int>(sample.gpus.size());
    double busy = 0;
    double memory = 0;
    double rx = 0;
    std::optional<double> link;
    int used = 0;
    for (const gpu_load& g : sample.gpus) {
      if (!g.used_by_job() || !g.utilization_percent) continue;
      job_gpus.insert(g.index);
      ++used;
      busy += *g.utilization_percent / 100.0;
      if (g.memory_utilization_percent) {
        memory_known = true;
        memory += *g.memory_utilization_percent / 100.0;
      }
      if (g.pcie_rx_GBps) {
        pcie_known = true;
        rx = std::max(rx, *g.pcie_rx_GBps);
      }
      if (const auto both = g.nvlink_GBps()) link = std::max(link.value_or(0), *both);
    }
    // A sample in which the job held no GPU (starting up, exiting) counts as idle.
    gpu_busy.push_back(used > 0 ? busy / used : 0.0);
    gpu_memory.push_back(used > 0 ? memory / used : 0.0);
    if (used > 0) {
      pcie.push_back(rx);
      if (link) nvlink.push_back(*link);
    }
  }
  s.job_gpus = static_cast<int>(job_gpus.size());
  if (!pcie.empty()) {  // one entry per sample in which the job held a GPU
    s.gpu_busy = median(gpu_busy);
    if (memory_known) s.gpu_memory_busy = median(gpu_memory);
    if (pcie_known) s.pcie_rx_GBps = median(pcie);
    if (!nvlink.empty()) s.nvlink_GBps = median(nvlink);
  }
}

}  // namespace

summary summarize(const std::vector<interval>& samples) {
  summary s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  summarize_cpu(samples, s);
  summarize_loader(samples, s);
  summarize_io(samples, s);
  summarize_gpus(samples, s);
  return s;
}

verdict judge(const summary& s, const ceilings& c) {
  if (s.samples == 0) {
    return {component::none,
            {"no sample: the job ended (or the watch stopped) within the first interval"},
            {"watch a longer run, or sample more often (--interval)"}};
  }
  std::vector<finding> found;
  for (const rule& r : rules()) {
    if (auto f = r(s, c)) found.push_back(std::move(*f));
  }
  verdict v;
  if (!found.empty()) {
    const auto best =
        std::max_element(found.begin(), found.end(),
                         [](const auto& a, const auto& b) { return a.nearness < b.nearness; });
    v.limiting_component = best->component;
    v.evidence = best->evidence;
    v.advice = best->advice;
    for (const finding& other : found) {
      if (&other == &*best) continue;
      v.evidence.push_back("also near its ceiling, " + std::string(to_string(other.component)) +
                           ": " + other.evidence.front());
    }
    return v;
  }
  v.limiting_component = component::none;
  v.evidence.push_back(
      "nothing is near a ceiling: " +
      (s.gpu_busy ? "GPUs busy " + pct(*s.gpu_busy) + ", " : std::string("no GPU in use, ")) +
      format_number(s.cpu_cores_used) + " of " + format_number(s.cpu_cores_allowed) +
      " allowed cores" +
      (s.busiest_disk.empty() ? std::string()
                              : ", " + s.busiest_disk + " busy " + pct(s.disk_busy)));
  std::string waits;
  for (const auto& [state, share] : s.state_shares) {
    if (share < 0.05) continue;
    const char* meaning = state == "S"   ? " asleep (S: a timer, a lock, a pipe, the network)"
                          : state == "D" ? " in uninterruptible waits (D: mostly I/O)"
                          : state == "R" ? " running or ready to run (R)"
                                         : "";
    waits +=
        (waits.empty() ? "" : ", ") + pct(share) + meaning + (*meaning ? "" : " in state " + state);
  }
  if (!waits.empty()) v.evidence.push_back("the job's processes were " + waits);
  v.advice.push_back(
      "the job waits on something outside this machine's measured parts (sleep, locks, a "
      "remote service, its own pacing): profile it (py-spy, torch.profiler) to see where");
  return v;
}

json to_json(const summary& s) {
  json states = json::object();
  for (const auto& [state, share] : s.state_shares) states[state] = share;
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
  return {{"samples", s.samples},
          {"duration_s", s.duration_s},
          {"cpu_cores_used", s.cpu_cores_used},
          {"cpu_cores_allowed", s.cpu_cores_allowed},
          {"cpu_cores_outside_job", s.cpu_cores_outside_job},
          {"cpu_cores_stolen", s.cpu_cores_stolen},
          {"cpu_cores_available", s.cpu_cores_available},
          {"process_states", states},
          {"busiest_thread_cores", s.busiest_thread_cores},
          {"threads_saturated", s.threads_saturated},
          {"loader",
           {{"samples", s.loader.samples},
            {"main_processes", s.loader.loops},
            {"workers", s.loader.workers},
            {"worker_cpu_cores", s.loader.worker_cpu_cores},
            {"worker_busy", s.loader.worker_busy},
            {"busy_measured", s.loader.busy_measured},
            {"main_cpu_cores", s.loader.main_cpu_cores},
            {"main_busy", s.loader.main_busy}}},
          {"job_gpus", s.job_gpus},
          {"machine_gpus", s.machine_gpus},
          {"gpu_busy", opt(s.gpu_busy)},
          {"gpu_memory_busy", opt(s.gpu_memory_busy)},
          {"pcie_rx_GBps", opt(s.pcie_rx_GBps)},
          {"nvlink_GBps", opt(s.nvlink_GBps)},
          {"job_read_GBps", s.job_read_GBps},
          {"job_read_call_GBps", s.job_read_call_GBps},
          {"busiest_disk", s.busiest_disk},
          {"disk_busy", s.disk_busy},
          {"disk_read_GBps", s.disk_read_GBps},
          {"disk_read_wait_ms", s.disk_read_wait_ms},
          {"busiest_link", s.busiest_link},
          {"link_GBps", s.link_GBps},
          {"link_speed_Gbps", opt(s.link_speed_Gbps)}};
}

json to_json(const verdict& v) {
  return {
      {"limiting_component", v.limiting_component}, {"evidence", v.evidence}, {"advice", v.advice}};
}

json to_json(const ceilings& c) {
  json out = json::object();
  for (const ceiling& v : c.known) {
    out[vocabulary::key_of(*v.figure)] = {
        {"value", v.value}, {"basis", v.basis}, {"origin", v.origin}, {"source", v.source}};
  }
  return out;
}

const ceiling* ceilings::find(const vocabulary::figure_def& f) const {
  for (const ceiling& c : known) {
    if (c.figure == &f) return &c;
  }
  return nullptr;
}

ceilings ceilings_of(const model::hardware_profile& hw, const std::string& origin) {
  ceilings c;
  for (const vocabulary::figure_def* f :
       {&fig::storage_read, &fig::pcie_h2d, &fig::network, &fig::nvlink}) {
    if (const model::figure* found = hw.find(*f)) {
      c.known.push_back(
          {f, found->value, std::string(model::to_string(found->from)), origin, found->source});
    }
  }
  return c;
}

}  // namespace gpubench::watch
