#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "gpubench/cuda.hpp"
#include "gpubench/errors.hpp"
#include "kernels/copy.cuh"
#include "kernels/gemm.cuh"

namespace gpubench::kernels {

namespace {

void check_lt(cublasStatus_t status, const char* call, source_site where = source_site::current()) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw api_error("cuBLASLt", call, cublasLtGetStatusName(status),
                    cublasLtGetStatusString(status), where);
  }
}
#define GPUBENCH_LT_CHECK(expr) check_lt((expr), #expr)

struct type_set {
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  std::size_t ab_bytes;
  std::size_t cd_bytes;
  double tolerance;  // of |D - ref| relative to sqrt(sum (a_k b_k)^2); see docs/methodology.md
};

type_set types_of(gemm_dtype dtype) {
  switch (dtype) {
    case gemm_dtype::fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 1e-2};
    case gemm_dtype::bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 3e-2};
    case gemm_dtype::tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 1e-2};
    case gemm_dtype::fp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 1e-4};
    case gemm_dtype::fp8:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 3e-2};
  }
  throw std::invalid_argument("unknown gemm dtype");
}

__device__ float uniform_pm1(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>(pattern_word(index, seed)) * (2.0f / 4294967296.0f) - 1.0f;
}

template <class T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float x) {
  return __nv_fp8_e4m3(x);
}

template <class T>
__device__ double to_double(T x) {
  return static_cast<double>(static_cast<float>(x));
}

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = from_float<T>(uniform_pm1(i, seed));
  }
}

// One block per sample: D(i, j) against sum_k A[k + i*K] * B[k + j*K] in float64.
template <class AB, class D>
__global__ void reference_kernel(const AB* a, const AB* b, const D* d, std::int64_t m,
                                 std::int64_t n, std::int64_t k, std::uint32_t seed,
                                 double* out /* 3 per sample: got, ref, scale^2 */) {
  const std::uint64_t s = blockIdx.x;
  const std::int64_t i =
      static_cast<std::int64_t>(pattern_word(2 * s, seed) % static_cast<std::uint64_t>(m));
  const std::int64_t j =
      static_cast<std::int64_t>(pattern_word(2 * s + 1, seed) % static_cast<std::uint64_t>(n));
  __shared__ double sums[2][256];
  double sum = 0;
  double squares = 0;
  for (std::int64_t kk = threadIdx.x; kk < k; kk += blockDim.x) {
    const double p = to_double(a[kk + i * k]) * to_double(b[kk + j * k]);
    sum += p;
    squares += p * p;
  }
  sums[0][threadIdx.x] = sum;
  sums[1][threadIdx.x] = squares;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      sums[0][threadIdx.x] += sums[0][threadIdx.x + stride];
      sums[1][threadIdx.x] += sums[1][threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[3 * s] = to_double(d[i + j * m]);
    out[3 * s + 1] = sums[0][0];
    out[3 * s + 2] = sums[1][0];
  }
}

template <class T>
void fill(void* p, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  fill_uniform_kernel<T><<<1024, 256, 0, stream>>>(static_cast<T*>(p), n, seed);
}

template <class AB, class D>
void reference(const void* a, const void* b, const void* d, std::int64_t m, std::int64_t n,
               std::int64_t k, int samples, std::uint32_t seed, double* out, cudaStream_t stream) {
  reference_kernel<AB, D>
      <<<samples, 256, 0, stream>>>(static_cast<const AB*>(a), static_cast<const AB*>(b),
                                    static_cast<const D*>(d), m, n, k, seed, out);
}

}  // namespace

gemm_dtype parse_gemm_dtype(const std::string& name) {
  for (gemm_dtype d :
       {gemm_dtype::fp16, gemm_dtype::bf16, gemm_dtype::tf32, gemm_dtype::fp32, gemm_dtype::fp8}) {
    if (name == gemm_dtype_name(d)) return d;
  }
  throw std::invalid_argument("unknown dtype '" + name + "' (fp16, bf16, tf32, fp32, fp8)");
}

const char* gemm_dtype_name(gemm_dtype dtype) {
  switch (dtype) {
    case gemm_dtype::fp16:
      return "fp16";
    case gemm_dtype::bf16:
      return "bf16";
    case gemm_dtype::tf32:
      return "tf32";
    case gemm_dtype::fp32:
      return "fp32";
    case gemm_dtype::fp8:
      return "fp8";
  }
  return "?";
}

std::string gemm_dtype_description(gemm_dtype dtype) {
  switch (dtype) {
    case gemm_dtype::fp16:
      return "A,B,D fp16; accumulate fp32";
    case gemm_dtype::bf16:
      return "A,B,D bf16; accumulate fp32";
    case gemm_dtype::tf32:
      return "A,B,D fp32 stored, tf32 tensor-core math; accumulate fp32";
    case gemm_dtype::fp32:
      return "A,B,D fp32; fp32 math (no tensor cores)";
    case gemm_dtype::fp8:
      return "A,B fp8 e4m3; D bf16; accumulate fp32";
  }
  return "?";
}

int gemm_min_compute_capability(gemm_dtype dtype) {
  return dtype == gemm_dtype::fp8                                   ? 89
         : (dtype == gemm_dtype::bf16 || dtype == gemm_dtype::tf32) ? 80
                                                                    : 70;
}

struct lt_gemm::impl {
  int device = 0;
  gemm_dtype dtype{};
  type_set types{};
  std::int64_t m = 0, n = 0, k = 0;
  std::uint32_t seed = 0;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool have_algo = false;
  cuda::device_buffer a, b, d, workspace;
  float alpha = 1.0f;
  float beta = 0.0f;

  ~impl() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (op) cublasLtMatmulDescDestroy(op);
    if (handle) cublasLtDestroy(handle);
  }

  void run(const cublasLtMatmulAlgo_t& with, cudaStream_t stream) {
    GPUBENCH_LT_CHECK(cublasLtMatmul(handle, op, &alpha, a.get(), a_layout, b.get(), b_layout,
                                     &beta, d.get(), d_layout, d.get(), d_layout, &with,
                                     workspace.get(), workspace.size(), stream));
  }
};

lt_gemm::lt_gemm(int device, gemm_dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::size_t workspace_bytes, std::uint32_t seed)
    : impl_(std::make_unique<impl>()),
      m_(static_cast<double>(m)),
      n_(static_cast<double>(n)),
      k_(static_cast<double>(k)) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("gemm: M, N and K must be positive");
  impl& s = *impl_;
  s.device = device;
  s.dtype = dtype;
  s.types = types_of(dtype);
  s.m = m;
  s.n = n;
  s.k = k;
  s.seed = seed;
  GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
  const auto um = static_cast<std::size_t>(m);
  const auto un = static_cast<std::size_t>(n);
  const auto uk = static_cast<std::size_t>(k);
  s.a = cuda::device_buffer(uk * um * s.types.ab_bytes);
  s.b = cuda::device_buffer(uk * un * s.types.ab_bytes);
  s.d = cuda::device_buffer(um * un * s.types.cd_bytes);
  s.workspace = cuda::device_buffer(workspace_bytes);
  switch (dtype) {
    case gemm_dtype::fp16:
      fill<__half>(s.a.get(), uk * um, seed, nullptr);
      fill<__half>(s.b.get(), uk * un, seed + 1, nullptr);
      break;
    case gemm_dtype::bf16:
      fill<__nv_bfloat16>(s.a.get(), uk * um, seed, nullptr);
      fill<__nv_bfloat16>(s.b.get(), uk * un, seed + 1, nullptr);
      break;
    case gemm_dtype::tf32:
    case gemm_dtype::fp32:
      fill<float>(s.a.get(), uk * um, seed, nullptr);
      fill<float>(s.b.get(), uk * un, seed + 1, nullptr);
      break;
    case gemm_dtype::fp8:
      fill<__nv_fp8_e4m3>(s.a.get(), uk * um, seed, nullptr);
      fill<__nv_fp8_e4m3>(s.b.get(), uk * un, seed + 1, nullptr);
      break;
  }
  GPUBENCH_CUDA_CHECK(cudaGetLastError());
  GPUBENCH_CUDA_CHECK(cudaMemset(s.d.get(), 0, s.d.size()));
  GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());

  GPUBENCH_LT_CHECK(cublasLtCreate(&s.handle));
  GPUBENCH_LT_CHECK(cublasLtMatmulDescCreate(&s.op, s.types.compute, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t no_transpose = CUBLAS_OP_N;
  GPUBENCH_LT_CHECK(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                                   sizeof transpose));
  GPUBENCH_LT_CHECK(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSB, &no_transpose,
                                                   sizeof no_transpose));
  GPUBENCH_LT_CHECK(cublasLtMatrixLayoutCreate(
      &s.a_layout, s.types.ab, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(m), k));
  GPUBENCH_LT_CHECK(cublasLtMatrixLayoutCreate(
      &s.b_layout, s.types.ab, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n), k));
  GPUBENCH_LT_CHECK(cublasLtMatrixLayoutCreate(
      &s.d_layout, s.types.cd, static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(n), m));
  GPUBENCH_LT_CHECK(cublasLtMatmulPreferenceCreate(&s.preference));
  const std::uint64_t workspace_limit = workspace_bytes;
  GPUBENCH_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(s.preference,
                                                         CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &workspace_limit, sizeof workspace_limit));
}

lt_gemm::~lt_gemm() = default;

double lt_gemm::autotune(int candidates, cudaStream_t stream) {
  impl& s = *impl_;
  GPUBENCH_CUDA_CHECK(cudaSetDevice(s.device));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(candidates));
  int returned = 0;
  GPUBENCH_LT_CHECK(cublasLtMatmulAlgoGetHeuristic(s.handle, s.op, s.a_layout, s.b_layout,
                                                   s.d_layout, s.d_layout, s.preference, candidates,
                                                   results.data(), &returned));
  if (returned == 0) {
    throw std::runtime_error(std::string("cuBLASLt offers no algorithm for ") +
                             gemm_dtype_name(s.dtype) + " at this shape");
  }
  cuda::event start;
  cuda::event stop;
  double best = 0;
  algorithms_tried_ = 0;
  for (int i = 0; i < returned; ++i) {
    if (results[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
    const auto& algo = results[static_cast<std::size_t>(i)].algo;
    s.run(algo, stream);  // warm-up
    constexpr int timed_runs = 3;
    GPUBENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int r = 0; r < timed_runs; ++r) s.run(algo, stream);
    GPUBENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    const double seconds = cuda::elapsed_seconds(start, stop) / timed_runs;
    ++algorithms_tried_;
    if (!s.have_algo || seconds < best) {
      best = seconds;
      s.algo = algo;
      s.have_algo = true;
    }
  }
  if (!s.have_algo) throw std::runtime_error("cuBLASLt: no heuristic candidate could run");
  return best;
}

void lt_gemm::enqueue(cudaStream_t stream) {
  if (!impl_->have_algo) throw std::logic_error("lt_gemm::enqueue before autotune");
  impl_->run(impl_->algo, stream);
}

gemm_check lt_gemm::check(int samples, cudaStream_t stream) {
  impl& s = *impl_;
  GPUBENCH_CUDA_CHECK(cudaSetDevice(s.device));
  cuda::device_buffer out(sizeof(double) * 3 * static_cast<std::size_t>(samples));
  const std::uint32_t sample_seed = s.seed ^ 0x5eedu;
  switch (s.dtype) {
    case gemm_dtype::fp16:
      reference<__half, __half>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, samples,
                                sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::bf16:
      reference<__nv_bfloat16, __nv_bfloat16>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k,
                                              samples, sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::tf32:
    case gemm_dtype::fp32:
      reference<float, float>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, samples, sample_seed,
                              out.as<double>(), stream);
      break;
    case gemm_dtype::fp8:
      reference<__nv_fp8_e4m3, __nv_bfloat16>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k,
                                              samples, sample_seed, out.as<double>(), stream);
      break;
  }
  GPUBENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<double> host(3 * static_cast<std::size_t>(samples));
  GPUBENCH_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), out.get(), out.size(), cudaMemcpyDeviceToHost, stream));
  GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  gemm_check result;
  result.samples = samples;
  result.tolerance = s.types.tolerance;
  for (int i = 0; i < samples; ++i) {
    const double got = host[3 * static_cast<std::size_t>(i)];
    const double ref = host[3 * static_cast<std::size_t>(i) + 1];
    const double scale = std::sqrt(host[3 * static_cast<std::size_t>(i) + 2]) + 1e-30;
    const double error = std::isfinite(got) ? std::abs(got - ref) / scale : INFINITY;
    result.worst_error = std::max(result.worst_error, error);
    if (!(error <= result.tolerance)) ++result.wrong;
  }
  return result;
}

}  // namespace gpubench::kernels
