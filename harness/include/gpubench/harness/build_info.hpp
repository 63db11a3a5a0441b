// Facts about this build, recorded in every results file.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

[[nodiscard]] const char* git_describe() noexcept;  // generated at build time
[[nodiscard]] std::string version();
[[nodiscard]] std::string build_type();
[[nodiscard]] std::string compiler();
[[nodiscard]] std::string cuda_runtime_version();  // "13.0", "" without CUDA
// "2.27.3" of the libnccl this process loaded (where CUDA can use a GPU), else "".
[[nodiscard]] std::string nccl_version();
// The features compiled in: "cuda", "nccl", "mpi".
[[nodiscard]] std::vector<std::string> build_features();

}  // namespace gpubench
