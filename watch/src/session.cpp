// gpubench watch: runs a training job (or attaches to one), samples it and its machine from
// outside each interval, and says what bounds it (docs/watch.md). The job is never harmed: if
// the watcher fails, the job runs on and its exit code is still returned.
#include "gpubench/watch/session.hpp"
#include "gpubench/core/json.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/exit_codes.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/watch/page.hpp"
#include "gpubench/watch/prediction.hpp"
#include "gpubench/watch/sampler.hpp"
#include "gpubench/watch/verdict.hpp"

namespace gpubench::watch {

namespace {

// The job's process group, for the signal handler (a handler can reach nothing else).
std::atomic<pid_t> job_group{0};
constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

extern "C" void forward_signal(int sig) {
  const pid_t group = job_group.load();
  if (group > 0) kill(-group, sig);
}

// Attached (--pid): a stop signal ends the watch, not the process watched; the summary is
// still written, and watch exits 128 + the signal.
std::atomic<int> stop_signal{0};
extern "C" void stop_watching(int sig) {
  stop_signal.store(sig);
}

// A terminal whose foreground watch holds, handed to the job as if watch were not there: the
// job reads it (input(), pdb, a password prompt) and Ctrl-C and Ctrl-Z reach the job's group.
// watch follows the job's stops: it takes the terminal back and stops itself, so the shell sees
// a stopped job; continued (fg or bg), it hands the terminal back if it is in front and
// continues the job. Without such a terminal (a script, CI, --pid) nothing changes hands.
class terminal_foreground {
 public:
  terminal_foreground() {
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
      if (isatty(fd) == 1 && tcgetpgrp(fd) == getpgrp()) {
        tty_ = fd;
        break;
      }
    }
    // In the background, watch still writes its status line and moves the terminal.
    if (tty_ >= 0) std::signal(SIGTTOU, SIG_IGN);
  }
  terminal_foreground(const terminal_foreground&) = delete;
  terminal_foreground& operator=(const terminal_foreground&) = delete;
  ~terminal_foreground() { take_back(); }

  [[nodiscard]] bool held() const { return tty_ >= 0; }
  // In the job, after fork: its own group in front, and the job-control signals a shell gives.
  void give_to_this_process() const {
    if (tty_ < 0) return;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    sigset_t was;
    sigprocmask(SIG_BLOCK, &block, &was);
    tcsetpgrp(tty_, getpid());
    sigprocmask(SIG_SETMASK, &was, nullptr);
    for (const int sig : {SIGTTOU, SIGTTIN, SIGTSTP}) std::signal(sig, SIG_DFL);
  }
  void give_to(pid_t group) const {
    if (tty_ >= 0) tcsetpgrp(tty_, group);
  }
  void take_back() const {
    if (tty_ >= 0) tcsetpgrp(tty_, getpgrp());
  }
  // The job stopped (Ctrl-Z, or SIGTTIN in the background): stop with it until continued.
  void follow_stop(pid_t group) const {
    take_back();
    kill(getpid(), SIGSTOP);
    if (tcgetpgrp(tty_) == getpgrp()) give_to(group);
    kill(-group, SIGCONT);
  }

 private:
  int tty_ = -1;
};

// waitpid for a job watch started: its status once it ended; its stops followed on a terminal.
std::optional<int> wait_job(pid_t job, const terminal_foreground& terminal, bool block) {
  const int flags = (block ? 0 : WNOHANG) | (terminal.held() ? WUNTRACED : 0);
  while (true) {
    int status = 0;
    const pid_t got = waitpid(job, &status, flags);
    if (got < 0 && errno == EINTR) continue;
    if (got != job) return std::nullopt;
    if (!WIFSTOPPED(status)) return status;
    terminal.follow_stop(job);
    if (!block) return std::nullopt;
  }
}

// The job runs in its own process group, so a signal sent to the watcher reaches it once, from
// here, with its DataLoader workers (as a terminal's Ctrl-C reaches a foreground group).
pid_t start_job(const std::vector<std::string>& command, const terminal_foreground& terminal) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    terminal.give_to_this_process();
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
  terminal.give_to(pid);
  close(ready[1]);
  int err = 0;
  const bool failed = read(ready[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err);
  close(ready[0]);
  if (failed) {
    waitpid(pid, nullptr, 0);
    terminal.take_back();
    throw input_error("--: cannot run '" + command.front() + "': " + strerror(err));
  }
  return pid;
}

// A job's exit code as a shell gives it: its own, or 128 + the signal that ended it.
int exit_code_of_job(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string status_line(const interval& sample) {
  const job_load& job = sample.job;
  std::string line = "watch " + format_number(sample.t) + " s: " + std::to_string(job.processes) +
                     " processes, " + format_number(job.cpu_cores_used) + "/" +
                     format_number(job.cpu_cores_allowed) + " cores, read " +
                     format_number(job.read_GBps) + " GB/s";
  for (const gpu_load& g : sample.gpus) {
    if (g.used_by_job() && g.utilization_percent) {
      line +=
          ", GPU" + std::to_string(g.index) + " " + std::to_string(*g.utilization_percent) + "%";
    }
  }
  return line;
}

// Seconds since the watch began, on the steady clock.
class watch_clock {
 public:
  [[nodiscard]] double now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// What the watcher gathered, and how the job ended.
struct watched {
  std::vector<interval> samples;
  std::vector<std::string> errors;  // the watcher's own: the job runs on whatever they are
  std::optional<int> job_status;    // waitpid's status of a job it started
  double sampling_cpu_s = 0;        // the watcher's CPU time while it sampled
};

double cpu_seconds_of_this_process() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Samples `root` every interval until it ends (or --duration passes), each interval a line of
// watch.jsonl; without --results, the catalog entry of the GPUs NVML names gives `machine`.
watched sample_job(const options& args, pid_t root, const watch_clock& clock, std::ofstream& lines,
                   std::optional<machine_figures>& machine, const terminal_foreground* terminal) {
  watched w;
  const bool live = static_cast<bool>(args.terminal_control);
  const std::uint64_t attached_start = args.pid ? start_ticks_of(root) : 0;
  bool lines_failed = false;
  const auto control = [&](const char* sequence) {
    std::cerr << std::flush;
    args.terminal_control(sequence);
  };
  try {
    sampler sampler(root);
    if (!sampler.gpu_why_not().empty()) w.errors.push_back("no GPUs: " + sampler.gpu_why_not());
    const double cpu_start = cpu_seconds_of_this_process();
    snapshot previous = sampler.take(clock.now_s());
    if (!machine) machine = catalog_figures(previous.gpus);
    const double allowed = sampler.allowed_cores();
    w.sampling_cpu_s += cpu_seconds_of_this_process() - cpu_start;
    while (true) {
      // Sleep until the next sample, waking early when the job ends.
      const double next = previous.t + args.interval_s;
      bool ended = false;
      while (true) {
        if (!args.pid) {
          w.job_status = wait_job(root, *terminal, false);
          ended = w.job_status.has_value();
        } else {
          ended = has_ended(root, attached_start);
        }
        if (ended || stop_signal.load() != 0 || clock.now_s() >= next) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max<long>(
            1, std::min<long>(50, static_cast<long>((next - clock.now_s()) * 1000)))));
      }
      if (ended || stop_signal.load() != 0 ||
          (args.duration_s && clock.now_s() >= *args.duration_s)) {
        break;
      }
      const double cpu_before = cpu_seconds_of_this_process();
      snapshot current = sampler.take(clock.now_s());
      interval sample = interval_sample(previous, current, allowed);
      w.sampling_cpu_s += cpu_seconds_of_this_process() - cpu_before;
      errno = 0;
      lines << json_text(json(sample)) << "\n" << std::flush;
      if (!lines && !lines_failed) {
        // A full disk: said at once and in watch.json, and sampling goes on in memory.
        lines_failed = true;
        const std::string why = errno != 0 ? std::strerror(errno) : "the write failed";
        w.errors.push_back("watch.jsonl: could not write sample " +
                           std::to_string(w.samples.size() + 1) + " or any after it (" + why +
                           "); the samples are kept in memory for watch.json");
        std::cerr << "gpubench: watch: " << w.errors.back() << "\n";
      }
      if (live) {
        control("\r\033[K");
        std::cerr << status_line(sample) << std::flush;
      }
      w.samples.push_back(std::move(sample));
      previous = std::move(current);
    }
  } catch (const std::exception& e) {
    // The job runs on; what was sampled is kept.
    w.errors.push_back(std::string("the watcher stopped sampling: ") + e.what());
  }
  if (live) control("\r\033[K");
  if (!args.pid && !w.job_status && !args.duration_s) {
    w.job_status = wait_job(root, *terminal, true);
  }
  if (terminal != nullptr) terminal->take_back();
  return w;
}

// watch.json: what was watched, the machine's ceilings, the typical interval, the verdict and
// gpubench size's prediction for the job.
json summary_document(const options& args, const watched& w, double wall_s, const ceilings& limits,
                      const summary& typical, const verdict& v, const json& prediction) {
  json doc = {{"schema", watch_schema}, {"kind", "summary"}};
  if (args.pid) {
    doc["pid"] = *args.pid;
  } else {
    doc["command"] = args.command;
  }
  doc["interval_s"] = args.interval_s;
  doc["results"] = args.results ? json(*args.results) : json();
  doc["job_exit_code"] = json();  // attached, or still running at --duration
  if (w.job_status) doc["job_exit_code"] = exit_code_of_job(*w.job_status);
  doc["watcher"] = {{"sampling_cpu_s", w.sampling_cpu_s},
                    {"cpu_percent_of_one_core", wall_s > 0 ? 100 * w.sampling_cpu_s / wall_s : 0.0},
                    {"errors", w.errors}};
  doc["ceilings"] = to_json(limits);
  doc["summary"] = to_json(typical);
  doc["verdict"] = to_json(v);
  doc["prediction"] = prediction;  // null without --workload
  return doc;
}

}  // namespace

int watch_job(const options& args) {
  if (args.command.empty() == !args.pid) {
    throw input_error(args.pid ? "--pid: give a PID or a command after --, not both"
                               : "--: expected a command to run (gpubench watch -- CMD ARGS...) "
                                 "or --pid PID");
  }
  if (args.pid) {
    if (const auto why = why_not_watchable(*args.pid)) throw input_error("--pid: " + *why);
  }
  // Bad --results or --workload: exit 2 before the job starts.
  std::optional<machine_figures> machine;
  if (args.results) machine = machine_figures{model::load_hardware(*args.results), *args.results};
  std::optional<model::workload> workload;
  if (args.workload) workload = model::load_workload(*args.workload);
  // The run's rules (core/output_file): a new, empty or unfinished folder of gpubench's own,
  // held for the whole watch, so a planted link is refused and two watches never share one.
  constexpr folder_use watch_use{
      .finished = "watch.json", .in_progress = "watch.jsonl", .writer = "gpubench watch"};
  const claimed_folder claim =
      args.out.empty()
          ? claim_new_folder("gpubench-watch", "watch-" + folder_timestamp(), watch_use)
          : claim_results_folder(args.out, "--out " + args.out, watch_use);
  const std::filesystem::path& out = claim.path();

  pid_t root = 0;
  std::optional<terminal_foreground> terminal;
  if (!args.pid) terminal.emplace();
  if (args.pid) {
    root = *args.pid;
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) std::signal(sig, stop_watching);
  } else {
    for (const int sig : forwarded) std::signal(sig, forward_signal);
    root = start_job(args.command, *terminal);
    job_group = root;
  }
  const watch_clock clock;
  std::ofstream lines(out / "watch.jsonl");
  const watched w = sample_job(args, root, clock, lines, machine, terminal ? &*terminal : nullptr);

  const summary typical = summarize(w.samples);
  const ceilings limits = machine ? ceilings_of(machine->profile, machine->origin) : ceilings{};
  verdict v = judge(typical, limits);
  json prediction;
  if (workload) prediction = predict_for_job(*args.workload, *workload, machine, typical, v);
  const json doc = summary_document(args, w, clock.now_s(), limits, typical, v, prediction);
  // The last line names what holds the verdict: the file, or why there is none (a full disk).
  std::string where = (out / "watch.json").string();
  std::error_code ec;
  try {
    write_file_atomically(out / "watch.json", json_text(doc, 2) + "\n", at_symlink::replace);
    write_file_atomically(out / "watch.html", render_page(doc, w.samples), at_symlink::replace);
  } catch (const std::exception& e) {
    std::cerr << "gpubench: watch: " << e.what() << "\n";
    if (args.pid) return exit_failure;
    where = std::filesystem::exists(out / "watch.json", ec) ? where + " (watch.html not written)"
                                                            : "watch.json not written";
  }
  std::cerr << "gpubench watch: " << v.limiting_component << " ("
            << (v.evidence.empty() ? "" : v.evidence.front()) << "); " << where << "\n";
  if (const int sig = stop_signal.load(); sig != 0) return 128 + sig;
  return w.job_status ? exit_code_of_job(*w.job_status) : exit_ok;
}

}  // namespace gpubench::watch
