// Catalog entries (configs/hardware/): reading one, finding the one a GPU's name matches.
#include "catalog.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {
namespace {

namespace fs = std::filesystem;

std::string join_sources(const json_reader& entry) {
  if (!entry.has("source")) return "";
  const json& source = entry.node().at("source");
  if (source.is_string()) return source.get<std::string>();
  if (!source.is_array()) entry.fail("source", "a string or an array of strings");
  std::string text;
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (!source[i].is_string()) {
      json_reader(source, entry.file(), json_path(entry.path(), "source"))
          .fail_here("an array of strings");
    }
    if (!text.empty()) text += "; ";
    text += source[i].get<std::string>();
  }
  return text;
}

// Reads the "figures" object: each member a number or {value, source, status, note, uncertain,
// alt, cv}. Null values go to `unknown` with their note.
void read_figures(const json_reader& doc, hardware_profile& profile, basis from) {
  if (!doc.has("figures")) return;
  const json_reader figures = doc.member("figures");
  if (!figures.node().is_object()) figures.fail_here("an object of figures");
  for (const auto& [key, given] : figures.node().items()) {
    auto named = vocabulary::find_figure(key);
    const json_reader entry(given, doc.file(), json_path(figures.path(), key));
    json value = given;
    if (const vocabulary::renamed_figure* renamed = vocabulary::find_renamed_figure(key)) {
      // An earlier gpubench's key: its number converted to the figure that replaced it.
      json& number = value.is_object() && value.contains("value") ? value["value"] : value;
      if (number.is_number()) {
        number = vocabulary::convert(number.get<double>(), renamed->was, renamed->now->in);
      }
      named = vocabulary::named_figure{renamed->now, ""};
      profile.notes.push_back(doc.file() + ": " + std::string(key) + " (" +
                              std::string(renamed->why) + ") read as " +
                              vocabulary::key_of(*renamed->now));
    }
    if (!named) {
      entry.fail_here("a known figure (" + vocabulary::figure_keys_text() + ")" +
                      did_you_mean(key, vocabulary::figure_keys()));
    }
    const figure_def& range = *named->def;
    if (value.is_number()) {
      const double number = value.get<double>();
      if (!std::isfinite(number) || number < range.min || number > range.max) {
        entry.fail_here("a number in [" + format_plain(range.min) + ", " + format_plain(range.max) +
                        "]");
      }
      profile.set(range, number, from, "", "", named->dtype);
      continue;
    }
    entry.expect_object({"value", "source", "status", "note", "uncertain", "alt", "cv"});
    const json_reader converted(value, doc.file(), entry.path());
    const std::string note = entry.find_string("note").value_or("");
    if (value.contains("value") && value.at("value").is_null()) {
      std::string why = entry.find_string("status").value_or("unknown");
      if (!note.empty()) why.append(": ").append(note);
      profile.unknown[vocabulary::key_of(range, named->dtype)] = std::move(why);
      continue;
    }
    const double number = converted.get_number("value", range.min, range.max);
    profile.set(range, number, from, join_sources(entry), note, named->dtype);
    if (entry.find_bool("uncertain").value_or(false)) {
      profile.figures[vocabulary::key_of(range, named->dtype)].uncertain = true;
    }
    if (entry.find_string("status") == "assumed") {
      profile.figures[vocabulary::key_of(range, named->dtype)].assumed = true;
    }
    if (entry.has("cv")) {
      profile.figures[vocabulary::key_of(range, named->dtype)].cv = entry.get_number("cv", 0, 100);
    }
  }
}

// The "network" object of a system entry; null members are not stated.
network_fabric read_network(const json_reader& doc) {
  network_fabric net;
  if (!doc.has("network")) return net;
  const json_reader entry = doc.member("network");
  entry.expect_object({"fabric", "nics", "nic_gbps", "source"});
  const auto stated = [&](const char* key) {
    return entry.has(key) && !entry.node().at(key).is_null();
  };
  if (stated("fabric")) net.fabric = entry.get_string("fabric");
  if (stated("nics")) net.nics = static_cast<int>(entry.get_int("nics", 1, 1024));
  if (stated("nic_gbps")) net.nic_gbps = entry.get_number("nic_gbps", 1e-3, 1e5);
  net.source = join_sources(entry);
  return net;
}

}  // namespace

namespace detail {

std::filesystem::path catalog_dir() {
  return config_dir() / "hardware";
}

// Catalog names are file names under configs/hardware/ and nothing else: lower-case letters,
// digits, '.', '_' and '-', starting with a letter or digit (no '/', no '..' to climb out).
bool catalog_name_shape(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  };
  const bool starts_plain =
      (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9');
  return starts_plain && std::all_of(name.begin(), name.end(), plain) &&
         name.find("..") == std::string::npos;
}

std::optional<std::filesystem::path> catalog_file(const std::string& name) {
  if (!catalog_name_shape(name)) return std::nullopt;
  std::error_code ec;
  for (const char* kind : {"systems", "gpus"}) {
    const fs::path path = catalog_dir() / kind / (name + ".json");
    if (fs::is_regular_file(path, ec)) return path;
  }
  return std::nullopt;
}

// Fills every key the profile lacks from the catalog GPU entry.
void fill_from_gpu_entry(hardware_profile& profile, const std::string& gpu_name) {
  // Only the GPU entry's own figures: not load_catalog(), whose bare-GPU network scan reads every
  // system file and would be thrown away here.
  const auto path = catalog_file(gpu_name);
  if (!path) throw input_error("catalog:" + gpu_name + ": expected a catalog GPU");
  const hardware_profile gpu = parse_hardware(read_json_file(*path), path->string());
  for (const auto& [key, fig] : gpu.figures) {
    if (!profile.figures.contains(key)) profile.figures.emplace(key, fig);
  }
  for (const auto& [key, why] : gpu.unknown) {
    if (!profile.figures.contains(key)) profile.unknown.emplace(key, why);
  }
  profile.gpu_model = gpu_name;
}

// The network of the systems that carry this GPU: a bare GPU entry states none, and a job on
// several nodes of it would otherwise assume a 100 Gb/s NIC where every system of the class has
// one 400 Gb/s NIC per GPU (issue 40).
void typical_network(hardware_profile& profile, const std::string& gpu_name) {
  std::vector<std::pair<double, std::string>> per_gpu;
  const std::string network_key = vocabulary::key_of(fig::network);
  for (const std::string& system : catalog_names("systems")) {
    const json doc = read_json_file(catalog_dir() / "systems" / (system + ".json"));
    if (doc.value("gpu_model", "") != gpu_name) continue;
    const int gpus = doc.value("gpus_per_node", 0);
    const auto figs = doc.find("figures");
    if (gpus <= 0 || figs == doc.end() || !figs->contains(network_key)) continue;
    const json& value = figs->at(network_key).at("value");
    if (!value.is_number()) continue;
    per_gpu.emplace_back(value.get<double>() / gpus, system);
  }
  if (per_gpu.empty()) return;
  std::sort(per_gpu.begin(), per_gpu.end());
  profile.typical_network_gbps_per_gpu = per_gpu[per_gpu.size() / 2].first;
  std::vector<std::string> names;
  names.reserve(per_gpu.size());
  for (const auto& [rate, name] : per_gpu) names.push_back(name);
  profile.typical_network_from = "typical of the " + std::to_string(per_gpu.size()) +
                                 " catalog systems with this GPU, their median " +
                                 format_plain(*profile.typical_network_gbps_per_gpu) +
                                 " Gb/s per GPU: " + join(names);
}

}  // namespace detail

using detail::catalog_dir;
using detail::catalog_file;
using detail::fill_from_gpu_entry;

std::vector<std::string> catalog_names(std::string_view kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(catalog_dir() / std::string(kind), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> catalog_entry_names() {
  std::vector<std::string> names = catalog_names("systems");
  for (auto& name : catalog_names("gpus")) names.push_back(std::move(name));
  return names;
}

hardware_profile parse_hardware(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "name", "kind", "description", "device_names", "provider",
                      "gpu_model", "gpus_per_node", "interconnect", "network", "figures"});
  if (root.get_string("schema") != hardware_schema) {
    root.fail("schema", std::string("\"") + hardware_schema + "\"");
  }
  hardware_profile profile;
  profile.name = root.get_string("name");
  profile.kind = root.find_string("kind").value_or("file");
  if (profile.kind != "gpu" && profile.kind != "system" && profile.kind != "file") {
    root.fail("kind", "\"gpu\", \"system\" or \"file\"");
  }
  profile.description = root.find_string("description").value_or(profile.name);
  profile.origin = file;
  profile.gpus_per_node = static_cast<int>(root.find_int("gpus_per_node", 1, 1024).value_or(1));
  profile.scalable = profile.kind == "gpu";
  read_figures(root, profile, basis::catalog);
  profile.network = read_network(root);
  if (const auto gpu = root.find_string("gpu_model"); gpu && !gpu->empty()) {
    if (profile.kind != "gpu") {
      if (!catalog_file(*gpu)) {
        root.fail("gpu_model", "the name of a catalog GPU (configs/hardware/gpus/)" +
                                   did_you_mean(*gpu, catalog_names("gpus")));
      }
      fill_from_gpu_entry(profile, *gpu);
    }
    profile.gpu_model = *gpu;
  }
  return profile;
}

hardware_profile load_catalog(const std::string& name) {
  const auto path = catalog_file(name);
  if (!path) {
    const std::vector<std::string> known = catalog_entry_names();
    throw input_error("catalog:" + name + ": expected a catalog name (" +
                      known_names(known, "gpubench list --names catalog") + ")" +
                      did_you_mean(name, known, "catalog:"));
  }
  hardware_profile profile = parse_hardware(read_json_file(*path), path->string());
  profile.origin = "catalog:" + name;
  if (profile.kind == "gpu") detail::typical_network(profile, name);
  return profile;
}

namespace {

// The GPU entries' device names and memory sizes, read once per catalog folder: validate asks for
// every GPU of a results file (100,000 of them for a large fleet's merged file), and reading the
// catalog each time cost milliseconds a GPU.
struct device_entry {
  std::string name;
  std::vector<std::string> device_names;
  double memory_GiB = 0;
};

const std::vector<device_entry>& device_entries() {
  static std::mutex lock;
  static std::map<std::string, std::vector<device_entry>> by_folder;
  const std::lock_guard<std::mutex> held(lock);
  const std::string folder = catalog_dir().string();
  if (const auto it = by_folder.find(folder); it != by_folder.end()) return it->second;
  std::vector<device_entry> entries;
  for (const auto& name : catalog_names("gpus")) {
    const auto path = catalog_file(name);
    if (!path) continue;
    const json doc = read_json_file(*path);
    const auto names = doc.find("device_names");
    if (names == doc.end() || !names->is_array()) continue;
    device_entry e{name, {}, 0};
    for (const auto& candidate : *names) {
      if (candidate.is_string() && !candidate.get<std::string>().empty()) {
        e.device_names.push_back(candidate.get<std::string>());
      }
    }
    if (const auto figs = doc.find("figures"); figs != doc.end()) {
      if (const auto mem = figs->find(vocabulary::key_of(fig::gpu_memory)); mem != figs->end()) {
        e.memory_GiB = mem->value("value", 0.0);
      }
    }
    entries.push_back(std::move(e));
  }
  return by_folder.emplace(folder, std::move(entries)).first->second;
}

}  // namespace

std::optional<std::string> catalog_gpu_for_device(std::string_view device_name, double memory_GiB) {
  std::optional<std::string> best;
  double best_gap = std::numeric_limits<double>::infinity();
  std::size_t best_match = 0;
  for (const device_entry& e : device_entries()) {
    for (const std::string& text : e.device_names) {
      if (device_name.find(text) == std::string_view::npos) continue;
      const double gap = memory_GiB > 0 ? std::abs(e.memory_GiB - memory_GiB) : 0.0;
      // The longest matching device name wins; memory size breaks ties (A100 40 vs 80 GB).
      if (text.size() > best_match || (text.size() == best_match && gap < best_gap)) {
        best = e.name;
        best_gap = gap;
        best_match = text.size();
      }
    }
  }
  return best;
}

}  // namespace gpubench::model
