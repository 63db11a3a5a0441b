#include "gpubench/core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench {

std::string describe_json_value(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) {
        text = text.substr(0, 40) + "...";
      }
      return "the string " + json(text).dump(-1, ' ', true, json::error_handler_t::replace);
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "the number " + value.dump();
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default:
      return "an unsupported value";
  }
}

json_reader::json_reader(const json& node, std::string file, std::string path)
    : node_(&node), file_(std::move(file)), path_(std::move(path)) {}

void json_reader::fail(const std::string& key, std::string_view expected) const {
  throw bad_input(file_, json_path(path_, key), expected);
}

void json_reader::fail_here(std::string_view expected) const {
  throw bad_input(file_, path_.empty() ? "/" : path_, expected);
}

const json_reader& json_reader::expect_object(
    std::initializer_list<std::string_view> allowed) const {
  return expect_object(std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

const json_reader& json_reader::expect_object(std::span<const std::string_view> allowed) const {
  if (!node_->is_object()) {
    fail_here("an object, got " + describe_json_value(*node_));
  }
  for (const auto& [key, value] : node_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const std::vector<std::string> names(allowed.begin(), allowed.end());
      std::string expected = "no member named '";
      expected.append(key).append("' (known: ").append(join(names)).append(")");
      fail(key, expected + did_you_mean(key, names));
    }
  }
  return *this;
}

const json* json_reader::find(const std::string& key) const {
  if (!node_->is_object()) {
    fail_here("an object, got " + describe_json_value(*node_));
  }
  const auto it = node_->find(key);
  return it == node_->end() ? nullptr : &*it;
}

bool json_reader::has(const std::string& key) const {
  return find(key) != nullptr;
}

std::optional<std::string> json_reader::find_string(const std::string& key) const {
  const json* value = find(key);
  if (value == nullptr) {
    return std::nullopt;
  }
  if (!value->is_string()) {
    fail(key, "a string, got " + describe_json_value(*value));
  }
  return value->get<std::string>();
}

std::string json_reader::get_string(const std::string& key) const {
  auto value = find_string(key);
  if (!value) {
    fail(key, "a string (the field is missing)");
  }
  return *value;
}

std::optional<std::int64_t> json_reader::find_int(const std::string& key, std::int64_t min,
                                                  std::int64_t max) const {
  const json* value = find(key);
  if (value == nullptr) {
    return std::nullopt;
  }
  const std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
  if (!value->is_number_integer()) {
    fail(key, "an integer" + range + ", got " + describe_json_value(*value));
  }
  if (value->is_number_unsigned() &&
      value->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    fail(key, "an integer" + range + ", got " + describe_json_value(*value));
  }
  const auto number = value->get<std::int64_t>();
  if (number < min || number > max) {
    fail(key, "an integer" + range + ", got " + describe_json_value(*value));
  }
  return number;
}

std::int64_t json_reader::get_int(const std::string& key, std::int64_t min,
                                  std::int64_t max) const {
  auto value = find_int(key, min, max);
  if (!value) {
    fail(key, "an integer (the field is missing)");
  }
  return *value;
}

std::optional<double> json_reader::find_number(const std::string& key, double min,
                                               double max) const {
  const json* value = find(key);
  if (value == nullptr) {
    return std::nullopt;
  }
  // The message is built only on failure: a results file checks a million numbers this way.
  const auto reject = [&] {
    const auto limit = [](double x) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.10g", x);
      return std::string(buffer);
    };
    fail(key, "a number from " + limit(min) + " to " + limit(max) + ", got " +
                  describe_json_value(*value));
  };
  if (!value->is_number()) reject();
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < min || number > max) reject();
  return number;
}

double json_reader::get_number(const std::string& key, double min, double max) const {
  auto value = find_number(key, min, max);
  if (!value) {
    fail(key, "a number (the field is missing)");
  }
  return *value;
}

std::optional<bool> json_reader::find_bool(const std::string& key) const {
  const json* value = find(key);
  if (value == nullptr) {
    return std::nullopt;
  }
  if (!value->is_boolean()) {
    fail(key, "true or false, got " + describe_json_value(*value));
  }
  return value->get<bool>();
}

json_reader json_reader::member(const std::string& key) const {
  const json* value = find(key);
  if (value == nullptr) {
    fail(key, "a value (the field is missing)");
  }
  return json_reader(*value, file_, json_path(path_, key));
}

std::vector<json_reader> json_reader::elements(const std::string& key, std::size_t min_size) const {
  const json* value = find(key);
  if (value == nullptr) {
    fail(key, "an array (the field is missing)");
  }
  if (!value->is_array()) {
    fail(key, "an array, got " + describe_json_value(*value));
  }
  if (value->size() < min_size) {
    fail(key, "an array of at least " + std::to_string(min_size) + " element(s)");
  }
  std::vector<json_reader> out;
  const std::string base = json_path(path_, key);
  for (std::size_t i = 0; i < value->size(); ++i) {
    out.emplace_back((*value)[i], file_, json_path(base, i));
  }
  return out;
}

}  // namespace gpubench
