// GPUs as the CUDA runtime sees them (empty, with the reason, in builds without CUDA).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/system.hpp"

namespace gpubench::detail {

struct cuda_device_list {
  std::vector<gpu_info> gpus;  // CUDA ordinal order; NVML-only fields left empty
  std::string status;          // "ok" or why CUDA cannot be used
  std::optional<int> driver_version;
  std::optional<int> runtime_version;
};

[[nodiscard]] cuda_device_list list_cuda_devices();

}  // namespace gpubench::detail
