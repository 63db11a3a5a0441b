#include "gpubench/harness/runner.hpp"
#include "gpubench/core/json.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/exit_codes.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/stop_cleanup.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench {

namespace {

std::atomic<bool> interrupt_flag{false};
std::atomic<int> stop_signals{0};
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");

extern "C" void on_interrupt_signal(int /*signal*/) {
  interrupt_flag.store(true, std::memory_order_relaxed);
  if (stop_signals.fetch_add(1) > 0) {
    // The second: stop now. Only async-signal-safe calls from here.
    remove_files_registered_for_stop();
    ::_exit(exit_interrupted);
  }
}

// Google Benchmark reports a failed run through `error_occurred` up to 1.7 and `skipped` after.
template <class Run>
bool run_failed(const Run& run, std::string& message) {
  if constexpr (requires { run.error_occurred; }) {
    if (run.error_occurred) {
      message = run.error_message;
      return true;
    }
  } else {
    if (run.skipped) {
      message = run.skip_message;
      return true;
    }
  }
  return false;
}

// Receives Google Benchmark's per-repetition runs instead of printing them.
class capture_reporter final : public benchmark::BenchmarkReporter {
 public:
  struct repetition {
    double seconds_per_iteration = 0;
    std::int64_t iterations = 0;
  };

  bool ReportContext(const Context& /*context*/) override { return true; }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) {
        continue;  // aggregates: gpubench computes its own statistics over repetitions
      }
      std::string message;
      if (run_failed(run, message)) {
        error = message;
        continue;
      }
      // With UseManualTime(), real_accumulated_time holds the manual (benchmark-measured) time.
      repetitions.push_back(
          {run.real_accumulated_time / static_cast<double>(run.iterations), run.iterations});
    }
  }

  std::vector<repetition> repetitions;
  std::string error;
};

void initialize_google_benchmark() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Google Benchmark's own flags stay at their defaults: gpubench sets everything per case.
    static char program[] = "gpubench";
    static char* argv[] = {program, nullptr};
    int argc = 1;
    benchmark::Initialize(&argc, argv);
  });
}

using repetition = capture_reporter::repetition;

// Times the case with Google Benchmark: warm-up untimed, then the repetitions the settings ask
// for. Returns them, or the error that stopped them in `error`.
std::vector<repetition> time_case(const benchmark_definition& def, const run_settings& settings,
                                  instance& inst, std::string& error) {
  const bool manual = def.timing_mode() == timing::manual;
  bool warmed_up = false;
  auto body = [&](benchmark::State& state) {
    try {
      if (!warmed_up) {
        // Untimed: the loop below starts the clock.
        for (int i = 0; i < settings.warmup_iterations; ++i) {
          stop_if_interrupted("during warm-up");
          (void)inst.run_iteration();
        }
        inst.warmup_done();
        warmed_up = true;
      }
      for (auto _ : state) {
        if (interrupt_requested()) {
          error = "interrupted";
          state.SkipWithError(error.c_str());
          break;
        }
        const std::optional<double> seconds = inst.run_iteration();
        if (manual) {
          if (!seconds || !(*seconds > 0)) {
            throw std::logic_error(def.id() + ": a manually timed iteration returned no time");
          }
          state.SetIterationTime(*seconds);
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
      state.SkipWithError(error.c_str());
    }
  };

  initialize_google_benchmark();
  benchmark::ClearRegisteredBenchmarks();
  auto* registered = benchmark::RegisterBenchmark("case", body);
  registered->Repetitions(settings.repetitions)->ReportAggregatesOnly(false);
  if (manual) {
    registered->UseManualTime();
  } else {
    registered->UseRealTime();
  }
  if (settings.iterations) {
    registered->Iterations(*settings.iterations);
  } else {
    registered->MinTime(settings.min_time_s);
  }
  capture_reporter reporter;
  // Google Benchmark appends its settings to the name ("case/repeats:5/real_time").
  benchmark::RunSpecifiedBenchmarks(&reporter, "^case/");
  benchmark::ClearRegisteredBenchmarks();
  if (error.empty()) error = reporter.error;
  if (error.empty() && reporter.repetitions.empty()) {
    error = "Google Benchmark reported no repetitions";
  }
  return std::move(reporter.repetitions);
}

// The metrics of every repetition (derived from the declared work, or computed by the instance),
// the case's facts, and its data check.
void record(const benchmark_definition& def, const run_settings& settings, instance& inst,
            const std::vector<repetition>& repetitions, const context& ctx, result& r) {
  const work w = inst.work_per_iteration();
  std::vector<std::pair<std::string, std::vector<double>>> samples;
  const auto add_sample = [&](const std::string& name, double value) {
    for (auto& [existing, values_] : samples) {
      if (existing == name) {
        values_.push_back(value);
        return;
      }
    }
    samples.push_back({name, {value}});
  };
  json iterations = json::array();
  for (const auto& rep : repetitions) {
    for (const metric_spec& spec : def.metrics()) {
      if (spec.kind) {
        add_sample(spec.name, derive_metric(*spec.kind, w, rep.seconds_per_iteration, spec.in));
      }
    }
    for (const auto& [name, value] : inst.extra_metrics(rep.seconds_per_iteration)) {
      add_sample(name, value);
    }
    iterations.push_back(rep.iterations);
  }
  for (const auto& [name, values_] : samples) {
    const metric_spec* spec = def.find_metric(name);
    if (spec == nullptr) {
      throw std::logic_error(def.id() + ": metric '" + name + "' is not declared");
    }
    r.metrics.emplace_back(name, metric_summary(summarize(values_), spec->written()));
  }

  json& info = r.info.edit();
  info = inst.info();
  info["timing"] = def.timing_mode() == timing::manual ? "manual" : "host_wall";
  info["warmup_iterations"] = settings.warmup_iterations;
  info["iterations_per_repetition"] = std::move(iterations);

  if (ctx.options().verify) {
    const verification check = inst.verify();
    r.verified = check.passed;
    if (!check.detail.empty()) {
      info["verification"] = check.detail;
    }
    if (!check.passed) {
      r.status = result_status::failed;
      r.error = "verification failed: " + check.detail;
    }
  }
}

// Times one case with Google Benchmark and turns its repetitions into metrics.
result run_case(const planned_benchmark& planned, const axis_values& values, const context& ctx) {
  const benchmark_definition& def = *planned.definition;
  result r;
  r.id = def.id();
  r.axes = values.to_json();

  std::unique_ptr<instance> inst;
  try {
    inst = def.make_instance(ctx, values);
  } catch (const skip_case& e) {
    r.status = result_status::skipped;
    r.reason = e.what();
    return r;
  } catch (const std::exception& e) {
    r.status = result_status::failed;
    r.error = e.what();
    return r;
  }

  std::string error;
  const std::vector<repetition> repetitions = time_case(def, planned.settings, *inst, error);
  if (!error.empty()) {
    r.status = result_status::failed;
    r.error = error;
    return r;
  }
  try {
    record(def, planned.settings, *inst, repetitions, ctx, r);
  } catch (const std::exception& e) {
    r.status = result_status::failed;
    r.error = e.what();
  }
  return r;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(signal, &action, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

void stop_if_interrupted(const char* during) {
  if (interrupt_requested()) throw std::runtime_error(std::string("interrupted ") + during);
}

bool interrupt_requested() noexcept {
  return interrupt_flag.load(std::memory_order_relaxed);
}

void request_interrupt() noexcept {
  interrupt_flag.store(true, std::memory_order_relaxed);
}

void clear_interrupt() noexcept {
  interrupt_flag.store(false, std::memory_order_relaxed);
}

void save_results(const std::filesystem::path& results_path, const results_document& document,
                  run_outcome& outcome) {
  try {
    const json doc = document;
    std::string text = json_text(doc, 1) + "\n";
    // Indented while it is small enough to read by eye; compact when indenting would take it
    // past what the readers accept.
    if (text.size() > max_json_file_bytes) text = json_text(doc) + "\n";
    if (text.size() > max_json_file_bytes) {
      throw std::runtime_error("the results take " + format_bytes(text.size()) +
                               ", more than the " + format_bytes(max_json_file_bytes) +
                               " gpubench reads back");
    }
    write_file_atomically(results_path, text, at_symlink::replace);  // in the run's own folder
    outcome.save_error.clear();
    outcome.results_saved = document.results.size();
  } catch (const std::exception& e) {
    outcome.save_error = e.what();
  }
}

std::optional<std::string> idle_gpus_problem(const std::vector<planned_benchmark>& plan,
                                             const results_document& document) {
  std::set<std::string> gpu_ids;
  for (const auto& planned : plan) {
    if (planned.definition->needs_gpu()) gpu_ids.insert(planned.definition->id());
  }
  if (gpu_ids.empty()) return std::nullopt;
  // The GPUs listed (by CUDA, or by NVML where CUDA cannot use them), which CUDA_VISIBLE_DEVICES
  // has already cut: hiding every GPU is the user's choice, not a box whose GPUs failed to run.
  std::size_t machine_gpus = document.system.gpus.size();
  for (const auto& node : document.nodes) {
    machine_gpus = std::max(machine_gpus, node.system.gpus.size());
  }
  if (machine_gpus == 0) return std::nullopt;
  const result* first_skip = nullptr;
  for (const result& r : document.results) {
    if (gpu_ids.count(r.id) == 0) continue;
    if (r.status != result_status::skipped) return std::nullopt;
    if (first_skip == nullptr) first_skip = &r;
  }
  std::string out = "the machine has " + std::to_string(machine_gpus) +
                    " GPU(s), but every GPU benchmark was skipped";
  if (first_skip != nullptr) out += " (" + first_skip->id + ": " + first_skip->reason + ")";
  return out + ": no GPU was tested";
}

run_outcome run_plan(const std::vector<planned_benchmark>& plan, const context& ctx,
                     results_document& document, const std::filesystem::path& results_path,
                     const progress_listener& progress, const run_hooks& hooks) {
  run_outcome outcome;
  const std::size_t total = count_cases(plan);
  std::size_t index = 0;
  const auto save = [&] {
    document.meta.finished = iso8601_now();
    if (results_path.empty()) return;
    // A full or read-only output disk loses no measurement: the next save tries again.
    const bool was_failing = !outcome.save_error.empty();
    save_results(results_path, document, outcome);
    if (!was_failing && !outcome.save_error.empty() && progress.save_failed) {
      progress.save_failed(outcome.save_error);
    }
  };
  const auto record = [&](result r) {
    switch (r.status) {
      case result_status::ok:
        ++outcome.ok;
        break;
      case result_status::skipped:
        ++outcome.skipped;
        break;
      case result_status::failed:
        ++outcome.failed;
        break;
    }
    // Saved before it is shown: a reader of the progress that went away costs nothing.
    document.results.push_back(std::move(r));
    save();
    if (progress.finished) {
      progress.finished(index, total, document.results.back());
    }
  };

  save();  // the file exists, valid, from the start
  if (progress.skipped_whole) {
    std::vector<std::pair<std::string, std::string>> skipped;
    for (const auto& planned : plan) {
      if (hooks.runs_here && !hooks.runs_here(*planned.definition)) continue;
      if (planned.skip_reason) skipped.emplace_back(planned.definition->id(), *planned.skip_reason);
    }
    if (!skipped.empty()) progress.skipped_whole(skipped);
  }
  for (const auto& planned : plan) {
    if (hooks.runs_here && !hooks.runs_here(*planned.definition)) {
      if (hooks.after_benchmark) hooks.after_benchmark();
      continue;
    }
    if (planned.skip_reason) {
      ++index;
      if (progress.started) progress.started(index, total, planned.definition->id());
      result r;
      r.id = planned.definition->id();
      r.status = result_status::skipped;
      r.reason = *planned.skip_reason;
      record(std::move(r));
      if (hooks.after_benchmark) hooks.after_benchmark();
      continue;
    }
    for (const auto& values : planned.cases) {
      if (interrupt_requested()) {
        break;
      }
      ++index;
      if (progress.started) {
        progress.started(index, total, planned.definition->id() + " " + values.label());
      }
      const auto case_start = std::chrono::steady_clock::now();
      result r = run_case(planned, values, ctx);
      r.wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
      if (interrupt_requested()) {
        break;  // a case cut short is not a measurement; what finished is already saved
      }
      record(std::move(r));
    }
    if (hooks.after_benchmark) hooks.after_benchmark();
    if (interrupt_requested()) {
      break;
    }
  }
  // Shared resources (NCCL communicators) end with the run, while every rank is still here.
  ctx.resources().clear();
  if (interrupt_requested()) {
    outcome.interrupted = true;
    document.meta.interrupted = true;
  }
  save();
  return outcome;
}

}  // namespace gpubench
