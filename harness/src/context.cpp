#include "gpubench/harness/context.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "detail/library_messages.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/harness/cuda_libraries.hpp"

namespace gpubench {

namespace {
// Why this build has no device code for `gpu` (a GPU older than its lowest target), or empty.
std::string build_cannot_drive(const gpu_info& gpu, const gpu_discovery& status) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(gpu.compute_capability.c_str(), "%d.%d", &major, &minor) != 2) return {};
  return detail::gpu_too_old_for_build(major, minor, GPUBENCH_CUDA_ARCHITECTURES,
                                       status.cuda_runtime_version.value_or(0));
}
}  // namespace

context::context(system_info system, run_options options, const job* the_job)
    : system_(std::move(system)), options_(std::move(options)), job_(the_job) {}

std::vector<int> context::gpu_indices() const {
  std::vector<int> out;
  for (const auto& gpu : system_.gpus) {
    // Only GPUs the CUDA runtime sees can be driven (those have a compute capability), and only
    // those this build has device code for.
    if (gpu.compute_capability.empty() || !build_cannot_drive(gpu, system_.gpu_status).empty()) {
      continue;
    }
    if (options_.gpus.empty() ||
        std::find(options_.gpus.begin(), options_.gpus.end(), gpu.index) != options_.gpus.end()) {
      out.push_back(gpu.index);
    }
  }
  return out;
}

std::optional<std::string> context::gpu_unavailable_reason() const {
  if (!gpu_indices().empty()) {
    return std::nullopt;
  }
  if (system_.gpus.empty()) {
    return system_.gpu_status.reason.empty() ? std::string("no GPU found")
                                             : system_.gpu_status.reason;
  }
  if (system_.gpu_status.cuda != "ok") {
    return "GPUs present but the CUDA runtime cannot use them: " + system_.gpu_status.cuda;
  }
  for (const auto& gpu : system_.gpus) {
    const bool selected =
        options_.gpus.empty() ||
        std::find(options_.gpus.begin(), options_.gpus.end(), gpu.index) != options_.gpus.end();
    if (const std::string why = build_cannot_drive(gpu, system_.gpu_status);
        selected && !why.empty()) {
      return "GPU " + std::to_string(gpu.index) + " (" + gpu.name + "): " + why;
    }
  }
  return std::string("no GPU selected by --gpus");
}

std::optional<std::string> cuda_gpu_unavailable_reason(const context& ctx) {
  if (!GPUBENCH_HAVE_CUDA) {
    return std::string("built without CUDA (GPUBENCH_CUDA=OFF)");
  }
  return ctx.gpu_unavailable_reason();
}

std::optional<std::string> cublaslt_gpu_unavailable_reason(const context& ctx) {
  if (auto reason = cuda_gpu_unavailable_reason(ctx)) return reason;
#if GPUBENCH_HAVE_CUDA
  return cuda::cublaslt_unavailable_reason();
#else
  return std::nullopt;
#endif
}

instance_factory unavailable_factory(std::string why) {
  return [why = std::move(why)](const context&, const axis_values&) -> std::unique_ptr<instance> {
    throw std::logic_error(why);
  };
}

axis gpu_axis() {
  axis a{"gpu", axis_kind::integer, "GPU index (CUDA device ordinal)", [](const context& ctx) {
           std::vector<axis_value> values;
           for (int index : ctx.gpu_indices()) {
             values.emplace_back(std::int64_t{index});
           }
           return values;
         }};
  a.range = [](const context&) { return axis_range{0, 1023}; };
  return a;
}

int context::host_cores() const noexcept {
  return std::max(1, system_.cpu.cores_available);
}

}  // namespace gpubench
