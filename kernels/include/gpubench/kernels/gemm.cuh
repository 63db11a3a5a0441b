// One cuBLASLt matrix multiply D = op(A) op(B), column-major, in one of cuBLAS's transpose
// layouts: "TN" (A stored K x M, B K x N; every dtype, and the only one FP8 below Blackwell and the
// block-scaled types allow), "NN" (A M x K,
// B K x N: what a row-major framework's a @ b becomes) or "NT" (A M x K, B N x K). D is M x N.
// Random inputs, the fastest of cuBLASLt's heuristic candidates (autotuned on a warm GPU), and a
// sampled check of D against a float64 reference computed on the GPU from the same inputs. All work
// goes to the stream it is built with. Shared by `gemm` and `gpu.burn`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpubench/core/precision.hpp"
#include "gpubench/harness/cuda.hpp"

namespace gpubench::kernels {

// In the order of gpubench::gemm_dtypes, whose names these are.
enum class gemm_dtype { fp16, bf16, tf32, fp32, fp8, mxfp8, nvfp4 };
static_assert(static_cast<std::size_t>(gemm_dtype::nvfp4) + 1 == gemm_dtypes.size());

// "fp16" -> gemm_dtype::fp16; throws std::invalid_argument for an unknown name.
[[nodiscard]] gemm_dtype parse_gemm_dtype(const std::string& name);
[[nodiscard]] const char* gemm_dtype_name(gemm_dtype dtype);
// Human-readable types: "A,B fp16; D fp16; accumulate fp32".
[[nodiscard]] std::string gemm_dtype_description(gemm_dtype dtype);
// Compute capability needed (fp8: 8.9; mxfp8, nvfp4: 10.0), as major*10+minor.
[[nodiscard]] int gemm_min_compute_capability(gemm_dtype dtype);
// The compute capability of `device`, as major*10+minor.
[[nodiscard]] int compute_capability(int device);
// Throws skip_case when `device` has no tensor-core path for `dtype` ("fp8 needs compute
// capability 8.9; GPU 0 has 8.0").
void require_gemm_dtype(gemm_dtype dtype, int device);

// In the order of gpubench::gemm_layouts, whose names these are.
enum class gemm_layout { tn, nn, nt };
static_assert(static_cast<std::size_t>(gemm_layout::nt) + 1 == gemm_layouts.size());
// "NN" -> gemm_layout::nn; throws std::invalid_argument for an unknown name.
[[nodiscard]] gemm_layout parse_gemm_layout(const std::string& name);
[[nodiscard]] const char* gemm_layout_name(gemm_layout layout);
// "TN: A stored KxM, B KxN, D MxN, column-major"
[[nodiscard]] std::string gemm_layout_description(gemm_layout layout);

struct gemm_check {
  int samples = 0;
  int wrong = 0;
  double worst_error = 0;  // |D - reference| / sqrt(sum_k (a_k b_k)^2), the worst sample
  double tolerance = 0;
};

// What autotuning found.
struct gemm_tuning {
  double seconds_per_multiply = 0;  // the chosen candidate's median
  int candidates_timed = 0;
  int candidates_failed = 0;  // offered by the heuristic but refused to run
  double warmup_s = 0;        // how long the GPU was loaded before the first candidate was timed
  int chosen_rank = 0;        // the chosen candidate's place in the heuristic's order, from 0
};

class lt_gemm {
 public:
  // Allocates and fills A and B on the stream's device and creates the cuBLASLt descriptors.
  // workspace_bytes: at least 32 MiB is what cuBLASLt's fastest kernels use. Throws skip_case
  // when cuBLASLt cannot be loaded or the GPU lacks the memory.
  // Throws skip_case for a layout the dtype does not allow (FP8 other than TN).
  lt_gemm(const cuda::stream& stream, gemm_dtype dtype, std::int64_t m, std::int64_t n,
          std::int64_t k, std::size_t workspace_bytes, std::uint32_t seed,
          gemm_layout layout = gemm_layout::tn);
  lt_gemm(const lt_gemm&) = delete;
  lt_gemm& operator=(const lt_gemm&) = delete;
  ~lt_gemm();

  // Loads the GPU for `warmup_s` (clocks ramp up, kernels load), then times each of up to
  // `candidates` heuristic algorithms for at least ~2 ms, in rounds that take every candidate in
  // turn (a power-capped GPU's clock swings, so each sees the same mix of clocks), and keeps the
  // one with the lowest median. Throws when cuBLASLt offers none that runs for this shape and
  // dtype.
  gemm_tuning autotune(int candidates, double warmup_s);
  // Queues one multiply with the chosen algorithm into this object's own D.
  void enqueue();
  // Queues one multiply into `d`, a buffer of d_bytes() on the same device.
  void enqueue_into(void* d);
  // Compares `samples` elements of this object's D with the float64 reference (synchronizes).
  [[nodiscard]] gemm_check check(int samples);
  // Queues a comparison of every element of `result` (a D written by enqueue_into) with this
  // object's D, bit for bit, adding the number that differ to *mismatches (device memory).
  void enqueue_compare(const void* result, unsigned long long* mismatches);

  [[nodiscard]] double flops() const noexcept { return 2.0 * m_ * n_ * k_; }
  [[nodiscard]] std::size_t d_bytes() const noexcept;
  [[nodiscard]] std::size_t d_elements() const noexcept;
  [[nodiscard]] const cuda::stream& stream() const noexcept { return stream_; }

  struct impl;

 private:
  const cuda::stream& stream_;
  std::unique_ptr<impl> impl_;
  double m_, n_, k_;
};

}  // namespace gpubench::kernels
