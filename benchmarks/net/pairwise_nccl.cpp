// net.pairwise_nccl: net.pairwise's pairs of nodes, GPU to GPU, on every rail. Each rank drives
// its GPU, and local rank r of every node pairs with local rank r of every other node: a rail,
// with its own NCCL communicator. On a DGX-like node with one NIC per GPU and one rank per GPU,
// that measures every NIC; with one rank per node, the first GPU's. The rails run at once, as a
// training job's traffic does. It is the path that traffic takes (GPUDirect RDMA where the NICs
// and driver allow it, else staged through host memory, as NCCL chooses), so it finds what
// net.pairwise cannot see: a NIC without GPUDirect, a GPU on the wrong side of a PCIe switch, a
// NCCL network plugin that falls back to sockets, one rail's cable. Timed with CUDA events on the
// sender's stream; the receiver's reply after the last message stops the clock
// (docs/methodology.md, "net.pairwise").
#include <algorithm>
#include <cstdint>

#include "gpubench/benchmarks/net/pairwise_links.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/job.hpp"

#if GPUBENCH_HAVE_MPI && GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
#include "gpubench/benchmarks/nccl/communicator.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/cuda_libraries.hpp"
#include "gpubench/kernels/copy.cuh"
#endif

namespace gpubench {
namespace {

#if !(GPUBENCH_HAVE_MPI && GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL)
std::string built_without() {
  std::string missing;
  for (const auto& [name, have] :
       {std::pair{"MPI", GPUBENCH_HAVE_MPI}, std::pair{"CUDA", GPUBENCH_HAVE_CUDA},
        std::pair{"NCCL", GPUBENCH_HAVE_NCCL}}) {
    if (have == 0) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  return "built without " + missing + " (not found at build time)";
}
#endif

// Why this rank has no rail: some node runs fewer ranks than its local rank, so local rank r of
// every node cannot meet. nullopt when it has one.
[[maybe_unused]] std::optional<std::string> no_rail(const job_layout& l) {
  const int rails = pairwise::rail_count(l);
  if (l.local_rank < rails) return std::nullopt;
  std::string fewest;
  for (std::size_t node = 0; node < l.node_ranks.size(); ++node) {
    if (static_cast<int>(l.node_ranks[node].size()) == rails) {
      fewest = l.node_names[node];
      break;
    }
  }
  const std::string measured =
      rails == 1 ? "only rail 0 is" : "rails 0-" + std::to_string(rails - 1) + " are";
  return "local rank " + std::to_string(l.local_rank) + " of " + l.node + " has no rail: node " +
         fewest + " runs " + std::to_string(rails) + (rails == 1 ? " rank" : " ranks") + ", so " +
         measured +
         " measured (local rank r of every node pairs with local rank r; launch as many ranks on "
         "every node)";
}

std::optional<std::string> pairwise_nccl_supported(const context& ctx) {
#if GPUBENCH_HAVE_MPI && GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
  if (auto reason = pairwise::too_few_nodes(ctx)) return reason;
  if (auto reason = no_rail(ctx.mpi_job()->layout())) return reason;
  if (auto reason = cuda_gpu_unavailable_reason(ctx)) return reason;
  return cuda::nccl_unavailable_reason();
#else
  (void)ctx;
  return built_without();
#endif
}

#if GPUBENCH_HAVE_MPI && GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
// Timed messages per stream: about 1 GiB in all, at most nccl-tests' 20 iterations.
std::size_t messages_for(std::size_t bytes) {
  return std::clamp<std::size_t>((std::size_t{1} << 30) / bytes, 1, 20);
}
// Each NCCL send/recv costs a kernel launch and a proxy hand-off: fewer round trips than MPI's.
constexpr int nccl_round_trips = 200;
constexpr int nccl_warmup_round_trips = 10;

// The data of a stream from node `from` to node `to`: another pair's data shows as wrong.
std::uint32_t stream_seed(int from, int to) {
  return static_cast<std::uint32_t>(from) * 65537U + static_cast<std::uint32_t>(to) * 257U + 1U;
}

class nccl_transport final : public pairwise::transport {
 public:
  nccl_transport(const job& j, int device, std::size_t bytes, double timeout_s)
      : job_(j),
        rail_(j.layout().local_rank),
        me_(j.layout().node_index),
        nodes_(j.layout().node_count),
        device_(device),
        bytes_(bytes),
        messages_(messages_for(bytes)),
        timeout_s_(timeout_s),
        stream_(device_),
        start_(device_),
        stop_(device_),
        send_(device_, bytes),
        receive_(device_, bytes),
        small_(device_, 2 * sizeof(std::uint64_t)),
        wrong_(device_, sizeof(unsigned long long)) {
    make_communicator();
  }

  double send_stream(int peer) override {
    kernels::enqueue_fill_pattern(send_.as<std::uint32_t>(), words(), stream_seed(me_, peer),
                                  stream_);
    enqueue_send(send_.get(), bytes_, peer);  // untimed: the peer may still be arriving
    start_.record(stream_);
    for (std::size_t m = 0; m < messages_; ++m) enqueue_send(send_.get(), bytes_, peer);
    enqueue_receive(small_.get(), 1, peer);  // the reply: everything has arrived
    stop_.record(stream_);
    wait("the stream to node " + job_.layout().node_names.at(static_cast<std::size_t>(peer)));
    return stream_bytes() / cuda::elapsed_seconds(start_, stop_) / 1e9;
  }

  void receive_stream(int peer) override {
    cuda::enqueue_zero(receive_, stream_);
    for (std::size_t m = 0; m <= messages_; ++m) enqueue_receive(receive_.get(), bytes_, peer);
    enqueue_send(small_.get(), 1, peer);
    // The last message, checked on the GPU after the reply, outside the sender's clock.
    cuda::enqueue_zero(wrong_, stream_);
    kernels::enqueue_check_pattern(receive_.as<std::uint32_t>(), words(), stream_seed(peer, me_),
                                   wrong_.as<unsigned long long>(), stream_);
    GPUBENCH_CUDA_CHECK(cudaGetLastError());
    wait("the stream from node " + job_.layout().node_names.at(static_cast<std::size_t>(peer)));
    unsigned long long wrong = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&wrong, wrong_.get(), sizeof wrong, cudaMemcpyDeviceToHost));
    wrong_words_ += wrong;
  }

  // The starter sends 8 bytes and waits for them to come back, nccl_round_trips times, queued on
  // one stream; the other side echoes each one. The starter checks the last echo.
  double round_trips(int peer, bool starts) override {
    const std::uint64_t token = 0x5eed0000ULL + static_cast<std::uint64_t>(me_);
    auto* out = small_.as<std::uint64_t>();
    auto* back = out + 1;
    if (starts) {
      const cuda::device_scope scope(device_);
      GPUBENCH_CUDA_CHECK(
          cudaMemcpyAsync(out, &token, sizeof token, cudaMemcpyHostToDevice, stream_.get()));
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(back, 0, sizeof token, stream_.get()));
    }
    for (int i = 0; i < nccl_warmup_round_trips + nccl_round_trips; ++i) {
      if (starts && i == nccl_warmup_round_trips) start_.record(stream_);
      if (starts) {
        enqueue_send(out, sizeof token, peer);
        enqueue_receive(back, sizeof token, peer);
      } else {
        enqueue_receive(out, sizeof token, peer);
        enqueue_send(out, sizeof token, peer);
      }
    }
    if (starts) stop_.record(stream_);
    wait("round trips with node " + job_.layout().node_names.at(static_cast<std::size_t>(peer)));
    if (!starts) return 0;  // the starter's figure stands for the pair
    std::uint64_t echoed = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&echoed, back, sizeof echoed, cudaMemcpyDeviceToHost));
    if (echoed != token) ++wrong_replies_;
    return cuda::elapsed_seconds(start_, stop_) / nccl_round_trips / 2 * 1e6;
  }

  [[nodiscard]] double stream_bytes() const override {
    return static_cast<double>(bytes_) * static_cast<double>(messages_);
  }

  [[nodiscard]] verification verify() const override {
    if (wrong_words_ == 0 && wrong_replies_ == 0) {
      return {true,
              "the last message of every stream from each other node matched its pattern "
              "word for word, and every echoed round trip came back intact (" +
                  std::to_string(nodes_ - 1) + " peers)"};
    }
    return {false, std::to_string(wrong_words_) + " received 32-bit words and " +
                       std::to_string(wrong_replies_) + " echoes differed from what was sent"};
  }

  [[nodiscard]] json info() const override {
    return {{"transport",
             "NCCL send/recv between GPUs: local rank r of every node, one communicator per rail, "
             "the rails at once"},
            {"messages", messages_},
            {"round_trips", nccl_round_trips},
            {"nccl_version", cuda::nccl().version},
            {"nccl_library", cuda::nccl().path}};
  }

 private:
  [[nodiscard]] std::size_t words() const { return bytes_ / sizeof(std::uint32_t); }

  // The rail's communicator, NCCL rank = node index: node 0's rank on the rail makes the id and
  // sends it to the rail's rank on every other node. Non-blocking, so a dead peer is a timeout,
  // not a hang.
  void make_communicator() {
    const auto& nccl = cuda::nccl();
    ncclUniqueId id{};
    if (me_ == 0) {
      GPUBENCH_NCCL_CHECK(nccl.ncclGetUniqueId(&id));
      std::vector<transfer> out;
      for (int node = 1; node < nodes_; ++node) {
        out.push_back(
            {transfer::direction::send, pairwise::rail_rank(job_, node, rail_), &id, sizeof id});
      }
      job_.exchange(out, timeout_s_);
    } else {
      job_.exchange(
          {{transfer::direction::receive, pairwise::rail_rank(job_, 0, rail_), &id, sizeof id}},
          timeout_s_);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    {
      const cuda::device_scope scope(device_);
      GPUBENCH_NCCL_CHECK(nccl.ncclCommInitRankConfig(&comm, nodes_, id, me_, &config));
    }
    comm_ = nccl_comm::communicator(device_, comm);
    settle(nccl_comm::poll_calls(comm_.get(), nccl_comm::deadline_after(timeout_s_)),
           "ncclCommInitRankConfig");
  }

  void enqueue_send(const void* data, std::size_t bytes, int peer) {
    const cuda::device_scope scope(device_);
    GPUBENCH_NCCL_CHECK(
        cuda::nccl().ncclSend(data, bytes, ncclUint8, peer, comm_.get(), stream_.get()));
    settle(nccl_comm::poll_calls(comm_.get(), nccl_comm::deadline_after(timeout_s_)), "ncclSend");
  }

  void enqueue_receive(void* data, std::size_t bytes, int peer) {
    const cuda::device_scope scope(device_);
    GPUBENCH_NCCL_CHECK(
        cuda::nccl().ncclRecv(data, bytes, ncclUint8, peer, comm_.get(), stream_.get()));
    settle(nccl_comm::poll_calls(comm_.get(), nccl_comm::deadline_after(timeout_s_)), "ncclRecv");
  }

  void wait(const std::string& what) {
    settle(nccl_comm::poll_stream(comm_.get(), stream_, nccl_comm::deadline_after(timeout_s_)),
           what);
  }

  // Returns when the wait finished; otherwise aborts the communicator (this case cannot go on
  // with it) and throws why.
  void settle(const nccl_comm::wait_outcome& outcome, const std::string& what) {
    if (outcome.end == nccl_comm::wait_end::finished) return;
    if (ncclComm_t comm = comm_.release()) (void)cuda::nccl().ncclCommAbort(comm);
    nccl_comm::throw_unfinished(outcome, what, timeout_s_);
  }

  const job& job_;
  int rail_;
  int me_;
  int nodes_;
  int device_;
  std::size_t bytes_;
  std::size_t messages_;
  double timeout_s_;
  cuda::stream stream_;
  cuda::event start_;
  cuda::event stop_;
  cuda::device_buffer send_;
  cuda::device_buffer receive_;
  cuda::device_buffer small_;  // [0] what is sent, [1] what comes back (round trips, replies)
  cuda::device_buffer wrong_;
  nccl_comm::communicator comm_;
  unsigned long long wrong_words_ = 0;
  unsigned long long wrong_replies_ = 0;
};
#endif

benchmark_definition pairwise_nccl_definition() {
  benchmark_definition def{"net.pairwise_nccl"};
  def.set_description(
         "network between nodes, GPU to GPU on every rail (local rank r of each node): NCCL "
         "send/recv bandwidth each way and latency for every pair of nodes, naming the slow node "
         "or link")
      // One case per rank: its own GPU, which names the rail's GPU in fleet comparisons.
      .add_axis(gpu_axis())
      .add_axis("bytes", axis_kind::bytes, {axis_value{std::int64_t{64} << 20}},
                "message size of the bandwidth streams")
      .set_range("bytes", axis_range{4, std::int64_t{1} << 32, 4});
  pairwise::add_pairwise_shape(def, 5);
  // Every rank takes part, on its own rail.
  def.set_scope(run_scope::per_rank).set_needs_gpu().set_supported(pairwise_nccl_supported);
#if GPUBENCH_HAVE_MPI && GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
  def.set_factory([](const context& ctx, const axis_values& values) {
    const job& j = *ctx.mpi_job();
    return std::make_unique<pairwise::links>(
        ctx, values,
        std::make_unique<nccl_transport>(j, static_cast<int>(values.get_int64("gpu")),
                                         static_cast<std::size_t>(values.get_int64("bytes")),
                                         ctx.options().timeout_s),
        j.layout().local_rank);
  });
#else
  def.set_factory(unavailable_factory(built_without()));
#endif
  return def;
}

GPUBENCH_REGISTER(pairwise_nccl_definition());

}  // namespace
}  // namespace gpubench
