// gpubench size: the sizing model for one workload on one machine.
#include <iostream>

#include "../command.hpp"
#include "../serving_flags.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/serving.hpp"
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
  // size --serve (docs/serving.md)
  bool serve = false;
  int tensor = 1;
  int pipeline = 1;
  std::string weights = "bf16";
  bool weights_given = false;  // --weights on the command line: --search tries only it
  std::string kv_cache;
  bool max_throughput = false;
  std::optional<double> concurrency;
  std::optional<double> rate;
  model::serving_question serving;  // the lengths, the targets, the engine
};

int serve(const size_args& args) {
  const model::constants constants = model::load_constants();
  const model::serving_constants serving = model::load_serving_constants();
  const model::workload workload = model::load_workload(args.workload);
  model::hardware_profile hardware = model::load_hardware(args.hardware);
  for (const auto& setting : args.settings) model::apply_setting(hardware, setting);
  model::serving_options options = args.serving.options;
  options.gpus = args.gpus;
  options.tensor = args.tensor;
  options.pipeline = args.pipeline;
  options.weights = args.weights;
  options.kv_cache = args.kv_cache;
  if (args.batch) {
    options.load = model::serving_load::batch;
    options.load_value = *args.batch;
  } else if (args.concurrency) {
    options.load = model::serving_load::concurrency;
    options.load_value = *args.concurrency;
  } else if (args.rate) {
    options.load = model::serving_load::rate;
    options.load_value = *args.rate;
  }
  model::serving_result result =
      model::predict_serving(hardware, workload, constants, serving, options);
  model::apply_serving_bands(result, model::load_serving_bands());
  std::vector<model::serving_layout> layouts;
  if (args.search) {
    // The precisions to try: the one asked for, or the native ones (serving_question).
    model::serving_question question = args.serving;
    if (args.weights_given) question.weights = {args.weights};
    const std::vector<std::string> weights = question.weights_to_try();
    layouts = model::search_serving(hardware, workload, constants, serving, options, weights);
  }
  if (args.as_json) {
    json out = model::to_json(result);
    if (args.search) {
      json rows = json::array();
      for (const model::serving_layout& l : layouts) rows.push_back(model::to_json(l));
      out["layouts"] = std::move(rows);
    }
    std::cout << json_text(out, 2) << "\n";
  } else {
    reports::print_serving(std::cout, result);
    if (args.search) reports::print_serving_layouts(std::cout, layouts);
  }
  return exit_ok;
}

int size(const size_args& args) {
  if (args.serve) return serve(args);
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
  sub->add_option("--batch", args->batch, "batch per GPU; with --serve, requests started together")
      ->check(finite_range(1, 1 << 24, true));
  sub->add_option("--precision", args->precision, join(model::precision_names(), ", "))
      ->check(CLI::IsMember(model::precision_names()));
  sub->add_option("--set", args->settings,
                  "KEY=VALUE what-if change to the hardware (docs/model.md), repeatable");
  sub->add_flag("--json", args->as_json, "gpubench.sizing/1 on stdout");
  // Serving (docs/serving.md): the flags below take --serve.
  CLI::Option* serve_flag =
      sub->add_flag("--serve", args->serve,
                    "size LLM serving instead of training: output tokens/s, time to first "
                    "token, time per output token, the KV cache (docs/serving.md)");
  const auto serving = [&](CLI::Option* option) { option->needs(serve_flag); };
  serving(sub->add_option("--tensor", args->tensor, "tensor-parallel GPUs per replica")
              ->check(finite_range(1, 1024, true)));
  serving(sub->add_option("--pipeline", args->pipeline, "pipeline stages per replica")
              ->check(finite_range(1, 1024, true)));
  serving(sub->add_option("--weights", args->weights, join(model::serving_weight_names(), ", "))
              ->check(CLI::IsMember(model::serving_weight_names()))
              ->each([args](const std::string&) { args->weights_given = true; })
              ->capture_default_str());
  serving(sub->add_option("--kv-cache", args->kv_cache,
                          join(model::serving_kv_names(), ", ") + " (default bf16)")
              ->check(CLI::IsMember(model::serving_kv_names())));
  CLI::Option* max_tp = sub->add_flag(
      "--max-throughput", args->max_throughput,
      "as many requests in flight as the KV cache and the engine allow (the default load)");
  CLI::Option* conc =
      sub->add_option("--concurrency", args->concurrency, "requests always in flight (closed loop)")
          ->check(finite_range(1, 1e9, true));
  CLI::Option* rate = sub->add_option("--rate", args->rate, "Poisson arrivals, requests per second")
                          ->check(finite_range(1e-9, 1e9));
  for (CLI::Option* o : {max_tp, conc, rate}) serving(o);
  max_tp->excludes(conc)->excludes(rate);
  conc->excludes(rate);
  add_serving_flags(sub, args->serving, serve_flag, false);
  sub->add_flag("--search", args->search,
                "also rank every tensor x pipeline x data split, micro-batch, checkpointing and "
                "strategy that keeps the batch per step (\"layouts\" in --json); with --serve, "
                "every split, precision and load by output tokens/s per GPU within the targets, "
                "or with --rate the fewest GPUs that carry it");
  return {sub, [args] { return size(*args); }};
}

}  // namespace gpubench::app
