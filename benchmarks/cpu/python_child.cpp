#include "gpubench/benchmarks/cpu/python_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "gpubench/core/text.hpp"
#include "gpubench/harness/runner.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX names it nowhere else

namespace gpubench::python {

namespace fs = std::filesystem;

namespace {

// posix_spawn attributes for a child of gpubench: its own process group (a terminal's Ctrl-C
// reaches gpubench alone, and the group ends with it), default signals (gpubench ignores SIGPIPE
// and exec keeps an ignored disposition) and an empty signal mask.
class spawn_attributes {
 public:
  spawn_attributes() {
    posix_spawnattr_init(&attr_);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &defaults);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
  ~spawn_attributes() { posix_spawnattr_destroy(&attr_); }
  [[nodiscard]] const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_{};
};

class file_actions {
 public:
  file_actions() { posix_spawn_file_actions_init(&actions_); }
  file_actions(const file_actions&) = delete;
  file_actions& operator=(const file_actions&) = delete;
  ~file_actions() { posix_spawn_file_actions_destroy(&actions_); }
  [[nodiscard]] posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

pid_t spawn(const std::vector<std::string>& argv, file_actions& actions) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const spawn_attributes attr;
  pid_t pid = -1;
  const int error =
      posix_spawn(&pid, args.front(), actions.get(), attr.get(), args.data(), environ);
  if (error != 0) {
    throw std::runtime_error("cannot start " + argv.front() + ": " + std::strerror(error));
  }
  return pid;
}

// Whether `pid` has exited, without reaping it (its process group id stays taken meanwhile).
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// Waits up to `seconds` for `pid` to exit (not reaped).
bool wait_for_exit(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!has_exited(pid)) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Kills what is left of the child's group (worker processes), then reaps the child: its exit code.
int end_group(pid_t pid, double grace_s) {
  if (!wait_for_exit(pid, grace_s)) {
    ::killpg(pid, SIGTERM);
    if (!wait_for_exit(pid, 2.0)) ::killpg(pid, SIGKILL);
  }
  ::killpg(pid, SIGKILL);  // orphaned workers; the group id is ours until the reap below
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Whether `python` has torch, torchvision and PIL, without importing them.
bool has_torch(const fs::path& python) {
  file_actions actions;
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(actions.get(), 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(actions.get(), 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  try {
    pid = spawn({python.string(), "-c",
                 "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in "
                 "('torch', 'torchvision', 'PIL')) else 3)"},
                actions);
  } catch (const std::runtime_error&) {
    return false;
  }
  return end_group(pid, 30.0) == 0;
}

}  // namespace

search find_with_torch(const fs::path& given) {
  std::vector<fs::path> candidates;
  // Named (--python, else $GPUBENCH_PYTHON): that one alone, as a user who names an
  // interpreter expects; else every python3 on PATH.
  fs::path named = given;
  if (const char* env = std::getenv("GPUBENCH_PYTHON");
      named.empty() && env != nullptr && *env != '\0') {
    named = env;
  }
  if (!named.empty()) {
    candidates.push_back(named);
  } else {
    if (const char* path = std::getenv("PATH"); path != nullptr) {
      for (const std::string& dir : split(path, ':')) {
        if (!dir.empty()) candidates.push_back(fs::path(dir) / "python3");
      }
    }
  }
  search out;
  std::vector<fs::path> seen;
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec) || ::access(candidate.c_str(), X_OK) != 0) {
      if (!named.empty()) out.tried.push_back(candidate.string() + " (not an executable file)");
      continue;
    }
    const fs::path real = fs::canonical(candidate, ec);
    if (!ec && std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(real);
    out.tried.push_back(candidate.string());
    if (has_torch(candidate)) {
      out.found = candidate;
      return out;
    }
  }
  return out;
}

std::string not_found_reason(const search& s) {
  return "no python3 with torch and torchvision found (tried " +
         (s.tried.empty() ? std::string("no python3 on PATH") : join(s.tried, ", ")) + ")";
}

child::child(const std::vector<std::string>& argv, const fs::path& stderr_file)
    : stderr_file_(stderr_file) {
  int to[2] = {-1, -1};
  int from[2] = {-1, -1};
  if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0) {
    const int error = errno;
    for (const int fd : {to[0], to[1], from[0], from[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw std::runtime_error(std::string("cannot make pipes for python: ") + std::strerror(error));
  }
  file_actions actions;
  posix_spawn_file_actions_adddup2(actions.get(), to[0], 0);
  posix_spawn_file_actions_adddup2(actions.get(), from[1], 1);
  posix_spawn_file_actions_addopen(actions.get(), 2, stderr_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  try {
    pid_ = spawn(argv, actions);
  } catch (...) {
    for (const int fd : {to[0], to[1], from[0], from[1]}) ::close(fd);
    throw;
  }
  ::close(to[0]);
  ::close(from[1]);
  to_child_ = to[1];
  from_child_ = from[0];
}

child::~child() {
  if (to_child_ >= 0) ::close(to_child_);  // EOF: the script shuts its workers down and exits
  // A stop request does not wait on a round of batches: the group is ended at once.
  if (pid_ > 0) end_group(pid_, interrupt_requested() ? 0.2 : 10.0);
  if (from_child_ >= 0) ::close(from_child_);
}

void child::send_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(to_child_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("python stopped reading its commands" + stderr_tail());
    done += static_cast<std::size_t>(n);
  }
}

std::string child::read_line(double timeout_s, const char* during) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    stop_if_interrupted(during);
    if (std::chrono::steady_clock::now() >= end) {
      throw std::runtime_error(std::string("python gave no answer in ") + format_plain(timeout_s) +
                               " s " + during);
    }
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);  // short waits: a stop request is seen at once
    if (ready < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(std::string("python exited ") + during + stderr_tail());
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string child::stderr_tail() const {
  std::ifstream in(stderr_file_);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(printable(line));
  }
  if (lines.empty()) return "";
  const std::size_t first = lines.size() > 3 ? lines.size() - 3 : 0;
  std::vector<std::string> tail(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end());
  return ": " + join(tail, " | ");
}

}  // namespace gpubench::python
