// net.pairwise: point-to-point bandwidth (each direction) and latency between every pair of
// nodes of an MPI job, over MPI's own transport (InfiniBand/RoCE verbs, or TCP), in the manner
// of the OSU micro-benchmarks' osu_bw and osu_latency. One rank per node (its lowest) takes part;
// pairs meet in rounds in which no node is in two pairs, every node walking the same schedule,
// so the pairs of a round run at once and the rounds keep in step through the messages
// themselves. The job's matrix names the slow node or link (docs/methodology.md, "net.pairwise").
#include <algorithm>
#include <chrono>
#include <cstdint>

#include "gpubench/benchmark.hpp"
#include "gpubench/config.hpp"
#include "gpubench/context.hpp"
#include "gpubench/job.hpp"
#include "gpubench/runner.hpp"
#include "gpubench/statistics.hpp"
#include "pairwise_analysis.hpp"

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
  const job* j = ctx.mpi_job();
  const int nodes = j != nullptr ? j->layout().node_count : 1;
  if (nodes < 2) {
    return "needs 2 or more nodes in an MPI job (mpirun or srun, one rank per node takes part); "
           "found " +
           std::to_string(nodes) + " node";
  }
  return std::nullopt;
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

class pairwise_links final : public instance {
 public:
  pairwise_links(const context& ctx, const axis_values& values)
      : job_(*ctx.mpi_job()),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes"))),
        window_(static_cast<int>(
            std::clamp(window_bytes / values.get_int64("bytes"), std::int64_t{1}, max_window))),
        sweeps_(static_cast<int>(values.get_int64("sweeps"))),
        timeout_s_(ctx.options().timeout_s),
        send_(bytes_),
        receive_(bytes_ * static_cast<std::size_t>(window_)) {
    const job_layout& l = job_.layout();
    nodes_ = l.node_count;
    me_ = l.node_index;
    const auto n = static_cast<std::size_t>(nodes_);
    GBps_.assign(n, std::vector<double>(n, 0.0));
    GBps_min_ = GBps_;
    GBps_max_ = GBps_;
    latency_us_.assign(n, std::vector<double>(n, 0.0));
  }

  [[nodiscard]] work work_per_iteration() const override {
    // This node's share: it sends one stream to each other node.
    work w;
    w.bytes_written =
        static_cast<double>(bytes_) * window_ * timed_windows * (nodes_ - 1) * sweeps_;
    return w;
  }

  std::optional<double> run_iteration() override {
    const auto start = std::chrono::steady_clock::now();
    const auto n = static_cast<std::size_t>(nodes_);
    // Per peer, one figure per sweep.
    std::vector<std::vector<double>> sent_GBps(n);
    std::vector<std::vector<double>> round_trip_us(n);
    for (int sweep = 0; sweep < sweeps_; ++sweep) {
      for (const auto& round : pairwise::rounds(nodes_)) {
        for (const auto& [low, high] : round) {
          if (low != me_ && high != me_) continue;
          const int peer = low == me_ ? high : low;
          const bool first = me_ == low;  // the lower index sends first and starts round trips
          const auto p = static_cast<std::size_t>(peer);
          if (first) {
            sent_GBps[p].push_back(send_stream(peer));
            receive_stream(peer);
          } else {
            receive_stream(peer);
            sent_GBps[p].push_back(send_stream(peer));
          }
          round_trip_us[p].push_back(round_trips(peer, first));
        }
      }
    }
    std::vector<double> row(4 * n, 0.0);  // median, min, max GB/s sent; median latency
    for (std::size_t p = 0; p < n; ++p) {
      if (sent_GBps[p].empty()) continue;
      const summary rates = summarize(sent_GBps[p]);
      row[p] = rates.median;
      row[n + p] = rates.min;
      row[2 * n + p] = rates.max;
      row[3 * n + p] = summarize(round_trip_us[p]).median;
    }
    share_rows(std::move(row));
    return seconds_since(start);
  }

  [[nodiscard]] verification verify() override {
    if (wrong_bytes_ == 0 && wrong_replies_ == 0) {
      return {true, "every byte received from each other node matched what it sent (" +
                        std::to_string(nodes_ - 1) + " peers, both directions, every round trip)"};
    }
    return {false, std::to_string(wrong_bytes_) + " received bytes and " +
                       std::to_string(wrong_replies_) +
                       " round-trip replies differed from what was sent"};
  }

  [[nodiscard]] json info() const override {
    json links = json::array();
    const auto& names = job_.layout().node_names;
    for (int i = 0; i < nodes_; ++i) {
      for (int j = 0; j < nodes_; ++j) {
        if (i == j) continue;
        const auto a = static_cast<std::size_t>(i);
        const auto b = static_cast<std::size_t>(j);
        links.push_back({{"from", names[a]},
                         {"to", names[b]},
                         {"GBps", GBps_[a][b]},
                         {"GBps_min", GBps_min_[a][b]},
                         {"GBps_max", GBps_max_[a][b]},
                         {"latency_us", latency_us_[a][b]}});
      }
    }
    return {{"nodes", names},
            {"window", window_},
            {"timed_windows", timed_windows},
            {"sweeps", sweeps_},
            {"round_trips", latency_round_trips},
            {"transport", "MPI point-to-point (the launcher's fabric: verbs, or TCP)"},
            {"links", links},
            {"findings", findings_}};
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double /*seconds_per_iteration*/) const override {
    const auto me = static_cast<std::size_t>(me_);
    double send_min = 0;
    double receive_min = 0;
    double latency_max = 0;
    bool first = true;
    for (std::size_t j = 0; j < static_cast<std::size_t>(nodes_); ++j) {
      if (j == me) continue;
      send_min = first ? GBps_[me][j] : std::min(send_min, GBps_[me][j]);
      receive_min = first ? GBps_[j][me] : std::min(receive_min, GBps_[j][me]);
      latency_max = std::max(latency_max, latency_us_[me][j]);
      first = false;
    }
    return {{"send_GBps_min", send_min},
            {"receive_GBps_min", receive_min},
            {"latency_us_max", latency_max},
            {"link_GBps_median", findings_.at("median_link_GBps").get<double>()}};
  }

 private:
  [[nodiscard]] int rank_of(int node) const {
    return job_.layout().node_leaders.at(static_cast<std::size_t>(node));
  }

  void exchange(const std::vector<transfer>& transfers) const {
    job_.exchange(transfers, timeout_s_);
  }

  // One untimed window, then timed_windows windows of window_ messages; the receiver's reply
  // after the last one stops the clock, so the rate is what arrived, not what left.
  double send_stream(int peer) {
    const int to = rank_of(peer);
    for (std::size_t k = 0; k < bytes_; ++k) send_[k] = pattern(me_, peer, k);
    const std::vector<transfer> window(
        static_cast<std::size_t>(window_),
        transfer{transfer::direction::send, to, send_.data(), bytes_});
    exchange(window);
    const auto start = std::chrono::steady_clock::now();
    for (int w = 0; w < timed_windows; ++w) exchange(window);
    std::uint8_t reply = 0;
    exchange({{transfer::direction::receive, to, &reply, 1}});
    const double seconds = seconds_since(start);
    return static_cast<double>(bytes_) * window_ * timed_windows / seconds / 1e9;
  }

  void receive_stream(int peer) {
    const int from = rank_of(peer);
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
  double round_trips(int peer, bool starts) {
    const int other = rank_of(peer);
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

  // Every node's row to the first node, which returns the whole table to each: every node's
  // result carries the job's links and findings.
  void share_rows(std::vector<double> row) {
    const auto n = static_cast<std::size_t>(nodes_);
    const std::size_t width = row.size();
    std::vector<double> all(width * n);
    if (me_ == 0) {
      std::copy(row.begin(), row.end(), all.begin());
      std::vector<transfer> rows;
      for (std::size_t i = 1; i < n; ++i) {
        rows.push_back({transfer::direction::receive, rank_of(static_cast<int>(i)),
                        all.data() + i * width, width * sizeof(double)});
      }
      exchange(rows);
      std::vector<transfer> back;
      for (std::size_t i = 1; i < n; ++i) {
        back.push_back({transfer::direction::send, rank_of(static_cast<int>(i)), all.data(),
                        all.size() * sizeof(double)});
      }
      exchange(back);
    } else {
      exchange({{transfer::direction::send, rank_of(0), row.data(), width * sizeof(double)}});
      exchange(
          {{transfer::direction::receive, rank_of(0), all.data(), all.size() * sizeof(double)}});
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const double* from_i = all.data() + i * width;
        GBps_[i][j] = from_i[j];
        GBps_min_[i][j] = from_i[n + j];
        GBps_max_[i][j] = from_i[2 * n + j];
        // A pair's latency as the node that started its round trips measured it.
        latency_us_[i][j] = all[std::min(i, j) * width + 3 * n + std::max(i, j)];
      }
    }
    findings_ = pairwise::findings(GBps_, latency_us_, job_.layout().node_names);
  }

  const job& job_;
  std::size_t bytes_;
  int window_;
  int sweeps_;
  double timeout_s_;
  int nodes_ = 0;
  int me_ = 0;
  std::vector<std::uint8_t> send_;
  std::vector<std::uint8_t> receive_;
  pairwise::matrix GBps_;  // median over the sweeps
  pairwise::matrix GBps_min_;
  pairwise::matrix GBps_max_;
  pairwise::matrix latency_us_;
  json findings_ = json::object();  // of the tables above, once they are complete
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
      .set_range("bytes", axis_range{1, std::int64_t{1} << 30, 1})
      .add_axis("sweeps", axis_kind::integer, {axis_value{std::int64_t{5}}},
                "times every pair is measured; each link reports its median")
      .set_range("sweeps", axis_range{1, 1000, 1})
      .add_extra_metric("send_GBps_min", "GB/s", better::higher)
      .add_extra_metric("receive_GBps_min", "GB/s", better::higher)
      .add_extra_metric("latency_us_max", "us", better::lower)
      .add_extra_metric("link_GBps_median", "GB/s", better::higher)
      .set_timing(timing::manual)
      // Its sweeps are its repetitions: every node must run the same count in step, whatever a
      // suite's time-based iteration counts would make of each node's speed.
      .set_single_iteration()
      .set_scope(run_scope::per_node)
      .set_supported(pairwise_supported)
      .set_instance<pairwise_links>();
  return def;
}

GPUBENCH_REGISTER(pairwise_definition());

}  // namespace
}  // namespace gpubench
