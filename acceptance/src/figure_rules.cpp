// Figure rules: a measured figure against a floor (a ceiling where lower is better), the best
// value per GPU, GPU pair or machine.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "rules.hpp"

namespace gpubench::acceptance::detail {

figure_rule read_figure_rule(const json_reader& r, const model::hardware_profile* catalog) {
  r.expect_object({"name", "benchmark", "axes", "metric", "per", "expected", "source", "floor",
                   "min_gpus", "ranks"});
  figure_rule rule;
  rule.name = r.get_string("name");
  rule.measured.benchmark = r.get_string("benchmark");
  rule.measured.metric = r.get_string("metric");
  rule.per = r.find_string("per").value_or("gpu");
  if (rule.per != "gpu" && rule.per != "pair" && rule.per != "machine") {
    r.fail("per", "gpu, pair or machine");
  }
  if (r.has("axes")) {
    const json_reader axes = r.member("axes");
    if (!axes.node().is_object()) axes.fail_here("an object of axis values");
    for (const auto& [name, value] : axes.node().items()) {
      const json_reader v(value, r.file(), json_path(axes.path(), name));
      if (!value.is_string() && !value.is_number_integer()) v.fail_here("a string or an integer");
      rule.measured.where.push_back(
          {.axis = name, .value = value.is_string() ? value.get<std::string>() : value.dump()});
    }
  }
  rule.expected = read_expectation(r, "expected", catalog, 1e9);
  rule.floor = r.find_number("floor", 0.01, 1.0).value_or(0.9);
  rule.min_gpus = static_cast<int>(r.find_int("min_gpus", 1, 1 << 20).value_or(1));
  if (const auto ranks = r.find_int("ranks", 1, 1 << 20)) rule.ranks = static_cast<int>(*ranks);
  return rule;
}

void check_figure(const figure_rule& rule, const results_document& doc, const results_index& index,
                  std::size_t gpu_count, rule_outcomes& out) {
  if (gpu_count > 0 && static_cast<int>(gpu_count) < rule.min_gpus) {
    out.push_back(simple(rule.name, "machine", rule_status::not_applicable, "", "",
                         "needs " + std::to_string(rule.min_gpus) + " GPUs; the run had " +
                             std::to_string(gpu_count)));
    return;
  }
  const vocabulary::query& q = rule.measured;
  // The unit and direction the results carry (the benchmark's declaration), also where no result
  // matches the rule's axes.
  const metric_unit unit = declared_unit(doc, q.benchmark, q.metric).value_or(metric_unit{});
  const auto over_ranks = [&](const result& r) {
    if (!rule.ranks) return true;
    return r.info.view()["ranks"].number() == *rule.ranks;
  };
  const auto subject_of = [&](const result& r) {
    std::string subject = rule.per == "gpu"    ? "GPU " + axis_text(r.axes, "gpu").value_or("?")
                          : rule.per == "pair" ? "GPUs " + axis_text(r.axes, "pair").value_or("?")
                                               : std::string("machine");
    const std::string host = host_of(r, doc);
    return host.empty() ? subject : host + " " + subject;
  };
  // Only this benchmark's results are read: a fleet's file holds 100,000 of each of several.
  const std::vector<const result*> candidates = index.of_benchmark(q.benchmark);
  std::map<std::string, std::string> failures;  // subject -> why its benchmark failed
  for (const result* r : candidates) {
    if (r->status == result_status::failed && q.matches(*r) && over_ranks(*r)) {
      failures[subject_of(*r)] = r->error;
    }
  }
  std::map<std::string, double> best;  // subject -> best value
  for (const vocabulary::row& row : vocabulary::select(candidates, q)) {
    if (!over_ranks(*row.from)) continue;
    auto [it, fresh] = best.emplace(subject_of(*row.from), row.value());
    if (!fresh) it->second = better_of(unit.direction, it->second, row.value());
  }
  for (const auto& [subject, error] : failures) {
    if (best.count(subject) != 0) continue;
    out.push_back(simple(rule.name, subject, rule_status::fail, "",
                         with_unit(rule.expected.value, unit.unit),
                         "the benchmark failed: " + error));
  }
  if (best.empty() && failures.empty()) {
    out.push_back(simple(rule.name, "machine", rule_status::missing, "",
                         with_unit(rule.expected.value, unit.unit),
                         q.benchmark + " " + index.why_not_measured(q.benchmark)));
    return;
  }
  const std::vector<std::pair<std::string, double>> judged(best.begin(), best.end());
  outcomes_in_order(
      judged.size(),
      [&](std::size_t i, std::vector<rule_outcome>& part) {
        part.push_back(against_floor(rule.name, judged[i].first, judged[i].second, rule.expected,
                                     rule.floor, unit.unit, unit.direction));
      },
      out);
}

}  // namespace gpubench::acceptance::detail
