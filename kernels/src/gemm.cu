#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "gpubench/core/errors.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/cuda_libraries.hpp"
#include "gpubench/kernels/copy.cuh"
#include "gpubench/kernels/gemm.cuh"

namespace gpubench::kernels {

namespace {

void check_lt(cublasStatus_t status, const char* call, source_site where = source_site::current()) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    const auto& lt = cuda::cublaslt();
    throw api_error("cuBLASLt", call, lt.cublasLtGetStatusName(status),
                    lt.cublasLtGetStatusString(status), where);
  }
}
#define GPUBENCH_LT_CHECK(expr) check_lt((expr), #expr)

// cuBLASLt objects, destroyed through the loaded library (which outlives them: it stays loaded).
struct lt_handle_deleter {
  void operator()(cublasLtHandle_t handle) const noexcept {
    (void)cuda::cublaslt().cublasLtDestroy(handle);
  }
};
struct lt_matmul_deleter {
  void operator()(cublasLtMatmulDesc_t desc) const noexcept {
    (void)cuda::cublaslt().cublasLtMatmulDescDestroy(desc);
  }
};
struct lt_layout_deleter {
  void operator()(cublasLtMatrixLayout_t layout) const noexcept {
    (void)cuda::cublaslt().cublasLtMatrixLayoutDestroy(layout);
  }
};
struct lt_preference_deleter {
  void operator()(cublasLtMatmulPreference_t preference) const noexcept {
    (void)cuda::cublaslt().cublasLtMatmulPreferenceDestroy(preference);
  }
};

struct type_set {
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  std::size_t cd_bytes;
  double tolerance;  // of |D - ref| relative to sqrt(sum (a_k b_k)^2); see docs/methodology.md
  // Block-scaled inputs (gemm_dtype_traits::scale_block > 0): cuBLASLt's scale mode for A and B,
  // and the byte that encodes a scale of 1.
  cublasLtMatmulMatrixScale_t scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  unsigned char unit_scale = 0;
};

type_set types_of(gemm_dtype dtype) {
  switch (dtype) {
    case gemm_dtype::fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 1e-2};
    case gemm_dtype::bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 3e-2};
    case gemm_dtype::tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 1e-2};
    case gemm_dtype::fp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 1e-4};
    case gemm_dtype::fp8:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 3e-2};
    case gemm_dtype::mxfp8:  // e8m0 scale: 2^(byte - 127)
      return {CUDA_R_8F_E4M3,
              CUDA_R_16BF,
              CUBLAS_COMPUTE_32F,
              2,
              3e-2,
              CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
              0x7f};
    case gemm_dtype::nvfp4:  // ue4m3 scale: 0 0111 000 is 1.0
      return {CUDA_R_4F_E2M1,
              CUDA_R_16BF,
              CUBLAS_COMPUTE_32F,
              2,
              3e-2,
              CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
              0x38};
  }
  throw std::invalid_argument("unknown gemm dtype");
}

const gemm_dtype_traits& traits_of(gemm_dtype dtype) {
  return gemm_dtype_table.at(static_cast<std::size_t>(dtype));
}

// One scale per block of elements along K, the table says, rather than one per tensor.
bool block_scaled(gemm_dtype dtype) {
  return traits_of(dtype).scale_block > 0;
}

// Bytes of a matrix of `elements` in `dtype` (nvfp4 packs two per byte).
std::size_t storage_bytes(gemm_dtype dtype, std::size_t elements) {
  return static_cast<std::size_t>(
      std::ceil(static_cast<double>(elements) * traits_of(dtype).element_bytes));
}

// cuBLASLt's block-scale tensor for an operand with `inner` elements along K and `outer` rows:
// scales are tiled in 128-row by 4-block atoms, so both counts are padded to whole atoms (cuBLAS
// documentation, "1D Block Scaling Factors Layout").
std::size_t scale_tensor_bytes(std::int64_t inner, std::int64_t outer, int block) {
  const auto round_up = [](std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; };
  return static_cast<std::size_t>(round_up(inner, 4 * std::int64_t{block}) / block *
                                  round_up(outer, 128));
}

// FP4 e2m1, two codes per byte (the first element in the low nibble), as CUDA_R_4F_E2M1 stores.
struct fp4_pair {
  unsigned char bits;
};

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

// Element `index` of a matrix stored as T (fp4_pair: two per byte).
template <class T>
__device__ double load(const T* data, std::int64_t index) {
  return to_double(data[index]);
}
template <>
__device__ double load<fp4_pair>(const fp4_pair* data, std::int64_t index) {
  const unsigned byte = data[index / 2].bits;
  const unsigned code = (index % 2 == 0 ? byte : byte >> 4) & 0xfu;
  // e2m1: sign, two exponent bits (bias 1), one mantissa bit; exponent 0 is subnormal (0, 0.5).
  constexpr double magnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 0x8u) != 0 ? -magnitude[code & 0x7u] : magnitude[code & 0x7u];
}

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = from_float<T>(uniform_pm1(i, seed));
  }
}

// FP4 has 16 codes, all finite: each element a random code (values 0, +-0.5 .. +-6), two per byte.
template <>
__global__ void fill_uniform_kernel<fp4_pair>(fp4_pair* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i].bits = static_cast<unsigned char>(pattern_word(i, seed) & 0xffu);
  }
}

// Where element (row, k) of op(A) and (k, col) of op(B) are stored, in elements.
struct operand_strides {
  std::int64_t a_row, a_k, b_k, b_col;
};

// One block per sample: D(i, j) against sum_k op(A)(i, k) * op(B)(k, j) in float64.
template <class AB, class D>
__global__ void reference_kernel(const AB* a, const AB* b, const D* d, std::int64_t m,
                                 std::int64_t n, std::int64_t k, operand_strides st,
                                 std::uint32_t seed,
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
    const double p = load(a, i * st.a_row + kk * st.a_k) * load(b, kk * st.b_k + j * st.b_col);
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

// Counts the elements of `result` that differ from `reference` bit for bit: cuBLAS gives the
// same bits every run for the same algorithm, inputs and GPU, so any difference is a fault.
// 16-byte vectors; the bytes past the last whole vector, element by element.
__global__ void count_mismatches_kernel(const unsigned char* result, const unsigned char* reference,
                                        std::size_t bytes, int element_bytes,
                                        unsigned long long* mismatches) {
  const auto* r = reinterpret_cast<const uint4*>(result);
  const auto* e = reinterpret_cast<const uint4*>(reference);
  const std::size_t vectors = bytes / 16;
  unsigned long long bad = 0;
  const auto count_word = [element_bytes](unsigned difference) -> unsigned {
    if (element_bytes == 4) return difference != 0 ? 1u : 0u;
    return ((difference & 0xffffu) != 0 ? 1u : 0u) + ((difference >> 16) != 0 ? 1u : 0u);
  };
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 x = r[i];
    const uint4 y = e[i];
    bad += count_word(x.x ^ y.x) + count_word(x.y ^ y.y) + count_word(x.z ^ y.z) +
           count_word(x.w ^ y.w);
  }
  if (blockIdx.x == 0) {
    const std::size_t tail_elements =
        (bytes - vectors * 16) / static_cast<std::size_t>(element_bytes);
    for (std::size_t t = threadIdx.x; t < tail_elements; t += blockDim.x) {
      const std::size_t at = vectors * 16 + t * static_cast<std::size_t>(element_bytes);
      bool differs = false;
      for (int b = 0; b < element_bytes; ++b) differs |= result[at + b] != reference[at + b];
      bad += differs ? 1 : 0;
    }
  }
  if (bad != 0) atomicAdd(mismatches, bad);
}

template <class T>
void fill(void* p, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  fill_uniform_kernel<T><<<1024, 256, 0, stream>>>(static_cast<T*>(p), n, seed);
}

template <class AB, class D>
void reference(const void* a, const void* b, const void* d, std::int64_t m, std::int64_t n,
               std::int64_t k, operand_strides st, int samples, std::uint32_t seed, double* out,
               cudaStream_t stream) {
  reference_kernel<AB, D>
      <<<samples, 256, 0, stream>>>(static_cast<const AB*>(a), static_cast<const AB*>(b),
                                    static_cast<const D*>(d), m, n, k, st, seed, out);
}

bool a_transposed(gemm_layout layout) {
  return layout == gemm_layout::tn;
}

bool b_transposed(gemm_layout layout) {
  return layout == gemm_layout::nt;
}

}  // namespace

gemm_dtype parse_gemm_dtype(const std::string& name) {
  for (std::size_t i = 0; i < gemm_dtypes.size(); ++i) {
    if (name == gemm_dtypes[i]) return static_cast<gemm_dtype>(i);
  }
  throw std::invalid_argument("unknown dtype '" + name + "' (" + gemm_dtype_list() + ")");
}

gemm_layout parse_gemm_layout(const std::string& name) {
  for (std::size_t i = 0; i < gemm_layouts.size(); ++i) {
    if (name == gemm_layouts[i]) return static_cast<gemm_layout>(i);
  }
  throw std::invalid_argument("unknown layout '" + name + "' (TN, NN, NT)");
}

const char* gemm_layout_name(gemm_layout layout) {
  return gemm_layouts.at(static_cast<std::size_t>(layout)).data();  // literals: NUL-terminated
}

std::string gemm_layout_description(gemm_layout layout) {
  return std::string(gemm_layout_name(layout)) + ": A stored " +
         (a_transposed(layout) ? "KxM" : "MxK") + ", B " + (b_transposed(layout) ? "NxK" : "KxN") +
         ", D MxN, column-major";
}

const char* gemm_dtype_name(gemm_dtype dtype) {
  // Every entry of gemm_dtypes is a literal, so data() ends in a NUL.
  return gemm_dtypes.at(static_cast<std::size_t>(dtype)).data();
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
    case gemm_dtype::mxfp8:
      return "A,B fp8 e4m3 with an e8m0 scale per 32 along K (all 1); D bf16; accumulate fp32";
    case gemm_dtype::nvfp4:
      return "A,B fp4 e2m1 with an e4m3 scale per 16 along K (all 1); D bf16; accumulate fp32";
  }
  return "?";
}

int gemm_min_compute_capability(gemm_dtype dtype) {
  return traits_of(dtype).min_compute_capability;
}

int compute_capability(int device) {
  int major = 0;
  int minor = 0;
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

void require_gemm_dtype(gemm_dtype dtype, int device) {
  const int capability = compute_capability(device);
  const int needed = gemm_min_compute_capability(dtype);
  if (capability < needed) {
    throw skip_case(std::string(gemm_dtype_name(dtype)) + " needs compute capability " +
                    std::to_string(needed / 10) + "." + std::to_string(needed % 10) + "; GPU " +
                    std::to_string(device) + " has " + std::to_string(capability / 10) + "." +
                    std::to_string(capability % 10));
  }
}

struct lt_gemm::impl {
  gemm_dtype dtype{};
  type_set types{};
  std::int64_t m = 0, n = 0, k = 0;
  std::uint32_t seed = 0;
  gemm_layout layout{};
  cuda::device_handle<cublasLtHandle_t, lt_handle_deleter> handle;
  cuda::device_handle<cublasLtMatmulDesc_t, lt_matmul_deleter> op;
  cuda::device_handle<cublasLtMatrixLayout_t, lt_layout_deleter> a_layout, b_layout, d_layout;
  cuda::device_handle<cublasLtMatmulPreference_t, lt_preference_deleter> preference;
  cublasLtMatmulAlgo_t algo{};
  bool have_algo = false;
  cuda::device_buffer a, b, d, workspace;
  cuda::device_buffer a_scale, b_scale;  // block-scaled types only
  float alpha = 1.0f;
  float beta = 0.0f;

  // cuBLASLt launches on the stream's device only while that device is current.
  void run(const cublasLtMatmulAlgo_t& with, void* out, const cuda::stream& stream) {
    const cuda::device_scope scope(stream.device());
    GPUBENCH_LT_CHECK(cuda::cublaslt().cublasLtMatmul(
        handle.get(), op.get(), &alpha, a.get(), a_layout.get(), b.get(), b_layout.get(), &beta,
        out, d_layout.get(), out, d_layout.get(), &with, workspace.get(), workspace.size(),
        stream.get()));
  }
};

lt_gemm::lt_gemm(const cuda::stream& stream, gemm_dtype dtype, std::int64_t m, std::int64_t n,
                 std::int64_t k, std::size_t workspace_bytes, std::uint32_t seed,
                 gemm_layout layout)
    : stream_(stream),
      impl_(std::make_unique<impl>()),
      m_(static_cast<double>(m)),
      n_(static_cast<double>(n)),
      k_(static_cast<double>(k)) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("gemm: M, N and K must be positive");
  if (dtype == gemm_dtype::fp8 && layout != gemm_layout::tn &&
      compute_capability(stream.device()) < 100) {
    throw skip_case("fp8 below compute capability 10.0: cuBLASLt multiplies FP8 in TN only");
  }
  if (block_scaled(dtype)) {
    // Scales run along K for both operands, so both are stored K-major (TN), and cuBLASLt wants
    // whole 16-byte rows of packed elements.
    if (layout != gemm_layout::tn) {
      throw skip_case(std::string(gemm_dtype_name(dtype)) +
                      ": cuBLASLt multiplies block-scaled types in TN only");
    }
    if (m % 32 != 0 || n % 32 != 0 || k % 32 != 0) {
      throw skip_case(std::string(gemm_dtype_name(dtype)) + " needs M, N and K multiples of 32");
    }
  }
  const auto& lt = cuda::cublaslt();  // skip_case, naming what is missing, before any allocation
  impl& s = *impl_;
  const int device = stream.device();
  s.dtype = dtype;
  s.types = types_of(dtype);
  s.m = m;
  s.n = n;
  s.k = k;
  s.seed = seed;
  s.layout = layout;
  const auto um = static_cast<std::size_t>(m);
  const auto un = static_cast<std::size_t>(n);
  const auto uk = static_cast<std::size_t>(k);
  s.a = cuda::device_buffer(device, storage_bytes(dtype, uk * um));
  s.b = cuda::device_buffer(device, storage_bytes(dtype, uk * un));
  s.d = cuda::device_buffer(device, um * un * s.types.cd_bytes);
  s.workspace = cuda::device_buffer(device, workspace_bytes);
  const cuda::device_scope scope(device);
  cudaStream_t st = stream.get();
  switch (dtype) {
    case gemm_dtype::fp16:
      fill<__half>(s.a.get(), uk * um, seed, st);
      fill<__half>(s.b.get(), uk * un, seed + 1, st);
      break;
    case gemm_dtype::bf16:
      fill<__nv_bfloat16>(s.a.get(), uk * um, seed, st);
      fill<__nv_bfloat16>(s.b.get(), uk * un, seed + 1, st);
      break;
    case gemm_dtype::tf32:
    case gemm_dtype::fp32:
      fill<float>(s.a.get(), uk * um, seed, st);
      fill<float>(s.b.get(), uk * un, seed + 1, st);
      break;
    case gemm_dtype::fp8:
    case gemm_dtype::mxfp8:
      fill<__nv_fp8_e4m3>(s.a.get(), uk * um, seed, st);
      fill<__nv_fp8_e4m3>(s.b.get(), uk * un, seed + 1, st);
      break;
    case gemm_dtype::nvfp4:
      fill<fp4_pair>(s.a.get(), s.a.size(), seed, st);
      fill<fp4_pair>(s.b.get(), s.b.size(), seed + 1, st);
      break;
  }
  if (block_scaled(s.dtype)) {
    // Every scale 1: D is then the plain product of the stored elements, which the reference
    // recomputes; the tensor cores still read and apply every scale.
    const int block = traits_of(dtype).scale_block;
    s.a_scale = cuda::device_buffer(device, scale_tensor_bytes(k, m, block));
    s.b_scale = cuda::device_buffer(device, scale_tensor_bytes(k, n, block));
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(s.a_scale.get(), s.types.unit_scale, s.a_scale.size(), st));
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(s.b_scale.get(), s.types.unit_scale, s.b_scale.size(), st));
  }
  GPUBENCH_CUDA_CHECK(cudaGetLastError());
  cuda::enqueue_zero(s.d, stream);
  stream.synchronize();

  cublasLtHandle_t handle = nullptr;
  GPUBENCH_LT_CHECK(lt.cublasLtCreate(&handle));
  s.handle = {device, handle};
  cublasLtMatmulDesc_t op = nullptr;
  GPUBENCH_LT_CHECK(lt.cublasLtMatmulDescCreate(&op, s.types.compute, CUDA_R_32F));
  s.op = {device, op};
  const cublasOperation_t op_a = a_transposed(layout) ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = b_transposed(layout) ? CUBLAS_OP_T : CUBLAS_OP_N;
  GPUBENCH_LT_CHECK(
      lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  GPUBENCH_LT_CHECK(
      lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  if (block_scaled(s.dtype)) {
    const cublasLtMatmulMatrixScale_t mode = s.types.scale_mode;
    const void* a_scale = s.a_scale.get();
    const void* b_scale = s.b_scale.get();
    GPUBENCH_LT_CHECK(lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                                                        &mode, sizeof mode));
    GPUBENCH_LT_CHECK(lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                                        &mode, sizeof mode));
    GPUBENCH_LT_CHECK(lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                        &a_scale, sizeof a_scale));
    GPUBENCH_LT_CHECK(lt.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                        &b_scale, sizeof b_scale));
  }
  const auto make_layout = [&](cudaDataType_t type, std::int64_t rows, std::int64_t cols) {
    cublasLtMatrixLayout_t layout = nullptr;
    GPUBENCH_LT_CHECK(lt.cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                                    static_cast<std::uint64_t>(cols), rows));
    return cuda::device_handle<cublasLtMatrixLayout_t, lt_layout_deleter>(device, layout);
  };
  s.a_layout = a_transposed(layout) ? make_layout(s.types.ab, k, m) : make_layout(s.types.ab, m, k);
  s.b_layout = b_transposed(layout) ? make_layout(s.types.ab, n, k) : make_layout(s.types.ab, k, n);
  s.d_layout = make_layout(s.types.cd, m, n);
  cublasLtMatmulPreference_t preference = nullptr;
  GPUBENCH_LT_CHECK(lt.cublasLtMatmulPreferenceCreate(&preference));
  s.preference = {device, preference};
  const std::uint64_t workspace_limit = workspace_bytes;
  GPUBENCH_LT_CHECK(
      lt.cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                              &workspace_limit, sizeof workspace_limit));
}

lt_gemm::~lt_gemm() = default;

std::size_t lt_gemm::d_bytes() const noexcept {
  return impl_->d.size();
}

std::size_t lt_gemm::d_elements() const noexcept {
  return impl_->d.size() / impl_->types.cd_bytes;
}

namespace {
// Median of three timings of `runs` back-to-back multiplies with `algo`, seconds per multiply.
double median_seconds(lt_gemm::impl& s, const cuda::stream& stream,
                      const cublasLtMatmulAlgo_t& algo, int runs) {
  const cuda::event start(stream.device());
  const cuda::event stop(stream.device());
  std::vector<double> timings;
  for (int t = 0; t < 3; ++t) {
    start.record(stream);
    for (int r = 0; r < runs; ++r) s.run(algo, s.d.get(), stream);
    stop.record(stream);
    timings.push_back(cuda::elapsed_seconds(start, stop) / runs);
  }
  std::sort(timings.begin(), timings.end());
  return timings[1];
}
}  // namespace

gemm_tuning lt_gemm::autotune(int candidates, double warmup_s) {
  const cuda::device_scope scope(stream_.device());  // the heuristic asks the handle's device
  impl& s = *impl_;
  const auto& lt = cuda::cublaslt();
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(candidates));
  int returned = 0;
  GPUBENCH_LT_CHECK(lt.cublasLtMatmulAlgoGetHeuristic(
      s.handle.get(), s.op.get(), s.a_layout.get(), s.b_layout.get(), s.d_layout.get(),
      s.d_layout.get(), s.preference.get(), candidates, results.data(), &returned));
  results.resize(static_cast<std::size_t>(std::max(returned, 0)));
  results.erase(std::remove_if(results.begin(), results.end(),
                               [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; }),
                results.end());
  if (results.empty()) {
    throw std::runtime_error(std::string("cuBLASLt offers no algorithm for ") +
                             gemm_dtype_name(s.dtype) + " at this shape");
  }
  gemm_tuning tuning;
  // A cold GPU (low clocks, kernels not loaded yet) would make the first candidates look slow:
  // load it with the heuristic's first choice until warmup_s has passed on the GPU.
  const cuda::event start(stream_.device());
  const cuda::event stop(stream_.device());
  int batch = 1;
  while (tuning.warmup_s < warmup_s) {
    start.record(stream_);
    for (int r = 0; r < batch; ++r) s.run(results.front().algo, s.d.get(), stream_);
    stop.record(stream_);
    tuning.warmup_s += cuda::elapsed_seconds(start, stop);
    batch = std::min(batch * 2, 1024);
  }
  // How many multiplies make a timing of at least ~2 ms (events resolve ~0.5 us), per candidate;
  // 0 for one the GPU refused (the heuristic offered it: not ours to use).
  std::vector<int> runs(results.size(), 0);
  for (std::size_t c = 0; c < results.size(); ++c) {
    try {
      runs[c] = static_cast<int>(std::clamp(
          std::ceil(2e-3 / median_seconds(s, stream_, results[c].algo, 1)), 1.0, 1000.0));
      ++tuning.candidates_timed;
    } catch (const api_error&) {
      ++tuning.candidates_failed;
    }
  }
  constexpr int rounds = 5;
  std::vector<std::vector<double>> seconds(results.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t c = 0; c < results.size(); ++c) {
      if (runs[c] == 0) continue;
      start.record(stream_);
      for (int r = 0; r < runs[c]; ++r) s.run(results[c].algo, s.d.get(), stream_);
      stop.record(stream_);
      seconds[c].push_back(cuda::elapsed_seconds(start, stop) / runs[c]);
    }
  }
  // The heuristic's own first choice (what frameworks run) stands unless another candidate is
  // clearly faster: on a power-capped GPU the clock swings by a few per cent between timings, and
  // a smaller win than that is noise (docs/methodology.md, GEMM).
  constexpr double clear_win = 0.97;
  for (std::size_t c = 0; c < results.size(); ++c) {
    if (runs[c] == 0) continue;
    std::sort(seconds[c].begin(), seconds[c].end());
    const double typical = seconds[c][seconds[c].size() / 2];
    if (!s.have_algo || typical < clear_win * tuning.seconds_per_multiply) {
      tuning.seconds_per_multiply = typical;
      tuning.chosen_rank = static_cast<int>(c);
      s.algo = results[c].algo;
      s.have_algo = true;
    }
  }
  if (!s.have_algo) throw std::runtime_error("cuBLASLt: no heuristic candidate could run");
  return tuning;
}

void lt_gemm::enqueue() {
  enqueue_into(impl_->d.get());
}

void lt_gemm::enqueue_into(void* d) {
  if (!impl_->have_algo) throw std::logic_error("lt_gemm::enqueue before autotune");
  impl_->run(impl_->algo, d, stream_);
}

void lt_gemm::enqueue_compare(const void* result, unsigned long long* mismatches) {
  const cuda::device_scope scope(stream_.device());
  count_mismatches_kernel<<<1024, 256, 0, stream_.get()>>>(
      static_cast<const unsigned char*>(result), impl_->d.as<unsigned char>(), impl_->d.size(),
      static_cast<int>(impl_->types.cd_bytes), mismatches);
  GPUBENCH_CUDA_CHECK(cudaGetLastError());
}

gemm_check lt_gemm::check(int samples) {
  impl& s = *impl_;
  const int device = stream_.device();
  cudaStream_t stream = stream_.get();
  cuda::device_buffer out(device, sizeof(double) * 3 * static_cast<std::size_t>(samples));
  const cuda::device_scope scope(device);
  const std::uint32_t sample_seed = s.seed ^ 0x5eedu;
  const operand_strides st{a_transposed(s.layout) ? s.k : 1, a_transposed(s.layout) ? 1 : s.m,
                           b_transposed(s.layout) ? s.n : 1, b_transposed(s.layout) ? 1 : s.k};
  switch (s.dtype) {
    case gemm_dtype::fp16:
      reference<__half, __half>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, st, samples,
                                sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::bf16:
      reference<__nv_bfloat16, __nv_bfloat16>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, st,
                                              samples, sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::tf32:
    case gemm_dtype::fp32:
      reference<float, float>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, st, samples,
                              sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::fp8:
    case gemm_dtype::mxfp8:
      reference<__nv_fp8_e4m3, __nv_bfloat16>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, st,
                                              samples, sample_seed, out.as<double>(), stream);
      break;
    case gemm_dtype::nvfp4:
      reference<fp4_pair, __nv_bfloat16>(s.a.get(), s.b.get(), s.d.get(), s.m, s.n, s.k, st,
                                         samples, sample_seed, out.as<double>(), stream);
      break;
  }
  GPUBENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<double> host(3 * static_cast<std::size_t>(samples));
  GPUBENCH_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), out.get(), out.size(), cudaMemcpyDeviceToHost, stream));
  stream_.synchronize();
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
