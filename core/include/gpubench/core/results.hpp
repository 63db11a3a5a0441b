// The results file, schema gpubench.results/1 (docs/schema.md).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/json_view.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/system.hpp"

namespace gpubench {

inline constexpr const char* results_schema = "gpubench.results/1";

enum class result_status { ok, skipped, failed };
NLOHMANN_JSON_SERIALIZE_ENUM(result_status, {{result_status::ok, "ok"},
                                             {result_status::skipped, "skipped"},
                                             {result_status::failed, "failed"}})

// Whether a metric is better when it is higher (rates) or lower (times, drops).
enum class better { higher, lower };
NLOHMANN_JSON_SERIALIZE_ENUM(better, {{better::higher, "higher"}, {better::lower, "lower"}})
// The better of two values of a metric that goes `direction`.
[[nodiscard]] constexpr double better_of(better direction, double a, double b) noexcept {
  return direction == better::higher ? (a < b ? b : a) : (b < a ? b : a);
}

// What a metric measures in, as its benchmark declares it.
struct metric_unit {
  std::string unit;  // "GB/s", "TFLOP/s", "us", "IO/s"; "" for a plain ratio
  better direction = better::higher;
};

// One metric of a result: its statistics over the repetitions and its unit. In the file, the
// summary's members and "unit", "better" side by side.
struct metric_summary : summary {
  metric_summary() = default;
  metric_summary(const summary& stats, metric_unit of) : summary(stats), unit(std::move(of)) {}
  metric_unit unit;
};

struct results_document;

namespace detail {
struct json_document;
}

// A result's "info", the benchmark's free-form details. Read from a file by the fast reader, it
// stays in the parser's document and is converted only when asked for whole: a fleet's burn
// samples were 115 of 180 MB of its results, and the rules read a dozen numbers of each.
class result_info {
 public:
  result_info() = default;
  result_info(json value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  // Read without converting anything.
  [[nodiscard]] json_view view() const;
  // The whole value as nlohmann, converted on the first call (safe from several threads at once).
  [[nodiscard]] const json& get() const;
  // The value to change in place: converted, and from then on this result's own.
  [[nodiscard]] json& edit();
  // As nlohmann's empty(): null, or an object or array with nothing in it.
  [[nodiscard]] bool empty() const;

 private:
  friend struct detail::json_view_access;
  json value_ = json::object();
  std::shared_ptr<const detail::json_document> document_;  // set where the value stays there
  std::size_t slot_ = 0;
};

struct result {
  std::string id;
  result_status status = result_status::ok;
  std::string reason;  // why it was skipped
  std::string error;   // why it failed
  json axes = json::object();
  std::vector<std::pair<std::string, metric_summary>> metrics;
  std::optional<bool> verified;
  result_info info;
  // Seconds the case took from start to end: set-up, warm-up, the timed repetitions and the
  // check (where a suite's time goes); absent where the benchmark was skipped before it ran.
  std::optional<double> wall_s;
  // In a multi-rank job: the node and rank that measured it.
  std::string host;
  std::optional<int> rank;
};
void to_json(json& j, const result& r);
void from_json(const json& j, result& r);

// Reading a result back: a metric's median; an axis as text (strings as they are, other values as
// JSON writes them) or as a number. nullopt when the result has no such metric or axis.
[[nodiscard]] std::optional<double> metric_median(const result& r, std::string_view metric);
[[nodiscard]] const metric_summary* find_metric(const result& r, std::string_view metric);
[[nodiscard]] std::optional<std::string> axis_text(const json& axes, std::string_view name);
// A GPU pair axis ("SRC>DST", p2p.copy's `pair`): two different non-negative indices, or nullopt
// for anything else (a results file is input, never trusted).
[[nodiscard]] std::optional<std::pair<int, int>> parse_gpu_pair(std::string_view text);
// The unit and direction a results document gives a benchmark's metric (every result of one
// benchmark declares a metric alike); nullopt where no result of it has the metric.
[[nodiscard]] std::optional<metric_unit> declared_unit(const results_document& doc,
                                                       std::string_view id,
                                                       std::string_view metric);
[[nodiscard]] std::optional<double> axis_number(const json& axes, std::string_view name);

struct run_meta {
  std::string version;
  std::string git;
  std::vector<std::string> argv;
  std::string started;
  std::string finished;
  std::string build_type;
  std::string compiler;
  std::string cuda;    // runtime version this binary was built with, "" without CUDA
  std::string driver;  // GPU driver version, "" when none
  std::string nccl;    // NCCL version linked, "" when none
  int mpi_ranks = 1;
  std::string suite;
  bool interrupted = false;
  std::vector<std::string> warnings;
};
GPUBENCH_JSON_FIELDS(run_meta, version, git, argv, started, finished, build_type, compiler, cuda,
                     driver, nccl, mpi_ranks, suite, interrupted, warnings)

// One node of a multi-rank job: its ranks and what it is.
struct node_entry {
  std::string host;
  std::vector<int> ranks;
  system_info system;
};
GPUBENCH_JSON_FIELDS(node_entry, host, ranks, system)

struct results_document {
  run_meta meta;
  system_info system;             // this process's (rank 0's) machine
  std::vector<node_entry> nodes;  // every node, in a multi-rank job; empty otherwise
  std::vector<result> results;
};
void to_json(json& j, const results_document& doc);
void from_json(const json& j, results_document& doc);

// Reads and parses a results file. Throws input_error naming the file for unreadable or
// malformed content.
[[nodiscard]] results_document read_results(const std::filesystem::path& path);
// The same for the file's text; `file` names it in messages.
[[nodiscard]] results_document parse_results_text(const std::string& text, const std::string& file);
// The same for a document already parsed.
[[nodiscard]] results_document parse_results(const json& document, const std::string& file);

// The current time as ISO-8601 UTC, "2026-11-22T11:20:39Z".
[[nodiscard]] std::string iso8601_now();

}  // namespace gpubench
