// gpubench validate: a results file against its SKU's spec, and optionally a fleet's baseline;
// exit 1 on any failure.
#include <iostream>
#include <utility>

#include "../command.hpp"
#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::app {

namespace {

struct validate_args {
  std::string results;
  std::string spec;
  std::vector<std::string> baselines;
  double baseline_tolerance_pct = 10;
  bool as_json = false;
};

int validate(const validate_args& args) {
  results_document doc = read_results(args.results);
  std::string spec_name = args.spec;
  if (spec_name.empty()) {
    std::string why_not;
    if (const auto found = acceptance::spec_for(doc, why_not)) {
      spec_name = *found;
    } else if (args.baselines.empty()) {
      throw input_error(args.results + ": no spec applies (" + why_not +
                        "); name one with --spec (" + join(acceptance::spec_names()) +
                        ") or give --baseline files");
    }
  }
  acceptance::validation v;
  if (!spec_name.empty()) {
    v = acceptance::validate(doc, args.results, acceptance::load_spec(spec_name));
  } else {
    v.results_file = args.results;
  }
  if (!args.baselines.empty()) {
    acceptance::check_against_baseline(v, doc, acceptance::make_baseline(args.baselines),
                                       args.baseline_tolerance_pct);
  }
  if (args.as_json) {
    acceptance::write_json(std::cout, v, 2);
    std::cout << "\n";
  } else {
    std::cout << acceptance::to_text(v);
  }
  const int code = v.passed() ? exit_ok : exit_failure;
  leave_to_exit(std::move(doc));
  leave_to_exit(std::move(v));
  return code;
}

}  // namespace

command add_validate(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<validate_args>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Check a results file against its SKU's spec (exit 1 on any failure)");
  sub->add_option("results", args->results, "results.json")->required();
  sub->add_option("--spec", args->spec,
                  "spec name (configs/specs/) or file; default: the GPUs' own");
  sub->add_option("--baseline", args->baselines,
                  "results files of a fleet: flag figures worse than their median");
  sub->add_option("--baseline-tolerance", args->baseline_tolerance_pct,
                  "percent worse than the fleet median that fails")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  sub->add_flag("--json", args->as_json, "gpubench.validation/1 on stdout");
  return {sub, [args] { return validate(*args); }};
}

}  // namespace gpubench::app
