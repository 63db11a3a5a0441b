// One cuBLASLt matrix multiply, D = A^T B in the "TN" layout every dtype supports (FP8 requires
// it): A stored K x M, B stored K x N, D M x N, all column-major. Random inputs, the fastest of
// cuBLASLt's heuristic candidates (autotuned on this GPU), and a sampled check of D against a
// float64 reference computed on the GPU from the same inputs. Shared by `gemm` and `gpu.burn`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

namespace gpubench::kernels {

enum class gemm_dtype { fp16, bf16, tf32, fp32, fp8 };

// "fp16" -> gemm_dtype::fp16; throws std::invalid_argument for an unknown name.
[[nodiscard]] gemm_dtype parse_gemm_dtype(const std::string& name);
[[nodiscard]] const char* gemm_dtype_name(gemm_dtype dtype);
// Human-readable types: "A,B fp16; D fp16; accumulate fp32".
[[nodiscard]] std::string gemm_dtype_description(gemm_dtype dtype);
// Compute capability needed (fp8: 8.9), as major*10+minor.
[[nodiscard]] int gemm_min_compute_capability(gemm_dtype dtype);

struct gemm_check {
  int samples = 0;
  int wrong = 0;
  double worst_error = 0;  // |D - reference| / sqrt(sum_k (a_k b_k)^2), the worst sample
  double tolerance = 0;
};

class lt_gemm {
 public:
  // Allocates and fills A and B on `device` (current device is set), creates the cuBLASLt
  // descriptors. workspace_bytes: at least 32 MiB is what cuBLASLt's fastest kernels use.
  lt_gemm(int device, gemm_dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
          std::size_t workspace_bytes, std::uint32_t seed);
  lt_gemm(const lt_gemm&) = delete;
  lt_gemm& operator=(const lt_gemm&) = delete;
  ~lt_gemm();

  // Times up to `candidates` heuristic algorithms and keeps the fastest; returns its seconds
  // per multiply. Throws when cuBLASLt offers none for this shape and dtype.
  double autotune(int candidates, cudaStream_t stream);
  // Queues one multiply with the chosen algorithm.
  void enqueue(cudaStream_t stream);
  // Compares `samples` elements of D with the float64 reference.
  [[nodiscard]] gemm_check check(int samples, cudaStream_t stream);

  [[nodiscard]] double flops() const noexcept { return 2.0 * m_ * n_ * k_; }
  [[nodiscard]] int algorithms_tried() const noexcept { return algorithms_tried_; }

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  double m_, n_, k_;
  int algorithms_tried_ = 0;
};

}  // namespace gpubench::kernels
