#include "kernels/stream.cuh"

namespace gpubench::kernels {

namespace {

__global__ void init_kernel(double2* a, double2* b, double2* c, std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    a[i] = make_double2(stream_init_a, stream_init_a);
    b[i] = make_double2(stream_init_b, stream_init_b);
    c[i] = make_double2(stream_init_c, stream_init_c);
  }
}

__global__ void copy_kernel(const double2* __restrict__ a, double2* __restrict__ c,
                            std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    c[i] = a[i];
  }
}

__global__ void scale_kernel(const double2* __restrict__ c, double2* __restrict__ b,
                             std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double2 v = c[i];
    b[i] = make_double2(stream_scalar * v.x, stream_scalar * v.y);
  }
}

__global__ void add_kernel(const double2* __restrict__ a, const double2* __restrict__ b,
                           double2* __restrict__ c, std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double2 x = a[i];
    const double2 y = b[i];
    c[i] = make_double2(x.x + y.x, x.y + y.y);
  }
}

__global__ void triad_kernel(const double2* __restrict__ b, const double2* __restrict__ c,
                             double2* __restrict__ a, std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double2 x = b[i];
    const double2 y = c[i];
    a[i] = make_double2(x.x + stream_scalar * y.x, x.y + stream_scalar * y.y);
  }
}

// Reads a; one partial sum per block (written once, so the bytes written are negligible).
__global__ void read_kernel(const double2* __restrict__ a, double* partial_sums, std::size_t n2) {
  __shared__ double block_sums[stream_block_size];
  double sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double2 v = a[i];
    sum += v.x + v.y;
  }
  block_sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) block_sums[threadIdx.x] += block_sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = block_sums[0];
}

// Writes c with its initial value (unchanged, so every op stays checkable).
__global__ void write_kernel(double2* __restrict__ c, std::size_t n2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n2;
       i += std::size_t{gridDim.x} * blockDim.x) {
    c[i] = make_double2(stream_init_c, stream_init_c);
  }
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

}  // namespace

void enqueue_stream_init(const stream_arrays& s, int blocks, cudaStream_t stream) {
  init_kernel<<<blocks, stream_block_size, 0, stream>>>(
      reinterpret_cast<double2*>(s.a), reinterpret_cast<double2*>(s.b),
      reinterpret_cast<double2*>(s.c), s.elements / 2);
}

void enqueue_stream_op(stream_op op, const stream_arrays& s, int blocks, cudaStream_t stream) {
  auto* a = reinterpret_cast<double2*>(s.a);
  auto* b = reinterpret_cast<double2*>(s.b);
  auto* c = reinterpret_cast<double2*>(s.c);
  const std::size_t n2 = s.elements / 2;
  switch (op) {
    case stream_op::copy:
      copy_kernel<<<blocks, stream_block_size, 0, stream>>>(a, c, n2);
      break;
    case stream_op::scale:
      scale_kernel<<<blocks, stream_block_size, 0, stream>>>(c, b, n2);
      break;
    case stream_op::add:
      add_kernel<<<blocks, stream_block_size, 0, stream>>>(a, b, c, n2);
      break;
    case stream_op::triad:
      triad_kernel<<<blocks, stream_block_size, 0, stream>>>(b, c, a, n2);
      break;
    case stream_op::read:
      read_kernel<<<blocks, stream_block_size, 0, stream>>>(a, s.partial_sums, n2);
      break;
    case stream_op::write:
      write_kernel<<<blocks, stream_block_size, 0, stream>>>(c, n2);
      break;
  }
}

void enqueue_stream_check(stream_op op, const stream_arrays& s, unsigned long long* wrong,
                          int blocks, cudaStream_t stream) {
  double ea = stream_init_a;
  double eb = stream_init_b;
  double ec = stream_init_c;
  if (op == stream_op::copy) ec = stream_init_a;
  if (op == stream_op::scale) eb = stream_scalar * stream_init_c;
  if (op == stream_op::add) ec = stream_init_a + stream_init_b;
  if (op == stream_op::triad) ea = stream_init_b + stream_scalar * stream_init_c;
  check_kernel<<<blocks, stream_block_size, 0, stream>>>(s.a, s.b, s.c, s.elements, ea, eb, ec,
                                                         wrong);
}

}  // namespace gpubench::kernels
