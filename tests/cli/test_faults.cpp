// Faults during a run, provoked on the real binary: signals, a file size limit, a scratch folder
// that vanishes, an output folder gpubench may not write to (from the start or from the middle
// of a run), a results folder that already exists. Each must end in a clear skip or error with
// the rest of the suite run where it can, nothing measured lost and nothing left in the scratch
// folder. What gpubench did becomes the two fault tables of docs/reliability.md.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "doc_table.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The uid and gid the permission faults run as when the tests run as root (root may write
// anywhere, so a read-only folder would prove nothing): nobody/nogroup.
constexpr unsigned unprivileged_id = 65534;

struct fault_row {
  std::string fault;
  std::string provoked;
  std::string outcome;
};

// A scratch folder on the disk the tests run from (the temp folder may be tmpfs, where the
// storage benchmarks are skipped), removed at scope exit.
struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& name)
      : path(fs::current_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The results file once it holds at least `count` results (waits up to 60 s); null if never.
json wait_for_results(const fs::path& file, std::size_t count) {
  for (int i = 0; i < 1200; ++i) {
    try {
      json doc = json::parse(read_file(file));
      if (doc.at("results").size() >= count) return doc;
    } catch (const json::exception&) {
      // not written yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return nullptr;
}

std::map<std::string, json> results_by_id(const json& doc) {
  std::map<std::string, json> by_id;
  for (const auto& r : doc.at("results")) by_id[r.at("id").get<std::string>()] = r;
  return by_id;
}

constexpr fs::perms readable_by_all = fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec;

// A copy of the binary and its configs under `root` (made readable by all), so the unprivileged
// user can run it wherever the build lives; returns the argv prefix that runs it as that user
// (or as the current user, when that is not root).
std::vector<std::string> unprivileged_gpubench(const fs::path& root) {
  fs::permissions(root, readable_by_all);
  const fs::path dir = root / "install";
  fs::create_directories(dir / "bin");
  fs::copy_file(GPUBENCH_EXE, dir / "bin" / "gpubench");
  fs::copy(fs::path(GPUBENCH_SOURCE_DIR) / "configs", dir / "configs", fs::copy_options::recursive);
  const std::string exe = (dir / "bin" / "gpubench").string();
  if (::geteuid() != 0) return {exe};
  const std::string id = std::to_string(unprivileged_id);
  return {"/usr/bin/setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", exe};
}

// A folder the unprivileged user owns.
fs::path owned_folder(const fs::path& path) {
  fs::create_directories(path);
  if (::geteuid() == 0) REQUIRE(::chown(path.c_str(), unprivileged_id, unprivileged_id) == 0);
  return path;
}

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const std::vector<std::string> four_membw_cases{
    "--suite", "quick", "--only", "host.membw", "--axis", "host.membw:array_bytes=16MiB,48MiB"};

// Starts a run of one nvme.seq_read case with a 2 GiB test file in `scratch` and returns once
// the file has appeared (it is being written).
pid_t start_run_writing_a_test_file(const fs::path& scratch, const fs::path& dir) {
  const pid_t pid =
      start_gpubench({"run", "--only", "nvme.seq_read", "--scratch", scratch.string(), "--axis",
                      "nvme.seq_read:file_bytes=2GiB", "--out", (dir / "o").string()},
                     dir);
  bool file_seen = false;
  for (int i = 0; i < 3000 && !file_seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    file_seen = !fs::is_empty(scratch);
  }
  REQUIRE(file_seen);
  return pid;
}

// `gpubench run --out OUT` with the four host.membw cases, as a shell command line. The binary
// is "$0" unless named: run_program's `bash -c LINE BINARY` passes it so.
std::string four_case_run_command(const fs::path& out, const std::string& binary = "\"$0\"") {
  std::string command = binary + " run --out " + out.string();
  for (const auto& a : four_membw_cases) command += " '" + a + "'";
  return command;
}

// The four host.membw cases, stopped by `signal` after the first: exit 3 and a valid results
// file marked interrupted that keeps the finished cases and drops the one cut short.
void stopped_after_the_first_case(int signal) {
  INFO("signal " << signal);
  temp_dir dir;
  const fs::path out = dir.path / "out";
  const pid_t pid =
      start_gpubench(with({"run", "--out", out.string()}, four_membw_cases), dir.path);
  REQUIRE(wait_for_results(out / "results.json", 1) != nullptr);
  kill(pid, signal);
  CHECK(wait_for(pid) == 3);
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["meta"]["interrupted"] == true);
  CHECK_FALSE(doc["results"].empty());
  CHECK(doc["results"].size() < 4);
  for (const auto& r : doc["results"]) CHECK(r["status"] == "ok");
}

fault_row sigint_during_a_run() {
  stopped_after_the_first_case(SIGINT);
  return {"SIGINT during a run", "`kill -INT` after the first of four host.membw cases",
          "exit 3; results.json valid, `meta.interrupted` true, every finished case kept, the "
          "case cut short dropped"};
}

fault_row sighup_and_sigquit_during_a_run() {
  stopped_after_the_first_case(SIGHUP);
  stopped_after_the_first_case(SIGQUIT);
  return {"SIGHUP (the ssh session closed) or SIGQUIT during a run",
          "`kill -HUP`, and `kill -QUIT`, after the first of four host.membw cases",
          "as SIGINT: exit 3; results.json valid, `meta.interrupted` true, every finished case "
          "kept"};
}

// Seconds from `signal` to the end of `pid`; the exit code in `code`.
double seconds_to_stop(pid_t pid, int signal, int& code) {
  const auto start = std::chrono::steady_clock::now();
  kill(pid, signal);
  code = wait_for(pid);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

fault_row sigint_inside_a_long_augment_case() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  // 8192x8192 images: making the 64-image corpus alone takes minutes on two cores.
  const pid_t pid = start_gpubench(
      {"run", "--only", "cpu.augment", "--axis", "cpu.augment:image_width=8192", "--axis",
       "cpu.augment:image_height=8192", "--axis", "cpu.augment:threads=2", "--out", out.string()},
      dir.path);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int code = 0;
  const double seconds = seconds_to_stop(pid, SIGINT, code);
  CHECK(code == 3);
  CHECK(seconds < 15);
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["meta"]["interrupted"] == true);
  CHECK(doc["results"].empty());  // the case cut short is not a measurement
  return {"SIGINT inside a long cpu.augment case",
          "`kill -INT` 3 s into one cpu.augment case of 8192x8192 images (minutes long)",
          "exit 3 within 15 s: the corpus, warm-up and timed loops poll the stop flag; the case "
          "cut short dropped, results.json marked interrupted"};
}

// The processes whose command line holds `needle` (cpu.dataloader's Python and its workers).
int processes_mentioning(const std::string& needle) {
  int found = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string cmdline = read_file(entry.path() / "cmdline");
    found += cmdline.find(needle) != std::string::npos;
  }
  return found;
}

fault_row sigint_inside_a_dataloader_case() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  // A stand-in python3 that has "torch" (its probe exits 0), starts two workers and never
  // answers, as one stuck importing torch on a slow disk would: the stop must not wait on it.
  const fs::path python = dir.path / "python3";
  write_file(python,
             "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nsleep 2999 & sleep 2998 & exec sleep 2997\n");
  fs::permissions(python, fs::perms::owner_all);
  const pid_t pid =
      start_gpubench({"run", "--only", "cpu.dataloader", "--axis", "cpu.dataloader:workers=2",
                      "--python", python.string(), "--out", out.string()},
                     dir.path);
  // Its "python" started: the corpus folder holds its log.
  std::string corpus;
  for (int i = 0; i < 3000 && corpus.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(out / "scratch", ec)) {
      if (fs::exists(entry.path() / "python_2.log")) corpus = entry.path().string();
    }
  }
  REQUIRE_FALSE(corpus.empty());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::string sleeper(
      "sleep\0"
      "299",
      9);  // /proc/PID/cmdline: NUL between arguments
  CHECK(processes_mentioning(sleeper) == 3);
  int code = 0;
  const double seconds = seconds_to_stop(pid, SIGINT, code);
  CHECK(code == 3);
  CHECK(seconds < 5);
  CHECK(processes_mentioning(sleeper) == 0);
  CHECK_FALSE(fs::exists(corpus));
  return {"SIGINT inside a cpu.dataloader case",
          "`kill -INT` while its Python (a stand-in that started two workers and never answers) "
          "runs",
          "exit 3 within 5 s: the Python process and its workers ended with their process group, "
          "the JPEG folder removed; the case cut short dropped"};
}

fault_row sigint_during_the_nvme_reads() {
  temp_dir dir;
  const scratch_dir scratch("scratch-reads");
  const fs::path out = dir.path / "o";
  const pid_t pid =
      start_gpubench({"run", "--only", "nvme.seq_read", "--scratch", scratch.path.string(),
                      "--axis", "nvme.seq_read:file_bytes=2GiB", "--out", out.string()},
                     dir.path);
  // The test file whole: the reads have begun (or are about to).
  bool written = false;
  for (int i = 0; i < 6000 && !written; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(scratch.path, ec)) {
      written = written || entry.file_size(ec) >= (std::uintmax_t{2} << 30);
    }
  }
  REQUIRE(written);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int code = 0;
  const double seconds = seconds_to_stop(pid, SIGINT, code);
  CHECK(code == 3);
  CHECK(seconds < 15);
  CHECK(fs::is_empty(scratch.path));
  return {"SIGINT while a long NVMe case reads",
          "`kill -INT` 1 s after the 2 GiB test file is whole",
          "exit 3 within 15 s: no more reads are queued, those in flight are drained; the test "
          "file removed"};
}

fault_row second_signal_stops_at_once() {
  temp_dir dir;
  const scratch_dir scratch("scratch-twice");
  const pid_t pid = start_run_writing_a_test_file(scratch.path, dir.path);
  kill(pid, SIGINT);
  int code = 0;
  const double seconds = seconds_to_stop(pid, SIGINT, code);
  CHECK(code == 3);
  CHECK(seconds < 5);
  CHECK(fs::is_empty(scratch.path));
  return {"a second SIGINT", "two `kill -INT` in a row while the 2 GiB test file is written",
          "exit 3 at once (the second signal does not wait for the case); the test file removed "
          "all the same (scratch files are registered for removal from the signal handler)"};
}

fault_row progress_reader_goes_away() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  const std::string command = four_case_run_command(out);
  const auto r = run_program({"/bin/bash", "-c",
                              command + " 2>&1 | head -1 > " + (dir.path / "first.log").string() +
                                  "; echo \"${PIPESTATUS[0]}\" > " + (dir.path / "rc").string(),
                              GPUBENCH_EXE});
  CHECK(r.exit_code == 0);
  CHECK(read_file(dir.path / "rc") == "0\n");
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["results"].size() == 4);
  // Stopped while nobody reads its output: still exit 3, still saved.
  const fs::path out2 = dir.path / "o2";
  const std::string command2 = four_case_run_command(out2);
  const pid_t shell = start_program(
      {"/bin/bash", "-c",
       command2 + " > >(head -c 1 > /dev/null) 2> >(head -c 1 > /dev/null) & echo $! > " +
           (dir.path / "pid").string() + "; wait $!; echo $? > " + (dir.path / "rc2").string(),
       GPUBENCH_EXE},
      dir.path, dir.path);
  REQUIRE(wait_for_results(out2 / "results.json", 1) != nullptr);
  kill(std::stoi(read_file(dir.path / "pid")), SIGINT);
  CHECK(wait_for(shell) == 0);
  CHECK(read_file(dir.path / "rc2") == "3\n");
  CHECK(json::parse(read_file(out2 / "results.json"))["meta"]["interrupted"] == true);
  return {"the reader of the progress goes away",
          "`run 2>&1 | head -1`; and SIGINT to a run whose stdout and stderr readers have exited",
          "every case still run and saved (a case is saved before it is printed; SIGPIPE does "
          "not end a run), exit 0; interrupted, exit 3 as always"};
}

fault_row standard_output_fails() {
  const std::string results = std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json";
  const auto full =
      run_program({"/bin/bash", "-c", "\"$0\" report \"$1\" > /dev/full", GPUBENCH_EXE, results});
  CHECK(full.exit_code == 1);
  CHECK(full.err == "gpubench: standard output: write failed (No space left on device)\n");
  const auto closed =
      run_program({"/bin/bash", "-c", "\"$0\" size --workload resnet50 --json >&-", GPUBENCH_EXE});
  CHECK(closed.exit_code == 1);
  CHECK_THAT(closed.err, Catch::Contains("standard output: write failed (Bad file descriptor)"));
  return {"standard output cannot be written",
          "`report RESULTS > /dev/full` (a full disk); `size --json >&-` (stdout closed)",
          "exit 1: \"" + md_cell(full.err.substr(0, full.err.size() - 1)) +
              "\" (or Bad file descriptor); a closed stdout is given /dev/null first, so no "
              "file gpubench opens takes its number"};
}

fault_row hostile_text_in_a_results_file() {
  temp_dir dir;
  json doc = json::parse(read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json"));
  // An OSC window title, a C1 CSI (as UTF-8) and a screen clear, where names are printed.
  doc["system"]["host"] = "node\x1b]0;owned\x07-1";
  doc["system"]["gpus"][0]["name"] = "NVIDIA H100\u009b2J";
  doc["system"]["cpu"]["model"] = "\x1b[2JEPYC";
  doc["results"].push_back(
      {{"id", "pcie.bidir"}, {"status", "skipped"}, {"reason", "=HYPERLINK(\"http://x\",\"y\")"}});
  const fs::path file = dir.path / "hostile.json";
  write_file(file, doc.dump());
  const fs::path csv = dir.path / "r.csv";
  std::string said;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate", file.string(), "--spec", "h100-sxm5-80gb"},
           {"report", file.string()},
           {"report", file.string(), "--csv", csv.string()},
           {"size", "--workload", "resnet50", "--hardware", file.string()},
           {"compare", file.string(), "catalog:dgx-h100"}}) {
    const auto r = run_gpubench(args);
    INFO(args[0] << ": " << r.out << r.err);
    CHECK(r.exit_code <= 1);  // validate may fail the fixture's figures; nothing else
    for (const std::string& text : {r.out, r.err}) {
      CHECK(text.find('\x1b') == std::string::npos);
      CHECK(text.find('\x07') == std::string::npos);
      CHECK(text.find("\xc2\x9b") == std::string::npos);
    }
    said += r.out;
  }
  CHECK_THAT(said, Catch::Contains("node\\x1b]0;owned\\x07-1"));
  // The spreadsheet sees text, not a formula.
  const std::string sheet = read_file(csv);
  CHECK_THAT(sheet, Catch::Contains("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""));
  CHECK(sheet.find(",=") == std::string::npos);
  return {"terminal escapes and formulas inside a results file",
          "a results file whose host, GPU and CPU names hold an OSC title, a C1 CSI and a screen "
          "clear, and a reason `=HYPERLINK(...)`; validate, report (stdout and --csv), size, "
          "compare",
          "control characters are printed as visible escapes (node\\x1b]0;owned\\x07-1) on "
          "stdout and stderr; the CSV cell is '=HYPERLINK(...), text to a spreadsheet (OWASP)"};
}

fault_row progress_on_a_dumb_terminal() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  const std::string command = four_case_run_command(out, std::string("'") + GPUBENCH_EXE + "'");
  const auto on_terminal = [&](const std::string& term) {
    // script(1) gives the run a pseudo-terminal; its output is what the terminal received.
    const fs::path typescript = dir.path / ("typescript-" + term);
    fs::remove_all(out);
    const auto r =
        run_program({"/usr/bin/script", "-qec", command, typescript.string()}, {"TERM=" + term});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    return read_file(typescript);
  };
  const std::string dumb = on_terminal("dumb");
  CHECK(dumb.find("\x1b[K") == std::string::npos);
  CHECK_THAT(dumb, Catch::Contains("[4/4] host.membw"));
  CHECK_THAT(on_terminal("xterm"), Catch::Contains("\r\x1b[K"));
  return {"progress on a terminal that cannot redraw",
          "`run` under script(1) with TERM=dumb, and with TERM=xterm",
          "TERM=dumb (or unset): one plain line per case, no escape sequences; a capable "
          "terminal gets its progress line redrawn in place"};
}

fault_row results_of_a_large_run() {
  temp_dir dir;
  json doc = json::parse(read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json"));
  json one = doc["results"][0];
  one["host"] = "@host@";
  one["rank"] = "@rank@";
  one["info"]["note"] = std::string(400, 'x');  // the info a many-rank sweep carries
  // The text is put together from one result's (a document of 100k results took most of a
  // minute to build under the sanitizers).
  const std::string pattern = one.dump(1);
  const std::size_t host_at = pattern.find("\"@host@\"");
  const std::size_t rank_at = pattern.find("\"@rank@\"");
  REQUIRE(host_at < rank_at);
  doc["results"] = json::array();
  std::string text = doc.dump(1);
  const std::string empty = "\"results\": []";
  const std::size_t results_at = text.find(empty) + empty.size() - 2;
  REQUIRE(text.find(empty) != std::string::npos);
  std::string results = "[\n";
  for (int i = 0; i < 100000; ++i) {
    if (i > 0) results += ",\n";
    results.append(pattern, 0, host_at);
    results += "\"node-" + std::to_string(i % 128) + "\"";
    results.append(pattern, host_at + 8, rank_at - host_at - 8);
    results += std::to_string(i % 1024);
    results.append(pattern, rank_at + 8, std::string::npos);
  }
  text.replace(results_at, 2, results + "\n]");
  const fs::path file = dir.path / "results.json";
  write_file(file, text);
  REQUIRE(fs::file_size(file) > (std::uintmax_t{64} << 20));
  const auto r = run_gpubench({"report", file.string(), "--csv", (dir.path / "r.csv").string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  return {"the results file of a large multi-rank run",
          "`report` on 100k results, indented as run writes them (over 64 MiB)",
          "read and reported (readers take up to 1 GiB; run writes compactly past that, and "
          "refuses to save, saying so, only past 1 GiB compact)"};
}

fault_row run_on_a_machine_without_gpus() {
  temp_dir dir;
  // ld.so lists every library it loads, dlopen()ed ones too.
  const auto r = run_gpubench(
      {"run", "--suite", "quick", "--only", "host.membw", "--axis", "host.membw:array_bytes=16MiB",
       "--axis", "host.membw:kernel=copy", "--out", (dir.path / "o").string()},
      dir.path, {"LD_DEBUG=files"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  const bool gpus_here = !doc["system"]["gpus"].empty();
  if (!gpus_here) {
    // libnccl alone is ~185 MB of address space; host benchmarks need none of it.
    CHECK_THAT(r.err, !Catch::Contains("libnccl.so"));
    CHECK(doc["meta"]["nccl"] == "");
  }
  return {"memory at start-up",
          "`run` of a host benchmark on a machine without GPUs, under `LD_DEBUG=files`",
          "libnccl is not mapped (it was, to record its version: ~185 MB of address space); a "
          "machine with GPUs loads it at discovery and records its version"};
}

fault_row sigterm_while_writing_the_test_file() {
  temp_dir dir;
  const scratch_dir scratch("scratch-term");
  const pid_t pid = start_run_writing_a_test_file(scratch.path, dir.path);
  kill(pid, SIGTERM);
  CHECK(wait_for(pid) == 3);
  CHECK(fs::is_empty(scratch.path));
  const json doc = json::parse(read_file(dir.path / "o" / "results.json"));
  CHECK(doc["meta"]["interrupted"] == true);
  return {"SIGTERM while the NVMe test file is written",
          "`kill -TERM` once the 2 GiB file appears in --scratch",
          "exit 3; the partly written test file removed, --scratch left empty; results.json "
          "valid and marked interrupted"};
}

fault_row file_size_limit() {
  temp_dir dir;
  const scratch_dir scratch("scratch-fsize");
  const fs::path out = dir.path / "o";
  // 32 MiB: the results and reports fit, the 256 MiB test file does not.
  const auto r = run_program(
      with({"/usr/bin/prlimit", "--fsize=33554432", GPUBENCH_EXE},
           {"run", "--suite", "quick", "--only", "nvme.seq_read,cpu.augment", "--scratch",
            scratch.path.string(), "--axis", "nvme.seq_read:file_bytes=256MiB", "--axis",
            "cpu.augment:threads=1", "--out", out.string()}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_empty(scratch.path));
  const auto by_id = results_by_id(json::parse(read_file(out / "results.json")));
  REQUIRE(by_id.count("nvme.seq_read") == 1);
  const json& nvme = by_id.at("nvme.seq_read");
  CHECK(nvme["status"] == "skipped");
  const std::string reason = nvme.value("reason", "");
  CHECK_THAT(reason, Catch::Contains("EFBIG") && Catch::Contains(scratch.path.string()));
  CHECK(by_id.at("cpu.augment")["status"] == "ok");
  return {"out of room while creating the NVMe test file",
          "`prlimit --fsize=32MiB` (a file size limit) with a 256 MiB test file",
          "exit 0; nvme.seq_read skipped: \"" +
              replace_all(reason, scratch.path.string(), "SCRATCH") +
              "\"; the partial file removed; cpu.augment after it measured"};
}

fault_row out_of_memory_reading_a_results_file() {
  temp_dir dir;
  const fs::path file = dir.path / "fleet.json";
  const auto made = run_program({"/usr/bin/python3",
                                 std::string(GPUBENCH_SOURCE_DIR) + "/tools/make_fleet_results.py",
                                 "800", file.string()});
  REQUIRE(made.exit_code == 0);
  // 40 MB of address space: gpubench starts in it, reading the 4.8 MB file does not fit. A
  // sanitizer build, whose shadow memory needs terabytes of it, does not start: checked in the
  // release tree only.
  const std::string limit = "--as=40000000";
  if (run_program({"/usr/bin/prlimit", limit, GPUBENCH_EXE, "--version"}).exit_code == 0) {
    const auto r = run_program({"/usr/bin/prlimit", limit, GPUBENCH_EXE, "report", file.string(),
                                "--md", (dir.path / "r.md").string()});
    CHECK(r.exit_code == 1);
    CHECK(r.err ==
          "gpubench: report: out of memory: the input is larger than this machine's memory (or "
          "the process's limit) allows\n");
  }
  return {"out of memory while reading a results file",
          "`prlimit --as=40MB` (an address-space limit) and `report` of a 4.8 MB results file of "
          "800 GPUs (tools/make_fleet_results.py)",
          "exit 1, one line: \"gpubench: report: out of memory: the input is larger than this "
          "machine's memory (or the process's limit) allows\"; it was std::terminate, as the "
          "JSON library's cleanup of the half-read file failed to allocate too"};
}

fault_row no_results_file_can_be_written() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  // 300 bytes: the folder's marker fits, results.json never does. Its output goes through a
  // pipe, which the limit does not cut.
  const std::string command = "/usr/bin/prlimit --fsize=300 " + four_case_run_command(out);
  const auto r =
      run_program({"/bin/bash", "-c", "set -o pipefail; " + command + " 2>&1 >/dev/null | cat >&2",
                   GPUBENCH_EXE});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_FALSE(fs::exists(out / "results.json"));
  CHECK_THAT(r.err, Catch::Contains("no results file was written") &&
                        Catch::Contains("the 4 results of this run are lost"));
  CHECK_THAT(r.err, !Catch::Contains("holds 0"));
  const std::string said = r.err.substr(r.err.find("gpubench: error: no results"));
  return {"no results file can be written at all",
          "`prlimit --fsize=300`: the results folder is claimed, results.json never fits",
          "every case still run; exit 1: \"" +
              md_cell(replace_all(said.substr(0, said.find('\n')), out.string(), "OUT")) + "\""};
}

fault_row scratch_folder_vanishes() {
  temp_dir dir;
  auto scratch = std::make_unique<scratch_dir>("scratch-gone");
  const std::string scratch_path = scratch->path.string();
  const fs::path out = dir.path / "o";
  const pid_t pid =
      start_gpubench(with({"run", "--scratch", scratch_path, "--out", out.string(), "--axis",
                           "nvme.*:file_bytes=64MiB", "--axis", "cpu.augment:threads=1"},
                          {"--suite", "quick", "--only", "host.membw,nvme.*,cpu.augment", "--axis",
                           "host.membw:array_bytes=16MiB,48MiB"}),
                     dir.path);
  // host.membw runs first; the folder goes while it does.
  REQUIRE(wait_for_results(out / "results.json", 1) != nullptr);
  scratch.reset();
  CHECK(wait_for(pid) == 1);
  const json doc = json::parse(read_file(out / "results.json"));
  const auto by_id = results_by_id(doc);
  std::string error;
  for (const char* id : {"nvme.seq_read", "nvme.rand_read"}) {
    INFO(id);
    REQUIRE(by_id.count(id) == 1);
    CHECK(by_id.at(id)["status"] == "failed");
    error = by_id.at(id).value("error", "");
    CHECK_THAT(error, Catch::Contains(scratch_path) && Catch::Contains("is gone"));
  }
  CHECK(by_id.at("host.membw")["status"] == "ok");
  CHECK(by_id.at("cpu.augment")["status"] == "ok");
  return {"the --scratch folder removed during the run",
          "`rm -r` of the folder while host.membw runs, before the NVMe benchmarks",
          "exit 1; each NVMe case failed: \"" + replace_all(error, scratch_path, "SCRATCH") +
              "\"; the cases before and after (host.membw, cpu.augment) measured"};
}

// Runs gpubench as the unprivileged user with `flag` naming a folder of another user (mode 0755:
// readable, not writable) and, unless the flag is --out, a results folder of its own; it must
// stop with exit 2 before anything runs, naming the flag.
fault_row refused_folder(const std::string& flag, const std::string& placeholder,
                         const std::vector<std::string>& other_args) {
  temp_dir dir;
  const auto gpubench = unprivileged_gpubench(dir.path);
  const fs::path theirs = dir.path / "theirs";
  fs::create_directories(theirs);
  fs::permissions(theirs, readable_by_all);
  if (::geteuid() != 0) fs::permissions(theirs, fs::perms::owner_write, fs::perm_options::remove);
  const fs::path out = owned_folder(dir.path / "o");
  std::vector<std::string> args = with({"run", flag, theirs.string()}, other_args);
  if (flag != "--out") args = with(args, {"--out", out.string()});
  const auto r = run_program(with(gpubench, args));
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains(flag + " " + theirs.string()));
  CHECK(fs::is_empty(theirs));
  CHECK(fs::is_empty(out));
  return {"a " + flag + " folder gpubench may not write to",
          flag + " a folder of another user (mode 0755), run as an unprivileged user",
          "exit 2 before anything runs: \"" +
              md_cell(replace_all(r.err, theirs.string(), placeholder)) + "\""};
}

fault_row input_in_a_folder_it_may_not_enter() {
  temp_dir dir;
  const auto gpubench = unprivileged_gpubench(dir.path);
  const fs::path locked = dir.path / "locked";
  fs::create_directories(locked);
  write_file(locked / "results.json",
             read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json"));
  fs::permissions(locked, fs::perms::owner_all);  // 0700, another user's
  if (::geteuid() != 0) fs::permissions(locked, fs::perms::owner_exec, fs::perm_options::remove);
  const auto r = run_program(with(gpubench, {"report", (locked / "results.json").string()}));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("permission denied on a folder on its path"));
  return {"an input inside a folder gpubench may not enter",
          "`report` on a results file in another user's 0700 folder, run as an unprivileged user",
          "exit 2: \"" + md_cell(replace_all(r.err, locked.string(), "FOLDER")) + "\""};
}

fault_row output_folder_not_writable() {
  return refused_folder("--out", "OUT", four_membw_cases);
}

fault_row scratch_folder_not_writable() {
  return refused_folder("--scratch", "SCRATCH", {"--only", "nvme.seq_read"});
}

fault_row output_folder_turns_read_only() {
  temp_dir dir;
  const auto gpubench = unprivileged_gpubench(dir.path);
  const fs::path out = owned_folder(dir.path / "o");
  const pid_t pid = start_program(
      with(gpubench, with({"run", "--out", out.string()}, four_membw_cases)), dir.path, dir.path);
  REQUIRE(wait_for_results(out / "results.json", 1) != nullptr);
  fs::permissions(out, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  const int exit_code = wait_for(pid);
  const std::string err = read_file(dir.path / "stderr.log");
  INFO(err);
  CHECK(exit_code == 1);
  CHECK_THAT(err, Catch::Contains("results not saved") &&
                      Catch::Contains("the run goes on and tries again after each case"));
  CHECK_THAT(err, Catch::Contains("of the 4 results: the last write failed"));
  // Every case ran; the file on disk is the last whole one written.
  CHECK_THAT(read_file(dir.path / "stdout.log"), Catch::Contains("4 ok, 0 failed"));
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["results"].size() >= 1);
  CHECK(doc["results"].size() < 4);
  return {"the output folder turns read-only during the run",
          "`chmod a-w` on the results folder after the first of four cases (unprivileged user)",
          "a warning, every case still run; exit 1 naming how many results the file holds; "
          "results.json stays the last whole file written (writes are atomic)"};
}

fault_row earlier_results_folder() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  const std::vector<std::string> small{"--suite", "quick",
                                       "--only",  "host.membw",
                                       "--axis",  "host.membw:array_bytes=16MiB",
                                       "--axis",  "host.membw:kernel=copy"};
  REQUIRE(run_gpubench(with({"run", "--out", out.string()}, small)).exit_code == 0);
  const std::string before = read_file(out / "results.json");
  const auto again = run_gpubench(with({"run", "--out", out.string()}, small));
  CHECK(again.exit_code == 2);
  CHECK(read_file(out / "results.json") == before);
  // Without --out, each run makes a new folder under gpubench-results/.
  REQUIRE(run_gpubench(with({"run"}, small), dir.path).exit_code == 0);
  REQUIRE(run_gpubench(with({"run"}, small), dir.path).exit_code == 0);
  std::size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(dir.path / "gpubench-results")) {
    folders += fs::exists(entry.path() / "results.json") ? 1 : 0;
  }
  CHECK(folders == 2);
  return {"a results folder from an earlier run",
          "--out a folder holding results.json; two runs without --out",
          "exit 2, the earlier file untouched: \"" +
              md_cell(replace_all(again.err, out.string(), "OUT")) +
              "\"; without --out each run gets its own new folder"};
}

fault_row two_runs_one_folder() {
  temp_dir dir;
  const fs::path out = dir.path / "o";
  const auto args = with({"run", "--out", out.string()}, four_membw_cases);
  fs::create_directories(dir.path / "a");
  fs::create_directories(dir.path / "b");
  const pid_t first = start_gpubench(args, dir.path / "a");
  const pid_t second = start_gpubench(args, dir.path / "b");
  std::vector<int> codes{wait_for(first), wait_for(second)};
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector<int>{0, 2});
  const std::string both_err =
      read_file(dir.path / "a" / "stderr.log") + read_file(dir.path / "b" / "stderr.log");
  // The winner's four results, whole: nothing of the other run mixed in or written over them.
  const json doc = json::parse(read_file(out / "results.json"));
  CHECK(doc["results"].size() == 4);
  CHECK_THAT(both_err, Catch::Contains("--out " + out.string() + ": expected a "));
  return {"two runs given the same --out at the same moment",
          "two `run --out O` started together (four host.membw cases each)",
          "one runs (exit 0, its four results in O/results.json); the other stops before its "
          "first case, exit 2: \"--out O: expected a folder no other run is using; gpubench run "
          "(pid N on HOST, started T) is writing to it\" (or, if the first has saved already, "
          "\"it holds an earlier results.json\")"};
}

fault_row output_folder_of_the_user() {
  temp_dir dir;
  const fs::path mine = dir.path / "mine";
  fs::create_directories(mine / "elsewhere");
  write_file(mine / "report.html", "<p>my notes</p>");
  const auto r = run_gpubench(with({"run", "--out", mine.string()}, four_membw_cases));
  CHECK(r.exit_code == 2);
  CHECK(read_file(mine / "report.html") == "<p>my notes</p>");
  CHECK_FALSE(fs::exists(mine / ".gpubench-run"));
  // A scratch symlink would have had the scratch files written wherever it points.
  const fs::path linked = dir.path / "linked";
  fs::create_directories(linked);
  fs::create_directory_symlink(mine / "elsewhere", linked / "scratch");
  const auto l = run_gpubench({"run", "--out", linked.string(), "--only", "nvme.seq_read"});
  CHECK(l.exit_code == 2);
  CHECK_THAT(l.err, Catch::Contains("it holds scratch, which gpubench did not make"));
  CHECK(fs::is_empty(mine / "elsewhere"));
  return {"an --out folder holding the user's files",
          "--out a folder with the user's report.html; --out a folder with a `scratch` symlink",
          "exit 2 before anything runs, the folder untouched: \"" +
              md_cell(replace_all(r.err, mine.string(), "OUT")) + "\""};
}

fault_row host_name_with_a_path_in_it() {
  temp_dir dir;
  const auto r = run_gpubench({"run", "--suite", "quick", "--only", "host.membw", "--axis",
                               "host.membw:array_bytes=16MiB", "--axis", "host.membw:kernel=copy"},
                              dir.path, {"GPUBENCH_NODE_NAME=../../escaped"});
  CHECK(r.exit_code == 0);
  std::vector<std::string> made;
  for (const auto& entry : fs::directory_iterator(dir.path / "gpubench-results")) {
    made.push_back(entry.path().filename().string());
  }
  REQUIRE(made.size() == 1);
  CHECK_THAT(made[0], Catch::StartsWith(".._.._escaped-"));
  CHECK(fs::exists(dir.path / "gpubench-results" / made[0] / "results.json"));
  CHECK_FALSE(fs::exists(dir.path.parent_path() / "escaped"));
  return {"a host name with a path in it",
          "`GPUBENCH_NODE_NAME=../../escaped` (the name the results folder and a node's scratch "
          "folder are named after)",
          "the name is made safe for a folder name: gpubench-results/" +
              replace_all(made[0], made[0].substr(made[0].find("escaped-") + 8), "TIME") +
              "; nothing written outside gpubench-results/"};
}

// The rows of one of docs/reliability.md's fault tables, a scenario at a time.
void check_fault_table(const std::string& name, std::initializer_list<fault_row (*)()> scenarios) {
  std::string table = "| fault | how the test provokes it | what gpubench did |\n|---|---|---|\n";
  for (const auto& scenario : scenarios) {
    const fault_row row = scenario();
    table += "| " + md_cell(row.fault) + " | " + md_cell(row.provoked) + " | " +
             md_cell(row.outcome) + " |\n";
  }
  check_docs_table(name, "tests/cli/test_faults.cpp", table);
}

}  // namespace

// Two test cases of about half a minute each, so that CTest runs them side by side.
TEST_CASE(
    "faults while a run runs: signals and the terminal end in a clear skip or error, as "
    "docs/reliability.md lists",
    "[cli][reliability][slow]") {
  check_fault_table("fault", {sigint_during_a_run, sighup_and_sigquit_during_a_run,
                              sigint_inside_a_long_augment_case, sigint_inside_a_dataloader_case,
                              sigint_during_the_nvme_reads, second_signal_stops_at_once,
                              sigterm_while_writing_the_test_file, progress_reader_goes_away,
                              standard_output_fails, progress_on_a_dumb_terminal});
}

TEST_CASE(
    "faults in files and folders end in a clear skip or error, keep what was measured, as "
    "docs/reliability.md lists",
    "[cli][reliability][slow]") {
  check_fault_table(
      "file fault",
      {hostile_text_in_a_results_file, results_of_a_large_run, input_in_a_folder_it_may_not_enter,
       no_results_file_can_be_written, out_of_memory_reading_a_results_file,
       run_on_a_machine_without_gpus, file_size_limit, scratch_folder_vanishes,
       scratch_folder_not_writable, output_folder_not_writable, output_folder_turns_read_only,
       earlier_results_folder, two_runs_one_folder, output_folder_of_the_user,
       host_name_with_a_path_in_it});
}
