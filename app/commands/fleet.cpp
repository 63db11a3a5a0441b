// gpubench fleet: many servers' results at once: each node against its spec, each figure against
// the fleet's median of it; exit 1 when a node fails or a figure stands out.
#include <fstream>
#include <iostream>

#include "../command.hpp"
#include "gpubench/acceptance/fleet.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/fleet_page.hpp"

namespace gpubench::app {

namespace {

struct fleet_args {
  std::vector<std::string> paths;
  std::optional<std::string> spec;
  acceptance::fleet_settings settings;
  bool as_json = false;
  std::optional<std::string> csv;
  std::optional<std::string> html;
};

int fleet(const fleet_args& args) {
  const std::vector<acceptance::fleet_input> inputs = acceptance::read_fleet(args.paths);
  if (args.spec) (void)acceptance::load_spec(*args.spec);  // a bad --spec: exit 2 before reading
  // Neither output may replace a results file it is made from, nor the other output.
  std::vector<output_request> outputs;
  if (args.csv) outputs.push_back({"--csv", *args.csv});
  if (args.html) outputs.push_back({"--html", *args.html});
  std::vector<std::string> read;
  for (const acceptance::fleet_input& input : inputs) read.push_back(input.file);
  if (args.spec) read.push_back(*args.spec);
  check_output_files(outputs, input_files(read));
  const acceptance::fleet_report report = acceptance::check_fleet(inputs, args.spec, args.settings);
  if (args.csv) write_file_atomically(*args.csv, acceptance::to_csv(report));
  if (args.html) write_file_atomically(*args.html, reports::render_fleet_page(report));
  if (args.as_json) {
    std::cout << json_text(acceptance::to_json(report), 2) << "\n";
  } else {
    std::cout << acceptance::to_text(report);
  }
  return report.passed() ? exit_ok : exit_failure;
}

}  // namespace

command add_fleet(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<fleet_args>();
  CLI::App* sub = app.add_subcommand(
      "fleet",
      "Check many servers' results at once: each node against its spec, each GPU's figures "
      "against the fleet's median (exit 1 on a failed node or an outlier)");
  sub->add_option("results", args->paths, "results.json files, or folders of them")->required();
  sub->add_option("--spec", args->spec,
                  "spec name (configs/specs/) or file for every node; default: each node's own");
  sub->add_option("--min-deviation", args->settings.min_deviation,
                  "a figure closer to the fleet median than this share never stands out")
      ->check(finite_range(0.0, 10.0))
      ->capture_default_str();
  sub->add_option("--mad-multiple", args->settings.mad_multiple,
                  "robust standard deviations (1.4826 x MAD) from the median that stand out")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  sub->add_option("--csv", args->csv, "also write one row per node and per outlier to this file");
  sub->add_option("--html", args->html, "also write the check as one self-contained page");
  sub->add_flag("--json", args->as_json, "gpubench.fleet/1 on stdout");
  return {sub, [args] { return fleet(*args); }};
}

}  // namespace gpubench::app
