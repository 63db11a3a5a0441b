// The GPU tier (CTest label `gpu`): every GPU benchmark at its smallest axes on the first and the
// last GPU, with its data checked and every stream it made on the GPU it was given; the CUDA
// owners' device binding; the run-time loading of cuBLASLt and NCCL. It needs a GPU and fails
// without one: `make test` leaves the label out, `make gpu-check` runs it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "gpubench/harness/context.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/discovery.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/suite.hpp"
#include "gpubench/kernels/copy.cuh"
#include "process.hpp"

using namespace gpubench;
namespace fs = std::filesystem;

namespace {

// The machine's usable GPUs; fails the test (the tier needs a GPU) when there is none.
std::vector<int> first_and_last_gpu(const system_info& system) {
  const context ctx(system, run_options{});
  const auto gpus = ctx.gpu_indices();
  INFO("the gpu tier needs a GPU: " << ctx.gpu_unavailable_reason().value_or(""));
  REQUIRE_FALSE(gpus.empty());
  if (gpus.size() == 1) return {gpus.front()};
  return {gpus.front(), gpus.back()};
}

// Axis values for a case as small as the benchmark allows: the smallest size or count, every
// choice (dtype, engine, mode...), the first shape; gpu.burn for two seconds.
std::map<std::string, std::vector<axis_value>> smallest_axes(const benchmark_definition& def,
                                                             const context& ctx) {
  std::map<std::string, std::vector<axis_value>> out;
  for (const axis& a : def.axes()) {
    std::vector<axis_value> values = a.defaults(ctx);
    if (a.name == "duration_s") {
      values = {std::int64_t{2}};
    } else if (a.kind != axis_kind::string && !values.empty()) {
      values = {*std::min_element(values.begin(), values.end())};
    } else if (a.name == "shape" && !values.empty()) {
      values = {values.front()};
    }
    out[a.name] = values;
  }
  return out;
}

// Skips that are the machine's, not the code's: what a GPU or a pair of GPUs lacks.
bool acceptable_skip(const std::string& reason) {
  for (const char* expected :
       {"needs 2 or more GPUs", "no peer access", "needs compute capability",
        "NCCL has no in-place alltoall", "message smaller than one float per rank"}) {
    if (reason.find(expected) != std::string::npos) return true;
  }
  return false;
}

std::string join_ints(const std::set<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

struct case_run {
  results_document doc;
  std::vector<std::uint64_t> streams_before;
  std::vector<std::uint64_t> streams_after;
  // Devices on which the run made streams.
  [[nodiscard]] std::set<int> stream_devices() const {
    std::set<int> out;
    for (std::size_t d = 0; d < streams_after.size(); ++d) {
      const std::uint64_t before = d < streams_before.size() ? streams_before[d] : 0;
      if (streams_after[d] > before) out.insert(static_cast<int>(d));
    }
    return out;
  }
};

case_run run_on(const benchmark_definition& def, const system_info& system,
                const std::vector<int>& gpus, const fs::path& dir) {
  run_options options;
  options.gpus = gpus;
  const context ctx(system, options);
  suite s;
  s.name = "gpu-tier";
  s.defaults.repetitions = 2;
  s.defaults.warmup_iterations = 1;
  s.defaults.min_time_s = 0.01;
  s.entries.push_back(suite_entry{def.id(), smallest_axes(def, ctx), {}, {}, {}, {}});
  plan_request request;
  request.only = {def.id()};
  case_run out;
  out.streams_before = cuda::streams_created_by_device();
  (void)run_plan(make_plan(s, request, registry::global(), ctx), ctx, out.doc,
                 dir / (def.id() + ".json"));
  out.streams_after = cuda::streams_created_by_device();
  return out;
}

void check_results(const case_run& run, const std::set<int>& allowed_devices) {
  REQUIRE_FALSE(run.doc.results.empty());
  for (const result& r : run.doc.results) {
    INFO(r.id << " " << r.axes.dump() << ": " << r.error << r.reason);
    if (r.status == result_status::skipped) {
      CHECK(acceptable_skip(r.reason));
      continue;
    }
    CHECK(r.status == result_status::ok);
    CHECK(r.verified == true);
    CHECK_FALSE(r.metrics.empty());
  }
  const std::set<int> used = run.stream_devices();
  INFO("streams made on GPUs " << join_ints(used) << "; allowed " << join_ints(allowed_devices));
  CHECK(std::includes(allowed_devices.begin(), allowed_devices.end(), used.begin(), used.end()));
}

}  // namespace

TEST_CASE(
    "every GPU benchmark runs at its smallest axes on the first and the last GPU, checks "
    "its data and makes its streams on the GPUs it was given",
    "[gpu]") {
  const system_info system = discover_system();
  const std::vector<int> ends = first_and_last_gpu(system);
  testing::temp_dir dir;
  for (const benchmark_definition* def : registry::global().all()) {
    if (!def->needs_gpu()) continue;
    SECTION(def->id()) {
      if (def->find_axis("gpu") != nullptr) {
        // One GPU at a time: the case must make every stream on that GPU and no other.
        for (int gpu : ends) {
          INFO("GPU " << gpu);
          const case_run run = run_on(*def, system, {gpu}, dir.path);
          check_results(run, {gpu});
          const bool measured =
              std::any_of(run.doc.results.begin(), run.doc.results.end(),
                          [](const result& r) { return r.status == result_status::ok; });
          if (measured) CHECK(run.stream_devices() == std::set<int>{gpu});
        }
      } else {
        // Benchmarks over every GPU of the run (all-GPU copies, peers, NCCL, gpu.burn).
        const case_run run = run_on(*def, system, ends, dir.path);
        check_results(run, std::set<int>(ends.begin(), ends.end()));
      }
    }
  }
}

TEST_CASE("CUDA owners are bound to the device they were made for", "[gpu]") {
  const system_info system = discover_system();
  const std::vector<int> ends = first_and_last_gpu(system);
  const int first = ends.front();
  const int last = ends.back();
  const cuda::device_scope outer(first);
  for (int gpu : ends) {
    const cuda::stream stream(gpu);
    int stream_device = -1;
    GPUBENCH_CUDA_CHECK(cudaStreamGetDevice(stream.get(), &stream_device));
    CHECK(stream_device == gpu);
    const cuda::event start(gpu);
    const cuda::event stop(gpu);
    start.record(stream);
    // A launch through the stream goes to its GPU whatever device is current.
    const cuda::device_buffer words(gpu, 1 << 20);
    cudaPointerAttributes attributes{};
    GPUBENCH_CUDA_CHECK(cudaPointerGetAttributes(&attributes, words.get()));
    CHECK(attributes.device == gpu);
    kernels::enqueue_fill_pattern(words.as<std::uint32_t>(), words.size() / 4, 7u, stream);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    stop.record(stream);
    CHECK(cuda::elapsed_seconds(start, stop) >= 0);
    std::vector<std::uint32_t> host(words.size() / 4);
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host.data(), words.get(), words.size(),
                                        cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    CHECK(kernels::check_pattern_host(host.data(), host.size(), 7u) == 0);
    int current = -1;
    GPUBENCH_CUDA_CHECK(cudaGetDevice(&current));
    CHECK(current == first);  // the helpers put the caller's device back
  }
  if (first != last) {
    const cuda::stream on_last(last);
    const cuda::event on_first(first);
    CHECK_THROWS_AS(on_first.record(on_last), std::logic_error);
  }
}

TEST_CASE("a cuBLASLt that cannot be loaded is named, not mistaken for a missing GPU", "[gpu]") {
  (void)first_and_last_gpu(discover_system());
  const auto r = testing::run_gpubench({"list", "--json"}, {},
                                       {"GPUBENCH_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13",
                                        "GPUBENCH_NCCL_LIBRARY=/nonexistent/libnccl.so.2"});
  REQUIRE(r.exit_code == 0);
  const auto listed = nlohmann::json::parse(r.out);
  int checked = 0;
  for (const auto& b : listed["benchmarks"]) {
    if (b["id"] == "gemm" || b["id"] == "gpu.burn") {
      CHECK(b["available"] == false);
      CHECK_THAT(b["reason"].get<std::string>(),
                 Catch::StartsWith("cuBLASLt could not be loaded (/nonexistent/libcublasLt.so.13"));
      ++checked;
    }
    if (b["id"] == "hbm.copy") CHECK(b["available"] == true);  // the rest of the GPU suite runs
  }
  CHECK(checked == 2);
}
