#include "process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpubench::testing {

namespace fs = std::filesystem;

namespace {
pid_t spawn_program(std::vector<std::string> argv_storage, const fs::path& cwd, const fs::path& out,
                    const fs::path& err, const std::vector<std::string>& env = {}) {
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0) _exit(127);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    for (const auto& setting : env) {
      const auto eq = setting.find('=');
      setenv(setting.substr(0, eq).c_str(), setting.substr(eq + 1).c_str(), 1);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

pid_t spawn(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& out,
            const fs::path& err, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{gpubench_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn_program(std::move(argv), cwd, out, err, env);
}
}  // namespace

std::string gpubench_path() {
  // The binary built beside the tests, unless GPUBENCH_TEST_EXE names another (a bundle carried to
  // a GPU machine, whose build tree is elsewhere).
  const char* chosen = std::getenv("GPUBENCH_TEST_EXE");
  return chosen != nullptr ? chosen : GPUBENCH_EXE;
}

process_result run_program(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  temp_dir logs;
  process_result r;
  r.exit_code =
      wait_for(spawn_program(argv, {}, logs.path / "stdout.log", logs.path / "stderr.log", env));
  r.out = read_file(logs.path / "stdout.log");
  r.err = read_file(logs.path / "stderr.log");
  return r;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

process_result run_gpubench(const std::vector<std::string>& args, const fs::path& cwd,
                            const std::vector<std::string>& env) {
  temp_dir logs;
  process_result r;
  r.exit_code = wait_for(spawn(args, cwd, logs.path / "stdout.log", logs.path / "stderr.log", env));
  r.out = read_file(logs.path / "stdout.log");
  r.err = read_file(logs.path / "stderr.log");
  return r;
}

pid_t start_gpubench(const std::vector<std::string>& args, const fs::path& log_dir) {
  return spawn(args, {}, log_dir / "stdout.log", log_dir / "stderr.log");
}

pid_t start_program(const std::vector<std::string>& argv, const fs::path& cwd,
                    const fs::path& log_dir) {
  return spawn_program(argv, cwd, log_dir / "stdout.log", log_dir / "stderr.log");
}

temp_dir::temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "gpubench-cli-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace gpubench::testing
