// Device-memory bandwidth kernels (BabelStream's set) over float64 arrays, moved as 16-byte
// vectors (double2). As in BabelStream, the grid covers the array (no grid-stride loop); each
// thread issues `stream_unroll` independent 16-byte loads per input before its first store, so
// enough bytes are in flight to saturate HBM. Host-callable from plain C++.
#pragma once

#include <cstddef>

#include "gpubench/harness/cuda.hpp"

namespace gpubench::kernels {

enum class stream_op { copy, scale, add, triad, read, write };

// Initial values, the scalar, and what hbm.write stores. Every op writes an array it does not
// read, so repeated passes leave exact, known values; and every value an op writes differs from
// the initial value of the array it writes, so an element an op skipped is seen
// (docs/methodology.md).
inline constexpr double stream_init_a = 1.0;
inline constexpr double stream_init_b = 2.0;
inline constexpr double stream_init_c = 0.25;
inline constexpr double stream_scalar = 3.0;
inline constexpr double stream_write_value = 5.0;

inline constexpr int stream_block_size = 256;
inline constexpr int stream_unroll = 4;

struct stream_arrays {
  double* a;
  double* b;
  double* c;
  double* partial_sums;  // one per block of the grid, for `read`
  std::size_t elements;  // a multiple of 2 (one double2)
};

// Blocks of the grid that covers `elements` (the size partial_sums needs).
[[nodiscard]] int stream_grid_blocks(std::size_t elements);

// Sets a, b, c to their initial values.
void enqueue_stream_init(const stream_arrays& arrays, const cuda::stream& stream);
// One pass of `op` over the arrays.
void enqueue_stream_op(stream_op op, const stream_arrays& arrays, const cuda::stream& stream);
// Counts elements of a, b, c that differ from the values `op` leaves, into *wrong (device).
void enqueue_stream_check(stream_op op, const stream_arrays& arrays, unsigned long long* wrong,
                          const cuda::stream& stream);
// The value every element of a, b, c holds after passes of `op` from the initial values.
struct stream_expected {
  double a;
  double b;
  double c;
};
[[nodiscard]] constexpr stream_expected stream_values_after(stream_op op) {
  stream_expected e{stream_init_a, stream_init_b, stream_init_c};
  switch (op) {
    case stream_op::copy:
      e.c = stream_init_a;
      break;
    case stream_op::scale:
      e.b = stream_scalar * stream_init_c;
      break;
    case stream_op::add:
      e.c = stream_init_a + stream_init_b;
      break;
    case stream_op::triad:
      e.a = stream_init_b + stream_scalar * stream_init_c;
      break;
    case stream_op::read:
      break;
    case stream_op::write:
      e.c = stream_write_value;
      break;
  }
  return e;
}

}  // namespace gpubench::kernels
