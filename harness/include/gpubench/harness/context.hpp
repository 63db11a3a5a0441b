// What a benchmark may know about the run it is part of: the machine and the user's options.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/system.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/shared_resources.hpp"

namespace gpubench {

struct run_options {
  std::vector<int> gpus;                            // GPU indices to use; empty means every GPU
  std::vector<std::filesystem::path> scratch_dirs;  // where storage benchmarks may create files
  bool verify = true;                               // check every benchmark's data after timing it
  double timeout_s = 300;  // a collective not done by then is aborted (--timeout)
  // The python3 cpu.dataloader runs (--python); empty: $GPUBENCH_PYTHON, then PATH's python3s.
  std::filesystem::path python;
};

class job;

class context {
 public:
  // `the_job`: the MPI job this process is a rank of (nullptr: a single process).
  context(system_info system, run_options options, const job* the_job = nullptr);

  [[nodiscard]] const system_info& system() const noexcept { return system_; }
  [[nodiscard]] const run_options& options() const noexcept { return options_; }
  [[nodiscard]] const job* mpi_job() const noexcept { return job_; }

  // The GPUs this run uses (indices into system().gpus that CUDA can drive).
  [[nodiscard]] std::vector<int> gpu_indices() const;
  // Why no GPU benchmark can run here, or nullopt when at least one GPU is usable.
  [[nodiscard]] std::optional<std::string> gpu_unavailable_reason() const;
  // Physical cores this process may use (at least 1).
  [[nodiscard]] int host_cores() const noexcept;

  // What the run's cases share (NCCL communicators); emptied when the run ends. A cache, so it
  // may change while the context is otherwise const.
  [[nodiscard]] shared_resources& resources() const noexcept { return *resources_; }

 private:
  system_info system_;
  run_options options_;
  const job* job_ = nullptr;
  std::shared_ptr<shared_resources> resources_ = std::make_shared<shared_resources>();
};

// The skip reason of a benchmark that needs a CUDA GPU: "built without CUDA" in such builds,
// else context::gpu_unavailable_reason().
[[nodiscard]] std::optional<std::string> cuda_gpu_unavailable_reason(const context& ctx);
// The same, then why cuBLASLt cannot be loaded (gemm, gpu.burn).
[[nodiscard]] std::optional<std::string> cublaslt_gpu_unavailable_reason(const context& ctx);

// A factory for builds that lack what the benchmark needs: the support check skips it first,
// so this is never called in a run; calling it anyway is a logic error.
[[nodiscard]] instance_factory unavailable_factory(std::string why);

// The `gpu` axis of per-GPU benchmarks: every GPU this run uses, by default.
[[nodiscard]] axis gpu_axis();

}  // namespace gpubench
