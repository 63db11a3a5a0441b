// gpubench export: a results file or a fleet check in another tool's format. Today Prometheus'
// text exposition format, for node_exporter's textfile collector (docs/deploy/README.md).
#include <iostream>

#include "../command.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/reports/prometheus.hpp"

namespace gpubench::app {

namespace {

struct export_args {
  std::string input;
  bool prometheus = false;
  std::optional<std::string> out;
};

int export_file(const export_args& args) {
  if (!args.prometheus) throw input_error("export: name a format (--prometheus)");
  const json doc = read_json_file(args.input);
  const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
  std::string text;
  if (schema == "gpubench.fleet/1") {
    text = reports::prometheus_fleet_text(doc);
  } else if (schema == "gpubench.results/1") {
    text = reports::prometheus_text(parse_results(doc, args.input));
  } else {
    throw input_error(args.input +
                      ": expected a gpubench.results/1 or gpubench.fleet/1 document, got schema '" +
                      schema + "'");
  }
  // node_exporter reads the folder at any moment: the file appears whole or not at all.
  if (args.out) {
    write_file_atomically(*args.out, text);
  } else {
    std::cout << text;
  }
  return exit_ok;
}

}  // namespace

command add_export(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<export_args>();
  CLI::App* sub = app.add_subcommand(
      "export", "Write a results file or a fleet check (fleet --json) for another tool");
  sub->add_option("input", args->input, "results.json, or the JSON of gpubench fleet --json")
      ->required();
  sub->add_flag("--prometheus", args->prometheus,
                "Prometheus text format (node_exporter's textfile collector)");
  sub->add_option("--out", args->out, "write here (atomically) instead of standard output");
  return {sub, [args] { return export_file(*args); }};
}

}  // namespace gpubench::app
