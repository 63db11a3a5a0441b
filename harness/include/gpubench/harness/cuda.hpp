// CUDA owners for benchmarks (only in builds with CUDA). Every resource is bound to the device it
// was made on: a stream, an event or a buffer names its device when it is built (there is no
// default device to fall back on), work queued through them runs on that device whatever device
// is current, and an event recorded on another device's stream throws at once. Errors throw
// api_error with the call, file:line and CUDA's error name.
#pragma once

#include "gpubench/core/config.hpp"

#if GPUBENCH_HAVE_CUDA
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "gpubench/core/errors.hpp"

#include <cuda_runtime_api.h>

namespace gpubench::cuda {

// Throws api_error when status is not cudaSuccess.
void check(cudaError_t status, const char* call, source_site where = source_site::current());

// Makes `device` current while it lives and puts back the device that was current before, so a
// helper that switches GPUs leaves its caller's device as it was.
class [[nodiscard]] device_scope {
 public:
  explicit device_scope(int device);
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;
  device_scope(device_scope&&) = delete;
  device_scope& operator=(device_scope&&) = delete;
  ~device_scope();

 private:
  int previous_ = 0;
};

// Throws std::logic_error when a resource of device `used` is used with one of `expected`.
void require_same_device(const char* what, int expected, int used);

// One owned handle of the CUDA family (a stream, an event, memory, a cuBLASLt or NCCL handle),
// with the device it belongs to (-1: every device, such as a portable host registration).
// Move-only; Deleter runs once, on the handle alone, and must not throw.
template <class Handle, class Deleter>
class device_handle {
  static_assert(std::is_pointer_v<Handle>, "CUDA-family handles are pointers");

 public:
  device_handle() noexcept = default;
  device_handle(int device, Handle handle) noexcept : device_(device), handle_(handle) {}

  [[nodiscard]] Handle get() const noexcept { return handle_.get(); }
  [[nodiscard]] int device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  // Gives up ownership (for a teardown other than Deleter's, such as ncclCommAbort).
  [[nodiscard]] Handle release() noexcept { return handle_.release(); }

 private:
  int device_ = -1;
  std::unique_ptr<std::remove_pointer_t<Handle>, Deleter> handle_;
};

namespace detail {
struct stream_deleter {
  void operator()(cudaStream_t stream) const noexcept;
};
struct event_deleter {
  void operator()(cudaEvent_t event) const noexcept;
};
struct memory_deleter {
  void operator()(void* memory) const noexcept;
};
struct host_registration_deleter {
  void operator()(void* memory) const noexcept;
};
struct host_memory_deleter {
  void operator()(void* memory) const noexcept;
};
}  // namespace detail

// A non-blocking stream on one device.
class stream {
 public:
  explicit stream(int device);

  [[nodiscard]] cudaStream_t get() const noexcept { return handle_.get(); }
  [[nodiscard]] int device() const noexcept { return handle_.device(); }
  void synchronize() const;

 private:
  device_handle<cudaStream_t, detail::stream_deleter> handle_;
};

// A timing event on one device.
class event {
 public:
  explicit event(int device);

  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_.get(); }
  [[nodiscard]] int device() const noexcept { return handle_.device(); }
  // Records on `on`, which must belong to the same device (std::logic_error otherwise).
  void record(const stream& on) const;

 private:
  device_handle<cudaEvent_t, detail::event_deleter> handle_;
};

// Seconds between two recorded events of one device (after synchronizing on the later one).
[[nodiscard]] double elapsed_seconds(const event& start, const event& stop);

// Device memory, freed on destruction. A failed allocation for want of memory is a skip_case
// naming the GPU's free memory (the runner records the case as skipped).
class device_buffer {
 public:
  device_buffer() = default;  // empty, until a buffer is moved in
  device_buffer(int device, std::size_t bytes);

  [[nodiscard]] void* get() const noexcept { return memory_.get(); }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(memory_.get());
  }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  [[nodiscard]] int device() const noexcept { return memory_.device(); }

 private:
  device_handle<void*, detail::memory_deleter> memory_;
  std::size_t bytes_ = 0;
};

// Queues the zeroing of every byte of `buffer` on `on`, a stream of the buffer's own device
// (std::logic_error otherwise): ordered with the stream's other work, unlike a cudaMemset on the
// legacy stream, which a non-blocking stream does not wait for.
void enqueue_zero(const device_buffer& buffer, const stream& on);

// Host memory page-locked for copies to and from every device (cudaHostRegister, portable) for
// the registration's lifetime. The memory itself stays its owner's.
class host_registration {
 public:
  host_registration(void* memory, std::size_t bytes);

 private:
  device_handle<void*, detail::host_registration_deleter> memory_;
};

// Page-locked host memory mapped into every device's address space (cudaHostAlloc, mapped and
// portable): with unified addressing, device code reads it at the host pointer.
class mapped_host_memory {
 public:
  explicit mapped_host_memory(std::size_t bytes);

  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(memory_.get());
  }

 private:
  device_handle<void*, detail::host_memory_deleter> memory_;
};

// Streams made so far on each device (index: device ordinal), counted where the runtime confirms
// the stream's device (CUDA 12.8+ checks it at creation and throws on a mismatch). The GPU test
// tier compares these counts before and after a case to see which devices the case used.
[[nodiscard]] std::vector<std::uint64_t> streams_created_by_device();

}  // namespace gpubench::cuda

#define GPUBENCH_CUDA_CHECK(expr) ::gpubench::cuda::check((expr), #expr)

#endif  // GPUBENCH_HAVE_CUDA
