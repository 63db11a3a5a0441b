// Charts as inline SVG, drawn by the project: no script, no external file. Every label is escaped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench::reports {

// Text for HTML and SVG, element content or quoted attribute: & < > " ' escaped.
[[nodiscard]] std::string escape_html(std::string_view text);

struct bar {
  std::string label;
  double value = 0;
  bool highlight = false;
  std::string note;  // printed after the value
};

struct series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), sorted by x
};

enum class x_scale { linear, log2_bytes, log2_number };

struct roofline_point {
  std::string name;
  double intensity = 0;  // FLOP per byte of GPU memory traffic
  double tflops = 0;     // achieved per GPU
};

// Horizontal bars, one per row, the highlighted one drawn in the accent colour.
[[nodiscard]] std::string bar_chart(std::string_view id, std::string_view title,
                                    const std::vector<bar>& bars, std::string_view unit);
[[nodiscard]] std::string line_chart(std::string_view id, std::string_view title,
                                     const std::vector<series>& lines, std::string_view x_label,
                                     std::string_view y_label, x_scale scale);
// rows x columns of values (empty cells: not measured).
[[nodiscard]] std::string heat_map(std::string_view id, std::string_view title,
                                   const std::vector<std::string>& rows,
                                   const std::vector<std::string>& columns,
                                   const std::vector<std::vector<std::optional<double>>>& cells,
                                   std::string_view unit);
// log-log roofline: min(peak, intensity x bandwidth), the workloads placed on it.
[[nodiscard]] std::string roofline(std::string_view id, std::string_view title, double peak_tflops,
                                   double bandwidth_GBps,
                                   const std::vector<roofline_point>& points);

}  // namespace gpubench::reports
