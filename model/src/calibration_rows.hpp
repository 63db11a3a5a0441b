// Calibration's rows, read once: each published row mapped to the workload, catalog hardware and
// run options it is predicted with (configs/calibration/models.json), or why it cannot be.
// Internal to model/: calibration_data.cpp reads them, calibration.cpp fits and predicts them.
#pragma once

#include <vector>

#include "gpubench/model/calibration.hpp"

namespace gpubench::model::detail {

struct prepared_row {
  calibration_row row;
  workload w;
  hardware_profile hw;
  run_options options;
};

[[nodiscard]] std::vector<prepared_row> prepare(const std::vector<calibration_set>& sets);

}  // namespace gpubench::model::detail
