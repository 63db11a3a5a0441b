// nccl.all_reduce, nccl.all_gather, nccl.reduce_scatter, nccl.broadcast, nccl.alltoall: NCCL
// collectives as nccl-tests measures them (size conventions, algbw, busbw), on float32 data whose
// result is exactly predictable. Two modes, same benchmarks: one process driving every local GPU
// (ncclCommInitAll, group calls), or one MPI rank per GPU (unique id broadcast over MPI).
// A collective that has not finished after --timeout seconds is aborted (non-blocking
// communicators, ncclCommGetAsyncError polled) and the case fails with the reason.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include "busbw.hpp"
#include "gpubench/benchmark.hpp"
#include "gpubench/config.hpp"
#include "gpubench/context.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/job.hpp"
#include "gpubench/runner.hpp"

#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
#include <nccl.h>

#include "gpubench/cuda.hpp"
#include "kernels/copy.cuh"
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
  if (!GPUBENCH_HAVE_NCCL) return std::string("built without NCCL (not found at build time)");
  const int n = participants(ctx);
  if (n < 2)
    return "needs 2 or more GPUs (one process, or one MPI rank each); found " + std::to_string(n);
  return std::nullopt;
}

#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
void check_nccl(ncclResult_t rc, const char* call, source_site where = source_site::current()) {
  if (rc != ncclSuccess && rc != ncclInProgress) {
    throw api_error("NCCL", call, "ncclResult " + std::to_string(static_cast<int>(rc)),
                    ncclGetErrorString(rc), where);
  }
}
#define GPUBENCH_NCCL_CHECK(expr) check_nccl((expr), #expr)

// This process's share of the collective: one GPU, its communicator, stream and buffers.
struct member {
  int device = 0;
  int rank = 0;  // in the communicator
  ncclComm_t comm = nullptr;
  std::unique_ptr<cuda::stream> stream;
  cuda::device_buffer send;
  cuda::device_buffer recv;
  std::unique_ptr<cuda::event> start;
  std::unique_ptr<cuda::event> stop;
};

class nccl_collective final : public instance {
 public:
  nccl_collective(const collective_spec& spec, const context& ctx, const axis_values& values)
      : spec_(spec),
        in_place_(values.get_string("placement") == "in_place"),
        bytes_(static_cast<std::size_t>(values.get_int64("bytes"))),
        timeout_s_(ctx.options().timeout_s) {
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
      // One rank per GPU: the unique id travels over MPI; the communicator is non-blocking so a
      // dead peer shows as a timeout, not a hang.
      ncclUniqueId id{};
      if (j->layout().rank == 0) GPUBENCH_NCCL_CHECK(ncclGetUniqueId(&id));
      j->broadcast_bytes(&id, sizeof id);
      // Every rank learns whether every other could set up its buffers before any of them
      // waits in the communicator's set-up for a rank that has already given up.
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
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      GPUBENCH_CUDA_CHECK(cudaSetDevice(members_[0].device));
      GPUBENCH_NCCL_CHECK(
          ncclCommInitRankConfig(&members_[0].comm, ranks_, id, j->layout().rank, &config));
      wait_for_comms("ncclCommInitRankConfig");
      mode_ = "one MPI rank per GPU";
    } else {
      const auto gpus = ctx.gpu_indices();
      std::vector<ncclComm_t> comms(gpus.size());
      GPUBENCH_NCCL_CHECK(
          ncclCommInitAll(comms.data(), static_cast<int>(gpus.size()), gpus.data()));
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        members_.push_back(make_member(gpus[i], static_cast<int>(i)));
        members_.back().comm = comms[i];
      }
      mode_ = "one process, every GPU";
    }
    fill_inputs();
  }

  nccl_collective(const nccl_collective&) = delete;
  nccl_collective& operator=(const nccl_collective&) = delete;
  ~nccl_collective() override {
    for (auto& m : members_) {
      if (m.comm == nullptr) continue;
      if (aborted_) {
        ncclCommAbort(m.comm);
      } else {
        ncclCommDestroy(m.comm);
      }
    }
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.bytes_read = static_cast<double>(bytes_used()), .items = 1};
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double seconds) const override {
    const double algbw = static_cast<double>(bytes_used()) / seconds / 1e9;
    return {{"busbw_GBps", algbw * collectives::bus_factor(spec_.op, ranks_)}};
  }

  std::optional<double> run_iteration() override {
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      GPUBENCH_CUDA_CHECK(cudaEventRecord(m.start->get(), m.stream->get()));
    }
    launch();
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      GPUBENCH_CUDA_CHECK(cudaEventRecord(m.stop->get(), m.stream->get()));
    }
    wait_for_streams();
    double slowest = 0;
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      slowest = std::max(slowest, cuda::elapsed_seconds(*m.start, *m.stop));
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
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      cuda::device_buffer counter(sizeof(unsigned long long));
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(counter.get(), 0, counter.size(), m.stream->get()));
      for (const auto& [offset, count, value] : expected(m.rank)) {
        kernels::enqueue_count_not_equal(output(m) + offset, count, value,
                                         counter.as<unsigned long long>(), m.stream->get());
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      unsigned long long bad = 0;
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&bad, counter.get(), sizeof bad, cudaMemcpyDeviceToHost,
                                          m.stream->get()));
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(m.stream->get()));
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
    int version = 0;
    ncclGetVersion(&version);
    return json{{"mode", mode_},
                {"nccl_version_code", version},
                {"nccl_settings", std::move(settings)},
                {"ranks", ranks_},
                {"placement", in_place_ ? "in place" : "out of place"},
                {"bytes_means", spec_.size_means},
                {"dtype", "float32"},
                {"busbw_factor", collectives::bus_factor(spec_.op, ranks_)},
                {"wrong_elements", wrong_elements_},
                {"timeout_s", timeout_s_}};
  }

 private:
  [[nodiscard]] std::size_t bytes_used() const { return total_ * sizeof(float); }

  member make_member(int device, int rank) {
    member m;
    m.device = device;
    m.rank = rank;
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device));
    m.stream = std::make_unique<cuda::stream>();
    m.start = std::make_unique<cuda::event>();
    m.stop = std::make_unique<cuda::event>();
    const std::size_t send_elems = spec_.op == collective::all_gather ? part_ : total_;
    const std::size_t recv_elems = spec_.op == collective::reduce_scatter ? part_ : total_;
    if (in_place_) {
      m.recv = cuda::device_buffer(std::max(send_elems, recv_elems) * sizeof(float));
    } else {
      m.send = cuda::device_buffer(send_elems * sizeof(float));
      m.recv = cuda::device_buffer(recv_elems * sizeof(float));
    }
    return m;
  }

  [[nodiscard]] float* output(const member& m) const { return m.recv.as<float>(); }

  // Where the input of member m lives (in place: inside its output, where NCCL expects it).
  [[nodiscard]] float* input(const member& m) const {
    if (!in_place_) return m.send.as<float>();
    if (spec_.op == collective::all_gather)
      return m.recv.as<float>() + static_cast<std::size_t>(m.rank) * part_;
    return m.recv.as<float>();
  }

  // Rank r sends r+1 everywhere (alltoall: part p of rank r holds r*n + p + 1).
  void fill_inputs() {
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      if (!in_place_) {
        kernels::enqueue_fill_float(m.recv.as<float>(), m.recv.size() / sizeof(float), 0.0f,
                                    m.stream->get());
      }
      if (spec_.op == collective::alltoall) {
        for (int p = 0; p < ranks_; ++p) {
          kernels::enqueue_fill_float(input(m) + static_cast<std::size_t>(p) * part_, part_,
                                      static_cast<float>(m.rank * ranks_ + p + 1), m.stream->get());
        }
      } else if (spec_.op == collective::broadcast) {
        if (in_place_ || m.rank == 0) {
          kernels::enqueue_fill_float(input(m), total_, m.rank == 0 ? 1.0f : 0.0f, m.stream->get());
        }
      } else {
        const std::size_t n = spec_.op == collective::all_gather ? part_ : total_;
        kernels::enqueue_fill_float(input(m), n, static_cast<float>(m.rank + 1), m.stream->get());
      }
      GPUBENCH_CUDA_CHECK(cudaGetLastError());
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(m.stream->get()));
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

  void launch() {
    GPUBENCH_NCCL_CHECK(ncclGroupStart());
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      const void* in = input(m);
      void* out = output(m);
      switch (spec_.op) {
        case collective::all_reduce:
          GPUBENCH_NCCL_CHECK(
              ncclAllReduce(in, out, total_, ncclFloat32, ncclSum, m.comm, m.stream->get()));
          break;
        case collective::all_gather:
          GPUBENCH_NCCL_CHECK(ncclAllGather(in, out, part_, ncclFloat32, m.comm, m.stream->get()));
          break;
        case collective::reduce_scatter:
          GPUBENCH_NCCL_CHECK(ncclReduceScatter(
              in, in_place_ ? output(m) + static_cast<std::size_t>(m.rank) * part_ : out, part_,
              ncclFloat32, ncclSum, m.comm, m.stream->get()));
          break;
        case collective::broadcast:
          GPUBENCH_NCCL_CHECK(
              ncclBroadcast(in, out, total_, ncclFloat32, 0, m.comm, m.stream->get()));
          break;
        case collective::alltoall:
          GPUBENCH_NCCL_CHECK(ncclAlltoAll(in, out, part_, ncclFloat32, m.comm, m.stream->get()));
          break;
      }
    }
    GPUBENCH_NCCL_CHECK(ncclGroupEnd());
    wait_for_comms("the collective's enqueue");
  }

  // Marks the communicators for ncclCommAbort (in the destructor) and throws: the failure a
  // communicator reported, or the timeout.
  [[noreturn]] void abort_on_error(const std::string& what, ncclResult_t state) {
    aborted_ = true;
    throw api_error("NCCL", what, "ncclResult " + std::to_string(static_cast<int>(state)),
                    ncclGetErrorString(state), source_site::current());
  }
  [[noreturn]] void abort_on_timeout(const std::string& what) {
    aborted_ = true;
    throw std::runtime_error(what + " did not finish within " + std::to_string(timeout_s_) +
                             " s (a peer dead or stuck?); communicator aborted");
  }
  // SIGINT/SIGTERM (a user, or a launcher ending the job after a rank died) ends the wait too.
  [[noreturn]] void abort_on_interrupt(const std::string& what) {
    aborted_ = true;
    throw std::runtime_error(what + " interrupted; communicator aborted");
  }
  [[nodiscard]] std::chrono::steady_clock::time_point deadline() const {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(timeout_s_));
  }

  // Non-blocking communicators finish calls asynchronously: wait until none is in progress.
  void wait_for_comms(const char* what) {
    const auto until = deadline();
    for (auto& m : members_) {
      ncclResult_t state = ncclInProgress;
      while (state == ncclInProgress) {
        GPUBENCH_NCCL_CHECK(ncclCommGetAsyncError(m.comm, &state));
        if (state != ncclSuccess && state != ncclInProgress) abort_on_error(what, state);
        if (state == ncclInProgress && std::chrono::steady_clock::now() > until) {
          abort_on_timeout(what);
        }
        if (state == ncclInProgress && interrupt_requested()) abort_on_interrupt(what);
      }
    }
  }

  // Streams done, or a communicator error, or the timeout: never a hang.
  void wait_for_streams() {
    const auto until = deadline();
    const std::string what(spec_.id);
    for (auto& m : members_) {
      GPUBENCH_CUDA_CHECK(cudaSetDevice(m.device));
      while (true) {
        const cudaError_t status = cudaStreamQuery(m.stream->get());
        if (status == cudaSuccess) break;
        if (status != cudaErrorNotReady) GPUBENCH_CUDA_CHECK(status);
        ncclResult_t state = ncclSuccess;
        GPUBENCH_NCCL_CHECK(ncclCommGetAsyncError(m.comm, &state));
        if (state != ncclSuccess && state != ncclInProgress) abort_on_error(what, state);
        if (std::chrono::steady_clock::now() > until) abort_on_timeout(what);
        if (interrupt_requested()) abort_on_interrupt(what);
      }
    }
  }

  const collective_spec& spec_;
  bool in_place_;
  std::size_t bytes_;
  double timeout_s_;
  int ranks_ = 0;
  std::size_t part_ = 0;
  std::size_t total_ = 0;
  std::vector<member> members_;
  std::string mode_;
  bool aborted_ = false;
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
      .add_choice_axis("placement", {"out_of_place", "in_place"},
                       "separate or shared send/receive buffers")
      .add_metric("us", metric_kind::us_per_iteration)
      .add_metric("algbw_GBps", metric_kind::bandwidth_GBps)
      .set_timing(timing::manual)
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
