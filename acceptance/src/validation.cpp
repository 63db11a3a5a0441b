// Validation: a results file against a spec; its verdict, JSON and text.
#include <algorithm>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "rules.hpp"

namespace gpubench::acceptance {

std::string_view to_string(rule_status status) {
  switch (status) {
    case rule_status::pass:
      return "pass";
    case rule_status::fail:
      return "fail";
    case rule_status::warn:
      return "warn";
    case rule_status::missing:
      return "missing";
    case rule_status::not_applicable:
      return "n/a";
  }
  return "?";
}

bool validation::passed() const {
  const bool any_checked = rules.size() > count(rule_status::not_applicable);
  return any_checked && count(rule_status::fail) == 0 && count(rule_status::missing) == 0;
}

std::size_t validation::count(rule_status status) const {
  return static_cast<std::size_t>(std::count_if(
      rules.begin(), rules.end(), [&](const rule_outcome& r) { return r.status == status; }));
}

std::string validation::verdict() const {
  const std::string against =
      spec_name.empty() ? std::string("the fleet baseline") : "spec " + spec_name;
  const std::size_t checked = rules.size() - count(rule_status::not_applicable);
  if (passed()) {
    std::string text = "PASS: " + std::to_string(checked) + " rules against " + against;
    if (count(rule_status::warn) > 0) {
      text += " (" + std::to_string(count(rule_status::warn)) + " warnings)";
    }
    return text;
  }
  if (checked == 0) return "FAIL: no rule of " + against + " applies to these results";
  std::vector<std::string> what;
  for (const rule_outcome& r : rules) {
    if (r.status != rule_status::fail && r.status != rule_status::missing) continue;
    if (what.size() == 4) {
      what.emplace_back("...");
      break;
    }
    what.push_back(r.rule + " " + r.subject +
                   (r.status == rule_status::missing ? " not measured" : ": " + r.measured));
  }
  return "FAIL: " + std::to_string(count(rule_status::fail)) + " failed, " +
         std::to_string(count(rule_status::missing)) + " not measured, of " +
         std::to_string(checked) + " rules against " + against + " (" + join(what, "; ") + ")";
}

validation validate(const results_document& doc, const std::string& file, const spec& s) {
  validation v;
  v.results_file = file;
  v.spec_name = s.name;
  v.spec_file = s.file;
  const std::size_t gpu_count = detail::gpus_of(doc).size();
  detail::check_health(s.health, doc, v.rules);
  for (const figure_rule& rule : s.figures) detail::check_figure(rule, doc, gpu_count, v.rules);
  return v;
}

json to_json(const validation& v) {
  json rules = json::array();
  for (const rule_outcome& r : v.rules) {
    rules.push_back(json{{"rule", r.rule},
                         {"subject", r.subject},
                         {"status", to_string(r.status)},
                         {"measured", r.measured},
                         {"expected", r.expected},
                         {"floor", r.floor},
                         {"measured_value", r.measured_value},
                         {"expected_value", r.expected_value},
                         {"floor_value", r.floor_value},
                         {"unit", r.unit},
                         {"detail", r.detail}});
  }
  json counts = json::object();
  for (rule_status s : {rule_status::pass, rule_status::fail, rule_status::warn,
                        rule_status::missing, rule_status::not_applicable}) {
    counts[std::string(to_string(s))] = v.count(s);
  }
  return json{
      {"schema", validation_schema},
      {"results", v.results_file},
      {"spec", v.spec_name.empty() ? json() : json{{"name", v.spec_name}, {"file", v.spec_file}}},
      {"baseline", v.baseline_files},
      {"passed", v.passed()},
      {"verdict", v.verdict()},
      {"counts", counts},
      {"rules", rules}};
}

std::string to_text(const validation& v) {
  std::string out = "validate " + v.results_file;
  if (!v.spec_name.empty()) out += " against spec " + v.spec_name;
  if (!v.baseline_files.empty()) {
    out += (v.spec_name.empty() ? " against" : " and") + std::string(" a baseline of ") +
           std::to_string(v.baseline_files.size()) + " results files";
  }
  out += "\n\n";
  text_table table({"RULE", "SUBJECT", "MEASURED", "EXPECTED", "FLOOR", "RESULT", "DETAIL"});
  for (const rule_outcome& r : v.rules) {
    table.add_row({r.rule, r.subject, r.measured, r.expected, r.floor,
                   upper_case(to_string(r.status)), r.detail});
  }
  out += table.render();
  out += '\n';
  out += v.verdict();
  out += '\n';
  return out;
}

}  // namespace gpubench::acceptance
