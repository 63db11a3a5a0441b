// gpubench watch: runs a training job (or attaches to one), samples it and its machine from
// outside each interval, and says what bounds it (docs/watch.md). The job is never harmed: if
// the watcher fails, the job runs on and its exit code is still returned.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "../command.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/watch/page.hpp"
#include "gpubench/watch/sampler.hpp"
#include "gpubench/watch/verdict.hpp"

namespace gpubench::app {

namespace {

struct watch_args {
  std::vector<std::string> command;  // after --
  std::optional<int> pid;
  std::optional<std::string> results;
  std::optional<std::string> workload;  // what the job trains, for gpubench size's prediction
  double interval_s = 1.0;
  std::optional<double> duration_s;
  std::string out = "gpubench-watch";
};

// The job's process group, for the signal handler (a handler can reach nothing else).
std::atomic<pid_t> job_group{0};
constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

extern "C" void forward_signal(int sig) {
  const pid_t group = job_group.load();
  if (group > 0) kill(-group, sig);
}

// The job runs in its own process group, so a signal sent to the watcher reaches it once, from
// here, with its DataLoader workers (as a terminal's Ctrl-C reaches a foreground group).
pid_t start_job(const std::vector<std::string>& command) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    std::vector<char*> argv;
    argv.reserve(command.size() + 1);
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    (void)!write(ready[1], &err, sizeof err);
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, so the group exists before either goes on
  close(ready[1]);
  int err = 0;
  const bool failed = read(ready[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err);
  close(ready[0]);
  if (failed) {
    waitpid(pid, nullptr, 0);
    throw input_error("--: cannot run '" + command.front() + "': " + strerror(err));
  }
  return pid;
}

// The machine's figures, read once for the ceilings and the prediction, and where they came from.
struct machine_figures {
  model::hardware_profile profile;
  std::string origin;  // the --results given, or "catalog:NAME, matched to 'GPU name'"
};

// Without --results: the catalog entry for the GPU that NVML names (the first, as a node's GPUs
// are alike).
std::optional<machine_figures> catalog_figures(const std::vector<gpu_activity>& gpus) {
  if (gpus.empty()) return std::nullopt;
  const gpu_activity& g = gpus.front();
  const auto name = model::catalog_gpu_for_device(g.name, g.memory_total_GB.value_or(0));
  if (!name) return std::nullopt;
  return machine_figures{model::load_catalog(*name),
                         "catalog:" + *name + ", matched to '" + g.name + "'"};
}

// What a watched limit is made of in the model: lifting it doubles these figures.
struct lift {
  std::string_view component;
  std::vector<const vocabulary::figure_def*> figures;
};
const std::vector<lift>& lifts() {
  namespace fig = vocabulary::figures;
  static const std::vector<lift> table{
      {"cpu", {&fig::cpu_cores}},
      {"storage", {&fig::storage_read}},
      {"pcie", {&fig::pcie_h2d}},
      {"communication", {&fig::network, &fig::nvlink}},
  };
  return table;
}

// gpubench size for the watched job: the machine's figures (--results, else the catalog entry
// of its GPU) with the job's own allocation (its allowed cores, the GPUs it held), the rate and
// limit the model predicts, and the rate with the watched limit doubled. Adds one advice line.
json predict_for_job(const std::string& workload_name, const model::workload& w,
                     const std::optional<machine_figures>& machine, const watch::summary& s,
                     watch::verdict& v) {
  const std::string origin = machine ? machine->origin : "";
  json out{{"workload", workload_name}, {"hardware", origin}};
  if (!machine) {
    out["skipped"] = "no --results, and no catalog entry for the GPUs NVML names";
    return out;
  }
  if (s.job_gpus == 0) {
    out["skipped"] = "the job held no GPU while watched";
    return out;
  }
  model::hardware_profile hw = machine->profile;
  const int cores = std::max(1, static_cast<int>(s.cpu_cores_allowed));
  model::apply_setting(hw, vocabulary::key_of(model::fig::cpu_cores) + "=" + std::to_string(cores));
  const model::constants constants = model::load_constants();
  model::run_options options;
  options.gpus = s.job_gpus;
  try {
    const model::sizing now = model::predict(hw, w, constants, options);
    out["cpu_cores"] = cores;
    out["gpus"] = s.job_gpus;
    out["sample_unit"] = now.sample_unit;
    out["predicted_samples_per_s"] = now.predicted_samples_per_s;
    out["limiting_component"] = now.limiting_component;
    out["recommendations"] = now.recommendations;
    const std::string unit = reports::samples_unit(now);
    std::string line = "gpubench size predicts " + format_number(now.predicted_samples_per_s) +
                       " " + unit + " for " + workload_name + " on " + origin + " with the job's " +
                       std::to_string(cores) + " cores and " + std::to_string(s.job_gpus) +
                       " GPU(s), limited by " + now.limiting_component;
    for (const lift& l : lifts()) {
      if (l.component != v.limiting_component) continue;
      model::hardware_profile lifted = hw;
      std::vector<std::string> settings;
      for (const vocabulary::figure_def* f : l.figures) {
        if (const auto value = lifted.value(*f)) {
          settings.push_back(vocabulary::key_of(*f) + "=" + format_number(2 * *value));
          model::apply_setting(lifted, settings.back());
        }
      }
      if (settings.empty()) break;
      const model::sizing more = model::predict(lifted, w, constants, options);
      out["lifted"] = {{"settings", settings},
                       {"predicted_samples_per_s", more.predicted_samples_per_s},
                       {"limiting_component", more.limiting_component}};
      line += "; with " + join(settings, ", ") + ": " +
              format_number(more.predicted_samples_per_s) + " " + unit + ", limited by " +
              more.limiting_component;
    }
    v.advice.push_back(line);
  } catch (const std::exception& e) {
    out["skipped"] = e.what();
  }
  return out;
}

std::string status_line(const json& sample) {
  const json& job = sample.at("job");
  std::string line = "watch " + format_number(sample.at("t").get<double>()) +
                     " s: " + std::to_string(job.at("processes").get<int>()) + " processes, " +
                     format_number(job.at("cpu_cores_used").get<double>()) + "/" +
                     format_number(job.at("cpu_cores_allowed").get<double>()) + " cores, read " +
                     format_number(job.at("read_GBps").get<double>()) + " GB/s";
  for (const json& g : sample.at("gpus")) {
    if (!g.at("job_pids").empty() && !g.at("utilization_percent").is_null()) {
      line += ", GPU" + g.at("index").dump() + " " + g.at("utilization_percent").dump() + "%";
    }
  }
  return line;
}

int watch_job(const watch_args& args) {
  if (args.command.empty() == !args.pid) {
    throw input_error(args.pid ? "--pid: give a PID or a command after --, not both"
                               : "--: expected a command to run (gpubench watch -- CMD ARGS...) "
                                 "or --pid PID");
  }
  if (args.pid) {
    if (const auto why = watch::why_not_watchable(*args.pid)) throw input_error("--pid: " + *why);
  }
  // Bad --results or --workload: exit 2 before the job starts.
  std::optional<machine_figures> machine;
  if (args.results) machine = machine_figures{model::load_hardware(*args.results), *args.results};
  std::optional<model::workload> workload;
  if (args.workload) workload = model::load_workload(*args.workload);
  const std::filesystem::path out(args.out);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw input_error("--out: cannot create " + out.string() + ": " + ec.message());

  pid_t root = 0;
  if (args.pid) {
    root = *args.pid;
  } else {
    for (const int sig : forwarded) std::signal(sig, forward_signal);
    root = start_job(args.command);
    job_group = root;
  }

  const auto start = std::chrono::steady_clock::now();
  const auto now_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const bool live = isatty(STDERR_FILENO) != 0;
  std::vector<json> samples;
  std::vector<std::string> watcher_errors;
  std::optional<int> job_status;
  std::ofstream lines(out / "watch.jsonl");
  double sampling_cpu_s = 0;
  const auto cpu_now = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  try {
    watch::sampler sampler(root);
    if (!sampler.gpu_why_not().empty())
      watcher_errors.push_back("no GPUs: " + sampler.gpu_why_not());
    const double cpu_start = cpu_now();
    watch::snapshot previous = sampler.take(now_s());
    if (!machine) machine = catalog_figures(previous.gpus);
    const double allowed = sampler.allowed_cores();
    sampling_cpu_s += cpu_now() - cpu_start;
    while (true) {
      // Sleep until the next sample, waking early when the job ends.
      const double next = previous.t + args.interval_s;
      bool ended = false;
      while (true) {
        if (!args.pid) {
          int status = 0;
          if (waitpid(root, &status, WNOHANG) == root) job_status = status;
          ended = job_status.has_value();
        } else {
          ended = watch::has_ended(root);
        }
        if (ended || now_s() >= next) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(
            std::max<long>(1, std::min<long>(50, static_cast<long>((next - now_s()) * 1000)))));
      }
      if (ended || (args.duration_s && now_s() >= *args.duration_s)) {
        break;
      }
      const double cpu_before = cpu_now();
      watch::snapshot current = sampler.take(now_s());
      json sample = watch::interval_sample(previous, current, allowed);
      sampling_cpu_s += cpu_now() - cpu_before;
      lines << sample.dump() << "\n" << std::flush;
      if (live) std::cerr << "\r\033[K" << status_line(sample) << std::flush;
      samples.push_back(std::move(sample));
      previous = std::move(current);
    }
  } catch (const std::exception& e) {
    // The job runs on; what was sampled is kept.
    watcher_errors.push_back(std::string("the watcher stopped sampling: ") + e.what());
  }
  if (live) std::cerr << "\r\033[K";
  if (!args.pid && !job_status) {
    int status = 0;
    if (!args.duration_s) {
      while (waitpid(root, &status, 0) < 0 && errno == EINTR) {
      }
      job_status = status;
    }
  }

  const watch::summary summary = watch::summarize(samples);
  const watch::ceilings limits =
      machine ? watch::ceilings_of(machine->profile, machine->origin) : watch::ceilings{};
  watch::verdict verdict = watch::judge(summary, limits);
  json prediction;
  if (workload) prediction = predict_for_job(*args.workload, *workload, machine, summary, verdict);
  json doc = {{"schema", "gpubench.watch/1"}, {"kind", "summary"}};
  if (args.pid) {
    doc["pid"] = *args.pid;
  } else {
    doc["command"] = args.command;
  }
  doc["interval_s"] = args.interval_s;
  doc["results"] = args.results ? json(*args.results) : json();
  int exit = exit_ok;
  if (job_status) {
    exit = WIFEXITED(*job_status) ? WEXITSTATUS(*job_status) : 128 + WTERMSIG(*job_status);
    doc["job_exit_code"] = exit;
  } else {
    doc["job_exit_code"] = json();  // attached, or still running at --duration
  }
  const double wall = now_s();
  doc["watcher"] = {{"sampling_cpu_s", sampling_cpu_s},
                    {"cpu_percent_of_one_core", wall > 0 ? 100 * sampling_cpu_s / wall : 0.0},
                    {"errors", watcher_errors}};
  doc["ceilings"] = watch::to_json(limits);
  doc["summary"] = watch::to_json(summary);
  doc["verdict"] = watch::to_json(verdict);
  doc["prediction"] = prediction;  // null without --workload
  try {
    write_file_atomically(out / "watch.json", doc.dump(2) + "\n");
    write_file_atomically(out / "watch.html", watch::render_page(doc, samples));
  } catch (const std::exception& e) {
    std::cerr << "gpubench: watch: " << e.what() << "\n";
    if (args.pid) return exit_failure;
  }
  std::cerr << "gpubench watch: " << verdict.limiting_component << " ("
            << (verdict.evidence.empty() ? "" : verdict.evidence.front()) << "); " << out.string()
            << "/watch.json\n";
  return exit;
}

}  // namespace

command add_watch(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<watch_args>();
  CLI::App* sub = app.add_subcommand(
      "watch", "Run a training job (or attach to one) and say what bounds it, from outside");
  sub->add_option("--pid", args->pid, "watch this running process and its children");
  sub->add_option("--results", args->results,
                  "ceilings: a results.json, catalog:NAME or a gpubench.hardware/1 file");
  sub->add_option("--workload", args->workload,
                  "what the job trains (a workload name or file): gpubench size's rate for it "
                  "here, and with the watched limit lifted");
  sub->add_option("--interval", args->interval_s, "seconds between samples")
      ->check(CLI::Range(0.05, 3600.0));
  sub->add_option("--duration", args->duration_s, "stop watching after this many seconds")
      ->check(CLI::Range(0.05, 1e7));
  sub->add_option("--out", args->out, "folder for watch.jsonl, watch.json and watch.html");
  sub->add_option("command", args->command, "the job: -- CMD ARGS...");
  sub->positionals_at_end();
  return {sub, [args] { return watch_job(*args); }};
}

}  // namespace gpubench::app
