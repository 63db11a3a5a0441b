#include "gpubench/harness/gpu_memory.hpp"

#include <algorithm>
#include <cmath>

#include "gpubench/core/text.hpp"

namespace gpubench {

std::optional<std::uint64_t> largest_fitting_buffer(std::uint64_t requested, int buffers,
                                                    std::uint64_t free_bytes, std::uint64_t minimum,
                                                    std::uint64_t granularity) {
  if (buffers < 1 || granularity == 0) return std::nullopt;
  const auto usable = static_cast<std::uint64_t>(
      std::floor(static_cast<double>(free_bytes) * usable_free_fraction));
  std::uint64_t per_buffer = std::min(requested, usable / static_cast<std::uint64_t>(buffers));
  if (per_buffer < requested) per_buffer = per_buffer / granularity * granularity;
  if (per_buffer == 0 || per_buffer < minimum) return std::nullopt;
  return per_buffer;
}

std::string gpu_memory_shortage(int device, std::uint64_t free_bytes, std::uint64_t total_bytes,
                                const std::string& what) {
  return "GPU " + std::to_string(device) + " has " + format_bytes(free_bytes) + " free of " +
         format_bytes(total_bytes) + ": too little for " + what;
}

}  // namespace gpubench
