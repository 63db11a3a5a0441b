// Where gpubench's configuration files live: suites, workloads, the hardware catalog, specs and
// the model's constants.
#pragma once

#include <filesystem>

namespace gpubench {

// $GPUBENCH_CONFIG_DIR, else configs/ beside or above the executable or share/gpubench/configs
// of an installed tree, else the source tree the binary was built from.
[[nodiscard]] std::filesystem::path config_dir();

}  // namespace gpubench
