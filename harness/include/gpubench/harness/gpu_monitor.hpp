// Live GPU state through NVML (loaded at run time): what benchmarks sample while they load a GPU,
// such as the PCIe link generation during a copy (idle links train down to save power).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/system.hpp"

namespace gpubench {

namespace detail {
class nvml_session;
struct nvml_device_opaque;
}  // namespace detail

// What a benchmark reads while it loads a GPU: seven NVML calls per GPU, so a sample costs little
// (the maxima of the link and clocks are in system_info, read once).
struct gpu_sample {
  pcie_link_info pcie;  // current gen and width
  gpu_clocks clocks;    // current SM and memory clocks
  std::optional<double> power_W;
  std::optional<int> temperature_C;
  std::vector<std::string> throttle_reasons;
};

// One GPU as a watcher sees it each interval (gpubench watch).
struct gpu_activity {
  unsigned index = 0;  // NVML's
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string uuid;
  std::string pci_bus_id;
  gpu_sample live;
  std::optional<int> gpu_utilization_percent;
  std::optional<int> memory_utilization_percent;
  std::optional<double> memory_used_GB;
  std::optional<double> memory_total_GB;
  std::optional<double> pcie_rx_GBps;  // host to GPU
  std::optional<double> pcie_tx_GBps;
  std::optional<std::uint64_t> nvlink_rx_bytes;  // since the driver loaded, all links; no NVLink:
  std::optional<std::uint64_t> nvlink_tx_bytes;  // nullopt
  std::vector<int> compute_pids;
};

class gpu_monitor {
 public:
  // nullptr, with the reason in `why_not`, where NVML cannot be used.
  static std::unique_ptr<gpu_monitor> open(std::string& why_not);
  gpu_monitor(const gpu_monitor&) = delete;
  gpu_monitor& operator=(const gpu_monitor&) = delete;
  ~gpu_monitor();

  // The GPU with this PCI bus id ("0000:1b:00.0"), now; nullopt if NVML does not know it.
  [[nodiscard]] std::optional<gpu_sample> sample(const std::string& pci_bus_id) const;
  // Every GPU NVML sees, now.
  [[nodiscard]] std::vector<gpu_activity> activity() const;

 private:
  explicit gpu_monitor(std::unique_ptr<detail::nvml_session> session);
  std::unique_ptr<detail::nvml_session> session_;
  std::vector<std::string> bus_ids_;                  // by NVML index
  std::vector<std::string> uuids_;                    // by NVML index
  std::vector<std::string> names_;                    // by NVML index
  std::vector<double> memory_total_GB_;               // by NVML index
  std::vector<detail::nvml_device_opaque*> devices_;  // NVML's handles, by NVML index
};

}  // namespace gpubench
