#include "gpubench/reports/fleet_page.hpp"

#include <cmath>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {

namespace {

std::string subject(const acceptance::fleet_outlier& o) {
  return o.host + (o.gpu ? " GPU " + std::to_string(*o.gpu) : std::string(" (node)"));
}

std::string subject_with_bus(const acceptance::fleet_outlier& o) {
  return subject(o) + (o.pci_bus_id.empty() ? "" : " (" + o.pci_bus_id + ")");
}

}  // namespace

std::string render_fleet_page(const acceptance::fleet_report& fleet) {
  html_page page("gpubench fleet");
  page.heading(1, "gpubench fleet");
  page.raw("<p id=\"summary\">" + escape_html(acceptance::summary_line(fleet)) + "</p>");

  page.heading(2, "Nodes");
  std::vector<std::string> header{"node", "spec", "verdict"};
  header.insert(header.end(), fleet.families.begin(), fleet.families.end());
  header.emplace_back("outliers");
  header.emplace_back("failures and warnings");
  html_table nodes(header, "nodes");
  for (const auto& n : fleet.nodes) {
    std::vector<std::string> row{n.host, n.spec_name, upper_case(to_string(n.verdict))};
    std::vector<int> emphasis(3, 0);
    emphasis[2] = n.verdict == vocabulary::verdict::pass ? 0 : 1;
    for (const std::string& family : fleet.families) {
      const auto it = n.families.find(family);
      row.push_back(it == n.families.end() ? "-" : upper_case(to_string(it->second)));
      emphasis.push_back(it != n.families.end() && it->second != acceptance::rule_status::pass);
    }
    row.push_back(n.outliers == 0 ? "-" : std::to_string(n.outliers));
    emphasis.push_back(0);
    row.push_back(acceptance::failures_line(n, true));  // the details: the table below
    emphasis.push_back(0);
    nodes.row(row, emphasis);
  }
  page.raw(nodes.render());
  html_table failures({"node", "result", "rule"}, "failures");
  bool any = false;
  for (const auto& n : fleet.nodes) {
    for (const auto* list : {&n.failures, &n.warnings}) {
      for (const auto& o : *list) {
        failures.row({n.host, upper_case(to_string(o.status)), acceptance::outcome_text(o)},
                     {0, 1, 0});
        any = true;
      }
    }
  }
  if (any) page.raw(failures.render());

  page.heading(2, "Figures that stand out from the fleet");
  if (fleet.outliers.empty()) {
    page.raw(
        "<p id=\"outliers\">None: every figure measured on 3 or more GPUs or nodes is within "
        "its threshold of the fleet's median.</p>");
  } else {
    std::vector<bar> bars;
    html_table table(
        {"node / GPU", "uuid", "figure", "value", "fleet median", "off", "threshold", "direction"},
        "outliers");
    for (const auto& o : fleet.outliers) {
      // Short labels fit the chart: the table below, in the same order, names each figure.
      bars.push_back({subject(o) + " #" + std::to_string(bars.size() + 1),
                      std::abs(o.deviation) * 100, o.worse, o.worse ? "worse" : "better"});
      table.row(
          {subject_with_bus(o), o.uuid, o.figure, format_number(o.value) + " " + o.unit,
           format_number(o.fleet_median) + " " + o.unit, format_number(o.deviation * 100) + "%",
           format_number(o.threshold * 100) + "%", o.worse ? "worse" : "better"},
          {0, 0, 0, 1, 0, 1, 0, 0});
    }
    page.raw(bar_chart("chart-outliers", "How far each outlier is from the fleet's median", bars,
                       "% off"));
    page.raw(table.render());
  }
  page.raw("<p id=\"method\">" +
           escape_html("A figure stands out when |value - median| / median exceeds max(" +
                       format_number(fleet.settings.min_deviation * 100) + "%, " +
                       format_number(fleet.settings.mad_multiple) +
                       " x 1.4826 x MAD / median) over the fleet's measurements of it "
                       "(docs/validate.md, Fleets).") +
           "</p>");
  for (const std::string& note : fleet.spec_notes) {
    page.raw("<p class=\"note\">" + escape_html(note) + "</p>");
  }
  return page.finish();
}

}  // namespace gpubench::reports
