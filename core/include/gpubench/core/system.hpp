// What a machine is, as every results file records it (the `system` block). Reading it off the
// machine is the harness's (gpubench/discovery.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"

namespace gpubench {

struct cache_info {
  int level = 0;
  std::string type;  // "data", "instruction" or "unified"
  std::uint64_t size_bytes = 0;
  int count = 0;  // instances of this cache on the machine
};
GPUBENCH_JSON_FIELDS(cache_info, level, type, size_bytes, count)

struct cpu_info {
  std::string model;
  int sockets = 0;
  int cores = 0;            // physical cores on the machine
  int threads = 0;          // hardware threads on the machine
  int cores_available = 0;  // physical cores this process may run on (affinity, cgroups)
  std::vector<cache_info> caches;
  std::optional<double> max_mhz;
};
GPUBENCH_JSON_FIELDS(cpu_info, model, sockets, cores, threads, cores_available, caches, max_mhz)

struct numa_node_info {
  int index = 0;
  std::uint64_t memory_bytes = 0;
  std::string cpus;  // Linux cpulist syntax, "0-31,64-95"
};
GPUBENCH_JSON_FIELDS(numa_node_info, index, memory_bytes, cpus)

struct disk_info {
  std::string name;  // kernel name, "nvme0n1"
  std::string model;
  bool nvme = false;
  bool rotational = false;
  std::uint64_t size_bytes = 0;
};
GPUBENCH_JSON_FIELDS(disk_info, name, model, nvme, rotational, size_bytes)

struct filesystem_info {
  std::string mount_point;
  std::string device;
  std::string type;
  std::uint64_t size_bytes = 0;
  std::uint64_t free_bytes = 0;
};
GPUBENCH_JSON_FIELDS(filesystem_info, mount_point, device, type, size_bytes, free_bytes)

struct pcie_link_info {
  std::optional<int> gen;
  std::optional<int> width;
  std::optional<int> max_gen;
  std::optional<int> max_width;
};
GPUBENCH_JSON_FIELDS(pcie_link_info, gen, width, max_gen, max_width)

struct gpu_clocks {
  std::optional<int> sm_mhz;
  std::optional<int> sm_max_mhz;
  std::optional<int> memory_mhz;
  std::optional<int> memory_max_mhz;
};
GPUBENCH_JSON_FIELDS(gpu_clocks, sm_mhz, sm_max_mhz, memory_mhz, memory_max_mhz)

// Memory-error counters a server is accepted or returned on (DCGM's health checks read the same).
struct memory_error_info {
  std::optional<std::uint64_t> uncorrected_volatile;   // since the driver last loaded
  std::optional<std::uint64_t> uncorrected_aggregate;  // over the GPU's life
  std::optional<int> remapped_rows_uncorrectable;      // rows remapped after uncorrectable errors
  std::optional<bool> row_remap_pending;               // a remap waits for a GPU reset
  std::optional<bool> row_remap_failure;               // a remap failed: the GPU needs service
  std::optional<bool> retired_pages_pending;           // pre-Ampere page retirement waits for reset
};
GPUBENCH_JSON_FIELDS(memory_error_info, uncorrected_volatile, uncorrected_aggregate,
                     remapped_rows_uncorrectable, row_remap_pending, row_remap_failure,
                     retired_pages_pending)

struct gpu_info {
  int index = 0;  // CUDA device ordinal where CUDA sees the GPU, else NVML's index
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // "0000:1b:00.0"
  std::uint64_t memory_bytes = 0;
  std::optional<int> sm_count;
  std::string compute_capability;  // "9.0"; empty when only NVML saw the GPU
  std::optional<std::uint64_t> l2_bytes;
  std::optional<int> numa_node;
  gpu_clocks clocks;
  std::optional<pcie_link_info> pcie;
  std::optional<double> power_limit_W;
  std::optional<int> temperature_C;
  std::vector<std::string> throttle_reasons;
  std::optional<bool> ecc_enabled;
  memory_error_info memory_errors;
  std::optional<int> nvlink_links_up;
};
GPUBENCH_JSON_FIELDS(gpu_info, index, name, uuid, pci_bus_id, memory_bytes, sm_count,
                     compute_capability, l2_bytes, numa_node, clocks, pcie, power_limit_W,
                     temperature_C, throttle_reasons, ecc_enabled, memory_errors, nvlink_links_up)

// How the GPU list was obtained, and why it is empty when it is.
struct gpu_discovery {
  std::string nvml;  // "ok" or why NVML could not be used
  std::string cuda;  // "ok" or why the CUDA runtime could not be used
  std::string driver_version;
  std::optional<int> cuda_driver_version;           // 13000 = 13.0
  std::optional<int> cuda_runtime_version;          // the runtime this binary was built with
  std::string reason;                               // set when no GPU was found
  std::optional<int> nvml_gpu_count;                // GPUs in the machine, whatever CUDA may see
  std::optional<std::string> cuda_visible_devices;  // the variable, where it is set
  // Where CUDA can use a GPU: the cuBLASLt and NCCL that load ("13.0.2 (path)"), or why not.
  std::optional<std::string> cublaslt;
  std::optional<std::string> nccl;
};
GPUBENCH_JSON_FIELDS(gpu_discovery, nvml, cuda, driver_version, cuda_driver_version,
                     cuda_runtime_version, reason, nvml_gpu_count, cuda_visible_devices, cublaslt,
                     nccl)

// A port for traffic between nodes: InfiniBand, or RoCE (link layer Ethernet), as the adapter
// reports it under /sys/class/infiniband.
struct network_port {
  std::string device;  // "mlx5_0"
  int port = 1;
  std::string link_layer;      // "InfiniBand" | "Ethernet" (RoCE)
  std::string state;           // "ACTIVE", "DOWN", "INIT", ...
  std::string physical_state;  // "LinkUp", "Polling", "Disabled", ...
  std::optional<double> rate_Gbps;
  std::string width;     // "4X"
  std::string firmware;  // the adapter's fw_ver
  std::string netdev;    // its Ethernet interface, where it has one ("ens1f0np0")
};
GPUBENCH_JSON_FIELDS(network_port, device, port, link_layer, state, physical_state, rate_Gbps,
                     width, firmware, netdev)

struct system_info {
  std::string host;
  std::string os;
  std::string kernel;
  cpu_info cpu;
  std::vector<numa_node_info> numa;
  std::uint64_t memory_bytes = 0;
  std::vector<disk_info> disks;
  std::vector<filesystem_info> filesystems;
  std::vector<network_port> network_ports;
  std::vector<gpu_info> gpus;
  gpu_discovery gpu_status;

  // Total size of the last-level CPU cache over the whole machine, in bytes (0 if unknown).
  [[nodiscard]] std::uint64_t last_level_cache_bytes() const;
};
GPUBENCH_JSON_FIELDS(system_info, host, os, kernel, cpu, numa, memory_bytes, disks, filesystems,
                     network_ports, gpus, gpu_status)

}  // namespace gpubench
