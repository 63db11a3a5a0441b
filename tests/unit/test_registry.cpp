#include <catch2/catch.hpp>

#include "fake_benchmarks.hpp"

using namespace gpubench;
using gpubench::testing::fake_definition;

TEST_CASE("the registry keeps definitions in id order and refuses duplicates", "[registry]") {
  registry r;
  r.add(fake_definition("b.second"));
  r.add(fake_definition("a.first"));
  const auto all = r.all();
  REQUIRE(all.size() == 2);
  CHECK(all[0]->id() == "a.first");
  CHECK(all[1]->id() == "b.second");
  CHECK(r.find("b.second") == all[1]);
  CHECK(r.find("c.none") == nullptr);
  CHECK_THROWS_AS(r.add(fake_definition("a.first")), std::logic_error);
}

TEST_CASE("a definition must be complete to register", "[registry]") {
  registry r;
  CHECK_THROWS_AS(
      r.add(benchmark_definition("no.metric")
                .set_factory([](const context&, const axis_values&) -> std::unique_ptr<instance> {
                  return nullptr;
                })),
      std::logic_error);
  CHECK_THROWS_AS(r.add(benchmark_definition("no.factory")
                            .add_metric("us", metric_kind::time_per_iteration, units::us)),
                  std::logic_error);
  CHECK_THROWS_AS(r.add(benchmark_definition("")), std::logic_error);
  // A metric's unit must be of its kind's dimension: a time declared in GB/s is refused.
  CHECK_THROWS_AS(fake_definition("y").add_metric("t", metric_kind::time_per_item, units::GBps),
                  std::logic_error);
  CHECK_NOTHROW(fake_definition("z").add_metric("t", metric_kind::time_per_item, units::ms));
  CHECK_THROWS_AS(fake_definition("x")
                      .add_axis("a", axis_kind::integer, {})
                      .add_axis("a", axis_kind::integer, {}),
                  std::logic_error);
}

TEST_CASE("benchmarks register themselves from their own files", "[registry]") {
  const auto& global = registry::global();
  for (const char* id : {"host.membw", "gpu.launch_latency"}) {
    INFO(id);
    const benchmark_definition* def = global.find(id);
    REQUIRE(def != nullptr);
    CHECK_FALSE(def->description().empty());
    CHECK_FALSE(def->metrics().empty());
  }
  const auto* membw = global.find("host.membw");
  CHECK(membw->find_axis("kernel") != nullptr);
  CHECK(membw->find_axis("threads") != nullptr);
  CHECK(membw->find_axis("array_bytes")->kind == axis_kind::bytes);
  CHECK(global.find("gpu.launch_latency")->find_axis("gpu") != nullptr);
}

TEST_CASE("GPU benchmarks are unsupported, with a reason, where no GPU is usable", "[registry]") {
  system_info no_gpu;
  no_gpu.gpu_status.reason = "no GPU found (test)";
  const context ctx(no_gpu, gpubench::run_options{});
  const auto reason = registry::global().find("gpu.launch_latency")->unsupported_reason(ctx);
  REQUIRE(reason);
  CHECK_FALSE(reason->empty());
  CHECK_FALSE(registry::global().find("host.membw")->unsupported_reason(ctx));
}

TEST_CASE("a choice axis sweeps its defaults and takes any of its choices", "[registry]") {
  system_info none;
  const context ctx(none, gpubench::run_options{});
  auto def = fake_definition("x").add_choice_axis("c", {"a", "b", "c"}, "", {"b"});
  const axis* c = def.find_axis("c");
  REQUIRE(c != nullptr);
  CHECK(c->defaults(ctx) == std::vector<axis_value>{axis_value{std::string("b")}});
  CHECK_NOTHROW(c->check(axis_value{std::string("c")}));
  CHECK_THROWS_AS(c->check(axis_value{std::string("d")}), std::invalid_argument);
  CHECK(
      fake_definition("y").add_choice_axis("c", {"a", "b"}).find_axis("c")->defaults(ctx).size() ==
      2);
  CHECK_THROWS_AS(fake_definition("z").add_choice_axis("c", {"a", "b"}, "", {"e"}),
                  std::logic_error);
  // gpu.burn sweeps one sustained run, not one per precision.
  const axis* burn_dtype = registry::global().find("gpu.burn")->find_axis("dtype");
  REQUIRE(burn_dtype != nullptr);
  CHECK(burn_dtype->defaults(ctx) == std::vector<axis_value>{axis_value{std::string("auto")}});
}

TEST_CASE("axis_values keeps order and types", "[registry]") {
  axis_values v;
  v.set("gpu", std::int64_t{1});
  v.set("dtype", std::string("bf16"));
  v.set("gpu", std::int64_t{2});
  CHECK(v.label() == "gpu=2 dtype=bf16");
  CHECK(v.get_int64("gpu") == 2);
  CHECK(v.get_string("dtype") == "bf16");
  CHECK(v.to_json().dump() == R"({"gpu":2,"dtype":"bf16"})");
  CHECK_THROWS_AS(v.get_string("gpu"), std::logic_error);
  CHECK_THROWS_AS(v.get_int64("nosuch"), std::out_of_range);
}
