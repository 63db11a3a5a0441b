// Figure rules: a measured figure against a floor (a ceiling where lower is better), the best
// value per GPU, GPU pair or machine.
#include <algorithm>

#include "rules.hpp"

namespace gpubench::acceptance::detail {

figure_rule read_figure_rule(const json_reader& r, const model::hardware_profile* catalog) {
  r.expect_object({"name", "benchmark", "axes", "metric", "per", "expected", "source", "floor",
                   "min_gpus", "ranks"});
  figure_rule rule;
  rule.name = r.get_string("name");
  rule.benchmark = r.get_string("benchmark");
  rule.metric = r.get_string("metric");
  rule.per = r.find_string("per").value_or("gpu");
  if (rule.per != "gpu" && rule.per != "pair" && rule.per != "machine") {
    r.fail("per", "gpu, pair or machine");
  }
  if (r.has("axes")) {
    const json_reader axes = r.member("axes");
    if (!axes.node().is_object()) axes.fail_here("an object of axis values");
    for (const auto& [name, value] : axes.node().items()) {
      const json_reader v(value, r.file(), json_path(axes.path(), name));
      if (value.is_string()) {
        rule.axes[name] = value.get<std::string>();
      } else if (value.is_number_integer()) {
        rule.axes[name] = value.dump();
      } else {
        v.fail_here("a string or an integer");
      }
    }
  }
  rule.expected = read_expectation(r, "expected", catalog, 1e9);
  rule.floor = r.find_number("floor", 0.01, 1.0).value_or(0.9);
  rule.min_gpus = static_cast<int>(r.find_int("min_gpus", 1, 1 << 20).value_or(1));
  if (const auto ranks = r.find_int("ranks", 1, 1 << 20)) rule.ranks = static_cast<int>(*ranks);
  return rule;
}

void check_figure(const figure_rule& rule, const results_document& doc, std::size_t gpu_count,
                  std::vector<rule_outcome>& out) {
  if (gpu_count > 0 && static_cast<int>(gpu_count) < rule.min_gpus) {
    out.push_back(simple(rule.name, "machine", rule_status::not_applicable, "", "",
                         "needs " + std::to_string(rule.min_gpus) + " GPUs; the run had " +
                             std::to_string(gpu_count)));
    return;
  }
  std::map<std::string, double> best;  // subject -> best value
  std::map<std::string, std::string> failures;
  // The unit and direction the results carry (the benchmark's declaration), also where no result
  // matches the rule's axes.
  metric_unit unit = declared_unit(doc, rule.benchmark, rule.metric).value_or(metric_unit{});
  for (const result& r : doc.results) {
    if (r.id != rule.benchmark || !axes_match(r, rule.axes)) continue;
    if (rule.ranks) {
      const auto ranks = r.info.find("ranks");
      if (ranks == r.info.end() || !ranks->is_number() || ranks->get<int>() != *rule.ranks) {
        continue;
      }
    }
    std::string subject;
    const std::string host = host_of(r, doc);
    if (rule.per == "gpu") {
      subject = "GPU " + axis_text(r.axes, "gpu").value_or("?");
    } else if (rule.per == "pair") {
      subject = "GPUs " + axis_text(r.axes, "pair").value_or("?");
    } else {
      subject = "machine";
    }
    if (!host.empty()) subject.insert(0, host + " ");
    if (r.status == result_status::failed) {
      failures[subject] = r.error;
      continue;
    }
    const metric_summary* metric = find_metric(r, rule.metric);
    if (r.status != result_status::ok || metric == nullptr) continue;
    auto [it, fresh] = best.emplace(subject, metric->median);
    if (!fresh) it->second = better_of(unit.direction, it->second, metric->median);
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
                         rule.benchmark + " " + why_not_measured(doc, rule.benchmark)));
    return;
  }
  for (const auto& [subject, value] : best) {
    out.push_back(against_floor(rule.name, subject, value, rule.expected, rule.floor, unit.unit,
                                unit.direction));
  }
}

}  // namespace gpubench::acceptance::detail
