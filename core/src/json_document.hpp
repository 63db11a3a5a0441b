// Between json_view and the simdjson document it may read (private to core/): a view of an
// element, the element of a view, and the parsed document that results' "info" stay in.
#pragma once

#include <simdjson.h>

#include <memory>
#include <mutex>
#include <vector>

#include "gpubench/core/json_view.hpp"
#include "gpubench/core/results.hpp"

namespace gpubench::detail {

// Thrown for an element that is not of the type asked for (by as<T>, and so by to_json_value).
struct unconvertible_element {};

// The element as T, which it must be.
template <class T>
T as(simdjson::dom::element value) {
  T out{};
  if (value.get(out) != simdjson::SUCCESS) throw unconvertible_element{};
  return out;
}

// Whether the element is a number (simdjson keeps three kinds).
[[nodiscard]] inline bool is_number(simdjson::dom::element value) {
  const auto type = value.type();
  return type == simdjson::dom::element_type::INT64 ||
         type == simdjson::dom::element_type::UINT64 || type == simdjson::dom::element_type::DOUBLE;
}

// The element as nlohmann reads the same text: an integer from 0 up as unsigned, below 0 as
// signed, the rest as double; a repeated key keeps its first place and its last value.
[[nodiscard]] json to_json_value(simdjson::dom::element value);

// A parsed results file kept for its results' "info": the parsed document (its tape and strings;
// not the parser, whose index of the text is done with once parsed), each result's element, and
// its conversion to nlohmann made once, by whichever thread asks first.
struct json_document {
  struct conversion {
    std::once_flag once;
    json value;
  };
  simdjson::dom::document document;
  std::vector<simdjson::dom::element> elements;  // one slot per result
  std::unique_ptr<conversion[]> conversions;     // as many
};

struct json_view_access {
  [[nodiscard]] static json_view of(simdjson::dom::element element) noexcept;
  [[nodiscard]] static simdjson::dom::element element(const json_view& view) noexcept;
  // A result's info that stays in `document`, at `slot`.
  [[nodiscard]] static result_info stored(std::shared_ptr<const json_document> document,
                                          std::size_t slot);
};

}  // namespace gpubench::detail
