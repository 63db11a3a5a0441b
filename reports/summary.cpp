#include "reports/summary.hpp"

#include "reports/format.hpp"

namespace gpubench::reports {

void print_summary(std::ostream& out, const results_document& doc) {
  text_table table({"benchmark", "case", "metric", "median", "min", "max", "cv", "status"});
  for (const result& r : doc.results) {
    std::string axes = format_axes(r.axes);
    if (r.rank) {
      // A multi-rank job: say where it was measured.
      axes = "rank " + std::to_string(*r.rank) + "@" + r.host + (axes.empty() ? "" : " ") + axes;
    }
    switch (r.status) {
      case result_status::skipped:
        table.add_row({r.id, r.rank ? axes : "", "", "", "", "", "", "skipped: " + r.reason});
        continue;
      case result_status::failed:
        table.add_row({r.id, axes, "", "", "", "", "", "FAILED: " + r.error});
        continue;
      case result_status::ok:
        break;
    }
    for (const auto& [name, s] : r.metrics) {
      char cv[16];
      std::snprintf(cv, sizeof cv, "%.1f%%", s.cv * 100);
      table.add_row({r.id, axes, name, format_number(s.median), format_number(s.min),
                     format_number(s.max), cv, r.verified.value_or(false) ? "ok, verified" : "ok"});
    }
  }
  out << table.render();
}

}  // namespace gpubench::reports
