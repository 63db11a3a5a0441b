// The gpubench commands. Each returns the process exit code; only main() exits.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/results.hpp"
#include "reports/report.hpp"

namespace gpubench::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,      // a benchmark failed (verification included)
  exit_bad_input = 2,    // bad usage or bad input
  exit_interrupted = 3,  // SIGINT/SIGTERM; partial results kept
};

struct run_args {
  std::string suite = "full";
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::vector<std::string> axes;
  std::string out;
  std::string scratch;
  std::string gpus;
  bool skip_verify = false;
  double timeout_s = 300;
  std::optional<int> duration_s;  // sets every benchmark's duration_s axis (gpu.burn)
  std::vector<std::string>
      workloads;  // sized after the run; default: configs/workloads/default.json
  std::vector<std::string> argv;
};

struct size_args {
  std::string workload;
  std::string hardware = "catalog:dgx-h100";
  std::optional<int> gpus;
  std::optional<int> nodes;
  std::optional<int> batch;
  std::optional<std::string> precision;
  std::vector<std::string> settings;  // --set KEY=VALUE
  bool as_json = false;
};

struct report_args {
  std::string results;
  std::string html;
  std::string markdown;
  std::string csv;
  std::vector<std::string> workloads;
  std::vector<std::string> settings;  // --set KEY=VALUE
};

struct compare_args {
  std::vector<std::string> machines;  // results files or catalog:NAME
  std::vector<std::string> workloads;
  std::string html;
  bool as_json = false;
};

struct validate_args {
  std::string results;
  std::string spec;
  std::vector<std::string> baselines;
  double baseline_tolerance_pct = 10;
  bool as_json = false;
};

struct calibrate_args {
  std::string file;
  bool fit = false;
  bool as_json = false;
};

int run_command(const run_args& args);
// The sizing summary `run` prints for its workloads against what it just measured.
void print_sizing_summary(std::ostream& out, const reports::machine_report& report,
                          const std::string& results_file);
int size_command(const size_args& args);
int calibrate_command(const calibrate_args& args);
int report_command(const report_args& args);
int compare_command(const compare_args& args);
int validate_command(const validate_args& args);
// report.html and report.md beside a run's results.json.
void write_run_reports(const reports::machine_report& report,
                       const std::filesystem::path& results_path);
int list_command(bool as_json);
int info_command(bool as_json);

}  // namespace gpubench::cli
