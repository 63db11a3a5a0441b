// Errors: library and system calls become exceptions that name the call, where it was made and
// the library's own error name. The runner records them on the benchmark at hand; only main exits.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpubench {

// Where a call was made. std::source_location would do, but clang 14 (clang-tidy, the fuzzers)
// cannot compile it against libstdc++ 12; the builtins behind it work in both compilers.
struct source_site {
  const char* file = "";
  unsigned line = 0;
  [[nodiscard]] static constexpr source_site current(const char* file = __builtin_FILE(),
                                                     unsigned line = __builtin_LINE()) noexcept {
    return source_site{file, line};
  }
};

// Bad usage or bad input (exit code 2). The message is one line naming the file or flag, the
// JSON path of the field and what was expected.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds "FILE: JSON_PATH: expected EXPECTED" (parts left empty are dropped).
[[nodiscard]] input_error bad_input(std::string_view file, std::string_view json_path,
                                    std::string_view expected);

// Thrown while building a case that cannot run on this machine (no peer access for an SM copy,
// say): the runner records the case as skipped with this reason, as nvbandwidth "waives" it.
class skip_case : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed call into CUDA, cuBLAS, NCCL, MPI, NVML or the operating system.
class api_error : public std::runtime_error {
 public:
  api_error(std::string library, std::string call, std::string error_name,
            const std::string& detail, source_site where);

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
                                     source_site where = source_site::current());

// The symbolic name of an errno value ("ENOENT"), or "errno N".
[[nodiscard]] std::string errno_name(int error_number);

}  // namespace gpubench

// Checks a POSIX-style call that returns -1 and sets errno on failure.
#define GPUBENCH_CHECK_SYSCALL(expr)                                \
  do {                                                              \
    if ((expr) == -1) ::gpubench::throw_system_error(#expr, errno); \
  } while (false)
