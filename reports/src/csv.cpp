// report.csv: one row per figure (measured, assumed, predicted and its cost, not run, time
// spent), for spreadsheets. The numbers are those of report.md and report.html, at full
// precision.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "gpubench/core/format.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/vocabulary/units.hpp"
#include "serving_section.hpp"

namespace gpubench::reports {
namespace {

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// One row, appended to the text written at the end: a fleet's file has a million cells.
void line(std::string& out, std::initializer_list<std::string_view> fields) {
  bool first = true;
  for (const std::string_view field : fields) {
    if (!first) out += ',';
    first = false;
    append_csv_field(out, field);
  }
  out += "\r\n";
}

}  // namespace

void csv_writer::write(std::ostream& stream, const machine_report& report) const {
  std::string out;
  line(out, {"section", "name", "configuration", "metric", "value", "unit", "percent_of_peak", "cv",
             "n", "verified", "basis", "note"});
  if (report.serving) {
    for (const auto& f : serving_csv_rows(*report.serving)) {
      line(out, {f[0], f[1], f[2], f[3], f[4], f[5], "", "", "", "", "", f[6]});
    }
  }
  for (const auto& w : report.workloads) {
    if (!w.sizing) {
      line(out, {"sizing", w.workload, "", "predicted_samples_per_s", "", "", "", "", "", "", "",
                 w.error});
      continue;
    }
    const model::sizing& s = *w.sizing;
    const std::string unit = samples_unit(s);
    const std::string config = std::to_string(s.gpus_per_node) + " GPU(s) x " +
                               std::to_string(s.nodes) + " node(s), " + model::batch_text(s) +
                               ", " + s.precision;
    // A job that does not fit in GPU memory has no rate: the value is left empty.
    const bool fits = s.memory.fits;
    line(out, {"sizing", w.workload, config, "predicted_samples_per_s",
               fits ? number(s.predicted_samples_per_s) : "", unit, "", "", "", "", "",
               "limited by " + std::string(to_string(s.limiting_component))});
    line(out, {"sizing", w.workload, config, "per_gpu_samples_per_s",
               fits ? number(s.per_gpu_samples_per_s) : "", unit, "", "", "", "", "", ""});
    if (s.interval) {
      // The error band (docs/model.md, "Error band"), each end a row of its own.
      for (const auto& [metric, value] :
           {std::pair{"predicted_low_samples_per_s", s.interval->low},
            std::pair{"predicted_high_samples_per_s", s.interval->high}}) {
        line(out, {"sizing", w.workload, config, metric, number(value), unit, "", "", "", "", "",
                   s.interval->basis()});
      }
    }
    if (w.usd_per_hour) {
      line(out, {"sizing", w.workload, config, "usd_per_hour", number(*w.usd_per_hour), "USD/h", "",
                 "", "", "", "", "price.usd_per_hour x " + std::to_string(s.nodes) + " node(s)"});
      line(out, {"sizing", w.workload, config, "usd_per_million_samples",
                 w.usd_per_million_samples ? number(*w.usd_per_million_samples) : "", "USD", "", "",
                 "", "", "", fits ? "at the predicted rate" : "does not fit: no rate"});
    }
    line(out, {"sizing", w.workload, config, "memory.per_gpu_GiB", number(s.memory.per_gpu_GiB),
               std::string(vocabulary::units::GiB.symbol), "", "", "", "",
               std::string(to_string(s.memory.capacity_basis)),
               s.memory.capacity_GiB ? "of " + number(*s.memory.capacity_GiB) + " " +
                                           std::string(vocabulary::units::GiB.symbol) +
                                           (!fits                      ? ": does not fit"
                                            : s.memory.within_headroom ? ""
                                                                       : ": above the headroom")
                                     : "capacity not known"});
    for (const auto& c : s.components) {
      if (!c.samples_per_s) continue;
      line(out, {"sizing", w.workload, config, "ceiling." + std::string(to_string(c.name)),
                 number(*c.samples_per_s), unit, "", "", "", "", basis_text(c), c.detail});
    }
  }
  for (const auto& f : report.figures) {
    line(out, {"measured", f.benchmark, f.axes, f.metric, number(f.value), f.unit,
               f.percent_of_peak ? number(*f.percent_of_peak) : "", number(f.cv),
               std::to_string(f.n), f.verified ? (*f.verified ? "yes" : "no") : "",
               f.noisy ? "measured, noisy" : "measured", f.host});
  }
  for (const auto& a : report.assumed) {
    line(out,
         {"assumed", a.key, "", a.key, number(a.value), "", "", "", "", "", a.basis, a.source});
  }
  for (const auto& n : report.not_run) {
    line(out, {n.status, n.benchmark, n.axes, "", "", "", "", "", "", "", "", n.reason});
  }
  if (report.run_seconds) {
    line(out, {"time", "run", "", "wall_s", number(*report.run_seconds), "s", "", "", "", "", "",
               report.results.meta.started + " to " + report.results.meta.finished});
  }
  for (const auto& t : report.time_spent) {
    line(out, {"time", t.benchmark, "", "wall_s", number(t.seconds), "s", "", "", "", "", "",
               std::to_string(t.cases) + " case(s), " + number(t.share * 100) +
                   "% of the run's case time"});
  }
  stream.write(out.data(), static_cast<std::streamsize>(out.size()));
}

}  // namespace gpubench::reports
