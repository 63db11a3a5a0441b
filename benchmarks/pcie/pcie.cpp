// pcie.h2d, pcie.d2h, pcie.bidir (one GPU) and pcie.h2d_all, pcie.d2h_all (every GPU at once):
// host <-> GPU bandwidth through the copy engines. Pinned host memory on the GPU's own NUMA node;
// pinned copies are held behind a spin kernel while they are queued (as nvbandwidth does) and
// timed with events; pageable copies are timed by the host clock, as an application sees them,
// each direction issued from a host thread of its own so both directions really run at once.
// Each byte transferred is counted once (docs/methodology.md).
#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <latch>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/core/statistics.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/gpu_monitor.hpp"
#include "gpubench/harness/host_memory.hpp"
#include "gpubench/kernels/copy.cuh"
#endif

namespace gpubench {
namespace {

enum class direction { h2d, d2h, bidir };

struct pcie_spec {
  std::string_view id;
  direction dir;
  bool all_gpus;
  std::string_view description;
};
constexpr pcie_spec pcie_specs[] = {
    {"pcie.h2d", direction::h2d, false, "Host-to-GPU copy bandwidth per GPU (copy engine)"},
    {"pcie.d2h", direction::d2h, false, "GPU-to-host copy bandwidth per GPU (copy engine)"},
    {"pcie.bidir", direction::bidir, false,
     "Simultaneous host-to-GPU and GPU-to-host copies on one GPU, both directions summed"},
    {"pcie.h2d_all", direction::h2d, true,
     "Host-to-GPU copies on every GPU at once: aggregate (shared switches, root complexes)"},
    {"pcie.d2h_all", direction::d2h, true,
     "GPU-to-host copies on every GPU at once: aggregate (shared switches, root complexes)"},
};

#if GPUBENCH_HAVE_CUDA
constexpr std::uint32_t h2d_seed = 0x1234u;
constexpr std::uint32_t d2h_seed = 0xabcdu;

// One GPU's side of the benchmark: its buffers and streams.
struct lane {
  explicit lane(int gpu) : device(gpu), h2d_stream(gpu), d2h_stream(gpu) {}
  int device;
  std::string pci_bus_id;
  std::optional<int> numa_node;
  cuda::stream h2d_stream;
  cuda::stream d2h_stream;
  cuda::device_buffer h2d_dst;
  cuda::device_buffer d2h_src;
  std::unique_ptr<host_buffer> h2d_src;
  std::unique_ptr<host_buffer> d2h_dst;
  std::optional<cuda::host_registration> h2d_pinned;  // set for pinned host memory
  std::optional<cuda::host_registration> d2h_pinned;
  pcie_link_info max_link;  // the link's maxima, from discovery (live samples carry current only)
  bool host_bound = true;
  std::vector<double> seconds;  // per timed iteration (after warm-up)
};

// Runs each job on a host thread of its own, all released at once; returns the seconds from the
// release to the last job's end. Pageable copies block the thread that issues them while the
// driver stages the data, so directions that an application would drive from separate threads
// (pcie.bidir) must be issued from separate threads to run at once. Threads are started before
// the clock, so their start-up is not timed.
double run_at_once(const std::vector<std::function<void()>>& jobs) {
  std::latch ready(static_cast<std::ptrdiff_t>(jobs.size()) + 1);
  std::latch go(1);
  std::vector<std::chrono::steady_clock::time_point> finished(jobs.size());
  std::vector<std::exception_ptr> errors(jobs.size());
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    threads.emplace_back([&, i] {
      ready.count_down();
      go.wait();
      try {
        jobs[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
      finished[i] = std::chrono::steady_clock::now();
    });
  }
  ready.arrive_and_wait();
  const auto start = std::chrono::steady_clock::now();
  go.count_down();
  for (auto& t : threads) t.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return std::chrono::duration<double>(*std::max_element(finished.begin(), finished.end()) - start)
      .count();
}

class pcie_copy final : public instance {
 public:
  pcie_copy(const pcie_spec& spec, const context& ctx, const axis_values& values)
      : spec_(spec),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes")) / 16 * 16),
        pinned_(values.get_string("memory") == "pinned") {
    if (!pinned_ && values.get_string("memory") != "pageable") {
      throw std::invalid_argument(std::string(spec.id) + ": memory is pinned or pageable");
    }
    copies_ = kernels::copies_per_iteration(bytes_);
    std::vector<int> devices;
    if (spec.all_gpus) {
      devices = ctx.gpu_indices();
    } else {
      devices.push_back(static_cast<int>(values.get_int64("gpu")));
    }
    std::string why_not;
    monitor_ = gpu_monitor::open(why_not);
    for (int device : devices) {
      lanes_.push_back(make_lane(ctx, device));
    }
  }

  [[nodiscard]] work work_per_iteration() const override {
    const double per_lane =
        static_cast<double>(bytes_ * copies_) * (spec_.dir == direction::bidir ? 2 : 1);
    return work{.bytes_read = per_lane * static_cast<double>(lanes_.size())};
  }

  void warmup_done() override {
    for (auto& l : lanes_) l->seconds.clear();
  }

  std::optional<double> run_iteration() override {
    std::vector<double> per_lane;
    if (pinned_) {
      std::vector<kernels::held_work> work;
      std::vector<std::size_t> owner;  // lane of each held_work
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        lane& l = *lanes_[i];
        if (spec_.dir != direction::d2h) {
          work.push_back({&l.h2d_stream, [this, &l] { enqueue_h2d(l); }});
          owner.push_back(i);
        }
        if (spec_.dir != direction::h2d) {
          work.push_back({&l.d2h_stream, [this, &l] { enqueue_d2h(l); }});
          owner.push_back(i);
        }
      }
      // NVML is read while the copies run: events time the GPU, so the host's calls cost the
      // measurement nothing.
      const std::vector<double> seconds =
          kernels::time_held(work, flag_, [this] { sample_links(); });
      per_lane.assign(lanes_.size(), 0);
      for (std::size_t w = 0; w < seconds.size(); ++w) {
        per_lane[owner[w]] = std::max(per_lane[owner[w]], seconds[w]);
      }
    } else {
      lane& l = *lanes_.front();  // pageable copies are a per-GPU axis value only
      std::vector<std::function<void()>> jobs;
      if (spec_.dir != direction::d2h) {
        jobs.emplace_back([this, &l] {
          enqueue_h2d(l);
          l.h2d_stream.synchronize();
        });
      }
      if (spec_.dir != direction::h2d) {
        jobs.emplace_back([this, &l] {
          enqueue_d2h(l);
          l.d2h_stream.synchronize();
        });
      }
      per_lane.assign(1, run_at_once(jobs));
      // The host clock times this case: the link is read after it stops (the copies are done,
      // but a link that trained down under load stays down for a while).
      sample_links();
    }
    for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i]->seconds.push_back(per_lane[i]);
    // The aggregate ends when the slowest GPU ends (they start together when released).
    return *std::max_element(per_lane.begin(), per_lane.end());
  }

  [[nodiscard]] verification verify() override {
    verification v;
    std::size_t wrong = 0;
    std::size_t checked = 0;
    for (const auto& lp : lanes_) {
      lane& l = *lp;
      if (spec_.dir != direction::d2h) {
        // The counter is zeroed, counted and read on one stream, in that order.
        cuda::device_buffer counter(l.device, sizeof(unsigned long long));
        cuda::enqueue_zero(counter, l.h2d_stream);
        kernels::enqueue_check_pattern(l.h2d_dst.as<std::uint32_t>(), bytes_ / 4, h2d_seed,
                                       counter.as<unsigned long long>(), l.h2d_stream);
        GPUBENCH_CUDA_CHECK(cudaGetLastError());
        unsigned long long bad = 0;
        GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&bad, counter.get(), sizeof bad, cudaMemcpyDeviceToHost,
                                            l.h2d_stream.get()));
        l.h2d_stream.synchronize();
        wrong += bad;
        checked += bytes_ / 4;
      }
      if (spec_.dir != direction::h2d) {
        wrong += kernels::check_pattern_host(static_cast<const std::uint32_t*>(l.d2h_dst->data()),
                                             bytes_ / 4, d2h_seed);
        checked += bytes_ / 4;
      }
    }
    v.passed = wrong == 0;
    v.detail = "every 32-bit word copied compared with its pattern: " + std::to_string(checked) +
               " words, " + std::to_string(wrong) + " wrong";
    return v;
  }

  [[nodiscard]] json info() const override {
    json gpus = json::array();
    for (const auto& lp : lanes_) {
      const lane& l = *lp;
      json g{
          {"gpu", l.device}, {"host_numa_node", l.numa_node}, {"host_memory_bound", l.host_bound}};
      if (!l.seconds.empty()) {
        const double bytes =
            static_cast<double>(bytes_ * copies_) * (spec_.dir == direction::bidir ? 2 : 1);
        std::vector<double> rates;
        for (double s : l.seconds) rates.push_back(bytes / s / 1e9);
        g["GBps_median"] = summarize(rates).median;
      }
      gpus.push_back(std::move(g));
    }
    json out{{"bytes", bytes_},
             {"copies_per_iteration", copies_},
             {"memory", pinned_ ? "pinned" : "pageable"},
             {"engine", "copy engine (cudaMemcpyAsync)"},
             {"timing", pinned_ ? "CUDA events, copies held behind a spin kernel"
                                : "host clock from the release of the issuing threads (one per "
                                  "direction) to the end of the last copy"},
             {"bytes_counted", "each byte transferred once"},
             {"gpus", std::move(gpus)}};
    if (link_seen_.gen) {
      out["pcie_link_during_copy"] = link_seen_;
    } else {
      out["pcie_link_during_copy"] = nullptr;
      out["pcie_link_note"] = monitor_ ? "NVML gave no link state" : "NVML not available";
    }
    return out;
  }

 private:
  std::unique_ptr<lane> make_lane(const context& ctx, int device) {
    auto l = std::make_unique<lane>(device);
    for (const auto& gpu : ctx.system().gpus) {
      if (gpu.index == device) {
        l->pci_bus_id = gpu.pci_bus_id;
        l->numa_node = gpu.numa_node;
        if (gpu.pcie) l->max_link = *gpu.pcie;
      }
    }
    if (spec_.dir != direction::d2h) {
      l->h2d_dst = cuda::device_buffer(device, bytes_);
      l->h2d_src = std::make_unique<host_buffer>(bytes_, l->numa_node);
      kernels::fill_pattern_host(static_cast<std::uint32_t*>(l->h2d_src->data()), bytes_ / 4,
                                 h2d_seed);
      l->host_bound = l->host_bound && (l->h2d_src->bound() || !l->numa_node);
      if (pinned_) l->h2d_pinned.emplace(l->h2d_src->data(), bytes_);
    }
    if (spec_.dir != direction::h2d) {
      l->d2h_src = cuda::device_buffer(device, bytes_);
      kernels::enqueue_fill_pattern(l->d2h_src.as<std::uint32_t>(), bytes_ / 4, d2h_seed,
                                    l->d2h_stream);
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      l->d2h_stream.synchronize();
      l->d2h_dst = std::make_unique<host_buffer>(bytes_, l->numa_node);
      std::fill_n(static_cast<std::uint32_t*>(l->d2h_dst->data()), bytes_ / 4, 0u);  // first touch
      l->host_bound = l->host_bound && (l->d2h_dst->bound() || !l->numa_node);
      if (pinned_) l->d2h_pinned.emplace(l->d2h_dst->data(), bytes_);
    }
    return l;
  }

  void enqueue_h2d(lane& l) {
    const cuda::device_scope scope(l.device);
    for (std::size_t i = 0; i < copies_; ++i) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.h2d_dst.get(), l.h2d_src->data(), bytes_,
                                          cudaMemcpyHostToDevice, l.h2d_stream.get()));
    }
  }

  void enqueue_d2h(lane& l) {
    const cuda::device_scope scope(l.device);
    for (std::size_t i = 0; i < copies_; ++i) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.d2h_dst->data(), l.d2h_src.get(), bytes_,
                                          cudaMemcpyDeviceToHost, l.d2h_stream.get()));
    }
  }

  // Links train down when idle: the state that matters is the one seen while copies run.
  void sample_links() {
    if (!monitor_) return;
    for (const auto& lp : lanes_) {
      const lane& l = *lp;
      const auto s = monitor_->sample(l.pci_bus_id);
      if (!s || !s->pcie.gen) continue;
      if (!link_seen_.gen || *s->pcie.gen < *link_seen_.gen ||
          (*s->pcie.gen == *link_seen_.gen && s->pcie.width < link_seen_.width)) {
        link_seen_ = s->pcie;  // the worst link over the GPUs and iterations
        link_seen_.max_gen = l.max_link.max_gen;
        link_seen_.max_width = l.max_link.max_width;
      }
    }
  }

  const pcie_spec& spec_;
  std::size_t bytes_;
  bool pinned_;
  std::size_t copies_ = 1;
  std::vector<std::unique_ptr<lane>> lanes_;
  kernels::release_flag flag_;
  std::unique_ptr<gpu_monitor> monitor_;
  pcie_link_info link_seen_;
};
#endif

std::vector<axis_value> default_sizes() {
  std::vector<axis_value> sizes;
  for (std::int64_t mib = 1; mib <= 1024; mib *= 4) sizes.emplace_back(mib << 20);
  return sizes;
}

benchmark_definition pcie_definition(const pcie_spec& spec) {
  benchmark_definition def{std::string(spec.id)};
  def.set_description(std::string(spec.description));
  if (!spec.all_gpus) {
    def.add_axis(gpu_axis());
  }
  def.add_axis("bytes", axis_kind::bytes, default_sizes(), "bytes per copy")
      .set_range("bytes", axis_range{16, std::int64_t{1} << 40, 16});
  if (spec.all_gpus) {
    def.add_choice_axis("memory", {"pinned"}, "host memory: pinned (page-locked)");
  } else {
    def.add_choice_axis("memory", {"pinned", "pageable"},
                        "host memory: pinned (page-locked) or pageable");
  }
  def.add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .set_timing(timing::manual)
      .set_needs_gpu()
      .set_supported(cuda_gpu_unavailable_reason);
#if GPUBENCH_HAVE_CUDA
  def.set_factory([&spec](const context& ctx, const axis_values& values) {
    return std::make_unique<pcie_copy>(spec, ctx, values);
  });
#else
  def.set_factory(unavailable_factory("built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(pcie_definition(pcie_specs[0]));
GPUBENCH_REGISTER(pcie_definition(pcie_specs[1]));
GPUBENCH_REGISTER(pcie_definition(pcie_specs[2]));
GPUBENCH_REGISTER(pcie_definition(pcie_specs[3]));
GPUBENCH_REGISTER(pcie_definition(pcie_specs[4]));

}  // namespace
}  // namespace gpubench
