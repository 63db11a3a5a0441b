// gpubench compare: machines (results files, catalog entries) side by side, with cost.
#include <iostream>

#include "../command.hpp"
#include "gpubench/output_file.hpp"
#include "gpubench/results.hpp"
#include "reports/compare.hpp"

namespace gpubench::app {

namespace {

struct compare_args {
  std::vector<std::string> machines;  // results files or catalog:NAME
  std::vector<std::string> workloads;
  std::string html;
  bool as_json = false;
};

int compare(const compare_args& args) {
  if (!args.html.empty()) {
    std::vector<std::string> inputs = args.machines;
    inputs.insert(inputs.end(), args.workloads.begin(), args.workloads.end());
    check_output_files({{"--html", args.html}}, input_files(inputs));
  }
  const reports::comparison c =
      reports::compare_machines(args.machines, split_commas(args.workloads));
  if (!args.html.empty()) {
    write_file_atomically(args.html, reports::to_html(c));
  }
  if (args.as_json) {
    std::cout << reports::to_json(c).dump(2) << "\n";
  } else {
    std::cout << reports::to_text(c);
    if (!args.html.empty()) std::cout << "wrote " << args.html << "\n";
  }
  return exit_ok;
}

}  // namespace

command add_compare(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<compare_args>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare machines (results files, catalog:NAME) with cost per workload");
  sub->add_option("machines", args->machines, "results.json or catalog:NAME, two or more")
      ->required();
  sub->add_option("--workload", args->workloads,
                  "workloads to size (default: configs/workloads/default.json)");
  sub->add_option("--html", args->html, "self-contained HTML comparison to write");
  sub->add_flag("--json", args->as_json, "gpubench.compare/1 on stdout");
  return {sub, [args] { return compare(*args); }};
}

}  // namespace gpubench::app
