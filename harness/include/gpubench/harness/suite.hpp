// Suites (configs/suites/*.json, schema gpubench.suite/1) and the plan a run follows: which
// benchmarks, which axis values, how many repetitions.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/harness/benchmark.hpp"

namespace gpubench {

// How the harness times one benchmark.
struct run_settings {
  int repetitions = 10;
  int warmup_iterations = 2;               // run before timing; never counted
  double min_time_s = 0.2;                 // per repetition, when iterations is not fixed
  std::optional<std::int64_t> iterations;  // a fixed count per repetition (ranks must agree)
};

struct suite_entry {
  std::string pattern;  // a benchmark id, "prefix.*" or "*"
  std::map<std::string, std::vector<axis_value>> axes;
  std::optional<int> repetitions;
  std::optional<int> warmup_iterations;
  std::optional<double> min_time_s;
  std::optional<std::int64_t> iterations;
};

struct suite {
  std::string name;
  std::string description;
  std::filesystem::path source;
  run_settings defaults;
  std::vector<suite_entry> entries;
};

// Parses a suite document. `file` names it in error messages. Throws input_error.
[[nodiscard]] suite parse_suite(const json& document, const std::string& file);
// Loads a suite by name (configs/suites/NAME.json) or by path. Throws input_error.
[[nodiscard]] suite load_suite(const std::string& name_or_path);
// Names of the suites in configs/suites/.
[[nodiscard]] std::vector<std::string> suite_names();

// `--axis ID:NAME=V1,V2`: values for one axis of the benchmarks matching ID (a pattern).
struct axis_override {
  std::string pattern;
  std::string axis;
  std::vector<std::string> values;
};
// Parses the text of one --axis flag. Throws input_error.
[[nodiscard]] axis_override parse_axis_override(const std::string& text);

// Converts a textual value for an axis of the given kind ("1048576", "4MiB", "bf16").
[[nodiscard]] axis_value parse_axis_value(axis_kind kind, const std::string& text,
                                          const std::string& where);

struct planned_benchmark {
  const benchmark_definition* definition = nullptr;
  run_settings settings;
  std::optional<std::string> skip_reason;  // set when it cannot run here
  std::vector<axis_values> cases;          // the cartesian product of its axes
};

struct plan_request {
  std::vector<std::string> only;  // id patterns; empty means all the suite names
  std::vector<std::string> skip;  // id patterns
  std::vector<axis_override> axis_overrides;
};

// Expands the suite against the registry: benchmarks in id order, axes in declaration order,
// later sources overriding earlier ones (defaults < suite < command line). Throws input_error
// for an unknown id, axis or value.
[[nodiscard]] std::vector<planned_benchmark> make_plan(const suite& s, const plan_request& request,
                                                       const registry& benchmarks,
                                                       const context& ctx);

// Number of results a run of the plan produces: its cases, and one per skipped benchmark.
[[nodiscard]] std::size_t count_cases(const std::vector<planned_benchmark>& plan);

// Whether a benchmark id matches a pattern ("hbm.copy", "hbm.*", "*").
[[nodiscard]] bool id_matches(std::string_view pattern, std::string_view id);

}  // namespace gpubench
