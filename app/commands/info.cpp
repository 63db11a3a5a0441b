// gpubench info: this machine as discovery reads it (the system block of a results file).
#include <iostream>

#include "../command.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/harness/build_info.hpp"
#include "gpubench/harness/discovery.hpp"

namespace gpubench::app {

namespace {
template <class T>
std::string or_unknown(const std::optional<T>& value, const std::string& unit = "") {
  if (!value) return "?";
  if constexpr (std::is_floating_point_v<T>) {
    return format_number(*value) + unit;
  } else {
    return std::to_string(*value) + unit;
  }
}

int info(bool as_json) {
  const system_info info = discover_system();
  if (as_json) {
    std::cout << json_text(json(info), 2) << "\n";
    return exit_ok;
  }
  std::cout << "host     " << info.host << " (" << info.os << ", " << info.kernel << ")\n";
  std::cout << "cpu      " << info.cpu.model << ": " << info.cpu.sockets << " socket(s), "
            << info.cpu.cores << " cores, " << info.cpu.threads << " threads, "
            << info.cpu.cores_available << " cores available to gpubench\n";
  std::string caches;
  for (const auto& c : info.cpu.caches) {
    caches += (caches.empty() ? "" : ", ") + std::string("L") + std::to_string(c.level) +
              (c.type == "instruction" ? "i"
               : c.type == "data"      ? "d"
                                       : "") +
              " " + format_bytes(c.size_bytes) + " x" + std::to_string(c.count);
  }
  std::cout << "caches   " << (caches.empty() ? "unknown" : caches) << "\n";
  for (const auto& node : info.numa) {
    std::cout << "numa     node " << node.index << ": " << format_bytes(node.memory_bytes)
              << ", cpus " << node.cpus << "\n";
  }
  std::cout << "memory   " << format_bytes(info.memory_bytes) << "\n";
  for (const auto& d : info.disks) {
    std::cout << "disk     " << d.name << ": " << (d.model.empty() ? "(no model)" : d.model) << ", "
              << format_bytes(d.size_bytes) << (d.nvme ? ", NVMe" : "")
              << (d.rotational ? ", rotational" : "") << "\n";
  }
  for (const auto& f : info.filesystems) {
    std::cout << "fs       " << f.mount_point << ": " << f.type << " on " << f.device << ", "
              << format_bytes(f.free_bytes) << " free of " << format_bytes(f.size_bytes) << "\n";
  }
  for (const auto& p : info.network_ports) {
    std::cout << "port     " << p.device << "/" << p.port << ": " << p.link_layer << " " << p.state
              << " (" << p.physical_state << ")"
              << (p.rate_Gbps ? ", " + format_number(*p.rate_Gbps) + " Gb/s" : std::string())
              << (p.width.empty() ? "" : " " + p.width) << (p.netdev.empty() ? "" : ", " + p.netdev)
              << (p.firmware.empty() ? "" : ", firmware " + p.firmware) << "\n";
  }
  if (info.gpus.empty()) {
    std::cout << "gpus     none: " << info.gpu_status.reason << "\n";
  }
  for (const auto& g : info.gpus) {
    std::cout << "gpu " << g.index << "    " << g.name << " (" << g.pci_bus_id << ", " << g.uuid
              << "), " << format_bytes(g.memory_bytes) << ", " << or_unknown(g.sm_count)
              << " SMs, cc " << (g.compute_capability.empty() ? "?" : g.compute_capability)
              << ", NUMA node " << or_unknown(g.numa_node) << "\n";
    if (g.pcie) {
      std::cout << "         PCIe gen " << or_unknown(g.pcie->gen) << " x"
                << or_unknown(g.pcie->width) << " (max gen " << or_unknown(g.pcie->max_gen) << " x"
                << or_unknown(g.pcie->max_width) << "), NVLink links up "
                << or_unknown(g.nvlink_links_up) << "\n";
    }
    std::cout << "         SM clock " << or_unknown(g.clocks.sm_mhz, " MHz") << " (max "
              << or_unknown(g.clocks.sm_max_mhz, " MHz") << "), power limit "
              << or_unknown(g.power_limit_W, " W") << ", " << or_unknown(g.temperature_C, " C")
              << ", ECC " << (g.ecc_enabled ? (*g.ecc_enabled ? "on" : "off") : "?")
              << ", throttle reasons: ";
    std::string reasons;
    for (const auto& r : g.throttle_reasons) reasons += (reasons.empty() ? "" : ",") + r;
    std::cout << (reasons.empty() ? "none" : reasons) << "\n";
  }
  std::cout << "driver   "
            << (info.gpu_status.driver_version.empty() ? "none" : info.gpu_status.driver_version)
            << "; CUDA: " << info.gpu_status.cuda << "; NVML: " << info.gpu_status.nvml << "\n";
  if (info.gpu_status.cublaslt) std::cout << "cuBLASLt " << *info.gpu_status.cublaslt << "\n";
  if (info.gpu_status.nccl) std::cout << "NCCL     " << *info.gpu_status.nccl << "\n";
  if (info.gpu_status.cuda_visible_devices) {
    std::cout << "CUDA_VISIBLE_DEVICES=" << *info.gpu_status.cuda_visible_devices << "\n";
  }
  std::cout << "gpubench " << version() << " (" << git_describe() << "), " << build_type();
  for (const auto& f : build_features()) std::cout << ", " << f;
  std::cout << "\n";
  return exit_ok;
}

}  // namespace

command add_info(CLI::App& app, const command_line& /*line*/) {
  auto as_json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("info", "Describe this machine: CPU, NUMA, RAM, disks, GPUs");
  sub->add_flag("--json", *as_json, "machine-readable output");
  return {sub, [as_json] { return info(*as_json); }};
}

}  // namespace gpubench::app
