#include "gpubench/core/format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace gpubench {

std::string format_number(double value, int digits) {
  char buffer[48];
  const double magnitude = std::abs(value);
  if (value == 0) {
    return "0";
  }
  // Whole numbers from 100 to 1e12; `digits` significant digits otherwise. to_chars writes what
  // printf's %.0f and %.*g write, several times faster: validate formats millions of figures.
  const bool whole = magnitude >= 100 && magnitude < 1e12;
  if (whole) {
    // As an integer: to_chars of a double at precision 0 goes through the exact-decimal path,
    // three times slower, and validate writes millions. nearbyint rounds a tie to even as that
    // path does (under the default rounding mode, which gpubench never changes).
    const auto n = static_cast<std::int64_t>(std::nearbyint(value));
    const auto integer = std::to_chars(buffer, buffer + sizeof buffer, n);
    return std::string(buffer, integer.ptr);
  }
  const auto written =
      whole ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 0)
            : std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general,
                            digits);
  return written.ec == std::errc() ? std::string(buffer, written.ptr) : std::string("?");
}

std::string format_axes(const json& axes, std::string_view without) {
  std::string out;
  for (const auto& [name, value] : axes.items()) {
    if (!without.empty() && name == without) continue;
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

namespace {

// A cell a spreadsheet would run as a formula: text (host names, GPU names, errors come from
// the machine and the results file) starting with = + - @ or a tab or carriage return. A number
// ("-3.5", "+1e5") is a number and stays one.
bool formula_like(std::string_view text) {
  if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos) {
    return false;
  }
  const std::string copy(text);  // strtod needs the terminator
  char* end = nullptr;
  (void)std::strtod(copy.c_str(), &end);
  return end != copy.c_str() + copy.size();
}

}  // namespace

void append_csv_field(std::string& out, std::string_view value) {
  const bool formula = formula_like(value);
  const bool quoted = value.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!formula && !quoted) {
    out += value;
    return;
  }
  if (quoted) out += '"';
  if (formula) out += '\'';
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  if (quoted) out += '"';
}

std::string csv_field(const std::string& value) {
  std::string out;
  append_csv_field(out, value);
  return out;
}

}  // namespace gpubench
