// report --serve: the serving section of the HTML, Markdown and CSV reports (docs/serving.md).
#include "serving_section.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {

namespace {

// The curve draws this many layout families (split and precision), those with the highest
// output tokens/s per GPU: more lines than that are unreadable.
constexpr std::size_t curve_families = 6;
constexpr std::size_t table_rows = 10;

std::string family_name(const model::serving_layout& l) {
  return "TP " + std::to_string(l.tensor) + ", PP " + std::to_string(l.pipeline) + ", " + l.weights;
}

std::string question_text(const serving_section& s) {
  return s.workload + ": " + s.question.describe();
}

std::vector<std::string> row_of(const model::serving_layout& l) {
  const auto number = [&](double v) { return l.fits ? format_number(v) : std::string("-"); };
  return {std::to_string(l.gpus),
          std::to_string(l.tensor),
          std::to_string(l.pipeline),
          std::to_string(l.replicas),
          l.weights,
          number(l.concurrency),
          number(l.output_tokens_per_s_per_gpu),
          number(l.ttft_ms),
          number(l.tpot_ms),
          std::string(to_string(l.limiting_component)),
          l.meets_targets ? "met" : (l.fits ? "not met" : "does not fit")};
}

const std::vector<std::string> layout_columns{
    "GPUs",    "tensor",  "pipeline",   "replicas", "weights", "in flight", "tokens/s per GPU",
    "TTFT ms", "TPOT ms", "limited by", "targets"};

}  // namespace

void add_serving(machine_report& report, const std::string& workload,
                 const model::serving_question& question) {
  serving_section s;
  s.question = question;
  const model::workload w = model::load_workload(workload);
  model::check_decoder(w);  // the user's error, not the machine's: exit 2
  s.workload = w.name;
  if (!report.profile) {
    s.error = "no hardware profile: " + report.profile_error;
  } else {
    // A profile that lacks a figure the model needs (no memory capacity) is the file's gap: the
    // section says so and the rest of the report stands.
    try {
      s.layouts = model::search_serving(*report.profile, w, model::load_constants(),
                                        model::load_serving_constants(), question.options,
                                        question.weights_to_try());
      if (s.layouts.empty()) s.error = "no layout of the model runs on this machine";
    } catch (const input_error& e) {
      s.error = e.what();
    }
  }
  report.serving = std::move(s);
}

std::string serving_html(const serving_section& s) {
  std::string out =
      "<section id=\"serving\"><h2>Serving</h2><p>" + escape_html(question_text(s)) + "</p>";
  if (!s.error.empty()) return out + "<p>" + escape_html(s.error) + "</p></section>\n";
  // The throughput-latency curve: each family's loads, output tokens/s per GPU against TPOT.
  std::map<std::string, series> families;
  std::map<std::string, double> best;
  for (const model::serving_layout& l : s.layouts) {
    if (!l.fits || l.tpot_ms <= 0) continue;
    series& line = families[family_name(l)];
    line.name = family_name(l);
    line.points.emplace_back(l.tpot_ms, l.output_tokens_per_s_per_gpu);
    best[line.name] = std::max(best[line.name], l.output_tokens_per_s_per_gpu);
  }
  std::vector<series> lines;
  for (auto& [name, line] : families) {
    std::sort(line.points.begin(), line.points.end());
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end(),
            [&](const series& a, const series& b) { return best[a.name] > best[b.name]; });
  if (lines.size() > curve_families) lines.resize(curve_families);
  if (!lines.empty()) {
    out += line_chart("chart-serving", s.workload + ": output tokens/s per GPU against TPOT", lines,
                      "time per output token (ms)", "output tokens/s per GPU", x_scale::linear);
  }
  html_table t(layout_columns, "serving-layouts");
  for (const auto& row : serving_layout_rows(s.layouts)) t.row(row);
  return out + t.render() + "</section>\n";
}

std::string serving_markdown_intro(const serving_section& s) {
  return "## Serving\n\n" + question_text(s) + "\n\n" + (s.error.empty() ? "" : s.error + "\n\n");
}

const std::vector<std::string>& serving_header() {
  return layout_columns;
}

std::vector<std::vector<std::string>> serving_layout_rows(
    const std::vector<model::serving_layout>& layouts) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < layouts.size() && i < table_rows; ++i) {
    rows.push_back(row_of(layouts[i]));
  }
  return rows;
}

std::vector<std::vector<std::string>> serving_rows(const serving_section& s) {
  return serving_layout_rows(s.layouts);
}

std::vector<std::vector<std::string>> serving_csv_rows(const serving_section& s) {
  std::vector<std::vector<std::string>> rows;
  if (s.layouts.empty() || !s.layouts.front().fits) return rows;
  const model::serving_layout& l = s.layouts.front();
  const std::string config = std::to_string(l.gpus) + " GPU(s), " + std::to_string(l.replicas) +
                             " x (tensor " + std::to_string(l.tensor) + " x pipeline " +
                             std::to_string(l.pipeline) + "), " + l.weights + ", " +
                             std::to_string(s.question.options.input_tokens) + " in / " +
                             std::to_string(s.question.options.output_tokens) + " out";
  const std::string limit = "limited by " + std::string(to_string(l.limiting_component));
  for (const auto& [metric, value, unit] :
       {std::tuple{"output_tokens_per_s", l.output_tokens_per_s, "tokens/s"},
        std::tuple{"output_tokens_per_s_per_gpu", l.output_tokens_per_s_per_gpu, "tokens/s"},
        std::tuple{"ttft_ms", l.ttft_ms, "ms"}, std::tuple{"tpot_ms", l.tpot_ms, "ms"}}) {
    rows.push_back({"serving", s.workload, config, metric, format_number(value), unit, limit});
  }
  return rows;
}

}  // namespace gpubench::reports
