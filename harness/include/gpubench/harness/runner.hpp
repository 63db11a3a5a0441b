// Runs a plan: Google Benchmark times each case, the results file is rewritten after each one.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpubench/core/results.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/suite.hpp"

namespace gpubench {

// Told about each case as the run goes (the CLI draws progress from it).
struct progress_listener {
  std::function<void(std::size_t index, std::size_t total, const std::string& label)> started;
  std::function<void(std::size_t index, std::size_t total, const result& r)> finished;
  // Before the first case: each benchmark of the plan that cannot run here (its id and why),
  // known before anything runs. Each is still recorded and passed to `finished` in its turn.
  std::function<void(const std::vector<std::pair<std::string, std::string>>& skipped)>
      skipped_whole;
  // Writing results_path failed (the first time after a success): the run goes on in memory
  // and tries again after the next case.
  std::function<void(const std::string& error)> save_failed;
};

// How a rank of a multi-rank job takes part (the defaults suit a single process).
struct run_hooks {
  // Whether this process runs the benchmark (per-node ones run on one rank per node).
  std::function<bool(const benchmark_definition&)> runs_here;
  // Called on every rank after each benchmark of the plan (an MPI barrier keeps ranks in step,
  // so one rank's host benchmark never disturbs another's GPU benchmark).
  std::function<void()> after_benchmark;
};

struct run_outcome {
  std::size_t ok = 0;
  std::size_t skipped = 0;
  std::size_t failed = 0;
  bool interrupted = false;
  // Set when the last attempt to write results_path failed: what failed, and how many results
  // the file on disk (the last good write) holds.
  std::string save_error;
  std::size_t results_saved = 0;
};

// Writes the document to `results_path` atomically and records how that went in `outcome`:
// results_saved and save_error cleared on success, save_error set (the earlier file left whole)
// on failure. Never throws for a failed write: the run keeps its results in memory. The path is
// in the run's claimed folder: a link planted there is replaced, not followed.
void save_results(const std::filesystem::path& results_path, const results_document& document,
                  run_outcome& outcome);

// Runs every case of the plan in order, appends one result per case (one per benchmark when it
// is skipped) to `document`, and rewrites `results_path` atomically after each (unless the path
// is empty: ranks other than 0 keep their results in memory for the gather). An exception in
// a case becomes a failed result; the run goes on, and so it does when results_path cannot be
// written (outcome.save_error says so at the end). Stops early, marking the document
// interrupted, once interrupt_requested() is true.
run_outcome run_plan(const std::vector<planned_benchmark>& plan, const context& ctx,
                     results_document& document, const std::filesystem::path& results_path,
                     const progress_listener& progress = {}, const run_hooks& hooks = {});

// Why a run must fail although no case failed: the machine lists GPUs (CUDA's, or NVML's where
// CUDA cannot use them, on any node) and the plan held GPU benchmarks, yet every one of them was
// skipped. nullopt otherwise.
[[nodiscard]] std::optional<std::string> idle_gpus_problem(
    const std::vector<planned_benchmark>& plan, const results_document& document);

// Stop signals: SIGINT, SIGTERM, SIGHUP (the terminal or ssh session went away) and SIGQUIT.
// The first sets a flag that the runner and the benchmarks' long loops poll, so the run stops
// within about a second and saves what finished; a second one removes the scratch and temporary
// files registered with removed_on_stop and exits with exit_interrupted at once. SIGPIPE is
// ignored: a reader that went away makes writes fail, it does not end the run.
void install_interrupt_handlers();
[[nodiscard]] bool interrupt_requested() noexcept;
void request_interrupt() noexcept;
// For a benchmark's long loops: throws std::runtime_error("interrupted ...") once a stop was
// asked for. The runner drops a case cut short, so what the message says is never recorded.
void stop_if_interrupted(const char* during);
// Clears the flag (tests, and nothing else, need this).
void clear_interrupt() noexcept;

}  // namespace gpubench
