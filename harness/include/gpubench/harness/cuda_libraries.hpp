// cuBLASLt and NCCL, loaded at run time (dlopen) rather than linked: a binary whose machine lacks
// them, or has other versions, still starts, runs every other benchmark, and says which library
// is missing and what needs it, instead of the dynamic loader refusing to start it. Only the
// entry points gpubench calls are bound; their types come from the headers built against.
#pragma once

#include "gpubench/core/config.hpp"

#include <optional>
#include <string>

#if GPUBENCH_HAVE_CUDA
#include <cublasLt.h>
#endif
#if GPUBENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpubench::cuda {

// One table entry per entry point: the member has the function's own name and type.
// NOLINTNEXTLINE(bugprone-macro-parentheses): the argument is an identifier, declared as one
#define GPUBENCH_DECLARE_ENTRY_POINT(name) decltype(&::name) name = nullptr;

#if GPUBENCH_HAVE_CUDA
// clang-format off
#define GPUBENCH_CUBLASLT_ENTRY_POINTS(X) \
  X(cublasLtGetVersion) X(cublasLtGetStatusName) X(cublasLtGetStatusString) \
  X(cublasLtCreate) X(cublasLtDestroy) \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
// clang-format on

struct cublaslt_api {
  GPUBENCH_CUBLASLT_ENTRY_POINTS(GPUBENCH_DECLARE_ENTRY_POINT)
  std::string path;  // the file loaded
};

// cuBLASLt of the CUDA major version built against, loaded on first use; throws skip_case saying
// what could not be loaded, what needs it and where to get it.
[[nodiscard]] const cublaslt_api& cublaslt();
// Why cuBLASLt cannot be loaded here, or nullopt (for support checks).
[[nodiscard]] std::optional<std::string> cublaslt_unavailable_reason();
#endif

#if GPUBENCH_HAVE_NCCL
// clang-format off
#define GPUBENCH_NCCL_ENTRY_POINTS(X) \
  X(ncclGetVersion) X(ncclGetErrorString) X(ncclGetUniqueId) \
  X(ncclCommInitRankConfig) X(ncclCommInitAll) X(ncclCommDestroy) X(ncclCommAbort) \
  X(ncclCommGetAsyncError) X(ncclGroupStart) X(ncclGroupEnd) \
  X(ncclAllReduce) X(ncclAllGather) X(ncclReduceScatter) X(ncclBroadcast) \
  X(ncclSend) X(ncclRecv)
// Newer than the oldest NCCL gpubench builds and runs with (2.14), so typed here rather than taken
// from a header that may not declare them: used where the library has them.
#define GPUBENCH_NCCL_OPTIONAL_ENTRY_POINTS(X) X(ncclMemAlloc) X(ncclMemFree) X(ncclAlltoAll)
// clang-format on

struct nccl_api {
  GPUBENCH_NCCL_ENTRY_POINTS(GPUBENCH_DECLARE_ENTRY_POINT)
  ncclResult_t (*ncclMemAlloc)(void** memory, size_t bytes) = nullptr;  // 2.19
  ncclResult_t (*ncclMemFree)(void* memory) = nullptr;                  // 2.19
  ncclResult_t (*ncclAlltoAll)(const void* send, void* receive, size_t count, ncclDataType_t type,
                               ncclComm_t comm,
                               cudaStream_t stream) = nullptr;  // 2.28
  std::string path;                                             // the file loaded
  std::string version;                                          // "2.28.3", from the loaded library
};

// NCCL 2, loaded on first use; throws skip_case as cublaslt() does.
[[nodiscard]] const nccl_api& nccl();
[[nodiscard]] std::optional<std::string> nccl_unavailable_reason();
#endif

// "13.0.2" (cuBLASLt) and "2.28.3" (NCCL) of the libraries that load here, or empty.
[[nodiscard]] std::string loaded_cublaslt_version();
[[nodiscard]] std::string loaded_nccl_version();
// The NCCL version if this process has loaded the library already (GPU discovery and the NCCL
// benchmarks do), else empty: mapping libnccl (about 185 MB of address space) only to write its
// version down would cost every run on a machine without GPUs.
[[nodiscard]] std::string nccl_version_if_loaded();
// "13.0.2 (/usr/local/cuda/lib64/libcublasLt.so.13)", or why it cannot be loaded, or why the build
// has none ("built without CUDA"): what `gpubench info` shows.
[[nodiscard]] std::string cublaslt_status();
[[nodiscard]] std::string nccl_status();

}  // namespace gpubench::cuda
