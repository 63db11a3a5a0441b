// A fresh folder for one test, removed with its contents at scope exit.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace gpubench::testing {

struct temp_dir {
  std::filesystem::path path;
  // Under `base` (the system's temp folder by default; tests that need a real disk rather than
  // a possible tmpfs pass the current folder).
  explicit temp_dir(const std::filesystem::path& base = std::filesystem::temp_directory_path()) {
    std::string pattern = (base / "gpubench-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace gpubench::testing
