#include "gpubench/core/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gpubench {

namespace {

// The cores this process may run on (a cpuset or taskset allows fewer than the machine has).
std::size_t allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    return static_cast<std::size_t>(std::max(CPU_COUNT(&set), 1));
  }
  return std::max<std::size_t>(std::thread::hardware_concurrency(), 1);
}

}  // namespace

void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t max_threads) {
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t ranges = (n + grain - 1) / grain;
  std::atomic<std::size_t> next{0};
  std::mutex failure_lock;
  std::exception_ptr failure;
  const auto worker = [&] {
    for (std::size_t r = next++; r < ranges; r = next++) {
      try {
        body(r * grain, std::min(n, (r + 1) * grain));
      } catch (...) {
        const std::lock_guard<std::mutex> hold(failure_lock);
        if (!failure) failure = std::current_exception();
        next = ranges;
        return;
      }
    }
  };
  const std::size_t cores = max_threads == 0 ? allowed_cores() : max_threads;
  const std::size_t threads = std::clamp<std::size_t>(cores, 1, std::max<std::size_t>(ranges, 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (...) {
      // No more threads (system_error), or no memory for one's state (bad_alloc): those started
      // and this one share the ranges. Nothing may leave here while `pool` holds a thread that
      // runs: its destructor would end the process.
      break;
    }
  }
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gpubench
