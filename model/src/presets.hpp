// Model presets: each expands into the operations of one training step (forward + backward) per
// GPU. Internal to the model library.
#pragma once

#include <map>
#include <string>

#include "gpubench/model/workload.hpp"

namespace gpubench::model::detail {

struct preset_info {
  std::string family;                     // cnn | transformer
  std::string sample_unit;                // image | sequence
  std::map<std::string, double> numbers;  // parameters and their defaults
  std::map<std::string, bool> flags;
};

// nullptr for an unknown name.
[[nodiscard]] const preset_info* find_preset(const std::string& name);

// The training-step ops of a preset at a batch. `params`/`flags` hold every parameter (defaults
// filled in). activation_bytes: 4 for fp32/tf32, 2 for mixed precision.
[[nodiscard]] step_ops expand_preset(const std::string& name,
                                     const std::map<std::string, double>& params,
                                     const std::map<std::string, bool>& flags, int batch,
                                     double activation_bytes);

}  // namespace gpubench::model::detail
