// net.pairwise: point-to-point bandwidth (each direction) and latency between every pair of
// nodes of an MPI job, over MPI's own transport (InfiniBand/RoCE verbs, or TCP), in the manner
// of the OSU micro-benchmarks' osu_bw and osu_latency. One rank per node (its lowest) takes part;
// pairs meet in rounds in which no node is in two pairs, every node walking the same schedule,
// so the pairs of a round run at once and the rounds keep in step through the messages
// themselves (pairwise_links.hpp). The job's matrix names the slow node or link
// (docs/methodology.md, "net.pairwise").
#include <algorithm>
#include <chrono>
#include <cstdint>

#include "gpubench/benchmarks/net/pairwise_links.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/job.hpp"
#include "gpubench/harness/runner.hpp"

namespace gpubench {
namespace {

// osu_latency's count: enough round trips that a microsecond shows, few enough for TCP.
constexpr int latency_round_trips = 1000;
constexpr int latency_warmup_round_trips = 20;
// Messages in flight at once per window (osu_bw keeps 64 small ones in flight), bounded so the
// receive buffers stay within window_bytes.
constexpr std::int64_t max_window = 16;
constexpr std::int64_t window_bytes = std::int64_t{64} << 20;
// Timed windows per direction, after one untimed.
constexpr int timed_windows = 8;

std::optional<std::string> pairwise_supported(const context& ctx) {
#if GPUBENCH_HAVE_MPI
  return pairwise::too_few_nodes(ctx);
#else
  (void)ctx;
  return std::string("built without MPI (not found at build time)");
#endif
}

// The byte at `offset` of a message from node `from` to node `to`: a receiver that got another
// pair's data, or bytes out of place, sees the difference.
std::uint8_t pattern(int from, int to, std::size_t offset) {
  return static_cast<std::uint8_t>((offset * 131 + static_cast<std::size_t>(from) * 31 +
                                    static_cast<std::size_t>(to) * 7 + offset / 4096) &
                                   0xff);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Host buffers, MPI point-to-point: windows of messages in flight, as osu_bw.
class mpi_transport final : public pairwise::transport {
 public:
  mpi_transport(const job& j, std::size_t bytes, double timeout_s)
      : job_(j),
        me_(j.layout().node_index),
        bytes_(bytes),
        window_(static_cast<int>(std::clamp(window_bytes / static_cast<std::int64_t>(bytes),
                                            std::int64_t{1}, max_window))),
        timeout_s_(timeout_s),
        send_(bytes_),
        receive_(bytes_ * static_cast<std::size_t>(window_)) {}

  // One untimed window, then timed_windows windows of window_ messages; the receiver's reply
  // after the last one stops the clock, so the rate is what arrived, not what left.
  double send_stream(int peer) override {
    const int to = pairwise::leader_rank(job_, peer);
    for (std::size_t k = 0; k < bytes_; ++k) send_[k] = pattern(me_, peer, k);
    const std::vector<transfer> window(
        static_cast<std::size_t>(window_),
        transfer{transfer::direction::send, to, send_.data(), bytes_});
    exchange(window);
    const auto start = std::chrono::steady_clock::now();
    for (int w = 0; w < timed_windows; ++w) exchange(window);
    std::uint8_t reply = 0;
    exchange({{transfer::direction::receive, to, &reply, 1}});
    return stream_bytes() / seconds_since(start) / 1e9;
  }

  void receive_stream(int peer) override {
    const int from = pairwise::leader_rank(job_, peer);
    std::vector<transfer> window;
    window.reserve(static_cast<std::size_t>(window_));
    for (int k = 0; k < window_; ++k) {
      window.push_back({transfer::direction::receive, from,
                        receive_.data() + static_cast<std::size_t>(k) * bytes_, bytes_});
    }
    std::fill(receive_.begin(), receive_.end(), std::uint8_t{0});
    for (int w = 0; w <= timed_windows; ++w) exchange(window);
    std::uint8_t reply = 1;
    exchange({{transfer::direction::send, from, &reply, 1}});
    // Checked after the reply, outside the sender's clock: every message of the last window.
    for (int k = 0; k < window_; ++k) {
      const std::uint8_t* message = receive_.data() + static_cast<std::size_t>(k) * bytes_;
      for (std::size_t b = 0; b < bytes_; ++b) {
        if (message[b] != pattern(peer, me_, b)) ++wrong_bytes_;
      }
    }
  }

  // Half the mean round trip of an 8-byte message, in microseconds (osu_latency's one-way
  // figure). Each reply carries the count back, and both ends check it.
  double round_trips(int peer, bool starts) override {
    const int other = pairwise::leader_rank(job_, peer);
    std::uint64_t out = 0;
    std::uint64_t in = 0;
    std::chrono::steady_clock::time_point start;
    for (int i = 0; i < latency_warmup_round_trips + latency_round_trips; ++i) {
      if (i == latency_warmup_round_trips) start = std::chrono::steady_clock::now();
      if (starts) {
        out = static_cast<std::uint64_t>(i);
        exchange({{transfer::direction::send, other, &out, sizeof out}});
        exchange({{transfer::direction::receive, other, &in, sizeof in}});
      } else {
        exchange({{transfer::direction::receive, other, &in, sizeof in}});
        out = in;
        exchange({{transfer::direction::send, other, &out, sizeof out}});
      }
      if (in != static_cast<std::uint64_t>(i)) ++wrong_replies_;
    }
    return seconds_since(start) / latency_round_trips / 2 * 1e6;
  }

  [[nodiscard]] double stream_bytes() const override {
    return static_cast<double>(bytes_) * window_ * timed_windows;
  }

  [[nodiscard]] verification verify() const override {
    const int peers = job_.layout().node_count - 1;
    if (wrong_bytes_ == 0 && wrong_replies_ == 0) {
      return {true, "every byte received from each other node matched what it sent (" +
                        std::to_string(peers) + " peers, both directions, every round trip)"};
    }
    return {false, std::to_string(wrong_bytes_) + " received bytes and " +
                       std::to_string(wrong_replies_) +
                       " round-trip replies differed from what was sent"};
  }

  [[nodiscard]] json info() const override {
    return {{"window", window_},
            {"timed_windows", timed_windows},
            {"round_trips", latency_round_trips},
            {"transport", "MPI point-to-point (the launcher's fabric: verbs, or TCP)"}};
  }

 private:
  void exchange(const std::vector<transfer>& transfers) const {
    job_.exchange(transfers, timeout_s_);
  }

  const job& job_;
  int me_;
  std::size_t bytes_;
  int window_;
  double timeout_s_;
  std::vector<std::uint8_t> send_;
  std::vector<std::uint8_t> receive_;
  unsigned long long wrong_bytes_ = 0;
  unsigned long long wrong_replies_ = 0;
};

benchmark_definition pairwise_definition() {
  benchmark_definition def{"net.pairwise"};
  def.set_description(
         "network between nodes: point-to-point bandwidth each way and latency for every pair, "
         "naming the slow node or link")
      .add_axis("bytes", axis_kind::bytes, {axis_value{std::int64_t{4} << 20}},
                "message size of the bandwidth streams")
      .set_range("bytes", axis_range{1, std::int64_t{1} << 30, 1});
  pairwise::add_pairwise_shape(def, 5);
  def.set_supported(pairwise_supported)
      .set_factory([](const context& ctx, const axis_values& values) {
        return std::make_unique<pairwise::links>(
            ctx, values,
            std::make_unique<mpi_transport>(*ctx.mpi_job(),
                                            static_cast<std::size_t>(values.get_int64("bytes")),
                                            ctx.options().timeout_s));
      });
  return def;
}

GPUBENCH_REGISTER(pairwise_definition());

}  // namespace
}  // namespace gpubench
