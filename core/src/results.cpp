#include "gpubench/core/results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "gpubench/core/detail/results_fast.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"

namespace gpubench {

namespace fs = std::filesystem;

void to_json(json& j, const result& r) {
  j = json::object();
  j["id"] = r.id;
  j["status"] = r.status;
  if (r.status == result_status::skipped) {
    j["reason"] = r.reason;
  }
  if (r.status == result_status::failed) {
    j["error"] = r.error;
  }
  if (!r.axes.empty()) {
    j["axes"] = r.axes;
  }
  if (!r.metrics.empty()) {
    json metrics = json::object();
    for (const auto& [name, s] : r.metrics) {
      json entry = static_cast<const summary&>(s);
      entry["unit"] = s.unit.unit;
      entry["better"] = s.unit.direction;
      metrics[name] = std::move(entry);
    }
    j["metrics"] = std::move(metrics);
  }
  if (r.verified) {
    j["verified"] = *r.verified;
  }
  if (!r.info.empty()) {
    j["info"] = r.info.get();
  }
  if (r.wall_s) {
    j["wall_s"] = *r.wall_s;
  }
  if (r.rank) {
    j["host"] = r.host;
    j["rank"] = *r.rank;
  }
}

void from_json(const json& j, result& r) {
  r = result{};
  r.id = j.at("id").get<std::string>();
  r.status = j.at("status").get<result_status>();
  r.reason = j.value("reason", "");
  r.error = j.value("error", "");
  if (j.contains("axes")) r.axes = j.at("axes");
  if (j.contains("metrics")) {
    for (const auto& [name, value] : j.at("metrics").items()) {
      const metric_unit unit{value.at("unit").get<std::string>(), value.at("better").get<better>()};
      r.metrics.emplace_back(name, metric_summary(value.get<summary>(), unit));
    }
  }
  if (j.contains("verified")) r.verified = j.at("verified").get<bool>();
  if (j.contains("info")) r.info = j.at("info");
  if (j.contains("wall_s")) r.wall_s = j.at("wall_s").get<double>();
  r.host = j.value("host", "");
  if (j.contains("rank")) r.rank = j.at("rank").get<int>();
}

void to_json(json& j, const results_document& doc) {
  j = json::object();
  j["schema"] = results_schema;
  j["meta"] = doc.meta;
  j["system"] = doc.system;
  if (!doc.nodes.empty()) {
    j["nodes"] = doc.nodes;
  }
  j["results"] = doc.results;
}

const metric_summary* find_metric(const result& r, std::string_view metric) {
  for (const auto& [name, stats] : r.metrics) {
    if (name == metric) return &stats;
  }
  return nullptr;
}

std::optional<metric_unit> declared_unit(const results_document& doc, std::string_view id,
                                         std::string_view metric) {
  for (const result& r : doc.results) {
    if (r.id != id) continue;
    if (const metric_summary* m = find_metric(r, metric)) return m->unit;
  }
  return std::nullopt;
}

std::optional<double> metric_median(const result& r, std::string_view metric) {
  for (const auto& [name, stats] : r.metrics) {
    if (name == metric) return stats.median;
  }
  return std::nullopt;
}

std::optional<std::string> axis_text(const json& axes, std::string_view name) {
  const std::string key(name);
  if (!axes.is_object() || !axes.contains(key)) return std::nullopt;
  const json& v = axes.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::optional<std::pair<int, int>> parse_gpu_pair(std::string_view text) {
  const auto arrow = text.find('>');
  if (arrow == std::string_view::npos) return std::nullopt;
  const auto index = [](std::string_view digits) -> std::optional<int> {
    int value = -1;
    const char* end = digits.data() + digits.size();
    const auto [stop, error] = std::from_chars(digits.data(), end, value);
    if (digits.empty() || error != std::errc() || stop != end || value < 0) return std::nullopt;
    return value;
  };
  const auto src = index(text.substr(0, arrow));
  const auto dst = index(text.substr(arrow + 1));
  if (!src || !dst || *src == *dst) return std::nullopt;
  return std::pair{*src, *dst};
}

std::optional<double> axis_number(const json& axes, std::string_view name) {
  const std::string key(name);
  if (!axes.is_object() || !axes.contains(key) || !axes.at(key).is_number()) return std::nullopt;
  return axes.at(key).get<double>();
}

void from_json(const json& j, results_document& doc) {
  doc.meta = j.at("meta").get<run_meta>();
  doc.system = j.at("system").get<system_info>();
  doc.nodes = j.contains("nodes") ? j.at("nodes").get<std::vector<node_entry>>()
                                  : std::vector<node_entry>{};
  doc.results = j.at("results").get<std::vector<result>>();
}

results_document read_results(const fs::path& path) {
  json_file_bytes bytes = read_json_file_bytes(path);
  if (auto doc = detail::parse_results_fast(bytes, path.string())) return std::move(*doc);
  // Declined after the text was let go: read again for the checked reader, which names what is
  // wrong with it.
  const std::string text =
      bytes.text().data() == nullptr ? read_json_file_text(path) : bytes.take_text();
  return parse_results(parse_json_text(text, path.string()), path.string());
}

results_document parse_results_text(const std::string& text, const std::string& file) {
  if (auto doc = detail::parse_results_fast(text, file)) return std::move(*doc);
  // Declined: whatever is wrong (or merely unusual) is found and named by the checked reader.
  return parse_results(parse_json_text(text, file), file);
}

namespace detail {

void check_results_header(const json_reader& root) {
  root.expect_object({"schema", "meta", "system", "nodes", "results"});
  if (root.get_string("schema") != results_schema) {
    root.fail("schema", std::string("\"") + results_schema + "\"");
  }
  (void)root.member("meta").expect_object({"version", "git", "argv", "started", "finished",
                                           "build_type", "compiler", "cuda", "driver", "nccl",
                                           "mpi_ranks", "suite", "interrupted", "warnings"});
}

}  // namespace detail

namespace {

void check_result(const json_reader& item) {
  item.expect_object(detail::result_keys);
  (void)item.get_string("id");
  (void)item.find_number("wall_s", 0, detail::max_wall_s);
  const std::string status = item.get_string("status");
  if (status != "ok" && status != "skipped" && status != "failed") {
    item.fail("status", "one of ok, skipped, failed, got '" + status + "'");
  }
  if (!item.has("metrics")) return;
  const json_reader metrics = item.member("metrics");
  if (!metrics.node().is_object()) {
    metrics.fail_here("an object of metric summaries");
  }
  for (const auto& [name, value] : metrics.node().items()) {
    const json_reader metric(value, item.file(), json_path(metrics.path(), name));
    metric.expect_object(detail::metric_keys);
    for (const char* field : {"median", "min", "max", "cv"}) {
      (void)metric.get_number(field, -detail::max_statistic_magnitude,
                              detail::max_statistic_magnitude);
    }
    (void)metric.get_int("n", 1, detail::max_metric_samples);
    // Every gpubench since 2026-11-23 writes them: what the benchmark declared, the one
    // source of a metric's unit and of which way is better.
    if (!metric.has("unit") || !metric.has("better")) {
      metric.fail_here(
          "\"unit\" and \"better\" beside the statistics (a file from before gpubench "
          "recorded them, 2026-11-23: run the benchmarks again)");
    }
    (void)metric.get_string("unit");
    if (const std::string direction = metric.get_string("better");
        direction != "higher" && direction != "lower") {
      metric.fail("better", "\"higher\" or \"lower\"");
    }
  }
}

}  // namespace

results_document parse_results(const json& document, const std::string& file) {
  const json_reader root(document, file);
  detail::check_results_header(root);
  for (const json_reader& item : root.elements("results")) check_result(item);
  try {
    return document.get<results_document>();
  } catch (const json::exception& e) {
    throw bad_input(file, "", std::string("a gpubench.results/1 document (") + e.what() + ")");
  }
}

std::string iso8601_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace gpubench
