// Runs the real gpubench binary and captures what it prints.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace gpubench::testing {

struct process_result {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// Runs GPUBENCH_EXE with the arguments in `cwd` (default: the current folder) and waits.
// `env` holds extra NAME=VALUE settings for the child.
process_result run_gpubench(const std::vector<std::string>& args,
                            const std::filesystem::path& cwd = {},
                            const std::vector<std::string>& env = {});

// The gpubench binary the tests run: the one built beside them, or GPUBENCH_TEST_EXE.
std::string gpubench_path();

// Runs any program (argv[0] a path) the same way: mpirun, for the multi-rank tests.
process_result run_program(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env = {});

// Starts it without waiting (stdout/stderr to files in `log_dir`); returns the pid.
pid_t start_gpubench(const std::vector<std::string>& args, const std::filesystem::path& log_dir);
// The same for any program, started in `cwd`.
pid_t start_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                    const std::filesystem::path& log_dir);
// Waits for a started process; returns its exit code, or -1 when a signal ended it.
int wait_for(pid_t pid);

// A fresh folder under the temp folder, removed with everything in it at scope exit.
struct temp_dir {
  std::filesystem::path path;
  temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir();
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);

}  // namespace gpubench::testing
