// Calibration: the model against published training throughput (../shared/reference/
// calibration.json), first-principles and anchored on another GPU of the same source, beside the
// naive answer (scaling by datasheet peak FLOP/s). Also fits the model's named constants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubench/json.hpp"
#include "gpubench/model/model.hpp"

namespace gpubench::model {

struct calibration_row {
  std::size_t index = 0;
  std::string source;
  std::string model;
  std::string framework;
  std::string family;
  std::string gpu;        // catalog name
  std::string precision;  // gpubench precision
  int gpus = 1;
  int batch = 0;
  double published = 0;  // samples/s, all GPUs
  bool usable = false;
  std::string why_not;
  std::optional<double> first_principles;
  std::optional<double> anchored;
  std::optional<double> naive;
  std::optional<std::size_t> reference;  // index of the anchoring row
};

struct family_summary {
  std::string family;
  int rows = 0;
  double fp_median = 0;
  double fp_worst = 0;
  int anchored_rows = 0;
  double anchored_median = 0;
  double anchored_worst = 0;
  double naive_median = 0;
  double naive_worst = 0;
};

struct calibration_report {
  std::vector<calibration_row> rows;
  std::vector<family_summary> families;
  double fp_median = 0;
  double anchored_median = 0;
  double naive_median = 0;
};

// `published` is the calibration file, `mapping` configs/calibration/models.json (how each row's
// model, GPU, precision and network map to gpubench workloads and catalog entries).
[[nodiscard]] calibration_report calibrate(const json& published, const std::string& file,
                                           const constants& c);
// Fits constants::fitted_names() by coordinate descent on the first-principles error (the mean
// over families of each family's median absolute log error).
[[nodiscard]] constants fit_constants(const json& published, const std::string& file,
                                      constants start);

[[nodiscard]] json to_json(const calibration_report& report);
[[nodiscard]] std::string to_markdown(const calibration_report& report);

}  // namespace gpubench::model
