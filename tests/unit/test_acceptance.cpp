// acceptance/ rule by rule: one synthetic results document per rule family, judged against a spec
// written here, once where it passes and once where it fails. The whole-binary tests
// (tests/cli/test_validate.cpp) check the shipped specs on fixtures; these pin each rule's logic.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/detail/results_fast.hpp"

using namespace gpubench;
using acceptance::rule_outcome;
using acceptance::rule_status;

namespace {

metric_summary stats(double median, metric_unit unit) {
  summary s;
  s.median = median;
  s.min = median;
  s.max = median;
  s.n = 3;
  return {s, std::move(unit)};
}

const metric_unit gbps{"GB/s", better::higher};
const metric_unit micro{"us", better::lower};

result ok(std::string id, json axes, std::string metric, double median, metric_unit unit) {
  result r;
  r.id = std::move(id);
  r.axes = std::move(axes);
  r.metrics.emplace_back(std::move(metric), stats(median, std::move(unit)));
  r.verified = true;
  return r;
}

gpu_info gpu(int index) {
  gpu_info g;
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_bytes = 85'520'809'984;
  return g;
}

results_document machine(int gpus) {
  results_document doc;
  doc.system.host = "node-a";
  doc.system.cpu.cores = 64;
  doc.system.memory_bytes = 1'000'000'000'000;
  for (int i = 0; i < gpus; ++i) doc.system.gpus.push_back(gpu(i));
  return doc;
}

acceptance::spec spec_of(json figures, json health = json::object()) {
  return acceptance::parse_spec(json{{"schema", acceptance::spec_schema},
                                     {"name", "test"},
                                     {"figures", std::move(figures)},
                                     {"health", std::move(health)}},
                                "test-spec.json");
}

acceptance::rule_outcomes outcomes(const results_document& doc, const acceptance::spec& s) {
  return acceptance::validate(doc, "results.json", s).rules;
}

rule_outcome only(const acceptance::rule_outcomes& rules, const std::string& name) {
  const rule_outcome* found = nullptr;
  for (const rule_outcome& r : rules) {
    if (r.rule != name) continue;
    REQUIRE(found == nullptr);
    found = &r;
  }
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("a figure rule holds the best repetition of each GPU to its floor", "[acceptance]") {
  const json rules = json::array({{{"name", "hbm copy"},
                                   {"benchmark", "hbm.copy"},
                                   {"metric", "GBps"},
                                   {"expected", 3000.0},
                                   {"source", "a test"},
                                   {"floor", 0.9}}});
  results_document doc = machine(2);
  // GPU 0's best size passes (the other size does not count against it); GPU 1 is slow.
  doc.results.push_back(ok("hbm.copy", {{"gpu", 0}, {"bytes", 1 << 20}}, "GBps", 2000, gbps));
  doc.results.push_back(ok("hbm.copy", {{"gpu", 0}, {"bytes", 1 << 30}}, "GBps", 2950, gbps));
  doc.results.push_back(ok("hbm.copy", {{"gpu", 1}, {"bytes", 1 << 30}}, "GBps", 2600, gbps));
  const auto rules_out = outcomes(doc, spec_of(rules));
  REQUIRE(rules_out.size() == 2);
  CHECK(rules_out[0].subject == "GPU 0");
  CHECK(rules_out[0].status == rule_status::pass);
  CHECK(rules_out[0].measured_value == Approx(2950));
  CHECK(rules_out[0].floor_value == Approx(2700));
  CHECK(rules_out[0].floor == "2700 GB/s (90%)");
  CHECK(rules_out[1].subject == "GPU 1");
  CHECK(rules_out[1].status == rule_status::fail);
  CHECK(rules_out[1].detail.starts_with("86.7% of expected, under the floor"));
}

TEST_CASE("validate --json written an outcome at a time is the whole document's text",
          "[acceptance]") {
  const json rules = json::array({{{"name", "hbm copy"},
                                   {"benchmark", "hbm.copy"},
                                   {"metric", "GBps"},
                                   {"expected", 3000.0},
                                   {"source", "a test\nwith a newline"},
                                   {"floor", 0.9}}});
  results_document doc = machine(3);
  doc.results.push_back(ok("hbm.copy", {{"gpu", 0}, {"bytes", 1 << 30}}, "GBps", 2950, gbps));
  doc.results.push_back(ok("hbm.copy", {{"gpu", 1}, {"bytes", 1 << 30}}, "GBps", 2600, gbps));
  const acceptance::validation v =
      acceptance::validate(doc, "results.json", spec_of(rules, {{"gpus", 3}}));
  REQUIRE(v.rules.size() == 3);  // three GPUs, one of them not measured
  for (const int indent : {-1, 2}) {
    std::ostringstream out;
    acceptance::write_json(out, v, indent);
    CHECK(out.str() == json_text(acceptance::to_json(v), indent));
  }
}

TEST_CASE("a rule on a latency is a ceiling: lower than it passes, higher fails", "[acceptance]") {
  const json rules = json::array({{{"name", "launch latency"},
                                   {"benchmark", "gpu.launch_latency"},
                                   {"axes", {{"mode", "stream"}}},
                                   {"metric", "us"},
                                   {"expected", 2.5},
                                   {"source", "a test"},
                                   {"floor", 0.9}}});
  SECTION("measured below the expected latency passes") {
    results_document doc = machine(1);
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", 0}, {"mode", "stream"}}, "us", 2.1, micro));
    const rule_outcome o = only(outcomes(doc, spec_of(rules)), "launch latency");
    CHECK(o.status == rule_status::pass);
    CHECK(o.floor_value == Approx(2.5 / 0.9));
    CHECK(o.floor == "<= 2.78 us (expected / 90%)");
  }
  SECTION("measured above the ceiling fails, and says so") {
    results_document doc = machine(1);
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", 0}, {"mode", "stream"}}, "us", 4.0, micro));
    const rule_outcome o = only(outcomes(doc, spec_of(rules)), "launch latency");
    CHECK(o.status == rule_status::fail);
    CHECK(o.detail.starts_with("160% of expected, over the ceiling"));
  }
  SECTION("the best repetition of a latency is the lowest") {
    results_document doc = machine(1);
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", 0}, {"mode", "stream"}}, "us", 9.0, micro));
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", 0}, {"mode", "stream"}}, "us", 2.0, micro));
    const rule_outcome o = only(outcomes(doc, spec_of(rules)), "launch latency");
    CHECK(o.measured_value == Approx(2.0));
    CHECK(o.status == rule_status::pass);
  }
  SECTION("results of another mode do not count") {
    results_document doc = machine(1);
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", 0}, {"mode", "graph"}}, "us", 1.0, micro));
    const rule_outcome o = only(outcomes(doc, spec_of(rules)), "launch latency");
    CHECK(o.status == rule_status::missing);
  }
}

TEST_CASE("figure rules per GPU pair and per machine, and min_gpus", "[acceptance]") {
  const json rules = json::array({{{"name", "p2p"},
                                   {"benchmark", "p2p.copy"},
                                   {"metric", "GBps"},
                                   {"per", "pair"},
                                   {"expected", 300.0},
                                   {"min_gpus", 2}},
                                  {{"name", "h2d all"},
                                   {"benchmark", "pcie.h2d_all"},
                                   {"metric", "GBps"},
                                   {"per", "machine"},
                                   {"expected", 100.0}}});
  SECTION("a pair under its floor fails; the machine figure passes") {
    results_document doc = machine(2);
    doc.results.push_back(ok("p2p.copy", {{"pair", "0>1"}}, "GBps", 290, gbps));
    doc.results.push_back(ok("p2p.copy", {{"pair", "1>0"}}, "GBps", 150, gbps));
    doc.results.push_back(ok("pcie.h2d_all", {{"bytes", 1 << 30}}, "GBps", 95, gbps));
    const auto rules_out = outcomes(doc, spec_of(rules));
    REQUIRE(rules_out.size() == 3);
    CHECK(rules_out[0].subject == "GPUs 0>1");
    CHECK(rules_out[0].status == rule_status::pass);
    CHECK(rules_out[1].subject == "GPUs 1>0");
    CHECK(rules_out[1].status == rule_status::fail);
    CHECK(rules_out[2].subject == "machine");
    CHECK(rules_out[2].status == rule_status::pass);
  }
  SECTION("on one GPU the pair rule does not apply") {
    results_document doc = machine(1);
    doc.results.push_back(ok("pcie.h2d_all", {{"bytes", 1 << 30}}, "GBps", 50, gbps));
    const auto rules_out = outcomes(doc, spec_of(rules));
    CHECK(only(rules_out, "p2p").status == rule_status::not_applicable);
    CHECK(only(rules_out, "h2d all").status == rule_status::fail);
  }
}

TEST_CASE("a figure rule names a failed or skipped benchmark", "[acceptance]") {
  const json rules = json::array({{{"name", "hbm copy"},
                                   {"benchmark", "hbm.copy"},
                                   {"metric", "GBps"},
                                   {"expected", 3000.0}}});
  results_document doc = machine(1);
  result failed;
  failed.id = "hbm.copy";
  failed.status = result_status::failed;
  failed.error = "verification failed";
  failed.axes = {{"gpu", 0}};
  doc.results.push_back(failed);
  const rule_outcome f = only(outcomes(doc, spec_of(rules)), "hbm copy");
  CHECK(f.status == rule_status::fail);
  CHECK(f.detail == "the benchmark failed: verification failed");

  results_document skipped = machine(1);
  result s;
  s.id = "hbm.copy";
  s.status = result_status::skipped;
  s.reason = "no GPU";
  skipped.results.push_back(s);
  const rule_outcome m = only(outcomes(skipped, spec_of(rules)), "hbm copy");
  CHECK(m.status == rule_status::missing);
  CHECK(m.detail == "hbm.copy skipped: no GPU");
}

TEST_CASE("health: GPU count and model", "[acceptance]") {
  const json health = {{"gpus", 2}, {"gpu_model", "h100-sxm5-80gb"}};
  const auto pass = outcomes(machine(2), spec_of(json::array(), health));
  CHECK(only(pass, "gpu count").status == rule_status::pass);
  for (const rule_outcome& o : pass) {
    if (o.rule == "gpu model") CHECK(o.status == rule_status::pass);
  }
  const auto fail = outcomes(machine(1), spec_of(json::array(), health));
  CHECK(only(fail, "gpu count").status == rule_status::fail);
  results_document other = machine(1);
  other.system.gpus[0].name = "NVIDIA A100-SXM4-80GB";
  CHECK(
      only(outcomes(other, spec_of(json::array(), {{"gpu_model", "h100-sxm5-80gb"}})), "gpu model")
          .status == rule_status::fail);
}

TEST_CASE("health: the PCIe link, idle and under load", "[acceptance]") {
  const json health = {{"pcie", {{"gen", 5}, {"width", 16}}}};
  results_document doc = machine(1);
  doc.system.gpus[0].pcie = pcie_link_info{1, 16, 5, 16};
  // Idle at Gen1 (power saving) is a warning, not a failure.
  CHECK(only(outcomes(doc, spec_of(json::array(), health)), "pcie link").status ==
        rule_status::warn);
  result loaded = ok("pcie.h2d", {{"gpu", 0}, {"bytes", 1 << 28}}, "GBps", 55, gbps);
  loaded.info.edit()["pcie_link_during_copy"] = {{"gen", 5}, {"width", 16}};
  doc.results.push_back(loaded);
  CHECK(only(outcomes(doc, spec_of(json::array(), health)), "pcie link").status ==
        rule_status::pass);
  doc.results.back().info.edit()["pcie_link_during_copy"] = {{"gen", 4}, {"width", 8}};
  const rule_outcome down = only(outcomes(doc, spec_of(json::array(), health)), "pcie link");
  CHECK(down.status == rule_status::fail);
  CHECK(down.measured == "Gen4 x8 under load");
  // Read back from a file with the generation written as text: no reading under load (the idle
  // link's warning), not a thrown type error.
  doc.results.back().info.edit()["pcie_link_during_copy"] = {{"gen", "4"}, {"width", 8}};
  const auto damaged = detail::parse_results_fast(json(doc).dump(), "pcie.json");
  REQUIRE(damaged);
  CHECK(only(outcomes(*damaged, spec_of(json::array(), health)), "pcie link").status ==
        rule_status::warn);
}

TEST_CASE("health: ECC and memory errors", "[acceptance]") {
  const json health = {{"ecc", true}};
  results_document doc = machine(1);
  doc.system.gpus[0].ecc_enabled = true;
  doc.system.gpus[0].memory_errors.uncorrected_volatile = 0;
  doc.system.gpus[0].memory_errors.row_remap_pending = false;
  auto rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "ecc").status == rule_status::pass);
  CHECK(only(rules_out, "memory errors").status == rule_status::pass);
  doc.system.gpus[0].memory_errors.row_remap_pending = true;
  doc.system.gpus[0].ecc_enabled = false;
  rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "ecc").status == rule_status::fail);
  CHECK(only(rules_out, "memory errors").status == rule_status::fail);
  CHECK(only(rules_out, "memory errors").measured == "a row remap waits for a reset");
}

TEST_CASE("health: NVLink links and peer access over them", "[acceptance]") {
  const json health = {{"nvlink_links", 18}, {"peer_access", "nvlink"}};
  results_document doc = machine(2);
  for (gpu_info& g : doc.system.gpus) g.nvlink_links_up = 18;
  for (const char* pair : {"0>1", "1>0"}) {
    result r = ok("p2p.copy", {{"pair", pair}}, "GBps", 300, gbps);
    r.info.edit()["peer_access"] = true;
    doc.results.push_back(r);
  }
  auto rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "peer access").status == rule_status::pass);
  for (const rule_outcome& o : rules_out) {
    if (o.rule == "nvlink links") CHECK(o.status == rule_status::pass);
  }
  doc.system.gpus[1].nvlink_links_up = 12;
  doc.results[1].info.edit()["peer_access"] = false;
  rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "peer access").status == rule_status::fail);
  CHECK(only(rules_out, "peer access").measured == "none for 1>0");
  CHECK(rules_out[1].rule == "nvlink links");
  CHECK(rules_out[1].subject == "GPU 1");
  CHECK(rules_out[1].status == rule_status::fail);
}

TEST_CASE("health: power limit, host cores and memory against their floors", "[acceptance]") {
  const json health = {{"power_limit_W", {{"expected", 700.0}, {"floor", 0.95}}},
                       {"cpu_cores", {{"expected", 64}}},
                       {"memory_GB", {{"expected", 1000.0}, {"floor", 0.9}}}};
  results_document doc = machine(1);
  doc.system.gpus[0].power_limit_W = 700;
  auto rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "power limit").status == rule_status::pass);
  CHECK(only(rules_out, "cpu cores").status == rule_status::pass);
  CHECK(only(rules_out, "host memory").status == rule_status::pass);
  doc.system.gpus[0].power_limit_W = 500;
  doc.system.cpu.cores = 32;
  doc.system.memory_bytes = 500'000'000'000;
  rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "power limit").status == rule_status::fail);
  CHECK(only(rules_out, "cpu cores").status == rule_status::fail);
  CHECK(only(rules_out, "host memory").status == rule_status::fail);
}

TEST_CASE("health: the sustained load (throttling, drop, rate, clocks)", "[acceptance]") {
  const json health = {
      {"throttle_reasons_fail", {"hw_thermal_slowdown"}},
      {"burn", {{"max_drop_pct", 5}, {"sustain_fraction", 0.9}, {"sm_clock_fraction", 0.9}}}};
  const auto burn = [](double tflops, double drop, json seen, int sm_mhz) {
    result r;
    r.id = "gpu.burn";
    r.info = json{{"m", 8192},
                  {"n", 8192},
                  {"k", 8192},
                  {"gpus",
                   {{{"gpu", 0},
                     {"dtype", "fp16"},
                     {"TFLOPs", tflops},
                     {"drop_pct", drop},
                     {"first_tenth_TFLOPs", tflops},
                     {"last_tenth_TFLOPs", tflops},
                     {"throttle_reasons_seen", std::move(seen)},
                     {"sm_mhz_median", sm_mhz},
                     {"sm_max_mhz", 1980}}}}};
    return r;
  };
  results_document doc = machine(1);
  doc.results.push_back(ok("gemm", {{"gpu", 0}, {"dtype", "fp16"}, {"shape", "8192"}}, "TFLOPs",
                           700, {"TFLOP/s", better::higher}));
  doc.results.push_back(burn(680, 1, json::array({"sw_power_cap"}), 1900));
  auto rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "throttling").status == rule_status::pass);
  CHECK(only(rules_out, "sustained drop").status == rule_status::pass);
  CHECK(only(rules_out, "sustained rate").status == rule_status::pass);
  CHECK(only(rules_out, "sm clock").status == rule_status::pass);
  doc.results.back() = burn(500, 12, json::array({"hw_thermal_slowdown"}), 1200);
  rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(only(rules_out, "throttling").status == rule_status::fail);
  CHECK(only(rules_out, "sustained drop").status == rule_status::fail);
  CHECK(only(rules_out, "sustained rate").status == rule_status::fail);
  CHECK(only(rules_out, "sm clock").status == rule_status::fail);
  doc.results.pop_back();
  CHECK(only(outcomes(doc, spec_of(json::array(), health)), "sustained load").status ==
        rule_status::missing);
}

TEST_CASE("health: a burn read back from its file, and one damaged there", "[acceptance]") {
  // Read from a file, a result's info stays in the parser's document and the burn rules read it
  // there; a figure written as text is not measured, never read as 0 (which passes the drop).
  const json health = {{"burn", {{"max_drop_pct", 5}, {"sustain_fraction", 0.9}}},
                       {"throttle_reasons_fail", {"hw_thermal_slowdown"}}};
  results_document doc = machine(1);
  doc.results.push_back(ok("gemm", {{"gpu", 0}, {"dtype", "fp16"}, {"shape", "8192"}}, "TFLOPs",
                           700, {"TFLOP/s", better::higher}));
  result burn;
  burn.id = "gpu.burn";
  const json info = {{"m", 8192},
                     {"n", 8192},
                     {"k", 8192},
                     {"gpus",
                      {{{"gpu", 0},
                        {"dtype", "fp16"},
                        {"TFLOPs", 680},
                        {"drop_pct", 2},
                        {"first_tenth_TFLOPs", 690},
                        {"last_tenth_TFLOPs", 676},
                        {"throttle_reasons_seen", {"sw_power_cap"}},
                        {"samples", {{{"t_s", 1.0}, {"TFLOPs", 690}}}}}}}};
  burn.info = info;
  doc.results.push_back(burn);
  json text = doc;
  // The fast reader's results, whose info stays in its document.
  const auto fast = detail::parse_results_fast(text.dump(), "burn.json");
  REQUIRE(fast);
  const results_document& read = *fast;
  CHECK(read.results.back().info.get() == info);
  auto rules_out = outcomes(read, spec_of(json::array(), health));
  CHECK(only(rules_out, "throttling").status == rule_status::pass);
  CHECK(only(rules_out, "sustained drop").status == rule_status::pass);
  CHECK(only(rules_out, "sustained rate").status == rule_status::pass);

  json& gpu = text["results"].back()["info"]["gpus"][0];
  gpu["drop_pct"] = "2";
  gpu["TFLOPs"] = nullptr;
  gpu["throttle_reasons_seen"] = {7};
  const auto fast_damaged = detail::parse_results_fast(text.dump(), "burn.json");
  REQUIRE(fast_damaged);
  const results_document& damaged = *fast_damaged;
  rules_out = outcomes(damaged, spec_of(json::array(), health));
  CHECK(only(rules_out, "sustained drop").status == rule_status::missing);
  CHECK(only(rules_out, "sustained drop").detail ==
        "gpu.burn wrote no number for drop_pct of this GPU");
  CHECK(only(rules_out, "sustained rate").status == rule_status::missing);
  CHECK(only(rules_out, "throttling").status == rule_status::pass);
}

TEST_CASE("health: network ports up at their rate", "[acceptance]") {
  const json health = {{"network_ports", {{"count", 2}, {"rate_Gbps", 400}}}};
  results_document doc = machine(1);
  const auto port = [](int n, std::string state, double rate) {
    network_port p;
    p.device = "mlx5_" + std::to_string(n);
    p.port = 1;
    p.state = std::move(state);
    p.physical_state = "LinkUp";
    p.rate_Gbps = rate;
    return p;
  };
  doc.system.network_ports = {port(0, "ACTIVE", 400), port(1, "ACTIVE", 400)};
  CHECK(only(outcomes(doc, spec_of(json::array(), health)), "network ports").status ==
        rule_status::pass);
  doc.system.network_ports[1] = port(1, "DOWN", 400);
  const rule_outcome o = only(outcomes(doc, spec_of(json::array(), health)), "network ports");
  CHECK(o.status == rule_status::fail);
  CHECK(o.detail == "mlx5_1/1 DOWN (LinkUp), 400 Gb/s");
}

TEST_CASE("a baseline holds rates to a floor and latencies to a ceiling", "[acceptance]") {
  // The baseline's median: 100 GB/s and 2 us; a 10% tolerance.
  results_document doc = machine(1);
  doc.results.push_back(ok("hbm.copy", {{"gpu", 0}}, "GBps", 95, gbps));
  doc.results.push_back(ok("gpu.launch_latency", {{"gpu", 0}}, "us", 2.1, micro));
  acceptance::baseline base;
  base.files = {"a.json", "b.json", "c.json"};
  base.median = {{"hbm.copy gpu=0 GBps", 100.0}, {"gpu.launch_latency gpu=0 us", 2.0}};
  base.machines = {{"hbm.copy gpu=0 GBps", 3}, {"gpu.launch_latency gpu=0 us", 3}};
  acceptance::validation v;
  acceptance::check_against_baseline(v, doc, base, 10);
  REQUIRE(v.rules.size() == 2);
  CHECK(v.rules[0].status == rule_status::pass);
  CHECK(v.rules[1].status == rule_status::pass);
  CHECK(v.rules[1].floor == "<= 2.2 us");
  doc.results[0].metrics[0].second.median = 85;
  doc.results[1].metrics[0].second.median = 2.5;
  acceptance::validation worse;
  acceptance::check_against_baseline(worse, doc, base, 10);
  CHECK(worse.rules[0].status == rule_status::fail);
  CHECK(worse.rules[1].status == rule_status::fail);
}

TEST_CASE("siblings: each GPU against the median of its node's GPUs, the fleet's statistic",
          "[acceptance]") {
  const json health = {{"siblings", json::object()}};
  // Eight GPUs within +-1% of each other but GPU 6, 13% slower; a latency where lower is better,
  // GPU 2's 30% longer.
  results_document doc = machine(8);
  const double rates[] = {760, 755, 765, 758, 762, 757, 661, 761};
  for (int g = 0; g < 8; ++g) {
    doc.system.gpus[static_cast<std::size_t>(g)].pci_bus_id =
        "0000:0" + std::to_string(g) + ":00.0";
    doc.results.push_back(ok("gemm", {{"gpu", g}, {"dtype", "bf16"}}, "TFLOPs", rates[g],
                             {"TFLOP/s", better::higher}));
    doc.results.push_back(
        ok("gpu.launch_latency", {{"gpu", g}}, "us", g == 2 ? 2.6 : 2.0 + 0.01 * g, micro));
  }
  auto rules_out = outcomes(doc, spec_of(json::array(), health));
  REQUIRE(rules_out.size() == 8);
  for (const rule_outcome& o : rules_out) {
    INFO(o.subject << ": " << o.detail);
    CHECK(o.rule == "siblings");
    const bool slow = o.subject == "GPU 6" || o.subject == "GPU 2";
    CHECK(o.status == (slow ? rule_status::fail : rule_status::pass));
  }
  const rule_outcome& six = rules_out[6];
  CHECK(six.gpu == 6);
  CHECK(six.pci_bus_id == "0000:06:00.0");
  CHECK(six.measured_value == Approx(661));
  CHECK(six.expected_value == Approx(759));      // the median of the eight
  CHECK(six.floor_value == Approx(759 * 0.95));  // no spread: the 5% minimum
  CHECK(six.detail.starts_with("slower than its siblings: gemm dtype=bf16 TFLOPs -12.9%"));
  CHECK(rules_out[2].expected_value.value() < rules_out[2].measured_value.value());  // a latency

  // Faster than the rest warns; the spec may make slower warn too.
  doc.results[12].metrics[0].second.median = 900;  // GPU 6's gemm
  rules_out = outcomes(doc, spec_of(json::array(), health));
  CHECK(rules_out[6].status == rule_status::warn);
  CHECK(rules_out[6].detail.starts_with("faster than its siblings"));
  doc.results[12].metrics[0].second.median = 661;
  rules_out = outcomes(doc, spec_of(json::array(), {{"siblings", {{"worse", "warn"}}}}));
  CHECK(rules_out[6].status == rule_status::warn);
  // A wide spread raises the threshold: 4 x 1.4826 x MAD over the median.
  rules_out = outcomes(doc, spec_of(json::array(), {{"siblings", {{"mad_multiple", 100}}}}));
  CHECK(rules_out[6].status == rule_status::pass);

  // Two GPUs: no median to hold either to.
  rules_out = outcomes(machine(2), spec_of(json::array(), health));
  REQUIRE(rules_out.size() == 1);
  CHECK(rules_out[0].status == rule_status::not_applicable);
}

TEST_CASE("one verdict model: pass, warn, fail, the worst of the rules", "[acceptance]") {
  using vocabulary::verdict;
  for (const verdict v : {verdict::pass, verdict::warn, verdict::fail}) {
    CHECK(vocabulary::verdict_from_string(vocabulary::to_string(v)) == v);
  }
  CHECK(vocabulary::to_string(verdict::warn) == "warn");
  CHECK(vocabulary::worst(verdict::warn, verdict::pass) == verdict::warn);
  CHECK(vocabulary::worst(verdict::warn, verdict::fail) == verdict::fail);
  CHECK(acceptance::verdict_of(rule_status::missing) == verdict::fail);
  CHECK(acceptance::verdict_of(rule_status::not_applicable) == verdict::pass);
  const auto rule = [](std::string name, rule_status status) {
    rule_outcome o;
    o.rule = std::move(name);
    o.subject = "GPU 1";
    o.status = status;
    return o;
  };
  acceptance::validation v;
  CHECK(v.result() == verdict::fail);  // no rule applied
  v.rules.push_back(rule("a", rule_status::pass));
  v.rules.push_back(rule("b", rule_status::warn));
  CHECK(v.result() == verdict::warn);
  CHECK(v.passed());
  CHECK(v.verdict() == "WARN: 2 rules against the fleet baseline; 1 warning: b GPU 1");
  v.rules.push_back(rule("c", rule_status::missing));
  CHECK(v.result() == verdict::fail);
  CHECK_FALSE(v.passed());
}

TEST_CASE("the verdict names the first four failures, then those not measured, then warnings",
          "[acceptance]") {
  const auto rule = [](std::string name, rule_status status, std::string measured = "") {
    rule_outcome o;
    o.rule = std::move(name);
    o.subject = "GPU 1";
    o.status = status;
    o.measured = std::move(measured);
    return o;
  };
  acceptance::validation v;
  v.spec_name = "test";
  // In file order a warning and a missing rule come before the failures: the verdict still lists
  // the failures first.
  v.rules.push_back(rule("w1", rule_status::warn, "1 W"));
  v.rules.push_back(rule("m1", rule_status::missing));
  v.rules.push_back(rule("ok", rule_status::pass));
  v.rules.push_back(rule("f1", rule_status::fail, "2 W"));
  v.rules.push_back(rule("na", rule_status::not_applicable));
  v.rules.push_back(rule("f2", rule_status::fail));
  v.rules.push_back(rule("m2", rule_status::missing));
  v.rules.push_back(rule("f3", rule_status::fail));
  v.rules.push_back(rule("w2", rule_status::warn));
  const acceptance::validation::status_counts counted = v.counts();
  CHECK(counted[rule_status::fail] == 3);
  CHECK(counted[rule_status::missing] == 2);
  CHECK(counted[rule_status::warn] == 2);
  CHECK(counted[rule_status::pass] == 1);
  CHECK(counted[rule_status::not_applicable] == 1);
  CHECK(v.count(rule_status::fail) == 3);
  CHECK(v.verdict() ==
        "FAIL: 3 failed, 2 not measured, of 8 rules against spec test: f1 GPU 1 2 W; f2 GPU 1; "
        "f3 GPU 1; m1 GPU 1 not measured; and 1 more; 2 warnings: w1 GPU 1 1 W; w2 GPU 1");
  // The text lists every one that did not pass: failures, those not measured, warnings.
  const std::string text = acceptance::to_text(v);
  const auto at = [&](const std::string& line) { return text.find("  " + line); };
  CHECK(at("f1 GPU 1: FAIL, 2 W") < at("f3 GPU 1: FAIL"));
  CHECK(at("f3 GPU 1: FAIL") < at("m1 GPU 1: MISSING"));
  CHECK(at("m2 GPU 1: MISSING") < at("w1 GPU 1: WARN, 1 W"));
  CHECK(at("w2 GPU 1: WARN") != std::string::npos);
  CHECK(text.find("Failures and warnings (7):") != std::string::npos);
}

TEST_CASE("a figure rule over a benchmark family reads each of its benchmarks", "[acceptance]") {
  const json rules = json::array({{{"name", "hbm any"},
                                   {"benchmark", "hbm.*"},
                                   {"metric", "GBps"},
                                   {"expected", 3000.0},
                                   {"source", "a test"},
                                   {"floor", 0.9}}});
  results_document doc = machine(2);
  doc.system.gpus[0].pci_bus_id = "0000:18:00.0";
  doc.system.gpus[1].pci_bus_id = "0000:2a:00.0";
  doc.results.push_back(ok("hbm.copy", {{"gpu", 0}}, "GBps", 2000, gbps));
  doc.results.push_back(ok("gemm", {{"gpu", 0}}, "GBps", 9000, gbps));  // not of the family
  doc.results.push_back(ok("hbm.triad", {{"gpu", 1}}, "GBps", 2500, gbps));
  doc.results.push_back(ok("hbm.triad", {{"gpu", 0}}, "GBps", 2950, gbps));
  doc.results.push_back(ok("hbmx", {{"gpu", 1}}, "GBps", 9000, gbps));  // nor is this one
  const auto rules_out = outcomes(doc, spec_of(rules));
  REQUIRE(rules_out.size() == 2);
  CHECK(rules_out[0].subject == "GPU 0");
  CHECK(rules_out[0].measured_value == Approx(2950));
  CHECK(rules_out[0].pci_bus_id == "0000:18:00.0");
  CHECK(rules_out[1].subject == "GPU 1");
  CHECK(rules_out[1].measured_value == Approx(2500));
  CHECK(rules_out[1].status == rule_status::fail);
  CHECK(rules_out[1].gpu == 1);
  CHECK(rules_out[1].pci_bus_id == "0000:2a:00.0");
}
