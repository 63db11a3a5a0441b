// The measurement net.pairwise and net.pairwise_nccl share: one rank of every node (its rail: the
// leader, or local rank r of every node) walks the same schedule of rounds (no node in two pairs
// of a round), measures each pair with its transport, and every taking-part rank's result carries
// its rail's whole matrix and what it says (docs/methodology.md, "net.pairwise"). A transport is
// how two nodes' ranks move data: MPI point-to-point between host buffers, or NCCL send/recv
// between GPUs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpubench/benchmarks/net/pairwise_analysis.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/job.hpp"

namespace gpubench::pairwise {

class transport {
 public:
  transport() = default;
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;
  transport(transport&&) = delete;
  transport& operator=(transport&&) = delete;
  virtual ~transport() = default;

  // Streams to node `peer` and returns the rate it arrived at, GB/s: the peer's reply after the
  // last message stops the clock.
  virtual double send_stream(int peer) = 0;
  // Receives node `peer`'s stream, replies, then checks the data outside the sender's clock.
  virtual void receive_stream(int peer) = 0;
  // Half the mean round trip of a small message with node `peer`, in microseconds; `starts`:
  // this side sends first. Both sides check each reply.
  virtual double round_trips(int peer, bool starts) = 0;
  // Bytes one send_stream moves.
  [[nodiscard]] virtual double stream_bytes() const = 0;
  // Whether every stream and reply arrived as sent.
  [[nodiscard]] virtual verification verify() const = 0;
  // The transport's own settings, kept in the result's info.
  [[nodiscard]] virtual json info() const = 0;
};

class links final : public instance {
 public:
  // The job, the sweeps axis and --timeout from the case's context and axes. `rail`: local rank
  // r of every node takes part, and the info names the rail; nullopt: each node's leader.
  links(const context& ctx, const axis_values& values, std::unique_ptr<transport> how,
        std::optional<int> rail = std::nullopt);

  [[nodiscard]] work work_per_iteration() const override;
  std::optional<double> run_iteration() override;
  [[nodiscard]] verification verify() override { return how_->verify(); }
  [[nodiscard]] json info() const override;
  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double seconds_per_iteration) const override;

 private:
  // Every node's row to the first node, which returns the whole table to each.
  void share_rows(std::vector<double> row);

  const job& job_;
  std::optional<int> rail_;
  int sweeps_;
  double timeout_s_;
  std::unique_ptr<transport> how_;
  int nodes_ = 0;
  int me_ = 0;
  matrix GBps_;  // median over the sweeps
  matrix GBps_min_;
  matrix GBps_max_;
  matrix latency_us_;
  json findings_ = json::object();  // of the tables above, once they are complete
};

// The MPI rank of node `node`'s leader, the rank that takes part.
[[nodiscard]] int leader_rank(const job& j, int node);
// The MPI rank of node `node`'s local rank `rail`.
[[nodiscard]] int rail_rank(const job& j, int node, int rail);
// Rails every node has: the fewest ranks on a node.
[[nodiscard]] int rail_count(const job_layout& l);

// Why a pairwise benchmark cannot run in this job (fewer than two nodes), or nullopt.
[[nodiscard]] std::optional<std::string> too_few_nodes(const context& ctx);

// The sweeps axis, the metrics every node reports, one iteration per case and one rank per node.
void add_pairwise_shape(benchmark_definition& def, std::int64_t default_sweeps);

}  // namespace gpubench::pairwise
