// --set KEY=VALUE: what-if changes to a profile.
#include "catalog.hpp"

#include <cmath>
#include <filesystem>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {

namespace {
// --set's one key that is not a figure: a catalog GPU under the profile.
constexpr std::string_view gpu_model_setting = "gpu.model";
}  // namespace

const std::vector<std::string>& documented_settings() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out{std::string(gpu_model_setting)};
    for (const figure_def* f : vocabulary::all_figures()) {
      if (f->what_if) out.push_back(vocabulary::key_of(*f));
    }
    return out;
  }();
  return keys;
}

namespace {
// What --set takes: gpu.model and any figure (the documented ones are the what-ifs).
std::vector<std::string> settable_keys() {
  std::vector<std::string> keys = vocabulary::figure_keys();
  keys.emplace_back(gpu_model_setting);
  return keys;
}
}  // namespace

void apply_setting(hardware_profile& profile, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw input_error("--set: expected KEY=VALUE, got '" + assignment + "'");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  if (key == gpu_model_setting) {
    std::error_code ec;
    if (!detail::catalog_name_shape(text) ||
        !std::filesystem::is_regular_file(detail::catalog_dir() / "gpus" / (text + ".json"), ec)) {
      const std::vector<std::string> gpus = catalog_names("gpus");
      throw input_error("--set " + key + ": expected a catalog GPU (" +
                        known_names(gpus, "gpubench list --names gpus") + "), got '" + text + "'" +
                        did_you_mean(text, gpus));
    }
    // The named GPU replaces whatever GPU figures the profile had.
    std::erase_if(profile.figures, [](const auto& item) {
      const auto named = vocabulary::find_figure(item.first);
      return named && named->def->of_gpu;
    });
    profile.gemm.clear();
    detail::fill_from_gpu_entry(profile, text);
    profile.notes.push_back("GPU set to catalog:" + text + " (--set " + key + ")");
    return;
  }
  const auto named = vocabulary::find_figure(key);
  if (!named) {
    throw input_error("--set: unknown key '" + key + "' (expected one of " +
                      join(documented_settings()) + ")" + did_you_mean(key, settable_keys()));
  }
  const figure_def& range = *named->def;
  double number = 0;
  std::size_t used = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(number) || number < range.min ||
      number > range.max) {
    throw input_error("--set " + key + ": expected a number in [" + format_plain(range.min) + ", " +
                      format_plain(range.max) + "], got '" + text + "'");
  }
  profile.set(range, number, basis::set, "--set " + assignment, "", named->dtype);
}

}  // namespace gpubench::model
