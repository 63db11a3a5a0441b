// A python3 that has torch and torchvision, and a child process spoken to line by line: what
// cpu.dataloader needs to run PyTorch's own DataLoader beside gpubench.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::python {

struct search {
  std::optional<std::filesystem::path> found;
  std::vector<std::string> tried;  // every candidate looked at, in order
};

// `given` (--python) alone where it is set, else $GPUBENCH_PYTHON alone where that is set; else
// each python3 on PATH (the same file once). A candidate is taken when torch, torchvision and PIL
// are installed for it (importlib's find_spec, which loads none of them: a probe costs
// milliseconds).
[[nodiscard]] search find_with_torch(const std::filesystem::path& given);
// "no python3 with torch and torchvision found (tried /usr/bin/python3, ...)"
[[nodiscard]] std::string not_found_reason(const search& s);

// A child process in its own process group (the DataLoader's worker processes with it), with a
// pipe to its stdin and one from its stdout; its stderr goes to a file, for the error message.
// Ending it closes its stdin, waits a while, then kills the whole group.
class child {
 public:
  child(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file);
  child(const child&) = delete;
  child& operator=(const child&) = delete;
  ~child();

  void send_line(const std::string& line);
  // The next line it writes. Throws std::runtime_error when it exits, after `timeout_s`, or when
  // a stop is asked for; `during` says what it was doing.
  [[nodiscard]] std::string read_line(double timeout_s, const char* during);
  // The last lines it wrote to stderr (a traceback's end), for an error message.
  [[nodiscard]] std::string stderr_tail() const;

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // read, not yet returned
  std::filesystem::path stderr_file_;
};

}  // namespace gpubench::python
