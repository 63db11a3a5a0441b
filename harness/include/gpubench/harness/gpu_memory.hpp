// What a case does when its GPU has too little memory free: step down to the largest size that
// fits where the size is only a means (HBM arrays), or skip with the reason where the size is
// what is measured (a GEMM shape, a copy or message size). Pure arithmetic, tested without a GPU;
// cuda::device_buffer turns a failed allocation into the skip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpubench {

// The share of the free memory a case may take: the rest is for the CUDA context, cuBLAS
// workspaces and what other processes allocate while the case runs.
inline constexpr double usable_free_fraction = 0.9;

// The largest size per buffer, a multiple of `granularity`, at most `requested`, such that
// `buffers` of them fit in the usable share of `free_bytes`; nullopt when that is below
// `minimum` (the smallest size that still measures the right thing).
[[nodiscard]] std::optional<std::uint64_t> largest_fitting_buffer(std::uint64_t requested,
                                                                  int buffers,
                                                                  std::uint64_t free_bytes,
                                                                  std::uint64_t minimum,
                                                                  std::uint64_t granularity);

// "GPU 0 has 2.0 GiB free of 80.0 GiB: too little for <what>" (sizes as format_bytes writes them).
[[nodiscard]] std::string gpu_memory_shortage(int device, std::uint64_t free_bytes,
                                              std::uint64_t total_bytes, const std::string& what);

}  // namespace gpubench
