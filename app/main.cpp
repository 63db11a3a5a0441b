// gpubench: the one place that wires the harness, the benchmarks, the model, the reports and the
// acceptance checks together. Commands come from the table below (app/command.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "command.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/build_info.hpp"
#include "standard_streams.hpp"

namespace gpubench::app {

CLI::Validator finite_range(double min, double max, bool whole) {
  std::string range = std::string(whole ? "a whole number" : "a number") + " from " +
                      format_number(min) + " to " + format_number(max);
  return CLI::Validator(
      [min, max, whole, range](std::string& text) -> std::string {
        double value = 0;
        const bool parsed = CLI::detail::lexical_cast(text, value);
        if (!parsed || !std::isfinite(value) || value < min || value > max ||
            (whole && value != std::floor(value))) {
          return "expected " + range + ", got '" + text + "'";
        }
        return {};
      },
      "[" + format_number(min) + " - " + format_number(max) + "]");
}

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

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::string not_a_command(const CLI::App& app, const std::string& word) {
  const std::vector<std::string> names = command_names(app);
  return "expected a command (" + join(names) + "), got '" + word + "'" + did_you_mean(word, names);
}

namespace {

// A closed stdin, stdout or stderr gets /dev/null, so that no file gpubench opens later takes the
// number and receives what is printed. Returns whether stdout was closed (a failed write).
bool open_standard_streams() {
  bool stdout_closed = false;
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    stdout_closed = stdout_closed || fd == STDOUT_FILENO;
    const int null_fd = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (null_fd != -1 && null_fd != fd) {
      ::dup2(null_fd, fd);
      ::close(null_fd);
    }
  }
  return stdout_closed;
}

// Every command, in the order `gpubench --help` lists them.
constexpr command_adder commands[] = {add_run,       add_list,   add_info,    add_size,
                                      add_calibrate, add_report, add_compare, add_validate,
                                      add_fleet,     add_export, add_watch,   add_help};

// The long flags of a command as they are typed (--workload): what a misspelt flag is matched
// against (a one-letter flag is one edit from any other).
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

// A word CLI11 could not place, refused with the names nearest to it: where a command was
// expected, a word that names none (`gpubench siz`); after a command, a flag it does not have
// (`size --workoad`). Asked first, since a misspelt required flag also reads "--workload is
// required". Nothing for other words (a positional too many): CLI11's message says those.
std::optional<std::string> unknown_word(const CLI::App& cli) {
  // CLI11 keeps a "--" before a command's positionals among the words it did not place.
  const auto unplaced = [](const CLI::App& app) {
    std::vector<std::string> words = app.remaining();
    std::erase(words, "--");
    return words;
  };
  const std::vector<CLI::App*> chosen = cli.get_subcommands();
  const bool in_command = !chosen.empty() && !unplaced(*chosen.front()).empty();
  const CLI::App& at = in_command ? *chosen.front() : cli;
  const std::vector<std::string> extras = unplaced(at);
  const auto is_flag = [](const std::string& word) { return word.starts_with("-"); };
  const auto word = std::find_if_not(extras.begin(), extras.end(), is_flag);
  if (chosen.empty() && word != extras.end()) return not_a_command(cli, *word);
  const auto flag_word = std::find_if(extras.begin(), extras.end(), is_flag);
  if (flag_word == extras.end()) return std::nullopt;
  const std::string flag = flag_word->substr(0, flag_word->find('='));
  const std::string& command = at.get_name();
  return (in_command ? command + " " : "") + flag + ": expected a flag of " +
         (in_command ? command + " (see gpubench help " + command + ")"
                     : "gpubench (see gpubench --help)") +
         did_you_mean(flag, flag_names(at));
}

// The command a failure happened in, for its one line.
std::string command_name(const command* c) {
  return c == nullptr ? std::string("command line") : c->subcommand->get_name();
}

// nlohmann's message without its id: "[json.exception.type_error.302] type must be number..."
std::string without_library_id(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    const auto end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return std::string(what);
}

// Memory held back for unwinding. When an allocation first fails it is given back and
// std::bad_alloc thrown, so the destructors that run then have room: nlohmann's parser frees a
// half-built document through a heap stack, and without room that second failure, inside a
// destructor, ends in std::terminate instead of the one-line "out of memory". Process-wide, as
// operator new is; set once in main.
void* unwind_reserve = nullptr;
constexpr std::size_t unwind_reserve_bytes = std::size_t{16} << 20;

void release_reserve_and_throw() {
  std::free(unwind_reserve);
  unwind_reserve = nullptr;
  std::set_new_handler(nullptr);
  throw std::bad_alloc();
}
}  // namespace

}  // namespace gpubench::app

int main(int argc, char** argv) {
  using namespace gpubench;
  app::unwind_reserve = std::malloc(app::unwind_reserve_bytes);
  if (app::unwind_reserve != nullptr) std::set_new_handler(app::release_reserve_and_throw);
  const bool stdout_closed = app::open_standard_streams();
  // Both streams are filtered for the terminal; stdout's write errors decide the exit code.
  app::checked_output stdout_buffer(STDOUT_FILENO);
  app::checked_output stderr_buffer(STDERR_FILENO);
  std::streambuf* const stdio_out = std::cout.rdbuf(&stdout_buffer);
  std::streambuf* const stdio_err = std::cerr.rdbuf(&stderr_buffer);
  if (::isatty(STDOUT_FILENO) == 1) std::cout << std::unitbuf;  // a person sees each line
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

  const app::command* chosen = nullptr;
  const auto run = [&]() -> int {
    try {
      cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return cli.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return cli.exit(e);
    } catch (const CLI::ParseError& e) {
      if (const auto unknown = app::unknown_word(cli)) {
        std::cerr << "gpubench: " << *unknown << "\n";
        return exit_bad_input;
      }
      // The help of the command the flag belongs to.
      const std::vector<CLI::App*> parsed = cli.get_subcommands();
      std::cerr << "gpubench: " << e.what() << " (see gpubench "
                << (parsed.empty() ? "--help" : "help " + parsed.front()->get_name()) << ")\n";
      return exit_bad_input;
    }
    try {
      for (const app::command& c : added) {
        if (*c.subcommand) {
          chosen = &c;
          return c.run();
        }
      }
      std::cerr << cli.help();
      return exit_bad_input;
    } catch (const input_error& e) {
      std::cerr << "gpubench: " << e.what() << "\n";
      return exit_bad_input;
    } catch (const std::bad_alloc&) {
      // A library's own words ("std::bad_alloc") tell a user nothing: say what ran out.
      std::cerr << "gpubench: " << app::command_name(chosen)
                << ": out of memory: the input is larger than this machine's memory (or the "
                   "process's limit) allows\n";
      return exit_failure;
    } catch (const json::exception& e) {
      // Input is checked where it is read, so this is gpubench's own slip: said as one, without
      // the library's id ("[json.exception.type_error.302]").
      std::cerr << "gpubench: " << app::command_name(chosen) << ": internal error reading JSON ("
                << app::without_library_id(e.what())
                << "); please report it with the command line and its input files\n";
      return exit_failure;
    } catch (const std::logic_error& e) {
      // std::out_of_range's "map::at" and its kin: a lookup gpubench expected to succeed.
      std::cerr << "gpubench: " << app::command_name(chosen) << ": internal error (" << e.what()
                << "); please report it with the command line and its input files\n";
      return exit_failure;
    } catch (const std::exception& e) {
      std::cerr << "gpubench: error: " << e.what() << "\n";
      return exit_failure;
    }
  };
  const int code = run();
  // What was printed must have arrived: `report > /dev/full` is not a success.
  std::cout.flush();
  std::cout.rdbuf(stdio_out);
  std::cerr.flush();
  std::cerr.rdbuf(stdio_err);
  const int error = stdout_closed ? EBADF : stdout_buffer.error();
  if (error == 0) return code;
  std::cerr << "gpubench: standard output: write failed (" << std::strerror(error) << ")\n";
  const bool summary_only = chosen != nullptr && chosen->stdout_is_a_summary && error == EPIPE;
  return code != exit_ok || summary_only ? code : exit_failure;
}
