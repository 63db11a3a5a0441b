// What gpubench says when the CUDA driver, cuBLASLt or NCCL cannot be used: each message names
// what is missing, what needs it and how to get it, and none reads as "no GPU". Pure text, so
// every message is unit-tested on a machine without a GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpubench::detail {

struct library_facts {
  std::string name;        // "cuBLASLt"
  std::string soname;      // "libcublasLt.so.13"
  std::string built_with;  // "cuBLAS 13.0"
  std::string needed_by;   // "gemm and gpu.burn"
  std::string where;       // where a user gets it
  std::string variable;    // names the file to load instead of searching for the soname
};

[[nodiscard]] library_facts cublaslt_facts(int major, int minor);
[[nodiscard]] library_facts nccl_facts(int major, int minor);

// "cuBLASLt could not be loaded (<loader error>): gemm and gpu.burn need cuBLAS 13.0 ..."
[[nodiscard]] std::string library_not_loaded(const library_facts& facts,
                                             const std::string& loader_error);
// The file loaded but is older than the build needs.
[[nodiscard]] std::string library_lacks_entry_point(const library_facts& facts,
                                                    const std::string& path,
                                                    const std::string& entry_point);

// 13000 -> "13.0", 12040 -> "12.4" (cudaDriverGetVersion and CUDART_VERSION encode 1000*major +
// 10*minor).
[[nodiscard]] std::string cuda_version_text(int code);
// 22803 -> "2.28.3" (NCCL >= 2.9: 10000*major + 100*minor + patch).
[[nodiscard]] std::string nccl_version_text(int code);
// 130002 -> "13.0.2" (cublasLtGetVersion: 10000*major + 100*minor + patch).
[[nodiscard]] std::string cublas_version_text(std::size_t code);

// The oldest driver release that runs a CUDA major version (NVIDIA's CUDA release notes, table
// 3: 13.x 580, 12.x 525, 11.x 450), or 0 when unknown.
[[nodiscard]] int minimum_driver_release(int cuda_major);

// The driver is older than the CUDA runtime this binary carries: "the NVIDIA driver supports
// CUDA 12.4; this build needs 13.0: update the driver to release 580 or newer, or rebuild with a
// CUDA 12.x toolkit".
[[nodiscard]] std::string cuda_driver_too_old(int driver_code, int runtime_code);

// Lowest compute capability this build has device code for ("80;86;90" -> 80), or 0 when the
// list is empty or unreadable.
[[nodiscard]] int lowest_build_architecture(const std::string& architectures);
// Why a GPU of compute capability `major.minor` cannot run this build's kernels, or empty when it
// can (device code is compiled for the lowest architecture and up; PTX only runs on newer GPUs).
[[nodiscard]] std::string gpu_too_old_for_build(int major, int minor,
                                                const std::string& architectures, int runtime_code);

}  // namespace gpubench::detail
