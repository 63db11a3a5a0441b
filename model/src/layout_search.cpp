// size --search (docs/model.md, "Layout search"): every tensor x pipeline x data split of the
// job's GPUs, micro-batch, checkpointing and data-parallel strategy that keeps the job's samples
// per optimizer step, sized without advice and ranked.
#include <algorithm>
#include <cstdint>

#include "components.hpp"
#include "gpubench/core/errors.hpp"
#include "presets.hpp"

namespace gpubench::model {

namespace {

std::vector<int> divisors(std::int64_t n) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= n && d <= 1 << 20; ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

}  // namespace

std::vector<layout> search_layouts(const hardware_profile& hw, const workload& w,
                                   const constants& c, const run_options& options) {
  // The machine and the job's batch as the plain sizing would take them.
  run_options plain = options;
  plain.advise = false;
  workload as_given = w;
  as_given.tensor = 1;
  as_given.pipeline = 1;
  as_given.sequence_parallel = false;
  as_given.expert = 1;
  as_given.expert_tensor = 1;
  as_given.context = 1;
  as_given.virtual_pipeline = 1;
  const sizing base = predict(hw, as_given, c, plain);
  const int gpus_per_node = base.gpus_per_node;
  const int ranks = base.gpus_per_node * base.nodes;
  // The job's samples per optimizer step (a context-parallel group shares its samples).
  const std::int64_t per_step = static_cast<std::int64_t>(base.batch_per_gpu) *
                                base.gradient_accumulation * ranks / w.context;

  const bool splits = w.family == "transformer" && !w.model.preset.empty();
  const std::int64_t heads = splits ? static_cast<std::int64_t>(w.model.params.at("heads")) : 1;
  const std::int64_t kv_heads = splits ? detail::key_value_heads(w.model.params) : 1;
  const std::int64_t layers = splits ? static_cast<std::int64_t>(w.model.params.at("layers")) : 1;
  const std::int64_t seq_len = splits ? static_cast<std::int64_t>(w.model.params.at("seq_len")) : 0;
  // Context splits are tried for long sequences only, as Megatron-Core's long-context recipes
  // use them (8k tokens and up): a shorter sequence's split only adds K/V traffic. Beyond a
  // node's 8 GPUs every layer's K/V would cross the network: not tried.
  constexpr std::int64_t long_sequence = 8192;
  constexpr int max_context = 8;
  const int experts = expert_count(w.model);
  const bool can_recompute = w.model.flags.contains("activation_checkpointing");
  // Selective recomputation only changes anything where attention is not fused.
  const bool can_select =
      w.model.flags.contains("selective_checkpointing") && !w.model.flags.at("flash_attention");
  enum class recompute { none, selective, full };

  std::vector<layout> found;
  for (const int t : divisors(gpus_per_node)) {
    if (heads % t != 0 || kv_heads % t != 0) continue;
    // Pipelines that divide the layers, and those Megatron splits unevenly ((layers + 2) / 2
    // stages at most).
    for (const int p : divisors(ranks / t)) {
      if (ranks % (t * p) != 0) continue;
      if (p > 1 && layers % p != 0 && !detail::split_unevenly(layers, p)) continue;
      const int data = ranks / (t * p);
      // Context parallelism: C of the data-parallel GPUs share each sequence.
      for (const int cp : divisors(data)) {
        if (cp > 1 &&
            (!splits || seq_len < long_sequence || seq_len % cp != 0 || cp > max_context)) {
          continue;
        }
        const int replicas = data / cp;
        if (per_step % replicas != 0) continue;
        const std::int64_t per_replica = per_step / replicas;
        for (const int micro : divisors(per_replica)) {
          if (micro > base.batch_per_gpu * 4 || micro > 4096) break;
          for (const recompute r : {recompute::none, recompute::selective, recompute::full}) {
            if ((r == recompute::full && !can_recompute) ||
                (r == recompute::selective && !can_select)) {
              continue;
            }
            // Expert parallelism: a divisor of the experts and of a stage's tensor x data GPUs.
            std::vector<int> expert_splits{1};
            if (experts > 0) {
              expert_splits.clear();
              for (const int e : divisors(experts)) {
                if ((t * data) % e == 0) expert_splits.push_back(e);
              }
            }
            // Expert tensor parallelism: none, or the job's own split where it still divides.
            std::vector<int> expert_tensor_splits{1};
            if (w.expert_tensor > 1) expert_tensor_splits.push_back(w.expert_tensor);
            for (const int e : expert_splits)
              for (const int k : expert_tensor_splits)
                for (const detail::strategy& how : detail::all_strategies()) {
                  if (k > 1 && ((t * data) % (e * k) != 0 || gpus_per_node % k != 0)) continue;
                  // A row that differs from another only across nodes (HSDP) adds nothing on one.
                  if (how.across_nodes && base.nodes == 1) continue;
                  // One replica: nothing to shard over, the plain exchange stands for every row.
                  if (data == 1 && how.kind != parallel_strategy::ddp) continue;
                  const parallel_strategy strategy = how.kind;
                  workload candidate = w;
                  candidate.tensor = t;
                  candidate.pipeline = p;
                  candidate.sequence_parallel = t > 1;
                  candidate.expert = e;
                  candidate.expert_tensor = k;
                  candidate.virtual_pipeline = 1;
                  candidate.strategy = strategy;
                  candidate.gradient_accumulation = static_cast<int>(per_replica / micro);
                  if (can_recompute) {
                    candidate.model.flags["activation_checkpointing"] = r == recompute::full;
                  }
                  if (can_select) {
                    candidate.model.flags["selective_checkpointing"] = r == recompute::selective;
                  }
                  run_options at = plain;
                  at.batch = micro;
                  try {
                    const sizing s = predict(hw, candidate, c, at);
                    found.push_back({t, p, data, micro, candidate.gradient_accumulation,
                                     r == recompute::full, r == recompute::selective, strategy,
                                     s.memory.fits, s.memory.within_headroom, s.memory.per_gpu_GiB,
                                     s.predicted_samples_per_s, s.limiting_component, e, cp, k});
                  } catch (const input_error&) {
                    // A split the machine cannot hold (a tensor group across nodes): not a layout.
                  }
                }
          }
        }
      }
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const layout& a, const layout& b) {
    if (a.within_headroom != b.within_headroom) return a.within_headroom;
    if (a.fits != b.fits) return a.fits;
    if (a.fits) return a.predicted_samples_per_s > b.predicted_samples_per_s;
    return a.per_gpu_GiB < b.per_gpu_GiB;  // of those that do not fit, the nearest first
  });
  return found;
}

json to_json(const layout& l) {
  return {{"tensor", l.tensor},
          {"pipeline", l.pipeline},
          {"data", l.data},
          {"micro_batch", l.micro_batch},
          {"gradient_accumulation", l.accumulation},
          {"activation_checkpointing", l.activation_checkpointing},
          {"selective_checkpointing", l.selective_checkpointing},
          {"strategy", l.strategy},
          {"expert", l.expert},
          {"expert_tensor", l.expert_tensor},
          {"context", l.context},
          {"fits", l.fits},
          {"within_headroom", l.within_headroom},
          {"per_gpu_GiB", l.per_gpu_GiB},
          {"predicted_samples_per_s", l.fits ? json(l.predicted_samples_per_s) : json()},
          {"limiting_component", l.limiting_component}};
}

}  // namespace gpubench::model
