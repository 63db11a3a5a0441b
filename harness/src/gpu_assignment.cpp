#include "gpubench/harness/gpu_assignment.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "gpubench/core/text.hpp"

namespace gpubench {

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// The GPU an entry of CUDA_VISIBLE_DEVICES names, or nullopt (which ends the list).
std::optional<std::size_t> named_gpu(const std::string& entry,
                                     const std::vector<std::string>& uuids) {
  if (entry.empty()) return std::nullopt;
  if (std::all_of(entry.begin(), entry.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto index = std::stoull(entry);
    if (index < uuids.size()) return static_cast<std::size_t>(index);
    return std::nullopt;
  }
  if (entry.rfind("GPU-", 0) == 0) {
    std::optional<std::size_t> match;
    for (std::size_t i = 0; i < uuids.size(); ++i) {
      if (uuids[i].rfind(entry, 0) == 0) {
        if (match) return std::nullopt;  // an ambiguous prefix names nothing
        match = i;
      }
    }
    return match;
  }
  return std::nullopt;  // MIG instances and anything else: not a whole GPU NVML lists
}

}  // namespace

std::vector<bool> cuda_visible_mask(const std::optional<std::string>& variable,
                                    const std::vector<std::string>& uuids) {
  if (!variable) return std::vector<bool>(uuids.size(), true);
  std::vector<bool> visible(uuids.size(), false);
  for (const std::string& raw : split(*variable, ',')) {
    const auto gpu = named_gpu(trimmed(raw), uuids);
    if (!gpu) break;
    visible[*gpu] = true;
  }
  return visible;
}

std::vector<rank_gpu> assign_rank_gpus(
    const std::vector<std::vector<std::string>>& visible_by_local_rank) {
  const std::size_t ranks = visible_by_local_rank.size();
  std::vector<rank_gpu> out(ranks);
  const bool shared =
      std::all_of(visible_by_local_rank.begin(), visible_by_local_rank.end(),
                  [&](const auto& list) { return list == visible_by_local_rank.front(); });
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto& mine = visible_by_local_rank[r];
    if (mine.empty()) {
      out[r].problem = "local rank " + std::to_string(r) + " sees no GPU";
    } else if (shared && ranks > 1 && mine.size() > 1) {
      if (r < mine.size()) {
        out[r].position = r;
      } else {
        out[r].problem = "local rank " + std::to_string(r) + " of " + std::to_string(ranks) +
                         " on a node where the ranks see " + std::to_string(mine.size()) +
                         " GPUs: start one rank per GPU";
      }
    } else {
      out[r].position = 0;  // its own GPUs (or a single rank): the first of them
    }
  }
  // No GPU driven by two ranks: name every pair.
  std::map<std::string, std::size_t> owner;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (!out[r].position) continue;
    const std::string& uuid = visible_by_local_rank[r][*out[r].position];
    const auto [it, fresh] = owner.emplace(uuid, r);
    if (!fresh) {
      const std::string problem = "local ranks " + std::to_string(it->second) + " and " +
                                  std::to_string(r) + " would both drive " + uuid +
                                  ": give each rank its own GPU (srun --gpus-per-task=1, or one "
                                  "rank per GPU under mpirun)";
      for (std::size_t both : {it->second, r}) {
        out[both].position.reset();
        out[both].problem = problem;
      }
    }
  }
  return out;
}

}  // namespace gpubench
