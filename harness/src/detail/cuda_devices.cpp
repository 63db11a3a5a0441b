#include "detail/cuda_devices.hpp"

#include "gpubench/core/config.hpp"

#if GPUBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstdio>

#include "detail/library_messages.hpp"
#include "detail/nvml.hpp"
#endif

namespace gpubench::detail {

#if GPUBENCH_HAVE_CUDA
namespace {
std::string format_uuid(const cudaUUID_t& uuid) {
  // NVML's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}
}  // namespace

cuda_device_list list_cuda_devices() {
  cuda_device_list list;
  list.runtime_version = CUDART_VERSION;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    list.driver_version = driver;
  }
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    if (status == cudaErrorInsufficientDriver && list.driver_version) {
      list.status = cuda_driver_too_old(*list.driver_version, CUDART_VERSION) +
                    " (cudaGetDeviceCount: " + cuda_error_text(status) + ")";
    } else if (status == cudaErrorInsufficientDriver) {
      // cudaDriverGetVersion gives 0 where no driver is installed at all.
      list.status = "no NVIDIA driver loaded (cudaGetDeviceCount: " + cuda_error_text(status) + ")";
    } else {
      list.status = "cudaGetDeviceCount: " + cuda_error_text(status);
    }
    return list;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    cudaDeviceProp prop{};
    if (const cudaError_t status = cudaGetDeviceProperties(&prop, ordinal); status != cudaSuccess) {
      list.status = "cudaGetDeviceProperties(" + std::to_string(ordinal) + ") failed with " +
                    cuda_error_text(status);
      continue;
    }
    gpu_info gpu;
    gpu.index = ordinal;
    gpu.name = prop.name;
    gpu.uuid = format_uuid(prop.uuid);
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    gpu.pci_bus_id = normalize_pci_bus_id(bus_id);
    gpu.memory_bytes = prop.totalGlobalMem;
    gpu.sm_count = prop.multiProcessorCount;
    gpu.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    gpu.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    gpu.ecc_enabled = prop.ECCEnabled != 0;
#if CUDART_VERSION >= 12020
    int numa = -1;
    if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, ordinal) == cudaSuccess && numa >= 0) {
      gpu.numa_node = numa;
    }
#endif
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal) == cudaSuccess && khz > 0) {
      gpu.clocks.sm_max_mhz = khz / 1000;
    }
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess &&
        khz > 0) {
      gpu.clocks.memory_max_mhz = khz / 1000;
    }
    list.gpus.push_back(std::move(gpu));
  }
  if (list.status.empty()) {
    list.status = "ok";
  }
  return list;
}
#else
cuda_device_list list_cuda_devices() {
  cuda_device_list list;
  list.status = "built without CUDA (GPUBENCH_CUDA=OFF or no nvcc at build time)";
  return list;
}
#endif

}  // namespace gpubench::detail
