// report.md: the same numbers as report.html, for tickets.
#include <optional>
#include <string>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/report.hpp"
#include "serving_section.hpp"

namespace gpubench::reports {
namespace {

// A table cell: pipes escaped, line breaks flattened, control characters made visible (the
// file is read with cat and less too).
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return printable(out);
}

void table(std::ostream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) {
    out << "None.\n\n";
    return;
  }
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (const auto& c : row) out << " " << cell(c) << " |";
    out << "\n";
  }
  out << "\n";
}

const std::vector<std::string> rule_header{"rule",  "subject", "measured", "expected",
                                           "floor", "result",  "detail"};

// The verdict, and every rule that did not pass, before anything else.
void verdict_section(std::ostream& out, const machine_report& report) {
  out << "**Verdict:** " << cell(report.verdict) << "  \n";
  out << "**Source:** " << cell(report.source) << "\n\n";
  const auto rules = not_passed(report);
  if (rules.empty()) return;
  std::vector<std::vector<std::string>> rows;
  for (const auto* r : rules) rows.push_back(rule_cells(*r));
  table(out, rule_header, rows);
}

// Per workload: the rate, what limits it, whether it fits, what it costs; how long the run took.
void will_do_section(std::ostream& out, const machine_report& report) {
  out << "## What this machine will do\n\n";
  if (report.run_seconds) {
    out << "The run took " << duration_text(*report.run_seconds) << " ("
        << cell(report.results.meta.started) << " to " << cell(report.results.meta.finished)
        << ").\n\n";
  }
  std::vector<std::vector<std::string>> rows;
  bool priced = false;
  for (const auto& w : report.workloads) {
    if (!w.sizing) {
      rows.push_back({w.workload, "not sized", "", "", "", "", w.error, "", "", ""});
      continue;
    }
    const model::sizing& s = *w.sizing;
    const bool fits = s.memory.fits;  // a job that does not fit has no rate
    priced = priced || w.usd_per_hour.has_value();
    rows.push_back({w.workload, fits ? format_number(s.predicted_samples_per_s) : "-",
                    range_text(s), samples_unit(s),
                    fits ? format_number(s.per_gpu_samples_per_s) : "-",
                    std::string(to_string(s.limiting_component)), limit_basis(s), fits_text(s),
                    money(w.usd_per_hour), money(w.usd_per_million_samples)});
  }
  table(out,
        {"workload", "predicted", range_header(), "unit", "per GPU", "limited by", "basis",
         "fits in GPU memory", "$/hour", "$ per million samples"},
        rows);
  if (!priced && !report.workloads.empty()) {
    out << "No price is known for this machine: `--set price.usd_per_hour=N` (per node) adds "
           "the cost columns.\n\n";
  }
  for (const auto& w : report.workloads) {
    if (!w.sizing) continue;
    for (const auto& r : w.sizing->recommendations)
      out << "- " << cell(w.workload) << ": " << cell(r) << "\n";
  }
  if (!report.workloads.empty()) out << "\n";
}

// The rules that did not pass are at the top; here, the count, then the passing rules' table.
void acceptance_section(std::ostream& out, const machine_report& report) {
  if (!report.acceptance) return;
  const acceptance::validation& v = *report.acceptance;
  using acceptance::rule_status;
  out << "## Acceptance (spec " << cell(v.spec_name) << ")\n\n";
  const acceptance::validation::status_counts counted = v.counts();
  const std::size_t others = not_passed_count(counted);
  const std::size_t not_applicable = counted[rule_status::not_applicable];
  out << "**" << counted[rule_status::pass] << " rules passed**";
  if (others > 0) out << "; " << others << " did not (at the top)";
  if (not_applicable > 0) {
    out << "; " << not_applicable << (not_applicable == 1 ? " does not apply" : " do not apply");
  }
  out << ".\n\n";
  std::vector<std::vector<std::string>> rows;
  if (acceptance::counted_per_rule(v)) {  // a fleet's
    for (const auto& t : acceptance::tally_rules(v.rules))
      rows.push_back(acceptance::tally_cells(t));
    table(out, acceptance::tally_header(), rows);
    return;
  }
  for (const auto& r : v.rules) {
    if (r.status == rule_status::pass || r.status == rule_status::not_applicable) {
      rows.push_back(rule_cells(r));
    }
  }
  table(out, rule_header, rows);
}

// Every figure; a fleet's merged file's, each once over its GPUs.
void measured_section(std::ostream& out, const machine_report& report) {
  out << "## Measured figures\n\n";
  std::vector<std::vector<std::string>> rows;
  if (!report.spreads.empty()) {
    out << spread_intro(report) << "\n\n";
    for (const auto& s : report.spreads) rows.push_back(spread_cells(s));
    table(out, spread_header(), rows);
    return;
  }
  for (const auto& f : report.figures) {
    rows.push_back({f.benchmark, f.axes, f.metric, format_number(f.value), f.unit,
                    f.percent_of_peak ? format_number(*f.percent_of_peak) + "%" : "",
                    cv_text(f.cv, f.noisy), std::to_string(f.n),
                    f.verified ? (*f.verified ? "yes" : "NO") : "-"});
  }
  table(out,
        {"benchmark", "configuration", "metric", "median", "unit", "% of datasheet", "cv", "n",
         "verified"},
        rows);
}

}  // namespace

void markdown_writer::write(std::ostream& out, const machine_report& report) const {
  out << "# gpubench report\n\n";
  out << "**Machine:** " << cell(report.summary) << "  \n";
  verdict_section(out, report);
  will_do_section(out, report);
  acceptance_section(out, report);
  if (report.serving) {
    out << serving_markdown_intro(*report.serving);
    if (report.serving->error.empty()) {
      table(out, serving_header(), serving_rows(*report.serving));
    }
  }

  measured_section(out, report);

  out << "## Assumed figures (not measured)\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : report.assumed) {
    rows.push_back({a.key, format_number(a.value), a.basis, a.source});
  }
  table(out, {"figure", "value", "from", "source"}, rows);

  out << "## Skipped and failed\n\n";
  rows.clear();
  for (const auto& n : report.not_run) rows.push_back({n.benchmark, n.axes, n.status, n.reason});
  table(out, {"benchmark", "configuration", "status", "reason"}, rows);

  if (!report.time_spent.empty()) {
    out << "## Where the time went\n\n";
    rows.clear();
    for (const auto& t : report.time_spent) {
      rows.push_back({t.benchmark, std::to_string(t.cases), format_number(t.seconds),
                      format_number(t.share * 100) + "%"});
    }
    table(out, {"benchmark", "cases", "seconds", "share"}, rows);
  }

  out << "## Environment\n\n";
  rows.clear();
  for (const auto& [key, value] : report.environment) rows.push_back({key, value});
  table(out, {"item", "value"}, rows);
}

}  // namespace gpubench::reports
