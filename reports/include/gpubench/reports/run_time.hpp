// When a run ended and how long it took, from its results file's meta (ISO-8601 UTC times as
// gpubench writes them): the Prometheus export's timestamp, the report's run time.
#pragma once

#include <optional>
#include <string_view>

#include "gpubench/core/results.hpp"

namespace gpubench::reports {

// Seconds since the Unix epoch of "2026-01-01T00:10:00Z" (a fraction of a second and the "Z"
// may be absent); nullopt for any other text or an impossible date.
[[nodiscard]] std::optional<double> unix_seconds(std::string_view iso8601_utc);
// When the run ended (meta.finished; meta.started for a run that never finished).
[[nodiscard]] std::optional<double> run_end_seconds(const run_meta& meta);
// finished - started, where both are times and the run did not end before it began.
[[nodiscard]] std::optional<double> run_seconds(const run_meta& meta);

}  // namespace gpubench::reports
