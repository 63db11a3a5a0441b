#include "gpubench/core/detail/results_fast.hpp"

#include <simdjson.h>

#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "gpubench/core/parallel.hpp"
#include "json_document.hpp"

namespace gpubench::detail {

namespace {

namespace dom = simdjson::dom;

static_assert(json_text_padding >= simdjson::SIMDJSON_PADDING);

// Thrown inside this file only: the text is not one this reader takes; the checked one decides
// (as is unconvertible_element, from as<T> on a value of another type).
struct decline {};

// A number as json_reader::get_number takes it: finite and within [min, max].
double number_in(dom::element value, double min, double max) {
  if (!is_number(value)) throw decline{};
  const double x = as<double>(value);
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

// `info` stays in `document` at `slot`.
result read_result(dom::element value, const std::shared_ptr<json_document>& document,
                   std::size_t slot) {
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
        document->elements[slot] = field.value;
        r.info = json_view_access::stored(document, slot);
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

namespace {

std::optional<results_document> parse_fast(std::string_view text, std::size_t readable_past,
                                           const std::string& file,
                                           const std::function<void()>& release) {
  try {
    // Kept while a result's info is: the results hold their info in it.
    auto document = std::make_shared<json_document>();
    dom::parser parser;
    // simdjson counts depth as check_json_depth does (the top level is 1): deeper is declined.
    const simdjson::error_code room = parser.allocate(text.size(), max_json_depth);
    // Out of memory here is out of memory: the checked reader needs several times more.
    if (room == simdjson::MEMALLOC) throw std::bad_alloc();
    if (room != simdjson::SUCCESS) return std::nullopt;
    dom::element root;
    // Copied only where the text lacks simdjson's padding.
    const bool pad = readable_past < simdjson::SIMDJSON_PADDING;
    const simdjson::error_code parsed =
        parser.parse_into_document(document->document, text.data(), text.size(), pad).get(root);
    if (parsed == simdjson::MEMALLOC) throw std::bad_alloc();
    if (parsed != simdjson::SUCCESS) return std::nullopt;
    // The document holds copies of the strings: the text is no longer read.
    if (release) release();

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
    document->elements.resize(items.size());
    document->conversions = std::make_unique<json_document::conversion[]>(items.size());
    parallel_for(items.size(), 4096, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) doc.results[i] = read_result(items[i], document, i);
    });
    return doc;
  } catch (const decline&) {
  } catch (const unconvertible_element&) {
  } catch (const input_error&) {
  } catch (const json::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<results_document> parse_results_fast(const std::string& text,
                                                   const std::string& file) {
  return parse_fast(text, text.capacity() - text.size(), file, {});
}

std::optional<results_document> parse_results_fast(json_file_bytes& text, const std::string& file) {
  return parse_fast(text.text(), text.room(), file, [&text] { text.release(); });
}

}  // namespace gpubench::detail
