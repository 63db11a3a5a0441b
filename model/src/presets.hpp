// Model presets: each expands into the operations of one training step (forward + backward) per
// GPU. Internal to the model library.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/model/workload.hpp"

namespace gpubench::model::detail {

struct preset_info {
  std::string family;                     // cnn | transformer
  std::string sample_unit;                // image | sequence
  std::map<std::string, double> numbers;  // parameters and their defaults
  std::map<std::string, bool> flags;
  // The calibration family (configs/calibration/models.json) whose held-out errors bound this
  // preset's predictions (the error band); "" where no published run of its kind is calibrated.
  std::string calibration_family;
};

// nullptr for an unknown name.
[[nodiscard]] const preset_info* find_preset(const std::string& name);
// A transformer's key/value heads: `kv_heads`, or as many as `heads` when it is 0 (no
// grouped-query attention).
[[nodiscard]] std::int64_t key_value_heads(const std::map<std::string, double>& params);
// The share of a transformer's layers that attend within `attention_window` (0 without one).
[[nodiscard]] double windowed_share(const std::map<std::string, double>& params);
// The keys a query of a causal layer meets on average within a window of `window` tokens, over
// `tokens` queries: min(i + 1, W) of them, W - W^2/(2 tokens) for W < tokens; `tokens` / 2, the
// whole causal triangle, otherwise.
[[nodiscard]] double windowed_mean_keys(double window, double tokens);

// Every preset's name, from the table (alphabetical).
[[nodiscard]] const std::vector<std::string>& preset_names();

// Megatron-style model parallelism: the tensor group splits each layer's matrices and heads, the
// pipeline the layers; micro_batches is how many a pipeline has in flight at most (1F1B).
struct model_split {
  int tensor = 1;
  int pipeline = 1;
  bool sequence_parallel = false;
  int micro_batches = 1;
  // The layers of the modelled stage (0: layers / pipeline, an even split), and whether it is the
  // last stage, which runs the vocabulary projection and the loss (a middle stage does not).
  double stage_layers = 0;
  bool last_stage = true;
  int expert = 1;         // expert parallelism: the GPUs each MoE layer's experts are split over
  int expert_tensor = 1;  // expert tensor parallelism: the GPUs each expert's width is split over
  int context = 1;        // context parallelism: the GPUs each sequence is split over
  // Megatron-Core's combined 1F1B (the expert all-to-all overlap) runs one more micro-batch's
  // forward beside another's backward: that many more micro-batches' activations are alive.
  int extra_in_flight = 0;
};

// A pipeline that does not divide the layers, split as Megatron-LM does with
// account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split: the embedding
// and the loss each count as a layer, the layers + 2 units spread as evenly as they go, the spare
// ones to the middle stages first, so the first and last stages take fewer layers.
struct uneven_stages {
  int first = 0;   // layers beside the embedding
  int middle = 0;  // layers of the fullest middle stage (0: two stages, none in the middle)
  int last = 0;    // layers beside the vocabulary projection and the loss
};
// nullopt where every first and last stage cannot hold a layer beside its end ((layers + 2) /
// pipeline < 2).
[[nodiscard]] std::optional<uneven_stages> split_unevenly(std::int64_t layers, int pipeline);

// A GEMM C[m,n] = A[m,k] B[k,n] and its two gradients (dgrad, and wgrad, marked a weight's
// gradient), `count` times a step; the forward twice when it is recomputed. `on_chip`: the
// operands (operand_a | operand_b | operand_c) that never travel to HBM.
void add_gemm_with_grads(step_ops& step, op_kind kind, std::int64_t m, std::int64_t n,
                         std::int64_t k, double count, bool recompute_forward,
                         std::uint8_t on_chip = 0, std::int64_t batched = 1);

// LoRA or QLoRA on a transformer preset's step (finetune.cpp): the base model frozen, its weight
// gradients dropped, the adapters' GEMMs, memory passes and kernels added, QLoRA's dequantization.
void apply_finetune(step_ops& step, const finetune_spec& tune,
                    const std::map<std::string, double>& params,
                    const std::map<std::string, bool>& flags, int batch, double activation_bytes,
                    const model_split& split);

// fp8 training's casts (fp8_casts.cpp): the memory-bound passes and kernels that convert each
// linear layer's input, weight and output gradient, added where `precision` runs its linear
// layers narrower than the rest.
void apply_fp8_casts(step_ops& step, const training_precision& precision);

// The training-step ops of a preset at a batch, for one GPU of the split (the last pipeline
// stage, which also runs the vocabulary projection). `params`/`flags` hold every parameter
// (defaults filled in). activation_bytes: 4 for fp32/tf32, 2 for mixed precision.
[[nodiscard]] step_ops expand_preset(const std::string& name,
                                     const std::map<std::string, double>& params,
                                     const std::map<std::string, bool>& flags, int batch,
                                     double activation_bytes, const model_split& split = {});

}  // namespace gpubench::model::detail
