// NVML, loaded at run time with dlopen("libnvidia-ml.so.1"): no link-time dependency, so one
// binary runs on machines with and without a driver. Only the calls gpubench uses are declared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "detail/shared_library.hpp"
#include "gpubench/core/system.hpp"

namespace gpubench::detail {

struct nvml_device_opaque;  // nvmlDevice_t points to one

// What changes while a GPU works: all that a benchmark reads while it loads one (seven NVML calls,
// so sampling costs little and stays outside timed windows where the host clock times).
struct nvml_live_state {
  pcie_link_info pcie;  // current gen and width; max_* only in a full query
  gpu_clocks clocks;    // current SM and memory clocks; max_* only in a full query
  std::optional<double> power_W;
  std::optional<int> temperature_C;
  std::optional<std::uint64_t> throttle_mask;
};

// What a watcher reads each interval beyond the live state: how busy the GPU is, its memory in
// use, its PCIe traffic and which processes hold a context on it.
struct nvml_activity {
  std::optional<int> gpu_utilization_percent;     // share of the last sample period a kernel ran
  std::optional<int> memory_utilization_percent;  // share of it the memory was read or written
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<double> pcie_rx_MBps;  // to the GPU, over NVML's last 20 ms
  std::optional<double> pcie_tx_MBps;
  // NVLink data bytes since the driver loaded, summed over the links that report them (NVML's
  // NVLINK_THROUGHPUT_DATA fields, KiB); nullopt on a GPU without NVLink.
  std::optional<std::uint64_t> nvlink_rx_bytes;
  std::optional<std::uint64_t> nvlink_tx_bytes;
  std::vector<int> compute_pids;  // processes with a compute context on it
};

// What NVML says of one GPU at the moment of the call.
struct nvml_device_state {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // "0000:1b:00.0", lower case, 4-digit domain
  std::uint64_t memory_bytes = 0;
  nvml_live_state live;  // with the link's and clocks' maxima
  std::optional<double> power_limit_W;
  std::optional<bool> ecc_enabled;
  memory_error_info memory_errors;
  std::optional<int> nvlink_links_up;
};

class nvml_session {
 public:
  // Loads and initializes NVML. Returns nullptr and sets `why_not` when the library is absent or
  // initialization fails (no driver, no GPU).
  static std::unique_ptr<nvml_session> open(std::string& why_not);
  nvml_session(const nvml_session&) = delete;
  nvml_session& operator=(const nvml_session&) = delete;
  ~nvml_session();

  [[nodiscard]] std::string driver_version() const;
  [[nodiscard]] unsigned device_count() const;
  // Queries one GPU by NVML index; fields NVML cannot give are left empty.
  [[nodiscard]] nvml_device_state query(unsigned index) const;
  // NVML's handle of the GPU at `index` (nullptr if NVML has none), for sample().
  [[nodiscard]] nvml_device_opaque* device(unsigned index) const;
  // The live state only: link, clocks, power, temperature, throttle reasons.
  [[nodiscard]] nvml_live_state sample(nvml_device_opaque* device) const;
  // Utilisation, memory in use, PCIe throughput and compute processes.
  [[nodiscard]] nvml_activity activity(nvml_device_opaque* device) const;

  struct functions;

 private:
  void read_memory_errors(nvml_device_opaque* device, memory_error_info& out) const;
  void read_live(nvml_device_opaque* device, nvml_live_state& out) const;
  nvml_session(std::unique_ptr<shared_library> library, std::unique_ptr<functions> fns);
  std::unique_ptr<shared_library> library_;  // outlives fns_, which point into it
  std::unique_ptr<functions> fns_;
};

// Names of the clock-throttle reasons set in an NVML mask ("sw_power_cap", "hw_thermal_slowdown").
[[nodiscard]] std::vector<std::string> throttle_reason_names(std::uint64_t mask);

// Normalizes a PCI bus id to "dddd:bb:dd.f" in lower case (NVML gives 8-digit domains).
[[nodiscard]] std::string normalize_pci_bus_id(const std::string& id);

}  // namespace gpubench::detail
