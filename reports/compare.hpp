// gpubench compare: several machines (measured results and/or catalog systems) side by side —
// every figure with its ratio to the first machine, predicted samples/s per workload, $/hour,
// $ per million samples, time per epoch, and the best choice per workload.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubench/json.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"

namespace gpubench::reports {

struct compared_machine {
  std::string spec;  // as given: catalog:NAME or a file
  std::string name;
  model::hardware_profile hw;
  std::optional<double> usd_per_hour;
};

struct compared_cell {
  std::optional<model::sizing> sizing;
  std::string error;
  std::optional<double> usd_per_million_samples;
  std::optional<double> epoch_hours;
};

struct compared_workload {
  std::string name;
  std::string unit;                         // images/s, sequences/s, samples/s
  std::optional<double> samples_per_epoch;  // dataset bytes / stored bytes per sample
  std::vector<compared_cell> cells;         // one per machine
  std::optional<std::size_t> fastest;
  std::optional<std::size_t> cheapest;  // lowest $ per million samples
};

struct comparison {
  std::vector<compared_machine> machines;
  std::vector<std::string> figure_keys;  // every figure any machine has
  std::vector<compared_workload> workloads;
};

// Throws input_error for a machine or workload that cannot be read.
[[nodiscard]] comparison compare_machines(const std::vector<std::string>& specs,
                                          std::vector<std::string> workloads);
[[nodiscard]] json to_json(const comparison& c);
[[nodiscard]] std::string to_text(const comparison& c);
[[nodiscard]] std::string to_html(const comparison& c);

}  // namespace gpubench::reports
