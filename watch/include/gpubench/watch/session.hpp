// gpubench watch as one call: what the command line asked for, and the run that answers it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::watch {

struct options {
  std::vector<std::string> command;     // the job to run (after --); empty with pid
  std::optional<int> pid;               // a running job to attach to
  std::optional<std::string> results;   // the machine's figures: results, catalog:NAME or profile
  std::optional<std::string> workload;  // what the job trains, for gpubench size's prediction
  double interval_s = 1.0;
  std::optional<double> duration_s;
  std::string out;  // empty: a new folder under gpubench-watch/
  // Set where standard error is a terminal that redraws: writes the status line's "\r\033[K"
  // past the filter that makes the rest of standard error safe for a terminal. Unset: no
  // status line, only the closing one.
  std::function<void(const char*)> terminal_control;
};

// Runs the job (or attaches to it), samples it until it ends or `duration_s` passes, and writes
// watch.jsonl, watch.json and watch.html into `out`. Returns the job's exit code (128 + signal
// for a signal), exit_ok where it was attached to or still runs. Throws input_error for bad
// input before the job starts.
[[nodiscard]] int watch_job(const options& o);

}  // namespace gpubench::watch
