// gpubench run: the session (harness), then what a person reads of it: the summary table, the
// sizing of the workloads against what was measured, the acceptance verdict, report.html and
// report.md beside results.json.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string_view>

#include "../command.hpp"
#include "../standard_streams.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/harness/session.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/summary.hpp"
#include "gpubench/vocabulary/query.hpp"

namespace gpubench::app {

namespace {

struct run_args {
  session_request session;
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::vector<std::string> workloads;  // sized after the run; default: configs/workloads/
};

std::string format_duration(double seconds) {
  const long total = std::lround(seconds);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  return buffer;
}

// Progress on stderr: redrawn in place on a terminal, one line per case otherwise. The benchmarks
// that cannot run here are said first, one line per reason (on a machine without GPUs, every GPU
// benchmark), and not again case by case.
progress_listener make_progress() {
  const bool tty = redrawable_terminal();
  auto announced = std::make_shared<std::set<std::string>>();
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  progress_listener progress;
  progress.started = [tty, elapsed](std::size_t index, std::size_t total,
                                    const std::string& label) {
    if (!tty) return;
    const double spent = elapsed();
    const double eta =
        index > 1 ? spent / static_cast<double>(index - 1) * static_cast<double>(total - index + 1)
                  : 0;
    write_terminal_control("\r\033[K");
    std::cerr << "[" << index << "/" << total << "] " << label << "  elapsed "
              << format_duration(spent) << (index > 1 ? "  ETA " + format_duration(eta) : "")
              << std::flush;
  };
  progress.skipped_whole = [announced](const auto& skipped) {
    for (const auto& [id, reason] : skipped) announced->insert(id);
    for (const std::string& line : reports::skipped_lines(skipped)) std::cerr << line << "\n";
  };
  progress.finished = [tty, elapsed, announced](std::size_t index, std::size_t total,
                                                const result& r) {
    if (tty) write_terminal_control("\r\033[K");
    if (r.status == result_status::skipped && r.axes.empty() && announced->count(r.id) != 0) {
      return;
    }
    std::cerr << "[" << index << "/" << total << "] " << r.id;
    if (!r.axes.empty()) std::cerr << " " << format_axes(r.axes);
    switch (r.status) {
      case result_status::ok:
        std::cerr << ": ok";
        if (!r.metrics.empty()) {
          std::cerr << ", " << r.metrics.front().first << " "
                    << format_number(r.metrics.front().second.median);
        }
        for (const auto& [name, stats] : r.metrics) {
          if (vocabulary::is_noisy(stats)) {
            std::cerr << " (noisy: " << name << " " << vocabulary::noise_text(stats.cv) << ")";
          }
        }
        // What the case changed from what was asked (a size stepped down to fit, say).
        for (const json_view note : r.info.view()["notes"].items()) {
          if (const auto text = note.text()) std::cerr << " (note: " << *text << ")";
        }
        break;
      case result_status::skipped:
        std::cerr << ": skipped (" << r.reason << ")";
        break;
      case result_status::failed:
        std::cerr << ": FAILED (" << r.error << ")";
        break;
    }
    std::cerr << "  [" << format_duration(elapsed()) << "]\n";
  };
  progress.save_failed = [](const std::string& error) {
    std::cerr << "gpubench: warning: results not saved (" << error
              << "); the run goes on and tries again after each case\n";
  };
  return progress;
}

int run(const run_args& args) {
  session_request request = args.session;
  request.only = split_commas(args.only);
  request.skip = split_commas(args.skip);
  // The workloads sized after the run are read now: a typo must not wait for the whole suite.
  const std::vector<std::string> workloads = split_commas(args.workloads);
  request.check_other_inputs = [&workloads] {
    for (const auto& name : workloads.empty() ? model::default_workloads() : workloads) {
      (void)model::load_workload(name);
    }
  };
  session_environment environment;
  environment.progress = make_progress();
  const session_result session = run_session(request, environment);
  if (!session.holds_results) return session.code;

  const results_document& doc = session.document;
  const std::string results_file = session.results_path.string();
  const run_outcome& outcome = session.outcome;
  reports::print_summary(std::cout, doc);
  // One sizing of the workloads serves the printed summary and the written reports.
  std::string report_problem;
  try {
    const reports::machine_report report =
        reports::make_report(doc, results_file, split_commas(args.workloads));
    reports::print_sizing_summary(std::cout, report, results_file);
    std::cout << "\nacceptance: " << report.verdict << "\n";
    reports::write_run_reports(report, session.results_path);
  } catch (const input_error& e) {
    std::cout << "\nsizing skipped: " << e.what() << "\n";  // e.g. an unknown --workload
    report_problem = e.what();
  } catch (const std::exception& e) {
    report_problem = e.what();  // the results are written; the reports are a view of them
  }
  std::cout << "\n"
            << outcome.ok << " ok, " << outcome.failed << " failed, " << outcome.skipped
            << " skipped" << (outcome.interrupted ? " (interrupted)" : "")
            << "\nresults: " << results_file << "\n";
  if (report_problem.empty()) {
    std::cout << "report:  " << (session.results_path.parent_path() / "report.html").string()
              << "\n";
  } else {
    std::cerr << "gpubench: reports not written: " << report_problem << "\n";
  }
  std::error_code ec;
  if (!outcome.save_error.empty() && !std::filesystem::exists(session.results_path, ec)) {
    std::cerr << "gpubench: error: no results file was written (" << outcome.save_error << "): the "
              << doc.results.size() << " results of this run are lost\n";
  } else if (!outcome.save_error.empty()) {
    std::cerr << "gpubench: error: " << results_file << " holds " << outcome.results_saved
              << " of the " << doc.results.size() << " results: the last write failed ("
              << outcome.save_error << ")\n";
  } else if (!outcome.interrupted && session.idle_gpus) {
    std::cerr << "gpubench: error: " << *session.idle_gpus << "\n";
  }
  return session.code;
}

}  // namespace

command add_run(CLI::App& app, const command_line& line) {
  auto args = std::make_shared<run_args>();
  args->session.argv = line.argv;
  session_request& s = args->session;
  CLI::App* sub = app.add_subcommand("run", "Run a suite of benchmarks and write results.json");
  sub->add_option("--suite", s.suite, "quick, full, a suite name or a suite file")
      ->capture_default_str();
  sub->add_option("--only", args->only, "benchmark ids or patterns to run (comma-separated)");
  sub->add_option("--skip", args->skip, "benchmark ids or patterns to leave out (comma-separated)");
  sub->add_option("--axis", s.axes, "ID:AXIS=V1[,V2...] sets an axis (sizes in bytes)");
  sub->add_option("--out", s.out,
                  "results folder (new or empty); default: a new folder under gpubench-results/");
  sub->add_option(
      "--scratch", s.scratch,
      "folder(s) for storage benchmarks' test files, comma-separated or repeated (one per "
      "device)");
  sub->add_option("--gpus", s.gpus, "GPU indices to use, e.g. 0,1 (default: all)");
  sub->add_option("--python", s.python,
                  "the python3 with torch and torchvision that cpu.dataloader runs (default: "
                  "$GPUBENCH_PYTHON if set, else each python3 on PATH)");
  sub->add_option(
         "--duration", s.duration_s,
         "seconds of sustained load for gpu.burn (default: the suite's; full 60, quick 10)")
      ->check(finite_range(1, 604800));
  sub->add_flag("--skip-verify", s.skip_verify, "do not check the benchmarks' data");
  sub->add_option("--workload", args->workloads,
                  "workloads to size against the results (default: configs/workloads/"
                  "default.json)");
  sub->add_option("--timeout", s.timeout_s,
                  "seconds before a stuck collective is aborted and reported failed")
      ->check(finite_range(1.0, 86400.0))
      ->capture_default_str();
  return {sub, [args] { return run(*args); }, /*stdout_is_a_summary=*/true};
}

}  // namespace gpubench::app
