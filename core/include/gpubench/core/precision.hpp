#pragma once

// The GEMM input types gpubench knows, in the one order the gemm and gpu.burn axes, the catalog
// keys (gpu.peak_tflops.<dtype>) and every message list them. A new type is one entry here (and
// its cuBLASLt mapping in kernels/gemm.cu).

#include <array>
#include <string>
#include <string_view>

namespace gpubench {

inline constexpr std::array<std::string_view, 5> gemm_dtypes{"fp16", "bf16", "tf32", "fp32", "fp8"};
// cuBLAS's op(A), op(B) letters for a column-major multiply (T = stored transposed). "NN" is what a
// row-major framework's a @ b becomes; FP8 allows "TN" only.
inline constexpr std::array<std::string_view, 3> gemm_layouts{"TN", "NN", "NT"};

[[nodiscard]] constexpr bool is_gemm_dtype(std::string_view name) {
  for (const auto dtype : gemm_dtypes) {
    if (dtype == name) return true;
  }
  return false;
}

// The names joined: "fp16, bf16, tf32, fp32, fp8" or "fp16,bf16,..." with separator ",".
[[nodiscard]] inline std::string gemm_dtype_list(std::string_view separator = ", ") {
  std::string text;
  for (const auto dtype : gemm_dtypes) {
    if (!text.empty()) text += separator;
    text += dtype;
  }
  return text;
}

}  // namespace gpubench
