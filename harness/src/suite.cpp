#include "gpubench/harness/suite.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/context.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {
constexpr const char* suite_schema = "gpubench.suite/1";
constexpr std::int64_t max_repetitions = 1000;
constexpr std::int64_t max_iterations = 1'000'000'000;
constexpr std::int64_t max_axis_integer = std::int64_t{1} << 50;  // 1 PiB as a size

std::vector<axis_value> read_axis_values(const json_reader& reader) {
  std::vector<axis_value> values;
  const json& node = reader.node();
  const auto add = [&](const json& value, const std::string& path) {
    if (value.is_number_integer()) {
      values.emplace_back(value.get<std::int64_t>());
    } else if (value.is_string()) {
      values.emplace_back(value.get<std::string>());
    } else {
      throw bad_input(reader.file(), path,
                      "an integer or a string, got " + describe_json_value(value));
    }
  };
  if (node.is_array()) {
    if (node.empty()) {
      reader.fail_here("a non-empty array of axis values");
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      add(node[i], json_path(reader.path(), i));
    }
  } else {
    add(node, reader.path());
  }
  return values;
}

void read_settings(const json_reader& reader, std::optional<int>& repetitions,
                   std::optional<int>& warmup, std::optional<double>& min_time,
                   std::optional<std::int64_t>& iterations) {
  if (auto v = reader.find_int("repetitions", 1, max_repetitions))
    repetitions = static_cast<int>(*v);
  if (auto v = reader.find_int("warmup_iterations", 0, max_repetitions))
    warmup = static_cast<int>(*v);
  if (auto v = reader.find_number("min_time_s", 1e-4, 600)) min_time = *v;
  if (auto v = reader.find_int("iterations", 1, max_iterations)) iterations = *v;
}

// Runs the axis's range and own check on a value given by the user.
axis_value checked(const axis& a, axis_value value, const std::string& where, const context& ctx) {
  try {
    if (a.range) check_in_range(a.kind, a.range(ctx), std::get<std::int64_t>(value));
    if (a.check) a.check(value);
  } catch (const std::invalid_argument& e) {
    throw input_error(where + ": " + e.what());
  }
  return value;
}

// Converts a suite or command-line value to the axis's kind.
axis_value coerce(const axis& a, const axis_value& value, const std::string& where,
                  const context& ctx) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    return checked(a, parse_axis_value(a.kind, *text, where), where, ctx);
  }
  const auto number = std::get<std::int64_t>(value);
  if (a.kind == axis_kind::string) {
    throw input_error(where + ": expected a string value for axis '" + a.name + "', got " +
                      std::to_string(number));
  }
  return checked(a, parse_axis_value(a.kind, std::to_string(number), where), where, ctx);
}
}  // namespace

std::size_t count_cases(const std::vector<planned_benchmark>& plan) {
  std::size_t total = 0;
  for (const auto& planned : plan) {
    total += planned.skip_reason ? 1 : planned.cases.size();
  }
  return total;
}

bool id_matches(std::string_view pattern, std::string_view id) {
  return fnmatch(std::string(pattern).c_str(), std::string(id).c_str(), 0) == 0;
}

axis_value parse_axis_value(axis_kind kind, const std::string& text, const std::string& where) {
  if (kind == axis_kind::string) {
    if (text.empty()) {
      throw input_error(where + ": expected a non-empty value");
    }
    return text;
  }
  // Integers, optionally with a binary size suffix for byte axes ("4MiB").
  std::size_t used = 0;
  long long number = 0;
  try {
    number = std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    throw input_error(where + ": expected an integer, got '" + text + "'");
  }
  const std::string suffix = text.substr(used);
  std::int64_t scale = 1;
  if (!suffix.empty()) {
    static const std::pair<const char*, std::int64_t> units[] = {{"KiB", std::int64_t{1} << 10},
                                                                 {"MiB", std::int64_t{1} << 20},
                                                                 {"GiB", std::int64_t{1} << 30},
                                                                 {"TiB", std::int64_t{1} << 40}};
    const auto* unit = std::find_if(std::begin(units), std::end(units),
                                    [&](const auto& u) { return suffix == u.first; });
    if (kind != axis_kind::bytes || unit == std::end(units)) {
      throw input_error(
          where + ": expected an integer" +
          std::string(kind == axis_kind::bytes ? " (bytes, or with KiB/MiB/GiB/TiB)" : "") +
          ", got '" + text + "'");
    }
    scale = unit->second;
  }
  const std::int64_t min = kind == axis_kind::bytes ? 1 : 0;
  if (number < min || number > max_axis_integer / scale) {
    throw input_error(where + ": expected " +
                      std::string(kind == axis_kind::bytes ? "a size from 1 byte to 1 PiB"
                                                           : "an integer from 0 to 2^50") +
                      ", got '" + text + "'");
  }
  return static_cast<std::int64_t>(number) * scale;
}

suite parse_suite(const json& document, const std::string& file) {
  const json_reader root(document, file);
  root.expect_object({"schema", "name", "description", "defaults", "benchmarks"});
  if (root.get_string("schema") != suite_schema) {
    root.fail("schema", std::string("\"") + suite_schema + "\"");
  }
  suite s;
  s.source = file;
  s.name = root.get_string("name");
  s.description = root.find_string("description").value_or("");
  if (root.has("defaults")) {
    const json_reader defaults = root.member("defaults");
    defaults.expect_object({"repetitions", "warmup_iterations", "min_time_s", "iterations"});
    std::optional<int> repetitions;
    std::optional<int> warmup;
    std::optional<double> min_time;
    read_settings(defaults, repetitions, warmup, min_time, s.defaults.iterations);
    s.defaults.repetitions = repetitions.value_or(s.defaults.repetitions);
    s.defaults.warmup_iterations = warmup.value_or(s.defaults.warmup_iterations);
    s.defaults.min_time_s = min_time.value_or(s.defaults.min_time_s);
  }
  for (const json_reader& item : root.elements("benchmarks", 1)) {
    item.expect_object(
        {"id", "axes", "repetitions", "warmup_iterations", "min_time_s", "iterations"});
    suite_entry entry;
    entry.pattern = item.get_string("id");
    if (entry.pattern.empty()) {
      item.fail("id", "a benchmark id or pattern, got an empty string");
    }
    read_settings(item, entry.repetitions, entry.warmup_iterations, entry.min_time_s,
                  entry.iterations);
    if (item.has("axes")) {
      const json_reader axes = item.member("axes");
      if (!axes.node().is_object()) {
        axes.fail_here("an object mapping axis names to values");
      }
      for (const auto& [name, value] : axes.node().items()) {
        entry.axes[name] = read_axis_values(json_reader(value, file, json_path(axes.path(), name)));
      }
    }
    s.entries.push_back(std::move(entry));
  }
  return s;
}

suite load_suite(const std::string& name_or_path) {
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  fs::path path =
      looks_like_path ? fs::path(name_or_path) : config_dir() / "suites" / (name_or_path + ".json");
  if (!looks_like_path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      if (fs::exists(name_or_path, ec)) {
        path = name_or_path;
      } else {
        throw input_error("--suite: expected a suite name (" + join(suite_names()) +
                          ") or a suite file, got '" + name_or_path + "'");
      }
    }
  }
  return parse_suite(read_json_file(path), path.string());
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config_dir() / "suites", ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

axis_override parse_axis_override(const std::string& text) {
  const std::string where = "--axis " + text;
  const auto colon = text.find(':');
  const auto equals = text.find('=', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || equals == std::string::npos || colon == 0 ||
      equals == colon + 1) {
    throw input_error(where + ": expected ID:AXIS=VALUE[,VALUE...]");
  }
  axis_override out;
  out.pattern = text.substr(0, colon);
  out.axis = text.substr(colon + 1, equals - colon - 1);
  for (auto& value : split(text.substr(equals + 1), ',')) {
    if (value.empty()) {
      throw input_error(where + ": expected a value between commas");
    }
    out.values.push_back(std::move(value));
  }
  return out;
}

namespace {

// Every pattern and axis the suite and the command line name exists in some benchmark: a typo is
// refused before anything runs, naming the file and JSON path or the flag.
void check_names(const suite& s, const plan_request& request,
                 const std::vector<const benchmark_definition*>& all) {
  const auto matches_any = [&](const std::string& pattern) {
    return std::any_of(all.begin(), all.end(),
                       [&](const auto* def) { return id_matches(pattern, def->id()); });
  };
  std::vector<std::string> ids;
  for (const auto* def : all) ids.push_back(def->id());
  // The axes of the benchmarks a pattern matches: what a misspelt axis is matched against.
  const auto axes_of = [&](const std::string& pattern) {
    std::vector<std::string> names;
    for (const auto* def : all) {
      if (!id_matches(pattern, def->id())) continue;
      for (const axis& a : def->axes()) {
        if (std::find(names.begin(), names.end(), a.name) == names.end()) names.push_back(a.name);
      }
    }
    return names;
  };
  const std::string file = s.source.string();
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    if (!matches_any(s.entries[i].pattern)) {
      throw bad_input(file, json_path(json_path("/benchmarks", i), "id"),
                      "a known benchmark id or pattern (see `gpubench list`), got '" +
                          s.entries[i].pattern + "'" + did_you_mean(s.entries[i].pattern, ids));
    }
  }
  for (const auto* flag : {&request.only, &request.skip}) {
    for (const auto& pattern : *flag) {
      if (!matches_any(pattern)) {
        throw input_error(
            std::string(flag == &request.only ? "--only" : "--skip") +
            ": expected a known benchmark id or pattern (see `gpubench list`), got '" + pattern +
            "'" + did_you_mean(pattern, ids));
      }
    }
  }
  for (const auto& override_ : request.axis_overrides) {
    if (!matches_any(override_.pattern)) {
      throw input_error("--axis " + override_.pattern + ":" + override_.axis +
                        ": expected a known benchmark id or pattern, got '" + override_.pattern +
                        "'" + did_you_mean(override_.pattern, ids));
    }
    const bool has_axis = std::any_of(all.begin(), all.end(), [&](const auto* def) {
      return id_matches(override_.pattern, def->id()) && def->find_axis(override_.axis) != nullptr;
    });
    if (!has_axis) {
      throw input_error("--axis " + override_.pattern + ":" + override_.axis +
                        ": no benchmark matching '" + override_.pattern + "' has an axis named '" +
                        override_.axis + "'" +
                        did_you_mean(override_.axis, axes_of(override_.pattern)));
    }
  }
  // An axis named in a suite entry must exist in some benchmark the entry matches.
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    for (const auto& axis_entry : s.entries[i].axes) {
      const std::string& name =
          axis_entry.first;  // not a structured binding: clang 14 cannot capture those
      const bool has_axis = std::any_of(all.begin(), all.end(), [&](const auto* def) {
        return id_matches(s.entries[i].pattern, def->id()) && def->find_axis(name) != nullptr;
      });
      if (!has_axis) {
        throw bad_input(file, json_path(json_path(json_path("/benchmarks", i), "axes"), name),
                        "an axis of '" + s.entries[i].pattern + "' (see `gpubench list`)" +
                            did_you_mean(name, axes_of(s.entries[i].pattern)));
      }
    }
  }
}

// The values the user gave each axis of `def` (suite entries in file order, then the command
// line), checked even when the benchmark cannot run here, so a typo never waits for a GPU
// machine to show; nullopt for an axis nobody set.
std::vector<std::optional<std::vector<axis_value>>> given_values(
    const suite& s, const plan_request& request, const benchmark_definition* def,
    const std::vector<std::size_t>& entries, const context& ctx) {
  const std::string file = s.source.string();
  std::vector<std::optional<std::vector<axis_value>>> given(def->axes().size());
  for (std::size_t x = 0; x < def->axes().size(); ++x) {
    const axis& a = def->axes()[x];
    for (std::size_t i : entries) {
      const auto found = s.entries[i].axes.find(a.name);
      if (found == s.entries[i].axes.end()) {
        continue;
      }
      const std::string where =
          file + ": " + json_path(json_path(json_path("/benchmarks", i), "axes"), a.name);
      given[x].emplace();
      for (const auto& value : found->second) {
        given[x]->push_back(coerce(a, value, where, ctx));
      }
    }
    for (const auto& override_ : request.axis_overrides) {
      if (override_.axis != a.name || !id_matches(override_.pattern, def->id())) {
        continue;
      }
      const std::string where = "--axis " + override_.pattern + ":" + override_.axis;
      given[x].emplace();
      for (const auto& text : override_.values) {
        given[x]->push_back(checked(a, parse_axis_value(a.kind, text, where), where, ctx));
      }
    }
  }
  return given;
}

// Every case of a benchmark: the Cartesian product of its axes' values (the given ones, else its
// defaults here), first axis outermost; a skip reason where an axis has no value here.
void add_cases(planned_benchmark& planned,
               const std::vector<std::optional<std::vector<axis_value>>>& given,
               const context& ctx) {
  const benchmark_definition* def = planned.definition;
  std::vector<std::pair<const axis*, std::vector<axis_value>>> sweep;
  for (std::size_t x = 0; x < def->axes().size(); ++x) {
    const axis& a = def->axes()[x];
    std::vector<axis_value> values =
        given[x] ? *given[x] : (a.defaults ? a.defaults(ctx) : std::vector<axis_value>{});
    if (values.empty()) {
      planned.skip_reason = "axis '" + a.name + "' has no values on this machine";
      return;
    }
    sweep.emplace_back(&a, std::move(values));
  }
  // Case n is n written in mixed radix.
  std::size_t total = 1;
  for (const auto& [a, values] : sweep) {
    total *= values.size();
  }
  for (std::size_t n = 0; n < total; ++n) {
    std::vector<std::size_t> digit(sweep.size());
    std::size_t rest = n;
    for (std::size_t k = sweep.size(); k-- > 0;) {
      digit[k] = rest % sweep[k].second.size();
      rest /= sweep[k].second.size();
    }
    axis_values point;
    for (std::size_t k = 0; k < sweep.size(); ++k) {
      point.set(sweep[k].first->name, sweep[k].second[digit[k]]);
    }
    planned.cases.push_back(std::move(point));
  }
}

}  // namespace

std::vector<planned_benchmark> make_plan(const suite& s, const plan_request& request,
                                         const registry& benchmarks, const context& ctx) {
  const auto all = benchmarks.all();
  check_names(s, request, all);
  std::vector<planned_benchmark> plan;
  for (const benchmark_definition* def : all) {
    const auto in = [&](const std::vector<std::string>& patterns) {
      return std::any_of(patterns.begin(), patterns.end(),
                         [&](const std::string& p) { return id_matches(p, def->id()); });
    };
    std::vector<std::size_t> entries;
    for (std::size_t i = 0; i < s.entries.size(); ++i) {
      if (id_matches(s.entries[i].pattern, def->id())) {
        entries.push_back(i);
      }
    }
    const bool selected = request.only.empty() ? !entries.empty() : in(request.only);
    if (!selected || in(request.skip)) {
      continue;
    }

    planned_benchmark planned;
    planned.definition = def;
    planned.settings = s.defaults;
    for (std::size_t i : entries) {
      const suite_entry& e = s.entries[i];
      if (e.repetitions) planned.settings.repetitions = *e.repetitions;
      if (e.warmup_iterations) planned.settings.warmup_iterations = *e.warmup_iterations;
      if (e.min_time_s) planned.settings.min_time_s = *e.min_time_s;
      if (e.iterations) planned.settings.iterations = e.iterations;
    }
    if (def->single_iteration()) {
      planned.settings.repetitions = 1;
      planned.settings.warmup_iterations = 0;
      planned.settings.iterations = 1;
    }
    const auto given = given_values(s, request, def, entries, ctx);
    planned.skip_reason = def->unsupported_reason(ctx);
    if (!planned.skip_reason) add_cases(planned, given, ctx);
    plan.push_back(std::move(planned));
  }
  return plan;
}

}  // namespace gpubench
