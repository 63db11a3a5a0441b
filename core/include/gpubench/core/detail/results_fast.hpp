// The fast path of reading a results file (docs/reliability.md, "At fleet scale"): a
// fleet's results file holds a million results, and nlohmann's document of it took 20 s and
// 2.4 GB. simdjson parses the text at GB/s and each result is built straight from it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/results.hpp"

namespace gpubench::detail {

// What a result and each of its metrics may hold, for both readers (the fast one's switches
// follow this order), and the ranges their numbers are read within.
inline constexpr std::array<std::string_view, 11> result_keys = {
    "id",       "status", "reason", "error", "axes", "metrics",
    "verified", "info",   "wall_s", "host",  "rank"};
inline constexpr std::array<std::string_view, 7> metric_keys = {"median", "min",  "max",   "cv",
                                                                "n",      "unit", "better"};
inline constexpr double max_statistic_magnitude = 1e300;  // median, min, max, cv
inline constexpr std::int64_t max_metric_samples = 1'000'000;
inline constexpr double max_wall_s = 1e9;

// The document when the text is a results file as gpubench writes it, checked as
// parse_results checks it; nullopt for anything else (malformed, out of range, or only unusual:
// a repeated key, an integer past 64 bits), which the checked reader then reads or names.
// Never throws input_error; the two readers agree (tests/fuzz/fuzz_results.cpp compares them).
[[nodiscard]] std::optional<results_document> parse_results_fast(const std::string& text,
                                                                 const std::string& file);
// The same for a file's bytes, parsed where they lie (`text.room()` bytes readable past them),
// which it releases once parsed: a fleet's 263 MB are not held through the rules. A caller whose
// bytes it declined after releasing them reads the file again.
[[nodiscard]] std::optional<results_document> parse_results_fast(json_file_bytes& text,
                                                                 const std::string& file);

// What parse_results checks outside the results array: the top level, schema and meta.
void check_results_header(const json_reader& root);

}  // namespace gpubench::detail
