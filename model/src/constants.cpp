// The model's named constants (configs/model/constants.json): what no microbenchmark measures,
// fitted on the calibration set or taken from sources (docs/model.md).
#include <algorithm>

#include "gpubench/config_paths.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/json_reader.hpp"
#include "gpubench/model/model.hpp"

namespace gpubench::model {

namespace {

struct constant_field {
  const char* name;
  double constants::*member;
};

constexpr constant_field constant_fields[] = {
    {"matmul_efficiency", &constants::matmul_efficiency},
    {"conv_efficiency", &constants::conv_efficiency},
    {"memory_efficiency", &constants::memory_efficiency},
    {"kernel_overhead_us", &constants::kernel_overhead_us},
    {"comm_overlap", &constants::comm_overlap},
    {"loader_efficiency", &constants::loader_efficiency},
    {"page_cache_fraction", &constants::page_cache_fraction},
    {"network_efficiency", &constants::network_efficiency},
    {"nvlink_busbw_fraction", &constants::nvlink_busbw_fraction},
    {"pcie_busbw_fraction", &constants::pcie_busbw_fraction},
    {"allreduce_latency_us", &constants::allreduce_latency_us},
    {"ddp_bucket_bytes", &constants::ddp_bucket_bytes},
    {"default_augment_per_core", &constants::default_augment_per_core},
    {"default_network_gbps", &constants::default_network_gbps},
    {"max_network_gbps_per_gpu", &constants::max_network_gbps_per_gpu},
    {"default_launch_latency_us", &constants::default_launch_latency_us},
    {"loader_cores_reserved_per_gpu", &constants::loader_cores_reserved_per_gpu},
};

}  // namespace

const std::vector<std::string>& constants::fitted_names() {
  static const std::vector<std::string> names{"matmul_efficiency", "conv_efficiency",
                                              "memory_efficiency", "comm_overlap"};
  return names;
}

double& constants::at(const std::string& name) {
  for (const auto& field : constant_fields) {
    if (name == field.name) return this->*field.member;
  }
  throw input_error("unknown model constant '" + name + "'");
}

double constants::at(const std::string& name) const {
  return const_cast<constants*>(this)->at(name);
}

constants parse_constants(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "fitted_on", "constants"});
  if (root.get_string("schema") != "gpubench.model-constants/1") {
    root.fail("schema", "\"gpubench.model-constants/1\"");
  }
  constants c;
  const json_reader table = root.member("constants");
  for (const auto& field : constant_fields) {
    const json_reader entry = table.member(field.name);
    entry.expect_object({"value", "fitted", "source"});
    c.*field.member = entry.get_number("value", 0, 1e12);
    c.sources[field.name] = entry.find_string("source").value_or("");
  }
  for (const auto& item : table.node().items()) {
    const std::string& key = item.key();
    if (std::none_of(std::begin(constant_fields), std::end(constant_fields),
                     [&key](const constant_field& f) { return key == f.name; })) {
      table.fail(key, "a known model constant");
    }
  }
  return c;
}

constants load_constants() {
  const auto path = config_dir() / "model" / "constants.json";
  return parse_constants(read_json_file(path), path.string());
}

json to_json(const constants& c) {
  json out = json::object();
  for (const auto& field : constant_fields) out[field.name] = c.*field.member;
  return out;
}

}  // namespace gpubench::model
