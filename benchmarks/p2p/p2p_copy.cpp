// p2p.copy: GPU-to-GPU bandwidth for every ordered pair, by copy engine (cudaMemcpyPeerAsync) or
// SM copy kernel (launched on the source GPU, writing into the peer's memory), one direction or
// both at once. Copies are held behind spin kernels while queued, timed with events; each byte
// transferred counts once. SM copies need peer access: a pair without it is skipped ("waived").
#include <algorithm>
#include <stdexcept>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/harness/cuda.hpp"
#include "gpubench/kernels/copy.cuh"
#endif

namespace gpubench {
namespace {

std::pair<int, int> parse_pair(const std::string& text) {
  const auto pair = parse_gpu_pair(text);
  if (!pair) {
    throw std::invalid_argument("expected SRC>DST with two different GPU indices, got '" + text +
                                "'");
  }
  return *pair;
}

#if GPUBENCH_HAVE_CUDA
constexpr std::uint32_t forward_seed = 0x5151u;
constexpr std::uint32_t reverse_seed = 0x7373u;

bool can_access(int from, int to) {
  int can = 0;
  GPUBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  return can != 0;
}

void enable_peer_access(int from, int to) {
  const cuda::device_scope scope(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // clear the sticky-free error: already on is what we want
    return;
  }
  GPUBENCH_CUDA_CHECK(status);
}

// One direction of the pair: a buffer on each side, the copies' stream on the source and the
// check's on the destination.
struct route {
  route(int source, int destination, std::uint32_t pattern_seed)
      : src(source),
        dst(destination),
        seed(pattern_seed),
        stream(source),
        check_stream(destination) {}
  int src;
  int dst;
  std::uint32_t seed;
  cuda::stream stream;
  cuda::stream check_stream;
  cuda::device_buffer from;  // on src
  cuda::device_buffer to;    // on dst
  int blocks = 0;            // SM copy grid on src
};

class p2p_copy final : public instance {
 public:
  p2p_copy(const context& ctx, const axis_values& values)
      : engine_(values.get_string("engine")),
        bidirectional_(values.get_string("direction") == "bidir"),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes")) / 16 * 16) {
    const auto [src, dst] = parse_pair(values.get_string("pair"));
    const auto gpus = ctx.gpu_indices();
    for (int g : {src, dst}) {
      if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) {
        throw std::invalid_argument("p2p.copy: GPU " + std::to_string(g) + " is not in this run");
      }
    }
    if (engine_ != "ce" && engine_ != "sm") {
      throw std::invalid_argument("p2p.copy: engine is ce or sm, got '" + engine_ + "'");
    }
    if (!bidirectional_ && values.get_string("direction") != "uni") {
      throw std::invalid_argument("p2p.copy: direction is uni or bidir");
    }
    copies_ = kernels::copies_per_iteration(bytes_);
    peer_access_ = can_access(src, dst) && (!bidirectional_ || can_access(dst, src));
    if (engine_ == "sm" && !peer_access_) {
      throw skip_case("no peer access between GPU " + std::to_string(src) + " and GPU " +
                      std::to_string(dst) +
                      ": SM copies need it (copy-engine copies are staged "
                      "through host memory instead)");
    }
    if (peer_access_) {
      enable_peer_access(src, dst);
      if (bidirectional_) enable_peer_access(dst, src);
    }
    routes_.push_back(make_route(src, dst, forward_seed));
    if (bidirectional_) routes_.push_back(make_route(dst, src, reverse_seed));
    for (int a : gpus) {
      json row = json::array();
      for (int b : gpus) row.push_back(a == b ? true : can_access(a, b));
      peer_matrix_.push_back(std::move(row));
    }
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.bytes_read = static_cast<double>(bytes_ * copies_ * routes_.size())};
  }

  std::optional<double> run_iteration() override {
    std::vector<kernels::held_work> work;
    for (const auto& r : routes_) {
      work.push_back({&r->stream, [this, &one = *r] { enqueue(one); }});
    }
    const auto seconds = kernels::time_held(work, flag_);
    return *std::max_element(seconds.begin(), seconds.end());
  }

  [[nodiscard]] verification verify() override {
    unsigned long long wrong = 0;
    for (const auto& rp : routes_) {
      const route& r = *rp;
      cuda::device_buffer counter(r.dst, sizeof(unsigned long long));
      cuda::enqueue_zero(counter, r.check_stream);
      kernels::enqueue_check_pattern(r.to.as<std::uint32_t>(), bytes_ / 4, r.seed,
                                     counter.as<unsigned long long>(), r.check_stream);
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      unsigned long long bad = 0;
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&bad, counter.get(), sizeof bad, cudaMemcpyDeviceToHost,
                                          r.check_stream.get()));
      r.check_stream.synchronize();
      wrong += bad;
    }
    verification v;
    v.passed = wrong == 0;
    v.detail = "destination words compared with the source pattern: " +
               std::to_string(bytes_ / 4 * routes_.size()) + " words, " + std::to_string(wrong) +
               " wrong";
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{
        {"bytes", bytes_},
        {"copies_per_iteration", copies_},
        {"engine", engine_ == "ce" ? "copy engine (cudaMemcpyPeerAsync)"
                                   : "SM copy kernel on the source GPU, writing to the peer"},
        {"direction", bidirectional_ ? "both directions at once, summed" : "one direction"},
        {"peer_access", peer_access_},
        {"peer_access_matrix", peer_matrix_},
        {"bytes_counted", "each byte transferred once"}};
  }

 private:
  std::unique_ptr<route> make_route(int src, int dst, std::uint32_t seed) {
    auto r = std::make_unique<route>(src, dst, seed);
    r->to = cuda::device_buffer(dst, bytes_);
    cuda::enqueue_zero(r->to, r->check_stream);
    r->from = cuda::device_buffer(src, bytes_);
    kernels::enqueue_fill_pattern(r->from.as<std::uint32_t>(), bytes_ / 4, seed, r->stream);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    r->stream.synchronize();
    r->check_stream.synchronize();
    int sms = 0;
    GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, src));
    r->blocks = 2 * sms;
    return r;
  }

  void enqueue(const route& r) {
    for (std::size_t i = 0; i < copies_; ++i) {
      if (engine_ == "ce") {
        GPUBENCH_CUDA_CHECK(
            cudaMemcpyPeerAsync(r.to.get(), r.dst, r.from.get(), r.src, bytes_, r.stream.get()));
      } else {
        kernels::enqueue_sm_copy(r.to.get(), r.from.get(), bytes_, r.blocks, r.stream);
      }
    }
  }

  std::string engine_;
  bool bidirectional_;
  std::size_t bytes_;
  std::size_t copies_ = 1;
  bool peer_access_ = false;
  std::vector<std::unique_ptr<route>> routes_;
  json peer_matrix_ = json::array();
  kernels::release_flag flag_;
};
#endif

std::optional<std::string> p2p_supported(const context& ctx) {
  if (auto reason = cuda_gpu_unavailable_reason(ctx)) return reason;
  const auto gpus = ctx.gpu_indices();
  if (gpus.size() < 2) {
    return "needs 2 or more GPUs; found " + std::to_string(gpus.size());
  }
  return std::nullopt;
}

std::vector<axis_value> every_ordered_pair(const context& ctx) {
  std::vector<axis_value> pairs;
  const auto gpus = ctx.gpu_indices();
  for (int a : gpus) {
    for (int b : gpus) {
      if (a != b) pairs.emplace_back(std::to_string(a) + ">" + std::to_string(b));
    }
  }
  return pairs;
}

benchmark_definition p2p_definition() {
  benchmark_definition def("p2p.copy");
  def.set_description("GPU-to-GPU bandwidth for every ordered pair: copy engine and SM copies")
      .add_axis(axis{"pair", axis_kind::string, "SRC>DST GPU indices", every_ordered_pair,
                     [](const axis_value& v) { (void)parse_pair(std::get<std::string>(v)); }})
      .add_choice_axis("engine", {"ce", "sm"}, "ce: copy engine, sm: copy kernel")
      .add_choice_axis("direction", {"uni", "bidir"}, "one way, or both at once")
      .add_axis("bytes", axis_kind::bytes, {std::int64_t{256} << 20}, "bytes per copy")
      .set_range("bytes", axis_range{16, std::int64_t{1} << 40, 16})
      .add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .set_timing(timing::manual)
      .set_needs_gpu()
      .set_supported(p2p_supported);
#if GPUBENCH_HAVE_CUDA
  def.set_instance<p2p_copy>();
#else
  def.set_factory(unavailable_factory("built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(p2p_definition());

}  // namespace
}  // namespace gpubench
