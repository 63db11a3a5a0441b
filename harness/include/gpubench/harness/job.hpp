// The job a process belongs to: one process alone, or one rank of an MPI job started by mpirun or
// srun (one rank per GPU). gpubench adds no launcher of its own.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

struct job_layout {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // among the ranks on this node
  int local_size = 1;
  int node_index = 0;  // nodes numbered by their lowest rank
  int node_count = 1;
  std::string node;               // host name ($GPUBENCH_NODE_NAME overrides it, for tests)
  bool node_leader = true;        // the lowest rank on its node: it runs the per-node benchmarks
  std::vector<int> node_leaders;  // each node's lowest rank, by node_index
  std::vector<std::string> node_names;       // each node's name, by node_index
  std::vector<std::vector<int>> node_ranks;  // each node's ranks by local_rank, by node_index
};

// One point-to-point message of job::exchange: `bytes` to or from rank `peer`.
struct transfer {
  enum class direction { send, receive };
  direction way = direction::send;
  int peer = 0;
  void* data = nullptr;  // read when sending, written when receiving
  std::size_t bytes = 0;
};

// The layout of `rank` given every rank's node name (rank order).
[[nodiscard]] job_layout compute_layout(const std::vector<std::string>& node_by_rank, int rank);

// This process's node name: $GPUBENCH_NODE_NAME if set, else the host name.
[[nodiscard]] std::string node_name();

class job {
 public:
  // With MPI built in and an MPI launcher detected, initializes MPI; otherwise a one-process job.
  static std::unique_ptr<job> start();
  job(const job&) = delete;
  job& operator=(const job&) = delete;
  // Finalizes MPI, except after SIGINT/SIGTERM: MPI_Finalize synchronizes with every rank, and
  // one of them may be gone.
  ~job();

  [[nodiscard]] const job_layout& layout() const noexcept { return layout_; }
  [[nodiscard]] bool distributed() const noexcept { return layout_.size > 1; }
  // Every rank's string, in rank order. Collective.
  [[nodiscard]] std::vector<std::string> all_gather(const std::string& mine) const;
  // Every rank's string on rank 0, in rank order; empty on the other ranks. Collective.
  [[nodiscard]] std::vector<std::string> gather_to_root(const std::string& mine) const;
  // Waits for every rank, sleeping rather than spinning; stops waiting once SIGINT/SIGTERM has
  // arrived (interrupt_requested()): a launcher tearing the job down after a rank died signals
  // the others, and a rank must not wait for one that will never come.
  void barrier() const;
  // Rank 0's bytes to every rank (the NCCL unique id). Collective.
  void broadcast_bytes(void* data, int bytes) const;
  // Starts every transfer at once and waits for all of them, polling without sleeping (a
  // latency measurement waits here). Throws runtime_error naming the peers after `timeout_s`
  // or once SIGINT/SIGTERM has arrived: a peer that died would otherwise hold this rank forever.
  // Only the ranks named take part, so per-node benchmarks can use it between node leaders.
  void exchange(const std::vector<transfer>& transfers, double timeout_s) const;

 private:
  job() = default;
  job_layout layout_;
  [[maybe_unused]] bool mpi_initialized_ = false;  // used where MPI is built in
};

// Why this process looks started by an MPI launcher with more than one task ("OMPI_COMM_WORLD_SIZE
// =2"), or nullopt. Used by builds without MPI to refuse to run as N unconnected copies.
[[nodiscard]] std::optional<std::string> mpi_launcher_detected();

// Throws input_error when the ranks' values differ, naming them: "ranks disagree on the suite:
// rank 0 has 'quick'; rank 1 has 'full'".
void require_agreement(const std::string& what, const std::vector<std::string>& value_by_rank);

}  // namespace gpubench
