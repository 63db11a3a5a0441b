#include "gpubench/watch/page.hpp"

#include <map>

#include "gpubench/core/format.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/svg.hpp"
#include "gpubench/watch/sampler.hpp"

namespace gpubench::watch {

namespace {

using reports::series;

// One line per named part, y read from each sample by `value` (nothing drawn where it is null).
template <typename Parts>
std::vector<series> timelines(const std::vector<json>& samples, Parts parts) {
  std::map<std::string, series> by_name;
  for (const json& sample : samples) {
    const double t = sample.at("t").get<double>();
    for (const auto& [name, y] : parts(sample)) {
      series& s = by_name[name];
      s.name = name;
      s.points.emplace_back(t, y);
    }
  }
  std::vector<series> out;
  out.reserve(by_name.size());
  for (auto& [name, s] : by_name) out.push_back(std::move(s));
  return out;
}

using points = std::vector<std::pair<std::string, double>>;

}  // namespace

std::string render_page(const json& summary_doc, const std::vector<json>& samples) {
  reports::html_page page("gpubench watch");
  page.heading(1, "gpubench watch");
  const json& verdict = summary_doc.at("verdict");
  std::string target = summary_doc.contains("command") ? summary_doc.at("command").dump()
                                                       : "pid " + summary_doc.at("pid").dump();
  page.raw("<p id=\"watched\">" +
           reports::escape_html(
               "watched " + target + " for " +
               format_number(summary_doc.at("summary").at("duration_s").get<double>()) + " s") +
           "</p>");
  page.heading(2, "Verdict: " + verdict.at("limiting_component").get<std::string>());
  std::string list = "<ul id=\"evidence\">";
  for (const json& e : verdict.at("evidence")) {
    list += "<li>" + reports::escape_html(e.get<std::string>()) + "</li>";
  }
  list += "</ul><ul id=\"advice\">";
  for (const json& a : verdict.at("advice")) {
    list += "<li>" + reports::escape_html(a.get<std::string>()) + "</li>";
  }
  page.raw(list + "</ul>");

  page.heading(2, "Timelines");
  const auto chart = [&](const char* id, const char* title, const char* unit,
                         const std::vector<series>& lines) {
    if (lines.empty()) return;
    page.raw(reports::line_chart(id, title, lines, "seconds", unit, reports::x_scale::linear));
  };
  chart("chart-cpu", "CPU cores: used by the job, taken from its CPUs by others, allowed", "cores",
        timelines(samples, [](const json& s) {
          const json& job = s.at("job");
          points p{{"used", job.at("cpu_cores_used").get<double>()},
                   {"allowed", job.at("cpu_cores_allowed").get<double>()}};
          if (const json* c = machine_cpu(s)) {
            p.emplace_back("other processes", c->at("outside_job_cores").get<double>());
            p.emplace_back("steal", c->at("stolen_cores").get<double>());
          }
          return p;
        }));
  chart("chart-gpu", "GPU utilisation", "%", timelines(samples, [](const json& s) {
          points p;
          for (const json& g : s.at("gpus")) {
            if (g.at("utilization_percent").is_null()) continue;
            p.emplace_back(
                "GPU " + g.at("index").dump() + (g.at("job_pids").empty() ? "" : " (job)"),
                g.at("utilization_percent").get<double>());
          }
          return p;
        }));
  chart("chart-pcie", "Host-to-GPU PCIe traffic", "GB/s", timelines(samples, [](const json& s) {
          points p;
          for (const json& g : s.at("gpus")) {
            if (g.at("pcie_rx_GBps").is_null()) continue;
            p.emplace_back("GPU " + g.at("index").dump(), g.at("pcie_rx_GBps").get<double>());
          }
          return p;
        }));
  chart("chart-nvlink", "NVLink traffic, both directions", "GB/s",
        timelines(samples, [](const json& s) {
          points p;
          for (const json& g : s.at("gpus")) {
            if (g.at("nvlink_rx_GBps").is_null() || g.at("nvlink_tx_GBps").is_null()) continue;
            p.emplace_back("GPU " + g.at("index").dump(), g.at("nvlink_rx_GBps").get<double>() +
                                                              g.at("nvlink_tx_GBps").get<double>());
          }
          return p;
        }));
  chart("chart-disk", "Disk reads", "GB/s", timelines(samples, [](const json& s) {
          points p;
          for (const json& d : s.at("disks")) {
            p.emplace_back(d.at("device").get<std::string>(), d.at("read_GBps").get<double>());
          }
          p.emplace_back("the job (from devices)", s.at("job").at("read_GBps").get<double>());
          return p;
        }));
  chart("chart-network", "Network (the busier direction)", "GB/s",
        timelines(samples, [](const json& s) {
          points p;
          for (const char* kind : {"network", "infiniband"}) {
            for (const json& l : s.at(kind)) {
              const std::string name = link_name(l);
              p.emplace_back(
                  name, std::max(l.at("rx_GBps").get<double>(), l.at("tx_GBps").get<double>()));
            }
          }
          return p;
        }));
  return page.finish();
}

}  // namespace gpubench::watch
