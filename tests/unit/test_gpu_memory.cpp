#include <catch2/catch.hpp>

#include "gpubench/harness/gpu_memory.hpp"

using namespace gpubench;

namespace {
constexpr std::uint64_t mib = 1ULL << 20;
constexpr std::uint64_t gib = 1ULL << 30;
}  // namespace

TEST_CASE("a case that fits keeps the size it asked for", "[unit][gpu_memory]") {
  CHECK(largest_fitting_buffer(1 * gib, 3, 80 * gib, 200 * mib, mib) == 1 * gib);
  // Exactly at the usable share (90% of free) still fits, unrounded.
  CHECK(largest_fitting_buffer(3 * gib, 3, 10 * gib, 0, mib) == 3 * gib);
}

TEST_CASE("too little free memory steps down to the largest size that fits, on the granularity",
          "[unit][gpu_memory]") {
  // 2 GiB free: 90% = 1843.2 MiB for 3 buffers = 614.4 MiB each, rounded down to 614 MiB.
  const auto fit = largest_fitting_buffer(1 * gib, 3, 2 * gib, 200 * mib, mib);
  REQUIRE(fit);
  CHECK(*fit == 614 * mib);
  CHECK(3 * *fit <= static_cast<std::uint64_t>(2.0 * static_cast<double>(gib) * 0.9));
}

TEST_CASE("below the smallest size that measures the right thing is a skip (nullopt)",
          "[unit][gpu_memory]") {
  // H100: 50 MiB L2, so arrays must be at least 200 MiB; 3 x 200 MiB needs 667 MiB free.
  CHECK_FALSE(largest_fitting_buffer(1 * gib, 3, 600 * mib, 200 * mib, mib));
  CHECK(largest_fitting_buffer(1 * gib, 3, 700 * mib, 200 * mib, mib) == 210 * mib);
  CHECK_FALSE(largest_fitting_buffer(1 * gib, 3, 0, 0, mib));
  CHECK_FALSE(largest_fitting_buffer(1 * gib, 0, 80 * gib, 0, mib));
}

TEST_CASE("the shortage names the GPU, what it has free and what did not fit",
          "[unit][gpu_memory]") {
  CHECK(gpu_memory_shortage(1, 2 * gib, 80 * gib, "3 arrays of 1 GiB") ==
        "GPU 1 has 2 GiB free of 80 GiB: too little for 3 arrays of 1 GiB");
}
