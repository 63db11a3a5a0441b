#include "gpubench/acceptance/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gpubench/core/detail/results_fast.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/text.hpp"
#include "outliers.hpp"
#include "rules.hpp"

namespace gpubench::acceptance {

namespace {

namespace fs = std::filesystem;

std::string family_of(const std::string& rule) {
  return rule.substr(0, rule.find(' '));
}

// Fail outranks missing, missing outranks warn and pass: a family's worst outcome, in the rules'
// own words (a MISSING cell says more than FAIL; the node's verdict is a vocabulary::verdict).
int severity(rule_status s) {
  switch (s) {
    case rule_status::fail:
      return 3;
    case rule_status::missing:
      return 2;
    case rule_status::warn:
      return 1;
    default:
      return 0;
  }
}

// The hosts of a results file: every node of a multi-node run, else the machine's own name.
std::vector<std::string> hosts_of(const results_document& doc, const std::string& file) {
  std::vector<std::string> hosts;
  for (const detail::machine_view& m : detail::machines_of(doc)) {
    hosts.push_back(m.host                   ? *m.host
                    : m.system->host.empty() ? fs::path(file).stem().string()
                                             : m.system->host);
  }
  return hosts;
}

std::string gpu_text(const fleet_outlier& o) {
  if (!o.gpu) return "node";
  return "GPU " + std::to_string(*o.gpu) + (o.pci_bus_id.empty() ? "" : " (" + o.pci_bus_id + ")");
}

}  // namespace

std::string failures_line(const fleet_node& n, bool names_only) {
  std::vector<std::string> parts = n.problems;
  for (const auto* list : {&n.failures, &n.warnings}) {
    for (const rule_outcome& o : *list) {
      parts.push_back(names_only ? o.rule + " " + named_subject(o) +
                                       (o.status == rule_status::warn ? " (warn)" : "")
                                 : outcome_text(o));
    }
  }
  if (!n.missing_rules.empty()) {
    parts.push_back(std::to_string(n.missing_rules.size()) + " rule(s) lack a measurement");
  }
  if (n.outliers > 0) {
    parts.push_back(std::to_string(n.outliers) + " figure(s) stand out from the fleet");
  }
  return join(parts, "; ");
}

vocabulary::verdict fleet_outlier::verdict() const {
  return worse ? vocabulary::verdict::fail : vocabulary::verdict::warn;
}

vocabulary::verdict fleet_report::result() const {
  vocabulary::verdict v = nodes.empty() ? vocabulary::verdict::fail : vocabulary::verdict::pass;
  for (const fleet_node& n : nodes) v = vocabulary::worst(v, n.verdict);
  return v;
}

bool fleet_report::passed() const {
  return vocabulary::accepted(result());
}

std::size_t fleet_report::count(vocabulary::verdict v) const {
  return static_cast<std::size_t>(std::count_if(
      nodes.begin(), nodes.end(), [v](const fleet_node& n) { return n.verdict == v; }));
}

std::vector<fleet_input> read_fleet(const std::vector<std::string>& paths) {
  std::vector<fleet_input> inputs;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      bool any_results = false;
      for (const std::string& file : found) {
        // Every .json of the folder is a node's results or a fault of the fleet's own: a
        // truncated, unreadable or other-schema file is named and fails the fleet.
        fleet_input input{file, {}, ""};
        try {
          const std::string text = read_json_file_text(file);
          // A results file as gpubench writes it is read fast; anything else is looked at.
          if (auto fast = gpubench::detail::parse_results_fast(text, file)) {
            input.doc = std::move(*fast);
          } else {
            const json doc = parse_json_text(text, file);
            const std::string schema =
                doc.is_object() && doc.contains("schema") && doc.at("schema").is_string()
                    ? doc.at("schema").get<std::string>()
                    : "";
            if (schema != results_schema) {
              input.unusable = "not a gpubench.results/1 file (schema '" + schema + "')";
            } else {
              input.doc = parse_results(doc, file);
            }
          }
          any_results = any_results || input.unusable.empty();
        } catch (const input_error& e) {
          input.unusable = e.what();
        }
        inputs.push_back(std::move(input));
      }
      if (!any_results) {
        // Name the .json files that were there and why each is not one, as a fleet with good
        // files beside them would.
        std::vector<std::string> why;
        const std::size_t first = inputs.size() - found.size();
        for (std::size_t i = first; i < inputs.size() && why.size() < 3; ++i) {
          const std::string& reason = inputs[i].unusable;
          why.push_back(reason.rfind(inputs[i].file, 0) == 0 ? reason
                                                             : inputs[i].file + ": " + reason);
        }
        if (found.size() > why.size()) {
          why.push_back("and " + std::to_string(found.size() - why.size()) + " more");
        }
        throw input_error(path + ": no gpubench.results/1 file in this folder" +
                          (why.empty() ? std::string() : " (" + join(why, "; ") + ")"));
      }
    } else if (fs::is_regular_file(path, ec)) {
      inputs.push_back({path, read_results(path), ""});
    } else {
      throw input_error(path + ": no such results file or folder");
    }
  }
  return inputs;
}

namespace {

// Each outcome of a node's validation to the node its subject names: "node-b GPU 3" in a
// multi-node file; the rest (machine-level rules, single-node files) to the file's first node.
void add_outcomes(const validation& v, std::vector<fleet_node>& nodes,
                  std::vector<std::string>& families) {
  for (const rule_outcome& o : v.rules) {
    fleet_node* node = &nodes.front();
    for (fleet_node& n : nodes) {
      if (o.subject.starts_with(n.host + " ")) node = &n;
    }
    node->spec_name = v.spec_name;
    if (o.status == rule_status::not_applicable) continue;
    const std::string family = family_of(o.rule);
    if (std::find(families.begin(), families.end(), family) == families.end()) {
      families.push_back(family);
    }
    rule_status& worst = node->families.try_emplace(family, rule_status::pass).first->second;
    if (severity(o.status) > severity(worst)) worst = o.status;
    node->verdict = vocabulary::worst(node->verdict, verdict_of(o.status));
    if (o.status == rule_status::fail) {
      node->failures.push_back(o);
    } else if (o.status == rule_status::warn) {
      node->warnings.push_back(o);
    } else if (o.status == rule_status::missing) {
      node->missing_rules.push_back(outcome_text(o));
    } else {
      ++node->passed;
    }
  }
  for (fleet_node& n : nodes) {
    if (n.spec_name.empty()) n.spec_name = v.spec_name;
  }
}

// Every figure measured min_members times or more, each value against the fleet's median.
void add_outliers(const detail::figure_values& figures, fleet_report& report) {
  for (const auto& [figure, values] : figures) {
    const auto spread = detail::spread_of(values, report.settings);
    if (!spread) continue;
    ++report.figures_compared;
    for (const detail::measurement& m : values) {
      if (!detail::stands_out(m, *spread)) continue;
      report.outliers.push_back({m.host, m.gpu, m.gpu_entry != nullptr ? m.gpu_entry->uuid : "",
                                 m.gpu_entry != nullptr ? m.gpu_entry->pci_bus_id : "", figure,
                                 m.unit, m.value, spread->median, detail::deviation(m, *spread),
                                 spread->threshold, values.size(), detail::worse(m, *spread)});
    }
  }
  std::stable_sort(report.outliers.begin(), report.outliers.end(),
                   [](const fleet_outlier& a, const fleet_outlier& b) {
                     return std::abs(a.deviation) > std::abs(b.deviation);
                   });
  // A node's figure that stands out is part of the node's verdict, so the node that needs a
  // look is counted and sorted with those that failed or warned.
  for (const fleet_outlier& o : report.outliers) {
    for (fleet_node& n : report.nodes) {
      if (n.host != o.host) continue;
      ++n.outliers;
      n.verdict = vocabulary::worst(n.verdict, o.verdict());
    }
  }
}

}  // namespace

fleet_report check_fleet(const std::vector<fleet_input>& inputs,
                         const std::optional<std::string>& spec, const fleet_settings& settings) {
  fleet_report report;
  report.settings = settings;
  std::map<std::string, acceptance::spec> specs;
  detail::figure_values figures;
  std::map<std::string, std::string> file_of_host;  // the first file each host name came from
  for (const auto& [file, doc, unusable] : inputs) {
    if (!unusable.empty()) {
      fleet_node broken;
      broken.host = file;
      broken.file = file;
      broken.verdict = vocabulary::verdict::fail;
      broken.problems.push_back("not a readable results file: " + unusable);
      report.nodes.push_back(std::move(broken));
      continue;
    }
    const std::vector<std::string> hosts = hosts_of(doc, file);
    std::vector<fleet_node> nodes(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      nodes[i].host = hosts[i];
      nodes[i].file = file;
      nodes[i].finished = doc.meta.finished;
    }
    std::string why_not;
    const std::optional<std::string> name = spec ? spec : spec_for(doc, why_not);
    if (!name) {
      std::string note = file;
      note.append(": no spec applies (").append(why_not).append(")");
      report.spec_notes.push_back(std::move(note));
      for (fleet_node& n : nodes) {
        n.verdict = vocabulary::verdict::fail;
        n.missing_rules.push_back("no spec applies: " + why_not);
      }
    } else {
      if (!specs.contains(*name)) specs.emplace(*name, load_spec(*name));
      add_outcomes(validate(doc, file, specs.at(*name)), nodes, report.families);
    }
    // Two files of one host name: one node measured twice, or two nodes named alike; either way
    // the fleet cannot say which is which.
    for (fleet_node& n : nodes) {
      const auto [first, fresh] = file_of_host.emplace(n.host, file);
      if (!fresh && first->second != file) {
        n.verdict = vocabulary::verdict::fail;
        n.problems.push_back("its host name is also " + first->second + "'s");
      }
    }
    detail::add_measurements(doc, hosts.front(), figures);
    report.nodes.insert(report.nodes.end(), nodes.begin(), nodes.end());
  }
  add_outliers(figures, report);
  // The nodes that need a look first: failed, then warned, each in the order given.
  std::stable_sort(report.nodes.begin(), report.nodes.end(),
                   [](const fleet_node& a, const fleet_node& b) { return a.verdict > b.verdict; });
  return report;
}

namespace {

json outcome_json(const rule_outcome& o) {
  return {{"rule", o.rule},
          {"subject", o.subject},
          {"status", to_string(o.status)},
          {"gpu", o.gpu ? json(*o.gpu) : json()},
          {"pci_bus_id", o.pci_bus_id.empty() ? json() : json(o.pci_bus_id)},
          {"text", outcome_text(o)}};
}

}  // namespace

json to_json(const fleet_report& f) {
  json nodes = json::array();
  for (const fleet_node& n : f.nodes) {
    json families = json::object();
    for (const auto& [family, status] : n.families) families[family] = to_string(status);
    json failures = json::array();
    json warnings = json::array();
    json findings = json::array();
    for (const rule_outcome& o : n.failures) {
      failures.push_back(outcome_text(o));
      findings.push_back(outcome_json(o));
    }
    for (const rule_outcome& o : n.warnings) {
      warnings.push_back(outcome_text(o));
      findings.push_back(outcome_json(o));
    }
    nodes.push_back({{"host", n.host},
                     {"file", n.file},
                     {"spec", n.spec_name},
                     {"finished", n.finished},
                     {"verdict", n.verdict},
                     {"rules_passed", n.passed},
                     {"rules_failed", n.failures.size()},
                     {"rules_warned", n.warnings.size()},
                     {"rules_missing", n.missing_rules.size()},
                     {"outliers", n.outliers},
                     {"families", families},
                     {"failures", failures},
                     {"warnings", warnings},
                     {"findings", findings},
                     {"missing", n.missing_rules},
                     {"problems", n.problems}});
  }
  json outliers = json::array();
  for (const fleet_outlier& o : f.outliers) {
    outliers.push_back({{"host", o.host},
                        {"gpu", o.gpu ? json(*o.gpu) : json()},
                        {"uuid", o.uuid},
                        {"pci_bus_id", o.pci_bus_id},
                        {"figure", o.figure},
                        {"unit", o.unit},
                        {"value", o.value},
                        {"fleet_median", o.fleet_median},
                        {"deviation", o.deviation},
                        {"threshold", o.threshold},
                        {"members", o.members},
                        {"worse", o.worse},
                        {"verdict", o.verdict()}});
  }
  json counts = json::object();
  for (const auto v :
       {vocabulary::verdict::pass, vocabulary::verdict::warn, vocabulary::verdict::fail}) {
    counts[std::string(to_string(v))] = f.count(v);
  }
  return {{"schema", "gpubench.fleet/1"},
          {"passed", f.passed()},
          {"verdict", f.result()},
          {"node_counts", counts},
          {"settings",
           {{"min_deviation", f.settings.min_deviation},
            {"mad_multiple", f.settings.mad_multiple},
            {"min_members", f.settings.min_members}}},
          {"families", f.families},
          {"figures_compared", f.figures_compared},
          {"notes", f.spec_notes},
          {"nodes", nodes},
          {"outliers", outliers}};
}

std::string summary_line(const fleet_report& f) {
  const std::size_t worse = static_cast<std::size_t>(std::count_if(
      f.outliers.begin(), f.outliers.end(), [](const fleet_outlier& o) { return o.worse; }));
  return upper_case(to_string(f.result())) + ": " + std::to_string(f.nodes.size()) + " nodes, " +
         std::to_string(f.count(vocabulary::verdict::pass)) + " pass, " +
         std::to_string(f.count(vocabulary::verdict::warn)) + " warn, " +
         std::to_string(f.count(vocabulary::verdict::fail)) + " fail; " +
         std::to_string(f.outliers.size()) + " figure(s) stand out (" + std::to_string(worse) +
         " worse) of " + std::to_string(f.figures_compared) + " compared across the fleet";
}

std::string to_text(const fleet_report& f) {
  std::string out = summary_line(f) + "\n\n";
  std::vector<std::string> header{"NODE", "SPEC", "VERDICT"};
  for (const std::string& family : f.families) header.push_back(upper_case(family));
  header.emplace_back("OUTLIERS");
  text_table nodes(header);
  for (const fleet_node& n : f.nodes) {
    std::vector<std::string> row{n.host, n.spec_name.empty() ? "-" : n.spec_name,
                                 upper_case(to_string(n.verdict))};
    for (const std::string& family : f.families) {
      const auto it = n.families.find(family);
      row.push_back(it == n.families.end() ? "-" : upper_case(to_string(it->second)));
    }
    row.push_back(n.outliers == 0 ? "-" : std::to_string(n.outliers));
    nodes.add_row(row);
  }
  out += nodes.render();
  for (const std::string& note : f.spec_notes) out += "note: " + note + "\n";
  // Failures and warnings one per line, the nodes in the table's order; rules that lack a
  // measurement only counted (the table shows their families, --json lists them), and nodes
  // that lack the same ones share a line, so a rack of nodes run with the same suite stays
  // readable.
  std::vector<std::pair<const std::vector<std::string>*, std::vector<std::string>>> missing;
  for (const fleet_node& n : f.nodes) {
    for (const std::string& problem : n.problems) out += n.host + ": " + problem + "\n";
    for (const auto* list : {&n.failures, &n.warnings}) {
      for (const rule_outcome& o : *list) out += n.host + ": " + outcome_text(o) + "\n";
    }
    if (n.missing_rules.empty()) continue;
    const auto same = std::find_if(missing.begin(), missing.end(),
                                   [&n](const auto& m) { return *m.first == n.missing_rules; });
    if (same == missing.end()) {
      missing.push_back({&n.missing_rules, {n.host}});
    } else {
      same->second.push_back(n.host);
    }
  }
  for (const auto& [rules, hosts] : missing) {
    out += hosts.size() == 1 ? hosts.front()
                             : std::to_string(hosts.size()) + " nodes (" + join(hosts, ", ") + ")";
    out += ": " + std::to_string(rules->size()) + " rule(s) lack a measurement" +
           (hosts.size() > 1 ? ", the same on each" : "") + " (--json lists them)\n";
  }
  if (!f.outliers.empty()) {
    out +=
        "\nStand out from the fleet (furthest first; median of the same figure over the "
        "fleet, threshold max(" +
        format_number(f.settings.min_deviation * 100) + "%, " +
        format_number(f.settings.mad_multiple) + " x 1.4826 x MAD)):\n";
    text_table table({"NODE", "GPU", "FIGURE", "VALUE", "FLEET MEDIAN", "OFF", "THRESHOLD", ""});
    for (const fleet_outlier& o : f.outliers) {
      table.add_row({o.host, gpu_text(o), o.figure, detail::with_unit(o.value, o.unit),
                     detail::with_unit(o.fleet_median, o.unit), detail::signed_percent(o.deviation),
                     format_number(o.threshold * 100) + "%", o.worse ? "worse" : "better"});
    }
    out += table.render();
  }
  return out;
}

std::string to_csv(const fleet_report& f) {
  std::string out =
      "kind,host,gpu,uuid,subject,verdict,value,fleet_median,deviation_pct,threshold_pct,unit,"
      "detail,pci_bus_id\n";
  const auto row = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(cells[i]);
    }
    out += "\n";
  };
  for (const fleet_node& n : f.nodes) {
    row({"node", n.host, "", "", n.spec_name, std::string(to_string(n.verdict)), "", "", "", "", "",
         failures_line(n, false), ""});
  }
  for (const fleet_outlier& o : f.outliers) {
    row({"outlier", o.host, o.gpu ? std::to_string(*o.gpu) : "", o.uuid, o.figure,
         o.worse ? "worse" : "better", format_number(o.value, 6), format_number(o.fleet_median, 6),
         format_number(o.deviation * 100, 4), format_number(o.threshold * 100, 4), o.unit, "",
         o.pci_bus_id});
  }
  return out;
}

}  // namespace gpubench::acceptance
