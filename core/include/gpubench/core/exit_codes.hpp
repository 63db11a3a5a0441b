// The exit codes of every gpubench command (README, "Commands"). Only main() exits.
#pragma once

namespace gpubench {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,      // a benchmark failed (verification included), or validate found a failure
  exit_bad_input = 2,    // bad usage or bad input
  exit_interrupted = 3,  // SIGINT, SIGTERM, SIGHUP, SIGQUIT; partial results kept
};

}  // namespace gpubench
