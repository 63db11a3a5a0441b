#include <catch2/catch.hpp>

#include "fake_benchmarks.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/suite.hpp"
#include "input_error_message.hpp"

using namespace gpubench;
using gpubench::testing::empty_context;
using gpubench::testing::fake_definition;
using gpubench::testing::input_error_message;

namespace {

registry sample_registry() {
  registry r;
  r.add(fake_definition("mem.copy")
            .add_axis("size", axis_kind::bytes, {std::int64_t{1024}, std::int64_t{2048}})
            .set_range("size", axis_range{1, 4 << 20})
            .add_axis("mode", axis_kind::string, {"a", "b", "c"}));
  r.add(fake_definition("mem.read")
            .add_axis("size", axis_kind::bytes, {std::int64_t{64}})
            .set_range("size", axis_range{64, 1 << 30, 64}));
  r.add(fake_definition("net.ping"));
  return r;
}

suite suite_from(const std::string& text) {
  return parse_suite(json::parse(text), "test.json");
}

const std::string all_suite =
    R"({"schema":"gpubench.suite/1","name":"t","benchmarks":[{"id":"*"}]})";

}  // namespace

TEST_CASE("axes expand to their cartesian product, first axis outermost", "[axes]") {
  const auto benchmarks = sample_registry();
  const auto ctx = empty_context();
  const auto plan = make_plan(suite_from(all_suite), {}, benchmarks, ctx);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].definition->id() == "mem.copy");
  REQUIRE(plan[0].cases.size() == 6);
  CHECK(plan[0].cases[0].label() == "size=1024 mode=a");
  CHECK(plan[0].cases[1].label() == "size=1024 mode=b");
  CHECK(plan[0].cases[3].label() == "size=2048 mode=a");
  CHECK(plan[0].cases[5].label() == "size=2048 mode=c");
  // A benchmark without axes is one case.
  CHECK(plan[2].definition->id() == "net.ping");
  CHECK(plan[2].cases.size() == 1);
  CHECK(count_cases(plan) == 8);
}

TEST_CASE("suite values override defaults and the command line overrides the suite", "[axes]") {
  const auto benchmarks = sample_registry();
  const auto ctx = empty_context();
  const auto s = suite_from(R"({"schema":"gpubench.suite/1","name":"t",
      "defaults":{"repetitions":3},
      "benchmarks":[{"id":"mem.*","axes":{"size":["4KiB"]},"repetitions":7},
                    {"id":"mem.copy","axes":{"mode":"b"}}]})");
  plan_request request;
  auto plan = make_plan(s, request, benchmarks, ctx);
  REQUIRE(plan.size() == 2);  // net.ping is not in the suite
  CHECK(plan[0].settings.repetitions == 7);
  REQUIRE(plan[0].cases.size() == 1);
  CHECK(plan[0].cases[0].label() == "size=4096 mode=b");
  CHECK(plan[1].cases[0].label() == "size=4096");

  request.axis_overrides.push_back(parse_axis_override("mem.copy:size=1,2,3MiB"));
  plan = make_plan(s, request, benchmarks, ctx);
  REQUIRE(plan[0].cases.size() == 3);
  CHECK(plan[0].cases[2].get_int64("size") == 3 * 1024 * 1024);
  CHECK(plan[1].cases[0].get_int64("size") == 4096);  // the override named mem.copy only
}

TEST_CASE("a benchmark that sets its own length runs one iteration whatever the suite says",
          "[axes]") {
  registry benchmarks;
  benchmarks.add(fake_definition("load.sustained").set_single_iteration());
  benchmarks.add(fake_definition("load.sampled"));
  const auto ctx = empty_context();
  const auto s = suite_from(R"({"schema":"gpubench.suite/1","name":"t",
      "defaults":{"repetitions":10,"warmup_iterations":2},
      "benchmarks":[{"id":"*","iterations":50}]})");
  const auto plan = make_plan(s, {}, benchmarks, ctx);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].definition->id() == "load.sampled");
  CHECK(plan[0].settings.repetitions == 10);
  CHECK(plan[0].settings.iterations == 50);
  CHECK(plan[1].settings.repetitions == 1);
  CHECK(plan[1].settings.warmup_iterations == 0);
  CHECK(plan[1].settings.iterations == 1);
}

TEST_CASE("only and skip patterns select benchmarks by id or pattern", "[axes]") {
  const auto benchmarks = sample_registry();
  const auto ctx = empty_context();
  plan_request request;
  request.only = {"mem.*"};
  request.skip = {"mem.read"};
  const auto plan = make_plan(suite_from(all_suite), request, benchmarks, ctx);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].definition->id() == "mem.copy");
}

TEST_CASE("a benchmark that cannot run here is planned as skipped with its reason", "[axes]") {
  registry r;
  r.add(fake_definition("gpu.thing").set_supported([](const context&) {
    return std::optional<std::string>("needs a GPU");
  }));
  const auto plan = make_plan(suite_from(all_suite), {}, r, empty_context());
  REQUIRE(plan.size() == 1);
  REQUIRE(plan[0].skip_reason);
  CHECK(*plan[0].skip_reason == "needs a GPU");
  CHECK(plan[0].cases.empty());
  CHECK(count_cases(plan) == 1);
}

TEST_CASE("unknown ids, axes and bad values are input errors naming where", "[axes]") {
  const auto benchmarks = sample_registry();
  const auto ctx = empty_context();
  CHECK(input_error_message([&] {
          (void)make_plan(suite_from(R"({"schema":"gpubench.suite/1","name":"t",
              "benchmarks":[{"id":"mem.copy"},{"id":"nosuch"}]})"),
                          {}, benchmarks, ctx);
        }) ==
        "test.json: /benchmarks/1/id: expected a known benchmark id or pattern (see "
        "`gpubench list`), got 'nosuch'");
  CHECK_THAT(input_error_message([&] {
               (void)make_plan(suite_from(R"({"schema":"gpubench.suite/1","name":"t",
                   "benchmarks":[{"id":"mem.copy","axes":{"colour":[1]}}]})"),
                               {}, benchmarks, ctx);
             }),
             Catch::StartsWith("test.json: /benchmarks/0/axes/colour: expected an axis of"));
  CHECK_THAT(input_error_message([&] {
               (void)make_plan(suite_from(R"({"schema":"gpubench.suite/1","name":"t",
                   "benchmarks":[{"id":"mem.copy","axes":{"mode":[3]}}]})"),
                               {}, benchmarks, ctx);
             }),
             Catch::Contains("/benchmarks/0/axes/mode: expected a string value"));
  plan_request request;
  request.only = {"nosuch.*"};
  CHECK_THAT(input_error_message(
                 [&] { (void)make_plan(suite_from(all_suite), request, benchmarks, ctx); }),
             Catch::StartsWith("--only: expected a known benchmark id"));
  request = {};
  request.axis_overrides.push_back(parse_axis_override("mem.copy:speed=1"));
  CHECK_THAT(input_error_message(
                 [&] { (void)make_plan(suite_from(all_suite), request, benchmarks, ctx); }),
             Catch::Contains("has an axis named 'speed'"));
}

TEST_CASE("a value outside an axis's range is refused with the range before anything runs",
          "[axes]") {
  const auto benchmarks = sample_registry();
  const auto ctx = empty_context();
  plan_request request;
  request.axis_overrides.push_back(parse_axis_override("mem.read:size=100"));
  CHECK(input_error_message(
            [&] { (void)make_plan(suite_from(all_suite), request, benchmarks, ctx); }) ==
        "--axis mem.read:size: expected a size from 64 B to 1 GiB, a multiple of 64 B, got 100 "
        "bytes");
  CHECK(input_error_message([&] {
          (void)make_plan(suite_from(R"({"schema":"gpubench.suite/1","name":"t",
              "benchmarks":[{"id":"mem.copy","axes":{"size":["8MiB"]}}]})"),
                          {}, benchmarks, ctx);
        }) ==
        "test.json: /benchmarks/0/axes/size: expected a size from 1 B to 4 MiB, got 8388608 "
        "bytes");
  request.axis_overrides = {parse_axis_override("mem.read:size=128")};
  CHECK(make_plan(suite_from(all_suite), request, benchmarks, ctx)[1].cases.size() == 1);
}

TEST_CASE("every integer or byte axis declares its range", "[axes]") {
  registry r;
  CHECK_THROWS_AS(
      r.add(fake_definition("no.range").add_axis("n", axis_kind::integer, {std::int64_t{1}})),
      std::logic_error);
  for (const auto* def : registry::global().all()) {
    for (const axis& a : def->axes()) {
      INFO(def->id() << " " << a.name);
      CHECK((a.kind == axis_kind::string || static_cast<bool>(a.range)));
    }
  }
}

TEST_CASE("axis values parse as integers, sizes with binary suffixes, or strings", "[axes]") {
  CHECK(std::get<std::int64_t>(parse_axis_value(axis_kind::bytes, "1048576", "x")) == 1048576);
  CHECK(std::get<std::int64_t>(parse_axis_value(axis_kind::bytes, "4KiB", "x")) == 4096);
  CHECK(std::get<std::int64_t>(parse_axis_value(axis_kind::bytes, "1GiB", "x")) == 1 << 30);
  CHECK(std::get<std::int64_t>(parse_axis_value(axis_kind::integer, "0", "x")) == 0);
  CHECK(std::get<std::string>(parse_axis_value(axis_kind::string, "bf16", "x")) == "bf16");
  CHECK_THROWS_AS(parse_axis_value(axis_kind::bytes, "0", "x"), input_error);
  CHECK_THROWS_AS(parse_axis_value(axis_kind::bytes, "-5", "x"), input_error);
  CHECK_THROWS_AS(parse_axis_value(axis_kind::bytes, "12abc", "x"), input_error);
  CHECK_THROWS_AS(parse_axis_value(axis_kind::integer, "4KiB", "x"), input_error);
  CHECK_THROWS_AS(parse_axis_value(axis_kind::bytes, "1000000TiB", "x"), input_error);
  CHECK_THROWS_AS(parse_axis_value(axis_kind::integer, "", "x"), input_error);
}

TEST_CASE("axis flags parse into pattern, axis and values", "[axes]") {
  const auto o = parse_axis_override("nvme.seq_read:block_size=4096,1048576");
  CHECK(o.pattern == "nvme.seq_read");
  CHECK(o.axis == "block_size");
  CHECK(o.values == std::vector<std::string>{"4096", "1048576"});
  for (const char* bad :
       {"nvme.seq_read", "nvme.seq_read:block_size", ":a=1", "x:=1", "x:a=1,,2", "x:a="}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_axis_override(bad), input_error);
  }
}

TEST_CASE("suite files are checked field by field", "[suites]") {
  CHECK_THAT(
      input_error_message([] {
        (void)suite_from(R"({"schema":"gpubench.suite/2","name":"t","benchmarks":[{"id":"*"}]})");
      }),
      Catch::Contains("/schema: expected \"gpubench.suite/1\""));
  CHECK_THAT(input_error_message([] {
               (void)suite_from(R"({"schema":"gpubench.suite/1","name":"t","benchmarks":[]})");
             }),
             Catch::Contains("/benchmarks: expected an array of at least 1"));
  CHECK(
      input_error_message([] {
        (void)suite_from(
            R"({"schema":"gpubench.suite/1","name":"t","benchmarks":[{"id":"*","repetitions":0}]})");
      }) ==
      "test.json: /benchmarks/0/repetitions: expected an integer from 1 to 1000, got the number 0");
  CHECK_THAT(
      input_error_message([] {
        (void)suite_from(
            R"({"schema":"gpubench.suite/1","name":"t","benchmarks":[{"id":"*","min_time_s":"fast"}]})");
      }),
      Catch::Contains("/benchmarks/0/min_time_s: expected a number"));
  CHECK_THAT(
      input_error_message([] {
        (void)suite_from(
            R"({"schema":"gpubench.suite/1","name":"t","benchmarks":[{"id":"*","repeat":2}]})");
      }),
      Catch::Contains("/benchmarks/0/repeat: expected no member named 'repeat'"));
  CHECK_THAT(input_error_message([] { (void)suite_from(R"([1,2])"); }),
             Catch::Contains("expected an object"));
}

TEST_CASE("the shipped suites parse and name only registered benchmarks", "[suites]") {
  const auto ctx = empty_context();
  for (const std::string name : {"quick", "full"}) {
    INFO(name);
    const suite s = load_suite(name);
    CHECK(s.name == name);
    CHECK_NOTHROW(make_plan(s, {}, registry::global(), ctx));
  }
  CHECK_THROWS_AS(load_suite("no-such-suite"), input_error);
}

TEST_CASE("id patterns", "[axes]") {
  CHECK(id_matches("*", "hbm.copy"));
  CHECK(id_matches("hbm.*", "hbm.copy"));
  CHECK_FALSE(id_matches("hbm.*", "host.membw"));
  CHECK(id_matches("host.membw", "host.membw"));
  CHECK_FALSE(id_matches("host.mem", "host.membw"));
}

TEST_CASE("a gemm shape is N or MxNxK in digits, each from 1 to 2^20", "[axes]") {
  const gemm_shape square = parse_gemm_shape("8192");
  CHECK((square.m == 8192 && square.n == 8192 && square.k == 8192));
  const gemm_shape tall = parse_gemm_shape("16384x1024x1048576");
  CHECK((tall.m == 16384 && tall.n == 1024 && tall.k == 1048576));
  // sscanf took the first four; a shape is exactly what the gemm benchmark writes.
  for (const char* bad : {" 8192", "+8192", "8192abc", "8192x 8192x8192", "12x34", "8192x", "x8192",
                          "1x2x3x4", "", "-8", "99999999999999999999999"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_gemm_shape(bad),
                      Catch::Contains("expected a shape N (square) or MxNxK"));
  }
  CHECK_THROWS_WITH(parse_gemm_shape("0"), Catch::Contains("from 1 to 2^20"));
  CHECK_THROWS_WITH(parse_gemm_shape("8x8x1048577"), Catch::Contains("from 1 to 2^20"));
}
