// Issue 45: cpu.dataloader's figures read from a results file, the python-loader CPU ceiling
// from them (measured) or from cpu.augment (derived, with its range), the loader options and
// tar shards, and how cpu.dataloader finds a python3 with torch.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpubench/benchmarks/cpu/python_child.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/model/model.hpp"

using namespace gpubench;
using namespace gpubench::model;
namespace fs = std::filesystem;

namespace {

// A catalog GPU with this machine's CPU figures set: cores, and what the case adds.
hardware_profile cpu_profile(double cores) {
  hardware_profile hw = load_catalog("h100-sxm5-80gb");
  hw.set(fig::cpu_cores, cores, basis::measured, "test");
  hw.set(fig::augment_per_core, 500, basis::measured, "test");
  hw.set(fig::augment_pixels, 500 * 375, basis::measured, "test");
  return hw;
}

// ResNet-50 reading JPEGs, its loader capped at `workers` per GPU.
workload images(const std::string& loader, int workers, const std::string& format = "files") {
  workload w = load_workload("resnet50");
  w.data.loader = loader;
  w.data.loader_workers_per_gpu = workers;
  w.data.format = format;
  return w;
}

const component& cpu_of(const sizing& s) {
  for (const component& c : s.components) {
    if (c.name == component_id::cpu) return c;
  }
  FAIL("no cpu component");
  return s.components.front();
}

void add_dataloader(hardware_profile& hw) {
  hw.set(fig::dataloader_per_worker, 200, basis::measured, "test");
  hw.set(fig::dataloader_scaling, 0.8, basis::measured, "test");
  hw.set(fig::dataloader_workers, 9, basis::measured, "test");
  hw.set(fig::dataloader_pixels, 500 * 375, basis::measured, "test");
  hw.set(fig::dataloader_decode_share, 0.5, basis::measured, "test");
  hw.set(fig::dataloader_resize_share, 0.2, basis::measured, "test");
  hw.set(fig::dataloader_transform_share, 0.8, basis::measured, "test");
  hw.set(fig::dataloader_tensor_path, 0.4, basis::measured, "test");
}

}  // namespace

TEST_CASE("cpu.dataloader's rows become the DataLoader figures of a profile", "[unit][model]") {
  results_document doc;
  doc.system.cpu.cores = 16;
  const auto add = [&](int workers, double per_worker, json info) {
    result r;
    r.id = "cpu.dataloader";
    r.axes = {{"image_width", 640}, {"image_height", 480}, {"workers", workers}};
    summary stats;
    stats.median = per_worker;
    stats.n = 5;
    r.metrics.emplace_back("images_per_s_per_worker",
                           metric_summary(stats, registry::global()
                                                     .find("cpu.dataloader")
                                                     ->find_metric("images_per_s_per_worker")
                                                     ->written()));
    r.info = std::move(info);
    doc.results.push_back(r);
  };
  // 1000/250 = 4 ms per image with one worker: decode 2, crop 1, the transforms 3.2 of it.
  add(1, 250,
      {{"stages_ms",
        {{"decode", 2.0},
         {"crop_resize", 1.0},
         {"flip", 0.05},
         {"to_tensor", 0.1},
         {"normalize", 0.05},
         {"torchvision_io_total", 2.4}}}});
  add(4, 225, json::object());
  add(16, 150, json::object());
  const hardware_profile hw = profile_from_results(doc, "r.json");
  CHECK(hw.find(fig::dataloader_per_worker)->value == Approx(250));
  CHECK(hw.find(fig::dataloader_per_worker)->from == basis::measured);
  CHECK(hw.find(fig::dataloader_scaling)->value == Approx(0.6));
  CHECK(hw.find(fig::dataloader_workers)->value == Approx(16));
  CHECK(hw.find(fig::dataloader_pixels)->value == Approx(640 * 480));
  CHECK(hw.find(fig::dataloader_decode_share)->value == Approx(0.5));
  CHECK(hw.find(fig::dataloader_resize_share)->value == Approx(0.25));
  CHECK(hw.find(fig::dataloader_transform_share)->value == Approx(0.8));
  CHECK(hw.find(fig::dataloader_tensor_path)->value == Approx(0.6));
}

TEST_CASE(
    "a python loader's CPU ceiling comes from the measured DataLoader, else is derived "
    "with its range",
    "[unit][model]") {
  const constants c = load_constants();
  SECTION("measured: one worker's rate, scaled linearly to the most workers measured") {
    hardware_profile hw = cpu_profile(11);  // 10 loader cores for 1 GPU
    add_dataloader(hw);
    // 5 workers of 9 measured: per-worker 200 x (1 + (0.8 - 1) x 4/8) = 180.
    const sizing five = predict(hw, images("python", 5), c);
    CHECK(*cpu_of(five).samples_per_s == Approx(5 * 180));
    CHECK(cpu_of(five).basis == basis::measured);
    CHECK_FALSE(cpu_of(five).range.has_value());
    // 10 workers, beyond the 9 measured: the scaling measured at 9 holds.
    const sizing ten = predict(hw, images("python", 10), c);
    CHECK(*cpu_of(ten).samples_per_s == Approx(10 * 160));
  }
  SECTION("derived: cpu.augment x loader_efficiency, the range from its spread") {
    const hardware_profile hw = cpu_profile(3);  // 2 loader cores
    const sizing s = predict(hw, images("python", 2), c);
    const component& cpu = cpu_of(s);
    CHECK(*cpu.samples_per_s == Approx(2 * 500 * c.loader_efficiency));
    CHECK(cpu.basis == basis::derived);
    REQUIRE(cpu.range.has_value());
    CHECK(cpu.range->first == Approx(2 * 500 * c.loader_efficiency_low));
    CHECK(cpu.range->second == Approx(2 * 500 * c.loader_efficiency_high));
    // CPU-bound, so the prediction's band holds that range.
    REQUIRE(s.limiting_component == component_id::cpu);
    REQUIRE(s.interval.has_value());
    CHECK(s.interval->low <= cpu.range->first * 1.0001);
    CHECK(s.interval->high >= cpu.range->second * 0.9999);
  }
}

TEST_CASE("the loader options change the measured worker's time per image as the table says",
          "[unit][model]") {
  const constants c = load_constants();
  hardware_profile hw = cpu_profile(2);  // 1 loader core
  add_dataloader(hw);
  const double vanilla = *cpu_of(predict(hw, images("python", 1), c)).samples_per_s;
  CHECK(vanilla == Approx(200));
  // Pillow-SIMD: the crop's 0.2 of the time at 1/4: 1 - 0.2 + 0.05.
  CHECK(*cpu_of(predict(hw, images("pillow-simd", 1), c)).samples_per_s ==
        Approx(200 / (1 - 0.2 + 0.2 / c.pillow_simd_resize_speedup)));
  // torchvision.io: its transforms take 0.4 where PIL's take 0.8; the hand-over (0.2) stays.
  CHECK(*cpu_of(predict(hw, images("torchvision-io", 1), c)).samples_per_s ==
        Approx(200 / (0.4 + 0.2)));
  // native: cpu.augment's rate; dali-gpu: the GPUs' JPEG decoding.
  CHECK(*cpu_of(predict(hw, images("native", 1), c)).samples_per_s == Approx(500));
  const component dali = cpu_of(predict(hw, images("dali-gpu", 1), c));
  CHECK(*dali.samples_per_s == Approx(c.dali_gpu_decode_per_gpu));
  // A quarter of the pixels: decode and crop (0.7 of the time) a quarter as long.
  workload small = images("python", 1);
  small.data.image_width = 250;
  small.data.image_height = 375 / 2;
  CHECK(*cpu_of(predict(hw, small, c)).samples_per_s ==
        Approx(200 / (0.7 * (250.0 * 187) / (500 * 375) + 0.3)));
  // A CPU-bound job names the cheapest change that feeds its GPU, with the rate it predicts.
  const sizing bound = predict(hw, images("python", 1), c);
  REQUIRE(bound.limiting_component == component_id::cpu);
  const auto& advice = bound.recommendations;
  CHECK(std::any_of(advice.begin(), advice.end(), [](const std::string& a) {
    return a.find("the cheapest loader change that keeps the 1 GPUs fed") != std::string::npos &&
           a.find("dali-gpu") != std::string::npos;
  }));
  CHECK(std::any_of(advice.begin(), advice.end(), [](const std::string& a) {
    return a.find("pillow-simd") != std::string::npos &&
           a.find("pre-resized to 341x256") != std::string::npos;
  }));
}

TEST_CASE("tar shards are read at the storage's sequential rate, files at the random one",
          "[unit][model]") {
  const constants c = load_constants();
  hardware_profile hw = cpu_profile(64);
  hw.set(fig::storage_read, 1.1, basis::measured, "test");
  hw.set(fig::storage_seq, 3.3, basis::measured, "test");
  hw.set(fig::host_memory, 16, basis::measured, "test");  // ImageNet does not fit in the cache
  const auto storage = [&](const std::string& format) {
    const sizing s = predict(hw, images("python", 8, format), c);
    for (const component& comp : s.components) {
      if (comp.name == component_id::storage) return *comp.samples_per_s;
    }
    return 0.0;
  };
  CHECK(storage("shards") == Approx(3 * storage("files")));
}

TEST_CASE("cpu.dataloader takes the first python3 with torch and says which it tried", "[unit]") {
  const fs::path dir =
      fs::temp_directory_path() / ("gpubench-python-" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  const auto script = [&](const fs::path& path, int status) {
    std::ofstream(path) << "#!/bin/sh\nexit " << status << "\n";
    ::chmod(path.c_str(), 0755);
  };
  script(dir / "a" / "python3", 3);  // a python without torch: find_spec says so
  script(dir / "b" / "python3", 0);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir / "a").string() + ":" + (dir / "b").string()).c_str(), 1);
  ::unsetenv("GPUBENCH_PYTHON");
  const python::search on_path = python::find_with_torch({});
  REQUIRE(on_path.found.has_value());
  CHECK(*on_path.found == dir / "b" / "python3");
  CHECK(on_path.tried.size() == 2);
  ::setenv("PATH", (dir / "a").string().c_str(), 1);
  const python::search none = python::find_with_torch({});
  CHECK_FALSE(none.found.has_value());
  CHECK(python::not_found_reason(none) == "no python3 with torch and torchvision found (tried " +
                                              (dir / "a" / "python3").string() + ")");
  // --python alone, even where PATH has one.
  ::setenv("PATH", (dir / "b").string().c_str(), 1);
  const python::search given = python::find_with_torch(dir / "a" / "python3");
  CHECK_FALSE(given.found.has_value());
  CHECK(given.tried == std::vector<std::string>{(dir / "a" / "python3").string()});
  // $GPUBENCH_PYTHON alone, too.
  ::setenv("GPUBENCH_PYTHON", (dir / "a" / "python3").c_str(), 1);
  const python::search env = python::find_with_torch({});
  CHECK_FALSE(env.found.has_value());
  CHECK(env.tried == std::vector<std::string>{(dir / "a" / "python3").string()});
  ::unsetenv("GPUBENCH_PYTHON");
  ::setenv("PATH", old_path.c_str(), 1);
  fs::remove_all(dir);
}
