#include "gpubench/core/json_view.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "json_document.hpp"

namespace gpubench {

namespace dom = simdjson::dom;

namespace detail {

static_assert(std::is_trivially_copyable_v<dom::element>);
static_assert(sizeof(dom::element) <= 2 * sizeof(std::size_t));  // json_view::element_

json_view json_view_access::of(dom::element element) noexcept {
  json_view out;
  std::memcpy(out.element_.data(), &element, sizeof element);
  out.in_document_ = true;
  return out;
}

dom::element json_view_access::element(const json_view& view) noexcept {
  dom::element out;
  std::memcpy(&out, view.element_.data(), sizeof out);
  return out;
}

result_info json_view_access::stored(std::shared_ptr<const json_document> document,
                                     std::size_t slot) {
  result_info out;
  out.document_ = std::move(document);
  out.slot_ = slot;
  return out;
}

namespace {

json number_json(dom::element value) {
  switch (value.type()) {
    case dom::element_type::INT64: {
      const auto n = as<std::int64_t>(value);
      return n >= 0 ? json(static_cast<std::uint64_t>(n)) : json(n);
    }
    case dom::element_type::UINT64:
      return json(as<std::uint64_t>(value));
    case dom::element_type::DOUBLE:
      return json(as<double>(value));
    default:
      throw unconvertible_element{};
  }
}

}  // namespace

json to_json_value(dom::element value) {
  switch (value.type()) {
    case dom::element_type::OBJECT: {
      const auto object = as<dom::object>(value);
      json out = json::object();
      // Sized once: a fleet's file holds millions of small objects, and growing each one's
      // vector is most of what reading them costs.
      auto& members = out.get_ref<json::object_t&>();
      members.reserve(object.size());
      for (const dom::key_value_pair field : object) {
        out[std::string(field.key)] = to_json_value(field.value);
      }
      return out;
    }
    case dom::element_type::ARRAY: {
      const auto array = as<dom::array>(value);
      json::array_t items;
      items.reserve(array.size());
      for (const dom::element item : array) items.push_back(to_json_value(item));
      return json(std::move(items));
    }
    case dom::element_type::STRING:
      return std::string(as<std::string_view>(value));
    case dom::element_type::BOOL:
      return as<bool>(value);
    case dom::element_type::NULL_VALUE:
      return nullptr;
    default:
      return number_json(value);
  }
}

}  // namespace detail

using detail::json_view_access;

namespace {

bool of_type(const json_view& view, const json* in_memory, json::value_t memory_type,
             dom::element_type document_type) {
  if (in_memory != nullptr) return in_memory->type() == memory_type;
  return view.exists() && json_view_access::element(view).type() == document_type;
}

}  // namespace

bool json_view::is_object() const {
  return of_type(*this, in_memory_, json::value_t::object, dom::element_type::OBJECT);
}

bool json_view::is_array() const {
  return of_type(*this, in_memory_, json::value_t::array, dom::element_type::ARRAY);
}

bool json_view::is_string() const {
  return of_type(*this, in_memory_, json::value_t::string, dom::element_type::STRING);
}

bool json_view::is_boolean() const {
  return of_type(*this, in_memory_, json::value_t::boolean, dom::element_type::BOOL);
}

bool json_view::is_number() const {
  if (in_memory_ != nullptr) return in_memory_->is_number();
  return in_document_ && detail::is_number(json_view_access::element(*this));
}

json_view json_view::operator[](std::string_view key) const {
  if (in_memory_ != nullptr) {
    if (!in_memory_->is_object()) return {};
    const auto found = in_memory_->find(key);
    return found == in_memory_->end() ? json_view() : json_view(*found);
  }
  if (!in_document_) return {};
  dom::object object;
  if (json_view_access::element(*this).get(object) != simdjson::SUCCESS) return {};
  // The last of a repeated key, as nlohmann keeps it (simdjson's at_key finds the first).
  json_view out;
  for (const dom::key_value_pair field : object) {
    if (field.key == key) out = json_view_access::of(field.value);
  }
  return out;
}

std::vector<json_view> json_view::items() const {
  std::vector<json_view> out;
  if (in_memory_ != nullptr) {
    if (!in_memory_->is_array()) return out;
    out.reserve(in_memory_->size());
    for (const json& item : *in_memory_) out.emplace_back(item);
    return out;
  }
  if (!in_document_) return out;
  dom::array array;
  if (json_view_access::element(*this).get(array) != simdjson::SUCCESS) return out;
  out.reserve(array.size());
  for (const dom::element item : array) out.push_back(json_view_access::of(item));
  return out;
}

std::size_t json_view::size() const {
  if (in_memory_ != nullptr) {
    return in_memory_->is_object() || in_memory_->is_array() ? in_memory_->size() : 0;
  }
  if (!in_document_) return 0;
  const dom::element element = json_view_access::element(*this);
  dom::object object;
  if (element.get(object) == simdjson::SUCCESS) {
    // Keys, as nlohmann keeps them: a repeated one once.
    std::unordered_set<std::string_view> keys;
    for (const dom::key_value_pair field : object) keys.insert(field.key);
    return keys.size();
  }
  dom::array array;
  if (element.get(array) == simdjson::SUCCESS) return array.size();
  return 0;
}

std::optional<double> json_view::number() const {
  if (in_memory_ != nullptr) {
    if (!in_memory_->is_number()) return std::nullopt;
    return in_memory_->get<double>();
  }
  if (!is_number()) return std::nullopt;
  double out = 0;
  if (json_view_access::element(*this).get(out) != simdjson::SUCCESS) return std::nullopt;
  return out;
}

namespace {

// A double with no fraction inside int64's range (2^63 itself is the first one past it).
std::optional<std::int64_t> integral(double x) {
  if (!std::isfinite(x) || std::trunc(x) != x || x < -9.223372036854775808e18 ||
      x >= 9.223372036854775808e18) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(x);
}

std::optional<std::int64_t> from_unsigned(std::uint64_t n) {
  if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(n);
}

}  // namespace

std::optional<std::int64_t> json_view::integer() const {
  if (in_memory_ != nullptr) {
    if (in_memory_->is_number_unsigned()) return from_unsigned(in_memory_->get<std::uint64_t>());
    if (in_memory_->is_number_integer()) return in_memory_->get<std::int64_t>();
    if (in_memory_->is_number_float()) return integral(in_memory_->get<double>());
    return std::nullopt;
  }
  if (!in_document_) return std::nullopt;
  const dom::element element = json_view_access::element(*this);
  switch (element.type()) {
    case dom::element_type::INT64:
      return element.get_int64().value_unsafe();
    case dom::element_type::UINT64:
      return from_unsigned(element.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE:
      return integral(element.get_double().value_unsafe());
    default:
      return std::nullopt;
  }
}

std::optional<std::string> json_view::text() const {
  if (in_memory_ != nullptr) {
    if (!in_memory_->is_string()) return std::nullopt;
    return in_memory_->get<std::string>();
  }
  std::string_view out;
  if (!in_document_ || json_view_access::element(*this).get(out) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return std::string(out);
}

std::optional<bool> json_view::boolean() const {
  if (in_memory_ != nullptr) {
    if (!in_memory_->is_boolean()) return std::nullopt;
    return in_memory_->get<bool>();
  }
  bool out = false;
  if (!in_document_ || json_view_access::element(*this).get(out) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return out;
}

json json_view::to_json() const {
  if (in_memory_ != nullptr) return *in_memory_;
  if (!in_document_) return nullptr;
  return detail::to_json_value(json_view_access::element(*this));
}

json_view result_info::view() const {
  if (!document_) return json_view(value_);
  return json_view_access::of(document_->elements[slot_]);
}

const json& result_info::get() const {
  if (!document_) return value_;
  auto& converted = document_->conversions[slot_];
  std::call_once(converted.once,
                 [&] { converted.value = detail::to_json_value(document_->elements[slot_]); });
  return converted.value;
}

json& result_info::edit() {
  if (document_) {
    value_ = get();
    document_.reset();
  }
  return value_;
}

bool result_info::empty() const {
  if (!document_) return value_.empty();
  const dom::element element = document_->elements[slot_];
  dom::object object;
  if (element.get(object) == simdjson::SUCCESS) return object.begin() == object.end();
  dom::array array;
  if (element.get(array) == simdjson::SUCCESS) return array.begin() == array.end();
  return element.is_null();
}

}  // namespace gpubench
