// gpubench watch: the command line; the watching itself is watch::watch_job (watch/).
#include "../command.hpp"
#include "../standard_streams.hpp"
#include "gpubench/watch/session.hpp"

namespace gpubench::app {

command add_watch(CLI::App& app, const command_line& /*line*/) {
  auto args = std::make_shared<watch::options>();
  CLI::App* sub = app.add_subcommand(
      "watch", "Run a training job (or attach to one) and say what bounds it, from outside");
  sub->add_option("--pid", args->pid, "watch this running process and its children");
  sub->add_option("--results", args->results,
                  "ceilings: a results.json, catalog:NAME or a gpubench.hardware/1 file");
  sub->add_option("--workload", args->workload,
                  "what the job trains (a workload name or file): gpubench size's rate for it "
                  "here, and with the watched limit lifted");
  sub->add_option("--interval", args->interval_s, "seconds between samples")
      ->check(finite_range(0.05, 3600.0));
  sub->add_option("--duration", args->duration_s, "stop watching after this many seconds")
      ->check(finite_range(0.05, 1e7));
  sub->add_option("--out", args->out,
                  "folder for watch.jsonl, watch.json and watch.html: new, empty or an unfinished "
                  "one of gpubench's (default: a new folder under gpubench-watch/)");
  sub->add_option("command", args->command, "the job: -- CMD ARGS...");
  sub->positionals_at_end();
  if (redrawable_terminal()) args->terminal_control = write_terminal_control;
  return {sub, [args] { return watch::watch_job(*args); }};
}

}  // namespace gpubench::app
