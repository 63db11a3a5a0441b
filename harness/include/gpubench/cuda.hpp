// CUDA helpers for benchmarks (only in builds with CUDA): error checks that throw api_error with
// the call, file:line and CUDA's error name, and RAII owners for device resources.
#pragma once

#include "gpubench/config.hpp"

#if GPUBENCH_HAVE_CUDA
#include <cstddef>
#include "gpubench/errors.hpp"

#include <cuda_runtime_api.h>

namespace gpubench::cuda {

// Throws api_error when status is not cudaSuccess.
void check(cudaError_t status, const char* call, source_site where = source_site::current());

// Frees on destruction; move-only.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes);
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer();

  [[nodiscard]] void* get() const noexcept { return ptr_; }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class stream {
 public:
  stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  ~stream();
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class event {
 public:
  event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event();
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Seconds between two recorded events (after synchronizing on the later one).
[[nodiscard]] double elapsed_seconds(const event& start, const event& stop);

}  // namespace gpubench::cuda

#define GPUBENCH_CUDA_CHECK(expr) ::gpubench::cuda::check((expr), #expr)

#endif  // GPUBENCH_HAVE_CUDA
