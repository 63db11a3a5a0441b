#include "gpubench/model/hardware.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/measurements.hpp"

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
// alt}. Null values go to `unknown` with their note.
void read_figures(const json_reader& doc, hardware_profile& profile, basis from) {
  if (!doc.has("figures")) return;
  const json_reader figures = doc.member("figures");
  if (!figures.node().is_object()) figures.fail_here("an object of figures");
  for (const auto& [key, value] : figures.node().items()) {
    const auto named = vocabulary::find_figure(key);
    const json_reader entry(value, doc.file(), json_path(figures.path(), key));
    if (!named) entry.fail_here("a known figure (" + vocabulary::figure_keys_text() + ")");
    const figure_def& range = *named->def;
    if (value.is_number()) {
      const double number = entry.node().get<double>();
      if (!std::isfinite(number) || number < range.min || number > range.max) {
        entry.fail_here("a number in [" + format_plain(range.min) + ", " + format_plain(range.max) +
                        "]");
      }
      profile.set(range, number, from, "", "", named->dtype);
      continue;
    }
    entry.expect_object({"value", "source", "status", "note", "uncertain", "alt"});
    const std::string note = entry.find_string("note").value_or("");
    if (entry.has("value") && entry.node().at("value").is_null()) {
      std::string why = entry.find_string("status").value_or("unknown");
      if (!note.empty()) why.append(": ").append(note);
      profile.unknown[key] = std::move(why);
      continue;
    }
    const double number = entry.get_number("value", range.min, range.max);
    profile.set(range, number, from, join_sources(entry), note, named->dtype);
    if (entry.find_bool("uncertain").value_or(false)) profile.figures[key].uncertain = true;
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

fs::path catalog_dir() {
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

std::optional<fs::path> catalog_file(const std::string& name) {
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
  const hardware_profile gpu = load_catalog(gpu_name);
  for (const auto& [key, fig] : gpu.figures) {
    if (!profile.figures.contains(key)) profile.figures.emplace(key, fig);
  }
  for (const auto& [key, why] : gpu.unknown) {
    if (!profile.figures.contains(key)) profile.unknown.emplace(key, why);
  }
  profile.gpu_model = gpu_name;
}

// ---- measured figures: which results each comes from ------------------------------------------

using vocabulary::rows;
namespace measurements = vocabulary::measurements;

void read_gemm(const vocabulary::query& /*q*/, const rows& selected,
               const results_document& /*doc*/, hardware_profile& p) {
  for (const auto& [dtype, of_dtype] : vocabulary::group_by(selected, "dtype")) {
    for (const auto& [shape_text, points] : vocabulary::group_by(of_dtype, "shape")) {
      try {
        const gemm_shape shape = parse_gemm_shape(shape_text);
        p.gemm.push_back(
            gemm_point{dtype, shape.m, shape.n, shape.k, *vocabulary::median_of(points)});
      } catch (const std::invalid_argument&) {
        continue;  // not a shape the gemm benchmark writes: the point is left out
      }
    }
  }
}

void read_hbm(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
              hardware_profile& p) {
  p.set(fig::hbm, *vocabulary::evaluate(selected, q), basis::measured,
        q.benchmark + " (median over GPUs)");
}

void read_launch(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                 hardware_profile& p) {
  p.set(fig::launch_latency, *vocabulary::evaluate(selected, q), basis::measured,
        q.benchmark + " " + describe(q.where));
}

// A copy rate at the largest size measured.
void read_largest_copy(const vocabulary::query& q, const rows& selected, const figure_def& f,
                       hardware_profile& p) {
  const rows largest = vocabulary::at_largest(selected, q.axis);
  const auto bytes = axis_number(largest.front().from->axes, q.axis).value_or(0);
  p.set(f, *vocabulary::median_of(largest), basis::measured,
        q.benchmark + " pinned, " + std::to_string(static_cast<std::int64_t>(bytes)) + " bytes");
}
void read_h2d(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
              hardware_profile& p) {
  read_largest_copy(q, selected, fig::pcie_h2d, p);
}
void read_h2d_all(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                  hardware_profile& p) {
  read_largest_copy(q, selected, fig::pcie_h2d_all, p);
}

void read_allreduce(const vocabulary::query& q, const rows& selected, const results_document& doc,
                    hardware_profile& p) {
  for (const auto& [bytes, points] : vocabulary::group_by_number(selected, "bytes")) {
    p.allreduce.push_back(busbw_point{bytes, *vocabulary::median_of(points)});
  }
  (void)q;
  if (!p.allreduce.empty()) {
    p.allreduce_ranks = doc.meta.mpi_ranks > 1 ? doc.meta.mpi_ranks : p.gpus_per_node;
  }
}

void read_triad(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                hardware_profile& p) {
  p.set(fig::host_membw, *vocabulary::evaluate(selected, q), basis::measured,
        q.benchmark + " " + q.where.front().value);
}

// The block size nearest a typical dataset sample (128 KiB) wins; then the faster one.
void read_rand_read(const vocabulary::query& q, const rows& selected,
                    const results_document& /*doc*/, hardware_profile& p) {
  std::optional<std::pair<std::int64_t, double>> best;  // block size, GB/s
  const auto distance = [](std::int64_t b) {
    return std::abs(std::log2(static_cast<double>(std::max<std::int64_t>(b, 1)) / 131072.0));
  };
  for (const vocabulary::row& r : selected) {
    const double v = r.value();
    const auto block =
        static_cast<std::int64_t>(axis_number(r.from->axes, "block_size").value_or(0));
    if (!best || distance(block) < distance(best->first) ||
        (block == best->first && v > best->second)) {
      best = {{block, v}};
    }
  }
  if (best) {
    p.set(fig::storage_read, best->second, basis::measured,
          q.benchmark + ", " + std::to_string(best->first) + "-byte blocks");
  }
}

void read_seq_read(const vocabulary::query& q, const rows& selected,
                   const results_document& /*doc*/, hardware_profile& p) {
  const double fastest = *vocabulary::evaluate(selected, q);
  if (fastest > 0) p.set(fig::storage_seq, fastest, basis::measured, q.benchmark);
}

// The per-core rate of the case with the most threads (later cases win ties), and the size of
// the image it decoded.
void read_augment(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                  hardware_profile& p) {
  const vocabulary::row last = vocabulary::at_largest(selected, q.axis).back();
  const double per_core = last.value();
  if (per_core <= 0) return;
  const json& axes = last.from->axes;
  const double pixels = axis_number(axes, "image_width").value_or(500) *
                        axis_number(axes, "image_height").value_or(375);
  const auto threads = static_cast<std::int64_t>(axis_number(axes, q.axis).value_or(1));
  p.set(fig::augment_per_core, per_core, basis::measured,
        q.benchmark + ", " + std::to_string(threads) + " threads");
  p.set(fig::augment_pixels, pixels, basis::measured, q.benchmark + " axes");
}

// Which measurement each measured part of a profile is read from, and how. A table: a new
// measured figure is a row and its reader.
struct figure_source {
  const vocabulary::query* measurement;
  void (*read)(const vocabulary::query& q, const rows& selected, const results_document& doc,
               hardware_profile& p);
};

const figure_source figure_sources[] = {
    {&measurements::gemm, read_gemm},
    {&measurements::hbm_copy, read_hbm},
    {&measurements::launch_latency, read_launch},
    {&measurements::h2d_pinned, read_h2d},
    {&measurements::h2d_all, read_h2d_all},
    {&measurements::allreduce_busbw, read_allreduce},
    {&measurements::host_triad, read_triad},
    {&measurements::storage_random, read_rand_read},
    {&measurements::storage_seq, read_seq_read},
    {&measurements::augment_per_core, read_augment},
};

}  // namespace

std::string network_fabric::describe() const {
  std::string text;
  if (nics > 0 && nic_gbps > 0) text = std::to_string(nics) + " x ";
  if (nic_gbps > 0) text += format_plain(nic_gbps) + " Gb/s ";
  text += fabric;
  if (nics > 0 && nic_gbps <= 0) {
    text += (text.empty() ? "" : ", ") + std::to_string(nics) + (nics > 1 ? " NICs" : " NIC");
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

const figure* hardware_profile::find_key(std::string_view key) const {
  const auto it = figures.find(key);
  return it == figures.end() ? nullptr : &it->second;
}

const figure* hardware_profile::find(const figure_def& f, std::string_view dtype) const {
  return find_key(vocabulary::key_of(f, dtype));
}

std::optional<double> hardware_profile::value(const figure_def& f, std::string_view dtype) const {
  const figure* found = find(f, dtype);
  return found ? std::optional<double>(found->value) : std::nullopt;
}

std::optional<double> hardware_profile::value_in(const figure_def& f, const vocabulary::unit& u,
                                                 std::string_view dtype) const {
  const auto v = value(f, dtype);
  return v ? std::optional<double>(vocabulary::convert(*v, f.in, u)) : std::nullopt;
}

const std::string* hardware_profile::why_unknown(const figure_def& f) const {
  const auto it = unknown.find(vocabulary::key_of(f));
  return it == unknown.end() ? nullptr : &it->second;
}

void hardware_profile::set(const figure_def& f, double v, basis from, std::string source,
                           std::string note, std::string_view dtype) {
  const std::string key = vocabulary::key_of(f, dtype);
  figures[key] = figure{v, from, std::move(source), std::move(note), false};
  unknown.erase(key);
}

std::vector<std::string> catalog_names(std::string_view kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(catalog_dir() / std::string(kind), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
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
        root.fail("gpu_model", "the name of a catalog GPU (configs/hardware/gpus/)");
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
    std::vector<std::string> known = catalog_names("systems");
    for (auto& n : catalog_names("gpus")) known.push_back(std::move(n));
    throw input_error("catalog:" + name + ": expected a catalog name (" + join(known) + ")");
  }
  hardware_profile profile = parse_hardware(read_json_file(*path), path->string());
  profile.origin = "catalog:" + name;
  return profile;
}

hardware_profile load_hardware(const std::string& spec) {
  if (spec.starts_with("catalog:")) return load_catalog(spec.substr(8));
  const json doc = read_json_file(spec);
  const json_reader root(doc, spec);
  if (!doc.is_object()) root.fail_here("a gpubench.results/1 or gpubench.hardware/1 object");
  const std::string schema = root.find_string("schema").value_or("");
  if (schema == results_schema) return profile_from_results(read_results(spec), spec);
  if (schema == hardware_schema) return parse_hardware(doc, spec);
  root.fail("schema", std::string("\"") + results_schema + "\" or \"" + hardware_schema + "\"");
}

std::optional<std::string> catalog_gpu_for_device(std::string_view device_name, double memory_GB) {
  std::optional<std::string> best;
  double best_gap = std::numeric_limits<double>::infinity();
  std::size_t best_match = 0;
  for (const auto& name : catalog_names("gpus")) {
    const auto path = catalog_file(name);
    const json doc = read_json_file(*path);
    const auto names = doc.find("device_names");
    if (names == doc.end() || !names->is_array()) continue;
    for (const auto& candidate : *names) {
      if (!candidate.is_string()) continue;
      const auto text = candidate.get<std::string>();
      if (text.empty() || device_name.find(text) == std::string_view::npos) continue;
      double gpu_memory = 0;
      if (const auto figs = doc.find("figures"); figs != doc.end()) {
        if (const auto mem = figs->find(vocabulary::key_of(fig::gpu_memory)); mem != figs->end()) {
          gpu_memory = mem->value("value", 0.0);
        }
      }
      const double gap = memory_GB > 0 ? std::abs(gpu_memory - memory_GB) : 0.0;
      // The longest matching device name wins; memory size breaks ties (A100 40 vs 80 GB).
      if (text.size() > best_match || (text.size() == best_match && gap < best_gap)) {
        best = name;
        best_gap = gap;
        best_match = text.size();
      }
    }
  }
  return best;
}

hardware_profile profile_from_results(const results_document& doc, const std::string& file) {
  hardware_profile profile;
  profile.kind = "measured";
  profile.origin = file;
  profile.name = doc.system.host.empty() ? "measured" : doc.system.host;
  const system_info& sys = doc.nodes.empty() ? doc.system : doc.nodes.front().system;
  profile.gpus_per_node = std::max<int>(1, static_cast<int>(sys.gpus.size()));

  // Host figures.
  const auto cores = sys.cpu.cores_available > 0 ? sys.cpu.cores_available : sys.cpu.cores;
  if (cores > 0) {
    profile.set(fig::cpu_cores, static_cast<double>(cores), basis::measured, "system.cpu");
  }
  if (sys.memory_bytes > 0) {
    profile.set(fig::host_memory,
                vocabulary::convert(static_cast<double>(sys.memory_bytes), vocabulary::units::bytes,
                                    fig::host_memory.in),
                basis::measured, "system.memory_bytes");
  }

  for (const figure_source& source : figure_sources) {
    const vocabulary::rows selected = vocabulary::select(doc, *source.measurement);
    if (!selected.empty()) source.read(*source.measurement, selected, doc, profile);
  }
  const std::string network = vocabulary::key_of(fig::network);
  profile.unknown.emplace(network,
                          "not measured by a single-node run: use --set " + network + "=N");

  if (!sys.gpus.empty()) {
    const gpu_info& gpu = sys.gpus.front();
    profile.description = std::to_string(sys.gpus.size()) + "x " + gpu.name + " on " +
                          (sys.host.empty() ? std::string("this host") : sys.host);
    const double memory_GB = vocabulary::convert(static_cast<double>(gpu.memory_bytes),
                                                 vocabulary::units::bytes, fig::gpu_memory.in);
    if (const auto entry = catalog_gpu_for_device(gpu.name, memory_GB)) {
      fill_from_gpu_entry(profile, *entry);
    } else {
      profile.notes.push_back("no catalog entry matches GPU '" + gpu.name +
                              "': only measured GPU figures are available");
    }
    if (gpu.sm_count) {
      profile.set(fig::sm_count, *gpu.sm_count, basis::measured, "system.gpus");
    }
    profile.set(fig::gpu_memory, memory_GB, basis::measured, "system.gpus");
  } else {
    profile.description = "no GPU found on " + (sys.host.empty() ? "this host" : sys.host);
    profile.notes.push_back("the results have no GPU: " + (sys.gpu_status.reason.empty()
                                                               ? std::string("none was found")
                                                               : sys.gpu_status.reason));
  }
  return profile;
}

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

void apply_setting(hardware_profile& profile, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw input_error("--set: expected KEY=VALUE, got '" + assignment + "'");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  if (key == gpu_model_setting) {
    std::error_code ec;
    if (!catalog_name_shape(text) ||
        !fs::is_regular_file(catalog_dir() / "gpus" / (text + ".json"), ec)) {
      throw input_error("--set " + key + ": expected a catalog GPU (" +
                        join(catalog_names("gpus")) + "), got '" + text + "'");
    }
    // The named GPU replaces whatever GPU figures the profile had.
    std::erase_if(profile.figures, [](const auto& item) {
      const auto named = vocabulary::find_figure(item.first);
      return named && named->def->of_gpu;
    });
    profile.gemm.clear();
    fill_from_gpu_entry(profile, text);
    profile.notes.push_back("GPU set to catalog:" + text + " (--set " + key + ")");
    return;
  }
  const auto named = vocabulary::find_figure(key);
  if (!named) {
    throw input_error("--set: unknown key '" + key + "' (expected one of " +
                      join(documented_settings()) + ")");
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

json to_json(const hardware_profile& profile) {
  json out = json::object();
  out["schema"] = hardware_schema;
  out["name"] = profile.name;
  out["kind"] = profile.kind;
  out["description"] = profile.description;
  out["origin"] = profile.origin;
  out["gpu_model"] = profile.gpu_model;
  out["gpus_per_node"] = profile.gpus_per_node;
  json figures = json::object();
  for (const auto& [key, fig] : profile.figures) {
    json entry = {{"value", fig.value}, {"basis", to_string(fig.from)}};
    if (!fig.source.empty()) entry["source"] = fig.source;
    if (!fig.note.empty()) entry["note"] = fig.note;
    if (fig.uncertain) entry["uncertain"] = true;
    figures[key] = std::move(entry);
  }
  out["figures"] = std::move(figures);
  json unknown = json::object();
  for (const auto& [key, why] : profile.unknown) unknown[key] = why;
  out["unknown"] = std::move(unknown);
  if (const std::string net = profile.network.describe(); !net.empty()) {
    json network = {{"description", net}, {"source", profile.network.source}};
    if (!profile.network.fabric.empty()) network["fabric"] = profile.network.fabric;
    if (profile.network.nics > 0) network["nics"] = profile.network.nics;
    if (profile.network.nic_gbps > 0) network["nic_gbps"] = profile.network.nic_gbps;
    out["network"] = std::move(network);
  }
  if (!profile.gemm.empty()) {
    json gemm = json::array();
    for (const auto& p : profile.gemm) {
      gemm.push_back(
          {{"dtype", p.dtype}, {"m", p.m}, {"n", p.n}, {"k", p.k}, {"TFLOPs", p.tflops}});
    }
    out["gemm"] = std::move(gemm);
  }
  if (!profile.allreduce.empty()) {
    json points = json::array();
    for (const auto& p : profile.allreduce) {
      points.push_back({{"bytes", p.bytes}, {"busbw_GBps", p.GBps}});
    }
    out["allreduce"] = {{"ranks", profile.allreduce_ranks}, {"points", std::move(points)}};
  }
  out["notes"] = profile.notes;
  return out;
}

}  // namespace gpubench::model
