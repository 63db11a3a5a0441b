// Units as types: every figure and metric names one, and a value moves between two units of one
// dimension by their scales, never by a factor written at the place that needs it (Gb/s to GB/s
// is units::Gbps to units::GBps, not "/ 8").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpubench::vocabulary {

// What a quantity measures. Only quantities of one dimension convert into each other.
enum class dimension {
  data_rate,     // bytes per second
  compute_rate,  // floating-point operations per second
  event_rate,    // samples, I/Os, launches per second
  time,          // seconds
  data,          // bytes
  count,         // cores, SMs, pixels, a PCIe generation
  ratio,         // a fraction (efficiency, share)
  power,         // watts
  frequency,     // hertz
  money_rate,    // US dollars per hour
};

// One of a unit is num / den of its dimension's base (bytes/s, FLOP/s, s, bytes, ...): two whole
// numbers, so a conversion between powers of ten (and eight bits) is one exact factor.
struct unit {
  std::string_view symbol;  // as printed after a value: "GB/s", "Gb/s", "us", "" for a plain number
  dimension of;
  double num = 1;
  double den = 1;

  friend constexpr bool operator==(const unit& a, const unit& b) {
    return a.of == b.of && a.num * b.den == b.num * a.den && a.symbol == b.symbol;
  }
};

namespace units {
inline constexpr unit GBps{"GB/s", dimension::data_rate, 1e9};
inline constexpr unit MBps{"MB/s", dimension::data_rate, 1e6};
inline constexpr unit Gbps{"Gb/s", dimension::data_rate, 1e9, 8};  // bits: a network's line rate
inline constexpr unit bytes_per_s{"B/s", dimension::data_rate, 1};
inline constexpr unit TFLOPs{"TFLOP/s", dimension::compute_rate, 1e12};
inline constexpr unit FLOPs{"FLOP/s", dimension::compute_rate, 1};
inline constexpr unit per_s{"/s", dimension::event_rate, 1};
inline constexpr unit io_per_s{"IO/s", dimension::event_rate, 1};
inline constexpr unit seconds{"s", dimension::time, 1};
inline constexpr unit ms{"ms", dimension::time, 1, 1e3};
inline constexpr unit us{"us", dimension::time, 1, 1e6};
inline constexpr unit bytes{"B", dimension::data, 1};
inline constexpr unit GB{"GB", dimension::data, 1e9};
inline constexpr unit GiB{"GiB", dimension::data, 1073741824};  // sizes: GPU memory
inline constexpr unit count{"", dimension::count, 1};
inline constexpr unit ratio{"", dimension::ratio, 1};
inline constexpr unit percent{"%", dimension::ratio, 1, 100};
inline constexpr unit watts{"W", dimension::power, 1};
inline constexpr unit MHz{"MHz", dimension::frequency, 1e6};
inline constexpr unit usd_per_hour{"USD/h", dimension::money_rate, 1};
}  // namespace units

// `value` in `from` expressed in `to`. Throws std::logic_error across dimensions: a caller that
// converts a time into a rate has a bug, not bad input.
[[nodiscard]] constexpr double convert(double value, const unit& from, const unit& to) {
  if (from.of != to.of) {
    throw std::logic_error("cannot convert " + std::string(from.symbol) + " into " +
                           std::string(to.symbol) + ": different dimensions");
  }
  const double up = from.num * to.den;
  const double down = from.den * to.num;
  return up >= down ? value * (up / down) : value / (down / up);
}

// The dimension's name, for messages and `gpubench list --json`.
[[nodiscard]] std::string_view to_string(dimension d) noexcept;

}  // namespace gpubench::vocabulary
