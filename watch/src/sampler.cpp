#include "gpubench/watch/sampler.hpp"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace gpubench::watch {

namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// /proc/PID/stat: the name sits in parentheses and may hold spaces, so fields are counted from
// the last ')'.
std::optional<process_counters> read_stat(pid_t pid, const std::string& path) {
  const auto text = slurp(path);
  if (!text) return std::nullopt;
  const auto open = text->find('(');
  const auto close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  process_counters p;
  p.pid = pid;
  p.name = text->substr(open + 1, close - open - 1);
  std::istringstream rest(text->substr(close + 1));
  std::vector<std::string> fields;  // fields[0] is field 3 (state)
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 22) return std::nullopt;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  static const double page_GB = static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e9;
  p.state = fields[0].empty() ? '?' : fields[0][0];
  p.ppid = static_cast<pid_t>(std::stol(fields[1]));
  p.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;  // utime + stime
  p.rss_GB = std::stod(fields[21]) * page_GB;
  p.start_ticks = std::stoull(fields[19]);  // field 22, starttime
  return p;
}

std::optional<process_counters> read_stat(pid_t pid) {
  return read_stat(pid, "/proc/" + std::to_string(pid) + "/stat");
}

// /proc/PID/task/TID/schedstat: nanoseconds on a CPU, nanoseconds waiting on a run queue, and
// the number of time slices. The two times together are how long the thread wanted a core.
std::optional<double> runnable_seconds(const std::string& task_dir) {
  const auto text = slurp(task_dir + "/schedstat");
  if (!text) return std::nullopt;
  std::istringstream f(*text);
  double ran_ns = 0;
  double waited_ns = 0;
  if (!(f >> ran_ns >> waited_ns)) return std::nullopt;
  return (ran_ns + waited_ns) / 1e9;
}

std::vector<thread_counters> read_threads(pid_t pid) {
  std::vector<thread_counters> threads;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* dir = opendir(tasks.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      const auto tid = static_cast<pid_t>(std::atol(entry->d_name));
      const std::string task = tasks + "/" + entry->d_name;
      if (auto t = read_stat(tid, task + "/stat")) {
        threads.push_back({tid, std::move(t->name), t->cpu_seconds, runnable_seconds(task)});
      }
    }
    closedir(dir);
  }
  return threads;
}

void read_status_and_io(process_counters& p) {
  const std::string dir = "/proc/" + std::to_string(p.pid);
  if (const auto status = slurp(dir + "/status")) {
    std::istringstream lines(*status);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
          line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        p.context_switches += std::stoull(line.substr(line.find(':') + 1));
      }
    }
  }
  if (const auto io = slurp(dir + "/io")) {
    std::istringstream lines(*io);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("read_bytes:", 0) == 0) p.read_bytes = std::stoull(line.substr(11));
      if (line.rfind("rchar:", 0) == 0) p.read_chars = std::stoull(line.substr(6));
    }
  }
}

std::vector<process_counters> read_tree(pid_t root) {
  std::vector<process_counters> all;
  if (DIR* proc = opendir("/proc")) {
    while (const dirent* entry = readdir(proc)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      if (auto p = read_stat(static_cast<pid_t>(std::atol(entry->d_name)))) {
        all.push_back(std::move(*p));
      }
    }
    closedir(proc);
  }
  std::vector<process_counters> tree;
  std::set<pid_t> in_tree{root};
  // Parents before children is not guaranteed by pid order (pids wrap), so grow until stable.
  for (bool grew = true; grew;) {
    grew = false;
    for (const process_counters& p : all) {
      if (!in_tree.contains(p.pid) && in_tree.contains(p.ppid)) {
        in_tree.insert(p.pid);
        grew = true;
      }
    }
  }
  for (process_counters& p : all) {
    if (!in_tree.contains(p.pid)) continue;
    read_status_and_io(p);
    p.threads = read_threads(p.pid);
    tree.push_back(std::move(p));
  }
  std::stable_partition(tree.begin(), tree.end(),
                        [root](const process_counters& p) { return p.pid == root; });
  return tree;
}

bool is_whole_disk(const std::string& name) {
  for (const char* skip : {"loop", "ram", "zram", "fd", "sr"}) {
    if (name.rfind(skip, 0) == 0) return false;
  }
  return access(("/sys/block/" + name).c_str(), F_OK) == 0;
}

std::optional<double> first_number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  try {
    return std::stod(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// /proc/stat's "cpuN" lines, in clock ticks: user nice system idle iowait irq softirq steal ...
// (guest time is already inside user). Only the CPUs in `cpus` count.
machine_counters::cpu_time read_cpu_time(const cpu_set_t& cpus) {
  machine_counters::cpu_time total;
  const auto stat = slurp("/proc/stat");
  if (!stat) return total;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::istringstream lines(*stat);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() < 4 || line.rfind("cpu", 0) != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream f(line.substr(3));
    int cpu = 0;
    std::vector<double> t;
    f >> cpu;
    for (double x = 0; f >> x;) t.push_back(x);
    if (t.size() < 8 || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &cpus)) continue;
    total.cpus.push_back(cpu);
    total.busy_s += (t[0] + t[1] + t[2] + t[5] + t[6]) / ticks;
    total.steal_s += t[7] / ticks;
  }
  return total;
}

machine_counters read_machine(const cpu_set_t& job_cpus) {
  machine_counters m;
  m.cpu = read_cpu_time(job_cpus);
  if (const auto stats = slurp("/proc/diskstats")) {
    std::istringstream lines(*stats);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream f(line);
      std::vector<std::string> t;
      for (std::string x; f >> x;) t.push_back(x);
      if (t.size() < 14 || !is_whole_disk(t[2])) continue;
      machine_counters::disk d;
      d.reads = std::stoull(t[3]);
      d.sectors_read = std::stoull(t[5]);
      d.read_ms = std::stoull(t[6]);
      d.busy_ms = std::stoull(t[12]);
      m.disks[t[2]] = d;
    }
  }
  if (const auto dev = slurp("/proc/net/dev")) {
    std::istringstream lines(*dev);
    for (std::string line; std::getline(lines, line);) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      name.erase(0, name.find_first_not_of(' '));
      if (name == "lo") continue;
      std::istringstream f(line.substr(colon + 1));
      std::vector<std::uint64_t> t;
      for (std::uint64_t x = 0; f >> x;) t.push_back(x);
      if (t.size() < 9) continue;
      machine_counters::link l;
      l.rx_bytes = t[0];
      l.tx_bytes = t[8];
      // Mb/s; -1 or an error when the link does not say.
      if (const auto mbps = first_number(slurp("/sys/class/net/" + name + "/speed"));
          mbps && *mbps > 0) {
        l.speed_Gbps = *mbps / 1000.0;
      }
      m.interfaces[name] = l;
    }
  }
  const std::string ib = "/sys/class/infiniband";
  if (DIR* devices = opendir(ib.c_str())) {
    while (const dirent* dev = readdir(devices)) {
      if (dev->d_name[0] == '.') continue;
      const std::string ports = ib + "/" + dev->d_name + "/ports";
      DIR* port_dir = opendir(ports.c_str());
      if (port_dir == nullptr) continue;
      while (const dirent* port = readdir(port_dir)) {
        if (port->d_name[0] == '.') continue;
        const std::string base = ports + "/" + port->d_name;
        // port_rcv_data and port_xmit_data count 4-byte words.
        const auto rx = first_number(slurp(base + "/counters/port_rcv_data"));
        const auto tx = first_number(slurp(base + "/counters/port_xmit_data"));
        if (!rx || !tx) continue;
        machine_counters::link l;
        l.rx_bytes = static_cast<std::uint64_t>(*rx) * 4;
        l.tx_bytes = static_cast<std::uint64_t>(*tx) * 4;
        l.speed_Gbps = first_number(slurp(base + "/rate"));  // "200 Gb/sec (4X HDR)"
        m.infiniband[std::string(dev->d_name) + "/" + port->d_name] = l;
      }
      closedir(port_dir);
    }
    closedir(devices);
  }
  return m;
}

// cgroup v2: the smallest cpu.max quota on the path from the process's cgroup to the root.
std::optional<double> cgroup_cores(pid_t pid) {
  const auto membership = slurp("/proc/" + std::to_string(pid) + "/cgroup");
  if (!membership) return std::nullopt;
  std::istringstream lines(*membership);
  std::optional<double> cores;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string path = line.substr(3);
    while (true) {
      if (const auto max = slurp("/sys/fs/cgroup" + path + "/cpu.max")) {
        std::istringstream f(*max);
        std::string quota;
        double period = 0;
        if (f >> quota >> period && quota != "max" && period > 0) {
          const double c = std::stod(quota) / period;
          cores = cores ? std::min(*cores, c) : c;
        }
      }
      if (path.empty() || path == "/") break;
      path = path.substr(0, path.rfind('/'));
    }
  }
  return cores;
}

double rate(double later, double earlier, double seconds) {
  return seconds > 0 ? std::max(0.0, later - earlier) / seconds : 0.0;
}

}  // namespace

sampler::sampler(pid_t root) : root_(root) {
  CPU_ZERO(&job_cpus_);
  if (sched_getaffinity(root_, sizeof job_cpus_, &job_cpus_) != 0) {
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF) && c < CPU_SETSIZE; ++c) {
      CPU_SET(c, &job_cpus_);
    }
  }
  gpus_ = gpu_monitor::open(gpu_why_not_);
}

sampler::~sampler() = default;

snapshot sampler::take(double t) {
  const auto begun = std::chrono::steady_clock::now();
  const auto since_begun = [&] {
    return t + std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  };
  snapshot s;
  s.t = t;
  s.root = root_;
  s.processes = read_tree(root_);
  if (cpu_set_t now; sched_getaffinity(root_, sizeof now, &now) == 0) job_cpus_ = now;
  s.machine_t = since_begun();
  s.machine = read_machine(job_cpus_);
  s.gpu_t = since_begun();
  if (gpus_) s.gpus = gpus_->activity();
  return s;
}

double sampler::allowed_cores() const {
  double cores = std::min(static_cast<double>(CPU_COUNT(&job_cpus_)),
                          static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)));
  if (const auto quota = cgroup_cores(root_)) cores = std::min(cores, *quota);
  return cores;
}

namespace {

// The job's processes at the interval's start, by pid.
using earlier_processes = std::map<pid_t, const process_counters*>;

// Each of the job's processes over the interval, by pid: its CPU, and how busy its busiest
// thread was (null without schedstat).
struct process_rates {
  double cpu_cores = 0;
  std::optional<double> busy;
};
using rates_by_pid = std::map<pid_t, process_rates>;

// The job's processes over the interval: CPU, reads, memory, states, the busiest five; the ids
// of its processes in `pids`, their CPU in `rates`.
void add_processes(const earlier_processes& earlier, const snapshot& after, double dt,
                   job_load& job, std::set<int>& pids, rates_by_pid& rates) {
  std::vector<std::pair<double, process_load>> by_cpu;
  for (const process_counters& p : after.processes) {
    pids.insert(p.pid);
    const auto it = earlier.find(p.pid);
    const process_counters* was = it == earlier.end() ? nullptr : it->second;
    // A process born within the interval: all its CPU time and reads fall in it.
    const double cpu = rate(p.cpu_seconds, was ? was->cpu_seconds : 0.0, dt);
    rates[p.pid].cpu_cores = cpu;
    // GB/s of a byte counter /proc/PID/io may not give (another user's process).
    const auto GBps = [&](std::optional<std::uint64_t> process_counters::*counter) {
      if (!(p.*counter)) return 0.0;
      const double earlier_bytes =
          was && (was->*counter) ? static_cast<double>(*(was->*counter)) : 0.0;
      return rate(static_cast<double>(*(p.*counter)), earlier_bytes, dt) / 1e9;
    };
    const double read = GBps(&process_counters::read_bytes);
    const double read_calls = GBps(&process_counters::read_chars);
    job.cpu_cores_used += cpu;
    job.read_GBps += read;
    job.read_call_GBps += read_calls;
    job.context_switches_per_s += rate(static_cast<double>(p.context_switches),
                                       was ? static_cast<double>(was->context_switches) : 0.0, dt);
    job.rss_GB += p.rss_GB;
    ++job.states[std::string(1, p.state)];
    by_cpu.emplace_back(cpu,
                        process_load{p.pid, p.name, std::string(1, p.state), cpu, p.rss_GB, read});
  }
  std::stable_sort(by_cpu.begin(), by_cpu.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < by_cpu.size() && i < 5; ++i) job.top.push_back(by_cpu[i].second);
}

// The job's threads: which ones ran flat out (a loader worker, the training loop's own thread);
// each process's busiest in `rates`.
void add_threads(const earlier_processes& earlier, const snapshot& after, double dt, job_load& job,
                 rates_by_pid& rates) {
  std::vector<std::pair<double, thread_load>> threads;
  for (const process_counters& p : after.processes) {
    const auto it = earlier.find(p.pid);
    std::map<pid_t, const thread_counters*> was;
    if (it != earlier.end()) {
      for (const thread_counters& t : it->second->threads) was[t.tid] = &t;
    }
    for (const thread_counters& t : p.threads) {
      const auto w = was.find(t.tid);
      const thread_counters* before = w == was.end() ? nullptr : w->second;
      const double cpu = rate(t.cpu_seconds, before ? before->cpu_seconds : 0.0, dt);
      if (cpu >= saturated_thread) ++job.threads_saturated;
      threads.emplace_back(cpu, thread_load{p.pid, t.tid, t.name, p.pid == after.root, cpu});
      // A thread born within the interval wanted a core for all its schedstat time.
      if (t.runnable_seconds && (!before || before->runnable_seconds)) {
        const double busy =
            std::min(1.0, rate(*t.runnable_seconds, before ? *before->runnable_seconds : 0.0, dt));
        auto& process = rates[p.pid].busy;
        process = std::max(process.value_or(0.0), busy);
      }
    }
  }
  std::stable_sort(threads.begin(), threads.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < threads.size() && i < 5; ++i) {
    job.busiest_threads.push_back(threads[i].second);
  }
}

// The machine's disks and links over the interval of its own reads.
void add_disks_and_links(const snapshot& before, const snapshot& after, interval& out) {
  const double machine_dt = after.machine_t - before.machine_t;
  for (const auto& [name, d] : after.machine.disks) {
    const auto it = before.machine.disks.find(name);
    if (it == before.machine.disks.end()) continue;
    const auto& b = it->second;
    const double reads =
        rate(static_cast<double>(d.reads), static_cast<double>(b.reads), machine_dt);
    out.disks.push_back({name,
                         rate(static_cast<double>(d.sectors_read),
                              static_cast<double>(b.sectors_read), machine_dt) *
                             512 / 1e9,
                         reads,
                         reads > 0 ? static_cast<double>(d.read_ms - b.read_ms) /
                                         static_cast<double>(d.reads - b.reads)
                                   : 0.0,
                         std::min(100.0, rate(static_cast<double>(d.busy_ms),
                                              static_cast<double>(b.busy_ms), machine_dt) /
                                             10.0)});
  }
  // Each link's rates, named as its kind names it (an interface, a port).
  const auto links = [&]<typename Row>(const std::map<std::string, machine_counters::link>& now,
                                       const std::map<std::string, machine_counters::link>& then,
                                       std::string Row::*name_field, std::vector<Row>& rows) {
    for (const auto& [name, l] : now) {
      const auto it = then.find(name);
      if (it == then.end()) continue;
      Row row;
      row.*name_field = name;
      row.rx_GBps = rate(static_cast<double>(l.rx_bytes), static_cast<double>(it->second.rx_bytes),
                         machine_dt) /
                    1e9;
      row.tx_GBps = rate(static_cast<double>(l.tx_bytes), static_cast<double>(it->second.tx_bytes),
                         machine_dt) /
                    1e9;
      row.speed_Gbps = l.speed_Gbps;
      rows.push_back(std::move(row));
    }
  };
  links(after.machine.interfaces, before.machine.interfaces, &interface_load::interface,
        out.network);
  links(after.machine.infiniband, before.machine.infiniband, &port_load::port, out.infiniband);
}

// Every GPU NVML sees, with the job's processes that hold a context on it.
void add_gpus(const snapshot& before, const snapshot& after, const std::set<int>& pids,
              interval& out) {
  const double gpu_dt = after.gpu_t - before.gpu_t;
  std::map<unsigned, const gpu_activity*> gpus_before;
  for (const gpu_activity& g : before.gpus) gpus_before[g.index] = &g;
  for (const gpu_activity& g : after.gpus) {
    // NVLink GB/s from the cumulative counters; null without NVLink or an earlier reading.
    const auto nvlink =
        [&](std::optional<std::uint64_t> gpu_activity::*counter) -> std::optional<double> {
      const auto it = gpus_before.find(g.index);
      if (!(g.*counter) || it == gpus_before.end() || !(it->second->*counter)) return std::nullopt;
      return rate(static_cast<double>(*(g.*counter)), static_cast<double>(*(it->second->*counter)),
                  gpu_dt) /
             1e9;
    };
    gpu_load load{g.index,
                  g.name,
                  g.uuid,
                  g.pci_bus_id,
                  g.gpu_utilization_percent,
                  g.memory_utilization_percent,
                  g.memory_used_GB,
                  g.memory_total_GB,
                  g.live.clocks.sm_mhz,
                  g.live.power_W,
                  g.live.temperature_C,
                  g.live.throttle_reasons,
                  g.pcie_rx_GBps,
                  g.pcie_tx_GBps,
                  nvlink(&gpu_activity::nvlink_rx_bytes),
                  nvlink(&gpu_activity::nvlink_tx_bytes),
                  {}};
    for (const int pid : g.compute_pids) {
      if (pids.contains(pid)) load.job_pids.push_back(pid);
    }
    out.gpus.push_back(std::move(load));
  }
}

// The training loops' processes (those holding a GPU context whose parent holds none: a
// launcher's ranks; without any, the job's first) and their workers: each child process of a
// loop's, with its own descendants' CPU and busiest thread, as a DataLoader worker's helpers
// are its work.
void add_loops_and_workers(const snapshot& after, const rates_by_pid& rates,
                           const std::vector<gpu_load>& gpus, job_load& job) {
  std::map<pid_t, const process_counters*> by_pid;
  std::map<pid_t, std::vector<pid_t>> children;
  for (const process_counters& p : after.processes) {
    by_pid[p.pid] = &p;
    children[p.ppid].push_back(p.pid);
  }
  std::set<pid_t> on_gpu;
  for (const gpu_load& g : gpus) on_gpu.insert(g.job_pids.begin(), g.job_pids.end());
  std::vector<pid_t> loops;
  for (const process_counters& p : after.processes) {
    if (on_gpu.contains(p.pid) && !on_gpu.contains(p.ppid)) loops.push_back(p.pid);
  }
  if (loops.empty() && by_pid.contains(after.root)) loops.push_back(after.root);
  const auto of = [&](pid_t pid, pid_t parent) {
    loop_process out{pid, parent, by_pid.at(pid)->name, 0, std::nullopt};
    if (const auto it = rates.find(pid); it != rates.end()) {
      out.cpu_cores = it->second.cpu_cores;
      out.busy = it->second.busy;
    }
    return out;
  };
  for (const pid_t loop : loops) {
    job.main_processes.push_back(of(loop, by_pid.at(loop)->ppid));
    for (const pid_t child : children[loop]) {
      loop_process worker = of(child, loop);
      std::vector<pid_t> below = children[child];
      while (!below.empty()) {
        const pid_t pid = below.back();
        below.pop_back();
        const loop_process part = of(pid, 0);
        worker.cpu_cores += part.cpu_cores;
        if (part.busy) worker.busy = std::max(worker.busy.value_or(0.0), *part.busy);
        below.insert(below.end(), children[pid].begin(), children[pid].end());
      }
      job.workers.push_back(std::move(worker));
    }
  }
}

}  // namespace

interval interval_sample(const snapshot& before, const snapshot& after, double allowed_cores) {
  const double dt = after.t - before.t;
  const double machine_dt = after.machine_t - before.machine_t;
  interval out;
  out.t = after.t;
  out.interval_s = dt;
  job_load& job = out.job;
  job.processes = after.processes.size();
  job.cpu_cores_allowed = allowed_cores;
  earlier_processes earlier;
  for (const process_counters& p : before.processes) earlier[p.pid] = &p;
  std::set<int> pids;
  rates_by_pid rates;
  add_processes(earlier, after, dt, job, pids, rates);
  add_threads(earlier, after, dt, job, rates);
  add_disks_and_links(before, after, out);
  add_gpus(before, after, pids, out);
  add_loops_and_workers(after, rates, out.gpus, job);

  // What the job's CPUs did besides the job: other processes (the watcher among them) and, in a
  // virtual machine, the host. Both take cores the job is allowed but cannot have.
  // An affinity changed between the two reads sums other CPUs, even when as many: that interval
  // has no figure.
  const auto& cpu_then = before.machine.cpu;
  const auto& cpu_now = after.machine.cpu;
  if (cpu_now.cpus == cpu_then.cpus) {
    const double busy = rate(cpu_now.busy_s, cpu_then.busy_s, machine_dt);
    out.cpu = {cpu_now.cpus.size(), busy, std::max(0.0, busy - job.cpu_cores_used),
               rate(cpu_now.steal_s, cpu_then.steal_s, machine_dt)};
  }
  return out;
}

std::vector<link_rate> link_rates(const interval& sample) {
  std::vector<link_rate> out;
  for (const interface_load& l : sample.network) {
    out.push_back({l.interface, std::max(l.rx_GBps, l.tx_GBps), l.speed_Gbps});
  }
  for (const port_load& l : sample.infiniband) {
    out.push_back({l.port, std::max(l.rx_GBps, l.tx_GBps), l.speed_Gbps});
  }
  return out;
}

bool has_ended(pid_t pid, std::uint64_t start_ticks) {
  const auto p = read_stat(pid);
  return !p || p->state == 'Z' || (start_ticks != 0 && p->start_ticks != start_ticks);
}

std::uint64_t start_ticks_of(pid_t pid) {
  const auto p = read_stat(pid);
  return p ? p->start_ticks : 0;
}

std::optional<std::string> why_not_watchable(pid_t pid) {
  if (pid <= 0) return "expected a process id above 0";
  const std::string dir = "/proc/" + std::to_string(pid);
  if (access(dir.c_str(), F_OK) != 0) return "no process " + std::to_string(pid);
  std::ifstream io(dir + "/io");
  if (!io) {
    return "process " + std::to_string(pid) + " is not ours to read (/proc/" + std::to_string(pid) +
           "/io: " + std::strerror(errno) + ")";
  }
  return std::nullopt;
}

}  // namespace gpubench::watch
