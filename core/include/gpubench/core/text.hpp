// Small text helpers for command-line values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

// Splits "a,b,,c" at every separator, keeping empty parts (callers decide whether they are an
// error): {"a", "b", "", "c"}. An empty text gives one empty part.
[[nodiscard]] std::vector<std::string> split(const std::string& text, char separator);

// {"a", "b", "c"} -> "a, b, c": the lists of known names in error messages.
[[nodiscard]] std::string join(const std::vector<std::string>& parts,
                               std::string_view separator = ", ");

// A GEMM shape as the gemm benchmark's axis and results files write it: "8192" (square) or
// "MxNxK", each from 1 to 2^20. Throws std::invalid_argument saying what was expected.
struct gemm_shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};
[[nodiscard]] gemm_shape parse_gemm_shape(const std::string& text);

// 1536 -> "1.5 KiB", 4096 -> "4 KiB" (sizes use binary units, labelled as such).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// A number for a message, as short as "%g" writes it: 0.25, 1e+30.
[[nodiscard]] std::string format_plain(double value);

// Text from files and machines made safe to print to a terminal: control characters (C0 but
// newline and tab, DEL, and C1 as UTF-8) become visible escapes ("\x1b", "\u009b"), so a host
// or GPU name in a results file cannot move the cursor, retitle the window or hide a line.
[[nodiscard]] std::string printable(std::string_view text);

// ASCII letters in upper case: "fail" -> "FAIL".
[[nodiscard]] std::string upper_case(std::string_view text);

}  // namespace gpubench
