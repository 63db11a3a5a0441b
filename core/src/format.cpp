#include "gpubench/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpubench {

std::string format_number(double value, int digits) {
  char buffer[48];
  const double magnitude = std::abs(value);
  if (value == 0) {
    return "0";
  }
  // Whole numbers from 100 to 1e12; `digits` significant digits otherwise.
  if (magnitude >= 100 && magnitude < 1e12) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  }
  return buffer;
}

std::string format_axes(const json& axes) {
  std::string out;
  for (const auto& [name, value] : axes.items()) {
    if (!out.empty()) out += ' ';
    out += name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

text_table::text_table(std::vector<std::string> header) {
  rows_.push_back(std::move(header));
}

void text_table::add_row(std::vector<std::string> row) {
  rows_.push_back(std::move(row));
}

std::string text_table::render() const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace gpubench
