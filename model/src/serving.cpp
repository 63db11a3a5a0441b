// The serving model (docs/serving.md derives each equation): prefill and decode steps as GEMMs
// at the slower of their compute and their memory traffic on the machine's own figures, the KV
// cache from what the GPU's memory keeps free, the tensor group's small allreduces, the engine's
// step overhead; then the load (static batch, closed loop, Poisson arrivals, offline) as a
// steady state of those steps.
#include "gpubench/model/serving.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "components.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/calibration.hpp"
#include "presets.hpp"

namespace gpubench::model {

namespace {

using detail::fmt;
using detail::giga;
using detail::tera;

constexpr double gib = 1073741824.0;
constexpr double activation_bytes_16 = 2;  // activations and the KV cache's 16-bit type
// Per transformer layer, the kernels a fused engine runs each step: the input norm, the QKV
// GEMM, rotary embedding with the KV-cache write, attention, the output GEMM, the residual add
// with the second norm, the gate/up GEMM, the activation, the down GEMM, the residual add: 10;
// a tensor split adds its two allreduces, a mixture of experts its router, top-k, permutation
// and un-permutation.
constexpr double kernels_per_layer = 10;
constexpr double kernels_per_tensor_split = 2;
constexpr double kernels_per_moe_layer = 4;
// Outside the layers: the embedding, the final norm, the vocabulary projection, sampling.
constexpr double kernels_per_step = 5;
// Memory-bound passes per layer over the step's [tokens x hidden] activations: two norms (read,
// write), two residual adds (two reads, a write), rotary embedding over Q and K (read, write).
constexpr double token_passes_per_layer = 12;
// Over the FFN's [tokens x width] activations: SwiGLU reads gate and up and writes the product
// (3; a plain activation 2).
constexpr double ffn_passes_gated = 3;
constexpr double ffn_passes_plain = 2;
// Live activations of a step beside the weights and the KV pool, per token: the residual
// stream, the norm output, Q/K/V and the attention output (about 4 hidden-wide 16-bit vectors)
// and the FFN's gate and up outputs; the sampled tokens' fp32 logits.
constexpr double live_hidden_vectors = 4;
constexpr double logits_bytes = 4;
// More sequences in flight on one replica than any KV cache holds: a load with no steady state.
constexpr double max_sequences_in_flight = 1e7;

struct weight_precision {
  std::string_view name;
  double bytes;              // per weight element, block scales included
  std::string_view dtype;    // the GEMM dtype it computes in ("": the 16-bit one)
  bool weight_only = false;  // 16-bit activations: dequantised in the GEMM's main loop
  std::string_view about;
};
// int4: AWQ/GPTQ groups of 128 with a 16-bit scale (+1/64 byte); fp4: NVFP4's e4m3 scale per 16
// elements (+1/16, from the dtype table).
// A precision that runs native GEMMs stores its weights as that GEMM dtype does (the dtype table).
constexpr double stored_as(std::string_view dtype) {
  return find_gemm_dtype(dtype)->stored_bytes_per_element();
}
constexpr weight_precision weight_precisions[] = {
    {"bf16", stored_as("bf16"), "bf16", false, "bf16 weights and GEMMs"},
    {"fp16", stored_as("fp16"), "fp16", false, "fp16 weights and GEMMs"},
    {"fp8", stored_as("fp8"), "fp8", false, "fp8 weights and activations, fp8 GEMMs"},
    {"int8", 1, "", true, "int8 weight-only, 16-bit GEMMs"},
    {"int4", 0.5 + 2.0 / 128, "", true, "int4 weight-only (groups of 128), 16-bit GEMMs"},
    {"fp4", stored_as("nvfp4"), "nvfp4", false, "NVFP4 weights and activations, fp4 GEMMs"},
};
struct kv_precision {
  std::string_view name;
  double bytes;
};
constexpr kv_precision kv_precisions[] = {{"bf16", 2}, {"fp16", 2}, {"fp8", 1}};

const weight_precision& weights_of(const std::string& name) {
  for (const weight_precision& p : weight_precisions) {
    if (p.name == name) return p;
  }
  throw input_error("--weights " + name + ": expected " + join(serving_weight_names(), ", "));
}
const kv_precision& kv_of(const std::string& name) {
  for (const kv_precision& p : kv_precisions) {
    if (p.name == name) return p;
  }
  throw input_error("--kv-cache " + name + ": expected " + join(serving_kv_names(), ", "));
}

// A decoder's shape as one GPU of a replica holds it (T-way tensor split, P stages; the slowest
// stage: the most layers, with the vocabulary projection).
struct llm_shape {
  double L = 0, h = 0, heads = 0, kv_heads = 0, d = 0, ffn = 0, vocab = 0;
  bool gated = false, tied = false;
  double experts = 0, top_k = 0, expert_ffn = 0, shared = 0;
  double T = 1, P = 1;
  double stage_layers = 0;  // layers of the slowest stage
  double kv_heads_gpu = 0;  // K/V heads one GPU holds (replicated where kv_heads < T)
  // Sliding-window attention: this share of the layers attends to (and caches) the last
  // `window` tokens only; 0, none.
  double window = 0, windowed_share = 0;
  [[nodiscard]] bool moe() const { return experts > 0; }
  [[nodiscard]] double ffn_matrices() const { return gated ? 3 : 2; }
  // One layer's attention weights on one GPU: Q and O split, K and V at this GPU's heads.
  [[nodiscard]] double attention_params() const {
    return 2 * h * heads * d / T + 2 * h * kv_heads_gpu * d;
  }
  // One layer's FFN weights on one GPU (every expert, each split over the tensor group as the
  // engines shard them without expert parallelism; the router whole).
  [[nodiscard]] double ffn_params() const {
    if (!moe()) return ffn_matrices() * h * ffn / T;
    return (experts + shared) * ffn_matrices() * h * expert_ffn / T + h * experts;
  }
  [[nodiscard]] double vocab_params() const { return vocab * h / T; }
  // K and V of one token on this GPU, all its layers, in elements.
  [[nodiscard]] double kv_elements_per_token() const { return 2 * stage_layers * kv_heads_gpu * d; }
  // The layers of this GPU's stage that attend to every earlier token, and those that attend
  // within the window.
  [[nodiscard]] double full_layers() const { return stage_layers * (1 - windowed_share); }
  [[nodiscard]] double windowed_layers() const { return stage_layers * windowed_share; }
  // The tokens a windowed layer keeps of a context.
  [[nodiscard]] double in_window(double context) const {
    return window > 0 ? std::min(context, window) : context;
  }
};

llm_shape shape_of(const workload& w, const serving_options& o) {
  check_decoder(w);
  const auto& p = w.model.params;
  const auto number = [&](const char* key) {
    const auto it = p.find(key);
    return it == p.end() ? 0.0 : it->second;
  };
  const auto flag = [&](const char* key) {
    const auto it = w.model.flags.find(key);
    return it != w.model.flags.end() && it->second;
  };
  llm_shape s;
  s.L = number("layers");
  s.h = number("hidden");
  s.heads = number("heads");
  s.kv_heads = static_cast<double>(detail::key_value_heads(p));
  s.d = number("head_dim") > 0 ? number("head_dim") : s.h / s.heads;
  s.ffn = number("ffn") > 0 ? number("ffn") : 4 * s.h;
  s.vocab = number("vocab");
  s.gated = flag("gated_ffn");
  s.tied = flag("tied_embeddings");
  s.experts = number("moe_experts");
  s.top_k = number("moe_top_k");
  s.expert_ffn = number("moe_ffn") > 0 ? number("moe_ffn") : s.ffn;
  s.shared = number("moe_shared");
  s.T = o.tensor;
  s.P = o.pipeline;
  const auto heads = static_cast<std::int64_t>(s.heads);
  const auto kv = static_cast<std::int64_t>(s.kv_heads);
  if (heads % o.tensor != 0) {
    throw input_error("--tensor " + std::to_string(o.tensor) + " does not divide the model's " +
                      std::to_string(heads) + " attention heads");
  }
  if (kv % o.tensor != 0 && o.tensor % kv != 0) {
    throw input_error("--tensor " + std::to_string(o.tensor) + " neither divides nor is a " +
                      "multiple of the model's " + std::to_string(kv) + " key/value heads");
  }
  if (o.pipeline > static_cast<int>(s.L)) {
    throw input_error("--pipeline " + std::to_string(o.pipeline) + " exceeds the model's " +
                      std::to_string(static_cast<int>(s.L)) + " layers");
  }
  s.stage_layers = std::ceil(s.L / s.P);
  s.kv_heads_gpu = std::max(1.0, s.kv_heads / s.T);
  s.window = number("attention_window");
  s.windowed_share = detail::windowed_share(p);
  return s;
}

// The roofline of one step on one GPU, split the way the answer reports it.
struct step_time {
  double compute_s = 0;    // GEMMs and attention where their math binds
  double memory_s = 0;     // where their memory traffic binds, and the memory-bound kernels
  double gemm_s = 0;       // the linear layers (either side)
  double attention_s = 0;  // attention (either side)
  double communication_s = 0;
  double overhead_s = 0;  // launch gaps, issuing kernels, the engine's step
  double weight_bytes = 0;
  double kv_bytes = 0;
  double flops = 0;
  double memory_only_s = 0;  // the elementwise kernels
  [[nodiscard]] double total() const {
    return gemm_s + attention_s + communication_s + overhead_s + memory_only_s;
  }
};

struct machine {
  machine(const hardware_profile& profile, const serving_stack& engine,
          const serving_constants& constants, const weight_precision& w, double kv,
          const std::string& linear_dtype, const std::string& dtype_16)
      : hw(profile),
        stack(engine),
        sc(constants),
        weights(w),
        kv_bytes(kv),
        rates(profile, linear_dtype),
        rates16(profile, dtype_16) {}
  const hardware_profile& hw;
  const serving_stack& stack;
  const serving_constants& sc;
  const weight_precision& weights;
  double kv_bytes = 2;
  detail::gemm_rates rates;    // the linear layers' GEMM dtype
  detail::gemm_rates rates16;  // attention and the vocabulary projection (16-bit)
  double hbm_Bps = 0;
  double decode_roof_flops = 0;  // peak x gpu.decode_gemm_efficiency where the profile has it
  double allreduce_latency_s = 0;
  double allreduce_busbw_Bps = 0;
  std::vector<std::pair<double, double>> measured_busbw;  // bytes -> GB/s, measured
  double launch_latency_s = 0;
};

// One GEMM C[m x n] = A[m x k] W[k x n] with W in the weights' precision.
void add_gemm(step_time& t, const machine& m, double rows, double n, double k, double count,
              bool linear) {
  if (rows <= 0 || count <= 0) return;
  const double flops = 2 * rows * n * k * count;
  const double weight_bytes = n * k * (linear ? m.weights.bytes : activation_bytes_16) * count;
  const double act_bytes = rows * (n + k) * activation_bytes_16 * count;
  const auto r = static_cast<std::int64_t>(std::max(1.0, std::round(rows)));
  const auto ni = static_cast<std::int64_t>(std::max(1.0, std::round(n)));
  const auto ki = static_cast<std::int64_t>(std::max(1.0, std::round(k)));
  double rate = (linear ? m.rates : m.rates16).tflops(r, ni, ki, 1, nullptr) * tera;
  if (linear && m.weights.weight_only) rate *= m.sc.weight_only_compute_fraction;
  if (m.decode_roof_flops > 0) rate = std::min(rate, m.decode_roof_flops);
  rate *= m.stack.matmul_efficiency;
  const double compute = flops / rate;
  const double memory = (weight_bytes + act_bytes) / (m.hbm_Bps * m.stack.memory_efficiency);
  (compute >= memory ? t.compute_s : t.memory_s) += std::max(compute, memory);
  t.gemm_s += std::max(compute, memory);
  t.weight_bytes += weight_bytes;
  t.flops += flops;
}

// Attention of `queries` new tokens against `keys_read` cached keys (each query sees on average
// `mean_keys`), over this GPU's heads.
void add_attention(step_time& t, const machine& m, const llm_shape& s, double queries,
                   double mean_keys, double keys_read, double layers) {
  const double heads = s.heads / s.T;
  const double flops = 4 * queries * mean_keys * heads * s.d * layers;
  const double kv = keys_read * 2 * s.kv_heads_gpu * s.d * m.kv_bytes * layers;
  const double written = queries * 2 * s.kv_heads_gpu * s.d * m.kv_bytes * layers;
  const double q_io = queries * 2 * heads * s.d * activation_bytes_16 * layers;
  const auto q = static_cast<std::int64_t>(std::max(1.0, std::round(queries)));
  const auto keys = static_cast<std::int64_t>(std::max(1.0, std::round(mean_keys)));
  const double rate = m.rates16.tflops(q, keys, static_cast<std::int64_t>(s.d),
                                       static_cast<std::int64_t>(heads), nullptr) *
                      tera * m.stack.matmul_efficiency;
  const double compute = flops / rate;
  const double memory = (kv + written + q_io) / (m.hbm_Bps * m.stack.memory_efficiency);
  (compute >= memory ? t.compute_s : t.memory_s) += std::max(compute, memory);
  t.attention_s += std::max(compute, memory);
  t.kv_bytes += kv + written;
  t.flops += flops;
}

// Seconds of one allreduce of `bytes` over the tensor group: the measured small-message time
// where nccl.all_reduce ran (bytes x 2(T-1)/T / busbw at that size, latency included), else the
// latency plus the bytes at the group's bus bandwidth.
double allreduce_s(const machine& m, double bytes, double T) {
  if (T <= 1 || bytes <= 0) return 0;
  const double factor = 2 * (T - 1) / T;
  if (!m.measured_busbw.empty()) {
    return bytes * factor / (detail::interpolate_log(m.measured_busbw, bytes) * giga);
  }
  return m.allreduce_latency_s + bytes * factor / m.allreduce_busbw_Bps;
}

// The layers' GEMMs, elementwise passes and tensor exchanges of one stage for `tokens` tokens
// (`sequences` of them sampled).
void add_layers(step_time& t, const machine& m, const llm_shape& s, double tokens,
                double sequences) {
  const double L = s.stage_layers;
  add_gemm(t, m, tokens, s.heads * s.d / s.T + 2 * s.kv_heads_gpu * s.d, s.h, L, true);
  add_gemm(t, m, tokens, s.h, s.heads * s.d / s.T, L, true);
  double ffn_elements = 0;
  if (!s.moe()) {
    add_gemm(t, m, tokens, (s.ffn_matrices() - 1) * s.ffn / s.T, s.h, L, true);
    add_gemm(t, m, tokens, s.h, s.ffn / s.T, L, true);
    ffn_elements = tokens * s.ffn / s.T;
  } else {
    // Each token goes to top_k of the experts: the experts a step touches are the expected
    // number of distinct ones among tokens x top_k draws; each runs its share of the tokens.
    add_gemm(t, m, tokens, s.experts, s.h, L, false);  // the router
    const double touched =
        s.experts * (1 - std::pow(1 - s.top_k / s.experts, std::max(tokens, 1.0)));
    const double rows = tokens * s.top_k / touched;
    add_gemm(t, m, rows, (s.ffn_matrices() - 1) * s.expert_ffn / s.T, s.h, L * touched, true);
    add_gemm(t, m, rows, s.h, s.expert_ffn / s.T, L * touched, true);
    if (s.shared > 0) {
      add_gemm(t, m, tokens, (s.ffn_matrices() - 1) * s.shared * s.expert_ffn / s.T, s.h, L, true);
      add_gemm(t, m, tokens, s.h, s.shared * s.expert_ffn / s.T, L, true);
    }
    ffn_elements = tokens * (s.top_k + s.shared) * s.expert_ffn / s.T;
  }
  const double passes = (token_passes_per_layer * tokens * s.h +
                         (s.gated ? ffn_passes_gated : ffn_passes_plain) * ffn_elements) *
                        activation_bytes_16 * L;
  const double elementwise = passes / (m.hbm_Bps * m.stack.memory_efficiency);
  t.memory_only_s += elementwise;
  t.memory_s += elementwise;
  // Megatron's split: an allreduce after the attention output and after the FFN, each layer.
  t.communication_s += 2 * L * allreduce_s(m, tokens * s.h * activation_bytes_16, s.T);
  // The vocabulary projection for the sampled tokens, in 16-bit.
  add_gemm(t, m, sequences, s.vocab / s.T, s.h, 1, false);
}

// What the step's kernels cost beyond their bytes and FLOPs (each one's boundary, and under CUDA
// graphs a small kernel's setup and teardown) and the engine's work per step (docs/serving.md).
void add_overhead(step_time& t, const machine& m, const llm_shape& s, bool graphs) {
  const double kernels =
      s.stage_layers * (kernels_per_layer + (s.T > 1 ? kernels_per_tensor_split : 0) +
                        (s.moe() ? kernels_per_moe_layer : 0)) +
      kernels_per_step;
  double gaps = kernels * (graphs ? m.sc.graph_kernel_gap_us * 1e-6 : m.launch_latency_s);
  // Without graphs the framework issues each kernel from the host; the GPU waits where issuing
  // is slower than the kernels run.
  const double issue = graphs ? 0 : kernels * m.stack.host_us_per_kernel * 1e-6;
  const double busy = t.total() + gaps;
  if (issue > busy) gaps += issue - busy;
  t.overhead_s += gaps;
}

// One decode step of one stage: `batch` sequences, each reading `context` cached tokens.
step_time decode_stage(const machine& m, const llm_shape& s, double batch, double context) {
  step_time t;
  add_layers(t, m, s, batch, batch);
  add_attention(t, m, s, batch, context, batch * context, s.full_layers());
  const double kept = s.in_window(context);
  add_attention(t, m, s, batch, kept, batch * kept, s.windowed_layers());
  add_overhead(t, m, s, m.stack.cuda_graphs);
  return t;
}

// Prefill of `tokens` prompt tokens of `sequences` prompts of `prompt` tokens each, in one step.
step_time prefill_stage(const machine& m, const llm_shape& s, double sequences, double prompt) {
  step_time t;
  const double tokens = sequences * prompt;
  add_layers(t, m, s, tokens, sequences);
  // Causal attention: token i sees i + 1 keys, (prompt + 1) / 2 on average; within a window of
  // W < prompt tokens, min(i + 1, W) of them, W - W^2/(2 prompt) on average.
  add_attention(t, m, s, tokens, (prompt + 1) / 2, tokens, s.full_layers());
  const double windowed_keys = s.window > 0 && s.window < prompt
                                   ? detail::windowed_mean_keys(s.window, prompt)
                                   : (prompt + 1) / 2;
  add_attention(t, m, s, tokens, windowed_keys, tokens, s.windowed_layers());
  add_overhead(t, m, s, false);
  return t;
}

// A replica's step: P stages in a row for one micro-batch's token (decode keeps P micro-batches
// in flight, so a step of B sequences takes P stage-times of B/P), plus the stage-to-stage sends
// and the engine's per-step work.
struct replica_step {
  step_time stage;
  double seconds = 0;
};
replica_step decode_step(const machine& m, const llm_shape& s, double batch, double context) {
  replica_step r;
  const double micro = std::max(1.0, batch / s.P);
  r.stage = decode_stage(m, s, micro, context);
  const double send = s.P > 1 ? (s.P - 1) * m.allreduce_latency_s : 0;
  r.seconds = s.P * r.stage.total() + send + m.stack.step_overhead_us * 1e-6;
  return r;
}
replica_step prefill_step(const machine& m, const llm_shape& s, double sequences, double prompt) {
  replica_step r;
  r.stage = prefill_stage(m, s, sequences, prompt);
  const double send = s.P > 1 ? (s.P - 1) * m.allreduce_latency_s : 0;
  // A prompt crosses the stages one after another.
  r.seconds = s.P * r.stage.total() + send + m.stack.step_overhead_us * 1e-6;
  return r;
}

component_id limit_of(const step_time& t) {
  const std::pair<double, component_id> parts[] = {{t.compute_s, component_id::gpu_compute},
                                                   {t.memory_s, component_id::gpu_memory},
                                                   {t.communication_s, component_id::communication},
                                                   {t.overhead_s, component_id::cpu}};
  return std::max_element(std::begin(parts), std::end(parts),
                          [](const auto& a, const auto& b) { return a.first < b.first; })
      ->second;
}

serving_phase phase_of(const replica_step& r, double tokens) {
  serving_phase p;
  p.time_ms = r.seconds * 1e3;
  const double scale = r.seconds / std::max(r.stage.total(), 1e-30);
  p.gemm_ms = r.stage.gemm_s * scale * 1e3;
  p.attention_ms = r.stage.attention_s * scale * 1e3;
  p.communication_ms = r.stage.communication_s * scale * 1e3;
  p.overhead_ms = (r.seconds * 1e3) - p.gemm_ms - p.attention_ms - p.communication_ms -
                  r.stage.memory_only_s * scale * 1e3;
  p.weight_bytes = r.stage.weight_bytes;
  p.kv_bytes = r.stage.kv_bytes;
  p.flops = r.stage.flops;
  p.tokens = tokens;
  step_time whole = r.stage;
  whole.overhead_s = p.overhead_ms * 1e-3 / scale;
  p.limiting_component = limit_of(whole);
  return p;
}

// The steady state of a continuously batching replica with `in_flight` sequences (docs/serving.md,
// "Continuous batching"): decode steps of the sequences past their prefill, stretched by the
// prefill chunks of the requests that arrive meanwhile.
struct steady_state {
  double requests_per_s = 0;  // per replica
  double ttft_s = 0;
  double tpot_s = 0;
  double e2e_s = 0;
  double decoding = 0;   // sequences in their decode phase
  double prefill_s = 0;  // one prompt's prefill work
  replica_step decode;
  replica_step prefill;
  bool stable = true;
};

// The replica at `lambda` requests/s: the sequences past their prefill decode together
// (Little's law: lambda x (O - 1) steps x the step time of them), each step stretched by the
// prefill work of the arrivals (a share rho = lambda x t_p of the GPU's time).
steady_state at_rate(const machine& m, const llm_shape& s, double lambda, double I, double O,
                     double queued_share) {
  steady_state st;
  const double chunk = m.stack.max_batched_tokens > 0
                           ? std::min(I, static_cast<double>(m.stack.max_batched_tokens))
                           : I;
  const double chunks = std::ceil(I / chunk);
  // One prompt's prefill work, done in chunks beside the decode steps: without the step
  // overhead, which the decode step it rides already pays.
  st.prefill = prefill_step(m, s, 1, I);
  st.prefill_s = st.prefill.seconds - m.stack.step_overhead_us * 1e-6;
  const double rho = lambda * st.prefill_s;
  if (rho >= 1) {
    st.stable = false;
    return st;
  }
  double decoding = O > 1 ? 1.0 : 0.0;
  double t_it = 0;
  for (int i = 0; i < 100; ++i) {
    st.decode = decode_step(m, s, std::max(decoding, 1.0), I + O / 2);
    t_it = st.decode.seconds / (1 - rho);
    const double next = O > 1 ? std::max(1.0, lambda * (O - 1) * t_it) : 0.0;
    // Near rho = 1 the decode phase grows without bound: no steady state (the bisection of a
    // closed loop then looks lower, and a rate is over capacity).
    if (next > max_sequences_in_flight) {
      st.stable = false;
      return st;
    }
    if (std::abs(next - decoding) <= 1e-9 * std::max(next, 1.0)) {
      decoding = next;
      break;
    }
    decoding = 0.5 * (decoding + next);
  }
  // A new prompt waits for the step under way and queues for the prefill work of the prompts
  // ahead of it (M/D/1 at the load it sees: queued_share of rho), then its chunks ride the next
  // steps.
  const double seen = rho * queued_share;
  const double wait = t_it / 2 + seen * st.prefill_s / (2 * (1 - seen));
  st.ttft_s = wait + st.prefill_s + chunks * st.decode.seconds;
  st.tpot_s = t_it;
  st.e2e_s = st.ttft_s + (O - 1) * t_it;
  st.decoding = decoding;
  st.requests_per_s = lambda;
  return st;
}

// A closed loop of `in_flight` requests: the rate at which lambda x e2e(lambda) = in_flight
// (e2e grows with lambda and without bound as rho nears 1, so bisection finds it). An arrival
// sees the loop as it is with one request fewer (the arrival theorem of closed networks), so
// (C - 1)/C of the prefill load queues ahead of it: none for one request alone.
steady_state closed_loop(const machine& m, const llm_shape& s, double in_flight, double I,
                         double O) {
  const double share = in_flight > 1 ? (in_flight - 1) / in_flight : 0;
  const steady_state probe = at_rate(m, s, 0, I, O, share);
  double lo = 0;
  double hi = 1 / probe.prefill_s;
  steady_state best = probe;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    const steady_state st = at_rate(m, s, mid, I, O, share);
    if (!st.stable || mid * st.e2e_s > in_flight) {
      hi = mid;
    } else {
      lo = mid;
      best = st;
    }
  }
  return best;
}

}  // namespace

void check_decoder(const workload& w) {
  const auto number = [&](const char* key) {
    const auto it = w.model.params.find(key);
    return it == w.model.params.end() ? 0.0 : it->second;
  };
  const auto causal = w.model.flags.find("causal");
  if (w.family != "transformer" || causal == w.model.flags.end() || !causal->second ||
      number("image_size") > 0 || number("vocab") <= 0) {
    throw input_error("--workload " + w.name +
                      ": size --serve takes a decoder language model (a transformer preset with "
                      "causal attention and a vocabulary, as llama3.1-8b)");
  }
}

std::string_view to_string(serving_load load) noexcept {
  switch (load) {
    case serving_load::batch:
      return "batch";
    case serving_load::concurrency:
      return "concurrency";
    case serving_load::rate:
      return "rate";
    case serving_load::max_throughput:
      return "max_throughput";
  }
  return "max_throughput";
}

const std::vector<std::string>& serving_weight_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const weight_precision& p : weight_precisions) out.emplace_back(p.name);
    return out;
  }();
  return names;
}
std::string serving_weight_dtype(const std::string& weights) {
  const weight_precision& p = weights_of(weights);
  if (!p.dtype.empty()) return std::string(p.dtype);
  return "bf16";  // weight-only: dequantised to bf16 in the GEMM
}

double serving_weight_bytes(const std::string& weights) {
  return weights_of(weights).bytes;
}

const std::vector<std::string>& serving_kv_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const kv_precision& p : kv_precisions) out.emplace_back(p.name);
    return out;
  }();
  return names;
}

const serving_stack& serving_constants::stack_named(const std::string& name) const {
  for (const serving_stack& s : stacks) {
    if (s.name == name) return s;
  }
  throw input_error("--stack " + name + ": expected " + join(stack_names(), ", "));
}
std::vector<std::string> serving_constants::stack_names() const {
  std::vector<std::string> out;
  for (const serving_stack& s : stacks) out.push_back(s.name);
  return out;
}

serving_constants parse_serving_constants(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "constants", "stacks"});
  if (root.get_string("schema") != "gpubench.serving-constants/1") {
    root.fail("schema", "\"gpubench.serving-constants/1\"");
  }
  serving_constants sc;
  const json_reader table = root.member("constants");
  table.expect_object(
      {"allreduce_latency_us", "weight_only_compute_fraction", "graph_kernel_gap_us"});
  const auto constant = [&](const char* name, double& into, double lo, double hi) {
    const json_reader entry = table.member(name);
    entry.expect_object({"value", "source"});
    into = entry.get_number("value", lo, hi);
    sc.sources.emplace_back(name, entry.get_string("source"));
  };
  constant("allreduce_latency_us", sc.allreduce_latency_us, 0, 1e6);
  constant("weight_only_compute_fraction", sc.weight_only_compute_fraction, 0.01, 1);
  constant("graph_kernel_gap_us", sc.graph_kernel_gap_us, 0, 1e4);
  for (const json_reader& s : root.elements("stacks", 1)) {
    s.expect_object({"name", "about", "values", "sources"});
    serving_stack stack;
    stack.name = s.get_string("name");
    stack.about = s.get_string("about");
    const json_reader v = s.member("values");
    v.expect_object({"memory_fraction", "fraction_of_free", "max_sequences", "max_batched_tokens",
                     "kv_block_tokens", "cuda_graphs", "continuous_batching", "step_overhead_us",
                     "host_us_per_kernel", "matmul_efficiency", "memory_efficiency",
                     "runtime_reserved_GiB"});
    stack.memory_fraction = v.get_number("memory_fraction", 0.05, 1);
    stack.fraction_of_free = v.find_bool("fraction_of_free").value_or(false);
    stack.max_sequences = static_cast<int>(v.get_int("max_sequences", 0, 1 << 24));
    stack.max_batched_tokens = static_cast<int>(v.get_int("max_batched_tokens", 0, 1 << 30));
    stack.kv_block_tokens = static_cast<int>(v.get_int("kv_block_tokens", 1, 1 << 20));
    stack.cuda_graphs = v.find_bool("cuda_graphs").value_or(false);
    stack.continuous_batching = v.find_bool("continuous_batching").value_or(false);
    stack.step_overhead_us = v.get_number("step_overhead_us", 0, 1e7);
    stack.host_us_per_kernel = v.get_number("host_us_per_kernel", 0, 1e6);
    stack.matmul_efficiency = v.get_number("matmul_efficiency", 0.01, 1);
    stack.memory_efficiency = v.get_number("memory_efficiency", 0.01, 1);
    stack.runtime_reserved_GiB = v.get_number("runtime_reserved_GiB", 0, 1e4);
    for (const auto& item : s.member("sources").node().items()) {
      if (!v.has(item.key())) s.member("sources").fail(item.key(), "a field of values");
      stack.sources.emplace_back(
          item.key(), item.value().is_string() ? item.value().get<std::string>() : std::string());
    }
    sc.stacks.push_back(std::move(stack));
  }
  return sc;
}

serving_constants load_serving_constants() {
  const auto path = config_dir() / "model" / "serving.json";
  return parse_serving_constants(read_json_file(path), path.string());
}

serving_result predict_serving(const hardware_profile& hw, const workload& w, const constants& c,
                               const serving_constants& sc, const serving_options& o) {
  if (o.input_tokens < 1) throw input_error("--input-tokens: at least 1");
  if (o.output_tokens < 1) throw input_error("--output-tokens: at least 1");
  if (o.tensor < 1) throw input_error("--tensor: at least 1");
  if (o.pipeline < 1) throw input_error("--pipeline: at least 1");
  if (o.load != serving_load::max_throughput && !(o.load_value > 0)) {
    throw input_error("--" + std::string(to_string(o.load)) + ": more than 0");
  }
  const llm_shape s = shape_of(w, o);
  const serving_stack& stack = sc.stack_named(o.stack);
  if (o.load == serving_load::rate && !stack.continuous_batching) {
    throw input_error("--rate needs an engine that batches continuously (--stack " +
                      std::string("tensorrt-llm, vllm or sglang); ") + stack.name +
                      " runs static batches: use --batch or --concurrency");
  }
  const weight_precision& wp = weights_of(o.weights);
  const std::string kv_name = o.kv_cache.empty() ? "bf16" : o.kv_cache;
  const kv_precision& kv = kv_of(kv_name);
  const int group = o.tensor * o.pipeline;
  const int per_node = hw.gpus_per_node;
  const int gpus = o.gpus.value_or(hw.scalable ? group : per_node);
  if (gpus % group != 0) {
    throw input_error("--gpus " + std::to_string(gpus) + " is not a multiple of tensor x " +
                      "pipeline (" + std::to_string(group) + ")");
  }
  if (!hw.scalable && o.tensor > per_node) {
    throw input_error("--tensor " + std::to_string(o.tensor) + " spans more GPUs than a node of " +
                      hw.name + " has (" + std::to_string(per_node) + ")");
  }
  const std::string dtype16 = o.weights == "fp16" ? "fp16" : "bf16";
  const std::string dtype = serving_weight_dtype(o.weights);
  if (!hw.value(fig::peak_tflops, dtype) &&
      std::none_of(hw.gemm.begin(), hw.gemm.end(),
                   [&](const gemm_point& p) { return p.dtype == dtype; })) {
    throw input_error("--weights " + o.weights + " needs " + dtype + " GEMMs, which " +
                      (hw.gpu_model.empty() ? hw.name : hw.gpu_model) + " does not have");
  }
  const auto bandwidth = gpu_memory_GBps(hw);
  if (!bandwidth) {
    throw input_error(hw.origin + ": the profile has no GPU memory bandwidth (" +
                      vocabulary::key_of(fig::hbm) + ")");
  }
  const auto capacity_GiB = hw.value(fig::gpu_memory);
  if (!capacity_GiB) {
    throw input_error(hw.origin + ": the profile has no GPU memory capacity (" +
                      vocabulary::key_of(fig::gpu_memory) + ")");
  }

  serving_result r;
  r.workload = w.name;
  r.hardware = hw.name;
  r.stack = stack.name;
  r.weights = o.weights;
  r.kv_cache = kv_name;
  r.gpus = gpus;
  r.tensor = o.tensor;
  r.pipeline = o.pipeline;
  r.replicas = gpus / group;
  r.input_tokens = o.input_tokens;
  r.output_tokens = o.output_tokens;
  r.load = o.load;
  r.load_value = o.load_value;

  std::vector<std::string> assumed;
  machine m(hw, stack, sc, wp, kv.bytes, dtype, dtype16);
  m.hbm_Bps = *bandwidth * giga;
  if (!hw.find(fig::hbm)) assumed.push_back("GPU memory bandwidth (catalog peak x efficiency)");
  if (std::none_of(hw.gemm.begin(), hw.gemm.end(),
                   [&](const gemm_point& p) { return p.dtype == dtype; })) {
    assumed.push_back(dtype + " GEMM rate (catalog peak x efficiency)");
  }
  if (const auto eff = hw.value(fig::decode_gemm_efficiency, dtype)) {
    m.decode_roof_flops = hw.value(fig::peak_tflops, dtype).value_or(0) * *eff * tera;
  }
  m.launch_latency_s = hw.value(fig::launch_latency).value_or(c.default_launch_latency_us) * 1e-6;
  if (o.tensor > 1) {
    std::vector<std::string> comm_assumed;
    const detail::allreduce_model ar = detail::allreduce_for(hw, c, o.tensor, 1, comm_assumed);
    m.allreduce_busbw_Bps = ar.intra_busbw_GBps * giga;
    if (hw.allreduce_ranks == o.tensor) m.measured_busbw = ar.measured;
    if (const auto latency = hw.value(fig::allreduce_latency)) {
      m.allreduce_latency_s = *latency * 1e-6;
    } else {
      m.allreduce_latency_s = sc.allreduce_latency_us * 1e-6;
      if (m.measured_busbw.empty()) {
        assumed.push_back("small-message allreduce latency " + fmt(sc.allreduce_latency_us) +
                          " us (serving constants)");
      }
    }
    for (auto& a : comm_assumed) assumed.push_back(std::move(a));
  } else {
    m.allreduce_latency_s =
        hw.value(fig::allreduce_latency).value_or(sc.allreduce_latency_us) * 1e-6;
  }

  // ---- memory: weights, the live activations, the engine's reserve, the KV pool ----
  const double I = static_cast<double>(o.input_tokens);
  const double O = static_cast<double>(o.output_tokens);
  const double ends = s.P > 1 ? 1.0 : (s.tied ? 1.0 : 2.0);
  const double linear = s.stage_layers * (s.attention_params() + s.ffn_params());
  const double weight_bytes =
      linear * wp.bytes +
      (ends * s.vocab_params() + s.stage_layers * 2 * s.h) * activation_bytes_16;
  const double capacity = *capacity_GiB * gib;
  const double step_tokens = stack.max_batched_tokens > 0
                                 ? static_cast<double>(stack.max_batched_tokens)
                             : o.load == serving_load::batch || o.load == serving_load::concurrency
                                 ? std::ceil(o.load_value / r.replicas) * I
                                 : I;
  const double ffn_width = s.moe() ? (s.top_k + s.shared) * s.expert_ffn : s.ffn;
  const double activations =
      step_tokens * (live_hidden_vectors * s.h + (s.ffn_matrices() - 1) * ffn_width / s.T) *
          activation_bytes_16 +
      std::min(step_tokens, 1024.0) * s.vocab / s.T * logits_bytes;
  const double reserve = stack.runtime_reserved_GiB * gib;
  const double kv_token_bytes = s.kv_elements_per_token() * kv.bytes;
  const double pool =
      stack.fraction_of_free
          ? stack.memory_fraction * (capacity - weight_bytes - activations - reserve)
          : stack.memory_fraction * capacity - weight_bytes - activations - reserve;
  // A windowed layer keeps the pages its last W tokens straddle: the W - 1 before the newest and
  // that one, ceil((W - 1)/b) + 1 pages at most (vLLM's hybrid KV cache manager; TensorRT-LLM's
  // cyclic KV cache).
  const double page = stack.kv_block_tokens;
  const double pages = std::ceil((I + O) / page);
  const double windowed_pages =
      s.window > 0 ? std::min(pages, std::ceil((s.window - 1) / page) + 1) : pages;
  const double sequence_bytes =
      kv_token_bytes * page * ((1 - s.windowed_share) * pages + s.windowed_share * windowed_pages);
  double per_replica_max = std::max(0.0, std::floor(pool / sequence_bytes));
  if (stack.max_sequences > 0) {
    per_replica_max = std::min(per_replica_max, static_cast<double>(stack.max_sequences));
  }
  r.weights_GB_per_gpu = weight_bytes / giga;
  r.kv_cache_GB_per_gpu = std::max(0.0, pool) / giga;
  r.kv_bytes_per_token = 2 * s.L * s.kv_heads * s.d * kv.bytes;
  r.capacity_GB_per_gpu = capacity / giga;
  r.max_concurrency = per_replica_max * r.replicas;
  r.assumed = assumed;

  const double usable = stack.fraction_of_free ? capacity : stack.memory_fraction * capacity;
  if (weight_bytes + activations + reserve >= usable || per_replica_max < 1) {
    r.fits = false;
    r.limiting_component = component_id::memory_capacity;
    const std::string gb = " GB";
    if (weight_bytes + activations + reserve >= usable) {
      std::string advice = "weights " + fmt(weight_bytes / giga) + gb + " + activations and the " +
                           "engine's reserve " + fmt((activations + reserve) / giga) + gb + " > " +
                           fmt(usable / giga) + gb + " per GPU (" + stack.name + " plans " +
                           fmt(stack.memory_fraction * 100) + "% of " + fmt(capacity / giga) + gb +
                           ")";
      std::vector<std::string> fixes;
      // The smallest power-of-two split that leaves a fifth of the usable memory to the cache.
      const int most = hw.scalable ? 8 : per_node;
      for (int t = o.tensor * 2; t <= most; t *= 2) {
        if (static_cast<std::int64_t>(s.heads) % t != 0) break;
        if (weight_bytes * o.tensor / t + activations + reserve < usable * 0.8) {
          fixes.push_back("--tensor " + std::to_string(t));
          break;
        }
      }
      if (wp.bytes > 1 && hw.value(fig::peak_tflops, "fp8")) fixes.emplace_back("--weights fp8");
      if (wp.bytes > 0.6) fixes.emplace_back("--weights int4");
      if (!fixes.empty()) advice += ": " + join(fixes, ", or ");
      r.recommendations.push_back(advice);
    } else {
      r.recommendations.push_back(
          "the KV cache (" + fmt(std::max(0.0, pool) / giga) + gb + " per GPU) holds no " +
          "sequence of " + fmt(I + O) + " tokens (" + fmt(sequence_bytes / giga) + gb +
          "): --tensor " + std::to_string(o.tensor * 2) + ", --kv-cache fp8 or fewer tokens");
    }
    return r;
  }

  // ---- the load ----
  const double replicas = r.replicas;
  steady_state st;
  double in_flight = 0;  // per replica
  if (o.load == serving_load::batch || !stack.continuous_batching) {
    double b = o.load == serving_load::max_throughput ? per_replica_max
                                                      : std::ceil(o.load_value / replicas);
    if (b > per_replica_max) {
      r.notes.push_back(fmt(b) + " sequences per replica do not fit its KV cache (" +
                        fmt(per_replica_max) + " at " + fmt(I + O) + " tokens): the batch is " +
                        "split into waves of " + fmt(per_replica_max));
    }
    const double wave = std::max(1.0, std::min(b, per_replica_max));
    const double waves = std::ceil(b / wave);
    // All prompts of a wave in one prefill (chunked where the engine chunks), then O - 1
    // decode steps at the wave's batch with the mean context I + O/2.
    st.prefill = prefill_step(m, s, wave, I);
    double prefill_total = st.prefill.seconds;
    if (stack.max_batched_tokens > 0 && wave * I > stack.max_batched_tokens) {
      const double chunks = std::ceil(wave * I / stack.max_batched_tokens);
      const replica_step piece = prefill_step(m, s, wave / chunks, I);
      prefill_total = chunks * piece.seconds;
    }
    st.decode = decode_step(m, s, wave, I + O / 2);
    st.tpot_s = st.decode.seconds;
    // Under chunked prefill the prompts finish one after another: the mean first token comes
    // halfway through; a static batch gets every first token at the end.
    st.ttft_s =
        stack.max_batched_tokens > 0 ? prefill_total * (wave + 1) / (2 * wave) : prefill_total;
    const double batch_time = prefill_total + (O - 1) * st.tpot_s;
    st.e2e_s = st.ttft_s + (O - 1) * st.tpot_s;
    st.requests_per_s = wave / batch_time;
    st.prefill_s = prefill_total / wave;
    st.decoding = wave;
    in_flight = wave;
    if (waves > 1) st.ttft_s += (waves - 1) / 2 * batch_time;  // the later waves wait
  } else {
    const double asked = o.load == serving_load::max_throughput ? per_replica_max
                         : o.load == serving_load::concurrency  ? o.load_value / replicas
                                                                : 0;
    // The most a replica carries: every sequence the KV cache and the engine allow.
    const steady_state full = closed_loop(m, s, per_replica_max, I, O);
    r.max_requests_per_s = full.requests_per_s * replicas;
    if (o.load == serving_load::rate) {
      const double lambda = o.load_value / replicas;
      st = at_rate(m, s, lambda, I, O, 1);
      if (!st.stable || lambda >= full.requests_per_s || st.e2e_s * lambda > per_replica_max) {
        r.over_capacity = true;
        st = full;
      }
    } else {
      if (asked > per_replica_max) {
        r.notes.push_back(fmt(asked) + " sequences per replica do not fit its KV cache (" +
                          fmt(per_replica_max) + " at " + fmt(I + O) +
                          " tokens): the rest wait in the queue");
      }
      st = closed_loop(m, s, std::min(asked, per_replica_max), I, O);
      if (asked > per_replica_max && st.requests_per_s > 0) {
        // The requests the cache cannot hold wait their turn: (C - max) / lambda (Little's law
        // on the queue), before their first token.
        const double queued = (asked - per_replica_max) / st.requests_per_s;
        st.ttft_s += queued;
        st.e2e_s += queued;
      }
    }
    in_flight = std::min(st.requests_per_s * st.e2e_s, per_replica_max);
  }
  if (r.max_requests_per_s == 0) r.max_requests_per_s = st.requests_per_s * replicas;

  r.requests_per_s = st.requests_per_s * replicas;
  r.output_tokens_per_s = r.requests_per_s * O;
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / gpus;
  r.ttft_ms = st.ttft_s * 1e3;
  r.tpot_ms = O > 1 ? st.tpot_s * 1e3 : 0;
  r.e2e_latency_ms = st.e2e_s * 1e3;
  r.concurrency = in_flight * replicas;
  r.prefill = phase_of(st.prefill, st.prefill.stage.weight_bytes > 0 ? I : 0);
  r.decode = phase_of(st.decode, st.decoding);

  // The limit: what takes the most of a request's GPU time, its prefill and its share of the
  // decode steps it rides.
  const double share = st.decoding > 0 ? (O - 1) / st.decoding : 0;
  step_time per_request;
  const auto add = [&](const replica_step& step, double times) {
    const double scale = step.seconds / std::max(step.stage.total(), 1e-30) * times;
    per_request.compute_s += step.stage.compute_s * scale;
    per_request.memory_s += step.stage.memory_s * scale;
    per_request.communication_s += step.stage.communication_s * scale;
    per_request.overhead_s += (step.seconds - step.stage.total() + step.stage.overhead_s) * times;
  };
  add(st.prefill, st.prefill.seconds > 0 ? st.prefill_s / st.prefill.seconds : 0);
  add(st.decode, share);
  r.limiting_component = limit_of(per_request);

  if (r.over_capacity) {
    r.notes.push_back(fmt(o.load_value) + " requests/s exceed what " + fmt(replicas) +
                      " replica(s) carry at " + fmt(I) + " in / " + fmt(O) + " out (at most " +
                      fmt(r.max_requests_per_s) + " requests/s): the queue grows without bound");
  }
  if (o.ttft_ms) r.ttft_met = !r.over_capacity && r.ttft_ms <= *o.ttft_ms;
  if (o.tpot_ms) r.tpot_met = !r.over_capacity && r.tpot_ms <= *o.tpot_ms;

  // What would move the limit.
  const bool kv_bound = in_flight >= per_replica_max * 0.99 &&
                        (stack.max_sequences == 0 || per_replica_max < stack.max_sequences);
  switch (r.limiting_component) {
    case component_id::gpu_memory:
      if (kv_bound) {
        r.recommendations.push_back(
            "the KV cache holds " + fmt(per_replica_max) + " sequences of " + fmt(I + O) +
            " tokens per replica" +
            (kv_name != "fp8" ? ": --kv-cache fp8 holds twice as many" : "") +
            "; more GPUs per replica (--tensor) leave more memory for it");
      }
      if (wp.bytes > 1 && hw.value(fig::peak_tflops, "fp8")) {
        r.recommendations.emplace_back(
            "decode streams the weights every step: --weights fp8 halves those bytes");
      } else if (wp.bytes > 0.6) {
        r.recommendations.emplace_back(
            "decode streams the weights every step: --weights int4 reads a quarter of them");
      }
      break;
    case component_id::gpu_compute:
      if (dtype != "fp8" && dtype != "nvfp4" && hw.value(fig::peak_tflops, "fp8")) {
        r.recommendations.emplace_back("the GEMMs bind: --weights fp8 runs them at the fp8 rate");
      } else {
        r.recommendations.emplace_back("the GEMMs bind: more GPUs (replicas) add throughput");
      }
      break;
    case component_id::communication:
      r.recommendations.push_back("the tensor group's allreduces bind: --tensor " +
                                  std::to_string(std::max(1, o.tensor / 2)) +
                                  " with more replicas, if the weights fit");
      break;
    case component_id::cpu:
      r.recommendations.push_back(
          stack.cuda_graphs ? "the engine's per-step overhead binds: larger batches amortise it"
                            : "issuing kernels from the host binds: an engine with CUDA graphs "
                              "(vllm, sglang, tensorrt-llm) removes it");
      break;
    default:
      break;
  }
  if (r.ttft_met && !*r.ttft_met) {
    r.recommendations.push_back("time to first token " + fmt(r.ttft_ms) + " ms is over the " +
                                fmt(*o.ttft_ms) +
                                " ms target: fewer sequences in flight, or more replicas");
  }
  if (r.tpot_met && !*r.tpot_met) {
    r.recommendations.push_back("time per output token " + fmt(r.tpot_ms) + " ms is over the " +
                                fmt(*o.tpot_ms) +
                                " ms target: a smaller batch, or a larger --tensor");
  }
  return r;
}

json to_json(const serving_result& r) {
  const auto phase = [](const serving_phase& p) {
    return json{{"time_ms", p.time_ms},
                {"gemm_ms", p.gemm_ms},
                {"attention_ms", p.attention_ms},
                {"communication_ms", p.communication_ms},
                {"overhead_ms", p.overhead_ms},
                {"tokens", p.tokens},
                {"weight_bytes", p.weight_bytes},
                {"kv_bytes", p.kv_bytes},
                {"flops", p.flops},
                {"limiting_component", p.limiting_component}};
  };
  // A job that does not fit, or a rate beyond capacity, has no rate: null, not a number.
  const bool has_rate = r.fits && !r.over_capacity;
  const auto rate = [&](double v) { return has_rate ? json(v) : json(nullptr); };
  json serving = {{"output_tokens_per_s", rate(r.output_tokens_per_s)},
                  {"output_tokens_per_s_per_gpu", rate(r.output_tokens_per_s_per_gpu)},
                  {"requests_per_s", rate(r.requests_per_s)},
                  {"max_requests_per_s", r.fits ? json(r.max_requests_per_s) : json(nullptr)},
                  {"ttft_ms", rate(r.ttft_ms)},
                  {"tpot_ms", rate(r.tpot_ms)},
                  {"e2e_latency_ms", rate(r.e2e_latency_ms)},
                  {"concurrency", rate(r.concurrency)},
                  {"max_concurrency", r.max_concurrency},
                  {"weights_GB_per_gpu", r.weights_GB_per_gpu},
                  {"kv_cache_GB_per_gpu", r.kv_cache_GB_per_gpu},
                  {"kv_bytes_per_token", r.kv_bytes_per_token},
                  {"capacity_GB_per_gpu", r.capacity_GB_per_gpu},
                  {"fits", r.fits},
                  {"over_capacity", r.over_capacity},
                  {"limiting_component", r.limiting_component}};
  if (r.fits) {
    serving["prefill"] = phase(r.prefill);
    serving["decode"] = phase(r.decode);
  }
  if (!r.interval.empty()) {
    json interval = {{"coverage", band_coverage}, {"basis", r.interval_basis}};
    for (const auto& [figure, range] : r.interval) {
      interval[figure] = {{"low", range.first}, {"high", range.second}};
    }
    serving["interval"] = std::move(interval);
  }
  if (r.ttft_met) serving["ttft_met"] = *r.ttft_met;
  if (r.tpot_met) serving["tpot_met"] = *r.tpot_met;
  return json{{"schema", serving_schema},
              {"workload", r.workload},
              {"hardware", r.hardware},
              {"stack", r.stack},
              {"weights", r.weights},
              {"kv_cache", r.kv_cache},
              {"gpus", r.gpus},
              {"tensor", r.tensor},
              {"pipeline", r.pipeline},
              {"replicas", r.replicas},
              {"input_tokens", r.input_tokens},
              {"output_tokens", r.output_tokens},
              {"load", {{"kind", to_string(r.load)}, {"value", r.load_value}}},
              {"serving", std::move(serving)},
              {"recommendations", r.recommendations},
              {"notes", r.notes},
              {"assumed", r.assumed}};
}

}  // namespace gpubench::model
