// nccl.all_reduce, nccl.all_gather, nccl.reduce_scatter, nccl.broadcast, nccl.alltoall: NCCL
// collectives as nccl-tests measures them (size conventions, algbw, busbw), on float32 data whose
// result is exactly predictable. Two modes, same benchmarks: one process driving every local GPU
// (ncclCommInitAll, group calls), or one MPI rank per GPU (unique id broadcast over MPI).
// A collective that has not finished after --timeout seconds is aborted (non-blocking
// communicators, ncclCommGetAsyncError polled) and the case fails with the reason.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "gpubench/benchmarks/nccl/busbw.hpp"
#include "gpubench/benchmarks/nccl/communicator.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/job.hpp"
#include "gpubench/harness/runner.hpp"

#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL

#include "gpubench/core/text.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/cuda_libraries.hpp"
#include "gpubench/harness/gpu_memory.hpp"
#include "gpubench/kernels/copy.cuh"
#endif

namespace gpubench {
namespace {

using collectives::collective;
using collectives::collective_spec;

// Ranks in the collective: the job's ranks, or this process's GPUs.
int participants(const context& ctx) {
  const job* j = ctx.mpi_job();
  return j != nullptr && j->distributed() ? j->layout().size
                                          : static_cast<int>(ctx.gpu_indices().size());
}

std::optional<std::string> collective_supported(const context& ctx) {
  if (auto reason = cuda_gpu_unavailable_reason(ctx)) return reason;
  const int n = participants(ctx);
  if (n < 2)
    return "needs 2 or more GPUs (one process, or one MPI rank each); found " + std::to_string(n);
#if GPUBENCH_HAVE_NCCL
  return cuda::nccl_unavailable_reason();
#else
  return std::string("built without NCCL (not found at build time)");
#endif
}

#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
// Collectives per timed iteration, queued back to back and waited for once afterwards, as
// nccl-tests times its 20 iterations: the host's launch cost overlaps the GPU's work.
constexpr int collectives_per_iteration = 20;

using nccl_comm::communicator;

// This process's communicators for one set of GPUs, shared by every case of the run that uses
// that set (context::resources()).
struct communicator_set {
  std::vector<communicator> comms;  // one per local GPU, in the run's GPU order
  bool nonblocking = false;
  void abort() {
    for (auto& c : comms) {
      if (ncclComm_t comm = c.release()) (void)cuda::nccl().ncclCommAbort(comm);
    }
  }
};

// Memory for NCCL's buffers: ncclMemAlloc where the library has it (2.19+: what NVLS and
// user-buffer registration need, and what nccl-tests allocates with), else cudaMalloc.
struct nccl_memory_deleter {
  void operator()(void* memory) const noexcept { (void)cuda::nccl().ncclMemFree(memory); }
};
class nccl_buffer {
 public:
  nccl_buffer() = default;
  nccl_buffer(int device, std::size_t bytes) : bytes_(bytes) {
    const auto& nccl = cuda::nccl();
    if (nccl.ncclMemAlloc == nullptr || nccl.ncclMemFree == nullptr) {
      plain_ = cuda::device_buffer(device, bytes);
      return;
    }
    const cuda::device_scope scope(device);
    void* memory = nullptr;
    if (const ncclResult_t rc = nccl.ncclMemAlloc(&memory, bytes); rc != ncclSuccess) {
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      if (static_cast<double>(bytes) > static_cast<double>(free_bytes) * usable_free_fraction) {
        throw skip_case(gpu_memory_shortage(device, free_bytes, total_bytes,
                                            "an NCCL buffer of " + format_bytes(bytes)));
      }
      GPUBENCH_NCCL_CHECK(rc);
    }
    owned_ = {device, memory};
  }
  [[nodiscard]] float* floats() const noexcept {
    return static_cast<float*>(owned_ ? owned_.get() : plain_.get());
  }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  [[nodiscard]] bool from_nccl() const noexcept { return static_cast<bool>(owned_); }

 private:
  std::size_t bytes_ = 0;
  cuda::device_handle<void*, nccl_memory_deleter> owned_;
  cuda::device_buffer plain_;
};

// This process's share of the collective: one GPU, its stream, events and buffers.
struct member {
  member(int gpu, int comm_rank)
      : device(gpu), rank(comm_rank), stream(gpu), start(gpu), stop(gpu) {}
  int device;
  int rank;                   // in the communicator
  ncclComm_t comm = nullptr;  // owned by the communicator_set
  cuda::stream stream;
  cuda::event start;
  cuda::event stop;
  nccl_buffer send;
  nccl_buffer recv;
};

class nccl_collective final : public instance {
 public:
  nccl_collective(const collective_spec& spec, const context& ctx, const axis_values& values)
      : spec_(spec),
        in_place_(values.get_string("placement") == "in_place"),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes"))),
        timeout_s_(ctx.options().timeout_s),
        resources_(ctx.resources()) {
    ranks_ = participants(ctx);
    if (spec.op == collective::alltoall && in_place_) {
      throw skip_case("NCCL has no in-place alltoall");
    }
    // Elements: per-rank counts for the collectives whose size is n parts.
    const std::size_t elements = bytes_ / sizeof(float);
    const bool parts = spec.op == collective::all_gather || spec.op == collective::reduce_scatter ||
                       spec.op == collective::alltoall;
    part_ = parts ? elements / static_cast<std::size_t>(ranks_) : elements;
    if (part_ == 0) throw skip_case("message smaller than one float per rank");
    total_ = parts ? part_ * static_cast<std::size_t>(ranks_) : part_;

    const job* j = ctx.mpi_job();
    if (j != nullptr && j->distributed()) {
      // Every rank learns whether every other could set up its buffers before any of them
      // waits in a collective (or in the communicator's set-up) for a rank that has given up.
      std::string problem = "-";  // '-': none; 'S': a skip (too little GPU memory); 'F': failed
      try {
        members_.push_back(make_member(ctx.gpu_indices().at(0), j->layout().rank));
      } catch (const skip_case& e) {
        problem = std::string("S") + e.what();
      } catch (const std::exception& e) {
        problem = std::string("F") + e.what();
      }
      const std::vector<std::string> problems = j->all_gather(problem);
      for (std::size_t r = 0; r < problems.size(); ++r) {
        if (problems[r] == "-") continue;
        const std::string what = "rank " + std::to_string(r) + ": " + problems[r].substr(1);
        if (problems[r].front() == 'S') throw skip_case(what);
        throw std::runtime_error(what);
      }
      comms_key_ = "nccl:mpi:" + std::to_string(ranks_);
      comms_ = mpi_communicators(*j);
      mode_ = "one MPI rank per GPU";
    } else {
      const auto gpus = ctx.gpu_indices();
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        members_.push_back(make_member(gpus[i], static_cast<int>(i)));
      }
      comms_key_ = "nccl:local:" + join(gpus_text(gpus), ",");
      comms_ = local_communicators(gpus);
      mode_ = "one process, every GPU";
    }
    for (std::size_t i = 0; i < members_.size(); ++i) {
      members_[i]->comm = comms_->comms.at(i).get();
    }
    fill_inputs();
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.bytes_read = static_cast<double>(bytes_used()) * collectives_per_iteration,
                .items = collectives_per_iteration};
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double seconds) const override {
    const double algbw =
        static_cast<double>(bytes_used()) * collectives_per_iteration / seconds / 1e9;
    return {{"busbw_GBps", algbw * collectives::bus_factor(spec_.op, ranks_)}};
  }

  std::optional<double> run_iteration() override {
    for (auto& m : members_) m->start.record(m->stream);
    for (int i = 0; i < collectives_per_iteration; ++i) launch();
    for (auto& m : members_) m->stop.record(m->stream);
    wait_for_streams();
    double slowest = 0;
    for (auto& m : members_) {
      slowest = std::max(slowest, cuda::elapsed_seconds(m->start, m->stop));
    }
    return slowest;
  }

  [[nodiscard]] verification verify() override {
    // In-place collectives change their input: start again from known inputs, run once, check.
    fill_inputs();
    launch();
    wait_for_streams();
    unsigned long long wrong = 0;
    for (auto& m : members_) {
      cuda::device_buffer counter(m->device, sizeof(unsigned long long));
      cuda::enqueue_zero(counter, m->stream);
      for (const auto& [offset, count, value] : expected(m->rank)) {
        kernels::enqueue_count_not_equal(output(*m) + offset, count, value,
                                         counter.as<unsigned long long>(), m->stream);
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      unsigned long long bad = 0;
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&bad, counter.get(), sizeof bad, cudaMemcpyDeviceToHost,
                                          m->stream.get()));
      m->stream.synchronize();
      wrong += bad;
    }
    wrong_elements_ = wrong;
    verification v;
    v.passed = wrong == 0;
    v.detail = "every output element against its exact expected value (float32 inputs rank+1): " +
               std::to_string(wrong) + " wrong on this process's GPUs";
    return v;
  }

  [[nodiscard]] json info() const override {
    // The NCCL settings in force that change what is measured (an allow-list, not the whole
    // environment).
    json settings = json::object();
    for (const char* name :
         {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE",
          "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_NET_GDR_LEVEL",
          "NCCL_SOCKET_IFNAME", "NCCL_CROSS_NIC", "NCCL_COLLNET_ENABLE", "NCCL_BUFFSIZE",
          "NCCL_NTHREADS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
          "NCCL_MAX_CTAS", "NCCL_NET_PLUGIN"}) {
      if (const char* value = std::getenv(name)) settings[name] = value;
    }
    const bool nccl_memory = !members_.empty() && members_.front()->recv.from_nccl();
    return json{{"mode", mode_},
                {"nccl_version", cuda::nccl().version},
                {"nccl_library", cuda::nccl().path},
                {"nccl_settings", std::move(settings)},
                {"ranks", ranks_},
                {"placement", in_place_ ? "in place" : "out of place"},
                {"bytes_means", spec_.size_means},
                {"dtype", "float32"},
                {"collectives_per_iteration", collectives_per_iteration},
                {"buffers", nccl_memory ? "ncclMemAlloc" : "cudaMalloc"},
                {"alltoall", cuda::nccl().ncclAlltoAll != nullptr
                                 ? "ncclAlltoAll"
                                 : "grouped ncclSend/ncclRecv (this NCCL has no ncclAlltoAll)"},
                {"busbw_factor", collectives::bus_factor(spec_.op, ranks_)},
                {"wrong_elements", wrong_elements_},
                {"timeout_s", timeout_s_}};
  }

 private:
  [[nodiscard]] std::size_t bytes_used() const { return total_ * sizeof(float); }

  static std::vector<std::string> gpus_text(const std::vector<int>& gpus) {
    std::vector<std::string> out;
    out.reserve(gpus.size());
    for (int g : gpus) out.push_back(std::to_string(g));
    return out;
  }

  // One communicator per local GPU, made once per run for this set (ncclCommInitAll).
  communicator_set* local_communicators(const std::vector<int>& gpus) {
    if (auto* existing = resources_.find<communicator_set>(comms_key_)) return existing;
    const auto& nccl = cuda::nccl();
    std::vector<ncclComm_t> raw(gpus.size(), nullptr);
    GPUBENCH_NCCL_CHECK(
        nccl.ncclCommInitAll(raw.data(), static_cast<int>(gpus.size()), gpus.data()));
    auto set = std::make_unique<communicator_set>();
    for (std::size_t i = 0; i < gpus.size(); ++i) set->comms.emplace_back(gpus[i], raw[i]);
    return &resources_.add(comms_key_, std::move(set));
  }

  // This rank's communicator, made once per run: the unique id travels over MPI, and the
  // communicator is non-blocking so a dead peer shows as a timeout, not a hang. Every rank must
  // hold one for any to use it; if one lacks it (a case aborted it), all make a new one.
  communicator_set* mpi_communicators(const job& j) {
    auto* existing = resources_.find<communicator_set>(comms_key_);
    const auto held = j.all_gather(existing != nullptr ? "1" : "0");
    if (std::all_of(held.begin(), held.end(), [](const std::string& h) { return h == "1"; })) {
      return existing;
    }
    if (existing != nullptr) {
      existing->abort();
      resources_.remove(comms_key_);
    }
    const auto& nccl = cuda::nccl();
    ncclUniqueId id{};
    if (j.layout().rank == 0) GPUBENCH_NCCL_CHECK(nccl.ncclGetUniqueId(&id));
    j.broadcast_bytes(&id, sizeof id);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const int device = members_.front()->device;
    ncclComm_t comm = nullptr;
    {
      const cuda::device_scope scope(device);
      GPUBENCH_NCCL_CHECK(nccl.ncclCommInitRankConfig(&comm, ranks_, id, j.layout().rank, &config));
    }
    auto set = std::make_unique<communicator_set>();
    set->comms.emplace_back(device, comm);
    set->nonblocking = true;
    auto& stored = resources_.add(comms_key_, std::move(set));
    comms_ = &stored;
    members_.front()->comm = comm;
    wait_for_comms("ncclCommInitRankConfig");
    return &stored;
  }

  std::unique_ptr<member> make_member(int device, int rank) {
    auto m = std::make_unique<member>(device, rank);
    const std::size_t send_elems = spec_.op == collective::all_gather ? part_ : total_;
    const std::size_t recv_elems = spec_.op == collective::reduce_scatter ? part_ : total_;
    if (in_place_) {
      m->recv = nccl_buffer(device, std::max(send_elems, recv_elems) * sizeof(float));
    } else {
      m->send = nccl_buffer(device, send_elems * sizeof(float));
      m->recv = nccl_buffer(device, recv_elems * sizeof(float));
    }
    return m;
  }

  [[nodiscard]] float* output(const member& m) const { return m.recv.floats(); }

  // Where the input of member m lives (in place: inside its output, where NCCL expects it).
  [[nodiscard]] float* input(const member& m) const {
    if (!in_place_) return m.send.floats();
    if (spec_.op == collective::all_gather)
      return m.recv.floats() + static_cast<std::size_t>(m.rank) * part_;
    return m.recv.floats();
  }

  // Rank r sends r+1 everywhere (alltoall: part p of rank r holds r*n + p + 1).
  void fill_inputs() {
    for (auto& mp : members_) {
      member& m = *mp;
      if (!in_place_) {
        kernels::enqueue_fill_float(m.recv.floats(), m.recv.size() / sizeof(float), 0.0f, m.stream);
      }
      if (spec_.op == collective::alltoall) {
        for (int p = 0; p < ranks_; ++p) {
          kernels::enqueue_fill_float(input(m) + static_cast<std::size_t>(p) * part_, part_,
                                      static_cast<float>(m.rank * ranks_ + p + 1), m.stream);
        }
      } else if (spec_.op == collective::broadcast) {
        if (in_place_ || m.rank == 0) {
          kernels::enqueue_fill_float(input(m), total_, m.rank == 0 ? 1.0f : 0.0f, m.stream);
        }
      } else {
        const std::size_t n = spec_.op == collective::all_gather ? part_ : total_;
        kernels::enqueue_fill_float(input(m), n, static_cast<float>(m.rank + 1), m.stream);
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      m.stream.synchronize();
    }
  }

  struct expectation {
    std::size_t offset;
    std::size_t count;
    float value;
  };
  [[nodiscard]] std::vector<expectation> expected(int rank) const {
    const float sum = static_cast<float>(ranks_) * static_cast<float>(ranks_ + 1) / 2;
    switch (spec_.op) {
      case collective::all_reduce:
        return {{0, total_, sum}};
      case collective::reduce_scatter:
        // In place, NCCL leaves rank r's part at offset r x part in its buffer.
        return {{in_place_ ? static_cast<std::size_t>(rank) * part_ : 0, part_, sum}};
      case collective::broadcast:
        return {{0, total_, 1.0f}};
      case collective::all_gather: {
        std::vector<expectation> out;
        out.reserve(static_cast<std::size_t>(ranks_));
        for (int p = 0; p < ranks_; ++p)
          out.push_back({static_cast<std::size_t>(p) * part_, part_, static_cast<float>(p + 1)});
        return out;
      }
      case collective::alltoall: {
        std::vector<expectation> out;
        out.reserve(static_cast<std::size_t>(ranks_));
        for (int p = 0; p < ranks_; ++p) {
          out.push_back({static_cast<std::size_t>(p) * part_, part_,
                         static_cast<float>(p * ranks_ + rank + 1)});
        }
        return out;
      }
    }
    return {};
  }

  // Queues one collective on every local GPU (one group), and returns once NCCL has queued it.
  void launch() {
    const auto& nccl = cuda::nccl();
    GPUBENCH_NCCL_CHECK(nccl.ncclGroupStart());
    for (auto& mp : members_) {
      member& m = *mp;
      const cuda::device_scope scope(m.device);
      const void* in = input(m);
      void* out = output(m);
      cudaStream_t stream = m.stream.get();
      switch (spec_.op) {
        case collective::all_reduce:
          GPUBENCH_NCCL_CHECK(
              nccl.ncclAllReduce(in, out, total_, ncclFloat32, ncclSum, m.comm, stream));
          break;
        case collective::all_gather:
          GPUBENCH_NCCL_CHECK(nccl.ncclAllGather(in, out, part_, ncclFloat32, m.comm, stream));
          break;
        case collective::reduce_scatter:
          GPUBENCH_NCCL_CHECK(nccl.ncclReduceScatter(
              in, in_place_ ? output(m) + static_cast<std::size_t>(m.rank) * part_ : out, part_,
              ncclFloat32, ncclSum, m.comm, stream));
          break;
        case collective::broadcast:
          GPUBENCH_NCCL_CHECK(nccl.ncclBroadcast(in, out, total_, ncclFloat32, 0, m.comm, stream));
          break;
        case collective::alltoall:
          if (nccl.ncclAlltoAll != nullptr) {
            GPUBENCH_NCCL_CHECK(nccl.ncclAlltoAll(in, out, part_, ncclFloat32, m.comm, stream));
          } else {
            // What nccl-tests does where the library has no alltoall: a send and a receive per
            // peer, in the same group.
            for (int p = 0; p < ranks_; ++p) {
              const std::size_t offset = static_cast<std::size_t>(p) * part_;
              GPUBENCH_NCCL_CHECK(nccl.ncclSend(static_cast<const float*>(in) + offset, part_,
                                                ncclFloat32, p, m.comm, stream));
              GPUBENCH_NCCL_CHECK(nccl.ncclRecv(static_cast<float*>(out) + offset, part_,
                                                ncclFloat32, p, m.comm, stream));
            }
          }
          break;
      }
    }
    GPUBENCH_NCCL_CHECK(nccl.ncclGroupEnd());
    // A non-blocking communicator may still be queueing: no NCCL call until it has finished.
    if (comms_->nonblocking) wait_for_comms("the collective's enqueue");
  }

  // Returns when the wait finished; otherwise aborts the communicators (every case after this
  // makes new ones) and throws why.
  void settle(const nccl_comm::wait_outcome& outcome, const std::string& what) {
    if (outcome.end == nccl_comm::wait_end::finished) return;
    comms_->abort();
    resources_.remove(comms_key_);
    comms_ = nullptr;
    nccl_comm::throw_unfinished(outcome, what, timeout_s_);
  }

  // Non-blocking communicators finish calls asynchronously: wait until none is in progress.
  void wait_for_comms(const char* what) {
    const auto until = nccl_comm::deadline_after(timeout_s_);
    for (auto& m : members_) settle(nccl_comm::poll_calls(m->comm, until), what);
  }

  // Streams done, or a communicator error, or the timeout: never a hang. Polled only after every
  // collective of the iteration is queued.
  void wait_for_streams() {
    const auto until = nccl_comm::deadline_after(timeout_s_);
    const std::string what(spec_.id);
    for (auto& m : members_) settle(nccl_comm::poll_stream(m->comm, m->stream, until), what);
  }

  const collective_spec& spec_;
  bool in_place_;
  std::size_t bytes_;
  double timeout_s_;
  shared_resources& resources_;
  int ranks_ = 0;
  std::size_t part_ = 0;
  std::size_t total_ = 0;
  std::vector<std::unique_ptr<member>> members_;
  std::string comms_key_;
  communicator_set* comms_ = nullptr;  // in resources_
  std::string mode_;
  unsigned long long wrong_elements_ = 0;
};
#endif

// 8 B to 8 GiB by factor 2, bounded by what each GPU has free for three message-sized buffers.
std::vector<axis_value> default_sizes(const context& ctx) {
  std::uint64_t limit = std::uint64_t{8} << 30;
  for (int index : ctx.gpu_indices()) {
    for (const auto& gpu : ctx.system().gpus) {
      if (gpu.index == index && gpu.memory_bytes > 0) limit = std::min(limit, gpu.memory_bytes / 4);
    }
  }
  std::vector<axis_value> sizes;
  for (std::uint64_t s = 8; s <= limit; s *= 2) sizes.emplace_back(static_cast<std::int64_t>(s));
  return sizes;
}

benchmark_definition collective_definition(const collective_spec& spec) {
  benchmark_definition def{std::string(spec.id)};
  def.set_description("NCCL " + std::string(spec.id.substr(5)) +
                      ": time, algbw and busbw by message size")
      .add_axis(axis{"bytes", axis_kind::bytes, std::string(spec.size_means), default_sizes})
      .set_range("bytes", axis_range{4, std::int64_t{1} << 40, 4})
      .add_choice_axis("placement", {"out_of_place", "in_place"},
                       "separate or shared send/receive buffers")
      .add_metric("us", metric_kind::time_per_item, units::us)
      .add_metric("algbw_GBps", metric_kind::bandwidth, units::GBps)
      .add_extra_metric("busbw_GBps", units::GBps, better::higher)
      .set_timing(timing::manual)
      .set_needs_gpu()
      .set_supported(collective_supported);
#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
  def.set_factory([&spec](const context& ctx, const axis_values& values) {
    return std::make_unique<nccl_collective>(spec, ctx, values);
  });
#else
  def.set_factory(unavailable_factory("built without NCCL"));
#endif
  return def;
}

GPUBENCH_REGISTER(collective_definition(collectives::collective_specs[0]));
GPUBENCH_REGISTER(collective_definition(collectives::collective_specs[1]));
GPUBENCH_REGISTER(collective_definition(collectives::collective_specs[2]));
GPUBENCH_REGISTER(collective_definition(collectives::collective_specs[3]));
GPUBENCH_REGISTER(collective_definition(collectives::collective_specs[4]));

}  // namespace
}  // namespace gpubench
