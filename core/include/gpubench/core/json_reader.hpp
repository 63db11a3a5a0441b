// Checked reading of input files: every getter validates type and range and, when the value is
// wrong, throws input_error naming the file, the JSON path and what was expected.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"

namespace gpubench {

class json_reader {
 public:
  json_reader(const json& node, std::string file, std::string path = "");

  [[nodiscard]] const json& node() const noexcept { return *node_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  // Throws unless the node is an object whose keys are all in `allowed`.
  const json_reader& expect_object(std::initializer_list<std::string_view> allowed) const;
  const json_reader& expect_object(std::span<const std::string_view> allowed) const;
  [[nodiscard]] bool has(const std::string& key) const;

  [[nodiscard]] std::string get_string(const std::string& key) const;
  [[nodiscard]] std::optional<std::string> find_string(const std::string& key) const;
  [[nodiscard]] std::int64_t get_int(const std::string& key, std::int64_t min,
                                     std::int64_t max) const;
  [[nodiscard]] std::optional<std::int64_t> find_int(const std::string& key, std::int64_t min,
                                                     std::int64_t max) const;
  [[nodiscard]] double get_number(const std::string& key, double min, double max) const;
  [[nodiscard]] std::optional<double> find_number(const std::string& key, double min,
                                                  double max) const;
  [[nodiscard]] std::optional<bool> find_bool(const std::string& key) const;

  // The member as a reader (throws when absent).
  [[nodiscard]] json_reader member(const std::string& key) const;
  // The elements of an array member (throws when absent or not an array, or when it has fewer
  // than min_size elements).
  [[nodiscard]] std::vector<json_reader> elements(const std::string& key,
                                                  std::size_t min_size = 0) const;

  [[noreturn]] void fail(const std::string& key, std::string_view expected) const;
  [[noreturn]] void fail_here(std::string_view expected) const;

 private:
  [[nodiscard]] const json* find(const std::string& key) const;
  const json* node_;
  std::string file_;
  std::string path_;
};

// A short description of a JSON value for messages: `a string "abc"`, `the number -1`.
[[nodiscard]] std::string describe_json_value(const json& value);

}  // namespace gpubench
