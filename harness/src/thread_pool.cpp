#include "gpubench/harness/thread_pool.hpp"

#include <sched.h>
#include <unistd.h>

#include <hwloc.h>

#include <memory>
#include <stdexcept>

#include "gpubench/core/errors.hpp"

namespace gpubench {

namespace {
struct topology_deleter {
  void operator()(hwloc_topology_t t) const noexcept { hwloc_topology_destroy(t); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;

topology_ptr load_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw_system_error("hwloc_topology_init", errno);
  }
  topology_ptr topology(raw);
  if (hwloc_topology_load(raw) != 0) {
    throw_system_error("hwloc_topology_load", errno);
  }
  return topology;
}
}  // namespace

std::vector<int> available_core_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  GPUBENCH_CHECK_SYSCALL(sched_getaffinity(0, sizeof(allowed), &allowed));

  std::vector<int> cpus;
  const auto topology = load_topology();
  const int cores = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_CORE);
  for (int c = 0; c < cores; ++c) {
    hwloc_obj_t core =
        hwloc_get_obj_by_type(topology.get(), HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    for (int pu = hwloc_bitmap_first(core->cpuset); pu != -1;
         pu = hwloc_bitmap_next(core->cpuset, pu)) {
      if (pu < CPU_SETSIZE && CPU_ISSET(pu, &allowed)) {
        cpus.push_back(pu);
        break;  // one hardware thread per core
      }
    }
  }
  if (cpus.empty()) {
    // No core information (some containers): fall back to every allowed processor.
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) {
        cpus.push_back(cpu);
      }
    }
  }
  return cpus;
}

bool widen_affinity_to_all_cpus() {
  cpu_set_t all;
  CPU_ZERO(&all);
  const long online = sysconf(_SC_NPROCESSORS_CONF);
  for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu) {
    CPU_SET(static_cast<int>(cpu), &all);
  }
  // The kernel keeps the mask within the process's cgroup cpuset.
  return sched_setaffinity(0, sizeof all, &all) == 0;
}

pinned_thread_pool::pinned_thread_pool(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("pinned_thread_pool: needs at least one thread");
  }
  const std::vector<int> places = available_core_cpus();
  bound_cpus_.assign(static_cast<std::size_t>(threads), -1);
  workers_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    const int cpu = places.empty() ? -1 : places[static_cast<std::size_t>(i) % places.size()];
    workers_.emplace_back([this, i, cpu] {
      if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) == 0) {
          bound_cpus_[static_cast<std::size_t>(i)] = cpu;
        }
      }
      started_.fetch_add(1, std::memory_order_release);
      started_.notify_all();
      worker_loop(i);
    });
  }
  // Binding results are read by callers: wait until every worker has tried.
  for (int seen = started_.load(std::memory_order_acquire); seen < threads;
       seen = started_.load(std::memory_order_acquire)) {
    started_.wait(seen, std::memory_order_acquire);
  }
}

pinned_thread_pool::~pinned_thread_pool() {
  stopping_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& worker : workers_) {
    worker.join();
  }
}

void pinned_thread_pool::run(const std::function<void(int)>& task) {
  task_ = &task;
  first_error_ = nullptr;
  error_set_.store(false, std::memory_order_relaxed);
  pending_.store(size(), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (int left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire)) {
    pending_.wait(left, std::memory_order_acquire);
  }
  task_ = nullptr;
  if (first_error_) {
    std::rethrow_exception(first_error_);
  }
}

void pinned_thread_pool::worker_loop(int index) {
  std::uint64_t seen = 0;
  while (true) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) {
      return;
    }
    try {
      (*task_)(index);
    } catch (...) {
      if (!error_set_.exchange(true, std::memory_order_acq_rel)) {
        first_error_ = std::current_exception();
      }
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      pending_.notify_all();
    }
  }
}

}  // namespace gpubench
