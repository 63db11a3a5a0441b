// The siblings rule: each GPU of a node held to the node's other GPUs, figure by figure, with
// the statistic `gpubench fleet` holds a fleet's GPUs to (outliers.hpp). A GPU 13% slower than
// its seven siblings is above the SKU's floor, yet it slows every job that waits for it.
#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "outliers.hpp"
#include "rules.hpp"

namespace gpubench::acceptance::detail {

namespace {

const std::string rule_name = "siblings";

// One figure of one GPU, held to the median of the node's GPUs; the figure and its value are
// those add_measurements collected (a fleet's file holds 100,000 GPUs: nothing is copied).
struct held {
  const std::string* figure = nullptr;
  const measurement* value = nullptr;
  spread s;
  std::size_t members = 0;
  [[nodiscard]] const measurement& m() const { return *value; }
};

std::string held_text(const held& h) {
  return *h.figure + " " + signed_percent(deviation(h.m(), h.s)) + " (" +
         with_unit(h.m().value, h.m().unit) + ", median of " + std::to_string(h.members) +
         " GPUs " + with_unit(h.s.median, h.m().unit) + ", threshold " +
         format_number(h.s.threshold * 100) + "%)";
}

// The outcome of one GPU: its figures that stand out named, furthest first; its worst one as
// the measured value.
rule_outcome judge(const sibling_rule& rule, const std::string& subject,
                   std::vector<held> figures) {
  std::stable_sort(figures.begin(), figures.end(), [](const held& a, const held& b) {
    return std::abs(deviation(a.m(), a.s)) > std::abs(deviation(b.m(), b.s));
  });
  std::vector<const held*> out;
  bool any_worse = false;
  for (const held& h : figures) {
    if (!stands_out(h.m(), h.s)) continue;
    out.push_back(&h);
    any_worse = any_worse || worse(h.m(), h.s);
  }
  const held& shown = out.empty() ? figures.front() : *out.front();
  rule_outcome o;
  o.rule = rule_name;
  o.subject = subject;
  o.status = out.empty() ? rule_status::pass : any_worse ? rule.worse : rule_status::warn;
  o.unit = shown.m().unit;
  o.measured_value = shown.m().value;
  o.expected_value = shown.s.median;
  const bool lower = shown.m().direction == better::lower;
  o.floor_value = shown.s.median * (lower ? 1 + shown.s.threshold : 1 - shown.s.threshold);
  o.expected = "median of " + std::to_string(shown.members) + " GPUs";
  o.floor = "within " + format_number(shown.s.threshold * 100) + "%";
  if (out.empty()) {
    o.measured = std::to_string(figures.size()) + " figures within their threshold";
    o.detail = "furthest: " + held_text(shown);
    return o;
  }
  o.measured = *shown.figure + " " + signed_percent(deviation(shown.m(), shown.s));
  std::vector<std::string> named;
  named.reserve(out.size());
  for (const held* h : out) named.push_back(held_text(*h));
  o.detail = std::string(any_worse ? "slower than its siblings: " : "faster than its siblings: ") +
             join(named, "; ");
  return o;
}

}  // namespace

void read_siblings(const json_reader& h, const std::string& key, const model::hardware_profile*,
                   health_rules& out) {
  const json_reader r = h.member(key);
  r.expect_object({"min_deviation", "mad_multiple", "min_gpus", "worse"});
  sibling_rule rule;
  rule.settings.min_deviation = r.find_number("min_deviation", 0, 10).value_or(0.05);
  rule.settings.mad_multiple = r.find_number("mad_multiple", 0, 100).value_or(4);
  rule.settings.min_members =
      static_cast<std::size_t>(r.find_int("min_gpus", 3, 1 << 16).value_or(3));
  const std::string worse = r.find_string("worse").value_or("fail");
  if (worse != "fail" && worse != "warn") r.fail("worse", "\"fail\" or \"warn\"");
  rule.worse = worse == "fail" ? rule_status::fail : rule_status::warn;
  out.siblings = rule;
}

void check_siblings(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (!h.siblings) return;
  const sibling_rule& rule = *h.siblings;
  figure_values figures;
  add_measurements(doc, "", figures);
  // Per node, per GPU: every figure that enough of the node's GPUs measured.
  std::map<std::pair<std::string_view, int>, std::vector<held>> per_gpu;
  for (const auto& [figure, values] : figures) {
    std::map<std::string_view, std::vector<const measurement*>> by_node;
    for (const measurement& m : values) {
      if (m.gpu) by_node[m.host].push_back(&m);
    }
    for (const auto& [node, members] : by_node) {
      // One value per GPU: a figure measured twice on a GPU is not a sibling of itself.
      std::set<int> seen;
      std::vector<double> node_values;
      for (const measurement* m : members) {
        seen.insert(*m->gpu);
        node_values.push_back(m->value);
      }
      if (seen.size() != members.size()) continue;
      const auto s = spread_of(std::move(node_values), rule.settings);
      if (!s) continue;
      for (const measurement* m : members) {
        per_gpu[{node, *m->gpu}].push_back({&figure, m, *s, members.size()});
      }
    }
  }
  if (per_gpu.empty()) {
    out.push_back(simple(rule_name, "machine", rule_status::not_applicable, "", "",
                         "needs a figure measured on " + std::to_string(rule.settings.min_members) +
                             " or more GPUs of a node; the run had " +
                             std::to_string(gpus_of(doc).size()) + " GPUs"));
    return;
  }
  const std::vector<gpu_view> gpus = gpus_of(doc);
  outcomes_in_order(
      gpus.size(),
      [&](std::size_t i, std::vector<rule_outcome>& part) {
        const auto it = per_gpu.find({gpus[i].host, gpus[i].gpu->index});
        if (it == per_gpu.end()) return;
        part.push_back(judge(rule, gpus[i].subject(), it->second));
        name_gpu(part.back(), gpus[i]);
      },
      out);
}

}  // namespace gpubench::acceptance::detail
