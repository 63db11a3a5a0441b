#include <catch2/catch.hpp>

#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/discovery.hpp"

using namespace gpubench;

TEST_CASE("host.membw counts STREAM's bytes and verifies every kernel", "[host.membw]") {
  const context ctx(discover_system(), run_options{});
  const benchmark_definition* def = registry::global().find("host.membw");
  REQUIRE(def != nullptr);
  const std::int64_t array_bytes = 8 << 20;
  // STREAM weights: copy and scale move 2 arrays, add and triad 3.
  const std::pair<const char*, double> expected_arrays[] = {
      {"copy", 2}, {"scale", 2}, {"add", 3}, {"triad", 3}};
  for (const auto& [kernel, arrays] : expected_arrays) {
    INFO(kernel);
    axis_values values;
    values.set("kernel", std::string(kernel));
    values.set("threads", std::int64_t{2});
    values.set("array_bytes", array_bytes);
    auto inst = def->make_instance(ctx, values);
    const work w = inst->work_per_iteration();
    CHECK(w.bytes_read + w.bytes_written == Approx(arrays * static_cast<double>(array_bytes)));
    CHECK(w.bytes_written == Approx(static_cast<double>(array_bytes)));
    CHECK_FALSE(inst->run_iteration().has_value());  // host wall-clock timed
    (void)inst->run_iteration();
    const verification v = inst->verify();
    CHECK(v.passed);
    CHECK_THAT(v.detail, Catch::Contains("0 wrong"));
    CHECK(inst->info()["threads"] == 2);
  }
}

TEST_CASE("host.membw's ranges leave half of the RAM and give every thread whole lines",
          "[host.membw]") {
  system_info small;
  small.memory_bytes = 1ULL << 30;
  const context ctx(small, run_options{});
  const benchmark_definition* def = registry::global().find("host.membw");
  const axis_range bytes = def->find_axis("array_bytes")->range(ctx);
  CHECK(bytes.min == std::int64_t{1} << 20);
  CHECK(bytes.max * 3 <= std::int64_t{1} << 29);  // 3 arrays in half of 1 GiB
  CHECK(bytes.step == 8);
  // 3 GiB of arrays on a 1 GiB machine
  CHECK_THROWS_AS(check_in_range(axis_kind::bytes, bytes, std::int64_t{1} << 30),
                  std::invalid_argument);
  const axis_range threads = def->find_axis("threads")->range(ctx);
  CHECK_THROWS_AS(check_in_range(axis_kind::integer, threads, 0), std::invalid_argument);
  axis_values values;
  values.set("kernel", std::string("dot"));
  values.set("threads", std::int64_t{1});
  values.set("array_bytes", std::int64_t{1} << 20);
  CHECK_THROWS_AS(def->make_instance(ctx, values), std::invalid_argument);
}

TEST_CASE("host.membw's default array is at least 4x the last-level cache", "[host.membw]") {
  system_info info;
  info.memory_bytes = 512ULL << 30;
  info.cpu.caches.push_back({3, "unified", 256ULL << 20, 2});  // 512 MiB of L3 in all
  info.cpu.caches.push_back({2, "unified", 1ULL << 20, 64});
  const context ctx(info, run_options{});
  const axis* a = registry::global().find("host.membw")->find_axis("array_bytes");
  const auto values = a->defaults(ctx);
  REQUIRE(values.size() == 1);
  CHECK(std::get<std::int64_t>(values[0]) == std::int64_t{2048} << 20);
  // Small machines: never more than 1/8 of RAM per array.
  info.memory_bytes = 8ULL << 30;
  const context small(info, run_options{});
  CHECK(std::get<std::int64_t>(a->defaults(small)[0]) == std::int64_t{1} << 30);
}
