// A read-only look at a JSON value, wherever it lives: a nlohmann value built in memory, or a value
// still in the parser's document of the file it came from, never converted. A fleet's results
// file is mostly burn samples in results' "info", which the rules read a dozen numbers of.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"

namespace gpubench {

namespace detail {
struct json_view_access;
}

// Borrowed, as a string_view is: valid while the value it looks at lives (the json, or the
// result whose info it is). Cheap to copy. A default one looks at nothing (absent).
class json_view {
 public:
  json_view() = default;
  explicit json_view(const json& value) noexcept : in_memory_(&value) {}

  [[nodiscard]] bool exists() const noexcept { return in_memory_ != nullptr || in_document_; }
  [[nodiscard]] bool is_object() const;
  [[nodiscard]] bool is_array() const;
  [[nodiscard]] bool is_number() const;
  [[nodiscard]] bool is_string() const;
  [[nodiscard]] bool is_boolean() const;

  // An object's member; an absent view where this is no object or has no such member.
  [[nodiscard]] json_view operator[](std::string_view key) const;
  // An array's elements, in order; none where this is no array.
  [[nodiscard]] std::vector<json_view> items() const;
  // An object's or array's size; 0 for anything else.
  [[nodiscard]] std::size_t size() const;

  // The value as that type; nullopt where it is absent or of another type. An integer is a
  // number with no fraction that fits in 64 bits.
  [[nodiscard]] std::optional<double> number() const;
  [[nodiscard]] std::optional<std::int64_t> integer() const;
  [[nodiscard]] std::optional<std::string> text() const;
  [[nodiscard]] std::optional<bool> boolean() const;

  // A member as that type, or `fallback` where it is absent or of another type (unlike
  // nlohmann's value(), which throws on a type it did not expect: a damaged file is a finding,
  // not a crash).
  [[nodiscard]] double value(std::string_view key, double fallback) const {
    return (*this)[key].number().value_or(fallback);
  }
  [[nodiscard]] std::int64_t value(std::string_view key, std::int64_t fallback) const {
    return (*this)[key].integer().value_or(fallback);
  }
  [[nodiscard]] std::string value(std::string_view key, const std::string& fallback) const {
    return (*this)[key].text().value_or(fallback);
  }

  // The value converted to nlohmann (the whole subtree); null where absent.
  [[nodiscard]] json to_json() const;

 private:
  friend struct detail::json_view_access;
  const json* in_memory_ = nullptr;
  // A simdjson element (a document pointer and a tape index), kept as bytes so that this header
  // does not bring simdjson's 31k lines into every file that reads results.
  alignas(std::size_t) std::array<std::byte, 2 * sizeof(std::size_t)> element_{};
  bool in_document_ = false;
};

}  // namespace gpubench
