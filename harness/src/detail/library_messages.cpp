#include "detail/library_messages.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "gpubench/core/text.hpp"

namespace gpubench::detail {

library_facts cublaslt_facts(int major, int minor) {
  const std::string version = std::to_string(major);
  return {.name = "cuBLASLt",
          .soname = "libcublasLt.so." + version,
          .built_with = "cuBLAS " + version + "." + std::to_string(minor),
          .needed_by = "gemm and gpu.burn",
          .where = "the CUDA " + version +
                   " toolkit's lib64 folder, or the nvidia-cublas wheel that PyTorch installs "
                   "(site-packages/nvidia/cu" +
                   version + "/lib or nvidia/cublas/lib)",
          .variable = "GPUBENCH_CUBLASLT_LIBRARY"};
}

library_facts nccl_facts(int major, int minor) {
  return {.name = "NCCL",
          .soname = "libnccl.so." + std::to_string(major),
          .built_with = "NCCL " + std::to_string(major) + "." + std::to_string(minor),
          .needed_by = "the nccl.* benchmarks",
          .where =
              "the NCCL package for your CUDA version (libnccl2), or the nvidia-nccl wheel "
              "that PyTorch installs (site-packages/nvidia/nccl/lib)",
          .variable = "GPUBENCH_NCCL_LIBRARY"};
}

std::string library_not_loaded(const library_facts& facts, const std::string& loader_error) {
  return facts.name + " could not be loaded (" + loader_error + "): " + facts.needed_by + " need " +
         facts.built_with + " (" + facts.soname + "); install it from " + facts.where +
         ", and put its folder on LD_LIBRARY_PATH or name the file in " + facts.variable;
}

std::string library_lacks_entry_point(const library_facts& facts, const std::string& path,
                                      const std::string& entry_point) {
  return facts.name + " at " + path + " has no " + entry_point + ": it is older than the " +
         facts.built_with + " this build needs for " + facts.needed_by +
         "; install a newer one from " + facts.where;
}

std::string cuda_version_text(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

std::string nccl_version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

std::string cublas_version_text(std::size_t code) {
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

int minimum_driver_release(int cuda_major) {
  switch (cuda_major) {
    case 13:
      return 580;
    case 12:
      return 525;
    case 11:
      return 450;
    default:
      return 0;
  }
}

std::string cuda_driver_too_old(int driver_code, int runtime_code) {
  const int runtime_major = runtime_code / 1000;
  const int driver_major = driver_code / 1000;
  std::string out = "the NVIDIA driver supports CUDA " + cuda_version_text(driver_code) +
                    "; this build needs " + cuda_version_text(runtime_code) + ": ";
  if (const int release = minimum_driver_release(runtime_major); release > 0) {
    out += "update the driver to release " + std::to_string(release) + " or newer";
  } else {
    out += "update the driver";
  }
  if (driver_major >= 11 && driver_major < runtime_major) {
    out += ", or rebuild gpubench with a CUDA " + std::to_string(driver_major) + ".x toolkit";
  }
  return out;
}

int lowest_build_architecture(const std::string& architectures) {
  int lowest = INT_MAX;
  for (const std::string& entry : split(architectures, ';')) {
    std::size_t digits = 0;
    while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits]))) {
      ++digits;
    }
    if (digits == 0) return 0;  // "all", "native": CMake chose, so no claim is made here
    lowest = std::min(lowest, std::stoi(entry.substr(0, digits)));
  }
  return lowest == INT_MAX ? 0 : lowest;
}

std::string gpu_too_old_for_build(int major, int minor, const std::string& architectures,
                                  int runtime_code) {
  const int lowest = lowest_build_architecture(architectures);
  const int capability = major * 10 + minor;
  if (lowest == 0 || capability >= lowest) return {};
  std::string out = "compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                    " is older than this build's lowest target sm_" + std::to_string(lowest) +
                    ": rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(capability);
  if (runtime_code >= 13000 && capability < 75) {
    out += " and a CUDA 12.x toolkit (CUDA 13 builds nothing older than sm_75)";
  }
  return out;
}

}  // namespace gpubench::detail
