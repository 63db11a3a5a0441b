#include "gpubench/harness/gpu_monitor.hpp"

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
    const detail::nvml_device_state state = session_->query(i);
    bus_ids_.push_back(state.pci_bus_id);
    uuids_.push_back(state.uuid);
    names_.push_back(state.name);
    memory_total_GB_.push_back(static_cast<double>(state.memory_bytes) / 1e9);
    devices_.push_back(session_->device(i));
  }
}

gpu_monitor::~gpu_monitor() = default;

namespace {

gpu_sample to_sample(const detail::nvml_live_state& state) {
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

}  // namespace

std::optional<gpu_sample> gpu_monitor::sample(const std::string& pci_bus_id) const {
  const auto it = std::find(bus_ids_.begin(), bus_ids_.end(), pci_bus_id);
  if (it == bus_ids_.end()) {
    return std::nullopt;
  }
  return to_sample(session_->sample(devices_[static_cast<std::size_t>(it - bus_ids_.begin())]));
}

std::vector<gpu_activity> gpu_monitor::activity() const {
  std::vector<gpu_activity> out;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i] == nullptr) continue;
    const detail::nvml_activity a = session_->activity(devices_[i]);
    gpu_activity g;
    g.index = static_cast<unsigned>(i);
    g.uuid = uuids_[i];
    g.name = names_[i];
    g.pci_bus_id = bus_ids_[i];
    g.live = to_sample(session_->sample(devices_[i]));
    g.gpu_utilization_percent = a.gpu_utilization_percent;
    g.memory_utilization_percent = a.memory_utilization_percent;
    if (a.memory_used_bytes) g.memory_used_GB = static_cast<double>(*a.memory_used_bytes) / 1e9;
    if (memory_total_GB_[i] > 0) g.memory_total_GB = memory_total_GB_[i];
    if (a.pcie_rx_MBps) g.pcie_rx_GBps = *a.pcie_rx_MBps / 1000.0;
    if (a.pcie_tx_MBps) g.pcie_tx_GBps = *a.pcie_tx_MBps / 1000.0;
    g.nvlink_rx_bytes = a.nvlink_rx_bytes;
    g.nvlink_tx_bytes = a.nvlink_tx_bytes;
    g.compute_pids = a.compute_pids;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace gpubench
