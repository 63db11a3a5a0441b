// gpubench calibrate: the model against published training throughput (docs/model.md).
#include <iostream>

#include "../command.hpp"
#include "../standard_streams.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/model/calibration.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/serving.hpp"

namespace gpubench::app {

namespace {

struct calibrate_args {
  std::vector<std::string> files;
  bool fit = false;
  bool as_json = false;
  bool bands = false;
  bool serve = false;  // the serving model against configs/calibration/serving.json
};

int calibrate_serving(const calibrate_args& args) {
  const std::string file = args.files.empty()
                               ? (config_dir() / "calibration" / "serving.json").string()
                               : args.files.front();
  const json rows = read_json_file(file);
  const model::constants constants = model::load_constants();
  const model::serving_constants engines = model::load_serving_constants();
  if (args.fit || args.bands) {
    // The fit and, per source group, the rows predicted by a fit made without them; the bands
    // are built from those.
    const model::serving_fit fit = model::fit_serving(rows, file, constants, engines);
    if (args.bands) {
      std::cout << json_text(model::to_json(model::serving_bands(fit.held_out)), 2) << "\n";
      return exit_ok;
    }
    json values = json::object();
    for (const auto& [name, value] : fit.values) values[name] = value;
    std::cerr << "fitted serving constants (configs/model/serving.json):\n"
              << json_text(values, 2) << "\n";
    if (args.as_json) {
      std::cout << json_text(json{{"in_fit", model::to_json(fit.in_fit)},
                                  {"held_out", model::to_json(fit.held_out)}},
                             2)
                << "\n";
    } else {
      std::cout << "# Fitted on every row\n\n"
                << model::to_markdown(fit.in_fit)
                << "\n# Held out: each source group by the constants fitted without it\n\n"
                << model::to_markdown(fit.held_out);
    }
    return exit_ok;
  }
  const model::serving_check check = model::check_serving(rows, file, constants, engines);
  if (args.as_json) {
    std::cout << json_text(model::to_json(check), 2) << "\n";
  } else {
    std::cout << model::to_markdown(check);
  }
  return exit_ok;
}

int calibrate(const calibrate_args& args) {
  if (args.serve) return calibrate_serving(args);
  model::constants constants = model::load_constants();
  std::vector<model::calibration_set> sets;
  if (args.files.empty()) {
    sets = model::default_calibration_sets();
  } else {
    for (const std::string& file : args.files) sets.push_back({read_json_file(file), file});
  }
  if (args.fit) {
    constants = model::fit_constants(sets, constants);
    json fitted = json::object();
    for (const auto& name : model::constants::fitted_names()) fitted[name] = constants.at(name);
    json stacks = json::object();
    for (const auto& stack : constants.stacks) {
      for (const auto& name : stack.fitted) {
        if (stack.values.contains(name)) stacks[stack.name][name] = stack.values.at(name);
      }
    }
    std::cerr << "fitted constants (put them in configs/model/constants.json):\n"
              << json_text(json{{"constants", fitted}, {"stacks", stacks}}, 2) << "\n";
  }
  // On a terminal, a line that counts the held-out refits (a thousand rows take a minute).
  model::calibration_progress progress;
  const bool tty = redrawable_terminal();
  if (tty) {
    progress = [](std::size_t done, std::size_t total) {
      write_terminal_control("\r\033[K");
      std::cerr << "calibrate: " << done << " of " << total
                << " source groups refitted without their rows" << std::flush;
    };
  }
  const model::calibration_report report = model::calibrate(sets, constants, progress);
  if (tty) write_terminal_control("\r\033[K");
  if (args.bands) {
    std::cout << json_text(model::to_json(report.shipped_bands()), 2) << "\n";
  } else if (args.as_json) {
    std::cout << json_text(model::to_json(report), 2) << "\n";
  } else {
    std::cout << model::to_markdown(report);
  }
  return exit_ok;
}

}  // namespace

command add_calibrate(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<calibrate_args>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Compare the model with published training throughput (docs/model.md)");
  sub->add_option("files", args->files,
                  "calibration files (rows of published figures); default: the sets "
                  "configs/calibration/models.json lists");
  sub->add_flag("--fit", args->fit,
                "fit the model's named constants first and print them on stderr");
  sub->add_flag("--json", args->as_json, "machine-readable output");
  sub->add_flag("--serve", args->serve,
                "the serving model against published serving figures (a gpubench.serving-rows/1 "
                "file; default configs/calibration/serving.json; docs/serving.md); with --fit, its "
                "fitted constant and each source group held out");
  sub->add_flag("--bands", args->bands,
                "print the error bands (configs/model/error_bands.json; with --serve, "
                "configs/model/serving_bands.json, from the held-out predictions) instead")
      ->excludes("--json");
  return {sub, [args] { return calibrate(*args); }};
}

}  // namespace gpubench::app
