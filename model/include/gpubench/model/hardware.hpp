// Hardware profiles (gpubench.hardware/1): the figures the sizing model consumes, each with where
// it came from. A profile is built from a results file (measured), from the catalog in
// configs/hardware/ (datasheet peaks and typical efficiencies) or from a user's profile file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"

namespace gpubench::model {

inline constexpr const char* hardware_schema = "gpubench.hardware/1";

// Where a figure came from: measured on the machine, assumed from the catalog, or set by the
// user (--set KEY=VALUE).
enum class basis { measured, catalog, user };
[[nodiscard]] std::string_view to_string(basis from);

struct figure {
  double value = 0;
  basis from = basis::catalog;
  std::string source;
  std::string note;
  bool uncertain = false;
};

// One measured GEMM rate (gemm benchmark, median over the GPUs that ran it).
struct gemm_point {
  std::string dtype;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double tflops = 0;
};

// One measured allreduce bus bandwidth (nccl.all_reduce, out of place).
struct busbw_point {
  double bytes = 0;
  double GBps = 0;
};

// How a system's nodes reach one another (the catalog's "network"); the rate per node is the
// figure network.gbps. Empty fields are not stated by the system's sources.
struct network_fabric {
  std::string fabric;  // "InfiniBand NDR (ConnectX-7)", "Ethernet (ENA)"
  int nics = 0;
  double nic_gbps = 0;
  std::string source;
  // "8 x 400 Gb/s InfiniBand NDR (ConnectX-7)"; "" when nothing is stated.
  [[nodiscard]] std::string describe() const;
};

struct hardware_profile {
  std::string name;
  std::string kind;  // gpu, system, measured, file
  std::string description;
  std::string origin;     // catalog:NAME or the file it was read from
  std::string gpu_model;  // catalog GPU entry, "" when unknown
  int gpus_per_node = 1;
  bool scalable = false;  // a bare GPU entry: --gpus may set any count per node
  std::map<std::string, figure, std::less<>> figures;
  std::map<std::string, std::string, std::less<>> unknown;  // key -> why it is not known
  std::vector<gemm_point> gemm;
  std::vector<busbw_point> allreduce;
  int allreduce_ranks = 0;  // how many GPUs the measured allreduce ran on
  std::vector<std::string> notes;
  network_fabric network;

  [[nodiscard]] const figure* find(std::string_view key) const;
  [[nodiscard]] std::optional<double> value(std::string_view key) const;
  void set(const std::string& key, double value, basis from, std::string source,
           std::string note = "");
};

// The folder holding gpus/ and systems/ (under config_dir()).
[[nodiscard]] std::vector<std::string> catalog_names(std::string_view kind);  // "gpus"|"systems"

// "catalog:NAME", a results file (gpubench.results/1) or a profile file (gpubench.hardware/1).
// Throws input_error naming the file, the JSON path and what was expected.
[[nodiscard]] hardware_profile load_hardware(const std::string& spec);
[[nodiscard]] hardware_profile load_catalog(const std::string& name);
[[nodiscard]] hardware_profile parse_hardware(const json& doc, const std::string& file);

// Builds a profile from measured results; figures the run did not measure come from the catalog
// entry of the GPU it found (and are listed as catalog figures).
[[nodiscard]] hardware_profile profile_from_results(const results_document& doc,
                                                    const std::string& file);

// The benchmark ids profile_from_results reads figures from (a test checks they exist).
[[nodiscard]] std::vector<std::string> figure_source_benchmarks();

// The catalog GPU entry for a device name as the driver reports it ("NVIDIA H100 80GB HBM3").
[[nodiscard]] std::optional<std::string> catalog_gpu_for_device(std::string_view device_name,
                                                                double memory_GB);

// --set KEY=VALUE: a what-if change. `gpu.model=NAME` puts a catalog GPU under the profile.
// Throws input_error for an unknown key or a value out of range.
void apply_setting(hardware_profile& profile, const std::string& assignment);
[[nodiscard]] const std::vector<std::string>& documented_settings();

[[nodiscard]] json to_json(const hardware_profile& profile);

}  // namespace gpubench::model
