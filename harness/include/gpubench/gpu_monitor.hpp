// Live GPU state through NVML (loaded at run time): what benchmarks sample while they load a GPU,
// such as the PCIe link generation during a copy (idle links train down to save power).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/system.hpp"

namespace gpubench {

namespace detail {
class nvml_session;
}

struct gpu_sample {
  pcie_link_info pcie;
  gpu_clocks clocks;
  std::optional<double> power_W;
  std::optional<int> temperature_C;
  std::vector<std::string> throttle_reasons;
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

 private:
  explicit gpu_monitor(std::unique_ptr<detail::nvml_session> session);
  std::unique_ptr<detail::nvml_session> session_;
  std::vector<std::string> bus_ids_;  // by NVML index
};

}  // namespace gpubench
