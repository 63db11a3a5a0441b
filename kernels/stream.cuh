// Device-memory bandwidth kernels (BabelStream's set) over float64 arrays, moved as 16-byte
// vectors (double2). Host-callable from plain C++.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace gpubench::kernels {

enum class stream_op { copy, scale, add, triad, read, write };

// Initial values and the scalar; every op writes an array it does not read, so repeated runs
// leave exact, known values (docs/methodology.md).
inline constexpr double stream_init_a = 1.0;
inline constexpr double stream_init_b = 2.0;
inline constexpr double stream_init_c = 3.0;
inline constexpr double stream_scalar = 3.0;

struct stream_arrays {
  double* a;
  double* b;
  double* c;
  double* partial_sums;  // one per block, for `read`
  std::size_t elements;  // a multiple of 2 (one double2)
};

// Sets a, b, c to their initial values.
void enqueue_stream_init(const stream_arrays& arrays, int blocks, cudaStream_t stream);
// One pass of `op` over the arrays with `blocks` blocks of stream_block_size threads.
void enqueue_stream_op(stream_op op, const stream_arrays& arrays, int blocks, cudaStream_t stream);
inline constexpr int stream_block_size = 256;

// Counts elements of a, b, c that differ from the values `op` leaves, into *wrong (device).
void enqueue_stream_check(stream_op op, const stream_arrays& arrays, unsigned long long* wrong,
                          int blocks, cudaStream_t stream);

}  // namespace gpubench::kernels
