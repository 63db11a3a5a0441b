#include "presets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gpubench::model::detail {
namespace {

using i64 = std::int64_t;

// Memory traffic of the kernels between the GEMMs, in passes over a tensor (one pass = every
// element read or written once). docs/model.md derives each count.
// BatchNorm + ReLU after a convolution: forward 5 (statistics read, normalise read+write, ReLU
// read+write), backward 8 (ReLU read grad+output, write; BN reduction reads 2, apply reads 2 writes
// 1).
constexpr double conv_bn_relu_passes = 13;
// A residual add: forward 3 (two reads, one write), backward 1 (the gradient is passed on).
constexpr double residual_passes = 4;
// Per transformer layer over the [tokens x hidden] activations: 2 LayerNorms (5 each),
// 2 residual adds (4 each), 2 dropouts (4 each), head split/merge transposes (2 x 4), embedding
// gradients aside: 34 passes; 26 without dropout.
constexpr double transformer_token_passes = 34;
// A dropout: forward reads and writes (its 1-byte mask aside), backward reads and writes.
constexpr double dropout_forward_passes = 2;
constexpr double dropout_passes = 4;
constexpr double dropouts_per_layer = 2;
// The head split and merge transposes: 2 x 4 of the token passes.
constexpr double head_transpose_passes = 8;
// The FFN activation (GELU) over [tokens x ffn]: forward 2, backward 3.
constexpr double ffn_activation_passes = 5;
// Softmax + dropout over the [heads x seq x keys] scores when attention is not fused (no
// FlashAttention): forward 4, backward 5; softmax alone (no dropout) forward 2, backward 3.
constexpr double attention_score_passes = 9;
// Selective recomputation runs the forward's share again (softmax 2, dropout 2).
constexpr double attention_score_forward_passes = 4;
// Transformer-XL's relative attention adds, over the same scores: the positional score tensor
// (write 1), its relative shift (zero-pad concatenation 2, strided copy 2), the sum of the two
// score tensors (3), the scaling (2) and the causal mask fill (2): 12 forward passes, about as many
// backward, and the softmax runs in fp32 under AMP. docs/model.md counts them; 9 + 24 = 33.
constexpr double relative_attention_score_passes = 33;
// Cross-entropy over the logits (fp32): forward 2, backward 2.
constexpr double logit_passes = 4;
// A fused cross-entropy (flash-attn's, llm-foundry's default) in the logits' own precision: the
// forward reads them once, the backward reads them again and writes their gradient in place.
constexpr double fused_logit_passes = 3;
// A mixture-of-experts layer moves each routed token's activations to its experts and back:
// permute and unpermute (with the top-k weighting) read and write them, forward and backward.
constexpr double moe_token_passes = 8;
// Its kernels beyond a dense layer's: the router's softmax and top-k, the permutation and its
// inverse, the routing bookkeeping, forward and backward.
constexpr double kernels_per_moe_layer = 16;
// Tokens a GPU receives from others (expert or expert tensor parallelism) for several local
// experts arrive ordered by sender: Megatron-Core sorts them by expert and back
// (sort_chunks_by_idxs), forward and backward, each a read and a write of them, in 4 kernels.
constexpr double expert_sort_passes = 8;
constexpr double expert_sort_kernels = 4;
// Megatron-Core's recompute_modules: "layernorm" reruns both norms' forward (2 passes each) in the
// backward pass instead of keeping their outputs; "moe_act" reruns the routed experts' activation
// (forward: 2 passes, 3 when gated) instead of keeping its output.
constexpr double norm_forward_passes = 2;
constexpr double norms_per_layer = 2;
constexpr double ffn_activation_forward_passes = 2;
// Kernel launches per transformer layer per step (forward ~14, backward ~26), and per
// convolution with its BN and ReLU (forward 3, backward 4).
constexpr double kernels_per_transformer_layer = 40;
// Relative attention's extra kernels per layer: the memory concatenation, the positional
// projection and its score GEMM, two bias adds, the shift (pad, concatenate, copy), the sum, the
// mask fill and their backward passes.
constexpr double kernels_per_relative_attention = 30;
constexpr double kernels_per_conv = 7;
// The attention core's forward: score GEMM, scale and mask, softmax, dropout, product with V.
constexpr double kernels_per_attention_core = 5;

// The operands of C[m,n] = A[m,k] B[k,n] on chip, as operand_a | operand_b | operand_c.
std::uint8_t operands_where(std::uint8_t on_chip, std::uint8_t a_to, std::uint8_t b_to,
                            std::uint8_t c_to) {
  return ((on_chip & operand_a) != 0 ? a_to : 0) | ((on_chip & operand_b) != 0 ? b_to : 0) |
         ((on_chip & operand_c) != 0 ? c_to : 0);
}

}  // namespace

void add_gemm_with_grads(step_ops& step, op_kind kind, i64 m, i64 n, i64 k, double count,
                         bool recompute_forward, std::uint8_t on_chip, i64 batched) {
  // Forward C[m,n] = A[m,k] B[k,n]; backward dA[m,k] = dC[m,n] B^T and dB[k,n] = A^T dC. An
  // operand the forward keeps on chip stays there, as does its gradient, in the backward GEMMs:
  // dgrad reads dC and B^T and writes dA; wgrad reads A^T and dC and writes dB.
  step.ops.push_back(
      op{kind, m, n, k, count * (recompute_forward ? 2.0 : 1.0), 0, false, on_chip, batched});
  const op dgrad{kind,   m, k,    n,
                 count,  0, true, operands_where(on_chip, operand_c, operand_b, operand_a),
                 batched};
  op wgrad{kind,   k, n,    m,
           count,  0, true, operands_where(on_chip, operand_a, operand_c, operand_b),
           batched};
  wgrad.weight_gradient = true;
  step.ops.push_back(dgrad);
  step.ops.push_back(wgrad);
}

namespace {

// The ops added since `from` are not a linear layer's (attention's products, the vocabulary
// projection): an fp8 recipe leaves them in the wider dtype.
void outside_linear(step_ops& step, std::size_t from) {
  for (std::size_t i = from; i < step.ops.size(); ++i) step.ops[i].linear = false;
}

// The ops added since `from` multiply two activations (attention's products): their second
// gradient is an activation's, not a weight's, and a frozen model still needs it.
void between_activations(step_ops& step, std::size_t from) {
  outside_linear(step, from);
  for (std::size_t i = from; i < step.ops.size(); ++i) step.ops[i].weight_gradient = false;
}

void add_memory(step_ops& step, double bytes) {
  if (bytes > 0) step.ops.push_back(op{op_kind::memory, 0, 0, 0, 1, bytes, false});
}

step_ops resnet50(const std::map<std::string, double>& p, const std::map<std::string, bool>& f,
                  int batch, double act_bytes) {
  step_ops step;
  const i64 b = batch;
  i64 res = static_cast<i64>(p.at("image_size"));
  double params = 0;
  double largest_block = 0;
  double elements_bn = 0;    // elements of conv outputs (each followed by BN + ReLU)
  double elements_relu = 0;  // of those, the ones whose own ReLU follows (not a residual add)
  double elements_add = 0;   // elements of residual adds
  double convs = 0;
  auto conv = [&](i64 in_c, i64 out_c, i64 kernel, i64 stride, i64 in_res) {
    const i64 out_res = (in_res + stride - 1) / stride;
    add_gemm_with_grads(step, op_kind::conv, b * out_res * out_res, out_c, in_c * kernel * kernel,
                        1, false);
    // The forward, the data gradient and the weight gradient add_gemm_with_grads appended.
    op* const added = &step.ops[step.ops.size() - 3];
    const double unfold =
        static_cast<double>(kernel * kernel) / static_cast<double>(stride * stride);
    const std::uint8_t im2col[] = {operand_a, operand_c, operand_a};
    for (int i = 0; i < 3; ++i) {
      added[i].winograd = kernel == 3 && stride == 1;
      if (unfold > 1) {
        added[i].unfolded = im2col[i];
        added[i].unfold = unfold;
      }
    }
    params += static_cast<double>(out_c * in_c * kernel * kernel + 2 * out_c);
    elements_bn += static_cast<double>(b * out_res * out_res * out_c);
    convs += 1;
    return out_res;
  };
  res = conv(3, 64, 7, 2, res);
  elements_relu += static_cast<double>(b * res * res * 64);
  // Max pool 3x3 stride 2: forward reads the input and writes a quarter; backward the reverse.
  const double pool_in = static_cast<double>(b * res * res * 64);
  res = (res + 1) / 2;
  add_memory(step, 2.5 * pool_in * act_bytes);
  i64 in_c = 64;
  const int blocks[] = {3, 4, 6, 3};
  const i64 widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < blocks[stage]; ++block) {
      const i64 width = widths[stage];
      const i64 stride = (stage > 0 && block == 0) ? 2 : 1;  // v1.5: stride on the 3x3
      const i64 in_res = res;
      const double before = params;
      i64 r = conv(in_c, width, 1, 1, in_res);
      elements_relu += static_cast<double>(b * r * r * width);
      r = conv(width, width, 3, stride, r);
      elements_relu += static_cast<double>(b * r * r * width);
      r = conv(width, width * 4, 1, 1, r);
      if (block == 0) (void)conv(in_c, width * 4, 1, stride, in_res);  // projection shortcut
      elements_add += static_cast<double>(b * r * r * width * 4);
      largest_block = std::max(largest_block, params - before);
      in_c = width * 4;
      res = r;
    }
  }
  // Global average pool, then the classifier.
  add_memory(step, 2.0 * static_cast<double>(b * res * res * in_c) * act_bytes);
  add_gemm_with_grads(step, op_kind::matmul, b, 1000, in_c, 1, false);
  params += static_cast<double>(in_c * 1000 + 1000);
  add_memory(step,
             (conv_bn_relu_passes * elements_bn + residual_passes * elements_add) * act_bytes);
  step.params = params;
  step.kernels = kernels_per_conv * convs + 2.0 * 16 + 10;
  // Half-precision convolutions run on tensor cores in NHWC; a model left in PyTorch's default
  // NCHW layout pays transposes around them. FP32/TF32 kernels exist for both layouts.
  if (!f.at("channels_last") && act_bytes < 4) step.nchw_conv_bytes = elements_bn * act_bytes;
  step.param_tensors = 3 * convs + 2;  // each conv's weight with its BN scale and shift; the fc
  step.param_groups = 16 + 2;          // the bottleneck blocks, the stem, the classifier
  step.largest_group_params = largest_block;
  // Kept for the backward pass: each convolution's output (BatchNorm's input), the in-place ReLU
  // outputs (the next convolution's input: the first two convolutions of a block and the stem),
  // each residual sum after its ReLU, the input image, the max pool's input and its int64 indices.
  step.saved_activation_bytes =
      (elements_bn + elements_relu + elements_add + pool_in +
       3.0 * static_cast<double>(b) * p.at("image_size") * p.at("image_size")) *
          act_bytes +
      pool_in / 4 * 8;
  return step;
}

// A transformer's dimensions and choices, as every part of its step reads them.
struct transformer_shape {
  const std::map<std::string, double>& p;
  const std::map<std::string, bool>& f;
  double act_bytes;
  model_split split;
  // s: the sequence positions this GPU runs (seq_len / C under context parallelism, which
  // splits each sequence over C GPUs); seq: the whole sequence, whose keys every query meets.
  i64 b, layers, h, heads, ffn, s, seq, C, mem, keys, d;
  // The attention's width, heads x head width: the hidden size unless head_dim sets another
  // head width (Qwen3, gpt-oss).
  i64 attn;
  // Grouped-query attention (Llama 2 70B, Llama 3): K and V have kv_heads heads of width d.
  i64 kv_heads;
  double kv_share;
  double q_share;  // the attention's width over the hidden size (1 unless head_dim is set)
  i64 tokens;
  bool flash, recompute, gated, relative, dropout, fused_loss, tied;
  // Korthikanti et al.'s selective recomputation: the attention core (scores, softmax, dropout,
  // their product with V) is recomputed in the backward pass instead of kept. FlashAttention
  // already does that, and full checkpointing recomputes everything.
  bool selective, recompute_core;
  // Megatron-Core's recompute_modules "layernorm" and "moe_act" (no effect under full
  // checkpointing, which recomputes everything).
  bool recompute_norms, recompute_moe_act;
  // Megatron's split (Shoeybi et al. 2019): QKV and the FFN's input projection by columns, the
  // output projections by rows, the heads over the tensor group; the layers over the pipeline
  // stages. One GPU of the last stage, which also runs the vocabulary projection.
  i64 T;
  double P, tp;
  i64 heads_batch;  // the tensor split divides the heads (checked on input)
  double bh, L, token_elements;
  // Of this GPU's L layers, how many keep their saved activations in host memory between the
  // forward and the backward pass (Megatron-Core's cpu_offloading_num_layers).
  double offloaded;
  // Mixture of experts (0 experts: a dense FFN): each token goes to top_k of `experts` FFNs of
  // width moe_ffn, and to `shared` more every token uses. As Megatron-Core runs them (sequence
  // parallelism with a tensor split), each GPU of a tensor group routes its 1/T of the tokens,
  // expert parallelism splits the experts over E GPUs of the tensor x data-parallel ones, and
  // expert tensor parallelism K (1: each expert whole) splits each expert's width over K GPUs,
  // which gather their routed tokens first, so each runs K x its own through 1/K of the width;
  // the busiest GPU computes `imbalance` x the mean of the routed tokens. The shared experts
  // split like a dense FFN.
  i64 experts, top_k, moe_ffn, shared, E, K;
  double imbalance, routed_tokens;  // routed: this GPU's, top_k per token, under imbalance
  [[nodiscard]] bool moe() const { return experts > 0; }
  // The rows this GPU's experts run (its routed tokens and its expert tensor group's) and the
  // width of its slice of each.
  [[nodiscard]] double expert_rows() const { return routed_tokens * static_cast<double>(K); }
  [[nodiscard]] i64 expert_width() const { return moe_ffn / K; }
  [[nodiscard]] i64 local_experts() const { return std::max<i64>(1, experts / E); }
  // Whether the received rows are sorted by expert (expert_sort_passes).
  [[nodiscard]] bool sorts_experts() const { return moe() && E * K > 1 && local_experts() > 1; }
  // The routed experts' [tokens x width] elements on this GPU.
  [[nodiscard]] double routed_ffn_elements() const {
    return moe() ? expert_rows() * static_cast<double>(expert_width()) : 0.0;
  }
  // The FFN's [tokens x width] elements on this GPU, over which its activation and its saved
  // tensors run.
  [[nodiscard]] double ffn_elements() const {
    return moe() ? routed_ffn_elements() + static_cast<double>(tokens * shared * moe_ffn) / tp
                 : static_cast<double>(tokens * ffn) / tp;
  }
  transformer_shape(const std::map<std::string, double>& params,
                    const std::map<std::string, bool>& flags, int batch, double bytes,
                    const model_split& how)
      : p(params), f(flags), act_bytes(bytes), split(how) {
    b = batch;
    layers = static_cast<i64>(p.at("layers"));
    h = static_cast<i64>(p.at("hidden"));
    heads = static_cast<i64>(p.at("heads"));
    ffn = static_cast<i64>(p.at("ffn"));
    seq = static_cast<i64>(p.at("seq_len"));
    C = split.context;
    s = seq / C;
    mem = static_cast<i64>(p.at("memory_len"));
    keys = seq + mem;
    d = p.at("head_dim") > 0 ? static_cast<i64>(p.at("head_dim")) : h / heads;
    attn = heads * d;
    kv_heads = key_value_heads(p);
    kv_share = static_cast<double>(kv_heads) / static_cast<double>(heads);
    q_share = static_cast<double>(attn) / static_cast<double>(h);
    tokens = b * s;
    flash = f.at("flash_attention");
    recompute = f.at("activation_checkpointing");
    gated = f.at("gated_ffn");
    relative = f.at("relative_position");
    dropout = f.at("dropout");
    fused_loss = f.at("fused_cross_entropy");
    tied = f.at("tied_embeddings");
    selective = f.at("selective_checkpointing") && !recompute && !flash;
    recompute_core = recompute || selective;
    recompute_norms = f.at("recompute_norms") && !recompute;
    recompute_moe_act = f.at("recompute_moe_activation") && !recompute;
    T = split.tensor;
    P = split.pipeline;
    tp = static_cast<double>(T);
    heads_batch = b * heads / T;
    bh = static_cast<double>(heads_batch);
    L = split.stage_layers > 0 ? split.stage_layers : static_cast<double>(layers) / P;
    offloaded = std::min(p.at("activation_offload_layers"), L);
    token_elements = static_cast<double>(tokens * h);
    experts = static_cast<i64>(p.at("moe_experts"));
    top_k = static_cast<i64>(p.at("moe_top_k"));
    moe_ffn = static_cast<i64>(p.at("moe_ffn"));
    shared = static_cast<i64>(p.at("moe_shared"));
    imbalance = p.at("moe_imbalance");
    E = split.expert;
    K = split.expert_tensor;
    routed_tokens = static_cast<double>(tokens * top_k) * imbalance / tp;
  }
};

// Each layer's GEMMs: QKV, the attention scores and context, the output projection, the FFN.
void add_layer_gemms(step_ops& step, const transformer_shape& t) {
  const i64 h = t.h, d = t.d, s = t.s, keys = t.keys, T = t.T;
  const double L = t.L;
  add_gemm_with_grads(step, op_kind::matmul, t.tokens, (t.attn + 2 * t.kv_heads * d) / T, h, L,
                      t.recompute);
  // Scores S[s,keys] = Q K^T and context O[s,d] = P V, P = softmax(S). FlashAttention (Dao et
  // al. 2022) keeps S and P, and in the backward pass dS and dP, in on-chip tiles, and its
  // backward pass recomputes S from Q and K.
  // With a causal mask it skips the tiles above the diagonal: query i meets the memory and
  // i + 1 keys, on average (keys - s/2) of them; in a layer that attends within a window of W
  // tokens, min(i + 1, W) of them, on average W - W^2/(2s) where W < s. Unfused attention
  // computes every score and masks them.
  const std::uint8_t scores_on_chip = t.flash ? operand_c : 0;
  const std::uint8_t probabilities_on_chip = t.flash ? operand_a : 0;
  const auto seq = static_cast<double>(t.seq);
  const double full_keys = static_cast<double>(keys) - seq / 2;
  const double windowed = windowed_share(t.p);
  const double windowed_keys = windowed_mean_keys(t.p.at("attention_window"), seq);
  const double computed_scores =
      t.flash && t.f.at("causal")
          ? ((1 - windowed) * full_keys + windowed * windowed_keys) / static_cast<double>(keys)
          : 1.0;
  const double attention_count = L * t.bh * computed_scores;
  const std::size_t attention = step.ops.size();
  add_gemm_with_grads(step, op_kind::matmul, s, keys, d, attention_count, t.recompute_core,
                      scores_on_chip, t.heads_batch);
  if (t.flash) {
    step.ops.push_back(
        op{op_kind::matmul, s, keys, d, attention_count, 0, true, scores_on_chip, t.heads_batch});
  }
  between_activations(step, attention);
  if (t.relative) {
    // Transformer-XL: positional scores (a second score GEMM) and the positional projection.
    const std::size_t scores = step.ops.size();
    add_gemm_with_grads(step, op_kind::matmul, s, keys, d, attention_count, t.recompute_core,
                        scores_on_chip, t.heads_batch);
    between_activations(step, scores);
    add_gemm_with_grads(step, op_kind::matmul, keys, h / T, h, L, t.recompute);
  }
  const std::size_t context = step.ops.size();
  add_gemm_with_grads(step, op_kind::matmul, s, d, keys, attention_count, t.recompute_core,
                      probabilities_on_chip, t.heads_batch);
  between_activations(step, context);
  add_gemm_with_grads(step, op_kind::matmul, t.tokens, h, t.attn / T, L, t.recompute);
  if (!t.moe()) {
    add_gemm_with_grads(step, op_kind::matmul, t.tokens, (t.gated ? 2 * t.ffn : t.ffn) / T, h, L,
                        t.recompute);
    add_gemm_with_grads(step, op_kind::matmul, t.tokens, h, t.ffn / T, L, t.recompute);
    return;
  }
  // The router scores every token against every expert (kept in the wider dtype).
  const std::size_t router = step.ops.size();
  add_gemm_with_grads(step, op_kind::matmul, t.tokens / T, t.experts, h, L, t.recompute);
  outside_linear(step, router);
  if (t.shared > 0) {
    const i64 split_width = t.shared * t.moe_ffn / T;
    add_gemm_with_grads(step, op_kind::matmul, t.tokens, t.gated ? 2 * split_width : split_width, h,
                        L, t.recompute);
    add_gemm_with_grads(step, op_kind::matmul, t.tokens, h, split_width, L, t.recompute);
  }
  const i64 width = t.expert_width();
  const i64 in_width = t.gated ? 2 * width : width;
  // The routed experts as one grouped GEMM per projection: this GPU's experts / E of them, each
  // over its share of the routed tokens of the E GPUs that send it theirs (and of its expert
  // tensor group's, through its slice of the width).
  const i64 local = t.local_experts();
  const double per_expert = t.expert_rows() / static_cast<double>(local);
  const i64 m = std::max<i64>(1, static_cast<i64>(std::ceil(per_expert)));
  const double count = L * static_cast<double>(local) * per_expert / static_cast<double>(m);
  add_gemm_with_grads(step, op_kind::matmul, m, in_width, h, count, t.recompute, 0, local);
  add_gemm_with_grads(step, op_kind::matmul, m, h, width, count, t.recompute, 0, local);
}

// The layers' memory-bound traffic: norms, residual adds, dropouts, head transposes, the FFN's
// activation and, without FlashAttention, the passes over the attention scores.
double layer_memory_bytes(const transformer_shape& t) {
  // The head split and merge transposes run on the split heads; the norms, residual adds and
  // dropouts on the whole activations, unless sequence parallelism splits them too.
  const double whole_passes = transformer_token_passes - head_transpose_passes -
                              (t.dropout ? 0.0 : dropouts_per_layer * dropout_passes);
  const double token_passes =
      whole_passes / (t.split.sequence_parallel ? t.tp : 1.0) + head_transpose_passes / t.tp;
  double memory_bytes =
      t.L *
      (token_passes * t.token_elements +
       ffn_activation_passes * (t.gated ? 1.5 : 1.0) * t.ffn_elements() +
       (t.moe() ? moe_token_passes * t.routed_tokens * static_cast<double>(t.h) : 0.0) +
       (t.sorts_experts() ? expert_sort_passes * t.expert_rows() * static_cast<double>(t.h)
                          : 0.0)) *
      t.act_bytes;
  if (!t.flash) {
    // Without dropout the scores skip its forward and backward passes, and its forward rerun.
    const double passes =
        (t.relative ? relative_attention_score_passes : attention_score_passes) +
        (t.selective ? attention_score_forward_passes : 0.0) -
        (t.dropout ? 0.0 : dropout_passes + (t.selective ? dropout_forward_passes : 0.0));
    memory_bytes += t.L * passes * t.bh * static_cast<double>(t.s * t.keys) * t.act_bytes;
  }
  if (t.recompute) memory_bytes *= 1.3;  // the recomputed forward's elementwise kernels
  if (t.recompute_norms) {
    memory_bytes += t.L * norms_per_layer * norm_forward_passes * t.token_elements /
                    (t.split.sequence_parallel ? t.tp : 1.0) * t.act_bytes;
  }
  if (t.recompute_moe_act) {
    memory_bytes += t.L * ffn_activation_forward_passes * (t.gated ? 1.5 : 1.0) *
                    t.routed_ffn_elements() * t.act_bytes;
  }
  return memory_bytes;
}

// One layer's parameters on one GPU of the tensor group: QKV (K and V at the key-value heads),
// the output projection, the FFN (three matrices when gated) or the experts, two norms.
double layer_params(const transformer_shape& t) {
  const double attention =
      static_cast<double>(2 * t.h * t.attn + 2 * t.h * t.kv_heads * t.d + 4 * t.h) / t.tp;
  const double matrices = t.gated ? 3 : 2;
  if (!t.moe()) return attention + matrices * static_cast<double>(t.h * t.ffn) / t.tp;
  // This GPU's experts (experts / E of them, 1/K of each), the shared ones (split) and the router.
  const double local = static_cast<double>(t.local_experts());
  return attention + static_cast<double>(t.h * t.experts) +
         matrices * static_cast<double>(t.h) *
             (local * static_cast<double>(t.expert_width()) +
              static_cast<double>(t.moe_ffn * t.shared) / t.tp);
}

// The routed experts' parameters this GPU holds for its layers (all of layer_params' experts).
double routed_expert_params(const transformer_shape& t) {
  if (!t.moe()) return 0;
  const double local = static_cast<double>(t.local_experts());
  return static_cast<double>(t.L) * (t.gated ? 3 : 2) *
         static_cast<double>(t.h * t.expert_width()) * local;
}

// Inputs and outputs: embedding lookup (3 passes of the token activations), the vocabulary
// projection for the tokens that are predicted (split over the tensor group), the loss over its
// logits; or a ViT's patch embedding and classifier. Adds their memory traffic to
// `memory_bytes` and returns the parameters of one GPU.
double add_ends(step_ops& step, const transformer_shape& t, double& memory_bytes) {
  const auto& p = t.p;
  const i64 h = t.h;
  memory_bytes += 3.0 * t.token_elements * t.act_bytes;
  if (!t.split.last_stage) return t.L * layer_params(t);  // a middle stage: layers only
  const double vocab = p.at("vocab");
  const double softmax_vocab = p.at("softmax_vocab") > 0 ? p.at("softmax_vocab") : vocab;
  const double image_size = p.at("image_size");
  // Learned position embeddings (BERT, GPT-2, ViT) are seq_len x hidden; rotary ones (Llama) have
  // no parameters.
  double params = t.L * layer_params(t) +
                  (t.P > 1 || !t.f.at("learned_positions") ? 0.0 : static_cast<double>(t.seq * h));
  if (image_size > 0) {
    // ViT: patch embedding as a GEMM over the patches, classifier on the class token.
    const i64 patch = static_cast<i64>(p.at("patch"));
    const i64 patches =
        (static_cast<i64>(image_size) / patch) * (static_cast<i64>(image_size) / patch);
    add_gemm_with_grads(step, op_kind::matmul, t.b * patches, h, 3 * patch * patch, 1, false);
    add_gemm_with_grads(step, op_kind::matmul, t.b, static_cast<i64>(p.at("classes")), h, 1, false);
    params += static_cast<double>(3 * patch * patch * h) + p.at("classes") * static_cast<double>(h);
  } else {
    const i64 predicted =
        static_cast<i64>(std::llround(static_cast<double>(t.tokens) * p.at("lm_head_fraction")));
    if (predicted > 0) {
      const std::size_t head = step.ops.size();
      add_gemm_with_grads(step, op_kind::matmul, predicted, static_cast<i64>(softmax_vocab / t.tp),
                          h, 1, false);
      outside_linear(step, head);
      memory_bytes += static_cast<double>(predicted) * softmax_vocab / t.tp *
                      (t.fused_loss ? fused_logit_passes * t.act_bytes : logit_passes * 4.0);
    }
    // Untied embeddings (Llama) are a second vocab x hidden matrix; with a pipeline the input
    // embedding sits on the first stage and the output projection on the last.
    params += vocab * static_cast<double>(h) / t.tp * (!t.tied && t.P <= 1 ? 2.0 : 1.0);
  }
  return params;
}

// What the backward pass keeps (Korthikanti et al. 2022), the tensor and pipeline exchanges, and
// the counts the optimizer and the launches need.
void add_saved_and_exchanged(step_ops& step, const transformer_shape& t) {
  const auto& p = t.p;
  const double token_elements = t.token_elements, tp = t.tp, act_bytes = t.act_bytes;
  const double L = t.L, P = t.P, bh = t.bh, kv_share = t.kv_share;
  const bool gated = t.gated, dropout = t.dropout, flash = t.flash, selective = t.selective;
  const bool relative = t.relative, recompute = t.recompute, fused_loss = t.fused_loss;
  const i64 tokens = t.tokens, s = t.s, keys = t.keys, h = t.h, T = t.T;
  const double vocab = p.at("vocab");
  const double softmax_vocab = p.at("softmax_vocab") > 0 ? p.at("softmax_vocab") : vocab;
  const double image_size = p.at("image_size");
  const model_split& split = t.split;
  // Kept for the backward pass (Korthikanti et al. 2022, section 4.1), per layer over the
  // [tokens x hidden] activations: the attention block's QKV input, Q, K, V and output-projection
  // input (5), the two LayerNorm inputs (2), the FFN input (1), in 16-bit (act_bytes), plus the
  // FFN's [tokens x ffn] activation input and output (2; a gated FFN 3) and two 1-byte dropout
  // masks: 34·s·b·h bytes at ffn = 4h in 16-bit. Unfused attention adds the softmax output and the
  // dropout output over the scores (2 x act_bytes) and their mask (1 byte); FlashAttention keeps
  // only the fp32 log-sum-exp per row. A tensor split divides Q, K, V, the projection input and
  // the FFN's activations (their 24·s·b·h); the norm and FFN inputs and the masks (10·s·b·h) only
  // with sequence parallelism. Full activation checkpointing keeps each layer's input and
  // recomputes one layer at a time during the backward pass. Recomputing the norms drops their
  // outputs (the QKV and FFN inputs); recomputing the experts' activation drops its output.
  const double replicated = split.sequence_parallel ? tp : 1.0;
  const double norm_outputs = t.recompute_norms ? 0.0 : 2.0 * token_elements / replicated;
  const double moe_act_outputs = t.recompute_moe_act ? t.routed_ffn_elements() : 0.0;
  const double per_layer =
      ((2.0 * t.q_share + 2.0 * kv_share * t.q_share) * token_elements / tp +
       2.0 * token_elements / replicated + norm_outputs + (gated ? 3.0 : 2.0) * t.ffn_elements() -
       moe_act_outputs + (t.moe() ? t.expert_rows() * static_cast<double>(h) : 0.0)) *
          act_bytes +
      (dropout ? 2.0 * token_elements / replicated : 0.0) +
      (flash ? 4.0 * bh * static_cast<double>(s)
       : selective
           ? 0.0
           : (2.0 * act_bytes + 1.0) * bh * static_cast<double>(s * keys) * (relative ? 2.0 : 1.0));
  const double kept = recompute ? token_elements * act_bytes / replicated : per_layer;
  // Of those, the inputs of linear layers (the two norms' outputs, the output projection's input,
  // the second FFN GEMM's and the routed experts' inputs): what a stack that keeps their quantized
  // copy for the weight-gradient GEMM stores narrower (memory.cpp). A checkpointed layer keeps
  // only its input, no linear layer's.
  const double linear_inputs =
      recompute ? 0.0
                : (norm_outputs + t.q_share * token_elements / tp + t.ffn_elements() -
                   moe_act_outputs + (t.moe() ? t.expert_rows() * static_cast<double>(h) : 0.0)) *
                      act_bytes;
  step.transient_bytes = recompute ? per_layer : 0;
  // Offloaded layers' activations leave the GPU once saved and come back for the backward pass.
  const double on_gpu = L - t.offloaded;
  step.offloaded_activation_bytes = t.offloaded * kept;
  // 1F1B: the first stage holds min(stages, micro-batches) micro-batches' activations, the last
  // one (and the logits); the combined 1F1B one more each (megatron/core/pipeline_parallel/
  // schedules.py schedules one extra warm-up micro-batch with the all-to-all overlap).
  const double micro_batches = std::max(1, split.micro_batches);
  const double in_flight = std::min<double>(P + split.extra_in_flight, micro_batches);
  const double last_in_flight = std::min<double>(1 + split.extra_in_flight, micro_batches);
  const double first_stage = on_gpu * kept * in_flight + token_elements * act_bytes;
  double last_stage = on_gpu * kept * last_in_flight + token_elements * act_bytes;
  if (image_size <= 0 && split.last_stage) {
    const double logits =
        std::round(static_cast<double>(tokens) * p.at("lm_head_fraction")) * softmax_vocab / tp;
    // The logits and the fp32 log-softmax torch's cross-entropy keeps. Its backward pass holds
    // two fp32 gradients at once beside that output: the one nll_loss hands back and the one
    // log_softmax's backward writes. A fused loss (flash-attn's, llm-foundry's default) keeps the
    // logits only and writes their gradient in the same precision.
    last_stage += logits * (act_bytes + (fused_loss ? 0.0 : 4.0));
    step.transient_bytes = std::max(step.transient_bytes, logits * (fused_loss ? act_bytes : 8.0));
  }
  const bool first_holds_most = P > 1 && first_stage >= last_stage;
  step.saved_activation_bytes =
      P > 1 ? std::max(first_stage, last_stage) : last_stage + token_elements * act_bytes;
  step.saved_linear_input_bytes =
      on_gpu * linear_inputs * (first_holds_most ? in_flight : last_in_flight);
  step.largest_group_params = std::max(layer_params(t), vocab * static_cast<double>(h) / tp);
  // Each of a layer's exchanges below runs twice forward and twice backward, and twice more when
  // the forward is recomputed.
  const double exchanges = L * (recompute ? 6.0 : 4.0);
  // Megatron's tensor-parallel exchange: two allreduces of the layer's activations forward (after
  // the attention and FFN output projections) and two backward, two more when the forward is
  // recomputed; sequence parallelism turns each into a reduce-scatter and an all-gather of the
  // same volume. Between stages, one micro-batch's activations forward and their gradient back.
  if (T > 1) {
    step.tensor_allreduces = exchanges;
    step.tensor_message_bytes = token_elements * act_bytes;
  }
  if (P > 1) step.stage_message_bytes = token_elements * act_bytes;
  // Context parallelism (ring attention, as Megatron-Core's): every GPU's K and V chunk travels
  // round the C GPUs of the group, C - 1 hops forward; backward K and V go round again with
  // their gradients (twice the bytes); a recomputed forward adds one more round.
  if (t.C > 1) {
    step.context_sends = L * static_cast<double>(t.C - 1) * (recompute ? 4.0 : 3.0);
    step.context_message_bytes =
        2.0 * static_cast<double>(tokens * t.kv_heads * t.d) / tp * act_bytes;
  }
  // Expert parallelism: each MoE layer dispatches the routed tokens to the GPUs holding their
  // experts and combines them back, forward and backward (twice more when the forward is
  // recomputed).
  if (t.moe() && t.E > 1) {
    step.expert_alltoalls = exchanges;
    step.expert_message_bytes = t.routed_tokens * static_cast<double>(h) * act_bytes;
  }
  // Expert tensor parallelism: the group gathers its routed tokens before the experts and
  // reduce-scatters their outputs after, forward and backward (twice more when recomputed).
  if (t.moe() && t.K > 1) {
    step.expert_tensor_exchanges = exchanges;
    step.expert_tensor_message_bytes = t.expert_rows() * static_cast<double>(h) * act_bytes;
  }
  // Per layer: QKV, output, FFN in and out projections (weight + bias each, the gated FFN's
  // second input projection two more) and two norms (scale + shift); then the token and position
  // embeddings and the final norm, and a classifier's weight and bias for a ViT.
  step.param_tensors = L * (12 + (gated ? 2 : 0)) + 4 + (image_size > 0 ? 2 : 0);
  step.param_groups = L + 1;  // FSDP wraps each layer; the embeddings and head form one more
  step.kernels = (kernels_per_transformer_layer + (relative ? kernels_per_relative_attention : 0) +
                  (T > 1 ? 4 : 0) + (selective ? kernels_per_attention_core : 0) +
                  (t.moe() ? kernels_per_moe_layer + (t.E > 1 ? 4 : 0) + (t.K > 1 ? 4 : 0) +
                                 (t.sorts_experts() ? expert_sort_kernels : 0)
                           : 0) +
                  (t.recompute_norms ? norms_per_layer : 0) + (t.recompute_moe_act ? 1 : 0)) *
                     L * (recompute ? 1.35 : 1.0) +
                 20;
  step.tokens_per_sample = static_cast<double>(t.seq);
}

}  // namespace

std::optional<uneven_stages> split_unevenly(std::int64_t layers, int pipeline) {
  const std::int64_t units = layers + 2;
  const std::int64_t base = units / pipeline;
  if (pipeline < 2 || base < 2) return std::nullopt;
  std::int64_t spare = units % pipeline;
  const std::int64_t to_middle = std::min<std::int64_t>(spare, pipeline - 2);
  spare -= to_middle;
  uneven_stages out;
  out.middle = pipeline > 2 ? static_cast<int>(base + (to_middle > 0 ? 1 : 0)) : 0;
  out.first = static_cast<int>(base - 1 + spare);  // the one spare unit left, if any
  out.last = static_cast<int>(base - 1);
  return out;
}

namespace {

step_ops transformer(const std::map<std::string, double>& p, const std::map<std::string, bool>& f,
                     int batch, double act_bytes, const model_split& split) {
  const transformer_shape t(p, f, batch, act_bytes, split);
  step_ops step;
  add_layer_gemms(step, t);
  double memory_bytes = layer_memory_bytes(t);
  const double params = add_ends(step, t, memory_bytes);
  add_memory(step, memory_bytes);
  step.params = params;
  step.expert_params = routed_expert_params(t);
  add_saved_and_exchanged(step, t);
  return step;
}

const std::map<std::string, preset_info>& presets() {
  const std::map<std::string, bool> transformer_flags{{"flash_attention", true},
                                                      {"activation_checkpointing", false},
                                                      {"gated_ffn", false},
                                                      {"relative_position", false},
                                                      {"dropout", true},
                                                      {"fused_cross_entropy", false},
                                                      {"tied_embeddings", true},
                                                      {"learned_positions", true},
                                                      {"selective_checkpointing", false},
                                                      {"recompute_norms", false},
                                                      {"recompute_moe_activation", false},
                                                      {"causal", false}};
  auto t = [&](double layers, double hidden, double heads, double ffn, double seq, double vocab,
               const std::map<std::string, double>& extra = {},
               const std::map<std::string, bool>& flags = {}) {
    preset_info info{"transformer",
                     "sequence",
                     {{"layers", layers},
                      {"hidden", hidden},
                      {"heads", heads},
                      {"ffn", ffn},
                      {"seq_len", seq},
                      {"vocab", vocab},
                      {"softmax_vocab", 0},
                      {"kv_heads", 0},
                      {"head_dim", 0},
                      {"memory_len", 0},
                      {"lm_head_fraction", 1.0},
                      {"image_size", 0},
                      {"patch", 16},
                      {"classes", 1000},
                      // Mixture of experts (the model's "experts" object): none by default.
                      {"moe_experts", 0},
                      {"moe_top_k", 0},
                      {"moe_ffn", 0},
                      {"moe_shared", 0},
                      {"moe_imbalance", 1},
                      // Sliding-window attention: windowed_layers of the layers attend to the
                      // last attention_window tokens only (0: none).
                      {"attention_window", 0},
                      {"windowed_layers", 0},
                      {"activation_offload_layers", 0}},
                     transformer_flags,
                     ""};
    for (const auto& [k, v] : extra) info.numbers[k] = v;
    for (const auto& [k, v] : flags) info.flags[k] = v;
    return info;
  };
  // Decoders attend to earlier tokens only.
  const std::map<std::string, bool> decoder{{"causal", true}};
  // Llama: SwiGLU FFN, no dropout, separate input and output embeddings, rotary positions.
  const std::map<std::string, bool> llama{{"gated_ffn", true},
                                          {"dropout", false},
                                          {"tied_embeddings", false},
                                          {"learned_positions", false},
                                          {"causal", true}};
  static const std::map<std::string, preset_info> table = [&] {
    std::map<std::string, preset_info> m;
    // channels_last: the model and its inputs in NHWC (torch.channels_last, DeepLearningExamples'
    // --memory-format nhwc, MXNet/TensorFlow NHWC); false is PyTorch's default NCHW.
    m["resnet50"] =
        preset_info{"cnn", "image", {{"image_size", 224}}, {{"channels_last", true}}, ""};
    // BERT pre-training predicts the masked 15% of tokens.
    m["bert-large"] = t(24, 1024, 16, 4096, 128, 30522, {{"lm_head_fraction", 0.15}});
    m["gpt"] = t(12, 768, 12, 0, 1024, 50257, {}, decoder);  // ffn 0 = 4 x hidden
    m["gpt2-small"] = t(12, 768, 12, 3072, 1024, 50257, {}, decoder);
    m["gpt2-large"] = t(36, 1280, 20, 5120, 1024, 50257, {}, decoder);
    m["llama2-7b"] = t(32, 4096, 32, 11008, 4096, 32000, {}, llama);
    m["llama3-8b"] = t(32, 4096, 32, 14336, 8192, 128256, {{"kv_heads", 8}}, llama);
    // Model cards (config.json of each Hugging Face repository): Llama 2 70B, Llama 3.1 8B, 70B
    // and 405B (grouped-query attention with 8 key/value heads, rope scaling aside, which costs
    // nothing here), Mixtral 8x7B (8 experts of the 14336-wide FFN, 2 per token).
    m["llama2-70b"] = t(80, 8192, 64, 28672, 4096, 32000, {{"kv_heads", 8}}, llama);
    m["llama3.1-8b"] = t(32, 4096, 32, 14336, 8192, 128256, {{"kv_heads", 8}}, llama);
    m["llama3.1-70b"] = t(80, 8192, 64, 28672, 8192, 128256, {{"kv_heads", 8}}, llama);
    m["llama3.1-405b"] = t(126, 16384, 128, 53248, 8192, 128256, {{"kv_heads", 8}}, llama);
    m["mixtral-8x7b"] =
        t(32, 4096, 32, 14336, 4096, 32000,
          {{"kv_heads", 8}, {"moe_experts", 8}, {"moe_top_k", 2}, {"moe_ffn", 14336}}, llama);
    // gpt-oss-120b (openai/gpt-oss-120b config.json): 128 experts of 2880, 4 per token, 64 query
    // heads of 64 and 8 key/value heads on a 2880-wide stream, every other layer attending within
    // 128 tokens; trained here at 4096 tokens, as Megatron-Bridge's recipes run it. Its attention
    // sinks and biases are a few thousand parameters a layer and are not counted.
    m["gpt-oss-120b"] = t(36, 2880, 64, 2880, 4096, 201088,
                          {{"kv_heads", 8},
                           {"head_dim", 64},
                           {"moe_experts", 128},
                           {"moe_top_k", 4},
                           {"moe_ffn", 2880},
                           {"attention_window", 128},
                           {"windowed_layers", 18}},
                          llama);
    m["vit-b16"] = t(12, 768, 12, 3072, 197, 0, {{"image_size", 224}, {"lm_head_fraction", 0}});
    m["vit-b16"].sample_unit = "image";
    // Transformer-XL base on WikiText-103: adaptive softmax touches ~32k of the 267,735 output
    // columns per token on average (head of 20k plus the tail clusters by frequency).
    m["transformer-xl-base"] =
        t(16, 512, 8, 2048, 192, 267735, {{"memory_len", 192}, {"softmax_vocab", 32000}},
          {{"relative_position", true}, {"flash_attention", false}, {"causal", true}});
    // Decoder language models share the gpt family's calibration rows (GPT, MPT, Llama).
    for (const char* name : {"gpt", "gpt2-small", "gpt2-large", "llama2-7b", "llama3-8b",
                             "llama2-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b"}) {
      m[name].calibration_family = "gpt";
    }
    m["mixtral-8x7b"].calibration_family = "moe";
    m["gpt-oss-120b"].calibration_family = "moe";
    m["resnet50"].calibration_family = "resnet50";
    m["bert-large"].calibration_family = "bert";
    m["transformer-xl-base"].calibration_family = "transformer-xl";
    return m;
  }();
  return table;
}

}  // namespace

const preset_info* find_preset(const std::string& name) {
  const auto& table = presets();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

std::int64_t key_value_heads(const std::map<std::string, double>& params) {
  const double kv = params.at("kv_heads");
  return static_cast<std::int64_t>(kv > 0 ? kv : params.at("heads"));
}

double windowed_share(const std::map<std::string, double>& params) {
  const double layers = params.at("layers");
  return params.at("attention_window") > 0 && layers > 0 ? params.at("windowed_layers") / layers
                                                         : 0.0;
}

double windowed_mean_keys(double window, double tokens) {
  return window < tokens ? window - window * window / (2 * tokens) : tokens / 2;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, info] : presets()) out.push_back(name);
    return out;
  }();
  return names;
}

step_ops expand_preset(const std::string& name, const std::map<std::string, double>& params,
                       const std::map<std::string, bool>& flags, int batch, double activation_bytes,
                       const model_split& split) {
  if (name == "resnet50") return resnet50(params, flags, batch, activation_bytes);
  auto p = params;
  if (p.at("ffn") <= 0) p["ffn"] = 4 * p.at("hidden");
  if (p.at("image_size") > 0) {
    const double side = std::floor(p.at("image_size") / p.at("patch"));
    p["seq_len"] = side * side + 1;  // patches plus the class token
  }
  return transformer(p, flags, batch, activation_bytes, split);
}

}  // namespace gpubench::model::detail
