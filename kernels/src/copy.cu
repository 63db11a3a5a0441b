#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "gpubench/harness/cuda.hpp"
#include "gpubench/kernels/copy.cuh"

namespace gpubench::kernels {

namespace {

constexpr int pattern_blocks = 1024;
constexpr int pattern_threads = 256;
constexpr unsigned long long spin_timeout_ns = 10'000'000'000ULL;  // 10 s to queue the copies

__global__ void fill_pattern_kernel(std::uint32_t* data, std::size_t words, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = pattern_word(i, seed);
  }
}

__global__ void check_pattern_kernel(const std::uint32_t* data, std::size_t words,
                                     std::uint32_t seed, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    bad += data[i] != pattern_word(i, seed);
  }
  if (bad != 0) atomicAdd(wrong, bad);
}

__global__ void fill_float_kernel(float* data, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = value;
  }
}

__global__ void count_not_equal_kernel(const float* data, std::size_t n, float value,
                                       unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    bad += data[i] != value;
  }
  if (bad != 0) atomicAdd(wrong, bad);
}

__global__ void sm_copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src,
                               std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[i] = src[i];
  }
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds its stream until the host sets *flag, or gives up after timeout_ns and says so.
__global__ void spin_kernel(const volatile int* flag, volatile int* timed_out,
                            unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      break;
    }
  }
}

}  // namespace

void enqueue_fill_pattern(std::uint32_t* data, std::size_t words, std::uint32_t seed,
                          const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  fill_pattern_kernel<<<pattern_blocks, pattern_threads, 0, stream.get()>>>(data, words, seed);
}

void enqueue_check_pattern(const std::uint32_t* data, std::size_t words, std::uint32_t seed,
                           unsigned long long* wrong, const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  check_pattern_kernel<<<pattern_blocks, pattern_threads, 0, stream.get()>>>(data, words, seed,
                                                                             wrong);
}

void enqueue_fill_float(float* data, std::size_t n, float value, const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  fill_float_kernel<<<pattern_blocks, pattern_threads, 0, stream.get()>>>(data, n, value);
}

void enqueue_count_not_equal(const float* data, std::size_t n, float value,
                             unsigned long long* wrong, const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  count_not_equal_kernel<<<pattern_blocks, pattern_threads, 0, stream.get()>>>(data, n, value,
                                                                               wrong);
}

void fill_pattern_host(std::uint32_t* data, std::size_t words, std::uint32_t seed) {
  for (std::size_t i = 0; i < words; ++i) data[i] = pattern_word(i, seed);
}

std::size_t check_pattern_host(const std::uint32_t* data, std::size_t words, std::uint32_t seed) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < words; ++i) wrong += data[i] != pattern_word(i, seed);
  return wrong;
}

void enqueue_sm_copy(void* dst, const void* src, std::size_t bytes, int blocks,
                     const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  sm_copy_kernel<<<blocks, 512, 0, stream.get()>>>(static_cast<uint4*>(dst),
                                                   static_cast<const uint4*>(src), bytes / 16);
}

void load_copy_kernels(int device) {
  static std::mutex mutex;
  static std::set<int> loaded;  // guarded by mutex
  const std::lock_guard lock(mutex);
  if (loaded.count(device) != 0) return;
  const cuda::device_scope scope(device);
  cudaFuncAttributes attributes{};
  for (const void* kernel : {reinterpret_cast<const void*>(&fill_pattern_kernel),
                             reinterpret_cast<const void*>(&check_pattern_kernel),
                             reinterpret_cast<const void*>(&fill_float_kernel),
                             reinterpret_cast<const void*>(&count_not_equal_kernel),
                             reinterpret_cast<const void*>(&sm_copy_kernel),
                             reinterpret_cast<const void*>(&spin_kernel)}) {
    GPUBENCH_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  }
  loaded.insert(device);
}

release_flag::release_flag() : words_(2 * sizeof(int)) {
  arm();
}

// Device code reads these through mapped memory; sequentially consistent host stores make them
// visible in order. (std::atomic_ref is C++20; device files build as C++17.)
void release_flag::arm() {
  __atomic_store_n(device_flag(), 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(device_timeout(), 0, __ATOMIC_SEQ_CST);
}

void release_flag::release() {
  __atomic_store_n(device_flag(), 1, __ATOMIC_SEQ_CST);
}

bool release_flag::timed_out() const {
  return __atomic_load_n(device_timeout(), __ATOMIC_SEQ_CST) != 0;
}

std::vector<double> time_held(std::vector<held_work>& work, release_flag& flag,
                              const std::function<void()>& on_released) {
  struct event_pair {
    cuda::event start;
    cuda::event stop;
  };
  for (const auto& w : work) load_copy_kernels(w.stream->device());
  std::vector<event_pair> events;
  events.reserve(work.size());
  flag.arm();
  try {
    for (auto& w : work) {
      const cuda::stream& stream = *w.stream;
      const cuda::device_scope scope(stream.device());
      events.push_back({cuda::event(stream.device()), cuda::event(stream.device())});
      spin_kernel<<<1, 1, 0, stream.get()>>>(flag.device_flag(), flag.device_timeout(),
                                             spin_timeout_ns);
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      events.back().start.record(stream);
      w.enqueue();
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      events.back().stop.record(stream);
    }
  } catch (...) {
    flag.release();  // never leave a spinning kernel behind
    throw;
  }
  flag.release();
  if (on_released) on_released();
  std::vector<double> seconds;
  seconds.reserve(events.size());
  for (const auto& pair : events) seconds.push_back(cuda::elapsed_seconds(pair.start, pair.stop));
  if (flag.timed_out()) {
    throw std::runtime_error(
        "a spin kernel stopped waiting before the copies were queued; the timing is not valid");
  }
  return seconds;
}

}  // namespace gpubench::kernels
