#include "gpubench/gpu_monitor.hpp"

#include <algorithm>

#include "detail/nvml.hpp"

namespace gpubench {

std::unique_ptr<gpu_monitor> gpu_monitor::open(std::string& why_not) {
  auto session = detail::nvml_session::open(why_not);
  if (!session) {
    return nullptr;
  }
  return std::unique_ptr<gpu_monitor>(new gpu_monitor(std::move(session)));
}

gpu_monitor::gpu_monitor(std::unique_ptr<detail::nvml_session> session)
    : session_(std::move(session)) {
  for (unsigned i = 0; i < session_->device_count(); ++i) {
    bus_ids_.push_back(session_->query(i).pci_bus_id);
    devices_.push_back(session_->device(i));
  }
}

gpu_monitor::~gpu_monitor() = default;

std::optional<gpu_sample> gpu_monitor::sample(const std::string& pci_bus_id) const {
  const auto it = std::find(bus_ids_.begin(), bus_ids_.end(), pci_bus_id);
  if (it == bus_ids_.end()) {
    return std::nullopt;
  }
  const detail::nvml_live_state state =
      session_->sample(devices_[static_cast<std::size_t>(it - bus_ids_.begin())]);
  gpu_sample s;
  s.pcie = state.pcie;
  s.clocks = state.clocks;
  s.power_W = state.power_W;
  s.temperature_C = state.temperature_C;
  if (state.throttle_mask) {
    s.throttle_reasons = detail::throttle_reason_names(*state.throttle_mask);
  }
  return s;
}

}  // namespace gpubench
