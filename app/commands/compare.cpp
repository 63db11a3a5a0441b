// gpubench compare: machines (results files, catalog entries) side by side, with cost.
#include <iostream>

#include "../command.hpp"
#include "../serving_flags.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/reports/compare.hpp"

namespace gpubench::app {

namespace {

struct compare_args {
  std::vector<std::string> machines;  // results files or catalog:NAME
  std::vector<std::string> workloads;
  std::string html;
  bool as_json = false;
  reports::compare_options options;
  // [WORKLOAD=]N of --tokens, --samples and --epochs, in the order of reports::budget_units.
  std::vector<std::string> budgets[std::size(reports::budget_units)];
  bool serve = false;  // compare --serve: serving instead of training
  model::serving_question serving;
};

int compare(compare_args args) {
  if (args.serve) {
    require_tokens(args.serving, "compare");
    args.options.serve = args.serving;
  }
  for (std::size_t u = 0; u < std::size(reports::budget_units); ++u) {
    for (const std::string& text : args.budgets[u]) {
      args.options.budgets.push_back(reports::parse_budget(reports::budget_units[u], text));
    }
  }
  if (!args.html.empty()) {
    std::vector<std::string> inputs = args.machines;
    inputs.insert(inputs.end(), args.workloads.begin(), args.workloads.end());
    check_output_files({{"--html", args.html}}, input_files(inputs));
  }
  const reports::comparison c =
      reports::compare_machines(args.machines, split_commas(args.workloads), args.options);
  if (!args.html.empty()) {
    write_file_atomically(args.html, reports::to_html(c));
  }
  if (args.as_json) {
    std::cout << json_text(reports::to_json(c), 2) << "\n";
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
  sub->add_option("--nodes", args->options.nodes, "nodes of each machine")
      ->check(finite_range(1, 100000, true));
  sub->add_option("--gpus", args->options.gpus, "GPUs per node")
      ->check(finite_range(1, 1024, true));
  sub->add_option("--set", args->options.settings,
                  "KEY=VALUE for every machine, MACHINE:KEY=VALUE for one (a spot or reserved "
                  "price: catalog:aws-p5.48xlarge:price.usd_per_hour=40)");
  // --tokens, --samples, --epochs: one value a flag, repeatable (a budget per workload).
  constexpr std::string_view budget_help[] = {
      "[WORKLOAD=]N a budget: days and $ to train N tokens (2e12), for WORKLOAD or every "
      "workload that counts tokens; repeatable",
      "[WORKLOAD=]N a budget of N of the workload's samples (images, sequences): "
      "resnet50=1.2e8; repeatable",
      "[WORKLOAD=]N a budget of N epochs; repeatable"};
  static_assert(std::size(budget_help) == std::size(reports::budget_units));
  CLI::Option* epochs = nullptr;  // what --dataset-samples needs
  for (std::size_t u = 0; u < std::size(reports::budget_units); ++u) {
    CLI::Option* option = sub->add_option("--" + std::string(reports::budget_units[u]),
                                          args->budgets[u], std::string(budget_help[u]))
                              ->allow_extra_args(false);
    if (reports::budget_units[u] == "epochs") epochs = option;
  }
  sub->add_option("--dataset-samples", args->options.dataset_samples,
                  "samples per epoch for --epochs (default: the workload's dataset)")
      ->check(finite_range(1, 1e15))
      ->needs(epochs);
  // compare --serve (docs/serving.md): each machine's best serving layout and its cost.
  CLI::Option* serve = sub->add_flag(
      "--serve", args->serve,
      "compare serving the --workload model: each machine's best layout within the targets "
      "and $ per million output tokens");
  add_serving_flags(sub, args->serving, serve, true);
  sub->add_option("--html", args->html, "self-contained HTML comparison to write");
  sub->add_flag("--json", args->as_json, "gpubench.compare/1 on stdout");
  return {sub, [args] { return compare(*args); }};
}

}  // namespace gpubench::app
