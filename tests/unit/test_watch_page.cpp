// watch.html on samples written here: the per-process CPU chart (the training loop's process and
// its workers), legends whose labels are whole, and time ticks at round numbers (issue 40: a
// legend cut to "the job (from devic" and a tick at a sample's own time, 7.01 s).
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "gpubench/watch/page.hpp"

using gpubench::json;
using namespace gpubench::watch;

namespace {

// A loop (pid 100) and its two workers, a disk, at t = 0.51 s and every 0.5 s up to 7.01 s.
std::vector<interval> loader_samples() {
  std::vector<interval> samples;
  for (int k = 0; k <= 13; ++k) {
    interval s;
    s.t = 0.51 + 0.5 * k;
    s.interval_s = 0.5;
    s.job.processes = 3;
    s.job.cpu_cores_used = 1.3;
    s.job.cpu_cores_allowed = 8;
    s.job.read_GBps = 0.01 * k;
    s.job.main_processes.push_back({100, 1, "python3", 0.07, 0.08});
    s.job.workers.push_back({101, 100, "python3", 0.6, 0.97});
    s.job.workers.push_back({102, 100, "python3", 0.63, 0.97});
    s.disks.push_back({"nvme0n1", 0.01 * k, 10, 0.2, 5});
    samples.push_back(s);
  }
  return samples;
}

std::string page() {
  const json doc{
      {"command", {"python3", "train.py"}},
      {"summary", {{"duration_s", 7.0}}},
      {"verdict", {{"limiting_component", "cpu"}, {"evidence", {"e"}}, {"advice", {"a"}}}}};
  return render_page(doc, loader_samples());
}

// The figure with this id: from its opening tag to its end.
std::string figure(const std::string& html, const std::string& id) {
  const auto at = html.find("<figure class=\"chart\" id=\"" + id + "\"");
  REQUIRE(at != std::string::npos);
  return html.substr(at, html.find("</figure>", at) - at);
}

}  // namespace

TEST_CASE("watch page: CPU cores per process, the loop's and each worker's", "[watch]") {
  const std::string chart = figure(page(), "chart-processes");
  for (const char* line :
       {"loop python3 (pid 100)", "worker python3 (pid 101)", "worker python3 (pid 102)"}) {
    INFO(line);
    // The point titles name the whole series.
    CHECK(chart.find(std::string(line) + " at ") != std::string::npos);
  }
  CHECK(chart.find("worker python3 (pid 102) at 7.01: 0.63") != std::string::npos);
}

TEST_CASE("watch page: legend labels are whole, in lines that fit the chart", "[watch]") {
  const std::string html = page();
  const std::regex legend(
      R"re(<text class="legend" x="([0-9.]+)"[^>]*>((?:<tspan[^>]*>[^<]*</tspan>)+)</text>)re");
  const std::regex span(R"re(<tspan[^>]*>([^<]*)</tspan>)re");
  std::set<std::string> labels;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), legend);
       it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    const std::string spans = (*it)[2];
    std::string label;
    for (auto s = std::sregex_iterator(spans.begin(), spans.end(), span);
         s != std::sregex_iterator(); ++s) {
      const std::string part = (*s)[1];
      INFO(part);
      // 12 px text is at most about 7 px a character: each line ends inside the 720 px chart.
      CHECK(x + 7.0 * static_cast<double>(part.size()) <= 720);
      label += (label.empty() ? "" : " ") + part;
    }
    labels.insert(label);
  }
  CHECK(labels.contains("the job (from devices)"));
  CHECK(labels.contains("nvme0n1"));
  CHECK(labels.contains("worker python3 (pid 101)"));
}

TEST_CASE("watch page: time ticks are round numbers, not the samples' times", "[watch]") {
  // x runs from 0.51 to 7.01 s: ticks every 2 s.
  const std::string chart = figure(page(), "chart-disk");
  const std::regex tick(R"re(text-anchor="middle" class="tick">([^<]*)<)re");
  std::vector<std::string> ticks;
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), tick);
       it != std::sregex_iterator(); ++it) {
    ticks.push_back((*it)[1]);
  }
  CHECK(ticks == std::vector<std::string>{"2", "4", "6"});
  CHECK(page().find(">7.01<") == std::string::npos);
}
