#pragma once

// The GEMM input types gpubench knows, in the one order the gemm and gpu.burn axes, the catalog
// keys (gpu.peak_tflops.<dtype>) and every message list them. A new type is one row here (and
// its cuBLASLt mapping in kernels/gemm.cu).

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace gpubench {

// How one GEMM input type is stored. Block-scaled types (OCP MXFP8, NVIDIA's NVFP4) carry one
// scale per `scale_block` consecutive elements along K, so a copy of a tensor in them takes
// element_bytes + scale_bytes / scale_block per element (docs/model.md, "fp8").
struct gemm_dtype_traits {
  std::string_view name;
  double element_bytes;
  int scale_block;  // 0: one scale (or none) per tensor
  double scale_bytes;
  int min_compute_capability;  // major * 10 + minor
  // Multiplied on tensor cores; fp32 runs on the CUDA cores (where cuDNN's Winograd pays).
  bool tensor_cores = true;

  [[nodiscard]] constexpr double stored_bytes_per_element() const {
    return element_bytes + (scale_block > 0 ? scale_bytes / scale_block : 0.0);
  }
};

inline constexpr std::array<gemm_dtype_traits, 7> gemm_dtype_table{{
    {"fp16", 2, 0, 0, 70},
    {"bf16", 2, 0, 0, 80},
    {"tf32", 4, 0, 0, 80},
    {"fp32", 4, 0, 0, 70, false},
    {"fp8", 1, 0, 0, 89},
    // e4m3 with an e8m0 scale per 32 elements (OCP MX); Blackwell's tensor cores apply the scales.
    {"mxfp8", 1, 32, 1, 100},
    // e2m1, two per byte, with an e4m3 scale per 16 elements (and one fp32 scale per tensor).
    {"nvfp4", 0.5, 16, 1, 100},
}};

namespace detail {
template <std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> gemm_dtype_names(std::index_sequence<I...>) {
  return {gemm_dtype_table[I].name...};
}
}  // namespace detail

// The names alone, in the table's order.
inline constexpr std::array<std::string_view, gemm_dtype_table.size()> gemm_dtypes =
    detail::gemm_dtype_names(std::make_index_sequence<gemm_dtype_table.size()>{});
// cuBLAS's op(A), op(B) letters for a column-major multiply (T = stored transposed). "NN" is what a
// row-major framework's a @ b becomes; FP8 allows "TN" only.
inline constexpr std::array<std::string_view, 3> gemm_layouts{"TN", "NN", "NT"};

// nullptr for a name not in the table.
[[nodiscard]] constexpr const gemm_dtype_traits* find_gemm_dtype(std::string_view name) {
  for (const auto& dtype : gemm_dtype_table) {
    if (dtype.name == name) return &dtype;
  }
  return nullptr;
}

[[nodiscard]] constexpr bool is_gemm_dtype(std::string_view name) {
  return find_gemm_dtype(name) != nullptr;
}

// The names joined: "fp16, bf16, tf32, fp32, fp8, ..." or "fp16,bf16,..." with separator ",".
[[nodiscard]] inline std::string gemm_dtype_list(std::string_view separator = ", ") {
  std::string text;
  for (const auto dtype : gemm_dtypes) {
    if (!text.empty()) text += separator;
    text += dtype;
  }
  return text;
}

}  // namespace gpubench
