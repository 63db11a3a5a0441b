// Minimal kernels for launch-overhead measurement. Host-callable: benchmarks include this from
// plain C++ files.
#pragma once

#include <cuda_runtime_api.h>

namespace gpubench::kernels {

// Enqueues one launch of a one-thread kernel that adds 1 to *counter, so a check can prove that
// every launch ran. Does not check the launch: call cudaGetLastError() after a batch. The raw
// stream, and no device switch of its own, because the launch is what is timed: the caller holds
// a cuda::device_scope for the stream's device around the batch.
void enqueue_counter_kernel(unsigned long long* counter, cudaStream_t stream);

}  // namespace gpubench::kernels
