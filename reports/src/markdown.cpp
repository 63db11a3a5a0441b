// report.md: the same numbers as report.html, for tickets.
#include <string>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/report.hpp"

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

}  // namespace

void markdown_writer::write(std::ostream& out, const machine_report& report) const {
  out << "# gpubench report\n\n";
  out << "**Machine:** " << cell(report.summary) << "  \n";
  out << "**Verdict:** " << cell(report.verdict) << "  \n";
  out << "**Source:** " << cell(report.source) << "\n\n";
  out << "## Sizing\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : report.workloads) {
    if (!w.sizing) {
      rows.push_back({w.workload, "not sized", "", "", "", w.error});
      continue;
    }
    const std::string basis = limit_basis(*w.sizing);
    const bool fits = w.sizing->memory.fits;  // a job that does not fit has no rate
    rows.push_back({w.workload, fits ? format_number(w.sizing->predicted_samples_per_s) : "-",
                    samples_unit(*w.sizing),
                    fits ? format_number(w.sizing->per_gpu_samples_per_s) : "-",
                    std::string(to_string(w.sizing->limiting_component)), basis});
  }
  table(out, {"workload", "predicted", "unit", "per GPU", "limited by", "basis"}, rows);
  for (const auto& w : report.workloads) {
    if (!w.sizing) continue;
    for (const auto& r : w.sizing->recommendations)
      out << "- " << cell(w.workload) << ": " << cell(r) << "\n";
  }
  if (!report.workloads.empty()) out << "\n";

  if (report.acceptance) {
    out << "## Acceptance (spec " << cell(report.acceptance->spec_name) << ")\n\n";
    rows.clear();
    for (const auto& r : report.acceptance->rules) {
      rows.push_back({r.rule, r.subject, r.measured, r.expected, r.floor,
                      std::string(to_string(r.status)), r.detail});
    }
    table(out, {"rule", "subject", "measured", "expected", "floor", "result", "detail"}, rows);
  }

  out << "## Measured figures\n\n";
  rows.clear();
  for (const auto& f : report.figures) {
    rows.push_back({f.benchmark, f.axes, f.metric, format_number(f.value), f.unit,
                    f.percent_of_peak ? format_number(*f.percent_of_peak) + "%" : "",
                    format_number(f.cv * 100) + "%", std::to_string(f.n),
                    f.verified ? (*f.verified ? "yes" : "NO") : "-"});
  }
  table(out,
        {"benchmark", "configuration", "metric", "median", "unit", "% of datasheet", "cv", "n",
         "verified"},
        rows);

  out << "## Assumed figures (not measured)\n\n";
  rows.clear();
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
