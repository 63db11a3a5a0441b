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
#include "gpubench/vocabulary/figures.hpp"
#include "gpubench/vocabulary/verdicts.hpp"

namespace gpubench::model {

inline constexpr const char* hardware_schema = "gpubench.hardware/1";

namespace fig = vocabulary::figures;
using vocabulary::figure_def;

// Where a figure came from: measured on the machine, assumed from the catalog, or set by the
// user (--set KEY=VALUE); a component's ceiling may also be anchored, a default, ...
using vocabulary::basis;
using vocabulary::to_string;

struct figure {
  double value = 0;
  basis from = basis::catalog;
  std::string source;
  std::string note;
  bool uncertain = false;
  // The catalog assumed it (its status "assumed"): no measurement or publication gives it for
  // this GPU; a prediction resting on it carries a wider error band.
  bool assumed = false;
  // How far the repetitions it was measured from spread (their worst cv); 0 where it was not
  // measured. Above vocabulary::noisy_cv the figure is noisy and a sizing resting on it says so.
  double cv = 0;
};

// One measured GEMM rate (gemm benchmark, median over the GPUs that ran it).
struct gemm_point {
  std::string dtype;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double tflops = 0;
  double cv = 0;  // worst over the GPUs
};

// One measured allreduce bus bandwidth (nccl.all_reduce, out of place).
struct busbw_point {
  double bytes = 0;
  double GBps = 0;
  double cv = 0;
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
  // By full key (vocabulary::key_of); read and written through the figure_def overloads below.
  std::map<std::string, figure, std::less<>> figures;
  std::map<std::string, std::string, std::less<>> unknown;  // key -> why it is not known
  std::vector<gemm_point> gemm;
  std::vector<busbw_point> allreduce;
  int allreduce_ranks = 0;            // how many GPUs the measured allreduce ran on
  std::vector<busbw_point> alltoall;  // nccl.alltoall, out of place (expert parallelism)
  int alltoall_ranks = 0;
  std::vector<std::string> notes;
  network_fabric network;
  // For a bare GPU entry: the network per GPU of the catalog's systems built on that GPU (their
  // median), which a job on several nodes assumes when nothing states the network; and whence.
  std::optional<double> typical_network_gbps_per_gpu;
  std::string typical_network_from;

  // A figure (of a per-dtype family: at `dtype`), or nullptr / nullopt where the profile lacks it.
  [[nodiscard]] const figure* find(const figure_def& f, std::string_view dtype = {}) const;
  [[nodiscard]] std::optional<double> value(const figure_def& f, std::string_view dtype = {}) const;
  // The value in another unit of the figure's dimension: network.gbps in GB/s.
  [[nodiscard]] std::optional<double> value_in(const figure_def& f, const vocabulary::unit& u,
                                               std::string_view dtype = {}) const;
  // Why a figure is not known, where the catalog says; nullptr otherwise.
  [[nodiscard]] const std::string* why_unknown(const figure_def& f) const;
  void set(const figure_def& f, double value, basis from, std::string source, std::string note = "",
           std::string_view dtype = {});
  // By a full key read from a file or a command line (gpu.peak_tflops.fp16).
  [[nodiscard]] const figure* find_key(std::string_view key) const;
};

// The folder holding gpus/ and systems/ (under config_dir()).
[[nodiscard]] std::vector<std::string> catalog_names(std::string_view kind);  // "gpus"|"systems"
// Every NAME catalog:NAME takes: the systems, then the GPUs.
[[nodiscard]] std::vector<std::string> catalog_entry_names();

// "catalog:NAME", a results file (gpubench.results/1) or a profile file (gpubench.hardware/1).
// Throws input_error naming the file, the JSON path and what was expected.
[[nodiscard]] hardware_profile load_hardware(const std::string& spec);
[[nodiscard]] hardware_profile load_catalog(const std::string& name);
[[nodiscard]] hardware_profile parse_hardware(const json& doc, const std::string& file);

// Builds a profile from measured results; figures the run did not measure come from the catalog
// entry of the GPU it found (and are listed as catalog figures).
[[nodiscard]] hardware_profile profile_from_results(const results_document& doc,
                                                    const std::string& file);

// The catalog GPU entry for a device name as the driver reports it ("NVIDIA H100 80GB HBM3").
[[nodiscard]] std::optional<std::string> catalog_gpu_for_device(std::string_view device_name,
                                                                double memory_GiB);

// --set KEY=VALUE: a what-if change. `gpu.model=NAME` puts a catalog GPU under the profile; any
// figure of the vocabulary may be set. Throws input_error for an unknown key or a value out of
// range.
void apply_setting(hardware_profile& profile, const std::string& assignment);
// The same for one figure.
void apply_setting(hardware_profile& profile, const figure_def& f, double value);
// "gpu.model" and the what-if figures (vocabulary::figure_def::what_if), as --set lists them.
[[nodiscard]] const std::vector<std::string>& documented_settings();

[[nodiscard]] json to_json(const hardware_profile& profile);

}  // namespace gpubench::model
