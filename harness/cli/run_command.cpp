#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "gpubench/build_info.hpp"
#include "gpubench/config.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/runner.hpp"
#include "gpubench/suite.hpp"
#include "gpubench/system.hpp"
#include "gpubench/text.hpp"
#include "reports/format.hpp"
#include "reports/summary.hpp"

namespace gpubench::cli {

namespace fs = std::filesystem;

namespace {

std::vector<int> parse_gpu_list(const std::string& text, const system_info& system) {
  std::vector<int> out;
  if (text.empty()) {
    return out;
  }
  for (const std::string& part : split(text, ',')) {
    std::size_t used = 0;
    int index = -1;
    try {
      index = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || index < 0) {
      throw input_error("--gpus: expected GPU indices like 0,1,3, got '" + text + "'");
    }
    const bool present = std::any_of(system.gpus.begin(), system.gpus.end(),
                                     [&](const gpu_info& g) { return g.index == index; });
    if (!present) {
      throw input_error("--gpus: expected an index of a GPU on this machine (" +
                        std::to_string(system.gpus.size()) + " found), got " +
                        std::to_string(index));
    }
    out.push_back(index);
  }
  return out;
}

// --scratch DIR[,DIR...]: existing, writable folders (one per device to read at once).
std::vector<fs::path> parse_scratch_dirs(const std::string& text) {
  std::vector<fs::path> dirs;
  if (text.empty()) {
    return dirs;
  }
  for (const std::string& part : split(text, ',')) {
    std::error_code ec;
    if (part.empty()) {
      throw input_error("--scratch: expected folders separated by commas, got '" + text + "'");
    }
    if (!fs::exists(part, ec)) {
      throw input_error("--scratch " + part + ": expected an existing folder (it does not exist)");
    }
    if (!fs::is_directory(part, ec)) {
      throw input_error("--scratch " + part + ": expected a folder, got a file");
    }
    if (::access(part.c_str(), W_OK | X_OK) != 0) {
      throw input_error("--scratch " + part + ": expected a folder gpubench may write to");
    }
    dirs.emplace_back(part);
  }
  return dirs;
}

std::string timestamp_for_folder() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &utc);
  return buffer;
}

// A folder no earlier run wrote to: a run never overwrites earlier results.
fs::path make_output_folder(const std::string& requested, const std::string& host) {
  if (!requested.empty()) {
    fs::path out(requested);
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
      throw input_error("--out " + requested + ": expected a folder, got an existing file");
    }
    if (fs::exists(out / "results.json", ec)) {
      throw input_error("--out " + requested +
                        ": expected a new or empty folder; it holds an earlier results.json");
    }
    fs::create_directories(out, ec);
    if (ec) {
      throw input_error("--out " + requested + ": cannot create the folder (" + ec.message() + ")");
    }
    if (::access(out.c_str(), W_OK) != 0) {
      throw input_error("--out " + requested + ": expected a writable folder");
    }
    return out;
  }
  const fs::path parent("gpubench-results");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw input_error("gpubench-results: cannot create the folder (" + ec.message() + ")");
  }
  const std::string base =
      (host.empty() ? std::string("host") : host) + "-" + timestamp_for_folder();
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const fs::path candidate =
        parent / (attempt == 0 ? base : base + "-" + std::to_string(attempt));
    if (::mkdir(candidate.c_str(), 0755) == 0) {
      return candidate;
    }
    if (errno != EEXIST) {
      throw_system_error("mkdir(" + candidate.string() + ")", errno);
    }
  }
  throw input_error("gpubench-results: could not find an unused folder name");
}

std::string format_duration(double seconds) {
  const long total = std::lround(seconds);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  return buffer;
}

// Progress on stderr: redrawn in place on a terminal, one line per case otherwise.
progress_listener make_progress() {
  const bool tty = ::isatty(STDERR_FILENO) == 1;
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
    std::cerr << "\r\033[K[" << index << "/" << total << "] " << label << "  elapsed "
              << format_duration(spent) << (index > 1 ? "  ETA " + format_duration(eta) : "")
              << std::flush;
  };
  progress.finished = [tty, elapsed](std::size_t index, std::size_t total, const result& r) {
    if (tty) {
      std::cerr << "\r\033[K";
    }
    std::cerr << "[" << index << "/" << total << "] " << r.id;
    if (!r.axes.empty()) std::cerr << " " << reports::format_axes(r.axes);
    switch (r.status) {
      case result_status::ok:
        std::cerr << ": ok";
        if (!r.metrics.empty()) {
          std::cerr << ", " << r.metrics.front().first << " "
                    << reports::format_number(r.metrics.front().second.median);
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
  return progress;
}

std::vector<std::string> build_warnings() {
  std::vector<std::string> warnings;
  if (build_type() != "Release") {
    warnings.push_back("gpubench was built as " + build_type() +
                       ", not Release: host-side figures may be low");
  }
  if (benchmark::CPUInfo::Get().scaling == benchmark::CPUInfo::Scaling::ENABLED) {
    warnings.emplace_back("CPU frequency scaling is enabled: host-side figures may vary");
  }
  return warnings;
}

}  // namespace

int run_command(const run_args& args) {
  // Inputs first: a bad flag or file costs nothing and touches nothing.
  const suite s = load_suite(args.suite);
  plan_request request;
  request.only = args.only;
  request.skip = args.skip;
  for (const auto& text : args.axes) {
    request.axis_overrides.push_back(parse_axis_override(text));
  }

  std::vector<fs::path> scratch = parse_scratch_dirs(args.scratch);

  system_info system = discover_system();
  run_options options;
  options.gpus = parse_gpu_list(args.gpus, system);
  options.verify = !args.skip_verify;
  const std::string host = system.host;
  const std::string driver = system.gpu_status.driver_version;
  const fs::path out = make_output_folder(args.out, host);
  const bool default_scratch = scratch.empty();
  if (default_scratch) {
    // Inside the results folder; removed at the end if the benchmarks left it empty.
    scratch.push_back(out / "scratch");
    fs::create_directories(scratch.back());
  }
  options.scratch_dirs = scratch;
  const context ctx(std::move(system), options);
  const std::vector<planned_benchmark> plan = make_plan(s, request, registry::global(), ctx);

  results_document doc;
  doc.meta.version = version();
  doc.meta.git = git_describe();
  doc.meta.argv = args.argv;
  doc.meta.started = iso8601_now();
  doc.meta.build_type = build_type();
  doc.meta.compiler = compiler();
  doc.meta.cuda = cuda_runtime_version();
  doc.meta.driver = driver;
  doc.meta.nccl = nccl_version();
  doc.meta.suite = s.name;
  doc.meta.warnings = build_warnings();
  doc.system = ctx.system();
  for (const auto& warning : doc.meta.warnings) {
    std::cerr << "gpubench: warning: " << warning << "\n";
  }

  const fs::path results_path = out / "results.json";
  install_interrupt_handlers();
  std::cerr << "gpubench: suite '" << s.name << "', " << count_cases(plan) << " cases, results in "
            << results_path.string() << "\n";
  const run_outcome outcome = run_plan(plan, ctx, doc, results_path, make_progress());

  if (default_scratch) {
    std::error_code ec;
    fs::remove(scratch.front(), ec);  // only if empty
  }
  reports::print_summary(std::cout, doc);
  std::cout << "\n"
            << outcome.ok << " ok, " << outcome.failed << " failed, " << outcome.skipped
            << " skipped" << (outcome.interrupted ? " (interrupted)" : "")
            << "\nresults: " << results_path.string() << "\n";
  if (outcome.interrupted) return exit_interrupted;
  return outcome.failed > 0 ? exit_failure : exit_ok;
}

}  // namespace gpubench::cli
