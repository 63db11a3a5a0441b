// gpubench watch on real jobs: each job's kind of limit, its exit code, attaching, signals, and
// the GPU side through the stand-in NVML library. These run alone (RUN_SERIAL): a verdict about
// CPU or disk use must not depend on what other tests do on the machine at the same time.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>
#include "process.hpp"

using namespace gpubench::testing;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

json watched(const std::filesystem::path& out) {
  return json::parse(read_file(out / "watch.json"));
}

std::vector<json> sample_lines(const std::filesystem::path& out) {
  std::vector<json> lines;
  std::ifstream in(out / "watch.jsonl");
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

}  // namespace

TEST_CASE("watch: the project's own decode loop on every allowed core is CPU-bound",
          "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const std::string threads = std::to_string(std::thread::hardware_concurrency());
  const auto r =
      run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--", GPUBENCH_EXE, "run",
                    "--only", "cpu.augment", "--axis", "cpu.augment:threads=" + threads, "--out",
                    (dir.path / "results").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  CHECK(doc.at("schema") == "gpubench.watch/1");
  CHECK(doc.at("job_exit_code") == 0);
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  // Every core it could have: the allowance, less what anything else on the machine (CI's own
  // neighbours included) took from those cores.
  const json& summary = doc.at("summary");
  CHECK(summary.at("cpu_cores_available").get<double>() <=
        summary.at("cpu_cores_allowed").get<double>());
  CHECK(summary.at("cpu_cores_used").get<double>() >=
        0.8 * summary.at("cpu_cores_available").get<double>());
  const auto lines = sample_lines(out);
  REQUIRE(lines.size() >= 3);
  for (const json& line : lines) {
    CHECK(line.at("schema") == "gpubench.watch/1");
    CHECK(line.at("job").at("processes").get<int>() >= 1);
  }
  // The watcher's own cost is recorded.
  CHECK(doc.at("watcher").at("cpu_percent_of_one_core").get<double>() >= 0);
  const std::string page = read_file(out / "watch.html");
  CHECK(page.find("Verdict: cpu") != std::string::npos);
  CHECK(page.find("id=\"chart-cpu\"") != std::string::npos);
  // Standard error is a pipe here: no live status line, only the closing one.
  CHECK(r.err.find('\r') == std::string::npos);
}

// A job whose cores something else also wants: the job gets part of its allowance, the rest
// shows as taken by other processes, and the verdict still calls it CPU-bound and says why.
TEST_CASE("watch: a CPU-bound job sharing its cores with another process is told it is not alone",
          "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  std::string spin = "for i in $(seq " + std::to_string(cores) +
                     "); do timeout 3 sh -c 'while :; do :; done' & done; wait";
  // Outside the job: half as many spinning threads in this process.
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (unsigned i = 0; i < std::max(1U, cores / 2); ++i) {
    others.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const auto r =
      run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--", "sh", "-c", spin});
  stop = true;
  for (std::thread& t : others) t.join();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  const json& summary = doc.at("summary");
  INFO(doc.dump(1));
  CHECK(summary.at("cpu_cores_outside_job").get<double>() >= 0.2 * cores);
  CHECK(summary.at("cpu_cores_available").get<double>() <
        summary.at("cpu_cores_allowed").get<double>());
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  const std::string evidence = doc.at("verdict").at("evidence").dump();
  CHECK(evidence.find("its cores were shared: other processes ran") != std::string::npos);
  CHECK(doc.at("verdict").at("advice").dump().find("exclusive allocation") != std::string::npos);
  for (const json& line : sample_lines(out)) {
    CHECK(line.at("cpu").at("cpus").get<int>() >= 1);
  }
}

// What the H100 run showed a verdict must catch (docs/validation/gpu-h100-2026-11-24.md): a
// DataLoader with too few workers leaves most cores idle, yet each worker runs flat out. The
// job's first process waits on its child as a training loop waits on its worker; the worker is
// judged by the time it wanted a core, so a loaded machine that gives it part of one does not
// hide it.
TEST_CASE("watch: a worker process flat out while the job's first process waits is CPU-bound",
          "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const auto r = run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--", "sh",
                               "-c", "timeout 3 sh -c 'while :; do :; done'; exit 0"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  const json& summary = doc.at("summary");
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  const auto lines = sample_lines(out);
  REQUIRE(lines.size() >= 3);
  const json& busiest = lines[lines.size() / 2].at("job").at("busiest_threads").at(0);
  CHECK(busiest.at("name") == "sh");
  CHECK_FALSE(busiest.at("in_root").get<bool>());  // the child, not the job's first process
  const std::string text = doc.at("verdict").dump();
  CHECK(text.find("1 worker process of the training loop's sh (pid") != std::string::npos);
  CHECK(text.find("1 DataLoader worker feeds the loop; it is busy ") != std::string::npos);
  // The worker: the job's first process's child (timeout), with the shell it runs.
  const json& loader = summary.at("loader");
  CHECK(loader.at("workers") == 1);
  CHECK(loader.at("worker_busy").get<double>() >= 0.8);
  const json& job = lines[lines.size() / 2].at("job");
  REQUIRE(job.at("workers").size() == 1);
  CHECK(job.at("workers").at(0).at("name") == "timeout");
  CHECK(job.at("workers").at(0).at("parent") == job.at("main_processes").at(0).at("pid"));
  CHECK(read_file(out / "watch.html").find("id=\"chart-processes\"") != std::string::npos);
}

// Issue 40: a loop on a GPU that waits while its one worker gets part of a core, the rest of the
// machine busy with other processes. The worker never reaches 85% of a core, but it wants one
// all the time (running or waiting on a run queue): the verdict names the worker and says that
// no idle core is left for another, not "more cores, more workers".
TEST_CASE("watch: a loop waiting on one worker that shares its core is told about the worker",
          "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  // Outside the job: a spinning thread per core in this process.
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (unsigned i = 0; i < cores; ++i) {
    others.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  // The stand-in NVML puts the job's first process on GPU 0, busy 30% of the time.
  const auto r = run_gpubench(
      {"watch", "--interval", "0.5", "--out", out.string(), "--", "sh", "-c",
       "timeout 3 sh -c 'while :; do :; done' & wait"},
      {}, {std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR, "FAKE_NVML_UTILIZATION=30"});
  stop = true;
  for (std::thread& t : others) t.join();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  INFO(doc.dump(1));
  const json& loader = doc.at("summary").at("loader");
  CHECK(loader.at("workers") == 1);
  CHECK(loader.at("main_processes") == 1);
  CHECK(loader.at("worker_busy").get<double>() >= 0.8);
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  const std::string advice = doc.at("verdict").at("advice").dump();
  CHECK(advice.find("1 DataLoader worker feeds the loop; it is busy ") != std::string::npos);
  CHECK(advice.find("CPU data preparation bounds the job") == std::string::npos);
  CHECK(doc.at("verdict").at("evidence").dump().find("its GPUs ran kernels 30% of the time") !=
        std::string::npos);
  // The loop is the process on the GPU; its one child is the worker.
  const auto lines = sample_lines(out);
  REQUIRE(lines.size() >= 3);
  const json& job = lines[lines.size() / 2].at("job");
  CHECK(job.at("main_processes").at(0).at("pid") ==
        lines[lines.size() / 2].at("gpus").at(0).at("job_pids").at(0));
  CHECK(job.at("workers").size() == 1);
}

TEST_CASE("watch: a training loop bound by its own thread is CPU-bound, in the job's process",
          "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const auto r = run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--",
                               GPUBENCH_EXE, "run", "--only", "cpu.augment", "--axis",
                               "cpu.augment:threads=1", "--out", (dir.path / "results").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  // The thread is named where a core was left idle to the job; where other processes took the
  // rest (a loaded CI machine), every core it could have was busy, which the verdict says instead.
  const json& summary = doc.at("summary");
  if (summary.at("cpu_cores_available").get<double>() -
          summary.at("cpu_cores_used").get<double>() >=
      0.5) {
    CHECK(doc.at("verdict").dump().find("the job's own process runs a thread flat out") !=
          std::string::npos);
  }
}

namespace {

// A 512 MiB file for O_DIRECT reads, beside the build (tmpfs, the temp folder, has no
// O_DIRECT); nullopt, with a warning, where the build folder's file system has none either.
std::optional<std::filesystem::path> direct_read_file(const std::string& name) {
  const std::filesystem::path file = std::filesystem::path(GPUBENCH_BINARY_TESTS_DIR) / name;
  {
    std::ofstream f(file, std::ios::binary);
    std::vector<char> block(1 << 20, 'x');
    for (int i = 0; i < 512; ++i) f.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  const int fd = open(file.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) {
    std::filesystem::remove(file);
    WARN("skipped: the build folder's file system has no O_DIRECT");
    return std::nullopt;
  }
  close(fd);
  return file;
}

}  // namespace

TEST_CASE("watch: O_DIRECT reads of a large file are storage-bound", "[cli][watch]") {
  const auto direct = direct_read_file("watch-direct-read.bin");
  if (!direct) return;
  const std::filesystem::path& file = *direct;
  temp_dir dir;
  const auto out = dir.path / "w";
  const std::string read_it = "for i in 1 2 3 4 5 6; do dd if='" + file.string() +
                              "' of=/dev/null bs=1M iflag=direct status=none; done";
  const auto r = run_gpubench(
      {"watch", "--interval", "0.5", "--out", out.string(), "--", "sh", "-c", read_it});
  std::filesystem::remove(file);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  INFO(doc.dump(2));
  CHECK(doc.at("verdict").at("limiting_component") == "storage");
  CHECK(doc.at("summary").at("job_read_GBps").get<double>() > 0);
}

TEST_CASE(
    "watch: a sleeping job beside another process that saturates the disk is not "
    "storage-bound",
    "[cli][watch]") {
  const auto direct = direct_read_file("watch-other-reader.bin");
  if (!direct) return;
  const std::filesystem::path& file = *direct;
  temp_dir dir;
  // The other reader: not the job's child, so not the job's reads.
  const pid_t reader = start_program({"/bin/sh", "-c",
                                      "while :; do dd if='" + file.string() +
                                          "' of=/dev/null bs=1M iflag=direct status=none; done"},
                                     dir.path, dir.path);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto out = dir.path / "w";
  const auto r =
      run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--", "sleep", "3"});
  kill(reader, SIGKILL);
  (void)wait_for(reader);
  std::filesystem::remove(file);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  INFO(doc.dump(2));
  CHECK(doc.at("summary").at("job_read_GBps").get<double>() == 0);
  CHECK(doc.at("verdict").at("limiting_component") != "storage");
}

TEST_CASE("watch: an idle job is bound by nothing here, and says it sleeps", "[cli][watch]") {
  temp_dir dir;
  const auto out = dir.path / "w";
  const auto r =
      run_gpubench({"watch", "--interval", "0.5", "--out", out.string(), "--", "sleep", "2"});
  REQUIRE(r.exit_code == 0);
  const json doc = watched(out);
  CHECK(doc.at("verdict").at("limiting_component") == "none");
  CHECK(doc.at("verdict").at("evidence").dump().find("asleep") != std::string::npos);
}

TEST_CASE(
    "watch on a terminal: the job holds the foreground, reads the terminal, and Ctrl-Z stops it "
    "with watch until fg",
    "[cli][watch]") {
  temp_dir dir;
  const std::string exe = gpubench_path();
  const std::string out = (dir.path / "t").string();
  int terminal = -1;
  // watch as a shell starts it: the session's foreground process group on a terminal.
  const pid_t watcher = forkpty(&terminal, nullptr, nullptr, nullptr);
  REQUIRE(watcher >= 0);
  if (watcher == 0) {
    execl(exe.c_str(), exe.c_str(), "watch", "--interval", "0.2", "--out", out.c_str(), "--", "sh",
          "-c", "read line; echo \"got:$line\"", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Whatever fails below, nothing is left running: watch killed, and the terminal hung up,
  // which ends a job left in front of it or stopped behind it.
  struct cleanup {
    pid_t watcher;
    int terminal;
    bool reaped = false;
    ~cleanup() {
      if (!reaped) {
        kill(watcher, SIGKILL);
        waitpid(watcher, nullptr, 0);
      }
      close(terminal);
    }
  } guard{watcher, terminal};
  std::string shown;
  const auto drain = [&] {
    pollfd p{terminal, POLLIN, 0};
    char buffer[4096];
    while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0) {
      const ssize_t n = read(terminal, buffer, sizeof buffer);
      if (n <= 0) break;
      shown.append(buffer, static_cast<std::size_t>(n));
    }
  };
  // waitpid with a deadline, the terminal drained meanwhile; the status, or nullopt.
  const auto wait_watcher = [&](int flags, double seconds) -> std::optional<int> {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(watcher, &status, flags | WNOHANG) == watcher) return status;
      drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  drain();
  // Ctrl-Z reaches the job, which was reading; watch stops with it, as a shell would show.
  REQUIRE(write(terminal, "\x1a", 1) == 1);
  const auto stopped = wait_watcher(WUNTRACED, 10);
  REQUIRE(stopped);
  CHECK(WIFSTOPPED(*stopped));
  // fg: the shell continues watch, which gives the terminal back to the job and continues it;
  // the line typed then is the job's to read.
  REQUIRE(kill(watcher, SIGCONT) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(write(terminal, "hello\n", 6) == 6);
  const auto ended = wait_watcher(0, 20);
  guard.reaped = ended.has_value();
  drain();
  INFO(shown);
  REQUIRE(ended);
  CHECK(WIFEXITED(*ended));
  CHECK(WEXITSTATUS(*ended) == 0);
  CHECK(shown.find("got:hello") != std::string::npos);
  CHECK(watched(out).at("job_exit_code") == 0);
}

TEST_CASE("watch: returns the job's exit code, and 128 + the signal that ended it",
          "[cli][watch][parallel]") {
  temp_dir dir;
  const auto r = run_gpubench(
      {"watch", "--out", (dir.path / "a").string(), "--", "sh", "-c", "sleep 0.3; exit 3"});
  CHECK(r.exit_code == 3);
  CHECK(watched(dir.path / "a").at("job_exit_code") == 3);

  // SIGTERM to the watcher reaches the job (its whole process group) once.
  const pid_t watcher = start_gpubench(
      {"watch", "--out", (dir.path / "b").string(), "--", "sh", "-c", "sleep 30; exit 0"},
      dir.path);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  REQUIRE(kill(watcher, SIGTERM) == 0);
  CHECK(wait_for(watcher) == 128 + SIGTERM);
  CHECK(watched(dir.path / "b").at("job_exit_code") == 128 + SIGTERM);
}

TEST_CASE(
    "watch --out keeps run's rules: no planted link followed, no finished watch "
    "overwritten, a new folder by default",
    "[cli][watch][parallel]") {
  temp_dir dir;
  // A watch.jsonl planted as a link to a file of the user's: refused before the job starts.
  const fs::path planted = dir.path / "planted";
  fs::create_directories(planted);
  write_file(dir.path / "precious.txt", "precious\n");
  fs::create_symlink(dir.path / "precious.txt", planted / "watch.jsonl");
  auto r = run_gpubench({"watch", "--out", planted.string(), "--", "sh", "-c",
                         "touch " + (dir.path / "ran").string()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--out " + planted.string() +
                                    ": expected a new or empty folder, or one gpubench made; "
                                    "it holds watch.jsonl, which gpubench did not make"));
  CHECK(read_file(dir.path / "precious.txt") == "precious\n");
  CHECK_FALSE(fs::exists(dir.path / "ran"));

  // A finished watch's folder is not written over.
  const fs::path once = dir.path / "once";
  REQUIRE(run_gpubench({"watch", "--out", once.string(), "--", "true"}).exit_code == 0);
  const std::string first = read_file(once / "watch.json");
  r = run_gpubench({"watch", "--out", once.string(), "--", "true"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("it holds an earlier watch.json"));
  CHECK(read_file(once / "watch.json") == first);

  // No room for watch.json (a 300-byte file size limit): the last line says it was not written
  // rather than naming it.
  const fs::path full = dir.path / "full";
  r = run_program({"/bin/bash", "-c",
                   "/usr/bin/prlimit --fsize=300 \"$0\" watch --out \"$1\" -- true 2>&1 | cat >&2",
                   GPUBENCH_EXE, full.string()});
  CHECK_FALSE(fs::exists(full / "watch.json"));
  CHECK_THAT(r.err, Catch::EndsWith("; watch.json not written\n"));
  // The disk fills while the job runs (2 KB, a few samples): said when watch.jsonl stops taking
  // samples, not only at the end.
  const fs::path filling = dir.path / "filling";
  r = run_program({"/bin/bash", "-c",
                   "/usr/bin/prlimit --fsize=2000 \"$0\" watch --interval 0.1 --out \"$1\" -- "
                   "sleep 2 2>&1 | cat >&2",
                   GPUBENCH_EXE, filling.string()});
  CHECK(r.exit_code == 0);  // the job's
  CHECK_THAT(r.err, Catch::Contains("gpubench: watch: watch.jsonl: could not write sample "));
  CHECK_THAT(r.err, Catch::Contains(" or any after it (File too large); the samples are kept"));
  CHECK(fs::file_size(filling / "watch.jsonl") <= 2000);

  // Links planted as watch.json and watch.html while the job runs: replaced by the watch's own
  // files; what they point at is untouched.
  const fs::path victim = dir.path / "victim";
  fs::create_directories(victim);
  write_file(victim / "a.txt", "mine\n");
  write_file(victim / "b.txt", "mine too\n");
  const fs::path planting = dir.path / "planting";
  r = run_gpubench({"watch", "--out", planting.string(), "--", "sh", "-c",
                    "ln -s \"$0/a.txt\" \"$1/watch.json\" && ln -s \"$0/b.txt\" \"$1/watch.html\"",
                    victim.string(), planting.string()});
  CHECK(r.exit_code == 0);
  CHECK(read_file(victim / "a.txt") == "mine\n");
  CHECK(read_file(victim / "b.txt") == "mine too\n");
  CHECK(fs::is_regular_file(fs::symlink_status(planting / "watch.json")));
  CHECK(fs::is_regular_file(fs::symlink_status(planting / "watch.html")));
  CHECK(watched(planting).at("job_exit_code") == 0);

  // An argument that is not UTF-8 (a Latin-1 file name): both files written, the byte shown as
  // U+FFFD.
  const fs::path latin1 = dir.path / "latin1";
  r = run_gpubench({"watch", "--out", latin1.string(), "--", "sh", "-c", "true", "caf\xe9"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(read_file(latin1 / "watch.html"), Catch::Contains("caf\xef\xbf\xbd"));
  CHECK(watched(latin1).at("command").at(3) == "caf\xef\xbf\xbd");

  // On a terminal the status line is redrawn in place: the control bytes themselves, not the
  // printable escapes the rest of standard error gets.
  const fs::path typescript = dir.path / "typescript";
  r = run_program({"/usr/bin/script", "-qec",
                   std::string("'") + GPUBENCH_EXE + "' watch --interval 0.3 --out '" +
                       (dir.path / "tty").string() + "' -- sleep 1.5",
                   typescript.string()},
                  {"TERM=xterm"});
  CHECK(r.exit_code == 0);
  const std::string screen = read_file(typescript);
  CHECK_THAT(screen, Catch::Contains("\r\x1b[Kwatch "));
  CHECK(screen.find("\\x0d") == std::string::npos);

  // Without --out: a new folder under gpubench-watch/ each time.
  REQUIRE(run_gpubench({"watch", "--", "true"}, dir.path).exit_code == 0);
  REQUIRE(run_gpubench({"watch", "--", "true"}, dir.path).exit_code == 0);
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(dir.path / "gpubench-watch")) {
    CHECK(fs::exists(entry.path() / "watch.json"));
    ++folders;
  }
  CHECK(folders == 2);
}

TEST_CASE("watch --pid attaches to a running process and stops when it ends",
          "[cli][watch][parallel]") {
  temp_dir dir;
  const pid_t job = start_program({"/bin/sleep", "2"}, dir.path, dir.path);
  const auto out = dir.path / "w";
  const auto r = run_gpubench(
      {"watch", "--pid", std::to_string(job), "--interval", "0.5", "--out", out.string()});
  CHECK(wait_for(job) == 0);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const json doc = watched(out);
  CHECK(doc.at("pid") == job);
  CHECK(doc.at("job_exit_code").is_null());  // not our child: its status is its parent's
  CHECK(doc.at("summary").at("samples").get<int>() >= 1);

  // SIGTERM to an attached watch ends the watch, not the process: the summary is written and
  // watch exits 128 + 15.
  const pid_t long_job = start_program({"/bin/sleep", "30"}, dir.path, dir.path);
  const auto stopped = dir.path / "stopped";
  const pid_t watcher = start_gpubench(
      {"watch", "--pid", std::to_string(long_job), "--interval", "0.3", "--out", stopped.string()},
      dir.path);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  REQUIRE(kill(watcher, SIGTERM) == 0);
  CHECK(wait_for(watcher) == 128 + SIGTERM);
  CHECK(watched(stopped).at("summary").at("samples").get<int>() >= 1);
  CHECK(kill(long_job, 0) == 0);  // still running
  kill(long_job, SIGKILL);
  (void)wait_for(long_job);
}

TEST_CASE("watch: GPU counters through NVML (the stand-in library)", "[cli][watch][parallel]") {
  const std::string fake = std::string("LD_LIBRARY_PATH=") + GPUBENCH_FAKE_NVML_DIR;
  temp_dir dir;
  // GPU 0 busy 95% with the job's process on it: the GPU bounds the job.
  auto r = run_gpubench(
      {"watch", "--interval", "0.3", "--out", (dir.path / "busy").string(), "--", "sleep", "2"}, {},
      {fake, "FAKE_NVML_UTILIZATION=95"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json doc = watched(dir.path / "busy");
  CHECK(doc.at("verdict").at("limiting_component") == "gpu_compute");
  CHECK(doc.at("summary").at("job_gpus") == 1);
  CHECK(doc.at("summary").at("machine_gpus") == 2);
  const auto lines = sample_lines(dir.path / "busy");
  REQUIRE(!lines.empty());
  CHECK(!lines.back().at("gpus").at(0).at("job_pids").empty());
  CHECK(lines.back().at("gpus").at(1).at("job_pids").empty());

  // Half busy, receiving 50 of the catalog's 55 GB/s per GPU: PCIe bounds it.
  r = run_gpubench({"watch", "--interval", "0.3", "--results", "catalog:dgx-h100", "--out",
                    (dir.path / "pcie").string(), "--", "sleep", "2"},
                   {}, {fake, "FAKE_NVML_UTILIZATION=40", "FAKE_NVML_PCIE_RX_MBPS=50000"});
  REQUIRE(r.exit_code == 0);
  doc = watched(dir.path / "pcie");
  CHECK(doc.at("verdict").at("limiting_component") == "pcie");
  CHECK(doc.at("ceilings").at("pcie.h2d_GBps").at("basis") == "catalog");

  // NVLink at 400 GB/s each way on an H100 with no --results: 800 of the catalog's 900 GB/s
  // (both directions) for the GPU NVML names, so communication bounds it, marked catalog.
  r = run_gpubench(
      {"watch", "--interval", "0.3", "--out", (dir.path / "nvlink").string(), "--", "sleep", "2"},
      {},
      {fake, "FAKE_NVML_NAME=NVIDIA H100 80GB HBM3", "FAKE_NVML_UTILIZATION=40",
       "FAKE_NVML_NVLINK_GBPS=400"});
  REQUIRE(r.exit_code == 0);
  doc = watched(dir.path / "nvlink");
  CHECK(doc.at("verdict").at("limiting_component") == "communication");
  // The figure itself is checked against 800 with a tolerance below: a loaded runner delays a
  // sample by some milliseconds.
  const auto evidence = doc.at("verdict").at("evidence").at(0).get<std::string>();
  CHECK(evidence.rfind("NVLink moved ", 0) == 0);
  CHECK(evidence.find(" of 900 GB/s per GPU, both directions") != std::string::npos);
  CHECK(doc.at("summary").at("nvlink_GBps").get<double>() == Approx(800).epsilon(0.05));
  const json& nvlink = doc.at("ceilings").at("nvlink.bidir_GBps");
  CHECK(nvlink.at("value") == 900.0);
  CHECK(nvlink.at("basis") == "catalog");
  CHECK(nvlink.at("origin") == "catalog:h100-sxm5-80gb, matched to 'NVIDIA H100 80GB HBM3'");
  const auto nvlink_lines = sample_lines(dir.path / "nvlink");
  REQUIRE(!nvlink_lines.empty());
  CHECK(nvlink_lines.back().at("gpus").at(1).at("nvlink_rx_GBps").is_null());  // no NVLink
  CHECK(read_file(dir.path / "nvlink" / "watch.html").find("id=\"chart-nvlink\"") !=
        std::string::npos);

  // --workload: gpubench size's rate for the job's allocation on the GPU's catalog entry, and
  // with the watched limit (a worker's thread: cpu) doubled.
  r = run_gpubench({"watch", "--workload", "resnet50", "--interval", "0.3", "--out",
                    (dir.path / "predict").string(), "--", "sh", "-c",
                    "timeout 2 sh -c 'while :; do :; done'; exit 0"},
                   {}, {fake, "FAKE_NVML_NAME=NVIDIA H100 80GB HBM3", "FAKE_NVML_UTILIZATION=10"});
  REQUIRE(r.exit_code == 0);
  doc = watched(dir.path / "predict");
  CHECK(doc.at("verdict").at("limiting_component") == "cpu");
  const json& p = doc.at("prediction");
  INFO(p.dump());
  CHECK(p.at("workload") == "resnet50");
  CHECK(p.at("hardware") == "catalog:h100-sxm5-80gb, matched to 'NVIDIA H100 80GB HBM3'");
  CHECK(p.at("gpus") == 1);
  const int cores = p.at("cpu_cores").get<int>();
  CHECK(cores == static_cast<int>(doc.at("summary").at("cpu_cores_allowed").get<double>()));
  CHECK(p.at("predicted_samples_per_s").get<double>() > 0);
  CHECK(p.at("lifted").at("settings") == json::array({"cpu.cores=" + std::to_string(2 * cores)}));
  if (p.at("limiting_component") == "cpu") {  // more cores, more images, while cpu bounds it
    CHECK(p.at("lifted").at("predicted_samples_per_s").get<double>() >
          p.at("predicted_samples_per_s").get<double>());
  }
  CHECK(doc.at("verdict").at("advice").back().get<std::string>().rfind("gpubench size predicts ",
                                                                       0) == 0);
}

TEST_CASE("watch: bad input is exit 2 with one line, and the job is never started",
          "[cli][watch][parallel]") {
  temp_dir dir;
  const auto marker = dir.path / "ran";
  const std::string touch = "touch '" + marker.string() + "'";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"watch", "--interval", "0", "--", "sh", "-c", touch},
        std::vector<std::string>{"watch", "--results", "catalog:nosuch", "--", "sh", "-c", touch},
        std::vector<std::string>{"watch", "--workload", "nosuch", "--", "sh", "-c", touch},
        std::vector<std::string>{"watch"}, std::vector<std::string>{"watch", "--pid", "999999999"},
        std::vector<std::string>{"watch", "--", "/nonexistent/program"}}) {
    const auto r = run_gpubench(args, dir.path);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(!std::filesystem::exists(marker));
}
