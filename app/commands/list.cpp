// gpubench list: every benchmark with its axes (and their defaults here), metrics and whether it
// can run here; the suites.
#include <algorithm>
#include <iostream>

#include "../command.hpp"
#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/build_info.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/discovery.hpp"
#include "gpubench/harness/suite.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/vocabulary/figures.hpp"

namespace gpubench::app {

namespace {
const char* kind_name(axis_kind kind) {
  switch (kind) {
    case axis_kind::integer:
      return "integer";
    case axis_kind::bytes:
      return "bytes";
    case axis_kind::string:
      return "string";
  }
  return "unknown";
}

// A default value as --axis takes it: sizes in binary units where they are whole ("1GiB").
std::string value_text(const json& kind, const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (kind == "bytes" && value.is_number_integer()) {
    const auto bytes = value.get<std::int64_t>();
    for (const auto& [unit, size] :
         {std::pair{"PiB", std::int64_t{1} << 50}, std::pair{"TiB", std::int64_t{1} << 40},
          std::pair{"GiB", std::int64_t{1} << 30}, std::pair{"MiB", std::int64_t{1} << 20},
          std::pair{"KiB", std::int64_t{1} << 10}}) {
      if (bytes >= size && bytes % size == 0) return std::to_string(bytes / size) + unit;
    }
  }
  return value.dump();
}

// "1,2,4" or, for a long sweep, "8,16,...,8GiB (31 values)"; "(none here)" when empty.
std::string defaults_text(const json& kind, const json& defaults) {
  if (defaults.empty()) return "(none here)";
  std::vector<std::string> values;
  for (const auto& v : defaults) values.push_back(value_text(kind, v));
  if (values.size() <= 6) return join(values, ",");
  return values[0] + "," + values[1] + ",...," + values.back() + " (" +
         std::to_string(values.size()) + " values)";
}

// --names KIND: the names a flag takes, one a line, for shell completion and scripts; read from
// the same tables the flags check against, so a new benchmark or catalog entry is listed as is.
struct name_kind {
  std::string_view kind;
  std::function<std::vector<std::string>()> names;
};

std::vector<name_kind> name_kinds(const CLI::App& app) {
  return {
      {"commands", [&app] { return command_names(app); }},
      {"benchmarks",
       [] {
         std::vector<std::string> ids;
         for (const benchmark_definition* def : registry::global().all()) ids.push_back(def->id());
         return ids;
       }},
      {"suites", [] { return suite_names(); }},
      {"catalog", [] { return model::catalog_entry_names(); }},
      {"gpus", [] { return model::catalog_names("gpus"); }},
      {"workloads", [] { return model::workload_names(); }},
      {"presets", [] { return model::preset_names(); }},
      {"precisions", [] { return model::precision_names(); }},
      {"specs", [] { return acceptance::spec_names(); }},
      {"settings", [] { return model::documented_settings(); }},
      {"figures", [] { return vocabulary::figure_keys(); }},
  };
}

// "flags:size": the flags of one command, as they are typed.
constexpr std::string_view flags_kind = "flags:";

int list_names(const CLI::App& app, const std::string& kind) {
  std::vector<std::string> names;
  if (kind.starts_with(flags_kind)) {
    const std::string command = kind.substr(flags_kind.size());
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : app.get_subcommands({})) {
      if (s->get_name() == command) sub = s;
    }
    if (sub == nullptr) throw input_error("--names " + kind + ": " + not_a_command(app, command));
    for (const CLI::Option* option : sub->get_options()) {
      for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    }
  } else {
    const std::vector<name_kind> kinds = name_kinds(app);
    const auto it = std::find_if(kinds.begin(), kinds.end(),
                                 [&](const name_kind& k) { return k.kind == kind; });
    if (it == kinds.end()) {
      std::vector<std::string> known;
      for (const name_kind& k : kinds) known.emplace_back(k.kind);
      known.push_back(std::string(flags_kind) + "COMMAND");
      throw input_error("--names: expected one of " + join(known) + ", got '" + kind + "'" +
                        did_you_mean(kind, known));
    }
    names = it->names();
  }
  for (const auto& name : names) std::cout << name << "\n";
  return exit_ok;
}

int list(bool as_json) {
  const context ctx(discover_system(), run_options{});
  json benchmarks = json::array();
  for (const benchmark_definition* def : registry::global().all()) {
    json entry{{"id", def->id()}, {"description", def->description()}};
    const auto reason = def->unsupported_reason(ctx);
    entry["available"] = !reason.has_value();
    if (reason) entry["reason"] = *reason;
    json axes = json::array();
    for (const axis& a : def->axes()) {
      json item{{"name", a.name}, {"kind", kind_name(a.kind)}, {"description", a.description}};
      // The values a run here sweeps when neither the suite nor --axis sets the axis (a GPU axis
      // is empty where no GPU can be used).
      json defaults = json::array();
      if (a.defaults) {
        for (const auto& value : a.defaults(ctx)) {
          std::visit([&](const auto& v) { defaults.push_back(v); }, value);
        }
      }
      item["defaults"] = std::move(defaults);
      // What a suite or --axis may set it to here (integer and byte axes).
      if (a.range) {
        const axis_range r = a.range(ctx);
        item["range"] = {{"min", r.min}, {"max", r.max}, {"step", r.step}};
      }
      axes.push_back(std::move(item));
    }
    entry["axes"] = std::move(axes);
    json metrics = json::array();
    json units = json::object();
    for (const auto& m : def->metrics()) {
      metrics.push_back(m.name);
      units[m.name] = {{"unit", m.in.symbol}, {"better", m.direction}};
    }
    entry["metrics"] = std::move(metrics);
    entry["metric_units"] = std::move(units);
    benchmarks.push_back(std::move(entry));
  }
  json suites = json::array();
  for (const auto& name : suite_names()) {
    json item{{"name", name}};
    try {
      const suite s = load_suite(name);
      item["description"] = s.description;
      item["file"] = s.source.string();
    } catch (const input_error& e) {
      item["error"] = e.what();
    }
    suites.push_back(std::move(item));
  }

  if (as_json) {
    std::cout << json{{"version", version()},
                      {"features", build_features()},
                      {"benchmarks", benchmarks},
                      {"suites", suites},
                      {"figures", vocabulary::figures_json()}}
                     .dump(2)
              << "\n";
    return exit_ok;
  }
  text_table table({"benchmark", "here", "axes", "description"});
  for (const auto& b : benchmarks) {
    std::string axes;
    for (const auto& a : b["axes"]) {
      if (!axes.empty()) axes += ' ';
      axes += a["name"].get<std::string>() + "=" + defaults_text(a["kind"], a["defaults"]);
      if (a.contains("range")) {
        const json& r = a["range"];
        axes += " (" + value_text(a["kind"], r["min"]) + "-" + value_text(a["kind"], r["max"]);
        if (r["step"] != 1) axes += " /" + value_text(a["kind"], r["step"]);
        axes += ")";
      }
    }
    table.add_row(
        {b["id"].get<std::string>(),
         b["available"].get<bool>() ? "ready" : "skipped: " + b["reason"].get<std::string>(), axes,
         b["description"].get<std::string>()});
  }
  std::cout << table.render() << "\nsuites:\n";
  for (const auto& item : suites) {
    std::cout << "  " << item["name"].get<std::string>() << "  "
              << item.value("description", item.value("error", "")) << "\n";
  }
  return exit_ok;
}

}  // namespace

command add_list(CLI::App& app, const command_line& /*line*/) {
  struct list_args {
    bool as_json = false;
    std::string names;
  };
  auto args = std::make_shared<list_args>();
  CLI::App* sub = app.add_subcommand("list", "List benchmarks, suites and what can run here");
  auto* as_json = sub->add_flag("--json", args->as_json, "machine-readable output");
  std::vector<std::string> kinds;
  for (const name_kind& k : name_kinds(app)) kinds.emplace_back(k.kind);
  sub->add_option("--names", args->names,
                  "only the names of one kind, one a line (shell completion asks for them): " +
                      join(kinds) + ", or " + std::string(flags_kind) + "COMMAND")
      ->excludes(as_json);
  return {sub, [&app, args] {
            return args->names.empty() ? list(args->as_json) : list_names(app, args->names);
          }};
}

}  // namespace gpubench::app
