// Small text helpers for command-line values.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

// Splits "a,b,,c" at every separator, keeping empty parts (callers decide whether they are an
// error): {"a", "b", "", "c"}. An empty text gives one empty part.
[[nodiscard]] std::vector<std::string> split(const std::string& text, char separator);

// A number for a message, as short as "%g" writes it: 0.25, 1e+30.
[[nodiscard]] std::string format_plain(double value);

}  // namespace gpubench
