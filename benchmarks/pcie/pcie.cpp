// pcie.h2d, pcie.d2h, pcie.bidir (one GPU) and pcie.h2d_all, pcie.d2h_all (every GPU at once):
// host <-> GPU bandwidth through the copy engines. Pinned host memory on the GPU's own NUMA node;
// pinned copies are held behind a spin kernel while they are queued (as nvbandwidth does) and
// timed with events; pageable copies are timed by the host clock, as an application sees them.
// Each byte transferred is counted once (docs/methodology.md).
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string_view>

#include "gpubench/benchmark.hpp"
#include "gpubench/config.hpp"
#include "gpubench/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/cuda.hpp"
#include "gpubench/gpu_monitor.hpp"
#include "gpubench/host_memory.hpp"
#include "gpubench/statistics.hpp"
#include "kernels/copy.cuh"
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

constexpr std::uint32_t h2d_seed = 0x1234u;
constexpr std::uint32_t d2h_seed = 0xabcdu;

#if GPUBENCH_HAVE_CUDA
// One GPU's side of the benchmark: its buffers and streams.
struct lane {
  int device = 0;
  std::string pci_bus_id;
  std::optional<int> numa_node;
  std::unique_ptr<cuda::stream> h2d_stream;
  std::unique_ptr<cuda::stream> d2h_stream;
  cuda::device_buffer h2d_dst;
  cuda::device_buffer d2h_src;
  std::unique_ptr<host_buffer> h2d_src;
  std::unique_ptr<host_buffer> d2h_dst;
  bool host_bound = true;
  std::vector<double> seconds;  // per timed iteration (after warm-up)
};

// Keeps host memory registered (pinned) with CUDA for the lifetime of the benchmark.
class registration {
 public:
  explicit registration(void* p, std::size_t bytes) : p_(p) {
    GPUBENCH_CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterPortable));
  }
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
  ~registration() { cudaHostUnregister(p_); }

 private:
  void* p_;
};

class pcie_copy final : public instance {
 public:
  pcie_copy(const pcie_spec& spec, const context& ctx, const axis_values& values)
      : spec_(spec),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes")) / 16 * 16),
        pinned_(values.get_string("memory") == "pinned") {
    if (bytes_ == 0) {
      throw std::invalid_argument(std::string(spec.id) + ": bytes must be at least 16");
    }
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
    for (auto& l : lanes_) l.seconds.clear();
  }

  std::optional<double> run_iteration() override {
    std::vector<double> per_lane;
    if (pinned_) {
      std::vector<kernels::held_work> work;
      std::vector<std::size_t> owner;  // lane of each held_work
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        lane& l = lanes_[i];
        if (spec_.dir != direction::d2h) {
          work.push_back({l.device, l.h2d_stream->get(), [this, &l] { enqueue_h2d(l); }});
          owner.push_back(i);
        }
        if (spec_.dir != direction::h2d) {
          work.push_back({l.device, l.d2h_stream->get(), [this, &l] { enqueue_d2h(l); }});
          owner.push_back(i);
        }
      }
      const std::vector<double> seconds =
          kernels::time_held(work, flag_, [this] { sample_links(); });
      per_lane.assign(lanes_.size(), 0);
      for (std::size_t w = 0; w < seconds.size(); ++w) {
        per_lane[owner[w]] = std::max(per_lane[owner[w]], seconds[w]);
      }
    } else {
      // Pageable copies block the host while they are staged, so they cannot be held behind a
      // spin kernel: time them as the host sees them.
      const auto start = std::chrono::steady_clock::now();
      for (lane& l : lanes_) {
        GPUBENCH_CUDA_CHECK(cudaSetDevice(l.device));
        if (spec_.dir != direction::d2h) enqueue_h2d(l);
        if (spec_.dir != direction::h2d) enqueue_d2h(l);
      }
      sample_links();
      for (lane& l : lanes_) {
        GPUBENCH_CUDA_CHECK(cudaSetDevice(l.device));
        GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.h2d_stream->get()));
        GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.d2h_stream->get()));
      }
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      per_lane.assign(lanes_.size(), elapsed);
    }
    for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i].seconds.push_back(per_lane[i]);
    // The aggregate ends when the slowest GPU ends (they start together when released).
    return *std::max_element(per_lane.begin(), per_lane.end());
  }

  [[nodiscard]] verification verify() override {
    verification v;
    std::size_t wrong = 0;
    std::size_t checked = 0;
    for (lane& l : lanes_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(l.device));
      if (spec_.dir != direction::d2h) {
        cuda::device_buffer lane_counter(sizeof(unsigned long long));
        GPUBENCH_CUDA_CHECK(cudaMemset(lane_counter.get(), 0, lane_counter.size()));
        kernels::enqueue_check_pattern(l.h2d_dst.as<std::uint32_t>(), bytes_ / 4, h2d_seed,
                                       lane_counter.as<unsigned long long>(), l.h2d_stream->get());
        GPUBENCH_CUDA_CHECK(cudaGetLastError());
        unsigned long long bad = 0;
        GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.h2d_stream->get()));
        GPUBENCH_CUDA_CHECK(
            cudaMemcpy(&bad, lane_counter.get(), sizeof bad, cudaMemcpyDeviceToHost));
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
    for (const lane& l : lanes_) {
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
                                : "host clock from first enqueue to completion"},
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
  lane make_lane(const context& ctx, int device) {
    lane l;
    l.device = device;
    for (const auto& gpu : ctx.system().gpus) {
      if (gpu.index == device) {
        l.pci_bus_id = gpu.pci_bus_id;
        l.numa_node = gpu.numa_node;
      }
    }
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
    l.h2d_stream = std::make_unique<cuda::stream>();
    l.d2h_stream = std::make_unique<cuda::stream>();
    if (spec_.dir != direction::d2h) {
      l.h2d_dst = cuda::device_buffer(bytes_);
      l.h2d_src = std::make_unique<host_buffer>(bytes_, l.numa_node);
      kernels::fill_pattern_host(static_cast<std::uint32_t*>(l.h2d_src->data()), bytes_ / 4,
                                 h2d_seed);
      l.host_bound = l.host_bound && (l.h2d_src->bound() || !l.numa_node);
      if (pinned_)
        registrations_.push_back(std::make_unique<registration>(l.h2d_src->data(), bytes_));
    }
    if (spec_.dir != direction::h2d) {
      l.d2h_src = cuda::device_buffer(bytes_);
      kernels::enqueue_fill_pattern(l.d2h_src.as<std::uint32_t>(), bytes_ / 4, d2h_seed,
                                    l.d2h_stream->get());
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.d2h_stream->get()));
      l.d2h_dst = std::make_unique<host_buffer>(bytes_, l.numa_node);
      std::fill_n(static_cast<std::uint32_t*>(l.d2h_dst->data()), bytes_ / 4, 0u);  // first touch
      l.host_bound = l.host_bound && (l.d2h_dst->bound() || !l.numa_node);
      if (pinned_)
        registrations_.push_back(std::make_unique<registration>(l.d2h_dst->data(), bytes_));
    }
    return l;
  }

  void enqueue_h2d(lane& l) {
    for (std::size_t i = 0; i < copies_; ++i) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.h2d_dst.get(), l.h2d_src->data(), bytes_,
                                          cudaMemcpyHostToDevice, l.h2d_stream->get()));
    }
  }

  void enqueue_d2h(lane& l) {
    for (std::size_t i = 0; i < copies_; ++i) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.d2h_dst->data(), l.d2h_src.get(), bytes_,
                                          cudaMemcpyDeviceToHost, l.d2h_stream->get()));
    }
  }

  // Links train down when idle: the state that matters is the one seen while copies run.
  void sample_links() {
    if (!monitor_) return;
    for (const lane& l : lanes_) {
      const auto s = monitor_->sample(l.pci_bus_id);
      if (!s || !s->pcie.gen) continue;
      if (!link_seen_.gen || *s->pcie.gen < *link_seen_.gen ||
          (*s->pcie.gen == *link_seen_.gen && s->pcie.width < link_seen_.width)) {
        link_seen_ = s->pcie;  // the worst link over the GPUs and iterations
      }
    }
  }

  const pcie_spec& spec_;
  std::size_t bytes_;
  bool pinned_;
  std::size_t copies_ = 1;
  std::vector<lane> lanes_;
  std::vector<std::unique_ptr<registration>> registrations_;
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
  def.add_axis("bytes", axis_kind::bytes, default_sizes(), "bytes per copy");
  if (spec.all_gpus) {
    def.add_choice_axis("memory", {"pinned"}, "host memory: pinned (page-locked)");
  } else {
    def.add_choice_axis("memory", {"pinned", "pageable"},
                        "host memory: pinned (page-locked) or pageable");
  }
  def.add_metric("GBps", metric_kind::bandwidth_GBps)
      .set_timing(timing::manual)
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
