// gpubench export: a results file (with its verdict against its spec) or a fleet check in another
// tool's format. Today Prometheus' text exposition format, for node_exporter's textfile
// collector (docs/deploy/README.md).
#include <iostream>

#include "../command.hpp"
#include "gpubench/acceptance/validate.hpp"
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
  std::optional<std::string> spec;
  std::optional<std::string> out;
};

// A results file's verdict against --spec, else its GPUs' own spec; none where no spec applies
// (a machine without GPUs still exports its figures).
std::optional<acceptance::validation> validation_of(const results_document& doc,
                                                    const export_args& args) {
  std::string why_not;
  const std::optional<std::string> spec =
      args.spec ? args.spec : acceptance::spec_for(doc, why_not);
  if (!spec) return std::nullopt;
  return acceptance::validate(doc, args.input, acceptance::load_spec(*spec));
}

int export_file(const export_args& args) {
  if (!args.prometheus) throw input_error("export: name a format (--prometheus)");
  const json doc = read_json_file(args.input);  // a missing input is named first
  if (args.out) {
    std::vector<std::string> read{args.input};
    if (args.spec) read.push_back(*args.spec);
    check_output_files({{"--out", *args.out}}, input_files(read));
  }
  const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
  std::string text;
  if (schema == "gpubench.fleet/1") {
    if (args.spec) {
      throw input_error("export --spec: " + args.input +
                        " is a fleet check, whose nodes were validated when it was made");
    }
    text = reports::prometheus_fleet_text(doc);
  } else if (schema == "gpubench.results/1") {
    const results_document results = parse_results(doc, args.input);
    const std::optional<acceptance::validation> v = validation_of(results, args);
    text = reports::prometheus_text(results, v ? &*v : nullptr);
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
  sub->add_option("--spec", args->spec,
                  "spec name (configs/specs/) or file to export a results file's verdict against; "
                  "default: its GPUs' own");
  sub->add_option("--out", args->out, "write here (atomically) instead of standard output");
  return {sub, [args] { return export_file(*args); }};
}

}  // namespace gpubench::app
