#include "gpubench/core/system.hpp"

#include <algorithm>

namespace gpubench {

std::uint64_t system_info::last_level_cache_bytes() const {
  int last_level = 0;
  for (const auto& cache : cpu.caches) {
    if (cache.type != "instruction") {
      last_level = std::max(last_level, cache.level);
    }
  }
  std::uint64_t total = 0;
  for (const auto& cache : cpu.caches) {
    if (cache.level == last_level && cache.type != "instruction") {
      total += cache.size_bytes * static_cast<std::uint64_t>(cache.count);
    }
  }
  return total;
}

}  // namespace gpubench
