#include <cstdint>

#include "gpubench/kernels/stream.cuh"

namespace gpubench::kernels {

namespace {

constexpr std::size_t elements_per_block = std::size_t{stream_block_size} * stream_unroll;

__global__ void init_kernel(double2* a, double2* b, double2* c, std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    a[i] = make_double2(stream_init_a, stream_init_a);
    b[i] = make_double2(stream_init_b, stream_init_b);
    c[i] = make_double2(stream_init_c, stream_init_c);
  }
}

struct copy_op {
  __device__ double2 operator()(double2 x, double2 /*y*/) const { return x; }
};
struct scale_op {
  __device__ double2 operator()(double2 x, double2 /*y*/) const {
    return make_double2(stream_scalar * x.x, stream_scalar * x.y);
  }
};
struct add_op {
  __device__ double2 operator()(double2 x, double2 y) const {
    return make_double2(x.x + y.x, x.y + y.y);
  }
};
struct triad_op {
  __device__ double2 operator()(double2 x, double2 y) const {
    return make_double2(x.x + stream_scalar * y.x, x.y + stream_scalar * y.y);
  }
};
struct write_op {
  __device__ double2 operator()(double2 /*x*/, double2 /*y*/) const {
    return make_double2(stream_write_value, stream_write_value);
  }
};

// out = op(x, y) over the block's stream_unroll x stream_block_size elements: every load of the
// thread is issued before its first store.
template <int Inputs, class Op>
__global__ void __launch_bounds__(stream_block_size)
    stream_kernel(const double2* __restrict__ x, const double2* __restrict__ y,
                  double2* __restrict__ out, std::size_t n2, Op op) {
  const std::size_t first = blockIdx.x * elements_per_block + threadIdx.x;
  double2 xs[stream_unroll] = {};
  double2 ys[stream_unroll] = {};
#pragma unroll
  for (int u = 0; u < stream_unroll; ++u) {
    const std::size_t i = first + std::size_t{stream_block_size} * u;
    if (i < n2) {
      if constexpr (Inputs >= 1) xs[u] = x[i];
      if constexpr (Inputs >= 2) ys[u] = y[i];
    }
  }
#pragma unroll
  for (int u = 0; u < stream_unroll; ++u) {
    const std::size_t i = first + std::size_t{stream_block_size} * u;
    if (i < n2) out[i] = op(xs[u], ys[u]);
  }
}

// Reads a; one partial sum per block (written once, so the bytes written are negligible).
__global__ void __launch_bounds__(stream_block_size)
    read_kernel(const double2* __restrict__ a, double* partial_sums, std::size_t n2) {
  __shared__ double block_sums[stream_block_size];
  const std::size_t first = blockIdx.x * elements_per_block + threadIdx.x;
  double2 v[stream_unroll] = {};
#pragma unroll
  for (int u = 0; u < stream_unroll; ++u) {
    const std::size_t i = first + std::size_t{stream_block_size} * u;
    if (i < n2) v[u] = a[i];
  }
  double sum = 0;
#pragma unroll
  for (int u = 0; u < stream_unroll; ++u) sum += v[u].x + v[u].y;
  block_sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) block_sums[threadIdx.x] += block_sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = block_sums[0];
}

__global__ void check_kernel(const double* a, const double* b, const double* c, std::size_t n,
                             double expect_a, double expect_b, double expect_c,
                             unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    bad += (a[i] != expect_a) + (b[i] != expect_b) + (c[i] != expect_c);
  }
  if (bad != 0) atomicAdd(wrong, bad);
}

constexpr int fill_blocks = 1024;  // initialisation and checks are untimed: any grid will do

}  // namespace

int stream_grid_blocks(std::size_t elements) {
  const std::size_t n2 = elements / 2;
  return static_cast<int>((n2 + elements_per_block - 1) / elements_per_block);
}

void enqueue_stream_init(const stream_arrays& s, const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  init_kernel<<<fill_blocks, stream_block_size, 0, stream.get()>>>(
      reinterpret_cast<double2*>(s.a), reinterpret_cast<double2*>(s.b),
      reinterpret_cast<double2*>(s.c), s.elements / 2);
}

void enqueue_stream_op(stream_op op, const stream_arrays& s, const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  auto* a = reinterpret_cast<double2*>(s.a);
  auto* b = reinterpret_cast<double2*>(s.b);
  auto* c = reinterpret_cast<double2*>(s.c);
  const std::size_t n2 = s.elements / 2;
  const int blocks = stream_grid_blocks(s.elements);
  cudaStream_t st = stream.get();
  switch (op) {
    case stream_op::copy:
      stream_kernel<1><<<blocks, stream_block_size, 0, st>>>(a, nullptr, c, n2, copy_op{});
      break;
    case stream_op::scale:
      stream_kernel<1><<<blocks, stream_block_size, 0, st>>>(c, nullptr, b, n2, scale_op{});
      break;
    case stream_op::add:
      stream_kernel<2><<<blocks, stream_block_size, 0, st>>>(a, b, c, n2, add_op{});
      break;
    case stream_op::triad:
      stream_kernel<2><<<blocks, stream_block_size, 0, st>>>(b, c, a, n2, triad_op{});
      break;
    case stream_op::read:
      read_kernel<<<blocks, stream_block_size, 0, st>>>(a, s.partial_sums, n2);
      break;
    case stream_op::write:
      stream_kernel<0><<<blocks, stream_block_size, 0, st>>>(nullptr, nullptr, c, n2, write_op{});
      break;
  }
}

void enqueue_stream_check(stream_op op, const stream_arrays& s, unsigned long long* wrong,
                          const cuda::stream& stream) {
  const cuda::device_scope scope(stream.device());
  const stream_expected e = stream_values_after(op);
  check_kernel<<<fill_blocks, stream_block_size, 0, stream.get()>>>(s.a, s.b, s.c, s.elements, e.a,
                                                                    e.b, e.c, wrong);
}

}  // namespace gpubench::kernels
