// gpubench help [COMMAND]: what `gpubench --help` or `gpubench COMMAND --help` prints, for those
// who type the command first (git help, go help).
#include <iostream>
#include <optional>

#include "../command.hpp"
#include "gpubench/core/errors.hpp"

namespace gpubench::app {

namespace {

// CLI11's App::help() shows the chosen subcommand's help, and `help` itself is the one chosen:
// the formatter is asked directly for the app named.
int help(const CLI::App& app, const std::optional<std::string>& topic) {
  if (!topic) {
    std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return exit_ok;
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == *topic) {
      std::cout << sub->get_formatter()->make_help(sub, app.get_name() + " " + sub->get_name(),
                                                   CLI::AppFormatMode::Normal);
      return exit_ok;
    }
  }
  throw input_error("help " + *topic + ": " + not_a_command(app, *topic));
}

}  // namespace

command add_help(CLI::App& app, const command_line& /*line*/) {
  auto topic = std::make_shared<std::optional<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "help", "Show gpubench's help, or a command's (gpubench help size: its flags)");
  sub->add_option("command", *topic, "the command to explain");
  return {sub, [&app, topic] { return help(app, *topic); }};
}

}  // namespace gpubench::app
