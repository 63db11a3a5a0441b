// GPU memory per GPU (docs/model.md, "Memory"): the training state each strategy keeps on a GPU,
// what the forward pass saves for the backward pass, the buffers that live part of the step and
// the framework's own share; against the GPU's capacity.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "components.hpp"

namespace gpubench::model::detail {

namespace {

std::string split_text(int shards) {
  return shards > 1 ? ", split over " + std::to_string(shards) + " GPUs" : "";
}

}  // namespace

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
  const bool mixed = precision_of(precision).mixed;
  const optimizer_kind& optimizer = optimizer_of(w.optimizer);

  memory_verdict m;
  double total = 0;
  const auto add = [&](const char* name, double bytes, std::string detail) {
    m.parts.push_back(model::memory_part{name, bytes / 1e9, std::move(detail)});
    total += bytes;
  };
  // Mixed precision keeps fp32 parameters (torch.amp's parameters; Megatron's master copy) and
  // fp32 gradients: 4 + 4 bytes, plus the optimizer's fp32 state (Adam: 8), 16 bytes per
  // parameter for Adam as in ZeRO's accounting (Rajbhandari et al. 2020, section 3.1).
  add("weights", params * 4 / split.weights,
      fmt(params / 1e6) + "M fp32 parameters" + split_text(split.weights));
  add("gradients", params * 4 / split.gradients, "fp32" + split_text(split.gradients));
  add("optimizer_state", params * optimizer.state_bytes / split.optimizer,
      w.optimizer + ": " + fmt(optimizer.state_bytes) + " B per parameter" +
          split_text(split.optimizer));
  if (ops.saved_activation_bytes >= 0) {
    add("activations", ops.saved_activation_bytes,
        "saved for the backward pass at micro-batch " + std::to_string(batch));
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
    if (split.gradients == 1 && dp.ranks() > 1) {
      // DDP's buckets hold a second copy of the gradients (gradient_as_bucket_view=False, the
      // default: PyTorch's DistributedDataParallel documentation).
      temporary += params * 4;
      also("DDP's gradient buckets");
    } else if (split.gradients > 1) {
      temporary += 2 * c.ddp_bucket_bytes;
      also("reduce-scatter buckets");
    }
    // torch.autocast caches each weight's half-precision copy for the whole forward pass.
    if (mixed) {
      temporary += params * act;
      also("autocast's half-precision weight copies");
    }
  }
  add("temporary", temporary, why);
  const double reserved = c.framework_reserved_GB * 1e9 + c.allocator_fragmentation * total;
  add("framework", reserved,
      "CUDA context, library workspaces and communication buffers (" +
          fmt(c.framework_reserved_GB) + " GB) and the caching allocator's fragmentation (" +
          fmt(c.allocator_fragmentation * 100) + "%)");
  m.per_gpu_GB = total / 1e9;
  if (const figure* capacity = hw.find(fig::gpu_memory)) {
    m.capacity_GB = capacity->value;
    m.capacity_basis = capacity->from;
    m.fits = m.per_gpu_GB <= capacity->value;
  }
  return m;
}

void advise_memory(const sizing& s, const workload& w, const memory_of& memory_with,
                   std::vector<std::string>& advice) {
  const double capacity = s.memory.capacity_GB.value_or(0);
  const int gpus = s.gpus_per_node;
  const int ranks = s.gpus_per_node * s.nodes;
  std::vector<model::memory_part> parts = s.memory.parts;
  std::sort(parts.begin(), parts.end(),
            [](const model::memory_part& a, const model::memory_part& b) { return a.GB > b.GB; });
  std::string largest;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, parts.size()); ++i) {
    largest += (i ? ", " : "") + parts[i].name + " " + fmt(parts[i].GB) + " GB";
  }
  advice.push_back("the job does not fit in GPU memory: " + fmt(s.memory.per_gpu_GB) +
                   " GB per GPU of " + fmt(capacity) + " GB (" + largest + ")");
  const auto fits_text = [&](const memory_verdict& v) {
    return fmt(v.per_gpu_GB) + " GB per GPU" + (v.fits ? ", fits" : ", still too much");
  };

  // The largest micro-batch that fits; accumulation keeps the batch per optimizer step.
  int fitting = 0;
  for (int lo = 1, hi = s.batch_per_gpu - 1; lo <= hi;) {
    const int mid = lo + (hi - lo) / 2;
    if (memory_with(w, mid, gpus).fits) {
      fitting = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const int per_step = s.batch_per_gpu * s.gradient_accumulation;
  if (fitting > 0) {
    const int accumulate = (per_step + fitting - 1) / fitting;
    advice.push_back("the largest micro-batch that fits is " + std::to_string(fitting) + " (" +
                     fmt(memory_with(w, fitting, gpus).per_gpu_GB) + " GB); accumulating " +
                     std::to_string(accumulate) + " of them keeps about " +
                     std::to_string(per_step) + " samples per GPU per optimizer step");
  } else {
    advice.push_back("not even a micro-batch of 1 fits (" +
                     fmt(memory_with(w, 1, gpus).per_gpu_GB) +
                     " GB): the training state must be "
                     "split");
  }
  // The what-ifs at this micro-batch, each sized once: FSDP, checkpointing, and both.
  const auto flag = w.model.flags.find("activation_checkpointing");
  const bool can_recompute = flag != w.model.flags.end() && !flag->second;
  workload sharded = w;
  sharded.strategy = parallel_strategy::fsdp;
  const memory_verdict under_fsdp = memory_with(sharded, s.batch_per_gpu, gpus);
  std::optional<memory_verdict> under_fsdp_recomputing;
  if (w.strategy != parallel_strategy::fsdp && ranks > 1) {
    advice.push_back("FSDP (ZeRO-3: parameters, gradients and optimizer state split over all " +
                     std::to_string(ranks) + " GPUs): " + fits_text(under_fsdp));
  }
  if (can_recompute) {
    workload recomputing = w;
    recomputing.model.flags["activation_checkpointing"] = true;
    advice.push_back(
        "full activation checkpointing (one more forward pass, about a third more "
        "compute): " +
        fits_text(memory_with(recomputing, s.batch_per_gpu, gpus)));
    sharded.model.flags["activation_checkpointing"] = true;
    under_fsdp_recomputing = memory_with(sharded, s.batch_per_gpu, gpus);
    if (w.strategy != parallel_strategy::fsdp && ranks > 1) {
      advice.push_back("both, FSDP and checkpointing: " + fits_text(*under_fsdp_recomputing));
    }
  }
  // More GPUs: under FSDP the training state shrinks as 1/N, the rest does not. Without
  // checkpointing first, then with it.
  std::vector<std::pair<const memory_verdict*, const char*>> layouts{{&under_fsdp, "under FSDP"}};
  if (under_fsdp_recomputing) {
    layouts.emplace_back(&*under_fsdp_recomputing, "under FSDP with activation checkpointing");
  }
  std::optional<double> rest_without_room;  // what is not state, where no layout leaves room
  for (const auto& [now, name] : layouts) {
    double state = 0;
    for (const model::memory_part& part : now->parts) {
      if (part.name == "weights" || part.name == "gradients" || part.name == "optimizer_state") {
        state += part.GB;
      }
    }
    const double rest = now->per_gpu_GB - state;
    if (rest >= capacity || state <= 0) {
      rest_without_room = rest;
      continue;
    }
    const double needed = std::ceil(state * ranks / (capacity - rest));
    if (needed > ranks) {
      advice.push_back(std::string(name) + " about " + fmt(needed) +
                       " GPUs in all hold the training state at this micro-batch (" +
                       std::to_string(ranks) + " now)");
    }
    rest_without_room.reset();
    break;
  }
  if (rest_without_room && *rest_without_room > 0) {
    advice.push_back(
        "however many GPUs share the training state, the activations and buffers "
        "alone take " +
        fmt(*rest_without_room) + " GB at this micro-batch: a smaller micro-batch first");
  }
  if (w.family == "transformer" && !w.model.preset.empty()) {
    advice.push_back(
        "splitting each layer or the stack of layers over GPUs (\"parallel\": {\"tensor\": T, "
        "\"pipeline\": P}) also divides the state and the activations per GPU by about T x P");
  }
}

}  // namespace gpubench::model::detail
