// Fine-tuning with adapters (docs/model.md, "Fine-tuning"): LoRA (Hu et al. 2021) freezes the
// model and trains a low-rank pair A [in x r], B [r x out] beside each targeted matrix; QLoRA
// (Dettmers et al. 2023) also stores the frozen linear weights in 4-bit NF4 and dequantizes each
// one to 16-bit when a GEMM needs it.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "presets.hpp"

namespace gpubench::model {

namespace {

struct method_row {
  const char* name;
  // Bytes per frozen linear weight (0: trained, no adapters) and whether each GEMM that uses one
  // dequantizes it first.
  double frozen_linear_bytes;  // 0: the activation precision's width
  bool dequantizes;
};
// NF4 with double quantization: 4 bits plus 0.127 bits of block constants per parameter (the
// QLoRA paper, section 3).
constexpr double nf4_bytes = (4.0 + 0.127) / 8.0;
constexpr method_row method_table[] = {
    {"full", 0, false},
    {"lora", 0, false},
    {"qlora", nf4_bytes, true},
};

// The matrices of a transformer layer an adapter can sit beside, with their input and output
// widths, and whether the tensor split divides the output (column-parallel) or the input.
enum class width { hidden, attention, kv, ffn };
struct target_row {
  const char* name;
  width in;
  width out;
  bool column_parallel;
  bool gated_only;  // the gated FFN's second input projection
};
constexpr target_row target_table[] = {
    {"q", width::hidden, width::attention, true, false},
    {"k", width::hidden, width::kv, true, false},
    {"v", width::hidden, width::kv, true, false},
    {"o", width::attention, width::hidden, false, false},
    {"gate", width::hidden, width::ffn, true, true},
    {"up", width::hidden, width::ffn, true, false},
    {"down", width::ffn, width::hidden, false, false},
};

// The adapter's sum, out += scale * B(A x): forward reads both outputs and writes one (3 passes
// over [tokens x out]); backward scales the gradient into the adapter branch (2).
constexpr double adapter_add_passes = 5;
// Kernels per adapter per layer: two GEMMs and the scale-add forward, four GEMMs and the scale
// backward, and the adapter input's dropout (peft's lora_dropout) in each direction.
constexpr double kernels_per_adapter = 9;
// QLoRA dequantizes each frozen weight before the forward GEMM and again for the backward's
// input gradient: one kernel each, reading 4-bit and writing 16-bit.
constexpr double dequantizations_per_weight = 2;

const method_row& method_of(const std::string& name) {
  for (const method_row& m : method_table) {
    if (name == m.name) return m;
  }
  throw std::logic_error("a fine-tuning method without a row in the method table");
}

}  // namespace

namespace {

// The `name` of every row of a table, in its order.
template <typename Row, std::size_t N>
std::vector<std::string> names_of(const Row (&table)[N]) {
  std::vector<std::string> out;
  for (const Row& row : table) out.emplace_back(row.name);
  return out;
}

}  // namespace

const std::vector<std::string>& finetune_methods() {
  static const std::vector<std::string> names = names_of(method_table);
  return names;
}

const std::vector<std::string>& finetune_targets() {
  static const std::vector<std::string> names = names_of(target_table);
  return names;
}

namespace detail {

void apply_finetune(step_ops& step, const finetune_spec& tune,
                    const std::map<std::string, double>& params,
                    const std::map<std::string, bool>& flags, int batch, double activation_bytes,
                    const model_split& split) {
  if (!tune.adapters()) return;
  const method_row& method = method_of(tune.method);
  using i64 = std::int64_t;
  const auto h = static_cast<i64>(params.at("hidden"));
  const auto heads = static_cast<i64>(params.at("heads"));
  const i64 d = params.at("head_dim") > 0 ? static_cast<i64>(params.at("head_dim")) : h / heads;
  const i64 kv = key_value_heads(params) * d;
  const i64 ffn = params.at("ffn") > 0 ? static_cast<i64>(params.at("ffn")) : 4 * h;
  const bool gated = flags.at("gated_ffn");
  const bool recompute = flags.at("activation_checkpointing");
  const i64 tokens = static_cast<i64>(batch) * static_cast<i64>(params.at("seq_len"));
  const i64 T = split.tensor;
  const double layers =
      split.stage_layers > 0 ? split.stage_layers : params.at("layers") / split.pipeline;
  const i64 r = tune.rank;
  const auto size = [&](width w) {
    switch (w) {
      case width::hidden:
        return h;
      case width::attention:
        return heads * d;
      case width::kv:
        return kv;
      case width::ffn:
        break;
    }
    return ffn;
  };

  // The base model's weight gradients go: nothing updates a frozen weight.
  std::erase_if(step.ops, [](const op& o) { return o.weight_gradient; });
  double frozen_linear = 0;
  double adapters = 0;
  double adapter_count = 0;
  double add_bytes = 0;
  double matrices = 0;
  for (const target_row& t : target_table) {
    if (t.gated_only && !gated) continue;
    i64 in = size(t.in);
    i64 out = size(t.out);
    (t.column_parallel ? out : in) /= T;  // this GPU's part of a tensor-split matrix
    frozen_linear += layers * static_cast<double>(in * out);
    matrices += 1;
    const bool targeted =
        tune.targets.empty() ||
        std::find(tune.targets.begin(), tune.targets.end(), t.name) != tune.targets.end();
    if (!targeted) continue;
    // x A [tokens x r], then (x A) B [tokens x out]: both trained, in the 16-bit precision.
    const std::size_t from = step.ops.size();
    add_gemm_with_grads(step, op_kind::matmul, tokens, r, in, layers, recompute);
    add_gemm_with_grads(step, op_kind::matmul, tokens, out, r, layers, recompute);
    for (std::size_t i = from; i < step.ops.size(); ++i) step.ops[i].linear = false;
    adapters += layers * static_cast<double>(r * (in + out));
    adapter_count += layers;
    add_bytes += adapter_add_passes * layers * static_cast<double>(tokens * out) * activation_bytes;
  }
  double memory_bytes = add_bytes;
  step.kernels += kernels_per_adapter * adapter_count;
  if (method.dequantizes) {
    const double passes = dequantizations_per_weight + (recompute ? 1.0 : 0.0);
    memory_bytes += passes * frozen_linear * (method.frozen_linear_bytes + activation_bytes);
    step.kernels += passes * matrices * layers;
  }
  if (memory_bytes > 0) step.ops.push_back(op{op_kind::memory, 0, 0, 0, 1, memory_bytes, false});
  // What stays frozen: every parameter the step had, the linear weights in the method's format
  // (16-bit for LoRA, NF4 for QLoRA), the embeddings, norms and head in 16-bit.
  step.frozen_params = step.params;
  const double linear_bytes =
      method.frozen_linear_bytes > 0 ? method.frozen_linear_bytes : activation_bytes;
  const double linear = std::min(frozen_linear, step.params);
  step.frozen_weight_bytes = linear * linear_bytes + (step.params - linear) * activation_bytes;
  step.params = adapters;
  step.expert_params = 0;
  step.param_tensors = 2 * adapter_count;
}

}  // namespace detail

}  // namespace gpubench::model
