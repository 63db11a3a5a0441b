// Copy-engine and SM copy timing in the way nvbandwidth does it: a spin kernel holds each stream
// while the timed copies are queued, so the copies run back to back once released and the host's
// enqueue cost is not timed. Also the SM copy kernel and the data pattern used to check copies.
// Every launch goes to the device of the stream it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "gpubench/harness/cuda.hpp"

namespace gpubench::kernels {

// The 32-bit word at `index` of the test pattern for `seed` (host and device agree).
__host__ __device__ inline std::uint32_t pattern_word(std::uint64_t index, std::uint32_t seed) {
  std::uint64_t x = index * 0x9E3779B97F4A7C15ULL + seed;  // splitmix64 step
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<std::uint32_t>(x ^ (x >> 31));
}

// Device: fill words [0, words) with the pattern; count mismatches into *wrong.
void enqueue_fill_pattern(std::uint32_t* data, std::size_t words, std::uint32_t seed,
                          const cuda::stream& stream);
void enqueue_check_pattern(const std::uint32_t* data, std::size_t words, std::uint32_t seed,
                           unsigned long long* wrong, const cuda::stream& stream);
// Host: the same, single-threaded.
void fill_pattern_host(std::uint32_t* data, std::size_t words, std::uint32_t seed);
[[nodiscard]] std::size_t check_pattern_host(const std::uint32_t* data, std::size_t words,
                                             std::uint32_t seed);

// Device: set n floats to `value`; count those that differ from it into *wrong (collective
// checks use exactly representable values, so equality is the right test).
void enqueue_fill_float(float* data, std::size_t n, float value, const cuda::stream& stream);
void enqueue_count_not_equal(const float* data, std::size_t n, float value,
                             unsigned long long* wrong, const cuda::stream& stream);

// SM copy: `blocks` x 512 threads copy 16-byte words from src to dst (either may be a peer's
// memory). bytes must be a multiple of 16.
void enqueue_sm_copy(void* dst, const void* src, std::size_t bytes, int blocks,
                     const cuda::stream& stream);

// Loads this file's kernels on `device` (once per device and process). Since CUDA 12.2 a kernel
// is loaded at its first launch, and loading may wait for the device to go idle: behind a
// spinning kernel that wait lasts until the spin gives up. nvbandwidth loads its kernels first
// for the same reason.
void load_copy_kernels(int device);

// Copies of `bytes` per timed iteration: enough that events resolve the time well, at most 16
// (nvbandwidth's default loop count).
inline std::size_t copies_per_iteration(std::size_t bytes) {
  const std::size_t wanted = (std::size_t{256} << 20) / bytes;
  return wanted < 1 ? 1 : (wanted > 16 ? 16 : wanted);
}

// A flag in pinned, mapped host memory that spin kernels wait on.
class release_flag {
 public:
  release_flag();
  void arm();                            // set to 0: spin kernels launched now will wait
  void release();                        // set to 1: every waiting spin kernel ends
  [[nodiscard]] bool timed_out() const;  // whether a spin kernel gave up waiting
  [[nodiscard]] int* device_flag() const { return words_.as<int>(); }
  [[nodiscard]] int* device_timeout() const { return words_.as<int>() + 1; }

 private:
  cuda::mapped_host_memory words_;  // [0] the flag, [1] set by a spin kernel that gave up
};

// Work to time on one stream: `enqueue` queues it there (the stream's device is current).
struct held_work {
  const cuda::stream* stream = nullptr;
  std::function<void()> enqueue;
};

// Launches a spin kernel on every stream, records a start event, queues each stream's work,
// records a stop event, then releases all streams at once. Returns each stream's seconds between
// its events. Throws api_error on a CUDA failure, and std::runtime_error if a spin kernel gave up
// before the work was queued (the timing would include the host's queueing).
// `on_released` runs right after the release, while the work is in flight (to sample NVML).
std::vector<double> time_held(std::vector<held_work>& work, release_flag& flag,
                              const std::function<void()>& on_released = {});

}  // namespace gpubench::kernels
