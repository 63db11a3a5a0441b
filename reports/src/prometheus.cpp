#include "gpubench/reports/prometheus.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "gpubench/reports/run_time.hpp"
#include "gpubench/vocabulary/verdicts.hpp"

namespace gpubench::reports {

namespace {

// [a-zA-Z_:][a-zA-Z0-9_:]* for names, [a-zA-Z_][a-zA-Z0-9_]* for labels: anything else
// becomes '_', upper case lower ("hbm.copy" "GBps" -> "hbm_copy" "gbps").
std::string sanitize(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '_';
  }
  if (out.empty() || (out.front() >= '0' && out.front() <= '9')) return '_' + out;
  return out;
}

// The format's escapes: backslash and line feed in HELP text (so a name with a line feed in a
// results file cannot start a line of its own), and the double quote too in label values.
std::string escaped(std::string_view text, bool quotes) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || (quotes && c == '"')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

using labels = std::vector<std::pair<std::string, std::string>>;

// The format wants every sample of a metric together under one HELP and TYPE: samples are
// gathered per name first, then written.
class exposition {
 public:
  void add(const std::string& name, const std::string& help, const labels& l, double value) {
    auto& m = metrics_[name];
    if (m.help.empty()) m.help = escaped(help, false);
    std::string line = name;
    if (!l.empty()) {
      line += "{";
      std::set<std::string> used;
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i > 0) line += ',';
        // Each label once: a second of one name (two axes that sanitize alike) is numbered.
        const std::string base = sanitize(l[i].first);
        std::string label = base;
        for (int n = 2; !used.insert(label).second; ++n) label = base + "_" + std::to_string(n);
        line.append(label).append("=\"").append(escaped(l[i].second, true));
        line += '"';
      }
      line += "}";
    }
    // One sample per label set, as the format requires: a case a results file holds twice is
    // exported once, the first time.
    if (!m.series.insert(line).second) return;
    line.append(" ").append(number(value));
    m.samples.push_back(std::move(line));
  }

  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& [name, m] : metrics_) {
      out.append("# HELP ").append(name).append(" ").append(m.help);
      out.append("\n# TYPE ").append(name).append(" gauge\n");
      for (const std::string& s : m.samples) out.append(s).append("\n");
    }
    return out;
  }

 private:
  struct metric {
    std::string help;
    std::vector<std::string> samples;
    std::set<std::string> series;  // the name and labels of each sample
  };
  std::map<std::string, metric> metrics_;
};

std::string host_of(const results_document& doc, const result& r) {
  return !r.host.empty() ? r.host : doc.system.host;
}

constexpr const char* verdict_help = "0 pass, 1 warn, 2 fail";

// The verdict of a validation, its rule counts, and one series per rule that did not pass.
void add_validation(exposition& out, const std::string& host, const acceptance::validation& v) {
  const labels l{{"host", host}, {"spec", v.spec_name}};
  out.add(
      "gpubench_verdict",
      std::string("the results' verdict against their spec (gpubench validate): ") + verdict_help,
      l, static_cast<double>(v.result()));
  using acceptance::rule_status;
  const acceptance::validation::status_counts tally = v.counts();
  for (const rule_status s : {rule_status::pass, rule_status::warn, rule_status::fail,
                              rule_status::missing, rule_status::not_applicable}) {
    labels counted = l;
    counted.emplace_back(
        "status", s == rule_status::not_applicable ? "not_applicable" : std::string(to_string(s)));
    out.add("gpubench_rules", "rules of the spec by their outcome", counted,
            static_cast<double>(tally[s]));
  }
  for (const acceptance::rule_outcome& r : v.rules) {
    const vocabulary::verdict verdict = acceptance::verdict_of(r.status);
    if (verdict == vocabulary::verdict::pass) continue;
    labels named = l;
    named.emplace_back("rule", r.rule);
    named.emplace_back("subject", r.subject);
    named.emplace_back("gpu", r.gpu ? std::to_string(*r.gpu) : "");
    named.emplace_back("pci_bus_id", r.pci_bus_id);
    named.emplace_back("status", std::string(to_string(r.status)));
    out.add("gpubench_rule_verdict",
            std::string("a rule the results did not pass, by name: ") + verdict_help, named,
            static_cast<double>(verdict));
  }
}

}  // namespace

std::string prometheus_text(const results_document& doc, const acceptance::validation* validation) {
  exposition out;
  if (validation != nullptr) add_validation(out, doc.system.host, *validation);
  std::map<std::pair<std::string, std::string>, double> statuses;  // (benchmark, status) -> n
  for (const result& r : doc.results) {
    const std::string host = host_of(doc, r);
    const std::string status = r.status == result_status::ok        ? "ok"
                               : r.status == result_status::skipped ? "skipped"
                                                                    : "failed";
    statuses[{r.id, status}] += 1;
    if (r.status != result_status::ok) continue;
    labels l{{"host", host}};
    if (r.axes.contains("gpu")) {
      const int index = r.axes.at("gpu").get<int>();
      l.emplace_back("gpu", std::to_string(index));
      const system_info* machine = &doc.system;  // the node that measured it, in a multi-node run
      for (const node_entry& n : doc.nodes) {
        if (n.host == host) machine = &n.system;
      }
      for (const gpu_info& g : machine->gpus) {
        if (g.index == index) l.emplace_back("uuid", g.uuid);
      }
    }
    for (const auto& [axis, value] : r.axes.items()) {
      if (axis == "gpu") continue;
      // An axis may not pose as the labels gpubench sets, nor take a name the format reserves.
      const std::string label = sanitize(axis);
      const bool taken =
          label == "host" || label == "gpu" || label == "uuid" || label.starts_with("__");
      l.emplace_back(taken ? "axis_" + label : axis,
                     value.is_string() ? value.get<std::string>() : json_text(value));
    }
    for (const auto& [name, m] : r.metrics) {
      out.add("gpubench_" + sanitize(r.id) + "_" + sanitize(name),
              "gpubench " + r.id + " " + name + ", median over repetitions" +
                  (m.unit.unit.empty() ? "" : " (" + m.unit.unit + ")") +
                  (m.unit.direction == better::higher ? ", higher is better" : ", lower is better"),
              l, m.median);
    }
  }
  for (const auto& [key, count] : statuses) {
    out.add("gpubench_results", "gpubench results per benchmark and status (ok, skipped, failed)",
            {{"host", doc.system.host}, {"benchmark", key.first}, {"status", key.second}}, count);
  }
  // The run's time is a value, not a label: a label that changes every run starts a new series
  // each time, and a value can be alerted on (time() - gpubench_run_timestamp_seconds > 2 days).
  out.add("gpubench_info", "gpubench build and run: 1 per results file",
          {{"host", doc.system.host},
           {"version", doc.meta.version},
           {"suite", doc.meta.suite},
           {"driver", doc.meta.driver},
           {"cuda", doc.meta.cuda},
           {"nccl", doc.meta.nccl}},
          1);
  if (const auto end = run_end_seconds(doc.meta)) {
    out.add("gpubench_run_timestamp_seconds",
            "when the run ended (meta.finished), in seconds since the Unix epoch",
            {{"host", doc.system.host}}, *end);
  }
  if (const auto took = run_seconds(doc.meta)) {
    out.add("gpubench_run_duration_seconds", "how long the run took (meta.finished - started)",
            {{"host", doc.system.host}}, *took);
  }
  return out.text();
}

namespace {

// A verdict as its number (vocabulary::verdict: 0 pass, 1 warn, 2 fail). A fleet file from
// before warnings were counted says "missing" for a node that lacks a measurement: a failure.
double verdict_number(const json& word) {
  const auto v = vocabulary::verdict_from_string(word.is_string() ? word.get<std::string>() : "");
  return static_cast<double>(v.value_or(vocabulary::verdict::fail));
}

void add_node(exposition& out, const json& n) {
  const labels l{{"host", n.at("host").get<std::string>()},
                 {"spec", n.at("spec").get<std::string>()}};
  const double verdict = verdict_number(n.at("verdict"));
  out.add("gpubench_fleet_node_verdict",
          std::string("the node's verdict: ") + verdict_help +
              " (the worst of its spec's rules and of its figures that stand out)",
          l, verdict);
  out.add("gpubench_fleet_node_passed",
          "1 when the node's verdict is pass or warn (gpubench validate exits 0)", l,
          verdict < 2 ? 1 : 0);
  out.add("gpubench_fleet_node_warned", "1 when the node's verdict is warn", l,
          verdict == 1 ? 1 : 0);
  out.add("gpubench_fleet_node_rules_failed", "rules of its spec the node failed", l,
          n.at("rules_failed").get<double>());
  out.add("gpubench_fleet_node_rules_missing", "rules of its spec without a measurement", l,
          n.at("rules_missing").get<double>());
  out.add("gpubench_fleet_node_rules_warned", "rules of its spec that warned", l,
          n.value("rules_warned", 0.0));
  out.add("gpubench_fleet_node_outliers", "the node's figures that stand out from the fleet", l,
          n.value("outliers", 0.0));
  if (const auto end = unix_seconds(n.value("finished", std::string()))) {
    out.add("gpubench_fleet_node_run_timestamp_seconds",
            "when the node's run ended, in seconds since the Unix epoch", l, *end);
  }
  // Each failure and warning by name, so an alert says which rule of which GPU.
  for (const json& f : n.value("findings", json::array())) {
    labels named = l;
    named.emplace_back("rule", f.at("rule").get<std::string>());
    named.emplace_back("subject", f.at("subject").get<std::string>());
    named.emplace_back("gpu", f.at("gpu").is_null() ? "" : f.at("gpu").dump());
    named.emplace_back("pci_bus_id",
                       f.at("pci_bus_id").is_null() ? "" : f.at("pci_bus_id").get<std::string>());
    named.emplace_back("status", f.at("status").get<std::string>());
    // A rule's own status (fail, missing, warn) is a label; its value the verdict it gives.
    const bool warned = f.at("status") == "warn";
    out.add("gpubench_fleet_node_rule_verdict",
            std::string("a rule the node did not pass, by name: ") + verdict_help, named,
            warned ? 1 : 2);
  }
}

}  // namespace

std::string prometheus_fleet_text(const json& fleet) {
  exposition out;
  const double verdict = fleet.contains("verdict")        ? verdict_number(fleet.at("verdict"))
                         : fleet.at("passed").get<bool>() ? 0
                                                          : 2;
  out.add("gpubench_fleet_passed",
          "1 when the fleet's verdict is pass or warn (gpubench fleet exits 0)", {},
          verdict < 2 ? 1 : 0);
  out.add("gpubench_fleet_verdict",
          std::string("the fleet's verdict, the worst of its nodes': ") + verdict_help, {},
          verdict);
  std::map<vocabulary::verdict, double> per_verdict{{vocabulary::verdict::pass, 0},
                                                    {vocabulary::verdict::warn, 0},
                                                    {vocabulary::verdict::fail, 0}};
  for (const json& n : fleet.at("nodes")) {
    per_verdict[static_cast<vocabulary::verdict>(verdict_number(n.at("verdict")))] += 1;
    add_node(out, n);
  }
  for (const auto& [v, count] : per_verdict) {
    out.add("gpubench_fleet_nodes", "nodes with each verdict (pass, warn, fail)",
            {{"verdict", std::string(to_string(v))}}, count);
  }
  for (const json& o : fleet.at("outliers")) {
    const labels l{{"host", o.at("host").get<std::string>()},
                   {"gpu", o.at("gpu").is_null() ? "" : o.at("gpu").dump()},
                   {"uuid", o.at("uuid").get<std::string>()},
                   {"pci_bus_id", o.value("pci_bus_id", std::string())},
                   {"figure", o.at("figure").get<std::string>()},
                   {"direction", o.at("worse").get<bool>() ? "worse" : "better"}};
    out.add("gpubench_fleet_outlier_deviation",
            "a figure that stands out: (value - fleet median) / fleet median", l,
            o.at("deviation").get<double>());
  }
  return out.text();
}

}  // namespace gpubench::reports
