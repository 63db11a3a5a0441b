// What the NCCL benchmarks share: error checks, owned communicators, and the bounded wait that
// turns a dead or stuck peer into a failed case instead of a hung job.
#pragma once

#include "gpubench/core/config.hpp"

#if GPUBENCH_HAVE_CUDA && GPUBENCH_HAVE_NCCL
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "gpubench/core/errors.hpp"
#include "gpubench/harness/cuda.hpp"
#include "gpubench/harness/cuda_libraries.hpp"
#include "gpubench/harness/runner.hpp"

namespace gpubench::nccl_comm {

inline void check(ncclResult_t rc, const char* call, source_site where = source_site::current()) {
  if (rc != ncclSuccess && rc != ncclInProgress) {
    throw api_error("NCCL", call, "ncclResult " + std::to_string(static_cast<int>(rc)),
                    cuda::nccl().ncclGetErrorString(rc), where);
  }
}

// A communicator ends with ncclCommDestroy, or with ncclCommAbort after SIGINT/SIGTERM (a peer
// may be gone, and destroy would wait for it).
struct communicator_deleter {
  void operator()(ncclComm_t comm) const noexcept {
    const auto& nccl = cuda::nccl();
    (void)(interrupt_requested() ? nccl.ncclCommAbort(comm) : nccl.ncclCommDestroy(comm));
  }
};
using communicator = cuda::device_handle<ncclComm_t, communicator_deleter>;

enum class wait_end { finished, failed, timed_out, interrupted };
struct wait_outcome {
  wait_end end = wait_end::finished;
  ncclResult_t state = ncclSuccess;  // what the communicator said last
};

[[nodiscard]] inline std::chrono::steady_clock::time_point deadline_after(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

// Asks the communicator for its state, once a turn, until `finished(state)` holds, the
// communicator reports an error, `until` passes or SIGINT/SIGTERM arrives. `finished` may throw
// (a CUDA error).
[[nodiscard]] inline wait_outcome poll(ncclComm_t comm, std::chrono::steady_clock::time_point until,
                                       const std::function<bool(ncclResult_t)>& finished) {
  const auto& nccl = cuda::nccl();
  while (true) {
    ncclResult_t state = ncclSuccess;
    check(nccl.ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
    if (finished(state)) return {wait_end::finished, state};
    if (state != ncclSuccess && state != ncclInProgress) return {wait_end::failed, state};
    if (std::chrono::steady_clock::now() > until) return {wait_end::timed_out, state};
    if (interrupt_requested()) return {wait_end::interrupted, state};
    std::this_thread::yield();  // NCCL's own threads may need this core
  }
}

// A non-blocking communicator's calls are finished when it reports no call in progress.
[[nodiscard]] inline wait_outcome poll_calls(ncclComm_t comm,
                                             std::chrono::steady_clock::time_point until) {
  const wait_outcome outcome =
      poll(comm, until, [](ncclResult_t state) { return state != ncclInProgress; });
  if (outcome.end == wait_end::finished && outcome.state != ncclSuccess) {
    return {wait_end::failed, outcome.state};
  }
  return outcome;
}

// The stream's queued work is finished.
[[nodiscard]] inline wait_outcome poll_stream(ncclComm_t comm, const cuda::stream& stream,
                                              std::chrono::steady_clock::time_point until) {
  return poll(comm, until, [&](ncclResult_t /*state*/) {
    const cudaError_t status = cudaStreamQuery(stream.get());
    if (status != cudaSuccess && status != cudaErrorNotReady) GPUBENCH_CUDA_CHECK(status);
    return status == cudaSuccess;
  });
}

// Throws why a wait on `what` did not finish: the error the communicator reported, the
// timeout, or SIGINT/SIGTERM (a user, or a launcher ending the job after a rank died). The
// caller has aborted the communicator first.
[[noreturn]] inline void throw_unfinished(const wait_outcome& outcome, const std::string& what,
                                          double timeout_s) {
  switch (outcome.end) {
    case wait_end::failed:
      throw api_error("NCCL", what, "ncclResult " + std::to_string(static_cast<int>(outcome.state)),
                      cuda::nccl().ncclGetErrorString(outcome.state), source_site::current());
    case wait_end::timed_out:
      throw std::runtime_error(what + " did not finish within " + std::to_string(timeout_s) +
                               " s (a peer dead or stuck?); communicator aborted");
    case wait_end::interrupted:
      throw std::runtime_error(what + " interrupted; communicator aborted");
    case wait_end::finished:
      break;
  }
  throw std::logic_error("throw_unfinished: " + what + " finished");
}

}  // namespace gpubench::nccl_comm

#define GPUBENCH_NCCL_CHECK(expr) ::gpubench::nccl_comm::check((expr), #expr)
#endif
