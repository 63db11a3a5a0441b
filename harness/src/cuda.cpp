#include "gpubench/harness/cuda.hpp"

#if GPUBENCH_HAVE_CUDA
#include <mutex>
#include <string>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/gpu_memory.hpp"

namespace gpubench::cuda {

namespace {
std::mutex audit_mutex;
std::vector<std::uint64_t> audit_streams;  // guarded by audit_mutex

void count_stream(int device) {
  const std::lock_guard lock(audit_mutex);
  if (device < 0) return;
  if (audit_streams.size() <= static_cast<std::size_t>(device)) {
    audit_streams.resize(static_cast<std::size_t>(device) + 1, 0);
  }
  ++audit_streams[static_cast<std::size_t>(device)];
}
}  // namespace

void check(cudaError_t status, const char* call, source_site where) {
  if (status != cudaSuccess) {
    throw api_error("CUDA", call, cudaGetErrorName(status), cudaGetErrorString(status), where);
  }
}

device_scope::device_scope(int device) {
  GPUBENCH_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
}

device_scope::~device_scope() {
  int now = previous_;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) {
    (void)cudaSetDevice(previous_);  // destructors do not throw; the next check reports it
  }
}

void require_same_device(const char* what, int expected, int used) {
  if (expected != used) {
    throw std::logic_error(std::string(what) + ": a resource of GPU " + std::to_string(used) +
                           " used with one of GPU " + std::to_string(expected));
  }
}

namespace detail {
void stream_deleter::operator()(cudaStream_t stream) const noexcept {
  (void)cudaStreamDestroy(stream);
}
void event_deleter::operator()(cudaEvent_t event) const noexcept {
  (void)cudaEventDestroy(event);
}
void memory_deleter::operator()(void* memory) const noexcept {
  (void)cudaFree(memory);  // a failed free leaks at worst
}
void host_registration_deleter::operator()(void* memory) const noexcept {
  (void)cudaHostUnregister(memory);
}
void host_memory_deleter::operator()(void* memory) const noexcept {
  (void)cudaFreeHost(memory);
}
}  // namespace detail

stream::stream(int device) {
  const device_scope scope(device);
  cudaStream_t created = nullptr;
  GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
  handle_ = {device, created};
#if CUDART_VERSION >= 12080
  int actual = -1;
  GPUBENCH_CUDA_CHECK(cudaStreamGetDevice(created, &actual));
  require_same_device("cuda::stream", device, actual);
#endif
  count_stream(device);
}

void stream::synchronize() const {
  GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(get()));
}

event::event(int device) {
  const device_scope scope(device);
  cudaEvent_t created = nullptr;
  GPUBENCH_CUDA_CHECK(cudaEventCreate(&created));
  handle_ = {device, created};
}

void event::record(const stream& on) const {
  require_same_device("cuda::event::record", device(), on.device());
  GPUBENCH_CUDA_CHECK(cudaEventRecord(get(), on.get()));
}

double elapsed_seconds(const event& start, const event& stop) {
  require_same_device("cuda::elapsed_seconds", start.device(), stop.device());
  GPUBENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  GPUBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) / 1e3;
}

device_buffer::device_buffer(int device, std::size_t bytes) : bytes_(bytes) {
  const device_scope scope(device);
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, bytes);
  if (status == cudaErrorMemoryAllocation) {
    // Not sticky: clear it, and skip the case with what the GPU had (the runner records the
    // skip and the suite goes on).
    (void)cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    throw skip_case(gpu_memory_shortage(
        device, free_bytes, total_bytes,
        "a buffer of " + format_bytes(bytes) + " (cudaMalloc: cudaErrorMemoryAllocation)"));
  }
  GPUBENCH_CUDA_CHECK(status);
  memory_ = {device, memory};
}

void enqueue_zero(const device_buffer& buffer, const stream& on) {
  require_same_device("cuda::enqueue_zero", on.device(), buffer.device());
  const device_scope scope(on.device());
  GPUBENCH_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, buffer.size(), on.get()));
}

host_registration::host_registration(void* memory, std::size_t bytes) {
  GPUBENCH_CUDA_CHECK(cudaHostRegister(memory, bytes, cudaHostRegisterPortable));
  memory_ = {-1, memory};
}

mapped_host_memory::mapped_host_memory(std::size_t bytes) {
  void* memory = nullptr;
  GPUBENCH_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  memory_ = {-1, memory};
}

std::vector<std::uint64_t> streams_created_by_device() {
  const std::lock_guard lock(audit_mutex);
  return audit_streams;
}

}  // namespace gpubench::cuda
#endif  // GPUBENCH_HAVE_CUDA
