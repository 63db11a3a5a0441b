// report.html: one self-contained file. No script at all, no external resource; the page's
// Content-Security-Policy forbids both, so a string that slipped through escaping still could not
// run or fetch anything.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpubench/core/format.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/svg.hpp"
#include "gpubench/vocabulary/measurements.hpp"
#include "gpubench/vocabulary/units.hpp"
#include "serving_section.hpp"

namespace gpubench::reports {
namespace {

namespace measurements = vocabulary::measurements;

// Why the benchmarks a chart draws were not run, or were skipped or failed.
std::string why_not_run(const machine_report& report, const vocabulary::query& q) {
  std::set<std::string> reasons;
  for (const auto& row : report.not_run) {
    if (q.matches_id(row.benchmark)) reasons.insert(row.status + ": " + row.reason);
  }
  if (reasons.empty()) return "not in this run's suite";
  return join(std::vector<std::string>(reasons.begin(), reasons.end()), "; ");
}

std::string no_chart(const std::string& id, const std::string& title, const std::string& why) {
  return "<figure class=\"chart empty\" id=\"" + escape_html(id) + "\"><figcaption>" +
         escape_html(title) + "</figcaption><p class=\"note\">Not measured: " + escape_html(why) +
         "</p></figure>\n";
}

// Median of the values each key collected (one per GPU or rank).
template <typename Key>
std::map<Key, double> medians(const std::map<Key, std::vector<double>>& values) {
  std::map<Key, double> out;
  for (const auto& [key, v] : values) out[key] = summarize(v).median;
  return out;
}

std::string ceilings_charts(const machine_report& report) {
  std::string out;
  int index = 0;
  for (const workload_row& w : report.workloads) {
    const std::string id = "chart-ceilings-" + std::to_string(index++);
    const std::string title = "Component ceilings: " + w.workload;
    if (!w.sizing) {
      out += no_chart(id, title, w.error);
      continue;
    }
    const model::memory_verdict& memory = w.sizing->memory;
    if (!memory.fits) {
      // No rate: ceilings drawn against a prediction of zero would be scaled to the largest of
      // them (PCIe, millions of samples/s) and say nothing. The memory chart says why.
      out += "<figure class=\"chart empty\" id=\"" + escape_html(id) + "\"><figcaption>" +
             escape_html(title) +
             "</figcaption><p class=\"note\">No rate: the job does not fit "
             "in GPU memory (" +
             escape_html(format_number(memory.per_gpu_GiB)) + " " +
             std::string(vocabulary::units::GiB.symbol) +
             " per GPU; the chart below shows what it holds).</p></figure>\n";
    }
    // The prediction is drawn first. The GPU parts add up to one step, so each GPU ceiling
    // (the rate if that part were the whole step) stands above it; an input ceiling caps it.
    std::vector<bar> bars{
        {"predicted", w.sizing->predicted_samples_per_s, true, "(the prediction)"}};
    for (const model::component& c : w.sizing->components) {
      if (!c.samples_per_s) continue;
      const bool limit = c.name == w.sizing->limiting_component;
      const bool gpu_part = vocabulary::in_gpu_step(c.name);
      bars.push_back({std::string(to_string(c.name)), *c.samples_per_s, false,
                      !limit     ? ""
                      : gpu_part ? "(the limit: the largest part of the GPU step)"
                                 : "(the limit)"});
    }
    if (memory.fits) out += bar_chart(id, title, bars, samples_unit(*w.sizing));
    // GPU memory beside the ceilings: what one GPU holds, part by part, and what it has.
    std::vector<bar> held{
        {"per GPU", memory.per_gpu_GiB, true,
         !memory.fits ? "(does not fit)"
         : memory.within_headroom
             ? "(fits)"
             : "(fits, above the " + format_number(memory.headroom * 100) + "% headroom)"}};
    if (memory.capacity_GiB) {
      held.push_back({"capacity", *memory.capacity_GiB, false, ""});
    }
    for (const model::memory_part& part : memory.parts) {
      held.push_back({part.name, part.GiB, false, ""});
    }
    out += bar_chart("chart-memory-" + std::to_string(index - 1), "GPU memory: " + w.workload, held,
                     std::string(vocabulary::units::GiB.symbol));
  }
  return out;
}

// Equivalent cube side of a GEMM shape: "8192" or "MxNxK".
std::optional<double> gemm_size(const std::string& shape) {
  try {
    const gemm_shape parsed = parse_gemm_shape(shape);
    return std::cbrt(static_cast<double>(parsed.m) * static_cast<double>(parsed.n) *
                     static_cast<double>(parsed.k));
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a results file from elsewhere: leave the point out
  }
}

std::string gemm_chart(const machine_report& report) {
  std::map<std::string, std::map<double, std::vector<double>>> by_dtype;
  for (const vocabulary::row& r : vocabulary::select(report.results, measurements::gemm)) {
    const auto dtype = axis_text(r.from->axes, "dtype");
    const auto shape = axis_text(r.from->axes, "shape");
    if (!dtype || !shape) continue;
    if (const auto size = gemm_size(*shape)) by_dtype[*dtype][*size].push_back(r.value());
  }
  const std::string title = "GEMM throughput vs size (cuBLASLt, median over GPUs)";
  if (by_dtype.empty()) {
    return no_chart("chart-gemm", title, why_not_run(report, measurements::gemm));
  }
  std::vector<series> lines;
  for (const auto& [dtype, sizes] : by_dtype) {
    series s{dtype, {}};
    for (const auto& [size, tflops] : medians(sizes)) s.points.emplace_back(size, tflops);
    lines.push_back(std::move(s));
  }
  return line_chart("chart-gemm", title, lines, "matrix side (cube root of M·N·K)", "TFLOP/s",
                    x_scale::log2_number);
}

std::string nccl_chart(const machine_report& report) {
  std::map<std::string, std::map<double, std::vector<double>>> by_op;
  const vocabulary::query& collectives = measurements::nccl_busbw;
  // The family's members by the name after its prefix: "all_reduce".
  const std::size_t prefix = collectives.benchmark.size() - 1;
  for (const vocabulary::row& r : vocabulary::select(report.results, collectives)) {
    if (const auto bytes = axis_number(r.from->axes, "bytes")) {
      by_op[r.from->id.substr(prefix)][*bytes].push_back(r.value());
    }
  }
  const std::string title = "NCCL bus bandwidth vs message size (out of place)";
  if (by_op.empty()) return no_chart("chart-nccl", title, why_not_run(report, collectives));
  std::vector<series> lines;
  for (const auto& [op, sizes] : by_op) {
    series s{op, {}};
    for (const auto& [bytes, busbw] : medians(sizes)) s.points.emplace_back(bytes, busbw);
    lines.push_back(std::move(s));
  }
  return line_chart("chart-nccl", title, lines, "message size", "busbw GB/s", x_scale::log2_bytes);
}

// Host and every GPU: host->GPU is pcie.h2d (pinned), GPU->host pcie.d2h, GPU->GPU p2p.copy (copy
// engine, one way); the largest size each measured.
std::string link_heat_map(const machine_report& report) {
  std::map<std::pair<int, int>, std::pair<double, double>> best;  // (from, to) -> (bytes, GB/s)
  const int host = -1;
  auto keep = [&](int from, int to, double bytes, double gbps) {
    auto& slot = best[{from, to}];
    if (bytes >= slot.first) slot = {bytes, gbps};
  };
  std::set<int> gpus;
  const auto bytes_of = [](const vocabulary::row& r) {
    return axis_number(r.from->axes, "bytes").value_or(0);
  };
  // Host to GPU and back: the copy's GPU and direction.
  for (const bool to_gpu : {true, false}) {
    const vocabulary::query& q = to_gpu ? measurements::h2d_pinned : measurements::d2h_pinned;
    for (const vocabulary::row& r : vocabulary::select(report.results, q)) {
      const auto gpu = axis_number(r.from->axes, "gpu");
      if (!gpu) continue;
      const int g = static_cast<int>(*gpu);
      gpus.insert(g);
      keep(to_gpu ? host : g, to_gpu ? g : host, bytes_of(r), r.value());
    }
  }
  for (const vocabulary::row& r :
       vocabulary::select(report.results, measurements::peer_ce_one_way)) {
    const auto pair = axis_text(r.from->axes, "pair");
    if (!pair) continue;
    const auto ends = parse_gpu_pair(*pair);
    if (!ends) continue;
    gpus.insert(ends->first);
    gpus.insert(ends->second);
    keep(ends->first, ends->second, bytes_of(r), r.value());
  }
  const std::string title = "Host and peer copy bandwidth (copy engine, one way, GB/s)";
  if (best.empty()) {
    return no_chart("chart-links", title,
                    why_not_run(report, measurements::pcie_any) + "; " +
                        why_not_run(report, measurements::peer_any));
  }
  std::vector<int> nodes{host};
  nodes.insert(nodes.end(), gpus.begin(), gpus.end());
  std::vector<std::string> labels;
  labels.reserve(nodes.size());
  for (const int n : nodes) labels.push_back(n == host ? "host" : "GPU " + std::to_string(n));
  std::vector<std::vector<std::optional<double>>> cells(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      const auto it = best.find({nodes[i], nodes[j]});
      cells[i].push_back(it == best.end() ? std::nullopt : std::optional(it->second.second));
    }
  }
  return heat_map("chart-links", title, labels, labels, cells, "GB/s");
}

std::string roofline_chart(const machine_report& report) {
  const std::string title = "Roofline: the workloads on this machine's GPU";
  if (!report.profile || !report.profile_error.empty()) {
    return no_chart("chart-roofline", title, report.profile_error);
  }
  const model::hardware_profile& hw = *report.profile;
  const workload_row* first = nullptr;
  for (const auto& w : report.workloads) {
    if (w.sizing) {
      first = &w;
      break;
    }
  }
  if (first == nullptr) {
    return no_chart("chart-roofline", title,
                    report.workloads.empty() ? std::string("no workload to place")
                                             : report.workloads.front().error);
  }
  const std::string dtype = model::gemm_dtype(first->sizing->precision);
  const double peak = model::gemm_roof_tflops(hw, dtype).value_or(0);
  const double bandwidth = model::gpu_memory_GBps(hw).value_or(0);
  if (peak <= 0 || bandwidth <= 0) {
    return no_chart("chart-roofline", title, "no GEMM rate or GPU memory bandwidth is known");
  }
  std::vector<roofline_point> points;
  for (const auto& w : report.workloads) {
    if (!w.sizing || w.sizing->step.bytes <= 0 || w.sizing->step.gpu_step_s <= 0) continue;
    points.push_back({w.workload + " (" + w.sizing->precision + ")",
                      w.sizing->step.flops / w.sizing->step.bytes,
                      w.sizing->step.flops / w.sizing->step.gpu_step_s / 1e12});
  }
  return roofline("chart-roofline", title + " (" + dtype + " roof)", peak, bandwidth, points);
}

std::string percent(const std::optional<double>& v) {
  return v ? format_number(*v) + "%" : "";
}

}  // namespace

namespace {

// The verdict first, coloured by its word, then every rule that did not pass.
void verdict_part(html_page& page, const machine_report& report) {
  const std::string word =
      report.acceptance ? std::string(to_string(report.acceptance->result())) : std::string("none");
  page.raw("<p class=\"verdict " + word +
           "\" id=\"verdict\">Verdict: " + escape_html(report.verdict) + "</p>");
  const auto rules = not_passed(report);
  if (rules.empty()) return;
  html_table t({"rule", "subject", "measured", "expected", "floor", "result", "detail"},
               "not-passed");
  for (const auto* r : rules) t.row(rule_cells(*r), {0, 1, 0, 0, 0, 1, 0});
  page.raw(t.render());
}

// Per workload: the rate, what limits it, whether it fits, what it costs; how long the run took.
void will_do_part(html_page& page, const machine_report& report) {
  page.raw("<h3 id=\"will-do\">What this machine will do</h3>");
  if (report.run_seconds) {
    page.raw("<p id=\"run-time\">The run took " +
             escape_html(duration_text(*report.run_seconds) + " (" + report.results.meta.started +
                         " to " + report.results.meta.finished + ").") +
             "</p>");
  }
  html_table t({"workload", "predicted", range_header(), "per GPU", "limited by", "basis",
                "fits in GPU memory", "$/hour", "$ per million samples"},
               "sizing");
  bool priced = false;
  for (const auto& w : report.workloads) {
    if (!w.sizing) {
      t.row({w.workload, "not sized", "", "", "", w.error, "", "", ""});
      continue;
    }
    const model::sizing& s = *w.sizing;
    const bool fits = s.memory.fits;  // a job that does not fit has no rate
    priced = priced || w.usd_per_hour.has_value();
    t.row({w.workload,
           fits ? format_number(s.predicted_samples_per_s) + " " + samples_unit(s)
                : "does not fit in GPU memory",
           range_text(s), fits ? format_number(s.per_gpu_samples_per_s) : "-",
           std::string(to_string(s.limiting_component)), limit_basis(s), fits_text(s),
           money(w.usd_per_hour), money(w.usd_per_million_samples)},
          {0, 0, 0, 0, 1, 0, fits ? 0 : 1, 0, 0});
  }
  page.raw(t.render());
  if (!priced && !report.workloads.empty()) {
    page.raw(
        "<p class=\"note\">No price is known for this machine: --set price.usd_per_hour=N (per "
        "node) adds the cost columns.</p>");
  }
  for (const auto& w : report.workloads) {
    if (!w.sizing || w.sizing->recommendations.empty()) continue;
    page.raw("<p class=\"advice\"><b>" + escape_html(w.workload) + ":</b> " +
             escape_html(w.sizing->recommendations.front()) + "</p>");
  }
}

// The rules that did not pass are in the summary; here the count, and the passing rules folded.
void acceptance_part(html_page& page, const machine_report& report) {
  if (!report.acceptance) return;
  const acceptance::validation& v = *report.acceptance;
  using acceptance::rule_status;
  page.raw("<section id=\"acceptance\"><h2>Acceptance: spec " + escape_html(v.spec_name) + "</h2>");
  const acceptance::validation::status_counts counted = v.counts();
  const std::size_t others = not_passed_count(counted);
  const std::size_t not_applicable = counted[rule_status::not_applicable];
  std::string counts = std::to_string(counted[rule_status::pass]) + " rules passed";
  if (others > 0) counts += "; " + std::to_string(others) + " did not (in the summary)";
  if (not_applicable > 0) {
    counts += "; " + std::to_string(not_applicable) +
              (not_applicable == 1 ? " does not apply" : " do not apply");
  }
  const bool fleet = acceptance::counted_per_rule(v);
  html_table t(fleet ? acceptance::tally_header()
                     : std::vector<std::string>{"rule", "subject", "measured", "expected", "floor",
                                                "result", "detail"},
               "acceptance-table");
  if (fleet) {
    for (const auto& tally : acceptance::tally_rules(v.rules))
      t.row(acceptance::tally_cells(tally));
  } else {
    for (const auto& r : v.rules) {
      if (r.status == rule_status::pass || r.status == rule_status::not_applicable) {
        t.row(rule_cells(r));
      }
    }
  }
  page.raw("<details id=\"passed-rules\"><summary>" + escape_html(counts) + "</summary>" +
           t.render() + "</details></section>\n");
}

}  // namespace

void html_writer::write(std::ostream& out, const machine_report& report) const {
  html_page page("gpubench report: " + report.summary);
  page.heading(1, "gpubench report");
  page.raw("<section id=\"summary\"><h2>Summary</h2><p class=\"machine\">" +
           escape_html(report.summary) + "</p>");
  verdict_part(page, report);
  will_do_part(page, report);
  page.raw("<p class=\"note\">Source: " + escape_html(report.source) +
           ". Predictions use the sizing model (docs/model.md) on this file's figures; figures it "
           "did not measure come from the catalog and are listed below.</p></section>\n");
  acceptance_part(page, report);
  page.raw("<section id=\"charts\"><h2>Charts</h2>");
  page.raw(ceilings_charts(report));
  page.raw(gemm_chart(report));
  page.raw(nccl_chart(report));
  page.raw(link_heat_map(report));
  page.raw(roofline_chart(report));
  page.raw("</section>\n");
  if (report.serving) page.raw(serving_html(*report.serving));

  page.raw("<section id=\"figures\"><h2>Measured figures</h2>");
  if (!report.spreads.empty()) {
    page.raw("<p class=\"note\">" + escape_html(spread_intro(report)) + "</p>");
    html_table t(spread_header(), "measured");
    for (const auto& s : report.spreads)
      t.row(spread_cells(s),
            {0, 0, 0, 0, 0, 0, 0, 0, 0, s.noisy > 0 ? 1 : 0, s.unverified > 0 ? 1 : 0});
    page.raw(t.render());
  } else {
    html_table t({"benchmark", "configuration", "metric", "median", "unit", "% of datasheet", "cv",
                  "n", "verified", "host"},
                 "measured");
    for (const auto& f : report.figures) {
      t.row({f.benchmark, f.axes, f.metric, format_number(f.value), f.unit,
             percent(f.percent_of_peak), cv_text(f.cv, f.noisy), std::to_string(f.n),
             f.verified ? (*f.verified ? "yes" : "NO") : "-", f.host},
            {0, 0, 0, 0, 0, 0, f.noisy ? 1 : 0});
    }
    page.raw(t.render());
  }
  page.raw("</section>\n<section id=\"assumed\"><h2>Assumed figures (not measured)</h2>");
  {
    html_table t({"figure", "value", "from", "source"}, "assumed");
    for (const auto& a : report.assumed) {
      t.row({a.key, format_number(a.value), a.basis, a.source});
    }
    page.raw(t.render());
  }
  page.raw("</section>\n<section id=\"not-run\"><h2>Skipped and failed</h2>");
  {
    html_table t({"benchmark", "configuration", "status", "reason"}, "not-run-table");
    for (const auto& n : report.not_run) t.row({n.benchmark, n.axes, n.status, n.reason});
    page.raw(t.render());
  }
  if (!report.time_spent.empty()) {
    page.raw("</section>\n<section id=\"time\"><h2>Where the time went</h2>");
    html_table t({"benchmark", "cases", "seconds", "share"}, "time-table");
    for (const auto& row : report.time_spent) {
      t.row({row.benchmark, std::to_string(row.cases), format_number(row.seconds),
             format_number(row.share * 100) + "%"});
    }
    page.raw(t.render());
  }
  page.raw("</section>\n<section id=\"environment\"><h2>Environment</h2>");
  {
    html_table t({"item", "value"}, "environment-table");
    for (const auto& [key, value] : report.environment) t.row({key, value});
    page.raw(t.render());
  }
  page.raw("</section>\n");
  out << page.finish();
}

}  // namespace gpubench::reports
