// The gpubench commands. Each returns the process exit code; only main() exits.
#pragma once

#include <string>
#include <vector>

namespace gpubench::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,      // a benchmark failed (verification included)
  exit_bad_input = 2,    // bad usage or bad input
  exit_interrupted = 3,  // SIGINT/SIGTERM; partial results kept
};

struct run_args {
  std::string suite = "full";
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::vector<std::string> axes;
  std::string out;
  std::string scratch;
  std::string gpus;
  bool skip_verify = false;
  double timeout_s = 300;
  std::vector<std::string> argv;
};

int run_command(const run_args& args);
int list_command(bool as_json);
int info_command(bool as_json);

}  // namespace gpubench::cli
