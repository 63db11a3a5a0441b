#include "gpubench/watch/page.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "gpubench/core/format.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/svg.hpp"
#include "gpubench/watch/sampler.hpp"

namespace gpubench::watch {

namespace {

using reports::series;

// One line per named part, y read from each sample by `value` (nothing drawn where it is null).
template <typename Parts>
std::vector<series> timelines(const std::vector<interval>& samples, Parts parts) {
  std::map<std::string, series> by_name;
  for (const interval& sample : samples) {
    const double t = sample.t;
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

// The training loops' processes and their workers, one line each; past the busiest few workers
// (by CPU over the watch) the rest share one line, their mean, so the legend stays readable.
points per_process(const interval& s, const std::set<pid_t>& named) {
  const auto label = [](const char* role, const loop_process& p) {
    return std::string(role) + " " + p.name + " (pid " + std::to_string(p.pid) + ")";
  };
  points p;
  for (const loop_process& m : s.job.main_processes) p.emplace_back(label("loop", m), m.cpu_cores);
  double rest = 0;
  int others = 0;
  for (const loop_process& w : s.job.workers) {
    if (named.contains(w.pid)) {
      p.emplace_back(label("worker", w), w.cpu_cores);
    } else {
      rest += w.cpu_cores;
      ++others;
    }
  }
  if (others > 0) p.emplace_back("other workers, each (mean)", rest / others);
  return p;
}

std::set<pid_t> busiest_workers(const std::vector<interval>& samples) {
  constexpr std::size_t shown = 6;
  std::map<pid_t, double> total;
  for (const interval& s : samples) {
    for (const loop_process& w : s.job.workers) total[w.pid] += w.cpu_cores;
  }
  std::vector<std::pair<double, pid_t>> by_cpu;
  for (const auto& [pid, cpu] : total) by_cpu.emplace_back(cpu, pid);
  std::sort(by_cpu.rbegin(), by_cpu.rend());
  std::set<pid_t> named;
  // All of them when they fit; else one line fewer, for the rest.
  const std::size_t n = by_cpu.size() <= shown ? by_cpu.size() : shown - 1;
  for (std::size_t i = 0; i < n; ++i) named.insert(by_cpu[i].second);
  return named;
}

}  // namespace

std::string render_page(const json& summary_doc, const std::vector<interval>& samples) {
  reports::html_page page("gpubench watch");
  page.heading(1, "gpubench watch");
  const json& verdict = summary_doc.at("verdict");
  // json_text: an argument that is not UTF-8 shows as U+FFFD rather than losing the page.
  std::string target = summary_doc.contains("command") ? json_text(summary_doc.at("command"))
                                                       : "pid " + json_text(summary_doc.at("pid"));
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
        timelines(samples, [](const interval& s) {
          points p{{"used", s.job.cpu_cores_used}, {"allowed", s.job.cpu_cores_allowed}};
          if (s.cpu.known()) {
            p.emplace_back("other processes", s.cpu.outside_job_cores);
            p.emplace_back("steal", s.cpu.stolen_cores);
          }
          return p;
        }));
  const std::set<pid_t> named = busiest_workers(samples);
  chart("chart-processes", "CPU cores per process: the training loop's and its workers'", "cores",
        timelines(samples, [&](const interval& s) { return per_process(s, named); }));
  chart("chart-gpu", "GPU utilisation", "%", timelines(samples, [](const interval& s) {
          points p;
          for (const gpu_load& g : s.gpus) {
            if (!g.utilization_percent) continue;
            p.emplace_back("GPU " + std::to_string(g.index) + (g.used_by_job() ? " (job)" : ""),
                           *g.utilization_percent);
          }
          return p;
        }));
  chart("chart-pcie", "Host-to-GPU PCIe traffic", "GB/s", timelines(samples, [](const interval& s) {
          points p;
          for (const gpu_load& g : s.gpus) {
            if (g.pcie_rx_GBps) p.emplace_back("GPU " + std::to_string(g.index), *g.pcie_rx_GBps);
          }
          return p;
        }));
  chart("chart-nvlink", "NVLink traffic, both directions", "GB/s",
        timelines(samples, [](const interval& s) {
          points p;
          for (const gpu_load& g : s.gpus) {
            if (const auto both = g.nvlink_GBps()) {
              p.emplace_back("GPU " + std::to_string(g.index), *both);
            }
          }
          return p;
        }));
  chart("chart-disk", "Disk reads", "GB/s", timelines(samples, [](const interval& s) {
          points p;
          for (const disk_load& d : s.disks) p.emplace_back(d.device, d.read_GBps);
          p.emplace_back("the job (from devices)", s.job.read_GBps);
          return p;
        }));
  chart("chart-network", "Network (the busier direction)", "GB/s",
        timelines(samples, [](const interval& s) {
          points p;
          for (const link_rate& l : link_rates(s)) p.emplace_back(l.name, l.GBps);
          return p;
        }));
  return page.finish();
}

}  // namespace gpubench::watch
