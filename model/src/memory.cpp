// GPU memory per GPU (docs/model.md, "Memory"): the training state each strategy keeps on a GPU,
// what the forward pass saves for the backward pass, the buffers that live part of the step and
// the framework's own share; against the GPU's capacity.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "components.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model::detail {

namespace {

double in_GiB(double bytes) {
  return vocabulary::convert(bytes, vocabulary::units::bytes, vocabulary::units::GiB);
}

std::string split_text(int shards) {
  return shards > 1 ? ", split over " + std::to_string(shards) + " GPUs" : "";
}

}  // namespace

double parameter_bytes(const workload& w, const constants& c, const std::string& precision) {
  const training_precision& format = precision_of(precision);
  const bool sixteen_bit = (format.mixed && !c.memory.fp32_parameters) ||
                           sixteen_bit_parameters(w, precision) ||
                           master_copy_parameters(w, precision);
  return sixteen_bit ? format.activation_bytes : 4.0;
}

memory_verdict memory_per_gpu(const hardware_profile& hw, const workload& w, const constants& c,
                              const std::string& precision, int batch, int gpus_per_node,
                              int nodes) {
  workload at = w;
  at.precision = precision;
  return memory_per_gpu(hw, w, c, precision, expand(at, batch), batch,
                        data_parallel_group(w, gpus_per_node, nodes));
}

memory_verdict memory_per_gpu(const hardware_profile& hw, const workload& w, const constants& c,
                              const std::string& precision, const step_ops& ops, int batch,
                              const data_parallel& dp) {
  const strategy& how = strategy_of(w.strategy);
  const strategy::sharding split = how.shards(dp.per_node, dp.nodes);
  const double params = ops.params;
  const double act = activation_bytes(precision);
  const training_precision& format = precision_of(precision);
  const bool mixed = format.mixed;
  const optimizer_kind& optimizer = optimizer_of(w.optimizer);

  memory_verdict m;
  double total = 0;
  const auto add = [&](const char* name, double bytes, std::string detail) {
    m.parts.push_back(model::memory_part{name, in_GiB(bytes), std::move(detail)});
    total += bytes;
  };
  // The stack's layout (constants.json "stacks", "memory"). torch.amp keeps fp32 parameters and
  // gradients, 4 + 4 bytes, plus the optimizer's fp32 state (Adam: 8): 16 bytes per parameter as
  // in ZeRO's accounting (Rajbhandari et al. 2020, section 3.1). Megatron-Core keeps the weights
  // in the compute precision, fp32 main gradients, and an fp32 master copy beside the optimizer's
  // state, sharded with it: 18 bytes, 6 + 12/d under its distributed optimizer.
  const memory_layout& layout = c.memory;
  // A model kept in 16-bit (parameter_precision "weights") has no fp32 copy at all: weights,
  // gradients and the optimizer's moments in its precision.
  const bool sixteen_bit = sixteen_bit_parameters(w, precision);
  // apex amp O2 casts the model itself and keeps the fp32 master copy in the optimizer, as
  // Megatron-Core does; no autocast runs, so it caches no weight copies.
  const bool cast_model = master_copy_parameters(w, precision);
  const bool master = mixed && (!layout.fp32_parameters || cast_model) && !sixteen_bit;
  // Adapters (LoRA, QLoRA) train `params`; the frozen base model sits beside them in the bytes
  // its method keeps it in, never with gradients or optimizer state.
  const std::string frozen = ops.frozen_params > 0
                                 ? " beside the frozen " + fmt(ops.frozen_params / 1e6) + "M (" +
                                       GiB_text(in_GiB(ops.frozen_weight_bytes)) + ", " +
                                       w.finetune.method + ")"
                                 : "";
  // Routed experts are replicated over the expert data-parallel group only, ranks / (P x E x K)
  // GPUs against the dense parameters' ranks / (P x T x C) (Megatron-Core's expert data
  // parallelism; FSDP2 shards them over its ep_shard mesh): a part the strategy shards over s
  // GPUs is split over s x T x C / (E x K) of them for the experts.
  const double experts = std::min(ops.expert_params, params);
  const auto per_gpu = [&](double bytes_per_param, int shards) {
    const double expert_shards = shards > 1 ? expert_group(w, shards) : 1;
    return (params - experts) * bytes_per_param / shards +
           experts * bytes_per_param / expert_shards;
  };
  const std::string expert_text = experts > 0
                                      ? " (" + fmt(experts / 1e6) +
                                            "M of them routed experts, split over the expert "
                                            "data-parallel GPUs only)"
                                      : "";
  const double weight_bytes = parameter_bytes(w, c, precision);
  add("weights", ops.frozen_weight_bytes / split.weights + per_gpu(weight_bytes, split.weights),
      fmt(params / 1e6) + "M " + (weight_bytes < 4 ? "16-bit" : "fp32") + " trained parameters" +
          frozen + split_text(split.weights) + expert_text);
  const double grad_bytes = gradient_bytes(w, precision);
  add("gradients", per_gpu(grad_bytes, split.gradients),
      (grad_bytes < 4 ? "16-bit" : "fp32") + split_text(split.gradients));
  const double state_bytes = sixteen_bit ? optimizer.state_bytes / 4.0 * act
                                         : optimizer.state_bytes + (master ? 4.0 : 0.0);
  add("optimizer_state", per_gpu(state_bytes, split.optimizer),
      (master ? "fp32 master copy (4 B) and " : "") + w.optimizer + ": " + fmt(state_bytes) +
          " B per parameter" + split_text(split.optimizer));
  if (ops.saved_activation_bytes >= 0) {
    // Transformer Engine saves the linear layers' inputs in their cast copy (c bytes an element).
    const bool quantized = layout.quantized_saved_inputs && format.casts_linear_layers();
    const double narrower =
        quantized ? ops.saved_linear_input_bytes * (1 - format.cast_bytes() / act) : 0.0;
    add("activations", ops.saved_activation_bytes - narrower,
        "saved for the backward pass at micro-batch " + std::to_string(batch) +
            (quantized ? ", the linear layers' inputs in " + std::string(format.gemm_dtype)
                       : std::string()) +
            (ops.offloaded_activation_bytes > 0
                 ? "; " + GiB_text(in_GiB(ops.offloaded_activation_bytes)) +
                       " of each micro-batch's wait in host memory"
                 : std::string()));
  } else {
    m.unknown.push_back("activations (a custom model states no saved activations)");
  }
  double temporary = ops.transient_bytes;
  std::string why = ops.transient_bytes > 0 ? "logits' gradient or a recomputed layer" : "";
  const auto also = [&why](const std::string& text) { why += (why.empty() ? "" : "; ") + text; };
  if (how.gathers_layers) {
    // Two units gathered at once (the one computing and the one prefetched) in the compute
    // precision, and one unit's unsharded gradient before its reduce-scatter.
    temporary += ops.largest_group_params * (2 * act + 4);
    also("two gathered units and one unit's gradient");
  } else {
    if (split.gradients == 1 && dp.ranks() > 1 && layout.gradient_buckets) {
      if (cast_model) {
        // apex's DistributedDataParallel (and DeepSpeed's) flattens a bucket for its allreduce
        // and frees it after (apex/parallel/distributed.py, flat_dist_call): no second copy.
        temporary += 2 * c.ddp_bucket_bytes;
        also("flattened allreduce buckets");
      } else {
        // DDP's buckets hold a second copy of the gradients (gradient_as_bucket_view=False, the
        // default: PyTorch's DistributedDataParallel documentation).
        temporary += params * grad_bytes;
        also("DDP's gradient buckets");
      }
    } else if (split.gradients > 1 && layout.gradient_buckets) {
      temporary += 2 * c.ddp_bucket_bytes;
      also("reduce-scatter buckets");
    }
    // torch.autocast caches each weight's half-precision copy for the whole forward pass.
    if (mixed && layout.autocast_copies && !sixteen_bit && !cast_model) {
      temporary += params * act;
      also("autocast's half-precision weight copies");
    }
  }
  if (layout.fp8_weight_copies && format.casts_linear_layers()) {
    // One narrow copy per parameter, as the linear layers hold nearly all of a transformer's
    // parameters.
    temporary += params * format.cast_bytes() / split.weights;
    also("Transformer Engine's " + std::string(format.gemm_dtype) + " weight copies");
  }
  add("temporary", temporary, why);
  const double reserved = vocabulary::convert(c.framework_reserved_GiB, vocabulary::units::GiB,
                                              vocabulary::units::bytes) +
                          c.allocator_fragmentation * total;
  add("framework", reserved,
      "CUDA context, library workspaces and communication buffers (" +
          GiB_text(c.framework_reserved_GiB) + ") and the caching allocator's fragmentation (" +
          fmt(c.allocator_fragmentation * 100) + "%)");
  m.per_gpu_GiB = in_GiB(total);
  m.headroom = c.memory_headroom;
  if (const figure* headroom = hw.find(fig::memory_headroom)) {
    m.headroom = headroom->value;
    m.headroom_basis = headroom->from;
  }
  if (const figure* capacity = hw.find(fig::gpu_memory)) {
    m.capacity_GiB = capacity->value;
    m.capacity_basis = capacity->from;
    m.fits = m.per_gpu_GiB <= capacity->value;
    m.within_headroom = m.per_gpu_GiB <= capacity->value * m.headroom;
  }
  return m;
}

std::string GiB_text(double value) {
  return fmt(value) + " " + std::string(vocabulary::units::GiB.symbol);
}

namespace {

// "within the 90% headroom", the words every remedy's verdict uses.
std::string headroom_text(double headroom) {
  return "the " + fmt(headroom * 100) + "% headroom";
}

std::string rate_text(double rate) {
  return fmt(rate) + " samples/s";
}

struct remedy {
  std::string what;
  workload changed;
  int batch = 1;
};

// The fewest nodes at or above `from` on which the changed job holds within the headroom, by
// the memory model itself (the state shrinks as the GPUs grow; the rest does not): none when even
// `most` nodes do not.
// Node counts are searched in steps of the fewest nodes the job's splits fit in whole (8 nodes
// for 8 x 8 on 8-GPU nodes): another count does not divide the job's GPUs.
std::optional<int> fewest_nodes(const memory_of& memory_with, const workload& w, int batch,
                                int gpus_per_node, int from, int most) {
  const int step = node_granule(w, gpus_per_node);
  int lo = (from + step - 1) / step;
  int hi = std::max(lo, (most + step - 1) / step);
  if (!memory_with(w, batch, hi * step).within_headroom) return std::nullopt;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (memory_with(w, batch, mid * step).within_headroom) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo * step;
}

}  // namespace

void advise_memory(const sizing& s, const workload& w, const memory_of& memory_with,
                   const rate_of& rate_with, std::vector<std::string>& advice) {
  const double capacity = s.memory.capacity_GiB.value_or(0);
  const double headroom = s.memory.headroom;
  const int nodes = s.nodes;
  const int ranks = s.gpus_per_node * s.nodes;
  const double now = s.predicted_samples_per_s;  // 0: the job does not fit
  std::vector<model::memory_part> parts = s.memory.parts;
  std::sort(parts.begin(), parts.end(),
            [](const model::memory_part& a, const model::memory_part& b) { return a.GiB > b.GiB; });
  std::string largest;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, parts.size()); ++i) {
    largest += (i ? ", " : "") + parts[i].name + " " + GiB_text(parts[i].GiB);
  }
  const std::string share = fmt(s.memory.per_gpu_GiB / capacity * 100) + "%";
  if (s.memory.fits) {
    advice.push_back("GPU memory is tight: " + GiB_text(s.memory.per_gpu_GiB) + " per GPU of " +
                     GiB_text(capacity) + " (" + share + ") is above " + headroom_text(headroom) +
                     " (gpu.memory_headroom): the caching allocator's fragmentation, NCCL's "
                     "buffers and a step's peaks can run it out of memory (" +
                     largest + ")");
  } else {
    advice.push_back("the job does not fit in GPU memory: " + GiB_text(s.memory.per_gpu_GiB) +
                     " per GPU of " + GiB_text(capacity) + " (" + largest + ")");
  }
  // A remedy is printed only where the model predicts it holds within the headroom, with the
  // rate the model predicts for it; on a job that runs, only where that rate is not lower.
  const auto offer = [&](const std::string& what, const workload& changed, int batch,
                         int at_nodes) {
    const memory_verdict v = memory_with(changed, batch, at_nodes);
    if (!v.within_headroom) return false;
    const double rate = rate_with(changed, batch, at_nodes);
    if (rate <= 0 || (now > 0 && rate < now)) return false;
    advice.push_back(what + ": " + GiB_text(v.per_gpu_GiB) + " per GPU, within " +
                     headroom_text(headroom) + ": " + rate_text(rate) +
                     (now > 0 ? " (now " + rate_text(now) + ")" : ""));
    return true;
  };

  // The largest micro-batch within the headroom; accumulation keeps the batch per optimizer step.
  int fitting = 0;
  for (int lo = 1, hi = s.batch_per_gpu - 1; lo <= hi;) {
    const int mid = lo + (hi - lo) / 2;
    if (memory_with(w, mid, nodes).within_headroom) {
      fitting = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const int per_step = s.batch_per_gpu * s.gradient_accumulation;
  if (fitting > 0) {
    workload accumulating = w;
    accumulating.gradient_accumulation = (per_step + fitting - 1) / fitting;
    offer("micro-batch " + std::to_string(fitting) + " with " +
              std::to_string(accumulating.gradient_accumulation) + " accumulated (about " +
              std::to_string(per_step) + " samples per GPU per optimizer step, as now)",
          accumulating, fitting, nodes);
  }
  // The what-ifs at this micro-batch: FSDP, checkpointing, and both.
  const auto flag = w.model.flags.find("activation_checkpointing");
  const bool can_recompute = flag != w.model.flags.end() && !flag->second;
  std::vector<remedy> changes;
  workload sharded = w;
  sharded.strategy = parallel_strategy::fsdp;
  const bool can_shard = w.strategy != parallel_strategy::fsdp && ranks > 1;
  if (can_shard) {
    changes.push_back({"FSDP (ZeRO-3: parameters, gradients and optimizer state split over all " +
                           std::to_string(ranks) + " GPUs)",
                       sharded, s.batch_per_gpu});
  }
  workload sharded_recomputing = sharded;
  if (can_recompute) {
    workload recomputing = w;
    recomputing.model.flags["activation_checkpointing"] = true;
    changes.push_back(
        {"full activation checkpointing (one more forward pass, about a third more "
         "compute)",
         recomputing, s.batch_per_gpu});
    sharded_recomputing.model.flags["activation_checkpointing"] = true;
    if (can_shard) {
      changes.push_back({"both, FSDP and checkpointing", sharded_recomputing, s.batch_per_gpu});
    }
  }
  std::vector<std::string> not_enough;
  for (const remedy& r : changes) {
    if (!offer(r.what, r.changed, r.batch, nodes)) {
      not_enough.push_back(r.what.substr(0, r.what.find(" (")) + " (" +
                           GiB_text(memory_with(r.changed, r.batch, nodes).per_gpu_GiB) + ")");
    }
  }
  if (!s.memory.fits && !not_enough.empty()) {
    advice.push_back("not enough on " + std::to_string(ranks) + " GPUs (" +
                     headroom_text(headroom) + " is " + GiB_text(capacity * headroom) +
                     "): " + join(not_enough));
  }
  if (s.memory.fits) return;  // a job that runs keeps its GPUs

  // More GPUs: under FSDP the training state shrinks as 1/N, the rest does not. The fewest
  // nodes on which each sharded variant holds, found by the memory model itself.
  constexpr int most_nodes = 4096;
  std::vector<std::pair<const workload*, std::string>> grown{{&sharded, "under FSDP"}};
  if (can_recompute) grown.emplace_back(&sharded_recomputing, "under FSDP with checkpointing");
  bool any = false;
  for (const auto& [changed, name] : grown) {
    if (memory_with(*changed, s.batch_per_gpu, nodes).within_headroom) {
      any = true;  // holds on these GPUs already: said above
      continue;
    }
    const auto fewest = fewest_nodes(memory_with, *changed, s.batch_per_gpu, s.gpus_per_node,
                                     nodes + 1, std::max(most_nodes, nodes + 1));
    if (!fewest) continue;
    any = true;
    offer(name + ", " + std::to_string(*fewest * s.gpus_per_node) + " GPUs (" +
              std::to_string(*fewest) + " nodes of " + std::to_string(s.gpus_per_node) + ")",
          *changed, s.batch_per_gpu, *fewest);
  }
  if (!any && fitting == 0) {
    const memory_verdict lean =
        memory_with(can_recompute ? sharded_recomputing : sharded, s.batch_per_gpu, nodes);
    double state = 0;
    for (const model::memory_part& part : lean.parts) {
      if (part.name == "weights" || part.name == "gradients" || part.name == "optimizer_state") {
        state += part.GiB;
      }
    }
    advice.push_back(
        "however many GPUs share the training state, the activations and buffers alone take " +
        GiB_text(lean.per_gpu_GiB - state) + " at this micro-batch: a smaller micro-batch first");
  }
}

}  // namespace gpubench::model::detail
