// Errors: library and system calls become exceptions that name the call, where it was made and
// the library's own error name. The runner records them on the benchmark at hand; only main exits.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpubench {

// Bad usage or bad input (exit code 2). The message is one line naming the file or flag, the
// JSON path of the field and what was expected.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds "FILE: JSON_PATH: expected EXPECTED" (parts left empty are dropped).
[[nodiscard]] input_error bad_input(std::string_view file, std::string_view json_path,
                                    std::string_view expected);

// A failed call into CUDA, cuBLAS, NCCL, MPI, NVML or the operating system.
class api_error : public std::runtime_error {
 public:
  api_error(std::string library, std::string call, std::string error_name, std::string detail,
            std::source_location where);

  [[nodiscard]] const std::string& library() const noexcept { return library_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& error_name() const noexcept { return error_name_; }

 private:
  std::string library_;
  std::string call_;
  std::string error_name_;
};

// Throws api_error for a failed system call, with errno's symbolic name (ENOENT...).
[[noreturn]] void throw_system_error(std::string_view call, int error_number,
                                     std::source_location where = std::source_location::current());

// The symbolic name of an errno value ("ENOENT"), or "errno N".
[[nodiscard]] std::string errno_name(int error_number);

}  // namespace gpubench

// Checks a POSIX-style call that returns -1 and sets errno on failure.
#define GPUBENCH_CHECK_SYSCALL(expr)                                                     \
  do {                                                                                   \
    if ((expr) == -1) ::gpubench::throw_system_error(#expr, errno);                      \
  } while (false)
