#include "gpubench/core/config_paths.hpp"

#include <cstdlib>
#include <system_error>

#include "gpubench/core/config.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {
fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}
}  // namespace

fs::path config_dir() {
  if (const char* env = std::getenv("GPUBENCH_CONFIG_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  const fs::path exe_dir = executable_dir();
  std::error_code ec;
  // Beside the binary (a copied folder), one up (a build tree), or an installed tree's
  // share/gpubench/configs (cmake --install, relocatable).
  for (const fs::path& candidate : {exe_dir / "configs", exe_dir.parent_path() / "configs",
                                    exe_dir.parent_path() / "share" / "gpubench" / "configs"}) {
    if (!exe_dir.empty() && fs::is_directory(candidate / "suites", ec)) {
      return candidate;
    }
  }
  return GPUBENCH_SOURCE_CONFIG_DIR;
}

}  // namespace gpubench
