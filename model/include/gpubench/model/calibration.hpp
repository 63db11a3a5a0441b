// Calibration: the model against published training throughput (configs/calibration/*.json),
// first-principles and anchored on another GPU of the same source, each beside its naive
// counterpart: datasheet peak FLOP/s x one utilisation for every row / FLOP per sample, and the
// reference row scaled by the ratio of datasheet peaks. Fits the named constants of each software
// stack on that stack's rows, and reports every row as predicted by a fit that left out the rows
// of its source (docs/model.md, "Calibration").
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/model/model.hpp"

namespace gpubench::model {

// One calibration file: its rows and the name it was read from (rows are named STEM#INDEX).
struct calibration_set {
  json doc;
  std::string file;
};

// The sets configs/calibration/models.json lists, read from configs/calibration/.
[[nodiscard]] std::vector<calibration_set> default_calibration_sets();

struct calibration_row {
  std::string id;  // SET#INDEX: calibration_2#17
  std::string source;
  std::string source_group;  // repository:top folder; the unit a held-out fit leaves out
  std::string model;
  std::string framework;
  std::string family;
  std::string stack;
  std::string gpu;         // catalog name
  std::string generation;  // volta | ampere | ada | hopper
  std::string precision;   // gpubench precision
  int gpus = 1;
  int batch = 0;
  double published = 0;  // samples/s, all GPUs
  bool usable = false;
  bool supported = true;  // the sizing's own flag (sizing::supported)
  std::string why_not;
  double flops_per_sample = 0;  // the model's count, forward and backward
  // Predicted with the constants fitted on every row (in fit) and with those fitted on the rows
  // of the other sources (held out).
  std::optional<double> first_principles;
  std::optional<double> held_out;
  std::optional<double> naive_first_principles;  // held out too: utilisation of the other sources
  std::optional<double> anchored;                // with the held-out constants
  std::optional<double> naive;                   // the reference row x target peak / its peak
  std::optional<std::string> reference;          // id of the anchoring row
  // GPU memory the model counts for the published run, against its GPU's capacity: every
  // published run ran, so a row that "does not fit" is an error of the memory model.
  double memory_GiB = 0;
  std::optional<double> capacity_GiB;
};

struct error_summary {
  std::string family;
  std::string generation;  // "" for every generation
  bool supported = true;   // false when its rows' sizings are flagged unsupported
  int rows = 0;
  double in_fit_median = 0;
  double held_out_median = 0;
  double held_out_worst = 0;
  double naive_median = 0;  // naive first-principles, held out
  int anchored_rows = 0;
  double anchored_median = 0;
  double anchored_worst = 0;
  double naive_anchored_median = 0;
};

struct stack_fit {
  std::string stack;
  int rows = 0;
  std::vector<std::string> sources;                       // source groups of its rows
  std::vector<std::pair<std::string, double>> constants;  // fitted on its rows
};

// The held-out errors of a family's rows as a band (docs/model.md, "Error band"): published /
// predicted between the ranks that hold at least `coverage` of a next row (ratio_band).
struct error_band {
  std::string family;  // "all": every family's rows
  std::string method;  // first_principles | anchored
  int rows = 0;
  double low = 1;
  double high = 1;
  // The share of rows inside the band built from the other sources' rows only.
  double held_out_coverage = 0;
  // The family has too few rows or sources for a band of its own: low and high are every
  // family's joined with the same ranks over this family's rows (shared_bands).
  bool shared = false;
};
inline constexpr double band_coverage = 0.8;
// A family's own band needs this many usable rows, from this many source groups.
inline constexpr int min_family_rows = 9;
inline constexpr std::size_t min_family_groups = 4;

// Per method, per family with enough rows and for all: the bands of a report's rows.
[[nodiscard]] std::vector<error_band> error_bands(const std::vector<calibration_row>& rows);
// Per method, the families whose predictions take every family's band joined with the same ranks
// over their own rows, with how often it held their rows, each built without the row's source.
[[nodiscard]] std::vector<error_band> shared_bands(const std::vector<calibration_row>& rows);
// A published / predicted ratio and the source group of its row.
struct band_sample {
  double ratio = 1;
  std::string group;
};
// The band of published / predicted ratios: of n ratios, the floor((n+1)(1-c)/2)-th and
// ceil((n+1)(1+c)/2)-th smallest for c = band_coverage (split-conformal ranks, held to the
// smallest and largest), each row counted as n / (groups x its group's rows) of a row, so that
// every source group weighs the same (docs/model.md, "Error band"); {1, 1} for none. The serving
// bands use it too.
[[nodiscard]] std::pair<double, double> ratio_band(std::vector<band_sample> samples);
// configs/model/error_bands.json as `gpubench calibrate --bands` writes it, and read back.
[[nodiscard]] json to_json(const std::vector<error_band>& bands);
[[nodiscard]] std::vector<error_band> parse_error_bands(const json& doc, const std::string& file);

struct calibration_report {
  std::vector<calibration_row> rows;
  std::vector<error_summary> families;     // one per family, every generation
  std::vector<error_summary> generations;  // one per family and GPU generation
  // Across families, the slices issue 41's targets name (calibration_slices): the rows at fp8,
  // the rows on Blackwell GPUs. The summary's family is the slice's name.
  std::vector<error_summary> slices;
  std::vector<stack_fit> stacks;
  error_summary all;
  std::vector<error_band> bands;
  std::vector<error_band> shared_bands;  // the families without a band of their own
  // What configs/model/error_bands.json holds: the bands, then the shared ones.
  [[nodiscard]] std::vector<error_band> shipped_bands() const;
};

// Told after each source group's held-out refit: how many of how many are done. Called from
// the fitting threads, one call at a time.
using calibration_progress = std::function<void(std::size_t done, std::size_t total)>;

// Every row predicted with `c` and with `c` refitted without the row's source group (the refits
// run on every core).
[[nodiscard]] calibration_report calibrate(const std::vector<calibration_set>& sets,
                                           const constants& c,
                                           const calibration_progress& progress = {});
// Fits each stack's fitted constants (the base ones for the first stack) by coordinate descent on
// the first-principles error of that stack's rows: the mean over families of each family's median
// absolute log error.
[[nodiscard]] constants fit_constants(const std::vector<calibration_set>& sets, constants start);

[[nodiscard]] json to_json(const calibration_report& report);
[[nodiscard]] std::string to_markdown(const calibration_report& report);

}  // namespace gpubench::model
