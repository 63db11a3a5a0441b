// Host worker threads, each pinned to its own physical core, for benchmarks that load every
// core (memory bandwidth, CPU data preparation).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gpubench {

// One OS processor id per physical core this process may run on (its affinity mask), in
// topology order: the places workers are pinned to.
[[nodiscard]] std::vector<int> available_core_cpus();

// Lets this process run on every CPU of the machine it may use (launchers such as mpirun bind a
// rank to one core; the rank that runs a node's host benchmarks needs them all). Returns false
// when the system refuses.
bool widen_affinity_to_all_cpus();

class pinned_thread_pool {
 public:
  // Starts `threads` workers pinned round-robin to the physical cores this process may use.
  explicit pinned_thread_pool(int threads);
  pinned_thread_pool(const pinned_thread_pool&) = delete;
  pinned_thread_pool& operator=(const pinned_thread_pool&) = delete;
  ~pinned_thread_pool();

  // Calls task(worker_index) on every worker and returns when all have finished. An exception
  // thrown by a task is rethrown here (the first one).
  void run(const std::function<void(int)>& task);

  [[nodiscard]] int size() const noexcept { return static_cast<int>(workers_.size()); }
  // The OS processor each worker is bound to (-1 where binding failed).
  [[nodiscard]] const std::vector<int>& bound_cpus() const noexcept { return bound_cpus_; }

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::vector<int> bound_cpus_;
  const std::function<void(int)>* task_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> started_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr first_error_;
  std::atomic<bool> error_set_{false};
};

}  // namespace gpubench
