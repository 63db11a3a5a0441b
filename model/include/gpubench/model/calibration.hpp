// Calibration: the model against published training throughput (configs/calibration/
// calibration.json), first-principles and anchored on another GPU of the same source, each beside
// its naive counterpart: datasheet peak FLOP/s x one utilisation for every row / FLOP per sample,
// and the reference row scaled by the ratio of datasheet peaks. Also fits the named constants.
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
  std::optional<double> naive_first_principles;  // peak FLOP/s x one utilisation / FLOP per sample
  std::optional<double> anchored;
  std::optional<double> naive;           // the reference row x target peak / reference peak
  double flops_per_sample = 0;           // the model's count, forward and backward
  std::optional<std::size_t> reference;  // index of the anchoring row
};

struct family_summary {
  std::string family;
  int rows = 0;
  double fp_median = 0;
  double fp_worst = 0;
  double naive_fp_median = 0;
  double naive_fp_worst = 0;
  int anchored_rows = 0;
  double fp_on_anchored_rows_median = 0;  // first-principles over the rows that have a reference
  double anchored_median = 0;
  double anchored_worst = 0;
  double naive_median = 0;
  double naive_worst = 0;
};

struct calibration_report {
  std::vector<calibration_row> rows;
  std::vector<family_summary> families;
  double fp_median = 0;
  double naive_fp_median = 0;
  double anchored_median = 0;
  double naive_median = 0;
  double naive_utilization = 0;  // the one fraction of peak the naive first-principles answer uses
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
