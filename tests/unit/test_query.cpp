// Reading results back: the vocabulary's query and its reductions, and the report's selections
// through them (percent of a datasheet peak, figures not run). Before these, only whole-binary
// tests reached the report's selection.
#include <catch2/catch.hpp>

#include <sstream>

#include "gpubench/reports/report.hpp"
#include "gpubench/reports/summary.hpp"
#include "gpubench/vocabulary/measurements.hpp"
#include "gpubench/vocabulary/query.hpp"

// Named one by one: the unit tests are compiled in batches, and a using-directive for gpubench
// would make gpubench::summary clash with watch::summary in another file of the batch.
using gpubench::better;
using gpubench::gpu_info;
using gpubench::json;
using gpubench::metric_summary;
using gpubench::metric_unit;
using gpubench::result;
using gpubench::result_status;
using gpubench::results_document;
namespace reports = gpubench::reports;
namespace vocabulary = gpubench::vocabulary;
using vocabulary::axis_filter;
using vocabulary::query;
using vocabulary::reduction;

namespace {

const metric_unit gbps{"GB/s", better::higher};
const metric_unit micro{"us", better::lower};

result ok(std::string id, json axes, std::string metric, double median, metric_unit unit) {
  result r;
  r.id = std::move(id);
  r.axes = std::move(axes);
  gpubench::summary s;
  s.median = median;
  s.min = median;
  s.max = median;
  s.n = 3;
  r.metrics.emplace_back(std::move(metric), metric_summary(s, std::move(unit)));
  r.verified = true;
  return r;
}

std::vector<double> values(const vocabulary::rows& rows) {
  std::vector<double> out;
  for (const vocabulary::row& r : rows) out.push_back(r.value());
  return out;
}

}  // namespace

TEST_CASE("a query selects by id or family, axis filters and metric, ok results only", "[query]") {
  std::vector<result> results{
      ok("pcie.h2d", {{"gpu", 0}, {"memory", "pinned"}, {"bytes", 1 << 20}}, "GBps", 20, gbps),
      ok("pcie.h2d", {{"gpu", 0}, {"memory", "pageable"}, {"bytes", 1 << 20}}, "GBps", 9, gbps),
      ok("pcie.h2d", {{"gpu", 0}, {"bytes", 1 << 28}}, "GBps", 25, gbps),  // before the axis
      ok("pcie.d2h", {{"gpu", 0}, {"memory", "pinned"}}, "GBps", 22, gbps),
      ok("hbm.copy", {{"gpu", 0}}, "us", 1, micro),  // another metric: not selected
  };
  results.push_back(results[0]);
  results.back().status = result_status::failed;
  const query equals{
      .benchmark = "pcie.h2d", .where = {{.axis = "memory", .value = "pinned"}}, .metric = "GBps"};
  CHECK(values(vocabulary::select(results, equals)) == std::vector<double>{20});
  query or_absent = equals;
  or_absent.where[0].how = axis_filter::match::equals_or_absent;
  CHECK(values(vocabulary::select(results, or_absent)) == std::vector<double>{20, 25});
  query differs = equals;
  differs.where[0] = {.axis = "memory", .value = "pageable", .how = axis_filter::match::differs};
  CHECK(values(vocabulary::select(results, differs)) == std::vector<double>{20, 25});
  const query family{.benchmark = "pcie.*", .metric = "GBps"};
  CHECK(vocabulary::select(results, family).size() == 4);
  CHECK(family.matches_id("pcie.d2h"));
  CHECK_FALSE(family.matches_id("pcie"));
  CHECK_FALSE(family.matches_id("p2p.copy"));
  const query metric_absent{.benchmark = "hbm.copy", .metric = "GBps"};
  CHECK(vocabulary::select(results, metric_absent).empty());
  CHECK(vocabulary::describe(differs.where) == "memory!=pageable");
}

TEST_CASE("reductions: median over GPUs, the best by direction, the largest size", "[query]") {
  std::vector<result> results{
      ok("pcie.h2d", {{"gpu", 0}, {"bytes", 1 << 20}}, "GBps", 10, gbps),
      ok("pcie.h2d", {{"gpu", 1}, {"bytes", 1 << 28}}, "GBps", 24, gbps),
      ok("pcie.h2d", {{"gpu", 0}, {"bytes", 1 << 28}}, "GBps", 26, gbps),
      ok("pcie.h2d", {{"gpu", 2}, {"bytes", 1 << 28}}, "GBps", 30, gbps),
  };
  const query q{.benchmark = "pcie.h2d", .metric = "GBps"};
  const auto rows = vocabulary::select(results, q);
  CHECK(*vocabulary::median_of(rows) == Approx(25));
  CHECK(vocabulary::best_of(rows)->value() == Approx(30));
  CHECK(values(vocabulary::at_largest(rows, "bytes")) == std::vector<double>{24, 26, 30});
  const auto by_gpu = vocabulary::group_by(rows, "gpu");
  REQUIRE(by_gpu.size() == 3);
  CHECK(values(by_gpu.at("0")) == std::vector<double>{10, 26});
  query largest = q;
  largest.reduce = reduction::at_largest;
  largest.axis = "bytes";
  CHECK(*vocabulary::evaluate(rows, largest) == Approx(26));
  query best = q;
  best.reduce = reduction::best;
  CHECK(*vocabulary::evaluate(rows, best) == Approx(30));
  CHECK_FALSE(vocabulary::evaluate(vocabulary::rows{}, q));
  // Where lower is better the best is the lowest.
  const std::vector<result> latencies{ok("gpu.launch_latency", {{"gpu", 0}}, "us", 4, micro),
                                      ok("gpu.launch_latency", {{"gpu", 1}}, "us", 2, micro)};
  CHECK(vocabulary::best_of(
            vocabulary::select(latencies, {.benchmark = "gpu.launch_latency", .metric = "us"}))
            ->value() == Approx(2));
}

TEST_CASE("the report compares a figure with its datasheet peak through its measurement",
          "[query][report]") {
  results_document doc;
  doc.system.host = "node";
  gpu_info gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.memory_bytes = 85'520'809'984;
  doc.system.gpus = {gpu, gpu};
  doc.results = {
      ok("hbm.copy", {{"gpu", 0}}, "GBps", 2680, gbps),
      ok("gemm", {{"gpu", 0}, {"dtype", "bf16"}, {"shape", "8192"}}, "TFLOPs", 700,
         {"TFLOP/s", better::higher}),
      ok("p2p.copy", {{"pair", "0>1"}, {"engine", "ce"}, {"direction", "uni"}}, "GBps", 360, gbps),
      ok("p2p.copy", {{"pair", "0>1"}, {"engine", "ce"}, {"direction", "bidir"}}, "GBps", 720,
         gbps),
      ok("host.membw", {{"kernel", "triad"}}, "GBps", 100, gbps),
  };
  result skipped;
  skipped.id = "nccl.all_reduce";
  skipped.status = result_status::skipped;
  skipped.reason = "needs 2 or more GPUs";
  doc.results.push_back(skipped);
  const reports::machine_report report = reports::make_report(doc, "r.json", {"resnet50"});
  const auto row = [&](const std::string& id, const std::string& axes_part) {
    for (const reports::figure_row& f : report.figures) {
      if (f.benchmark == id && f.axes.find(axes_part) != std::string::npos) return f;
    }
    FAIL("no row " << id << " " << axes_part);
    return reports::figure_row{};
  };
  // H100 SXM: 3350 GB/s HBM, 989.4 TFLOP/s bf16, 900 GB/s NVLink both ways (catalog).
  CHECK(row("hbm.copy", "gpu=0").peak_key == "gpu.hbm_peak_GBps");
  CHECK(*row("hbm.copy", "gpu=0").percent_of_peak == Approx(80.0).epsilon(0.01));
  CHECK(row("gemm", "bf16").peak_key == "gpu.peak_tflops.bf16");
  CHECK(*row("gemm", "bf16").percent_of_peak == Approx(70.75).epsilon(0.01));
  // One way uses half the NVLink total; both ways all of it.
  CHECK(*row("p2p.copy", "direction=uni").percent_of_peak == Approx(80.0).epsilon(0.01));
  CHECK(*row("p2p.copy", "direction=bidir").percent_of_peak == Approx(80.0).epsilon(0.01));
  CHECK_FALSE(row("host.membw", "triad").percent_of_peak);
  REQUIRE(report.not_run.size() == 1);
  CHECK(report.not_run[0].status == "skipped");
  CHECK(report.not_run[0].reason == "needs 2 or more GPUs");
  // The profile read the measured figures through the same measurements.
  REQUIRE(report.profile);
  CHECK(report.profile->find(vocabulary::figures::hbm)->value == Approx(2680));
  CHECK(report.profile->find(vocabulary::figures::host_membw)->value == Approx(100));
}

TEST_CASE("noise: a measurement is noisy above the threshold, a figure takes its rows' worst",
          "[query][noise]") {
  const auto with_cv = [](double cv, std::size_t n) {
    result r = ok("cpu.augment", {{"threads", 2}}, "samples_per_s_per_core", 500, gbps);
    r.metrics.front().second.cv = cv;
    r.metrics.front().second.n = n;
    return r;
  };
  const double at = vocabulary::noisy_cv;
  CHECK_FALSE(vocabulary::is_noisy(with_cv(at, 5).metrics.front().second));
  CHECK(vocabulary::is_noisy(with_cv(at * 1.01, 5).metrics.front().second));
  // One repetition has no spread to judge.
  CHECK_FALSE(vocabulary::is_noisy(with_cv(0.5, 1).metrics.front().second));

  const std::vector<result> results{with_cv(0.02, 5), with_cv(0.217, 5), with_cv(0.9, 1)};
  const vocabulary::rows rows = vocabulary::select(
      results, query{.benchmark = "cpu.augment", .metric = "samples_per_s_per_core"});
  REQUIRE(rows.size() == 3);
  CHECK(vocabulary::worst_cv(rows) == Approx(0.217));
  CHECK(vocabulary::noise_text(0.217) ==
        "cv 21.7%, above the 10% a steady measurement stays under");
}

TEST_CASE("run's summary marks a noisy metric and names each noisy case once after the table",
          "[query][noise]") {
  results_document doc;
  doc.results.push_back(ok("host.membw", {{"kernel", "triad"}}, "GBps", 40, gbps));
  result busy = ok("cpu.augment", {{"threads", 2}}, "samples_per_s", 1000, gbps);
  busy.metrics.front().second.cv = 0.217;
  busy.metrics.emplace_back("samples_per_s_per_core", busy.metrics.front().second);
  doc.results.push_back(busy);
  std::ostringstream out;
  reports::print_summary(out, doc);
  const std::string text = out.str();
  INFO(text);
  CHECK(text.find("21.7% noisy") != std::string::npos);
  const std::string line = reports::noisy_line(doc.results);
  CHECK(line.starts_with("noisy: 1 measurement(s) spread more than 10% between repetitions"));
  CHECK(line.find("cpu.augment threads=2") != std::string::npos);
  CHECK(line.find("host.membw") == std::string::npos);
  CHECK(text.find(line) != std::string::npos);
  CHECK(reports::noisy_line({doc.results.front()}).empty());
}
