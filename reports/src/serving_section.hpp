// report --serve's section, as each writer prints it (serving_section.cpp).
#pragma once

#include <string>
#include <vector>

#include "gpubench/reports/report.hpp"

namespace gpubench::reports {

// The section with the throughput-latency curve (inline SVG) and the best layouts.
[[nodiscard]] std::string serving_html(const serving_section& s);
// "## Serving", the question and, where there is no layout, why.
[[nodiscard]] std::string serving_markdown_intro(const serving_section& s);
// The table of the best layouts: its header and rows.
[[nodiscard]] const std::vector<std::string>& serving_header();
[[nodiscard]] std::vector<std::vector<std::string>> serving_rows(const serving_section& s);
// The same rows for any list of layouts (size --serve --search's text): the best ten.
[[nodiscard]] std::vector<std::vector<std::string>> serving_layout_rows(
    const std::vector<model::serving_layout>& layouts);
// The best layout's figures as CSV fields: section, name, configuration, metric, value, unit,
// note.
[[nodiscard]] std::vector<std::vector<std::string>> serving_csv_rows(const serving_section& s);

}  // namespace gpubench::reports
