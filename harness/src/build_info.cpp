#include "gpubench/harness/build_info.hpp"

#include "gpubench/core/config.hpp"

#if GPUBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "detail/library_messages.hpp"
#include "gpubench/harness/cuda_libraries.hpp"

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
  return detail::cuda_version_text(CUDART_VERSION);
#else
  return {};
#endif
}

std::string nccl_version() {
  // The library loaded here (not the header's), if the run loaded it: see nccl_version_if_loaded.
  return cuda::nccl_version_if_loaded();
}

std::vector<std::string> build_features() {
  std::vector<std::string> out;
  if (GPUBENCH_HAVE_CUDA) out.emplace_back("cuda");
  if (GPUBENCH_HAVE_NCCL) out.emplace_back("nccl");
  if (GPUBENCH_HAVE_MPI) out.emplace_back("mpi");
  return out;
}

}  // namespace gpubench
