// Shared by the fuzz targets: the bytes are parsed as the CLI parses a file (parse_json_text),
// handed to one parser, and every input_error (what a user sees as exit 2 and one line) is the
// expected outcome. Any other exception escapes, aborts and is reported by libFuzzer as a crash,
// as are sanitizer findings and leaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"

namespace gpubench::fuzzing {

template <class Parser>
int parse_input(const std::uint8_t* data, std::size_t size, Parser parser) {
  try {
    const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes as text
    parser(parse_json_text(text, "fuzz.json"));
  } catch (const input_error&) {
    // Bad input, refused with a message: what the parser must do.
  }
  return 0;
}

}  // namespace gpubench::fuzzing
