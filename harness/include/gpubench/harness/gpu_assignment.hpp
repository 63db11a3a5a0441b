// Which GPUs a process may drive, and which one each rank of a multi-rank job drives. Pure
// functions of what each process sees, so every launcher's layout is unit-tested without one.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpubench {

// CUDA_VISIBLE_DEVICES applied to GPUs CUDA itself cannot enumerate (NVML's list, in NVML's
// order), the way the CUDA runtime reads it: comma-separated indices or UUIDs ("GPU-8a1b...", a
// prefix is enough); the first entry that names nothing ends the list; unset shows every GPU.
// Indices count in NVML's (PCI bus) order, CUDA's own order being unknowable without CUDA.
// Returns, per GPU, whether it is visible.
[[nodiscard]] std::vector<bool> cuda_visible_mask(const std::optional<std::string>& variable,
                                                  const std::vector<std::string>& uuids);

// The GPU each rank on one node drives, from the UUIDs each rank sees (in local-rank order;
// each list in that rank's CUDA order). Ranks that all see the same GPUs (mpirun) take the
// local-rank-th of them; ranks that each see their own (srun --gpus-per-task=1, a per-rank
// CUDA_VISIBLE_DEVICES) take the first of their own. Either way no two ranks may share a GPU.
struct rank_gpu {
  std::optional<std::size_t> position;  // into that rank's own list; nullopt: see problem
  std::string problem;                  // why the rank has no GPU of its own
};
[[nodiscard]] std::vector<rank_gpu> assign_rank_gpus(
    const std::vector<std::vector<std::string>>& visible_by_local_rank);

}  // namespace gpubench
