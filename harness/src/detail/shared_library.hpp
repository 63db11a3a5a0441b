// A shared library opened at run time (dlopen) rather than linked: NVML, cuBLASLt and NCCL, so one
// binary starts on machines without them and says which one is missing and what needs it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::detail {

class shared_library {
 public:
  // The first of `candidates` (sonames or paths) that loads; nullptr when none does, with every
  // candidate's loader message in `why_not`.
  [[nodiscard]] static std::unique_ptr<shared_library> open(
      const std::vector<std::string>& candidates, std::string& why_not);
  shared_library(const shared_library&) = delete;
  shared_library& operator=(const shared_library&) = delete;
  ~shared_library();

  // The file the loader found (dlinfo), or the candidate that loaded.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  // Binds `fn` to the symbol `name`; false when the library lacks it.
  template <class Fn>
  bool bind(const char* name, Fn& fn) const {
    // POSIX guarantees object and function pointers convert through dlsym's void*.
    fn = reinterpret_cast<Fn>(symbol(name));  // NOLINT
    return fn != nullptr;
  }

 private:
  shared_library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  [[nodiscard]] void* symbol(const char* name) const;
  void* handle_;
  std::string path_;
};

}  // namespace gpubench::detail
