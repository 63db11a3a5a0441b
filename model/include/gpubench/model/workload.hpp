// Workloads (gpubench.workload/1): a training job described as the operations of one step.
// A model preset (resnet50, bert-large, gpt, ...) expands into GEMM shapes with counts,
// memory-bound bytes and a kernel count; explicit ops and plain totals are accepted too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/model/hardware.hpp"

namespace gpubench::model {

inline constexpr const char* workload_schema = "gpubench.workload/1";

enum class op_kind {
  matmul,     // a plain GEMM (linear layers, attention batched GEMMs)
  conv,       // a convolution as its implicit GEMM
  memory,     // a memory-bound kernel: normalisation, activation, softmax, residual
  optimizer,  // the optimizer's parameter-sized traffic
};

struct op {
  op_kind kind = op_kind::matmul;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double count = 1;  // how many times the op runs per step
  double bytes = 0;  // memory ops: bytes moved per run
  bool backward = false;
  // Operands of C[m,n] = A[m,k] B[k,n] that never travel to HBM (operand_a | operand_b |
  // operand_c): FlashAttention keeps the score and probability tiles on chip.
  std::uint8_t on_chip = 0;
  std::int64_t batched = 1;  // GEMMs issued together as one batched launch (attention heads)
  // A linear layer's GEMM (or its gradients). fp8 recipes convert those only: attention's score
  // and context products and the vocabulary projection stay in the wider dtype.
  bool linear = true;
  // The gradient of a weight (wgrad); a frozen weight (LoRA's base model) has none.
  bool weight_gradient = false;
  // A 3x3 stride-1 convolution (or its gradients): without tensor cores cuDNN's autotuner picks
  // Winograd for it, which needs fewer multiplications (constants winograd_flop_reduction).
  bool winograd = false;
  // An implicit-GEMM convolution's im2col operand (operand_a of the forward and of the weight
  // gradient, operand_c of the data gradient) is never built: HBM holds the input tensor, `unfold`
  // (kernel area / stride^2, at least 1) times fewer elements than its m x k rows.
  std::uint8_t unfolded = 0;
  double unfold = 1;
};

inline constexpr std::uint8_t operand_a = 1;
inline constexpr std::uint8_t operand_b = 2;
inline constexpr std::uint8_t operand_c = 4;

// One training step on one GPU (forward, backward, optimizer).
struct step_ops {
  std::vector<op> ops;
  double kernels = 0;  // kernel launches per step
  double params = 0;   // trainable parameters
  // Parameter tensors (weights, biases, norm scales): a per-tensor optimizer issues its kernels
  // once per tensor. 0 = not known (a custom model that does not state it).
  double param_tensors = 0;
  // The units FSDP flattens its parameters into (one per transformer layer or residual stage):
  // a per-tensor optimizer on flat parameters loops over these instead.
  double param_groups = 0;
  // Bytes of one pass over the half-precision convolution outputs kept in NCHW: cuDNN's tensor-core
  // kernels work in NHWC and transpose around such convolutions (constants nchw_conv_passes).
  double nchw_conv_bytes = 0;
  double tokens_per_sample = 1;
  // GPU memory (docs/model.md, "Memory"): what the forward pass keeps for the backward pass at
  // this batch (negative: not known, a custom model that does not state it); the largest buffer
  // that lives only part of the step (the logits' gradient, a recomputed layer); the parameters of
  // the largest unit FSDP gathers at once.
  double saved_activation_bytes = -1;
  double transient_bytes = 0;
  double largest_group_params = 0;
  // Of saved_activation_bytes, the linear layers' inputs, at the activation precision (Transformer
  // Engine keeps its quantized copy instead: memory.cpp); and the saved activations of one
  // micro-batch that go to host memory and back (activation_offload_layers), at that precision.
  double saved_linear_input_bytes = 0;
  double offloaded_activation_bytes = 0;
  // Model parallelism: the tensor group's allreduces per step and the bytes of each; the
  // activations one pipeline stage sends the next per micro-batch (and their gradient back).
  double tensor_allreduces = 0;
  double tensor_message_bytes = 0;
  // Expert parallelism: the all-to-alls per step (dispatch and combine, forward and backward) and
  // the bytes each GPU sends or receives in one (the busiest GPU's, under imbalance).
  double expert_alltoalls = 0;
  double expert_message_bytes = 0;
  // Expert tensor parallelism: the all-gathers and reduce-scatters of the routed tokens within
  // the expert tensor group per step, and the gathered bytes of each.
  double expert_tensor_exchanges = 0;
  double expert_tensor_message_bytes = 0;
  // Context parallelism: the K/V chunks a GPU sends round its ring per step, and their bytes.
  double context_sends = 0;
  double context_message_bytes = 0;
  double stage_message_bytes = 0;
  // Fine-tuning with adapters: the frozen base model's parameters and the bytes they take on this
  // GPU (`params` are then the adapters', the ones trained).
  double frozen_params = 0;
  double frozen_weight_bytes = 0;
  // The routed experts' share of `params`: they are replicated over the expert data-parallel
  // group only, so a strategy shards them over fewer GPUs than the dense ones.
  double expert_params = 0;

  [[nodiscard]] double matmul_flops() const;  // 2*M*N*K*count over GEMM-like ops
};

struct model_spec {
  std::string preset;                      // "" for explicit ops or totals
  std::map<std::string, double> params;    // numeric preset parameters
  std::map<std::string, bool> flags;       // boolean preset parameters
  std::vector<op> ops;                     // explicit ops (per step at the workload batch)
  std::optional<double> flops_per_sample;  // totals: training FLOP per sample
  std::optional<double> total_params;      // totals: parameters
  std::optional<double> bytes_per_sample;  // totals: memory traffic per sample
};

// The experts of each MoE layer (the model's "experts" count); 0 for a dense model.
[[nodiscard]] int expert_count(const model_spec& m);
// Experts each token is routed to (its top-k), 0 without experts.
[[nodiscard]] int expert_top_k(const model_spec& m);

struct data_spec {
  std::string source = "synthetic";  // synthetic | storage
  std::string pipeline = "none";     // jpeg_rrc_flip_normalize | tokens | none
  int image_width = 500;
  int image_height = 375;
  int image_out = 224;
  double bytes_per_sample_stored = 0;
  double bytes_per_sample_h2d = 0;
  double dataset_bytes = 0;
  std::optional<int> loader_workers_per_gpu;
  // python (torchvision/PIL workers), pillow-simd, torchvision-io, native (C++/DALI CPU),
  // dali-gpu: the table in model/src/loader_options.cpp.
  std::string loader = "python";
  // files: one file per sample, read at random; shards: tar shards read in sequence
  // (WebDataset), at the storage's sequential rate.
  std::string format = "files";
};

// Fine-tuning (docs/model.md, "Fine-tuning"): full trains every weight; lora freezes the model
// in its 16-bit precision and trains low-rank adapters (Hu et al. 2021) on the `targets`
// matrices of every layer; qlora also keeps the frozen linear weights in 4-bit NF4 with double
// quantization (Dettmers et al. 2023). The methods and target names are the table in
// model/src/finetune.cpp.
struct finetune_spec {
  std::string method = "full";
  int rank = 16;
  std::vector<std::string> targets;  // empty: every linear layer (the QLoRA paper's setting)
  [[nodiscard]] bool adapters() const { return method != "full"; }
};
[[nodiscard]] const std::vector<std::string>& finetune_methods();
[[nodiscard]] const std::vector<std::string>& finetune_targets();

struct reference_point {
  std::string hardware;  // catalog:NAME or a results file
  int gpus = 1;
  int batch_per_gpu = 0;
  double samples_per_s = 0;
  std::optional<std::string> precision;  // when it differs from the workload's (V100 has no tf32)
  std::optional<int> gradient_accumulation;  // when it differs from the workload's
  // `hardware` loaded, when the workload is (resolve_reference): predict() reads no file.
  std::shared_ptr<const hardware_profile> profile;
};

// How data-parallel replicas exchange gradients and parameters: a row each of the strategy table
// (model/src/parallelism.cpp), which also holds their names.
enum class parallel_strategy { ddp, zero1, zero2, fsdp, hsdp };
[[nodiscard]] std::string_view to_string(parallel_strategy s) noexcept;
[[nodiscard]] std::optional<parallel_strategy> strategy_from_string(std::string_view name);
// The strategies' names for a message: "\"ddp\", ... or \"hsdp\"".
[[nodiscard]] std::string strategy_choices();
template <typename Json>
void to_json(Json& j, parallel_strategy s) {
  j = std::string(to_string(s));
}

// How the expert-parallel all-to-all carries a token (Megatron-Core's moe_token_dispatcher_type,
// and the flex dispatcher's backend): a row each of the dispatcher table
// (model/src/parallelism.cpp), which also holds their names.
enum class expert_dispatch { alltoall, deepep, hybridep };
[[nodiscard]] std::string_view to_string(expert_dispatch d) noexcept;
[[nodiscard]] std::optional<expert_dispatch> dispatch_from_string(std::string_view name);
// The dispatchers' names for a message: "alltoall, deepep, hybridep".
[[nodiscard]] std::string dispatch_choices();
template <typename Json>
void to_json(Json& j, expert_dispatch d) {
  j = std::string(to_string(d));
}

struct workload {
  std::string name;
  std::string description;
  std::string file;
  model_spec model;
  std::string family;       // cnn | transformer | custom
  std::string sample_unit;  // image | sequence | sample
  std::string precision = "amp_bf16";
  int batch_per_gpu = 32;  // the micro-batch: samples per forward/backward pass on one GPU
  // Micro-batches per optimizer step: the optimizer and the gradient exchange run once for
  // this many forward/backward passes.
  int gradient_accumulation = 1;
  std::string optimizer = "adamw";
  // How the update is issued: fused (one multi-tensor kernel per chunk), foreach (one
  // multi-tensor kernel per operation and chunk) or per_tensor (one kernel per operation and
  // tensor: torch.optim before 2.0, hand-written loops).
  std::string optimizer_impl = "fused";
  // The gradients' precision: fp32, or "weights" (the weights' 16-bit precision: Megatron's
  // grad_reduce_in_fp32=False), which only a stack that keeps 16-bit weights allows.
  std::string gradient_precision = "fp32";
  // The parameters' precision: fp32 (the stack's layout), "weights": the model is kept in the
  // 16-bit precision with its gradients and optimizer state and no fp32 copy (a model loaded in
  // bf16 and trained so, as NeMo AutoModel does), or "master": the model and its gradients in
  // 16-bit with an fp32 master copy in the optimizer (apex amp O2, DeepSpeed).
  std::string parameter_precision = "fp32";
  data_spec data;
  std::optional<int> gpus;  // per node
  int nodes = 1;
  parallel_strategy strategy = parallel_strategy::ddp;  // the data-parallel exchange
  // Megatron-style model parallelism (transformer presets): each layer's matrices split over
  // `tensor` GPUs of a node, the layers over `pipeline` stages; data parallel over the rest.
  int tensor = 1;
  int pipeline = 1;
  bool sequence_parallel = false;  // the norms and dropouts split over the tensor group too
  // The tensor group's exchanges run pipelined with the GEMMs they feed (Megatron-Core's
  // tp_comm_overlap, Transformer Engine's userbuffers): docs/model.md, "Model parallelism".
  bool tensor_overlap = false;
  // Expert parallelism (a model with experts): each MoE layer's experts split over `expert` GPUs
  // of the data-parallel group, tokens exchanged by all-to-all.
  int expert = 1;
  // Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): each expert's width
  // split over this many GPUs of a node, which gather their routed tokens before the experts and
  // reduce-scatter the experts' outputs after.
  int expert_tensor = 1;
  expert_dispatch expert_dispatcher = expert_dispatch::alltoall;
  // The all-to-alls run under another micro-batch's compute (Megatron-Core's combined 1F1B
  // schedule, overlap_moe_expert_parallel_comm).
  bool expert_overlap = false;
  // Megatron's interleaved pipeline schedule: each GPU holds this many model chunks.
  int virtual_pipeline = 1;
  // Context parallelism (ring attention): each sequence split over `context` GPUs, which count
  // among the data-parallel ones for the gradient exchange.
  int context = 1;
  // The software stack that runs it (configs/model/constants.json "stacks"): pytorch (eager),
  // pytorch-compiled, megatron, mlperf. Its own fitted efficiencies apply.
  std::string stack = "pytorch";
  finetune_spec finetune;
  std::optional<reference_point> reference;
};

[[nodiscard]] const std::vector<std::string>& preset_names();

// A training precision: the GEMM dtype its matmuls run in, the bytes of an activation or gradient
// element, and whether it keeps fp32 master weights beside the low-precision copy.
struct training_precision {
  std::string_view name;
  std::string_view gemm_dtype;
  double activation_bytes;
  bool mixed;
  // The dtype of the GEMMs outside linear layers (op::linear false): fp8 training converts the
  // linear layers only (Transformer Engine's te.Linear, torchao's convert_to_float8_training,
  // whose torchtitan recipe also leaves the output projection out), attention runs in bf16.
  std::string_view other_gemm_dtype;
  // The linear layers run narrower than the rest (fp8, mxfp8, nvfp4): their inputs and weights
  // are cast.
  [[nodiscard]] constexpr bool casts_linear_layers() const {
    return gemm_dtype != other_gemm_dtype;
  }
  // Bytes per element of a linear layer's cast copy, its block scales included (fp8 1, mxfp8
  // 1 + 1/32, nvfp4 1/2 + 1/16). Every precision names a known GEMM dtype (a static_assert).
  [[nodiscard]] constexpr double cast_bytes() const {
    return find_gemm_dtype(gemm_dtype)->stored_bytes_per_element();
  }
};
// The precisions a workload may name (fp32, tf32, amp_fp16, amp_bf16, fp8, mxfp8, nvfp4): one
// table.
[[nodiscard]] std::span<const training_precision> training_precisions();
[[nodiscard]] const std::vector<std::string>& precision_names();

// An optimizer's update as memory traffic and kernels (docs/model.md, "The optimizer").
// fused_bytes: bytes per parameter of one fused pass over the fp32 state (apex/TE FusedAdam,
// torch fused=True); unfused_passes: element passes over fp32 tensors when every operation of the
// update is its own kernel (torch.optim's foreach and per-tensor loops); ops: those kernels.
struct optimizer_kind {
  std::string_view name;
  double fused_bytes;
  double unfused_passes;
  double ops;
  double state_bytes;  // fp32 state per parameter kept between steps (momentum; Adam's moments)
};
// Throws input_error for a name not in the table (parse_workload checks names on input).
[[nodiscard]] const optimizer_kind& optimizer_of(std::string_view name);
// Throws input_error for a name not in training_precisions() (callers check names on input).
[[nodiscard]] const training_precision& precision_of(std::string_view name);

// A name from configs/workloads/ or a workload file. Throws input_error naming the file, the
// JSON path and what was expected.
[[nodiscard]] workload load_workload(const std::string& name_or_file);
[[nodiscard]] workload parse_workload(const json& doc, const std::string& file);
[[nodiscard]] std::vector<std::string> workload_names();
// Loads the hardware a workload's reference point was measured on (load_workload and
// parse_workload do this; a reference_point built in code needs it before predict()). Throws
// input_error naming what cannot be loaded.
void resolve_reference(workload& w);
// configs/workloads/default.json: the workloads `gpubench run` sizes.
[[nodiscard]] std::vector<std::string> default_workloads();

// Bytes per activation element and per gradient element at a precision.
[[nodiscard]] double activation_bytes(const std::string& precision);
// Bytes per parameter of the trained gradients the workload keeps and exchanges (its
// gradient_precision or parameter_precision): 4, or the 16-bit weights' bytes.
[[nodiscard]] double gradient_bytes(const workload& w, const std::string& precision);
// The workload keeps its parameters, gradients and optimizer state in the 16-bit precision
// (parameter_precision "weights" under a mixed precision).
[[nodiscard]] bool sixteen_bit_parameters(const workload& w, const std::string& precision);
// The model is cast to 16-bit, its gradients with it, and the optimizer holds an fp32 master copy
// (parameter_precision "master" under a mixed precision: apex amp O2, DeepSpeed's fp16/bf16).
[[nodiscard]] bool master_copy_parameters(const workload& w, const std::string& precision);
// The GEMM dtype a precision runs its matmuls in (one of gpubench::gemm_dtypes).
[[nodiscard]] std::string gemm_dtype(const std::string& precision);

// The ops of one training step on one GPU at this batch.
[[nodiscard]] step_ops expand(const workload& w, int batch_per_gpu);

[[nodiscard]] json to_json(const workload& w);

}  // namespace gpubench::model
