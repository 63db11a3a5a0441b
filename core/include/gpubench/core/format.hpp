// How gpubench writes numbers, axes and tables in text: one formatter for every command, report
// and check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench {

// Whole from 100 to 1e12, else `digits` significant digits: 12.3456 -> "12.3", 0.01234 ->
// "0.0123", 123456.7 -> "123457". Every command, report, check and model message writes numbers
// with it.
[[nodiscard]] std::string format_number(double value, int digits = 3);
// "kernel=triad threads=8" from a results file's axes object, leaving out the axis named
// `without` where one is named.
[[nodiscard]] std::string format_axes(const json& axes, std::string_view without = {});

// One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled; a
// formula-like cell gets a leading ' first (OWASP's CSV-injection advice), so it shows as the text
// it is.
[[nodiscard]] std::string csv_field(const std::string& value);
// The same cell appended to `out`: a file of a million cells makes no string for each.
void append_csv_field(std::string& out, std::string_view value);

// A plain text table: columns padded to the widest cell, two spaces apart.
class text_table {
 public:
  explicit text_table(std::vector<std::string> header);
  void add_row(std::vector<std::string> row);
  [[nodiscard]] std::string render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpubench
