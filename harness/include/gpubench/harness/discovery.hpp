// System discovery: reads what this machine is into the `system` block of every results file.
#pragma once

#include "gpubench/core/system.hpp"

namespace gpubench {

// Reads the machine: hwloc for CPU/NUMA, sysfs and procfs for disks and filesystems, NVML
// (loaded at run time) and the CUDA runtime for GPUs. Never throws for a missing GPU or driver:
// the GPU list is then empty and gpu_status.reason says why.
[[nodiscard]] system_info discover_system();

}  // namespace gpubench
