// The gpubench executable's commands. Each file under app/commands/ adds one to the command line
// (its flags bound to its own arguments) and says what it does when chosen; app/main.cpp lists
// them in one table. A new command is one file plus one row there.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpubench/core/exit_codes.hpp"

namespace gpubench::app {

// What every command may know of how gpubench was started.
struct command_line {
  std::vector<std::string> argv;
};

struct command {
  CLI::App* subcommand = nullptr;  // where CLI11 parsed its flags
  std::function<int()> run;        // runs it with what was parsed; returns the exit code
  // Its product is files (run's results.json): standard output is a summary, and a reader of it
  // that went away (EPIPE) does not fail the command. For every other command a write to
  // standard output that fails is exit 1.
  bool stdout_is_a_summary = false;
};

using command_adder = command (*)(CLI::App& app, const command_line& line);

command add_run(CLI::App& app, const command_line& line);
command add_list(CLI::App& app, const command_line& line);
command add_info(CLI::App& app, const command_line& line);
command add_size(CLI::App& app, const command_line& line);
command add_calibrate(CLI::App& app, const command_line& line);
command add_report(CLI::App& app, const command_line& line);
command add_compare(CLI::App& app, const command_line& line);
command add_validate(CLI::App& app, const command_line& line);
command add_fleet(CLI::App& app, const command_line& line);
command add_export(CLI::App& app, const command_line& line);
command add_watch(CLI::App& app, const command_line& line);
command add_help(CLI::App& app, const command_line& line);

// The names of gpubench's commands, in the order --help lists them.
[[nodiscard]] std::vector<std::string> command_names(const CLI::App& app);

// The refusal of a word that names no command: "expected a command (run, list, ...); did you
// mean 'size'?", for `gpubench siz` and `gpubench help siz`.
[[nodiscard]] std::string not_a_command(const CLI::App& app, const std::string& word);

// CLI11's Range for a number flag, refusing nan and infinities too (CLI::Range lets nan through:
// every comparison with it is false): "a number from 0.05 to 3600"; `whole`: "a whole number"
// (a count), so 2.5 is told the same way rather than by the conversion.
[[nodiscard]] CLI::Validator finite_range(double min, double max, bool whole = false);

// Hands what a command is done with to the process's exit, which returns its memory at once, as
// compilers do with their syntax trees: freeing a fleet's parsed results file and million rule
// outcomes piece by piece took a tenth of validate's time on 100,000 GPUs. For the last step of
// a command only, on its own thread; what is kept stays reachable, so leak checkers pass it.
template <class T>
void leave_to_exit(T&& value) {
  static auto* const kept = new std::vector<std::shared_ptr<void>>();  // never freed: the point
  kept->push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(value)));
}

// "a,b" "c" -> {"a", "b", "c"}: flags that take comma-separated lists and may repeat.
[[nodiscard]] std::vector<std::string> split_commas(const std::vector<std::string>& items);

// The arguments that name files that are there (results, workload files; not catalog:NAME): what
// an output must not be written over.
[[nodiscard]] std::vector<std::filesystem::path> input_files(
    const std::vector<std::string>& arguments);

}  // namespace gpubench::app
