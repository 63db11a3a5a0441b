#include "gpubench/reports/run_time.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace gpubench::reports {

std::optional<double> unix_seconds(std::string_view iso8601_utc) {
  const std::string text(iso8601_utc);
  int year = 0;
  unsigned month = 0;
  unsigned day = 0;
  int hour = 0;
  int minute = 0;
  double second = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2u-%2uT%2d:%2d:%lf%n", &year, &month, &day, &hour, &minute,
                  &second, &used) != 6) {
    return std::nullopt;
  }
  const std::string_view rest = iso8601_utc.substr(static_cast<std::size_t>(used));
  if (!rest.empty() && rest != "Z") return std::nullopt;  // an offset: not a time gpubench wrote
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month},
                                         std::chrono::day{day}};
  if (!date.ok() || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
      second >= 61) {
    return std::nullopt;
  }
  const auto days = std::chrono::sys_days{date}.time_since_epoch().count();
  return static_cast<double>(days) * 86400 + hour * 3600 + minute * 60 + second;
}

std::optional<double> run_end_seconds(const run_meta& meta) {
  if (const auto end = unix_seconds(meta.finished)) return end;
  return unix_seconds(meta.started);
}

std::optional<double> run_seconds(const run_meta& meta) {
  const auto start = unix_seconds(meta.started);
  const auto end = unix_seconds(meta.finished);
  if (!start || !end || *end < *start) return std::nullopt;
  return *end - *start;
}

}  // namespace gpubench::reports
