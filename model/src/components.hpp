// The parts of the sizing model, one file each, as docs/model.md lists them: the GPU step
// (gpu_step.cpp), the parallelism strategies (parallelism.cpp), anchoring on a reference point
// (anchoring.cpp) and the input pipeline's ceilings (input_pipeline.cpp). Each part says what
// would move its own limit next to the arithmetic that sets it; predict() (model.cpp) drives them.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpubench/model/model.hpp"

namespace gpubench::model::detail {

inline constexpr double giga = 1e9;
inline constexpr double tera = 1e12;

// How the model writes a number in its text: format_number (gpubench/format.hpp).
[[nodiscard]] std::string fmt(double value, int digits = 3);
// Log-linear interpolation of (x, y) points sorted by x, clamped at the ends.
[[nodiscard]] double interpolate_log(const std::vector<std::pair<double, double>>& points,
                                     double x);
// Where a figure came from; unknown where the profile lacks it.
[[nodiscard]] basis basis_of(const figure* f);
[[nodiscard]] component make_component(component_id name, std::optional<double> ceiling, basis from,
                                       std::string detail);
// Adds "WHAT (cv 21.7%)" to `noisy` where cv is above vocabulary::noisy_cv; the second form for a
// figure of the profile (nothing where the profile lacks it).
void cite_noise(std::vector<std::string>& noisy, const std::string& what, double cv);
void cite_noise(std::vector<std::string>& noisy, const hardware_profile& hw, const figure_def& f);

// (parallelism.cpp) The GPUs that hold the same part of the model and exchange its gradients: all
// of them, or with a tensor x pipeline split one GPU of each split. Throws input_error when the
// split does not divide the job's GPUs or a tensor group would span nodes.
struct data_parallel {
  int per_node = 1;
  int nodes = 1;
  [[nodiscard]] int ranks() const { return per_node * nodes; }
};
[[nodiscard]] data_parallel data_parallel_group(const workload& w, int gpus_per_node, int nodes);
// Whether the job's splits come out whole on this many nodes (what data_parallel_group checks,
// without throwing): the advice sizes other node counts only where they do.
[[nodiscard]] bool splits_whole(const workload& w, int gpus_per_node, int nodes);
// The fewest nodes whose every multiple splits whole, where a tensor group or an expert's split
// fits in a node: the step between the node counts the advice tries.
[[nodiscard]] int node_granule(const workload& w, int gpus_per_node);
// Of `gpus` data-parallel GPUs, the ones that hold replicas of the same routed experts and share
// their gradients: gpus x T x C / (E x K), at least 1 (Megatron-Core's expert data parallelism;
// docs/model.md, "Memory per GPU").
[[nodiscard]] int expert_group(const workload& w, int gpus);

// (memory.cpp) Bytes per trained parameter as the model keeps it between steps: the compute
// precision's where the stack keeps 16-bit weights beside an fp32 master copy or the workload
// keeps the model in 16-bit (parameter_precision), else 4.
[[nodiscard]] double parameter_bytes(const workload& w, const constants& c,
                                     const std::string& precision);

// ---- the GPU step (gpu_step.cpp) -----------------------------------------------------------

// The GEMM rates of one dtype in a profile, read once for the many shapes of a step (a fit
// predicts every calibration row thousands of times): gemm_tflops() for each shape.
class gemm_rates {
 public:
  gemm_rates(const hardware_profile& hardware, const std::string& dtype);
  [[nodiscard]] double tflops(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batched,
                              bool* measured) const;
  // The largest cv of the points measured at the dtype (0 without any).
  [[nodiscard]] double worst_cv() const;

 private:
  std::vector<const gemm_point*> points_;         // measured at the dtype, in the profile's order
  std::vector<std::pair<double, double>> curve_;  // equivalent cube side -> TFLOP/s, sorted
  std::optional<double> peak_;                    // the catalog's, without a measured point
  double efficiency_ = 0.8;
  double sms_ = 100;
  std::string missing_;  // the error when a shape needs the peak and the profile has none
};

// One micro-batch on one GPU.
struct gpu_times {
  step_breakdown step;
  double params = 0;
  double kernels = 0;
  double tokens_per_sample = 1;
  step_ops ops;  // the expansion the step was timed from (model parallelism and memory read it)
  basis compute_basis = basis::catalog;
  basis memory_basis = basis::catalog;
  std::vector<std::string> noisy_compute;  // noisy measurements each part rests on (cite_noise)
  std::vector<std::string> noisy_memory;
  [[nodiscard]] double work() const {
    return step.compute_s + step.memory_s + step.optimizer_s + step.launch_s;
  }
  // The framework issues kernels asynchronously: the GPU waits for the host only when issuing
  // the step takes longer than running it.
  [[nodiscard]] double busy() const { return std::max(work(), step.host_s); }
};

// One optimizer step over `params` parameters in `tensors` tensors (the shard a GPU updates):
// its memory traffic per parameter and the kernels it issues (docs/model.md, "The optimizer").
struct optimizer_cost {
  double bytes_per_param = 0;
  double kernels = 0;
};
[[nodiscard]] optimizer_cost optimizer_step(const workload& w, const std::string& precision,
                                            double params, double tensors);

// The optimizer runs once per w.gradient_accumulation micro-batches; a sharding strategy splits
// its state over the GPUs its table row names.
[[nodiscard]] gpu_times gpu_step(const hardware_profile& hw, const workload& w, const constants& c,
                                 const std::string& precision, int batch, const data_parallel& dp,
                                 std::vector<std::string>& assumed);
// Throws input_error when the profile has no GEMM rate for the precision's dtype.
void check_runs(const hardware_profile& hw, const std::string& precision);
// The compute and memory parts of a step (issuing kernels counts as compute: the GPU idles
// between small kernels).
[[nodiscard]] double compute_part(const step_breakdown& step);
[[nodiscard]] double memory_part(const step_breakdown& step);
// The training precisions whose GEMMs run faster on this GPU than `precision`'s (fp8 for a bf16
// job on Hopper, none on Ampere): what "a lower precision" may name.
[[nodiscard]] std::vector<std::string> faster_precisions(const hardware_profile& hw,
                                                         const std::string& precision);
// What would move a gpu_compute or gpu_memory limit of a job in `precision`.
void advise_gpu(component_id limit, const gpu_times& gpu, const step_breakdown& step,
                const hardware_profile& hw, const std::string& precision,
                std::vector<std::string>& advice);

// ---- communication and the parallelism strategies (parallelism.cpp) ------------------------

struct allreduce_model {
  double busbw_GBps = 0;        // across every GPU of the job: the slower of the two below
  double intra_busbw_GBps = 0;  // inside a node (NVLink, PCIe or measured)
  double inter_busbw_GBps = 0;  // between nodes (network); infinite on one node
  int gpus_per_node = 1;
  int nodes = 1;
  model::basis basis = model::basis::catalog;
  std::string detail;
  std::vector<std::pair<double, double>> measured;  // bytes -> busbw, when measured at this size
  double network_gbps = 0;                          // per node, across nodes (0: one node)
  bool network_assumed = false;      // the profile states no network: the default stands in
  std::string network_unknown_why;   // the catalog's reason, when it says why it has no figure
  std::string network_assumed_from;  // where the assumed figure comes from
  std::vector<std::string> noisy;    // the measured busbw, where it is noisy (cite_noise)
};
[[nodiscard]] allreduce_model allreduce_for(const hardware_profile& hw, const constants& c,
                                            int gpus_per_node, int nodes,
                                            std::vector<std::string>& assumed);

// What a strategy's exchange of parameters or gradients costs per optimizer step.
struct exchange {
  double whole_s = 0;     // one whole exchange (per micro-batch, or per accumulation)
  double per_step_s = 0;  // its share of one micro-batch step
  double exposed_s = 0;   // the part of per_step_s the backward pass cannot hide
  double bytes = 0;       // what one exchange moves per GPU, for the component's text
  std::string what;       // "gradient allreduce of", "FSDP gather/scatter of"
};

// How a parallelism strategy exchanges data (docs/model.md). A table: a new strategy is a row.
struct strategy {
  parallel_strategy kind;
  std::string_view name;
  exchange (*cost)(const gpu_times& gpu, const allreduce_model& ar, const constants& c,
                   const workload& w, const std::string& precision, int ranks);
  // Over how many GPUs each part of the training state is split (1: every GPU holds all of it).
  struct sharding {
    int weights = 1;
    int gradients = 1;
    int optimizer = 1;
  };
  sharding (*shards)(int gpus_per_node, int nodes);
  bool gathers_layers;  // parameters gathered one unit at a time (FSDP's flat units)
  bool across_nodes;    // differs from another row only across nodes (HSDP: FSDP in a node)
};
// How the expert-parallel all-to-all carries a token (parallel.expert_dispatcher). A table: a new
// dispatcher is a row.
struct expert_dispatcher {
  expert_dispatch kind;
  std::string_view name;
  // The token crosses the network once per node holding any of its experts and is forwarded
  // over NVLink inside it (DeepEP's and HybridEP's RDMA stage), not once per routed copy.
  bool once_per_node;
};
// The share of an all-to-all's network bytes a job's dispatcher sends: 1, or for a dispatcher
// that sends once per node, the distinct remote nodes a token's top-k experts fall on over the
// routed copies that leave the node; `peers_per_node` are the expert group's GPUs in a node.
[[nodiscard]] double dispatcher_network_share(const workload& w, int peers_per_node);
// Why Megatron-Core cannot run this job's expert all-to-alls under another micro-batch's compute
// (its combined 1F1B schedule, parallel.expert_overlap), or nullopt where it can.
[[nodiscard]] std::optional<std::string> expert_overlap_problem(const workload& w);
// Whether the job's all-to-alls are overlapped: asked for, and possible.
[[nodiscard]] bool expert_overlapped(const workload& w);

// The tensor group's exchanges, the stages' sends and the pipeline bubble, per micro-batch step.
void model_parallel_times(const hardware_profile& hw, const constants& c, const workload& w,
                          const gpu_times& gpu, int gpus_per_node, step_breakdown& step);

// The row of a strategy, and every row (the layout search tries each).
[[nodiscard]] const strategy& strategy_of(parallel_strategy kind);
[[nodiscard]] std::span<const strategy> all_strategies();
// The backward pass's share of a step, under which an exchange can hide.
[[nodiscard]] double backward_seconds(const step_breakdown& step);
// What would move a communication limit.
// What would move a communication limit; backward_s is the modelled backward pass the exchange
// could hide under (before anchoring).
// rate_with(changed) is the model's samples/s for the same job with the workload changed (another
// strategy, more accumulation): what each remedy would give.
void advise_communication(const exchange& x, const allreduce_model& ar, const constants& c,
                          const step_breakdown& step, double backward_s, const workload& w,
                          double predicted, const std::function<double(const workload&)>& rate_with,
                          std::vector<std::string>& advice);
// Said of every multi-node sizing whose network is not known, whatever limits it.
void advise_unknown_network(const allreduce_model& ar, const constants& c, int nodes,
                            std::vector<std::string>& advice);

// ---- GPU memory (memory.cpp) --------------------------------------------------------------

// What one GPU holds for the job at a micro-batch, against its capacity: from the step's
// expansion (ops, at that batch and precision), or expanding it.
[[nodiscard]] memory_verdict memory_per_gpu(const hardware_profile& hw, const workload& w,
                                            const constants& c, const std::string& precision,
                                            const step_ops& ops, int batch,
                                            const data_parallel& dp);
[[nodiscard]] memory_verdict memory_per_gpu(const hardware_profile& hw, const workload& w,
                                            const constants& c, const std::string& precision,
                                            int batch, int gpus_per_node, int nodes);
// What makes a job that does not fit (or fits above its headroom) hold within the headroom:
// memory_with(changed workload, micro-batch, nodes) is the verdict for the same job changed,
// rate_with(the same) its predicted samples/s (0 where it does not fit).
using memory_of = std::function<memory_verdict(const workload&, int, int)>;
using rate_of = std::function<double(const workload&, int, int)>;
void advise_memory(const sizing& s, const workload& w, const memory_of& memory_with,
                   const rate_of& rate_with, std::vector<std::string>& advice);
// "12.3 GiB": GPU memory as every sizing text prints it.
[[nodiscard]] std::string GiB_text(double value);

// ---- anchoring on a measured reference point (anchoring.cpp) -------------------------------

// Scales every part of this machine's modelled GPU work by the reference's measured over modelled
// step. Does nothing without a reference; notes what it did in s.notes.
void anchor(const workload& w, const constants& c, const std::string& precision,
            step_breakdown& step, sizing& s);

// ---- the input pipeline (input_pipeline.cpp) ----------------------------------------------

// The CPU, storage and PCIe ceilings of the data a step needs, per the whole job.
// The image loaders data.loader names (loader_options.cpp): a python worker's options change
// parts of its time per image; the native loader runs at cpu.augment's rate; DALI's GPU decode
// is bounded by the GPUs' JPEG decoding.
enum class loader_kind { python_worker, native, gpu_decode };
// Shares of one vanilla DataLoader worker's time per image (cpu.dataloader, else constants).
struct loader_split {
  double decode = 0;
  double resize = 0;
  double transforms = 0;      // decode through Normalize; the rest is collation and hand-over
  double torchvision_io = 0;  // the torchvision.io path's transforms
  basis from = basis::assumed_default;
};
struct loader_option {
  std::string_view name;  // data.loader
  loader_kind kind;
  int effort;               // the advice offers the cheaper changes first
  std::string_view change;  // what a user does to get it
  // A python worker's time per image over the vanilla loader's at the measured size, for an
  // image of `pixels` times the measured one; null for the other kinds.
  double (*time_share)(const loader_split& s, const constants& c, double pixels);
};
[[nodiscard]] std::span<const loader_option> loader_options();
[[nodiscard]] const loader_option& find_loader(std::string_view name);
[[nodiscard]] std::vector<std::string> loader_names();
[[nodiscard]] loader_split loader_split_of(const hardware_profile& hw, const constants& c);

struct input_pipeline {
  component cpu;
  component storage;
  component pcie;
  double loader_cores = 0;  // per node
  double per_core = 0;      // samples/s per loader core
  // Per node: the cores the GPUs' processes leave free, and how many of them sit idle because
  // loader_workers_per_gpu caps the loaders below that.
  double free_cores = 0;
  double idle_cores = 0;
};
// The CPU's ceiling for an image pipeline with its loader (data.loader), on the cores the GPUs'
// processes leave (loader_workers_per_gpu caps them): one node's loader cores x the loader's
// rate per core x nodes. `assumed`, where given, collects the defaults it fell back on.
struct cpu_ceiling {
  component comp;
  double per_core = 0;
  double loader_cores = 0;
  double free_cores = 0;
  double idle_cores = 0;
};
[[nodiscard]] cpu_ceiling cpu_ceiling_of(const hardware_profile& hw, const data_spec& data,
                                         const constants& c, int gpus_per_node, int nodes,
                                         std::vector<std::string>* assumed);
[[nodiscard]] input_pipeline input_ceilings(const hardware_profile& hw, const workload& w,
                                            const constants& c, int gpus_per_node, int nodes,
                                            std::vector<std::string>& assumed);
// Saved activations offloaded to host memory (activation_offload_layers) ride each GPU's host
// link, out in the forward pass and back in the backward: `bytes` per micro-batch each way, at
// the link's host-to-GPU rate, sharing that direction with the input copies (docs/model.md,
// "Activation offloading").
void add_activation_offload(const hardware_profile& hw, double bytes, double samples_per_step,
                            input_pipeline& in, std::vector<std::string>& assumed);
// What would move a cpu, storage or pcie limit; `gpu_rate` is what the GPUs could take.
void advise_input(component_id limit, const input_pipeline& in, const hardware_profile& hw,
                  const workload& w, const constants& c, int gpus_per_node, int nodes,
                  double gpu_rate, std::vector<std::string>& advice);

// The error band of a sizing (error_band.cpp): its family's held-out calibration errors,
// widened for what nothing measured; none where the job has no rate.
[[nodiscard]] std::optional<prediction_interval> interval_for(const sizing& s, const workload& w,
                                                              const hardware_profile& hw,
                                                              const constants& c);

}  // namespace gpubench::model::detail
