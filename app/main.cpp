// gpubench: the one place that wires the harness, the benchmarks, the model, the reports and the
// acceptance checks together. Commands come from the table below (app/command.hpp).
#include <csignal>
#include <iostream>

#include "command.hpp"
#include "gpubench/build_info.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/text.hpp"

namespace gpubench::app {

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    for (auto& part : split(item, ',')) {
      if (!part.empty()) out.push_back(std::move(part));
    }
  }
  return out;
}

std::vector<std::filesystem::path> input_files(const std::vector<std::string>& arguments) {
  std::vector<std::filesystem::path> files;
  for (const auto& argument : split_commas(arguments)) {
    std::error_code ec;
    if (std::filesystem::exists(argument, ec)) files.emplace_back(argument);
  }
  return files;
}

namespace {
// Every command, in the order `gpubench --help` lists them.
constexpr command_adder commands[] = {add_run,       add_list,   add_info,    add_size,
                                      add_calibrate, add_report, add_compare, add_validate};
}  // namespace

}  // namespace gpubench::app

int main(int argc, char** argv) {
  using namespace gpubench;
  // Past a file size limit (ulimit -f) write() then fails with EFBIG, which the benchmark at hand
  // reports, instead of the signal killing the whole run.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App cli{"gpubench: benchmarks and sizing for GPU training servers", "gpubench"};
  cli.set_version_flag("--version", version() + " (" + git_describe() + ")");
  cli.require_subcommand(0, 1);
  app::command_line line;
  for (int i = 0; i < argc; ++i) line.argv.emplace_back(argv[i]);
  std::vector<app::command> added;
  for (const app::command_adder add : app::commands) added.push_back(add(cli, line));

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpubench: " << e.what() << " (see gpubench --help)\n";
    return exit_bad_input;
  }

  try {
    for (const app::command& c : added) {
      if (*c.subcommand) return c.run();
    }
    std::cerr << cli.help();
    return exit_bad_input;
  } catch (const input_error& e) {
    std::cerr << "gpubench: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "gpubench: error: " << e.what() << "\n";
    return exit_failure;
  }
}
