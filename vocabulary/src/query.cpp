#include "gpubench/vocabulary/query.hpp"

#include <algorithm>

#include "gpubench/core/format.hpp"
#include "gpubench/core/statistics.hpp"

namespace gpubench::vocabulary {

bool axis_filter::accepts(const json& axes) const {
  const auto actual = axis_text(axes, axis);
  switch (how) {
    case match::equals:
      return actual && *actual == value;
    case match::differs:
      return !actual || *actual != value;
    case match::equals_or_absent:
      return !actual || *actual == value;
  }
  return false;
}

std::string describe(const std::vector<axis_filter>& filters) {
  std::string text;
  for (const axis_filter& f : filters) {
    if (!text.empty()) text += ' ';
    text += f.axis + (f.how == axis_filter::match::differs ? "!=" : "=") + f.value;
  }
  return text;
}

bool query::matches_id(std::string_view id) const {
  if (benchmark.ends_with(".*")) {
    const std::string_view family = std::string_view(benchmark).substr(0, benchmark.size() - 1);
    return id.starts_with(family);
  }
  return id == benchmark;
}

bool query::matches(const result& r) const {
  return matches_id(r.id) && std::all_of(where.begin(), where.end(),
                                         [&](const axis_filter& f) { return f.accepts(r.axes); });
}

query query::and_where(std::string axis_name, std::string value) const {
  query narrower = *this;
  narrower.where.push_back({std::move(axis_name), std::move(value), axis_filter::match::equals});
  return narrower;
}

rows select(const std::vector<result>& results, const query& q) {
  rows out;
  for (const result& r : results) {
    if (r.status != result_status::ok || !q.matches(r)) continue;
    if (const metric_summary* m = find_metric(r, q.metric)) out.push_back({&r, m});
  }
  return out;
}

rows select(const results_document& doc, const query& q) {
  return select(doc.results, q);
}

rows select(const std::vector<const result*>& results, const query& q) {
  rows out;
  for (const result* r : results) {
    if (r->status != result_status::ok || !q.matches(*r)) continue;
    if (const metric_summary* m = find_metric(*r, q.metric)) out.push_back({r, m});
  }
  return out;
}

bool is_noisy(const metric_summary& m) {
  return m.n >= 2 && m.cv > noisy_cv;
}

double worst_cv(const rows& selected) {
  double worst = 0;
  for (const row& r : selected) {
    if (r.metric->n >= 2) worst = std::max(worst, r.metric->cv);
  }
  return worst;
}

std::string noise_text(double cv) {
  return "cv " + format_number(cv * 100) + "%, above the " + format_number(noisy_cv * 100) +
         "% a steady measurement stays under";
}

std::optional<double> median_of(const rows& selected) {
  if (selected.empty()) return std::nullopt;
  std::vector<double> values;
  values.reserve(selected.size());
  for (const row& r : selected) values.push_back(r.value());
  return summarize(values).median;
}

std::optional<row> best_of(const rows& selected) {
  std::optional<row> best;
  for (const row& r : selected) {
    if (!best || better_of(r.metric->unit.direction, best->value(), r.value()) != best->value()) {
      best = r;
    }
  }
  return best;
}

rows at_largest(const rows& selected, std::string_view axis) {
  const auto by_number = group_by_number(selected, axis);
  return by_number.empty() ? selected : by_number.rbegin()->second;
}

std::map<std::string, rows> group_by(const rows& selected, std::string_view axis) {
  std::map<std::string, rows> out;
  for (const row& r : selected) out[axis_text(r.from->axes, axis).value_or("")].push_back(r);
  return out;
}

std::map<double, rows> group_by_number(const rows& selected, std::string_view axis) {
  std::map<double, rows> out;
  for (const row& r : selected) {
    if (const auto v = axis_number(r.from->axes, axis)) out[*v].push_back(r);
  }
  return out;
}

std::optional<double> evaluate(const rows& selected, const query& q) {
  switch (q.reduce) {
    case reduction::median:
      return median_of(selected);
    case reduction::best: {
      const auto best = best_of(selected);
      return best ? std::optional<double>(best->value()) : std::nullopt;
    }
    case reduction::at_largest:
      return median_of(at_largest(selected, q.axis));
  }
  return std::nullopt;
}

std::optional<double> evaluate(const results_document& doc, const query& q) {
  return evaluate(select(doc, q), q);
}

}  // namespace gpubench::vocabulary
