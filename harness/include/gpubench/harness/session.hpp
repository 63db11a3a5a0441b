// One `gpubench run` as the harness sees it: the inputs checked on every rank before anything is
// created, the GPU each rank drives, the plan, the results folder, the run itself, and (in a
// multi-rank job) the gather of every rank's results into rank 0's results.json. Reports are not
// the harness's: the caller prints and writes them from the session's results.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/exit_codes.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/system.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/suite.hpp"

namespace gpubench {

// What the user asked for (the `run` command's flags).
struct session_request {
  std::string suite = "full";
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::vector<std::string> axes;  // --axis ID:AXIS=V1,V2
  std::string out;                // results folder; empty: a new one under gpubench-results/
  // --scratch values, each a folder or comma-separated folders (a value that names an existing
  // folder is taken whole, commas and all)
  std::vector<std::string> scratch;
  std::string gpus;  // comma-separated indices
  bool skip_verify = false;
  double timeout_s = 300;
  std::string python;  // --python: the python3 with torch that cpu.dataloader runs
  std::optional<int> duration_s;  // sets every benchmark's duration_s axis (gpu.burn)
  std::vector<std::string> argv;
  // The caller's own inputs (the workloads a run sizes afterwards), checked on every rank with the
  // others, before anything is created: throws input_error.
  std::function<void()> check_other_inputs;
};

// What a session runs against: the real registry and machine, or a test's.
struct session_environment {
  const registry* benchmarks = &registry::global();
  std::function<system_info()> discover;  // default: discover_system()
  // Told about each case as it runs; only rank 0's is used.
  progress_listener progress;
};

struct session_result {
  exit_code code = exit_ok;  // as the run alone decides (see exit_code_of)
  // This process holds the merged results and writes the reports: rank 0 of a run that got as
  // far as its results. False on other ranks and after bad input.
  bool holds_results = false;
  results_document document;
  std::filesystem::path results_path;
  run_outcome outcome;
  // Why the run must fail although no case did: GPUs listed, every GPU benchmark skipped.
  std::optional<std::string> idle_gpus;
};

// Runs the session. Bad input on any rank is exit 2 on every rank, rank 0 printing the reason on
// stderr (one line); nothing is created before the inputs are checked. Throws input_error only
// for a build without MPI started by an MPI launcher.
[[nodiscard]] session_result run_session(const session_request& request,
                                         const session_environment& environment = {});

// The exit code of a finished session as rank 0 reports it: 1 when the results file could not be
// written, 3 when interrupted, 1 when a case failed or no GPU was tested on a machine with GPUs.
[[nodiscard]] exit_code exit_code_of(const session_result& session);

}  // namespace gpubench
