// The hardware catalog (configs/hardware/gpus and systems): where its entries are, and how a
// profile takes a GPU entry's figures. Internal to model/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gpubench/model/hardware.hpp"

namespace gpubench::model::detail {

[[nodiscard]] std::filesystem::path catalog_dir();
// Catalog names are file names under configs/hardware/ and nothing else.
[[nodiscard]] bool catalog_name_shape(const std::string& name);
[[nodiscard]] std::optional<std::filesystem::path> catalog_file(const std::string& name);
// Fills every key the profile lacks from the catalog GPU entry.
void fill_from_gpu_entry(hardware_profile& profile, const std::string& gpu_name);
// Sets profile.typical_network_* from the catalog systems built on `gpu_name`.
void typical_network(hardware_profile& profile, const std::string& gpu_name);

}  // namespace gpubench::model::detail
