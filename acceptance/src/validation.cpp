// Validation: a results file against a spec; its verdict, JSON and text.
#include <algorithm>
#include <map>
#include <ostream>
#include <unordered_map>

#include "gpubench/core/format.hpp"
#include "gpubench/core/parallel.hpp"
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

vocabulary::verdict verdict_of(rule_status status) {
  switch (status) {
    case rule_status::fail:
    case rule_status::missing:
      return vocabulary::verdict::fail;
    case rule_status::warn:
      return vocabulary::verdict::warn;
    case rule_status::pass:
    case rule_status::not_applicable:
      break;
  }
  return vocabulary::verdict::pass;
}

std::string named_subject(const rule_outcome& o) {
  return o.pci_bus_id.empty() ? o.subject : o.subject + " (" + o.pci_bus_id + ")";
}

std::string outcome_text(const rule_outcome& o) {
  return o.rule + " " + named_subject(o) + ": " + upper_case(to_string(o.status)) +
         (o.measured.empty() ? "" : ", " + o.measured) +
         (o.floor.empty() ? "" : ", floor " + o.floor) +
         (o.detail.empty() ? "" : " (" + o.detail + ")");
}

validation::status_counts validation::counts() const {
  status_counts out;
  for (const rule_outcome& r : rules) ++out.of.at(static_cast<std::size_t>(r.status));
  return out;
}

vocabulary::verdict validation::result_of(const status_counts& counted) const {
  const bool any_checked = rules.size() > counted[rule_status::not_applicable];
  vocabulary::verdict worst = any_checked ? vocabulary::verdict::pass : vocabulary::verdict::fail;
  for (std::size_t s = 0; s < counted.of.size(); ++s) {
    if (counted.of.at(s) > 0) {
      worst = vocabulary::worst(worst, acceptance::verdict_of(static_cast<rule_status>(s)));
    }
  }
  return worst;
}

bool validation::passed() const {
  return vocabulary::accepted(result());
}

namespace {

// "hbm copy GPU 2 (0000:3a:00.0) 1480 GB/s", the first `most` of the rules with these statuses
// (in the order given), then how many more.
std::string named_rules(const rule_outcomes& rules, const validation::status_counts& counted,
                        std::initializer_list<rule_status> statuses, std::size_t most) {
  // How many of each status are named (the first statuses first), found in one pass over the
  // rules that stops once it has them.
  std::vector<std::size_t> need;
  std::size_t left = most;
  std::size_t total = 0;
  for (const rule_status status : statuses) {
    need.push_back(std::min(counted[status], left));
    left -= need.back();
    total += counted[status];
  }
  std::size_t outstanding = most - left;
  std::vector<std::vector<const rule_outcome*>> first(statuses.size());
  for (auto r = rules.begin(); r != rules.end() && outstanding > 0; ++r) {
    const auto at = std::find(statuses.begin(), statuses.end(), r->status);
    if (at == statuses.end()) continue;
    const auto i = static_cast<std::size_t>(at - statuses.begin());
    if (first[i].size() == need[i]) continue;
    first[i].push_back(&*r);
    --outstanding;
  }
  std::vector<std::string> what;
  for (std::size_t i = 0; i < first.size(); ++i) {
    for (const rule_outcome* r : first[i]) {
      what.push_back(r->rule + " " + named_subject(*r) +
                     (r->status == rule_status::missing ? " not measured"
                      : r->measured.empty()             ? ""
                                                        : " " + r->measured));
    }
  }
  if (total > what.size()) what.push_back("and " + std::to_string(total - what.size()) + " more");
  return join(what, "; ");
}

}  // namespace

std::string validation::verdict_of(const status_counts& counted) const {
  const std::string against =
      spec_name.empty() ? std::string("the fleet baseline") : "spec " + spec_name;
  const std::size_t checked = rules.size() - counted[rule_status::not_applicable];
  if (checked == 0) return "FAIL: no rule of " + against + " applies to these results";
  const std::size_t warned = counted[rule_status::warn];
  const std::string warnings =
      warned == 0 ? std::string()
                  : "; " + std::to_string(warned) + (warned == 1 ? " warning: " : " warnings: ") +
                        named_rules(rules, counted, {rule_status::warn}, 4);
  const vocabulary::verdict v = result_of(counted);
  const std::string text = upper_case(to_string(v)) + ": ";
  if (v != vocabulary::verdict::fail) {
    return text + std::to_string(checked) + " rules against " + against + warnings;
  }
  return text + std::to_string(counted[rule_status::fail]) + " failed, " +
         std::to_string(counted[rule_status::missing]) + " not measured, of " +
         std::to_string(checked) + " rules against " + against + ": " +
         named_rules(rules, counted, {rule_status::fail, rule_status::missing}, 4) + warnings;
}

validation validate(const results_document& doc, const std::string& file, const spec& s) {
  validation v;
  v.results_file = file;
  v.spec_name = s.name;
  v.spec_file = s.file;
  const std::vector<detail::gpu_view> gpus = detail::gpus_of(doc);
  const detail::results_index index(doc);
  detail::check_health(s.health, doc, index, v.rules);
  for (const figure_rule& rule : s.figures)
    detail::check_figure(rule, doc, index, gpus.size(), v.rules);
  // A GPU is named by its bus id as well as its index: the index is CUDA's order on that boot,
  // the bus id is the slot a technician pulls the card from.
  // One lookup per outcome: a fleet's merged file holds 100,000 GPUs and ten rules each.
  std::unordered_map<std::string, const gpu_info*> by_subject;
  by_subject.reserve(gpus.size());
  for (const detail::gpu_view& g : gpus) by_subject[g.subject()] = g.gpu;  // the last one wins
  auto& chunks = v.rules.chunks();
  parallel_for(chunks.size(), 8, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      for (rule_outcome& o : chunks[c]) {
        if (o.gpu) continue;  // named where it was made (detail::name_gpu)
        if (const auto it = by_subject.find(o.subject); it != by_subject.end()) {
          o.gpu = it->second->index;
          o.pci_bus_id = it->second->pci_bus_id;
        }
      }
    }
  });
  return v;
}

namespace {

// One outcome as JSON. Built as an object's members in place rather than from an initializer
// list, which copies every value twice: a fleet's validation holds a million outcomes, and the
// initializer lists took half of its 12 s for 100,000 GPUs (docs/reliability.md, "At fleet scale").
json outcome_json(const rule_outcome& r) {
  json out = json::object();
  json::object_t& o = out.get_ref<json::object_t&>();
  o.reserve(13);
  const auto add = [&o](const char* key, json value) { o.emplace_back(key, std::move(value)); };
  add("rule", r.rule);
  add("subject", r.subject);
  add("status", to_string(r.status));
  add("measured", r.measured);
  add("expected", r.expected);
  add("floor", r.floor);
  add("measured_value", r.measured_value);
  add("expected_value", r.expected_value);
  add("floor_value", r.floor_value);
  add("unit", r.unit);
  add("detail", r.detail);
  add("gpu", r.gpu ? json(*r.gpu) : json());
  add("pci_bus_id", r.pci_bus_id.empty() ? json() : json(r.pci_bus_id));
  return out;
}

// Everything but the outcomes, whose member is left an empty array.
json head_json(const validation& v) {
  const validation::status_counts counted = v.counts();
  json counts = json::object();
  for (rule_status s : {rule_status::pass, rule_status::fail, rule_status::warn,
                        rule_status::missing, rule_status::not_applicable}) {
    counts[std::string(to_string(s))] = counted[s];
  }
  return json{
      {"schema", validation_schema},
      {"results", v.results_file},
      {"spec", v.spec_name.empty() ? json() : json{{"name", v.spec_name}, {"file", v.spec_file}}},
      {"baseline", v.baseline_files},
      {"passed", vocabulary::accepted(v.result_of(counted))},
      {"result", v.result_of(counted)},
      {"verdict", v.verdict_of(counted)},
      {"counts", counts},
      {"rules", json::array()}};
}

}  // namespace

json to_json(const validation& v) {
  json out = head_json(v);
  json::array_t& rules = out["rules"].get_ref<json::array_t&>();
  rules.reserve(v.rules.size());
  for (const rule_outcome& r : v.rules) rules.push_back(outcome_json(r));
  return out;
}

void write_json(std::ostream& out, const validation& v, int indent) {
  write_json_text(
      out, head_json(v), "rules", v.rules.size(),
      [&v](std::size_t i) { return outcome_json(v.rules[i]); }, indent);
}

std::size_t rule_tally::of(rule_status status) const {
  const auto it = count.find(status);
  return it == count.end() ? 0 : it->second;
}

std::vector<rule_tally> tally_rules(const rule_outcomes& rules) {
  std::vector<rule_tally> out;
  std::unordered_map<std::string, std::size_t> at;  // rule name -> its place in `out`
  for (const rule_outcome& r : rules) {
    auto [it, added] = at.try_emplace(r.rule, out.size());
    if (added) {
      out.emplace_back();
      out.back().rule = r.rule;
    }
    rule_tally& t = out[it->second];
    ++t.subjects;
    ++t.count[r.status];
    if (!r.measured_value) continue;
    if (t.lowest == nullptr || *r.measured_value < *t.lowest->measured_value) t.lowest = &r;
    if (t.highest == nullptr || *r.measured_value > *t.highest->measured_value) t.highest = &r;
  }
  return out;
}

const std::vector<std::string>& tally_header() {
  static const std::vector<std::string> header{"rule",    "subjects", "pass",   "warn",   "fail",
                                               "missing", "n/a",      "lowest", "highest"};
  return header;
}

std::vector<std::string> tally_cells(const rule_tally& t) {
  const auto extreme = [](const rule_outcome* r) {
    return r == nullptr ? std::string() : r->measured + " (" + named_subject(*r) + ")";
  };
  return {t.rule,
          std::to_string(t.subjects),
          std::to_string(t.of(rule_status::pass)),
          std::to_string(t.of(rule_status::warn)),
          std::to_string(t.of(rule_status::fail)),
          std::to_string(t.of(rule_status::missing)),
          std::to_string(t.of(rule_status::not_applicable)),
          extreme(t.lowest),
          extreme(t.highest)};
}

std::string to_text(const validation& v) {
  std::string out = "validate " + v.results_file;
  if (!v.spec_name.empty()) out += " against spec " + v.spec_name;
  if (!v.baseline_files.empty()) {
    out += (v.spec_name.empty() ? " against" : " and") + std::string(" a baseline of ") +
           std::to_string(v.baseline_files.size()) + " results files";
  }
  out += "\n\n";
  // A node's rules are a table a person reads. A fleet's merged file has a million: they are
  // counted per rule instead, and those that did not pass are listed below in full either way.
  if (counted_per_rule(v)) {
    std::vector<std::string> header;
    for (const std::string& h : tally_header()) header.push_back(upper_case(h));
    text_table table(std::move(header));
    for (const rule_tally& t : tally_rules(v.rules)) table.add_row(tally_cells(t));
    out += table.render();
  } else {
    text_table table({"RULE", "SUBJECT", "MEASURED", "EXPECTED", "FLOOR", "RESULT", "DETAIL"});
    for (const rule_outcome& r : v.rules) {
      table.add_row({r.rule, r.subject, r.measured, r.expected, r.floor,
                     upper_case(to_string(r.status)), r.detail});
    }
    out += table.render();
  }
  // Every failure and warning in full above the verdict, so none hides among the passing rows.
  // Failures, then those missing, then warnings: in one pass over the rules.
  std::array<std::vector<const rule_outcome*>, 3> named;
  for (const rule_outcome& r : v.rules) {
    if (r.status == rule_status::fail) named[0].push_back(&r);
    if (r.status == rule_status::missing) named[1].push_back(&r);
    if (r.status == rule_status::warn) named[2].push_back(&r);
  }
  const std::size_t shown = named[0].size() + named[1].size() + named[2].size();
  if (shown > 0) {
    out += "\nFailures and warnings (" + std::to_string(shown) + "):\n";
    for (const auto& of_status : named) {
      for (const rule_outcome* r : of_status) out += "  " + outcome_text(*r) + "\n";
    }
  }
  out += '\n';
  out += v.verdict();
  out += '\n';
  return out;
}

}  // namespace gpubench::acceptance
