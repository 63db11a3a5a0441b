// One way to read results back: which benchmark, which values its axes must have, which metric,
// and how the matching results make one figure. The model's figure sources, the report's charts
// and percent-of-peak rules, the specs' figure rules and the health rules all select through it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/results.hpp"

namespace gpubench::vocabulary {

// A condition on one axis of a result.
struct axis_filter {
  enum class match {
    equals,            // the axis has this value
    differs,           // the axis has another value, or none
    equals_or_absent,  // the axis has this value, or the benchmark has no such axis
  };
  std::string axis{};
  std::string value{};
  match how = match::equals;

  [[nodiscard]] bool accepts(const json& axes) const;
};

// "mode=stream memory!=pageable": the filters as the report and a figure's source print them.
[[nodiscard]] std::string describe(const std::vector<axis_filter>& filters);

// How the results a query matches make one figure.
enum class reduction {
  median,      // the median over the results' medians (one per GPU, per rank)
  best,        // the best result's median, as its metric's direction says
  at_largest,  // the median over the results at the largest value of `axis` (a copy size)
};

struct query {
  // Members default to empty so a table names only what it sets (designated initializers).
  std::string benchmark{};  // an id, or a family: "nccl.*"
  std::vector<axis_filter> where{};
  std::string metric{};
  reduction reduce = reduction::median;
  std::string axis{};  // reduction::at_largest's

  [[nodiscard]] bool matches_id(std::string_view id) const;
  // The id and every filter, whatever the result's status.
  [[nodiscard]] bool matches(const result& r) const;
  // A copy with one more filter (a GPU, a dtype).
  [[nodiscard]] query and_where(std::string axis_name, std::string value) const;
};

// One result a query selected, with its metric.
struct row {
  const result* from = nullptr;
  const metric_summary* metric = nullptr;
  [[nodiscard]] double value() const { return metric->median; }
};
using rows = std::vector<row>;

// Every result with status ok that the query matches and that has its metric, in file order.
[[nodiscard]] rows select(const std::vector<result>& results, const query& q);
[[nodiscard]] rows select(const results_document& doc, const query& q);
// Over a subset of a file's results (one GPU's, from an index), in the subset's order.
[[nodiscard]] rows select(const std::vector<const result*>& results, const query& q);

[[nodiscard]] std::optional<double> median_of(const rows& selected);
[[nodiscard]] std::optional<row> best_of(const rows& selected);
// The rows at the largest numeric value of `axis` (all of them where none has it).
[[nodiscard]] rows at_largest(const rows& selected, std::string_view axis);
// The rows by the text of an axis ("" where a row lacks it), or by its number (rows without a
// number left out).
[[nodiscard]] std::map<std::string, rows> group_by(const rows& selected, std::string_view axis);
[[nodiscard]] std::map<double, rows> group_by_number(const rows& selected, std::string_view axis);

// Noise: repetitions of a steady measurement spread less than this (cv, the sample standard
// deviation over the mean). Above it a measurement is noisy (a busy machine, a throttling part):
// the run warns, the report marks it and a sizing that rests on it says so (docs/methodology.md).
inline constexpr double noisy_cv = 0.10;
[[nodiscard]] bool is_noisy(const metric_summary& m);
// The largest cv among the rows: what a figure made of them is marked with.
[[nodiscard]] double worst_cv(const rows& selected);
// "cv 21.7%, above the 10% a steady measurement stays under".
[[nodiscard]] std::string noise_text(double cv);

// The query's figure: its reduction over what it selects; nullopt when nothing matched.
[[nodiscard]] std::optional<double> evaluate(const rows& selected, const query& q);
[[nodiscard]] std::optional<double> evaluate(const results_document& doc, const query& q);

}  // namespace gpubench::vocabulary
