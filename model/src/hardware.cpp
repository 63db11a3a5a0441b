#include "gpubench/model/hardware.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {

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
    if (fig.cv > 0) entry["cv"] = fig.cv;
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
      gemm.push_back({{"dtype", p.dtype},
                      {"m", p.m},
                      {"n", p.n},
                      {"k", p.k},
                      {"TFLOPs", p.tflops},
                      {"cv", p.cv}});
    }
    out["gemm"] = std::move(gemm);
  }
  if (!profile.allreduce.empty()) {
    json points = json::array();
    for (const auto& p : profile.allreduce) {
      points.push_back({{"bytes", p.bytes}, {"busbw_GBps", p.GBps}, {"cv", p.cv}});
    }
    out["allreduce"] = {{"ranks", profile.allreduce_ranks}, {"points", std::move(points)}};
  }
  out["notes"] = profile.notes;
  return out;
}

}  // namespace gpubench::model
