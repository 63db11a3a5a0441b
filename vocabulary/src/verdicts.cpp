#include "gpubench/vocabulary/verdicts.hpp"

#include <ostream>
#include <utility>

namespace gpubench::vocabulary {

namespace {

// Each enum's words, once: to_string and from_string both read these tables.
constexpr std::pair<component, std::string_view> component_words[] = {
    {component::gpu_compute, "gpu_compute"},
    {component::gpu_memory, "gpu_memory"},
    {component::communication, "communication"},
    {component::pcie, "pcie"},
    {component::storage, "storage"},
    {component::cpu, "cpu"},
    {component::memory_capacity, "memory_capacity"},
    {component::none, "none"},
};
constexpr std::pair<basis, std::string_view> basis_words[] = {
    {basis::measured, "measured"},
    {basis::catalog, "catalog"},
    {basis::measured_and_catalog, "measured+catalog"},
    {basis::set, "set"},
    {basis::anchored, "anchored"},
    {basis::derived, "derived"},
    {basis::assumed_default, "default"},
    {basis::reported, "reported"},
    {basis::not_applicable, "not_applicable"},
    {basis::unknown, "unknown"},
};
constexpr std::pair<verdict, std::string_view> verdict_words[] = {
    {verdict::pass, "pass"},
    {verdict::warn, "warn"},
    {verdict::fail, "fail"},
};

template <typename Enum, std::size_t N>
std::string_view word_of(const std::pair<Enum, std::string_view> (&words)[N], Enum value) {
  for (const auto& [e, word] : words) {
    if (e == value) return word;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::pair<Enum, std::string_view> (&words)[N],
                             std::string_view word) {
  for (const auto& [e, w] : words) {
    if (w == word) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(component c) noexcept {
  return word_of(component_words, c);
}
std::optional<component> component_from_string(std::string_view name) {
  return value_of(component_words, name);
}
bool in_gpu_step(component c) noexcept {
  return c == component::gpu_compute || c == component::gpu_memory || c == component::communication;
}

std::string_view to_string(basis b) noexcept {
  return word_of(basis_words, b);
}
std::optional<basis> basis_from_string(std::string_view name) {
  return value_of(basis_words, name);
}

std::string_view to_string(verdict v) noexcept {
  return word_of(verdict_words, v);
}
std::optional<verdict> verdict_from_string(std::string_view name) {
  return value_of(verdict_words, name);
}

std::ostream& operator<<(std::ostream& out, component c) {
  return out << to_string(c);
}
std::ostream& operator<<(std::ostream& out, basis b) {
  return out << to_string(b);
}
std::ostream& operator<<(std::ostream& out, verdict v) {
  return out << to_string(v);
}

}  // namespace gpubench::vocabulary
