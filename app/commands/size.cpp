// gpubench size: the sizing model for one workload on one machine.
#include <iostream>

#include "../command.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/reports/summary.hpp"

namespace gpubench::app {

namespace {

struct size_args {
  std::string workload;
  std::string hardware = "catalog:dgx-h100";
  std::optional<int> gpus;
  std::optional<int> nodes;
  std::optional<int> batch;
  std::optional<std::string> precision;
  std::vector<std::string> settings;  // --set KEY=VALUE
  bool as_json = false;
  bool search = false;
};

int size(const size_args& args) {
  const model::constants constants = model::load_constants();
  const model::workload workload = model::load_workload(args.workload);
  model::hardware_profile hardware = model::load_hardware(args.hardware);
  for (const auto& setting : args.settings) model::apply_setting(hardware, setting);
  model::run_options options;
  options.gpus = args.gpus;
  options.nodes = args.nodes;
  options.batch = args.batch;
  options.precision = args.precision;
  const model::sizing result = model::predict(hardware, workload, constants, options);
  std::vector<model::layout> layouts;
  if (args.search) layouts = model::search_layouts(hardware, workload, constants, options);
  if (args.as_json) {
    json out = model::to_json(result, hardware, workload, constants);
    if (args.search) {
      json rows = json::array();
      for (const model::layout& l : layouts) rows.push_back(model::to_json(l));
      out["layouts"] = std::move(rows);
    }
    std::cout << json_text(out, 2) << "\n";
  } else {
    reports::print_sizing(std::cout, result);
    if (args.search && !layouts.empty()) reports::print_layouts(std::cout, layouts);
  }
  return exit_ok;
}

}  // namespace

command add_size(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<size_args>();
  CLI::App* sub = app.add_subcommand(
      "size", "Predict training samples/s for a workload on a machine and name the limit");
  sub->add_option("--workload", args->workload, "workload name (configs/workloads/) or file")
      ->required();
  sub->add_option("--hardware", args->hardware,
                  "catalog:NAME, a results.json or a gpubench.hardware/1 file")
      ->capture_default_str();
  sub->add_option("--gpus", args->gpus, "GPUs per node")->check(finite_range(1, 1024, true));
  sub->add_option("--nodes", args->nodes, "nodes")->check(finite_range(1, 100000, true));
  sub->add_option("--batch", args->batch, "batch per GPU")->check(finite_range(1, 1 << 24, true));
  sub->add_option("--precision", args->precision, join(model::precision_names(), ", "))
      ->check(CLI::IsMember(model::precision_names()));
  sub->add_option("--set", args->settings,
                  "KEY=VALUE what-if change to the hardware (docs/model.md), repeatable");
  sub->add_flag("--json", args->as_json, "gpubench.sizing/1 on stdout");
  sub->add_flag("--search", args->search,
                "also rank every tensor x pipeline x data split, micro-batch, checkpointing and "
                "strategy that keeps the batch per step (\"layouts\" in --json)");
  return {sub, [args] { return size(*args); }};
}

}  // namespace gpubench::app
