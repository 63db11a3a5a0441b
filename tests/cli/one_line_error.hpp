// What every refused input looks like (README, "Exit codes"): exit 2, one line on stderr that
// starts "gpubench: " and names what was wrong, nothing on stdout.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "process.hpp"

namespace gpubench::testing {

inline std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

inline void check_one_line_error(const process_result& r, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::StartsWith("gpubench: ") && Catch::Contains(needle));
  CHECK(r.out.empty());
}

}  // namespace gpubench::testing
