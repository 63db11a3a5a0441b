// What gpubench size says of a watched job: the machine's figures the job is held against, and
// the model's rate for the job on them, now and with the watched limit lifted. docs/watch.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/harness/gpu_monitor.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/watch/verdict.hpp"

namespace gpubench::watch {

// The machine's figures, read once for the ceilings and the prediction, and where they came from.
struct machine_figures {
  model::hardware_profile profile;
  std::string origin;  // the --results given, or "catalog:NAME, matched to 'GPU name'"
};

// Without --results: the catalog entry for the GPU that NVML names (the first, as a node's GPUs
// are alike).
[[nodiscard]] std::optional<machine_figures> catalog_figures(const std::vector<gpu_activity>& gpus);

// gpubench size for the watched job: the machine's figures (--results, else the catalog entry
// of its GPU) with the job's own allocation (its allowed cores, the GPUs it held), the rate and
// limit the model predicts, and the rate with the watched limit doubled. Adds one advice line.
[[nodiscard]] json predict_for_job(const std::string& workload_name, const model::workload& w,
                                   const std::optional<machine_figures>& machine, const summary& s,
                                   verdict& v);

}  // namespace gpubench::watch
