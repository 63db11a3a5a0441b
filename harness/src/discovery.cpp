#include "gpubench/harness/discovery.hpp"

#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "detail/cuda_devices.hpp"
#include "detail/nvml.hpp"
#include "detail/procfs.hpp"
#include "gpubench/harness/cuda_libraries.hpp"
#include "gpubench/harness/gpu_assignment.hpp"
#include "gpubench/harness/thread_pool.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {

using detail::read_first_line;

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      return value;
    }
  }
  return "Linux";
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        return line.substr(line.find_first_not_of(' ', colon + 1));
      }
    }
  }
  return {};
}

std::string cpulist(hwloc_const_cpuset_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) {
    return {};
  }
  std::string out(text);
  std::free(text);  // NOLINT: hwloc allocates with malloc
  return out;
}

void discover_cpu_and_numa(system_info& info) {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) {
    return;
  }
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return;
  }
  info.cpu.sockets = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  info.cpu.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  info.cpu.threads = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  if (info.cpu.model.empty()) {
    if (hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0)) {
      if (const char* model = hwloc_obj_get_info_by_name(package, "CPUModel")) {
        info.cpu.model = model;
      }
    }
  }

  std::map<std::tuple<int, std::string, std::uint64_t>, int> caches;
  for (hwloc_obj_type_t type :
       {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
        HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE}) {
    const int n = hwloc_get_nbobjs_by_type(topology, type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topology, type, static_cast<unsigned>(i));
      const auto& attr = obj->attr->cache;
      const char* kind = attr.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                         : attr.type == HWLOC_OBJ_CACHE_DATA      ? "data"
                                                                  : "unified";
      ++caches[{static_cast<int>(attr.depth), kind, attr.size}];
    }
  }
  for (const auto& [key, count] : caches) {
    info.cpu.caches.push_back(
        cache_info{std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  }

  const int nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t node =
        hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    info.numa.push_back(numa_node_info{static_cast<int>(node->os_index),
                                       node->attr->numanode.local_memory, cpulist(node->cpuset)});
  }
  hwloc_topology_destroy(topology);
}

void discover_disks(system_info& info) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/block", ec)) {
    const std::string name = entry.path().filename().string();
    // Pseudo devices (loop, ram, zram, device-mapper) are not storage to benchmark.
    if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0 || name.rfind("zram", 0) == 0) {
      continue;
    }
    disk_info disk;
    disk.name = name;
    const detail::block_device_facts facts = detail::describe_block_device(entry.path());
    disk.model = facts.model;
    disk.nvme = facts.nvme;
    disk.rotational = facts.rotational;
    const std::string sectors = read_first_line(entry.path() / "size");
    if (!sectors.empty()) {
      disk.size_bytes = std::stoull(sectors) * 512ULL;  // sysfs counts 512-byte sectors
    }
    info.disks.push_back(std::move(disk));
  }
  std::sort(info.disks.begin(), info.disks.end(),
            [](const disk_info& a, const disk_info& b) { return a.name < b.name; });
}

void discover_filesystems(system_info& info) {
  static const std::set<std::string> pseudo{
      "proc",      "sysfs",      "cgroup",     "cgroup2",     "devpts",     "mqueue",
      "debugfs",   "tracefs",    "securityfs", "pstore",      "bpf",        "autofs",
      "hugetlbfs", "configfs",   "fusectl",    "binfmt_misc", "devtmpfs",   "nsfs",
      "efivarfs",  "rpc_pipefs", "selinuxfs",  "ramfs",       "fuse.lxcfs", "squashfs"};
  std::set<std::string> seen;
  for (const detail::mount_entry& m : detail::read_mounts()) {
    if (pseudo.count(m.type) != 0 || !seen.insert(m.mount_point).second) {
      continue;
    }
    struct statvfs stats {};
    if (statvfs(m.mount_point.c_str(), &stats) != 0 || stats.f_blocks == 0) {
      continue;
    }
    info.filesystems.push_back(
        filesystem_info{m.mount_point, m.device, m.type,
                        static_cast<std::uint64_t>(stats.f_blocks) * stats.f_frsize,
                        static_cast<std::uint64_t>(stats.f_bavail) * stats.f_frsize});
  }
}

std::optional<int> pci_numa_node(const std::string& bus_id) {
  const std::string text = read_first_line(fs::path("/sys/bus/pci/devices") / bus_id / "numa_node");
  if (text.empty()) {
    return std::nullopt;
  }
  const int node = std::stoi(text);
  return node >= 0 ? std::optional<int>(node) : std::nullopt;
}

void apply_nvml_state(gpu_info& gpu, const detail::nvml_device_state& state) {
  if (gpu.name.empty()) gpu.name = state.name;
  if (gpu.uuid.empty()) gpu.uuid = state.uuid;
  if (gpu.pci_bus_id.empty()) gpu.pci_bus_id = state.pci_bus_id;
  if (gpu.memory_bytes == 0) gpu.memory_bytes = state.memory_bytes;
  gpu.pcie = state.live.pcie;
  gpu.power_limit_W = state.power_limit_W;
  gpu.temperature_C = state.live.temperature_C;
  if (state.live.throttle_mask) {
    gpu.throttle_reasons = detail::throttle_reason_names(*state.live.throttle_mask);
  }
  if (state.ecc_enabled) gpu.ecc_enabled = state.ecc_enabled;
  gpu.memory_errors = state.memory_errors;
  gpu.nvlink_links_up = state.nvlink_links_up;
  const gpu_clocks& clocks = state.live.clocks;
  gpu.clocks.sm_mhz = clocks.sm_mhz;
  gpu.clocks.memory_mhz = clocks.memory_mhz;
  if (clocks.sm_max_mhz) gpu.clocks.sm_max_mhz = clocks.sm_max_mhz;
  if (clocks.memory_max_mhz) gpu.clocks.memory_max_mhz = clocks.memory_max_mhz;
}

void discover_gpus(system_info& info) {
  detail::cuda_device_list cuda = detail::list_cuda_devices();
  info.gpu_status.cuda = cuda.status;
  info.gpu_status.cuda_driver_version = cuda.driver_version;
  info.gpu_status.cuda_runtime_version = cuda.runtime_version;
  info.gpus = std::move(cuda.gpus);

  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    info.gpu_status.cuda_visible_devices = visible;
  }
  std::string nvml_problem;
  const auto nvml = detail::nvml_session::open(nvml_problem);
  if (nvml) {
    info.gpu_status.nvml = "ok";
    info.gpu_status.driver_version = nvml->driver_version();
    const bool cuda_usable = info.gpu_status.cuda == "ok";
    std::vector<detail::nvml_device_state> states;
    std::vector<std::string> uuids;
    for (unsigned i = 0; i < nvml->device_count(); ++i) {
      states.push_back(nvml->query(i));
      uuids.push_back(states.back().uuid);
    }
    info.gpu_status.nvml_gpu_count = static_cast<int>(states.size());
    // Where CUDA cannot list the GPUs, NVML's list stands in, cut to what CUDA would see.
    const std::vector<bool> visible =
        cuda_visible_mask(info.gpu_status.cuda_visible_devices, uuids);
    for (std::size_t i = 0; i < states.size(); ++i) {
      const detail::nvml_device_state& state = states[i];
      auto match = std::find_if(info.gpus.begin(), info.gpus.end(), [&](const gpu_info& g) {
        return !state.pci_bus_id.empty() && g.pci_bus_id == state.pci_bus_id;
      });
      if (match != info.gpus.end()) {
        apply_nvml_state(*match, state);
      } else if (!cuda_usable && visible[i]) {
        // CUDA cannot drive it, but the user should still see what is in the box.
        gpu_info gpu;
        gpu.index = static_cast<int>(i);
        apply_nvml_state(gpu, state);
        info.gpus.push_back(std::move(gpu));
      }
    }
  } else {
    info.gpu_status.nvml = nvml_problem;
  }
  if (info.gpu_status.cuda == "ok") {
    // Loaded only where a GPU can use them (cuBLASLt takes a tenth of a second to load).
    info.gpu_status.cublaslt = cuda::cublaslt_status();
    info.gpu_status.nccl = cuda::nccl_status();
  }
  for (auto& gpu : info.gpus) {
    if (!gpu.numa_node && !gpu.pci_bus_id.empty()) {
      gpu.numa_node = pci_numa_node(gpu.pci_bus_id);
    }
  }
  if (info.gpus.empty()) {
    // The short form; gpu_status.cuda and .nvml keep the full messages.
    const auto first_clause = [](const std::string& text) {
      const auto end = text.find_first_of("(;");
      std::string out = text.substr(0, end);
      while (!out.empty() && out.back() == ' ') out.pop_back();
      return out;
    };
    info.gpu_status.reason = "no GPU found (CUDA: " + first_clause(info.gpu_status.cuda) +
                             "; NVML: " + first_clause(info.gpu_status.nvml) + ")";
  }
}

}  // namespace

namespace {

// "4: ACTIVE" -> "ACTIVE" (sysfs gives the number and the name).
std::string after_colon(const std::string& text) {
  const auto colon = text.find(':');
  std::string out = colon == std::string::npos ? text : text.substr(colon + 1);
  out.erase(0, out.find_first_not_of(' '));
  return out;
}

// InfiniBand and RoCE ports. GPUBENCH_INFINIBAND_DIR stands in for /sys/class/infiniband (tests).
void discover_network_ports(system_info& info) {
  const char* dir = std::getenv("GPUBENCH_INFINIBAND_DIR");
  const fs::path root = dir != nullptr && *dir != '\0' ? fs::path(dir) : "/sys/class/infiniband";
  std::error_code ec;
  for (const auto& device : fs::directory_iterator(root, ec)) {
    const std::string firmware = read_first_line(device.path() / "fw_ver");
    std::string netdev;
    for (const auto& net : fs::directory_iterator(device.path() / "device" / "net", ec)) {
      netdev = net.path().filename().string();
    }
    for (const auto& p : fs::directory_iterator(device.path() / "ports", ec)) {
      network_port port;
      port.device = device.path().filename().string();
      try {
        port.port = std::stoi(p.path().filename().string());
      } catch (const std::exception&) {
        continue;
      }
      port.link_layer = read_first_line(p.path() / "link_layer");
      port.state = after_colon(read_first_line(p.path() / "state"));
      port.physical_state = after_colon(read_first_line(p.path() / "phys_state"));
      // "400 Gb/sec (4X NDR)"
      const std::string rate = read_first_line(p.path() / "rate");
      try {
        if (!rate.empty()) port.rate_Gbps = std::stod(rate);
      } catch (const std::exception&) {
      }
      if (const auto open = rate.find('('); open != std::string::npos) {
        port.width = rate.substr(open + 1, rate.find(' ', open) - open - 1);
      }
      port.firmware = firmware;
      port.netdev = netdev;
      info.network_ports.push_back(std::move(port));
    }
  }
  std::sort(info.network_ports.begin(), info.network_ports.end(),
            [](const network_port& a, const network_port& b) {
              return std::tie(a.device, a.port) < std::tie(b.device, b.port);
            });
}

}  // namespace

system_info discover_system() {
  system_info info;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) {
    info.host = host;
  }
  struct utsname uts {};
  if (uname(&uts) == 0) {
    info.kernel = std::string(uts.sysname) + " " + uts.release + " " + uts.machine;
  }
  info.os = os_pretty_name();
  info.cpu.model = cpu_model_name();
  discover_cpu_and_numa(info);
  try {
    info.cpu.cores_available = static_cast<int>(available_core_cpus().size());
  } catch (const std::exception&) {
    info.cpu.cores_available = info.cpu.cores;
  }
  const std::string max_khz =
      read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!max_khz.empty()) {
    info.cpu.max_mhz = std::stod(max_khz) / 1000.0;
  }
  struct sysinfo mem {};
  if (sysinfo(&mem) == 0) {
    info.memory_bytes = static_cast<std::uint64_t>(mem.totalram) * mem.mem_unit;
  }
  discover_disks(info);
  discover_filesystems(info);
  discover_network_ports(info);
  discover_gpus(info);
  return info;
}

}  // namespace gpubench
