#include "detail/nvml.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace gpubench::detail {

namespace {
// The subset of nvml.h gpubench uses. Layouts and values match the public header.
using nvml_return = int;
constexpr nvml_return nvml_success = 0;
using nvml_device = nvml_device_opaque*;
struct nvml_pci_info {  // nvmlPciInfo_t as used by nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};
struct nvml_memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvml_utilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};
struct nvml_process_info {  // nvmlProcessInfo_t (v2 and v3 share this layout)
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
// nvmlFieldValue_t; the value is an 8-byte union, read here as unsigned long long (the type of
// the NVLink throughput fields).
struct nvml_field_value {
  unsigned field_id;
  unsigned scope_id;  // the link, for per-link fields
  long long timestamp;
  long long latency_usec;
  int value_type;
  nvml_return nvml_return_code;
  unsigned long long value;
};
constexpr unsigned nvml_fi_nvlink_throughput_data_tx = 138;
constexpr unsigned nvml_fi_nvlink_throughput_data_rx = 139;
constexpr int nvml_pcie_util_tx_bytes = 0;
constexpr int nvml_pcie_util_rx_bytes = 1;
constexpr int nvml_error_insufficient_size = 7;
constexpr int nvml_temperature_gpu = 0;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;
constexpr int nvml_feature_enabled = 1;
constexpr unsigned nvml_nvlink_max_links = 18;
constexpr int nvml_memory_error_uncorrected = 1;
constexpr int nvml_volatile_ecc = 0;
constexpr int nvml_aggregate_ecc = 1;
}  // namespace

struct nvml_session::functions {
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  const char* (*error_string)(nvml_return) = nullptr;
  nvml_return (*system_get_driver_version)(char*, unsigned) = nullptr;
  nvml_return (*device_get_count)(unsigned*) = nullptr;
  nvml_return (*device_get_handle_by_index)(unsigned, nvml_device*) = nullptr;
  nvml_return (*device_get_name)(nvml_device, char*, unsigned) = nullptr;
  nvml_return (*device_get_uuid)(nvml_device, char*, unsigned) = nullptr;
  nvml_return (*device_get_pci_info)(nvml_device, nvml_pci_info*) = nullptr;
  nvml_return (*device_get_memory_info)(nvml_device, nvml_memory*) = nullptr;
  nvml_return (*device_get_curr_pcie_link_generation)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_curr_pcie_link_width)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_max_pcie_link_generation)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_max_pcie_link_width)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_power_management_limit)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_power_usage)(nvml_device, unsigned*) = nullptr;
  nvml_return (*device_get_temperature)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*device_get_current_clocks_throttle_reasons)(nvml_device,
                                                            unsigned long long*) = nullptr;
  nvml_return (*device_get_ecc_mode)(nvml_device, int*, int*) = nullptr;
  nvml_return (*device_get_nvlink_state)(nvml_device, unsigned, int*) = nullptr;
  nvml_return (*device_get_total_ecc_errors)(nvml_device, int, int, unsigned long long*) = nullptr;
  nvml_return (*device_get_remapped_rows)(nvml_device, unsigned*, unsigned*, unsigned*,
                                          unsigned*) = nullptr;
  nvml_return (*device_get_retired_pages_pending_status)(nvml_device, int*) = nullptr;
  nvml_return (*device_get_clock_info)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*device_get_max_clock_info)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*device_get_utilization_rates)(nvml_device, nvml_utilization*) = nullptr;
  nvml_return (*device_get_pcie_throughput)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*device_get_compute_running_processes)(nvml_device, unsigned*,
                                                      nvml_process_info*) = nullptr;
  nvml_return (*device_get_field_values)(nvml_device, int, nvml_field_value*) = nullptr;
};

std::unique_ptr<nvml_session> nvml_session::open(std::string& why_not) {
  std::string load_error;
  auto library = shared_library::open({"libnvidia-ml.so.1"}, load_error);
  if (!library) {
    why_not = "libnvidia-ml.so.1 not loaded (" + load_error + ")";
    return nullptr;
  }
  auto fns = std::make_unique<functions>();
  const bool required =
      library->bind("nvmlInit_v2", fns->init) && library->bind("nvmlShutdown", fns->shutdown) &&
      library->bind("nvmlErrorString", fns->error_string) &&
      library->bind("nvmlDeviceGetCount_v2", fns->device_get_count) &&
      library->bind("nvmlDeviceGetHandleByIndex_v2", fns->device_get_handle_by_index);
  if (!required) {
    why_not = "NVML library lacks nvmlInit_v2 or another required symbol (driver too old?)";
    return nullptr;
  }
  const auto bind_optional = [&](const char* symbol, auto& fn) { (void)library->bind(symbol, fn); };
  bind_optional("nvmlSystemGetDriverVersion", fns->system_get_driver_version);
  bind_optional("nvmlDeviceGetName", fns->device_get_name);
  bind_optional("nvmlDeviceGetUUID", fns->device_get_uuid);
  bind_optional("nvmlDeviceGetPciInfo_v3", fns->device_get_pci_info);
  bind_optional("nvmlDeviceGetMemoryInfo", fns->device_get_memory_info);
  bind_optional("nvmlDeviceGetCurrPcieLinkGeneration", fns->device_get_curr_pcie_link_generation);
  bind_optional("nvmlDeviceGetCurrPcieLinkWidth", fns->device_get_curr_pcie_link_width);
  bind_optional("nvmlDeviceGetMaxPcieLinkGeneration", fns->device_get_max_pcie_link_generation);
  bind_optional("nvmlDeviceGetMaxPcieLinkWidth", fns->device_get_max_pcie_link_width);
  bind_optional("nvmlDeviceGetPowerManagementLimit", fns->device_get_power_management_limit);
  bind_optional("nvmlDeviceGetPowerUsage", fns->device_get_power_usage);
  bind_optional("nvmlDeviceGetTemperature", fns->device_get_temperature);
  bind_optional("nvmlDeviceGetCurrentClocksThrottleReasons",
                fns->device_get_current_clocks_throttle_reasons);
  bind_optional("nvmlDeviceGetEccMode", fns->device_get_ecc_mode);
  bind_optional("nvmlDeviceGetNvLinkState", fns->device_get_nvlink_state);
  bind_optional("nvmlDeviceGetTotalEccErrors", fns->device_get_total_ecc_errors);
  bind_optional("nvmlDeviceGetRemappedRows", fns->device_get_remapped_rows);
  bind_optional("nvmlDeviceGetRetiredPagesPendingStatus",
                fns->device_get_retired_pages_pending_status);
  bind_optional("nvmlDeviceGetClockInfo", fns->device_get_clock_info);
  bind_optional("nvmlDeviceGetMaxClockInfo", fns->device_get_max_clock_info);
  bind_optional("nvmlDeviceGetUtilizationRates", fns->device_get_utilization_rates);
  bind_optional("nvmlDeviceGetPcieThroughput", fns->device_get_pcie_throughput);
  bind_optional("nvmlDeviceGetComputeRunningProcesses_v3",
                fns->device_get_compute_running_processes);
  bind_optional("nvmlDeviceGetFieldValues", fns->device_get_field_values);

  if (const nvml_return rc = fns->init(); rc != nvml_success) {
    const char* text = fns->error_string(rc);
    why_not = std::string("nvmlInit_v2 failed: ") + (text ? text : "unknown error") +
              " (NVML_ERROR code " + std::to_string(rc) + ")";
    return nullptr;
  }
  return std::unique_ptr<nvml_session>(new nvml_session(std::move(library), std::move(fns)));
}

nvml_session::nvml_session(std::unique_ptr<shared_library> library, std::unique_ptr<functions> fns)
    : library_(std::move(library)), fns_(std::move(fns)) {}

nvml_session::~nvml_session() {
  fns_->shutdown();
}

std::string nvml_session::driver_version() const {
  std::array<char, 96> buffer{};
  if (fns_->system_get_driver_version &&
      fns_->system_get_driver_version(buffer.data(), buffer.size()) == nvml_success) {
    return buffer.data();
  }
  return {};
}

unsigned nvml_session::device_count() const {
  unsigned count = 0;
  if (fns_->device_get_count(&count) != nvml_success) {
    return 0;
  }
  return count;
}

void nvml_session::read_memory_errors(nvml_device_opaque* device, memory_error_info& out) const {
  unsigned long long count = 0;
  if (fns_->device_get_total_ecc_errors) {
    if (fns_->device_get_total_ecc_errors(device, nvml_memory_error_uncorrected, nvml_volatile_ecc,
                                          &count) == nvml_success) {
      out.uncorrected_volatile = count;
    }
    if (fns_->device_get_total_ecc_errors(device, nvml_memory_error_uncorrected, nvml_aggregate_ecc,
                                          &count) == nvml_success) {
      out.uncorrected_aggregate = count;
    }
  }
  unsigned corrected_rows = 0;
  unsigned uncorrected_rows = 0;
  unsigned pending = 0;
  unsigned failure = 0;
  if (fns_->device_get_remapped_rows &&
      fns_->device_get_remapped_rows(device, &corrected_rows, &uncorrected_rows, &pending,
                                     &failure) == nvml_success) {
    out.remapped_rows_uncorrectable = static_cast<int>(uncorrected_rows);
    out.row_remap_pending = pending != 0;
    out.row_remap_failure = failure != 0;
  }
  int retired_pending = 0;
  if (fns_->device_get_retired_pages_pending_status &&
      fns_->device_get_retired_pages_pending_status(device, &retired_pending) == nvml_success) {
    out.retired_pages_pending = retired_pending == nvml_feature_enabled;
  }
}

nvml_device_state nvml_session::query(unsigned index) const {
  nvml_device_state state;
  const nvml_device device = this->device(index);
  if (device == nullptr) {
    return state;
  }
  std::array<char, 256> text{};
  if (fns_->device_get_name && fns_->device_get_name(device, text.data(), 96) == nvml_success) {
    state.name = text.data();
  }
  text.fill(0);
  if (fns_->device_get_uuid && fns_->device_get_uuid(device, text.data(), 96) == nvml_success) {
    state.uuid = text.data();
  }
  nvml_pci_info pci{};
  if (fns_->device_get_pci_info && fns_->device_get_pci_info(device, &pci) == nvml_success) {
    state.pci_bus_id = normalize_pci_bus_id(pci.bus_id);
  }
  nvml_memory memory{};
  if (fns_->device_get_memory_info &&
      fns_->device_get_memory_info(device, &memory) == nvml_success) {
    state.memory_bytes = memory.total;
  }
  read_live(device, state.live);
  unsigned value = 0;
  if (fns_->device_get_max_pcie_link_generation &&
      fns_->device_get_max_pcie_link_generation(device, &value) == nvml_success) {
    state.live.pcie.max_gen = static_cast<int>(value);
  }
  if (fns_->device_get_max_pcie_link_width &&
      fns_->device_get_max_pcie_link_width(device, &value) == nvml_success) {
    state.live.pcie.max_width = static_cast<int>(value);
  }
  if (fns_->device_get_power_management_limit &&
      fns_->device_get_power_management_limit(device, &value) == nvml_success) {
    state.power_limit_W = value / 1000.0;
  }
  int ecc_current = 0;
  int ecc_pending = 0;
  if (fns_->device_get_ecc_mode &&
      fns_->device_get_ecc_mode(device, &ecc_current, &ecc_pending) == nvml_success) {
    state.ecc_enabled = ecc_current == nvml_feature_enabled;
  }
  read_memory_errors(device, state.memory_errors);
  if (fns_->device_get_nvlink_state) {
    int up = 0;
    bool any_answer = false;
    for (unsigned link = 0; link < nvml_nvlink_max_links; ++link) {
      int active = 0;
      if (fns_->device_get_nvlink_state(device, link, &active) == nvml_success) {
        any_answer = true;
        up += active == nvml_feature_enabled ? 1 : 0;
      }
    }
    if (any_answer) {
      state.nvlink_links_up = up;
    }
  }
  if (fns_->device_get_max_clock_info &&
      fns_->device_get_max_clock_info(device, nvml_clock_sm, &value) == nvml_success) {
    state.live.clocks.sm_max_mhz = static_cast<int>(value);
  }
  if (fns_->device_get_max_clock_info &&
      fns_->device_get_max_clock_info(device, nvml_clock_mem, &value) == nvml_success) {
    state.live.clocks.memory_max_mhz = static_cast<int>(value);
  }
  return state;
}

void nvml_session::read_live(nvml_device_opaque* device, nvml_live_state& out) const {
  // Seven calls: what a benchmark may read while it loads the GPU (docs/methodology.md).
  unsigned value = 0;
  if (fns_->device_get_curr_pcie_link_generation &&
      fns_->device_get_curr_pcie_link_generation(device, &value) == nvml_success) {
    out.pcie.gen = static_cast<int>(value);
  }
  if (fns_->device_get_curr_pcie_link_width &&
      fns_->device_get_curr_pcie_link_width(device, &value) == nvml_success) {
    out.pcie.width = static_cast<int>(value);
  }
  if (fns_->device_get_clock_info &&
      fns_->device_get_clock_info(device, nvml_clock_sm, &value) == nvml_success) {
    out.clocks.sm_mhz = static_cast<int>(value);
  }
  if (fns_->device_get_clock_info &&
      fns_->device_get_clock_info(device, nvml_clock_mem, &value) == nvml_success) {
    out.clocks.memory_mhz = static_cast<int>(value);
  }
  if (fns_->device_get_power_usage &&
      fns_->device_get_power_usage(device, &value) == nvml_success) {
    out.power_W = value / 1000.0;
  }
  if (fns_->device_get_temperature &&
      fns_->device_get_temperature(device, nvml_temperature_gpu, &value) == nvml_success) {
    out.temperature_C = static_cast<int>(value);
  }
  unsigned long long reasons = 0;
  if (fns_->device_get_current_clocks_throttle_reasons &&
      fns_->device_get_current_clocks_throttle_reasons(device, &reasons) == nvml_success) {
    out.throttle_mask = reasons;
  }
}

nvml_device_opaque* nvml_session::device(unsigned index) const {
  nvml_device handle = nullptr;
  return fns_->device_get_handle_by_index(index, &handle) == nvml_success ? handle : nullptr;
}

nvml_activity nvml_session::activity(nvml_device_opaque* device) const {
  nvml_activity out;
  if (device == nullptr) return out;
  nvml_utilization utilization{};
  if (fns_->device_get_utilization_rates &&
      fns_->device_get_utilization_rates(device, &utilization) == nvml_success) {
    out.gpu_utilization_percent = static_cast<int>(utilization.gpu);
    out.memory_utilization_percent = static_cast<int>(utilization.memory);
  }
  nvml_memory memory{};
  if (fns_->device_get_memory_info &&
      fns_->device_get_memory_info(device, &memory) == nvml_success) {
    out.memory_used_bytes = memory.used;
  }
  unsigned kB_per_s = 0;
  if (fns_->device_get_pcie_throughput &&
      fns_->device_get_pcie_throughput(device, nvml_pcie_util_rx_bytes, &kB_per_s) ==
          nvml_success) {
    out.pcie_rx_MBps = kB_per_s / 1000.0;
  }
  if (fns_->device_get_pcie_throughput &&
      fns_->device_get_pcie_throughput(device, nvml_pcie_util_tx_bytes, &kB_per_s) ==
          nvml_success) {
    out.pcie_tx_MBps = kB_per_s / 1000.0;
  }
  if (fns_->device_get_field_values) {
    // Every link's TX and RX counter in one call; a link that is absent or down says so in its
    // own return code.
    std::array<nvml_field_value, std::size_t{2} * nvml_nvlink_max_links> fields{};
    for (std::size_t link = 0; link < nvml_nvlink_max_links; ++link) {
      fields[2 * link].field_id = nvml_fi_nvlink_throughput_data_tx;
      fields[2 * link + 1].field_id = nvml_fi_nvlink_throughput_data_rx;
      fields[2 * link].scope_id = fields[2 * link + 1].scope_id = static_cast<unsigned>(link);
    }
    if (fns_->device_get_field_values(device, static_cast<int>(fields.size()), fields.data()) ==
        nvml_success) {
      for (const nvml_field_value& f : fields) {
        if (f.nvml_return_code != nvml_success) continue;
        auto& total = f.field_id == nvml_fi_nvlink_throughput_data_tx ? out.nvlink_tx_bytes
                                                                      : out.nvlink_rx_bytes;
        total = total.value_or(0) + f.value * 1024;
      }
    }
  }
  if (fns_->device_get_compute_running_processes) {
    // Asked with room for 64; a GPU with more contexts than that reports the first 64.
    std::array<nvml_process_info, 64> infos{};
    unsigned count = static_cast<unsigned>(infos.size());
    const nvml_return rc = fns_->device_get_compute_running_processes(device, &count, infos.data());
    if (rc == nvml_success || rc == nvml_error_insufficient_size) {
      count = std::min<unsigned>(count, static_cast<unsigned>(infos.size()));
      for (unsigned i = 0; i < count; ++i)
        out.compute_pids.push_back(static_cast<int>(infos[i].pid));
    }
  }
  return out;
}

nvml_live_state nvml_session::sample(nvml_device_opaque* device) const {
  nvml_live_state state;
  if (device != nullptr) read_live(device, state);
  return state;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  // nvmlClocksThrottleReason* bits from nvml.h.
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 9> names{{
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  }};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : names) {
    known |= bit;
    if ((mask & bit) != 0) {
      out.emplace_back(name);
    }
  }
  if ((mask & ~known) != 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "other_0x%llx",
                  static_cast<unsigned long long>(mask & ~known));
    out.emplace_back(buffer);
  }
  return out;
}

std::string normalize_pci_bus_id(const std::string& id) {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    std::string lower = id;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%x", domain & 0xffffu, bus, device,
                function);
  return buffer;
}

}  // namespace gpubench::detail
