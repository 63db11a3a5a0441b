// gpubench report: a results file into the HTML, Markdown and CSV reports people read.
#include <iostream>
#include <utility>
#include <vector>

#include "../command.hpp"
#include "../serving_flags.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/parallel.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/model/serving.hpp"
#include "gpubench/reports/report.hpp"

namespace gpubench::app {

namespace {

struct report_args {
  std::string results;
  std::string html;
  std::string markdown;
  std::string csv;
  std::vector<std::string> workloads;
  std::vector<std::string> settings;  // --set KEY=VALUE
  // report --serve MODEL (docs/serving.md): a serving section with its curve.
  std::string serve;
  model::serving_question serving;
};

int report(const report_args& args) {
  std::vector<output_request> outputs;
  for (const auto& [flag, path] :
       {std::pair{"--html", &args.html}, {"--md", &args.markdown}, {"--csv", &args.csv}}) {
    if (!path->empty()) outputs.push_back({flag, *path});
  }
  std::vector<std::string> inputs = args.workloads;
  inputs.push_back(args.results);
  results_document doc = read_results(args.results);  // a missing input is named first
  check_output_files(outputs, input_files(inputs));
  reports::machine_report report = reports::make_report(
      std::move(doc), args.results, split_commas(args.workloads), args.settings);
  if (!args.serve.empty()) {
    require_tokens(args.serving, "report");
    reports::add_serving(report, args.serve, args.serving);
  }
  const reports::html_writer html;
  const reports::markdown_writer markdown;
  const reports::csv_writer csv;
  std::vector<std::pair<const std::string*, const reports::report_writer*>> chosen;
  for (const auto& output :
       {std::pair<const std::string*, const reports::report_writer*>{&args.html, &html},
        {&args.markdown, &markdown},
        {&args.csv, &csv}}) {
    if (!output.first->empty()) chosen.push_back(output);
  }
  // Rendered on every core (a fleet's HTML and Markdown take a fifth of a second each), then
  // written in the order given.
  std::vector<std::string> texts(chosen.size());
  parallel_for(chosen.size(), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      texts[i] = reports::render_report(*chosen[i].second, report);
    }
  });
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    write_file_atomically(*chosen[i].first, texts[i]);
    std::cout << "wrote " << *chosen[i].first << "\n";
  }
  if (chosen.empty()) markdown.write(std::cout, report);
  leave_to_exit(std::move(report));
  return exit_ok;
}

}  // namespace

command add_report(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<report_args>();
  CLI::App* sub =
      app.add_subcommand("report", "Write the HTML, Markdown and CSV reports of a results file");
  sub->add_option("results", args->results, "results.json")->required();
  sub->add_option("--html", args->html, "self-contained HTML report to write");
  sub->add_option("--md", args->markdown, "Markdown report to write");
  sub->add_option("--csv", args->csv, "CSV (one row per figure) to write");
  sub->add_option("--workload", args->workloads,
                  "workloads to size (default: configs/workloads/default.json)");
  sub->add_option("--set", args->settings,
                  "KEY=VALUE what-if change to the measured profile (docs/model.md), e.g. "
                  "gpu.model=h100-sxm5-80gb on a machine without a GPU");
  CLI::Option* serve = sub->add_option(
      "--serve", args->serve,
      "MODEL: also size serving it (docs/serving.md) and draw the throughput-latency curve");
  add_serving_flags(sub, args->serving, serve, true);
  return {sub, [args] { return report(*args); }};
}

}  // namespace gpubench::app
