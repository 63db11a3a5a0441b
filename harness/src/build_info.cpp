#include "gpubench/build_info.hpp"

#include "gpubench/config.hpp"

#if GPUBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if GPUBENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpubench {

std::string version() {
  return GPUBENCH_VERSION;
}
std::string build_type() {
  return GPUBENCH_BUILD_TYPE;
}
std::string compiler() {
  return GPUBENCH_CXX_COMPILER;
}

std::string cuda_runtime_version() {
#if GPUBENCH_HAVE_CUDA
  // The version compiled against; the runtime is linked statically, so it is also the one used.
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
#else
  return {};
#endif
}

std::string nccl_version() {
#if GPUBENCH_HAVE_NCCL
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) {
    return {};
  }
  // NCCL >= 2.9 encodes MAJOR*10000 + MINOR*100 + PATCH.
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
#else
  return {};
#endif
}

std::vector<std::string> build_features() {
  std::vector<std::string> out;
  if (GPUBENCH_HAVE_CUDA) out.emplace_back("cuda");
  if (GPUBENCH_HAVE_NCCL) out.emplace_back("nccl");
  if (GPUBENCH_HAVE_MPI) out.emplace_back("mpi");
  return out;
}

}  // namespace gpubench
