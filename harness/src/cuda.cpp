#include "gpubench/cuda.hpp"

#if GPUBENCH_HAVE_CUDA
#include <utility>

#include "gpubench/errors.hpp"
#include "gpubench/gpu_memory.hpp"

namespace gpubench::cuda {

void check(cudaError_t status, const char* call, source_site where) {
  if (status != cudaSuccess) {
    throw api_error("CUDA", call, cudaGetErrorName(status), cudaGetErrorString(status), where);
  }
}

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes) {
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status == cudaErrorMemoryAllocation) {
    // Not sticky: clear it, and skip the case with what the GPU had (the runner records the
    // skip and the suite goes on).
    (void)cudaGetLastError();
    int device = -1;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    (void)cudaGetDevice(&device);
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    throw skip_case(gpu_memory_shortage(
        device, free_bytes, total_bytes,
        "a buffer of " + std::to_string(bytes) + " bytes (cudaMalloc: cudaErrorMemoryAllocation)"));
  }
  GPUBENCH_CUDA_CHECK(status);
}

device_buffer::device_buffer(device_buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) {
      cudaFree(ptr_);
    }
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

device_buffer::~device_buffer() {
  if (ptr_ != nullptr) {
    cudaFree(ptr_);  // destructors do not throw; a failed free leaks at worst
  }
}

stream::stream() {
  GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}
stream::~stream() {
  cudaStreamDestroy(stream_);
}

event::event() {
  GPUBENCH_CUDA_CHECK(cudaEventCreate(&event_));
}
event::~event() {
  cudaEventDestroy(event_);
}

double elapsed_seconds(const event& start, const event& stop) {
  GPUBENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  GPUBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) / 1e3;
}

}  // namespace gpubench::cuda
#endif  // GPUBENCH_HAVE_CUDA
