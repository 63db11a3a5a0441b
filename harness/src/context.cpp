#include "gpubench/context.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpubench/config.hpp"

namespace gpubench {

context::context(system_info system, run_options options, const job* the_job)
    : system_(std::move(system)), options_(std::move(options)), job_(the_job) {}

std::vector<int> context::gpu_indices() const {
  std::vector<int> out;
  for (const auto& gpu : system_.gpus) {
    // Only GPUs the CUDA runtime sees can be driven (those have a compute capability).
    if (gpu.compute_capability.empty()) {
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
  if (!options_.gpu_assignment_problem.empty()) {
    return options_.gpu_assignment_problem;
  }
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
  return std::string("no GPU selected by --gpus");
}

std::optional<std::string> cuda_gpu_unavailable_reason(const context& ctx) {
  if (!GPUBENCH_HAVE_CUDA) {
    return std::string("built without CUDA (GPUBENCH_CUDA=OFF)");
  }
  return ctx.gpu_unavailable_reason();
}

instance_factory unavailable_factory(std::string why) {
  return [why = std::move(why)](const context&, const axis_values&) -> std::unique_ptr<instance> {
    throw std::logic_error(why);
  };
}

axis gpu_axis() {
  return axis{"gpu", axis_kind::integer, "GPU index (CUDA device ordinal)", [](const context& ctx) {
                std::vector<axis_value> values;
                for (int index : ctx.gpu_indices()) {
                  values.emplace_back(std::int64_t{index});
                }
                return values;
              }};
}

int context::host_cores() const noexcept {
  return std::max(1, system_.cpu.cores_available);
}

}  // namespace gpubench
