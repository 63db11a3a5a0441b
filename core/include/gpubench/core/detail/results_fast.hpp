// The fast path of reading a results file (docs/reliability.md, "At fleet scale"): a
// fleet's results file holds a million results, and nlohmann's document of it took 20 s and
// 2.4 GB. simdjson parses the text at GB/s and each result is built straight from it.
#pragma once

#include <optional>
#include <string>

#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/results.hpp"

namespace gpubench::detail {

// The document when the text is a results file as gpubench writes it, checked as
// parse_results checks it; nullopt for anything else (malformed, out of range, or only unusual:
// a repeated key, -0, an integer past 64 bits), which the checked reader then reads or names.
// Never throws input_error; the two readers agree (tests/fuzz/fuzz_results.cpp compares them).
[[nodiscard]] std::optional<results_document> parse_results_fast(const std::string& text,
                                                                 const std::string& file);

// What parse_results checks outside the results array: the top level, schema and meta.
void check_results_header(const json_reader& root);

}  // namespace gpubench::detail
