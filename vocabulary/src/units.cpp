#include "gpubench/vocabulary/units.hpp"

namespace gpubench::vocabulary {

std::string_view to_string(dimension d) noexcept {
  switch (d) {
    case dimension::data_rate:
      return "data_rate";
    case dimension::compute_rate:
      return "compute_rate";
    case dimension::event_rate:
      return "event_rate";
    case dimension::time:
      return "time";
    case dimension::data:
      return "data";
    case dimension::count:
      return "count";
    case dimension::ratio:
      return "ratio";
    case dimension::power:
      return "power";
    case dimension::frequency:
      return "frequency";
    case dimension::money_rate:
      return "money_rate";
  }
  return "?";
}

}  // namespace gpubench::vocabulary
