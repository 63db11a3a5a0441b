// gpubench: the one place that wires the harness, the benchmarks and the reports together.
#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>

#include "commands.hpp"
#include "gpubench/build_info.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/text.hpp"

namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    for (auto& part : gpubench::split(item, ',')) {
      if (!part.empty()) out.push_back(std::move(part));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpubench;
  // Past a file size limit (ulimit -f) write() then fails with EFBIG, which the benchmark at hand
  // reports, instead of the signal killing the whole run.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"gpubench: benchmarks and sizing for GPU training servers", "gpubench"};
  app.set_version_flag("--version", gpubench::version() + " (" + git_describe() + ")");
  app.require_subcommand(0, 1);

  cli::run_args run;
  for (int i = 0; i < argc; ++i) run.argv.emplace_back(argv[i]);
  std::vector<std::string> only;
  std::vector<std::string> skip;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a suite of benchmarks and write results.json");
  run_cmd->add_option("--suite", run.suite, "quick, full, a suite name or a suite file")
      ->capture_default_str();
  run_cmd->add_option("--only", only, "benchmark ids or patterns to run (comma-separated)");
  run_cmd->add_option("--skip", skip, "benchmark ids or patterns to leave out (comma-separated)");
  run_cmd->add_option("--axis", run.axes, "ID:AXIS=V1[,V2...] sets an axis (sizes in bytes)");
  run_cmd->add_option(
      "--out", run.out,
      "results folder (new or empty); default: a new folder under gpubench-results/");
  run_cmd->add_option(
      "--scratch", run.scratch,
      "folder(s) for storage benchmarks' test files, comma-separated (one per device)");
  run_cmd->add_option("--gpus", run.gpus, "GPU indices to use, e.g. 0,1 (default: all)");
  run_cmd
      ->add_option(
          "--duration", run.duration_s,
          "seconds of sustained load for gpu.burn (default: the suite's; full 60, quick 10)")
      ->check(CLI::Range(1, 604800));
  run_cmd->add_flag("--skip-verify", run.skip_verify, "do not check the benchmarks' data");
  run_cmd->add_option("--workload", run.workloads,
                      "workloads to size against the results (default: configs/workloads/"
                      "default.json)");
  run_cmd
      ->add_option("--timeout", run.timeout_s,
                   "seconds before a stuck collective is aborted and reported failed")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();

  bool list_json = false;
  CLI::App* list_cmd = app.add_subcommand("list", "List benchmarks, suites and what can run here");
  list_cmd->add_flag("--json", list_json, "machine-readable output");

  bool info_json = false;
  CLI::App* info_cmd =
      app.add_subcommand("info", "Describe this machine: CPU, NUMA, RAM, disks, GPUs");
  info_cmd->add_flag("--json", info_json, "machine-readable output");

  cli::size_args size;
  CLI::App* size_cmd = app.add_subcommand(
      "size", "Predict training samples/s for a workload on a machine and name the limit");
  size_cmd->add_option("--workload", size.workload, "workload name (configs/workloads/) or file")
      ->required();
  size_cmd
      ->add_option("--hardware", size.hardware,
                   "catalog:NAME, a results.json or a gpubench.hardware/1 file")
      ->capture_default_str();
  size_cmd->add_option("--gpus", size.gpus, "GPUs per node")->check(CLI::Range(1, 1024));
  size_cmd->add_option("--nodes", size.nodes, "nodes")->check(CLI::Range(1, 100000));
  size_cmd->add_option("--batch", size.batch, "batch per GPU")->check(CLI::Range(1, 1 << 24));
  size_cmd->add_option("--precision", size.precision, "fp32, tf32, amp_fp16, amp_bf16 or fp8")
      ->check(CLI::IsMember({"fp32", "tf32", "amp_fp16", "amp_bf16", "fp8"}));
  size_cmd->add_option("--set", size.settings,
                       "KEY=VALUE what-if change to the hardware (docs/model.md), repeatable");
  size_cmd->add_flag("--json", size.as_json, "gpubench.sizing/1 on stdout");

  cli::calibrate_args calibrate;
  CLI::App* calibrate_cmd = app.add_subcommand(
      "calibrate", "Compare the model with published training throughput (docs/model.md)");
  calibrate_cmd->add_option("file", calibrate.file, "calibration file (rows of published figures)")
      ->required();
  calibrate_cmd->add_flag("--fit", calibrate.fit,
                          "fit the model's named constants first and print them on stderr");
  calibrate_cmd->add_flag("--json", calibrate.as_json, "machine-readable output");

  cli::report_args report;
  CLI::App* report_cmd =
      app.add_subcommand("report", "Write the HTML, Markdown and CSV reports of a results file");
  report_cmd->add_option("results", report.results, "results.json")->required();
  report_cmd->add_option("--html", report.html, "self-contained HTML report to write");
  report_cmd->add_option("--md", report.markdown, "Markdown report to write");
  report_cmd->add_option("--csv", report.csv, "CSV (one row per figure) to write");
  report_cmd->add_option("--workload", report.workloads,
                         "workloads to size (default: configs/workloads/default.json)");
  report_cmd->add_option("--set", report.settings,
                         "KEY=VALUE what-if change to the measured profile (docs/model.md), "
                         "e.g. gpu.model=h100-sxm5-80gb on a machine without a GPU");

  cli::compare_args compare;
  CLI::App* compare_cmd = app.add_subcommand(
      "compare", "Compare machines (results files, catalog:NAME) with cost per workload");
  compare_cmd->add_option("machines", compare.machines, "results.json or catalog:NAME, two or more")
      ->required();
  compare_cmd->add_option("--workload", compare.workloads,
                          "workloads to size (default: configs/workloads/default.json)");
  compare_cmd->add_option("--html", compare.html, "self-contained HTML comparison to write");
  compare_cmd->add_flag("--json", compare.as_json, "gpubench.compare/1 on stdout");

  cli::validate_args validate;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check a results file against its SKU's spec (exit 1 on any failure)");
  validate_cmd->add_option("results", validate.results, "results.json")->required();
  validate_cmd->add_option("--spec", validate.spec,
                           "spec name (configs/specs/) or file; default: the GPUs' own");
  validate_cmd->add_option("--baseline", validate.baselines,
                           "results files of a fleet: flag figures worse than their median");
  validate_cmd
      ->add_option("--baseline-tolerance", validate.baseline_tolerance_pct,
                   "percent worse than the fleet median that fails")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  validate_cmd->add_flag("--json", validate.as_json, "gpubench.validation/1 on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpubench: " << e.what() << " (see gpubench --help)\n";
    return cli::exit_bad_input;
  }

  try {
    if (*run_cmd) {
      run.only = split_commas(only);
      run.skip = split_commas(skip);
      return cli::run_command(run);
    }
    if (*list_cmd) return cli::list_command(list_json);
    if (*size_cmd) return cli::size_command(size);
    if (*calibrate_cmd) return cli::calibrate_command(calibrate);
    if (*report_cmd) {
      report.workloads = split_commas(report.workloads);
      return cli::report_command(report);
    }
    if (*compare_cmd) {
      compare.workloads = split_commas(compare.workloads);
      return cli::compare_command(compare);
    }
    if (*validate_cmd) return cli::validate_command(validate);
    if (*info_cmd) return cli::info_command(info_json);
    std::cerr << app.help();
    return cli::exit_bad_input;
  } catch (const input_error& e) {
    std::cerr << "gpubench: " << e.what() << "\n";
    return cli::exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "gpubench: error: " << e.what() << "\n";
    return cli::exit_failure;
  }
}
