#include "gpubench/acceptance/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "rules.hpp"

namespace gpubench::acceptance {

namespace {

namespace fs = std::filesystem;

// 1.4826 x MAD estimates the standard deviation of normally distributed figures.
constexpr double mad_to_sd = 1.4826;

struct measurement {
  std::string host;
  std::optional<int> gpu;
  std::string uuid;
  double value = 0;
  std::string unit;
  better direction = better::higher;
};

std::string family_of(const std::string& rule) {
  return rule.substr(0, rule.find(' '));
}

// Fail outranks missing, missing outranks warn and pass: a node's or a family's worst outcome.
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
  if (doc.nodes.size() > 1) {
    for (const node_entry& n : doc.nodes) hosts.push_back(n.host);
  } else {
    hosts.push_back(doc.system.host.empty() ? fs::path(file).stem().string() : doc.system.host);
  }
  return hosts;
}

void add_measurements(const results_document& doc, const std::vector<std::string>& hosts,
                      std::map<std::string, std::vector<measurement>>& figures) {
  const std::vector<detail::gpu_view> gpus = detail::gpus_of(doc);
  for (const result& r : doc.results) {
    if (r.status != result_status::ok) continue;
    const std::string host = doc.nodes.size() > 1 ? r.host : hosts.front();
    json axes = r.axes;
    std::optional<int> gpu;
    if (const auto index = axis_number(r.axes, "gpu")) {
      gpu = static_cast<int>(*index);
      axes.erase("gpu");
    }
    std::string uuid;
    for (const detail::gpu_view& g : gpus) {
      if (gpu && g.gpu->index == *gpu && (doc.nodes.size() <= 1 || g.host == host)) {
        uuid = g.gpu->uuid;
      }
    }
    const std::string where = format_axes(axes);
    for (const auto& [name, m] : r.metrics) {
      if (!std::isfinite(m.median)) continue;
      std::string key = r.id;
      if (!where.empty()) key.append(" ").append(where);
      key.append(" ").append(name);
      figures[key].push_back({host, gpu, uuid, m.median, m.unit.unit, m.unit.direction});
    }
  }
}

std::string gpu_text(const std::optional<int>& gpu) {
  return gpu ? "GPU " + std::to_string(*gpu) : std::string("node");
}

std::string percent(double share) {
  std::string text = share > 0 ? "+" : "";
  return text.append(format_number(share * 100)).append("%");
}

}  // namespace

std::string outcome_text(const rule_outcome& o) {
  return o.rule + " " + o.subject + ": " + upper_case(to_string(o.status)) +
         (o.measured.empty() ? "" : ", " + o.measured) +
         (o.floor.empty() ? "" : ", floor " + o.floor) +
         (o.detail.empty() ? "" : " (" + o.detail + ")");
}

std::string failures_line(const fleet_node& n, bool names_only) {
  std::vector<std::string> parts;
  for (const rule_outcome& o : n.failures) {
    parts.push_back(names_only ? o.rule + " " + o.subject : outcome_text(o));
  }
  if (!n.missing_rules.empty()) {
    parts.push_back(std::to_string(n.missing_rules.size()) + " rule(s) lack a measurement");
  }
  return join(parts, "; ");
}

bool fleet_report::passed() const {
  return !nodes.empty() && outliers.empty() &&
         std::all_of(nodes.begin(), nodes.end(),
                     [](const fleet_node& n) { return n.verdict == rule_status::pass; });
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
      const std::size_t before = inputs.size();
      for (const std::string& file : found) {
        // A folder may hold other JSON (watch.json, a fleet's own output): only results count.
        std::ifstream in(file);
        const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
        if (doc.is_object() && doc.value("schema", "") == "gpubench.results/1") {
          inputs.push_back({file, parse_results(doc, file)});
        }
      }
      if (inputs.size() == before) {
        throw input_error(path + ": no gpubench.results/1 file in this folder");
      }
    } else if (fs::is_regular_file(path, ec)) {
      inputs.push_back({path, read_results(path)});
    } else {
      throw input_error(path + ": no such results file or folder");
    }
  }
  return inputs;
}

fleet_report check_fleet(const std::vector<fleet_input>& inputs,
                         const std::optional<std::string>& spec, const fleet_settings& settings) {
  fleet_report report;
  report.settings = settings;
  std::map<std::string, acceptance::spec> specs;
  std::map<std::string, std::vector<measurement>> figures;
  for (const auto& [file, doc] : inputs) {
    const std::vector<std::string> hosts = hosts_of(doc, file);
    std::vector<fleet_node> nodes(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      nodes[i].host = hosts[i];
      nodes[i].file = file;
    }
    std::string why_not;
    const std::optional<std::string> name = spec ? spec : spec_for(doc, why_not);
    if (!name) {
      std::string note = file;
      note.append(": no spec applies (").append(why_not).append(")");
      report.spec_notes.push_back(std::move(note));
      for (fleet_node& n : nodes) {
        n.verdict = rule_status::missing;
        n.missing_rules.push_back("no spec applies: " + why_not);
      }
    } else {
      if (!specs.contains(*name)) specs.emplace(*name, load_spec(*name));
      const validation v = validate(doc, file, specs.at(*name));
      for (const rule_outcome& o : v.rules) {
        // A subject names its node in a multi-node file ("node-b GPU 3"); the rest is the file's
        // first node's (machine-level rules, single-node files).
        fleet_node* node = &nodes.front();
        for (fleet_node& n : nodes) {
          if (o.subject.starts_with(n.host + " ")) node = &n;
        }
        node->spec_name = v.spec_name;
        if (o.status == rule_status::not_applicable) continue;
        const std::string family = family_of(o.rule);
        if (std::find(report.families.begin(), report.families.end(), family) ==
            report.families.end()) {
          report.families.push_back(family);
        }
        rule_status& worst = node->families.try_emplace(family, rule_status::pass).first->second;
        if (severity(o.status) > severity(worst)) worst = o.status;
        if (severity(o.status) > severity(node->verdict)) node->verdict = o.status;
        if (o.status == rule_status::fail) {
          node->failures.push_back(o);
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
    add_measurements(doc, hosts, figures);
    report.nodes.insert(report.nodes.end(), nodes.begin(), nodes.end());
  }

  for (const auto& [figure, values] : figures) {
    if (values.size() < settings.min_members) continue;
    std::vector<double> v;
    v.reserve(values.size());
    for (const measurement& m : values) v.push_back(m.value);
    const double median = summarize(v).median;  // v: min_members or more finite values
    if (median == 0) continue;
    ++report.figures_compared;
    std::vector<double> distance;
    distance.reserve(v.size());
    for (const double x : v) distance.push_back(std::abs(x - median));
    const double spread = mad_to_sd * summarize(distance).median / std::abs(median);
    const double threshold = std::max(settings.min_deviation, settings.mad_multiple * spread);
    for (const measurement& m : values) {
      const double deviation = (m.value - median) / median;
      if (std::abs(deviation) <= threshold) continue;
      report.outliers.push_back(
          {m.host, m.gpu, m.uuid, figure, m.unit, m.value, median, deviation, threshold,
           values.size(), m.direction == better::higher ? m.value < median : m.value > median});
    }
  }
  std::stable_sort(report.outliers.begin(), report.outliers.end(),
                   [](const fleet_outlier& a, const fleet_outlier& b) {
                     return std::abs(a.deviation) > std::abs(b.deviation);
                   });
  return report;
}

json to_json(const fleet_report& f) {
  json nodes = json::array();
  for (const fleet_node& n : f.nodes) {
    json families = json::object();
    for (const auto& [family, status] : n.families) families[family] = to_string(status);
    json failures = json::array();
    for (const rule_outcome& o : n.failures) failures.push_back(outcome_text(o));
    nodes.push_back({{"host", n.host},
                     {"file", n.file},
                     {"spec", n.spec_name},
                     {"verdict", to_string(n.verdict)},
                     {"rules_passed", n.passed},
                     {"rules_failed", n.failures.size()},
                     {"rules_missing", n.missing_rules.size()},
                     {"families", families},
                     {"failures", failures},
                     {"missing", n.missing_rules}});
  }
  json outliers = json::array();
  for (const fleet_outlier& o : f.outliers) {
    outliers.push_back({{"host", o.host},
                        {"gpu", o.gpu ? json(*o.gpu) : json()},
                        {"uuid", o.uuid},
                        {"figure", o.figure},
                        {"unit", o.unit},
                        {"value", o.value},
                        {"fleet_median", o.fleet_median},
                        {"deviation", o.deviation},
                        {"threshold", o.threshold},
                        {"members", o.members},
                        {"worse", o.worse}});
  }
  return {{"schema", "gpubench.fleet/1"},
          {"passed", f.passed()},
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

std::string to_text(const fleet_report& f) {
  const auto failing = std::count_if(f.nodes.begin(), f.nodes.end(), [](const fleet_node& n) {
    return n.verdict != rule_status::pass;
  });
  std::string out = std::string(f.passed() ? "PASS" : "FAIL") + ": " +
                    std::to_string(f.nodes.size()) + " nodes, " +
                    std::to_string(static_cast<long>(f.nodes.size()) - failing) +
                    " pass their spec, " + std::to_string(failing) + " do not; " +
                    std::to_string(f.outliers.size()) + " figure(s) stand out of " +
                    std::to_string(f.figures_compared) + " compared across the fleet\n\n";
  std::vector<std::string> header{"NODE", "SPEC", "VERDICT"};
  for (const std::string& family : f.families) header.push_back(upper_case(family));
  text_table nodes(header);
  for (const fleet_node& n : f.nodes) {
    std::vector<std::string> row{n.host, n.spec_name.empty() ? "-" : n.spec_name,
                                 upper_case(to_string(n.verdict))};
    for (const std::string& family : f.families) {
      const auto it = n.families.find(family);
      row.push_back(it == n.families.end() ? "-" : upper_case(to_string(it->second)));
    }
    nodes.add_row(row);
  }
  out += nodes.render();
  for (const std::string& note : f.spec_notes) out += "note: " + note + "\n";
  // Failures one per line; rules that lack a measurement only counted (the table shows their
  // families, --json lists them), and nodes that lack the same ones share a line, so a rack of
  // nodes run with the same suite stays readable.
  std::vector<std::pair<const std::vector<std::string>*, std::vector<std::string>>> missing;
  for (const fleet_node& n : f.nodes) {
    for (const rule_outcome& o : n.failures) out += n.host + ": " + outcome_text(o) + "\n";
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
      table.add_row({o.host, gpu_text(o.gpu), o.figure, detail::with_unit(o.value, o.unit),
                     detail::with_unit(o.fleet_median, o.unit), percent(o.deviation),
                     format_number(o.threshold * 100) + "%", o.worse ? "worse" : "better"});
    }
    out += table.render();
  }
  return out;
}

std::string to_csv(const fleet_report& f) {
  std::string out =
      "kind,host,gpu,uuid,subject,verdict,value,fleet_median,deviation_pct,threshold_pct,unit,"
      "detail\n";
  const auto row = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(cells[i]);
    }
    out += "\n";
  };
  for (const fleet_node& n : f.nodes) {
    row({"node", n.host, "", "", n.spec_name, std::string(to_string(n.verdict)), "", "", "", "", "",
         failures_line(n, false)});
  }
  for (const fleet_outlier& o : f.outliers) {
    row({"outlier", o.host, o.gpu ? std::to_string(*o.gpu) : "", o.uuid, o.figure,
         o.worse ? "worse" : "better", format_number(o.value, 6), format_number(o.fleet_median, 6),
         format_number(o.deviation * 100, 4), format_number(o.threshold * 100, 4), o.unit, ""});
  }
  return out;
}

}  // namespace gpubench::acceptance
