// The sizing model (docs/model.md): hardware profile + workload -> expected training samples/s,
// every component's own ceiling, the limiting component and what would move it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/workload.hpp"

namespace gpubench::model {

inline constexpr const char* sizing_schema = "gpubench.sizing/1";

// How a software stack keeps the training state in GPU memory (docs/model.md, "Memory"): the
// "memory" object of a stack in configs/model/constants.json, each choice sourced there.
struct memory_layout {
  // torch.amp: the fp32 parameters are the optimizer's master copy. false: the model's weights are
  // in the compute precision and the optimizer keeps an fp32 master copy, sharded as its state is
  // (Megatron-Core's Float16 and distributed optimizers).
  bool fp32_parameters = true;
  bool autocast_copies = true;   // torch.autocast's half copies of the weights, held all step
  bool gradient_buckets = true;  // DDP's buckets, a second copy of the gradients
  // Transformer Engine's fp8 copy of each linear weight, kept from the forward to the backward.
  bool fp8_weight_copies = false;
  // Transformer Engine keeps each linear layer's input in its quantized copy (the one the
  // weight-gradient GEMM reads) for the backward pass, not the 16-bit tensor.
  bool quantized_saved_inputs = false;
  // The strategy a workload of this stack gets when it names none (Megatron's distributed
  // optimizer is zero1); none: ddp.
  std::optional<parallel_strategy> default_strategy;
  std::string source;
};

// Efficiencies no microbenchmark measures: named, kept in configs/model/constants.json, some
// fitted on the calibration sets (gpubench calibrate --fit), the rest from sources. A software
// stack (eager PyTorch, compiled, Megatron/Transformer Engine, MLPerf) overrides some of them with
// values fitted only on that stack's rows (the "stacks" table of constants.json).
struct constants {
  double matmul_efficiency = 0.8;   // a training step's GEMMs vs the GEMM benchmark's rate
  double conv_efficiency = 0.6;     // convolutions (implicit GEMM) vs plain GEMM
  double memory_efficiency = 0.7;   // elementwise/normalisation kernels vs hbm.copy
  double kernel_overhead_us = 2.0;  // un-hidden framework time per kernel launch
  double comm_overlap = 0.8;        // share of the backward pass gradient traffic can hide under
  // The share of the expert all-to-alls Megatron-Core's combined 1F1B schedule hides.
  double expert_comm_overlap = 0.93;
  double loader_efficiency = 0.74;  // Python (torchvision/PIL) loader vs gpubench's C++ pipeline
  double loader_efficiency_low = 0.41;   // the lowest and highest it was measured at: the band
  double loader_efficiency_high = 0.90;  // of a python-loader ceiling derived from cpu.augment
  // Where one DataLoader worker's time per image goes where cpu.dataloader did not run (its
  // cpu.dataloader_*_share figures otherwise): JPEG decode, RandomResizedCrop, all the
  // transforms (the rest is collation and the hand-over to the main process), and the
  // torchvision.io decode + tensor transforms path.
  double loader_decode_share = 0.45;
  double loader_resize_share = 0.16;
  double loader_transform_share = 0.72;
  double loader_torchvision_io_share = 0.56;
  double pillow_simd_resize_speedup = 4;  // Pillow-SIMD's resize over Pillow's
  double dali_gpu_decode_per_gpu = 5000;  // images/s one GPU's JPEG decoding gives DALI
  double page_cache_fraction = 0.8;       // share of RAM a dataset may use to be served from cache
  double network_efficiency = 0.9;        // NCCL inter-node bus bandwidth vs the NICs' line rate
  double nvlink_busbw_fraction = 0.8;     // allreduce busbw vs unidirectional NVLink per GPU
  double pcie_busbw_fraction = 0.5;       // allreduce busbw vs H2D rate when GPUs share only PCIe
  double allreduce_latency_us = 50;       // fixed cost of one gradient bucket's allreduce
  double ddp_bucket_bytes = 25e6;         // PyTorch DDP's default bucket
  double default_augment_per_core = 528;  // samples/s per core when no cpu.augment figure exists
  double default_network_gbps = 100;      // per node, when neither measured nor in the catalog
  double max_network_gbps_per_gpu = 400;  // the most any node has: one 400 Gb/s NIC per GPU
  double default_launch_latency_us = 2.5;
  double loader_cores_reserved_per_gpu = 1;  // the training process itself
  // Share of the counted memory-bound traffic (eager kernels, one per operation) a stack's
  // kernels still move: fusion keeps intermediate tensors on chip.
  double memory_pass_fraction = 1;
  // Passes over a half-precision convolution's output that NCHW tensors add (layout transposes).
  double nchw_conv_passes = 0;
  // How many times fewer multiplications a Winograd 3x3 convolution needs than its implicit GEMM
  // (fp32 on CUDA cores only; docs/model.md, "Winograd").
  double winograd_flop_reduction = 1;
  // GPU memory the framework holds beside the tensors it counts: the CUDA context, library
  // workspaces, communication buffers; and the caching allocator's fragmentation.
  double framework_reserved_GiB = 1.0;
  double allocator_fragmentation = 0.05;
  // Share of the GPU's memory a job is planned to fill (gpu.memory_headroom overrides it).
  double memory_headroom = 0.9;
  // How much wider a prediction's error band grows, each side, for each input it rests on that
  // nothing measured or published (an assumed GEMM efficiency, a method no calibration row ran).
  double band_widening = 0.15;
  std::map<std::string, std::string> sources;  // constant -> where its value comes from
  memory_layout memory;                        // the applied stack's

  struct stack_entry {
    std::string name;
    std::string about;
    std::map<std::string, double> values;        // constant -> this stack's value
    std::map<std::string, std::string> sources;  // constant -> where that value comes from
    std::vector<std::string> fitted;             // the constants fitted on this stack's rows
    std::string improves_on;  // a stack this one may make no step slower than ("": none)
    std::map<std::string, std::string> slower_because;  // constant -> the sourced reason it may
    std::optional<memory_layout> memory;  // none: the stack it improves on keeps its state alike
  };
  std::vector<stack_entry> stacks;  // the first is the default; its values are the base ones
  std::string stack;                // the stack whose values are applied
  std::map<std::string, double> base_values;  // what for_stack() replaced, to apply another

  [[nodiscard]] static const std::vector<std::string>& fitted_names();
  [[nodiscard]] double& at(const std::string& name);
  // Which way of a constant makes a step faster; none for those that are not efficiencies.
  [[nodiscard]] static std::optional<better> faster_way(const std::string& name);
  [[nodiscard]] double at(const std::string& name) const;
  // The base constants with a stack's own values applied; constants without a stack table (built
  // in code) as they are. Throws input_error for a stack the table lacks.
  [[nodiscard]] constants for_stack(const std::string& name) const;
  [[nodiscard]] const stack_entry& stack_named(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> stack_names() const;
  // The stack's memory layout, or the one of the stack it improves on.
  [[nodiscard]] memory_layout memory_layout_of(const std::string& name) const;
};

[[nodiscard]] constants load_constants();  // configs/model/constants.json
[[nodiscard]] constants parse_constants(const json& doc, const std::string& file);
[[nodiscard]] json to_json(const constants& c);

struct run_options {
  std::optional<int> gpus;  // per node
  std::optional<int> nodes;
  std::optional<int> batch;
  std::optional<std::string> precision;
  bool advise = true;  // false: the rate, the limit and the memory only (no what-if advice)
};

using component_id = vocabulary::component;

struct component {
  component_id name = component_id::gpu_compute;
  std::optional<double>
      samples_per_s;       // its own ceiling; none when it does not apply or is unknown
  double utilization = 0;  // share of its capacity used at the predicted rate
  model::basis basis = model::basis::unknown;
  std::string detail;
  // The measurements its ceiling rests on whose repetitions spread above vocabulary::noisy_cv:
  // "cpu.augment_per_core (cv 21.7%)".
  std::vector<std::string> noisy;
  // Where the ceiling rests on an assumed ratio: the ceiling at its lowest and highest
  // measured values (a python loader derived from cpu.augment).
  std::optional<std::pair<double, double>> range;
};

struct step_breakdown {
  double compute_s = 0;
  double memory_s = 0;
  double optimizer_s = 0;
  double launch_s = 0;                 // GPU-side gaps between kernels (launch latency)
  double host_s = 0;                   // framework time on the CPU to issue the step's kernels
  double communication_s = 0;          // all of it
  double communication_exposed_s = 0;  // the part not hidden under the backward pass
  double tensor_parallel_s = 0;  // the tensor group's exchanges and the stages' sends (exposed)
  double pipeline_bubble_s = 0;  // GPUs idle while the pipeline fills and drains
  double gpu_step_s = 0;         // what one step takes on the GPU side
  double flops = 0;
  double bytes = 0;  // GPU memory traffic per step (operands of GEMMs, memory-bound, optimizer)
  double anchor_factor = 1;  // measured/modelled step time of the reference point
};

// GPU memory per GPU (docs/model.md, "Memory").
struct memory_part {
  std::string name;  // weights, gradients, optimizer_state, activations, temporary, framework
  double GiB = 0;
  std::string detail;
};
struct memory_verdict {
  bool fits = true;  // also when the capacity is not known (then capacity_GiB is empty)
  // Within the headroom: at most `headroom` of the capacity. A job that fits but is above it
  // runs in the model, with a warning: real jobs run out of memory there.
  bool within_headroom = true;
  double headroom = 0.9;
  model::basis headroom_basis = model::basis::assumed_default;
  double per_gpu_GiB = 0;
  std::optional<double> capacity_GiB;
  model::basis capacity_basis = model::basis::unknown;
  std::vector<memory_part> parts;
  std::vector<std::string> unknown;  // parts the model cannot count for this workload
};

// The range the published runs like this one fell in around the model's predictions
// (docs/model.md, "Error band"): the held-out errors of the calibration rows of its family.
struct prediction_interval {
  double low = 0;  // samples/s
  double high = 0;
  double low_ratio = 1;  // low / the prediction
  double high_ratio = 1;
  double held_low = 1;  // the family's band before any widening (published / predicted)
  double held_high = 1;
  double coverage = 0.8;         // the share of held-out published runs the band is built to hold
  double held_out_coverage = 0;  // the share it held, each source left out of its own band
  std::string family;            // whose rows set it ("all": every family's)
  bool shared = false;           // every family's band joined with the family's (error_band)
  std::string method;            // first_principles | anchored
  int rows = 0;
  std::vector<std::string> widened;         // why it is wider than those errors alone
  [[nodiscard]] std::string basis() const;  // "80% of 37 held-out published gpt runs ..."
};

struct sizing {
  std::string workload;
  std::string hardware;
  std::string sample_unit;
  int gpus_per_node = 1;
  int nodes = 1;
  int batch_per_gpu = 1;
  int gradient_accumulation = 1;  // micro-batches per optimizer step
  std::string precision;
  std::string stack;                   // the software stack whose constants applied
  double predicted_samples_per_s = 0;  // 0 when the job does not fit in GPU memory
  double per_gpu_samples_per_s = 0;
  double samples_per_s_if_it_fit = 0;  // the rate the GPUs would reach, fit or not
  memory_verdict memory;
  component_id limiting_component = component_id::gpu_compute;
  std::vector<component> components;
  step_breakdown step;
  std::vector<std::string> recommendations;
  std::vector<std::string> notes;
  std::vector<std::string> assumed;  // figures taken from the catalog or defaults
  // On several nodes whose network nothing states: the figure assumed and whence, said in the
  // answer's first line (issue 40); empty otherwise.
  std::string network_assumption;
  bool anchored = false;
  // False where the calibration cannot vouch for the model's answer (a note says why).
  bool supported = true;
  double tokens_per_sample = 1;
  std::optional<prediction_interval> interval;  // none where the job does not fit
};

// "batch 16", or "batch 16 x 4096 accumulated" when micro-batches are accumulated.
[[nodiscard]] std::string batch_text(const sizing& s);

// Why the model cannot vouch for a workload's prediction (docs/model.md), or nothing: predict()
// then marks the sizing unsupported, and calibration reports such rows without fitting on them.
[[nodiscard]] std::optional<std::string> unsupported_reason(const workload& w);

// Throws input_error when the profile cannot run the workload (no GPU figures, precision the GPU
// lacks, more GPUs than the machine has).
[[nodiscard]] sizing predict(const hardware_profile& hardware, const workload& w,
                             const constants& c, const run_options& options = {});

[[nodiscard]] json to_json(const sizing& s, const hardware_profile& hardware, const workload& w,
                           const constants& c);

// One way to lay a job out on the machine (size --search): the tensor x pipeline split, the
// data-parallel replicas, the micro-batch and accumulation that keep the job's batch per
// optimizer step, checkpointing and the data-parallel strategy.
struct layout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int micro_batch = 1;
  int accumulation = 1;
  bool activation_checkpointing = false;
  bool selective_checkpointing = false;  // the attention core only (Korthikanti et al.)
  parallel_strategy strategy = parallel_strategy::ddp;
  bool fits = false;
  bool within_headroom = false;  // at most the headroom's share of the capacity
  double per_gpu_GiB = 0;
  double predicted_samples_per_s = 0;
  component_id limiting_component = component_id::gpu_compute;
  int expert = 1;         // expert parallelism (a model with experts)
  int context = 1;        // context parallelism: the GPUs each sequence is split over
  int expert_tensor = 1;  // expert tensor parallelism: the GPUs each expert's width is split over
};
// Every layout of the workload on the machine that keeps its samples per optimizer step
// (batch_per_gpu x gradient_accumulation x GPUs): those within the memory headroom first, then
// those that fit above it, each fastest first; then the rest, nearest to fitting first.
[[nodiscard]] std::vector<layout> search_layouts(const hardware_profile& hardware,
                                                 const workload& w, const constants& c,
                                                 const run_options& options = {});
[[nodiscard]] json to_json(const layout& l);

// The GPU memory bandwidth (GB/s) the model uses: measured (hbm.copy), else the catalog's peak x
// its efficiency; nullopt when the profile has neither.
[[nodiscard]] std::optional<double> gpu_memory_GBps(const hardware_profile& hardware);
// The roof of a roofline at a GEMM dtype (TFLOP/s): the best rate measured at it, else the
// catalog's peak x its efficiency; nullopt when the profile has neither.
[[nodiscard]] std::optional<double> gemm_roof_tflops(const hardware_profile& hardware,
                                                     const std::string& dtype);

// The GEMM rate (TFLOP/s) the profile gives a shape, and whether it was measured.
[[nodiscard]] double gemm_tflops(const hardware_profile& hardware, const std::string& dtype,
                                 std::int64_t m, std::int64_t n, std::int64_t k,
                                 std::int64_t batched, bool* measured = nullptr);

}  // namespace gpubench::model
