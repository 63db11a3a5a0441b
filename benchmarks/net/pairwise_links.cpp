#include "gpubench/benchmarks/net/pairwise_links.hpp"

#include <algorithm>
#include <chrono>

#include "gpubench/core/statistics.hpp"
#include "gpubench/harness/context.hpp"

namespace gpubench::pairwise {

int leader_rank(const job& j, int node) {
  return j.layout().node_leaders.at(static_cast<std::size_t>(node));
}

int rail_rank(const job& j, int node, int rail) {
  return j.layout()
      .node_ranks.at(static_cast<std::size_t>(node))
      .at(static_cast<std::size_t>(rail));
}

int rail_count(const job_layout& l) {
  std::size_t fewest = l.node_ranks.empty() ? 1 : l.node_ranks.front().size();
  for (const auto& ranks : l.node_ranks) fewest = std::min(fewest, ranks.size());
  return static_cast<int>(fewest);
}

std::optional<std::string> too_few_nodes(const context& ctx) {
  const job* j = ctx.mpi_job();
  const int nodes = j != nullptr ? j->layout().node_count : 1;
  if (nodes >= 2) return std::nullopt;
  return "needs 2 or more nodes in an MPI job (mpirun or srun); "
         "found " +
         std::to_string(nodes) + " node";
}

void add_pairwise_shape(benchmark_definition& def, std::int64_t default_sweeps) {
  def.add_axis("sweeps", axis_kind::integer, {axis_value{default_sweeps}},
               "times every pair is measured; each link reports its median")
      .set_range("sweeps", axis_range{1, 1000, 1})
      .add_extra_metric("send_GBps_min", units::GBps, better::higher)
      .add_extra_metric("receive_GBps_min", units::GBps, better::higher)
      .add_extra_metric("latency_us_max", units::us, better::lower)
      .add_extra_metric("link_GBps_median", units::GBps, better::higher)
      .set_timing(timing::manual)
      // Its sweeps are its repetitions: every node must run the same count in step, whatever a
      // suite's time-based iteration counts would make of each node's speed.
      .set_single_iteration()
      .set_scope(run_scope::per_node);
}

links::links(const context& ctx, const axis_values& values, std::unique_ptr<transport> how,
             std::optional<int> rail)
    : job_(*ctx.mpi_job()),
      rail_(rail),
      sweeps_(static_cast<int>(values.get_int64("sweeps"))),
      timeout_s_(ctx.options().timeout_s),
      how_(std::move(how)) {
  const job_layout& l = job_.layout();
  nodes_ = l.node_count;
  me_ = l.node_index;
  const auto n = static_cast<std::size_t>(nodes_);
  GBps_.assign(n, std::vector<double>(n, 0.0));
  GBps_min_ = GBps_;
  GBps_max_ = GBps_;
  latency_us_ = GBps_;
}

work links::work_per_iteration() const {
  // This node's share: it sends one stream to each other node per sweep.
  work w;
  w.bytes_written = how_->stream_bytes() * (nodes_ - 1) * sweeps_;
  return w;
}

std::optional<double> links::run_iteration() {
  const auto start = std::chrono::steady_clock::now();
  const auto n = static_cast<std::size_t>(nodes_);
  // Per peer, one figure per sweep.
  std::vector<std::vector<double>> sent_GBps(n);
  std::vector<std::vector<double>> round_trip_us(n);
  for (int sweep = 0; sweep < sweeps_; ++sweep) {
    for (const auto& round : rounds(nodes_)) {
      for (const auto& [low, high] : round) {
        if (low != me_ && high != me_) continue;
        const int peer = low == me_ ? high : low;
        const bool first = me_ == low;  // the lower index sends first and starts round trips
        const auto p = static_cast<std::size_t>(peer);
        if (first) {
          sent_GBps[p].push_back(how_->send_stream(peer));
          how_->receive_stream(peer);
        } else {
          how_->receive_stream(peer);
          sent_GBps[p].push_back(how_->send_stream(peer));
        }
        round_trip_us[p].push_back(how_->round_trips(peer, first));
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
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

json links::info() const {
  json table = json::array();
  const auto& names = job_.layout().node_names;
  for (int i = 0; i < nodes_; ++i) {
    for (int j = 0; j < nodes_; ++j) {
      if (i == j) continue;
      const auto a = static_cast<std::size_t>(i);
      const auto b = static_cast<std::size_t>(j);
      table.push_back({{"from", names[a]},
                       {"to", names[b]},
                       {"GBps", GBps_[a][b]},
                       {"GBps_min", GBps_min_[a][b]},
                       {"GBps_max", GBps_max_[a][b]},
                       {"latency_us", latency_us_[a][b]}});
    }
  }
  json out = how_->info();
  out["nodes"] = names;
  if (rail_) out["rail"] = *rail_;
  out["sweeps"] = sweeps_;
  out["links"] = std::move(table);
  out["findings"] = findings_;
  return out;
}

std::vector<std::pair<std::string, double>> links::extra_metrics(double /*seconds*/) const {
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

void links::share_rows(std::vector<double> row) {
  const auto n = static_cast<std::size_t>(nodes_);
  const std::size_t width = row.size();
  std::vector<double> all(width * n);
  const auto rank_of = [&](std::size_t node) {
    return rail_rank(job_, static_cast<int>(node), rail_.value_or(0));
  };
  if (me_ == 0) {
    std::copy(row.begin(), row.end(), all.begin());
    std::vector<transfer> rows;
    for (std::size_t i = 1; i < n; ++i) {
      rows.push_back({transfer::direction::receive, rank_of(i), all.data() + i * width,
                      width * sizeof(double)});
    }
    job_.exchange(rows, timeout_s_);
    std::vector<transfer> back;
    for (std::size_t i = 1; i < n; ++i) {
      back.push_back(
          {transfer::direction::send, rank_of(i), all.data(), all.size() * sizeof(double)});
    }
    job_.exchange(back, timeout_s_);
  } else {
    job_.exchange({{transfer::direction::send, rank_of(0), row.data(), width * sizeof(double)}},
                  timeout_s_);
    job_.exchange(
        {{transfer::direction::receive, rank_of(0), all.data(), all.size() * sizeof(double)}},
        timeout_s_);
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
  findings_ = findings(GBps_, latency_us_, job_.layout().node_names);
  if (rail_ && rail_count(job_.layout()) > 1) {
    // One result per rail: its verdict says which rail (which GPU's NIC) it is about.
    findings_["verdict"] =
        "rail " + std::to_string(*rail_) + ": " + findings_.at("verdict").get<std::string>();
  }
}

}  // namespace gpubench::pairwise
