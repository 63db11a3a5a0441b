#include <catch2/catch.hpp>

#include "detail/nvml.hpp"
#include "gpubench/harness/discovery.hpp"

using namespace gpubench;

TEST_CASE("system discovery describes this machine", "[system]") {
  const system_info info = discover_system();
  CHECK_FALSE(info.host.empty());
  CHECK(info.cpu.cores >= 1);
  CHECK(info.cpu.threads >= info.cpu.cores);
  CHECK(info.cpu.cores_available >= 1);
  CHECK(info.cpu.cores_available <= info.cpu.cores);
  CHECK(info.memory_bytes > (64ULL << 20));
  CHECK_FALSE(info.numa.empty());
  CHECK_FALSE(info.filesystems.empty());
  CHECK_FALSE(info.gpu_status.cuda.empty());
  CHECK_FALSE(info.gpu_status.nvml.empty());
  if (info.gpus.empty()) {
    // Where there is no GPU the reason is given, never an empty list alone.
    CHECK_THAT(info.gpu_status.reason, Catch::StartsWith("no GPU found"));
  } else {
    for (const auto& gpu : info.gpus) {
      CHECK_FALSE(gpu.name.empty());
      CHECK(gpu.memory_bytes > 0);
    }
  }
}

TEST_CASE("the last-level cache is the highest data cache level, summed", "[system]") {
  system_info info;
  info.cpu.caches = {{1, "data", 48 << 10, 64},
                     {1, "instruction", 32 << 10, 64},
                     {2, "unified", 1 << 20, 64},
                     {3, "unified", 32 << 20, 8}};
  CHECK(info.last_level_cache_bytes() == 256ULL << 20);
}

TEST_CASE("NVML throttle reasons and PCI bus ids decode", "[system]") {
  using detail::throttle_reason_names;
  CHECK(throttle_reason_names(0).empty());
  CHECK(throttle_reason_names(0x44) ==
        std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  CHECK(throttle_reason_names(0x1000) == std::vector<std::string>{"other_0x1000"});
  CHECK(detail::normalize_pci_bus_id("00000000:1B:00.0") == "0000:1b:00.0");
  CHECK(detail::normalize_pci_bus_id("0000:c1:00.0") == "0000:c1:00.0");
}
