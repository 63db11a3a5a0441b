#include "gpubench/core/detail/results_fast.hpp"

#include <simdjson.h>

#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <new>
#include <string_view>
#include <vector>

#include "gpubench/core/parallel.hpp"

namespace gpubench::detail {

namespace {

namespace dom = simdjson::dom;

static_assert(json_text_padding >= simdjson::SIMDJSON_PADDING);

// Thrown inside this file only: the text is not one this reader takes; the checked one decides.
struct decline {};

template <class T>
T as(dom::element value) {
  T out{};
  if (value.get(out) != simdjson::SUCCESS) throw decline{};
  return out;
}

// As nlohmann reads a number: an integer from 0 up as unsigned, below 0 as signed, the rest as
// double ("-0" is a signed 0 there and an unsigned one here: the same value, written alike).
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
      throw decline{};
  }
}

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
        // A repeated key: nlohmann keeps its first place and its last value, as this does.
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

// A number as json_reader::get_number takes it: finite and within [min, max].
double number_in(dom::element value, double min, double max) {
  const double x = number_json(value).get<double>();
  if (!std::isfinite(x) || x < min || x > max) throw decline{};
  return x;
}

std::int64_t integer_in(dom::element value, std::int64_t min, std::int64_t max) {
  if (value.type() != dom::element_type::INT64) throw decline{};
  const auto n = as<std::int64_t>(value);
  if (n < min || n > max) throw decline{};
  return n;
}

std::string text(dom::element value) {
  return std::string(as<std::string_view>(value));
}

// The index of `key` in `keys`; a key not there declines, as does one seen before (`seen`: a bit
// per index).
template <std::size_t N>
std::size_t key_index(const std::array<std::string_view, N>& keys, std::string_view key,
                      std::uint32_t& seen) {
  static_assert(N <= 32);
  for (std::size_t i = 0; i < N; ++i) {
    if (keys[i] != key) continue;
    if ((seen >> i) & 1U) throw decline{};
    seen |= 1U << i;
    return i;
  }
  throw decline{};
}

metric_summary read_metric(dom::element value) {
  metric_summary out;
  std::uint32_t seen = 0;
  for (const dom::key_value_pair field : as<dom::object>(value)) {
    switch (key_index(metric_keys, field.key, seen)) {
      case 0:
        out.median = number_in(field.value, -max_statistic_magnitude, max_statistic_magnitude);
        break;
      case 1:
        out.min = number_in(field.value, -max_statistic_magnitude, max_statistic_magnitude);
        break;
      case 2:
        out.max = number_in(field.value, -max_statistic_magnitude, max_statistic_magnitude);
        break;
      case 3:
        out.cv = number_in(field.value, -max_statistic_magnitude, max_statistic_magnitude);
        break;
      case 4:
        out.n = static_cast<std::size_t>(integer_in(field.value, 1, max_metric_samples));
        break;
      case 5:
        out.unit.unit = text(field.value);
        break;
      default: {
        const std::string_view direction = as<std::string_view>(field.value);
        if (direction != "higher" && direction != "lower") throw decline{};
        out.unit.direction = direction == "higher" ? better::higher : better::lower;
      }
    }
  }
  if (seen != (1U << metric_keys.size()) - 1) throw decline{};  // every member is required
  return out;
}

result read_result(dom::element value) {
  result r;
  std::uint32_t seen = 0;
  for (const dom::key_value_pair field : as<dom::object>(value)) {
    switch (key_index(result_keys, field.key, seen)) {
      case 0:
        r.id = text(field.value);
        break;
      case 1: {
        const std::string_view status = as<std::string_view>(field.value);
        if (status == "ok") {
          r.status = result_status::ok;
        } else if (status == "skipped") {
          r.status = result_status::skipped;
        } else if (status == "failed") {
          r.status = result_status::failed;
        } else {
          throw decline{};
        }
        break;
      }
      case 2:
        r.reason = text(field.value);
        break;
      case 3:
        r.error = text(field.value);
        break;
      case 4:
        r.axes = to_json_value(field.value);
        break;
      case 5:
        for (const dom::key_value_pair metric : as<dom::object>(field.value)) {
          std::string name(metric.key);
          for (const auto& [earlier, stats] : r.metrics) {
            if (earlier == name) throw decline{};
          }
          r.metrics.emplace_back(std::move(name), read_metric(metric.value));
        }
        break;
      case 6:
        r.verified = as<bool>(field.value);
        break;
      case 7:
        r.info = to_json_value(field.value);
        break;
      case 8:
        r.wall_s = number_in(field.value, 0, max_wall_s);
        break;
      case 9:
        r.host = text(field.value);
        break;
      default:
        r.rank = static_cast<int>(integer_in(field.value, INT_MIN, INT_MAX));
    }
  }
  if ((seen & 3U) != 3U) throw decline{};  // id and status are required
  return r;
}

}  // namespace

std::optional<results_document> parse_results_fast(const std::string& text,
                                                   const std::string& file) {
  try {
    dom::parser parser;
    // simdjson counts depth as check_json_depth does (the top level is 1): deeper is declined.
    const simdjson::error_code room = parser.allocate(text.size(), max_json_depth);
    // Out of memory here is out of memory: the checked reader needs several times more.
    if (room == simdjson::MEMALLOC) throw std::bad_alloc();
    if (room != simdjson::SUCCESS) return std::nullopt;
    dom::element root;
    if (parser.parse(text).get(root) != simdjson::SUCCESS) return std::nullopt;

    // Everything but the results and nodes arrays, as nlohmann would have read it, for the checks
    // and conversions parse_results applies; the arrays are read an element at a time.
    json header = json::object();
    std::optional<dom::array> results;
    std::optional<dom::array> nodes;
    for (const dom::key_value_pair field : as<dom::object>(root)) {
      if (field.key == "results" || field.key == "nodes") {
        auto& array = field.key == "results" ? results : nodes;
        if (array) return std::nullopt;
        array = as<dom::array>(field.value);
        header[std::string(field.key)] = json::array();
      } else {
        header[std::string(field.key)] = to_json_value(field.value);
      }
    }
    if (!results) return std::nullopt;
    check_results_header(json_reader(header, file));
    results_document doc = header.get<results_document>();
    // Each element is read on its own, on every core: the tape is only read, and each range of
    // elements fills its own slots.
    const auto elements = [](const dom::array& array) {
      std::vector<dom::element> out;
      for (const dom::element item : array) out.push_back(item);
      return out;
    };
    if (nodes) {
      const std::vector<dom::element> items = elements(*nodes);
      doc.nodes.resize(items.size());
      parallel_for(items.size(), 256, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          doc.nodes[i] = to_json_value(items[i]).get<node_entry>();
        }
      });
    }
    const std::vector<dom::element> items = elements(*results);
    doc.results.resize(items.size());
    parallel_for(items.size(), 4096, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) doc.results[i] = read_result(items[i]);
    });
    return doc;
  } catch (const decline&) {
  } catch (const input_error&) {
  } catch (const json::exception&) {
  }
  return std::nullopt;
}

}  // namespace gpubench::detail
