#include "gpubench/reports/prometheus.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

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

// Label values: backslash, double quote and line feed escaped, as the format requires.
std::string escape_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') {
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
    if (m.help.empty()) m.help = help;
    std::string line = name;
    if (!l.empty()) {
      line += "{";
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i > 0) line += ',';
        line.append(sanitize(l[i].first)).append("=\"").append(escape_value(l[i].second));
        line += '"';
      }
      line += "}";
    }
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
  };
  std::map<std::string, metric> metrics_;
};

std::string host_of(const results_document& doc, const result& r) {
  return !r.host.empty() ? r.host : doc.system.host;
}

}  // namespace

std::string prometheus_text(const results_document& doc) {
  exposition out;
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
      l.emplace_back(axis, value.is_string() ? value.get<std::string>() : value.dump());
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
  out.add("gpubench_info", "gpubench build and run: 1 per results file",
          {{"host", doc.system.host},
           {"version", doc.meta.version},
           {"suite", doc.meta.suite},
           {"driver", doc.meta.driver},
           {"cuda", doc.meta.cuda},
           {"nccl", doc.meta.nccl},
           {"finished", doc.meta.finished}},
          1);
  return out.text();
}

std::string prometheus_fleet_text(const json& fleet) {
  exposition out;
  out.add("gpubench_fleet_passed",
          "1 when every node passed its spec and no figure stands out (gpubench fleet)", {},
          fleet.at("passed").get<bool>() ? 1 : 0);
  for (const json& n : fleet.at("nodes")) {
    const labels l{{"host", n.at("host").get<std::string>()},
                   {"spec", n.at("spec").get<std::string>()}};
    out.add("gpubench_fleet_node_passed", "1 when the node passed every rule of its spec", l,
            n.at("verdict") == "pass" ? 1 : 0);
    out.add("gpubench_fleet_node_rules_failed", "rules of its spec the node failed", l,
            n.at("rules_failed").get<double>());
    out.add("gpubench_fleet_node_rules_missing", "rules of its spec without a measurement", l,
            n.at("rules_missing").get<double>());
  }
  for (const json& o : fleet.at("outliers")) {
    const labels l{{"host", o.at("host").get<std::string>()},
                   {"gpu", o.at("gpu").is_null() ? "" : o.at("gpu").dump()},
                   {"uuid", o.at("uuid").get<std::string>()},
                   {"figure", o.at("figure").get<std::string>()},
                   {"direction", o.at("worse").get<bool>() ? "worse" : "better"}};
    out.add("gpubench_fleet_outlier_deviation",
            "a figure that stands out: (value - fleet median) / fleet median", l,
            o.at("deviation").get<double>());
  }
  return out.text();
}

}  // namespace gpubench::reports
