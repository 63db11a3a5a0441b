// Communication (docs/model.md): the allreduce bus bandwidth a job gets, and how each parallelism
// strategy exchanges parameters or gradients and how much of that the backward pass hides.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "components.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/measurements.hpp"

namespace gpubench::model::detail {

namespace {

// A row of a table keyed by kind and named (the strategies, the dispatchers), or nullptr.
template <typename Row, std::size_t N, typename Kind>
const Row* row_of(const Row (&table)[N], Kind kind) {
  for (const Row& row : table) {
    if (row.kind == kind) return &row;
  }
  return nullptr;
}
// A kind's name ("?" for none), and the kind of a name.
template <typename Row, std::size_t N, typename Kind>
std::string_view name_in(const Row (&table)[N], Kind kind) {
  const Row* row = row_of(table, kind);
  return row ? row->name : "?";
}
template <typename Row, std::size_t N>
std::optional<decltype(Row::kind)> kind_named(const Row (&table)[N], std::string_view name) {
  for (const Row& row : table) {
    if (row.name == name) return row.kind;
  }
  return std::nullopt;
}

// Seconds to allreduce `bytes` across `ranks` GPUs.
double allreduce_seconds(const allreduce_model& m, const constants& c, double bytes, int ranks) {
  if (ranks <= 1 || bytes <= 0) return 0;
  double busbw = m.busbw_GBps;
  if (!m.measured.empty()) busbw = std::min(busbw, interpolate_log(m.measured, bytes));
  const double factor = 2.0 * (ranks - 1) / ranks;  // ring allreduce: nccl-tests' bus factor
  return c.allreduce_latency_us * 1e-6 + bytes * factor / (busbw * giga);
}

// DDP: the gradients (fp32: AMP keeps fp32 parameters; 16-bit where the workload says so)
// allreduced in buckets while the backward pass runs; the last bucket is reduced after it ends
// and can never be hidden. With accumulation the gradients are exchanged after the last
// micro-batch only (no_sync()).
exchange ddp(const gpu_times& gpu, const allreduce_model& ar, const constants& c, const workload& w,
             const std::string& precision, int ranks) {
  exchange x;
  x.what = "gradient allreduce of ";
  const double per_param = gradient_bytes(w, precision);
  x.bytes = gpu.params * per_param;
  // Routed experts' gradients are allreduced within their expert data-parallel group only.
  const double experts = std::min(gpu.ops.expert_params, gpu.params);
  const double grad_bytes = (gpu.params - experts) * per_param;
  double last = 0;
  x.whole_s = allreduce_seconds(ar, c, experts * per_param, expert_group(w, ranks));
  if (grad_bytes > 0) {
    const double bucket = std::min(c.ddp_bucket_bytes, grad_bytes);
    const double buckets = std::ceil(grad_bytes / bucket);
    last = grad_bytes - (buckets - 1) * bucket;
    x.whole_s += (buckets - 1) * allreduce_seconds(ar, c, bucket, ranks) +
                 allreduce_seconds(ar, c, last, ranks);
  }
  x.per_step_s = x.whole_s / w.gradient_accumulation;
  x.exposed_s = std::max(x.whole_s - c.comm_overlap * backward_seconds(gpu.step),
                         allreduce_seconds(ar, c, last, ranks)) /
                w.gradient_accumulation;
  return x;
}

// ZeRO stage 1 and 2, Megatron's distributed optimizer: the gradients reduce-scattered in DDP's
// buckets, then the updated parameters all-gathered: each half an allreduce's traffic. The
// all-gather moves the parameters in the precision the model keeps them (16-bit where the stack
// keeps an fp32 master copy beside them, as Megatron-Core does): (g + 2) / 2g of DDP's time for
// g-byte gradients, (4 + 2) / 8 with fp32 ones.
exchange zero(const gpu_times& gpu, const allreduce_model& ar, const constants& c,
              const workload& w, const std::string& precision, int ranks) {
  exchange x = ddp(gpu, ar, c, w, precision, ranks);
  const double grad = gradient_bytes(w, precision);
  const double scale = (grad + parameter_bytes(w, c, precision)) / (2.0 * grad);
  x.what = "gradient reduce-scatter and parameter all-gather of ";
  x.whole_s *= scale;
  x.per_step_s *= scale;
  x.exposed_s *= scale;
  return x;
}

// FSDP (ZeRO-3): all-gather the parameters for forward and backward, reduce-scatter the
// gradients: three passes of the parameters, each moving (n-1)/n of them through every GPU's
// links. All three run for every micro-batch: FSDP reduce-scatters each micro-batch's gradients
// unless no_sync() keeps unsharded gradients, which full sharding exists to avoid.
exchange fsdp(const gpu_times& gpu, const allreduce_model& ar, const constants& c,
              const workload& w, const std::string& precision, int ranks) {
  exchange x;
  x.what = "FSDP gather/scatter of ";
  const double param_bytes = activation_bytes(precision);
  x.bytes = gpu.params * param_bytes + gpu.ops.frozen_weight_bytes;
  // A frozen base model (adapters) is gathered twice and has no gradient to scatter; routed
  // experts are sharded over their expert data-parallel group only (none when it is one GPU).
  const double experts = std::min(gpu.ops.expert_params, gpu.params);
  const auto share = [](int n) { return static_cast<double>(n - 1) / n; };
  const double volume =
      (3.0 * (gpu.params - experts) * param_bytes + 2.0 * gpu.ops.frozen_weight_bytes) *
          share(ranks) +
      3.0 * experts * param_bytes * share(expert_group(w, ranks));
  double busbw = ar.busbw_GBps;
  if (!ar.measured.empty()) busbw = std::min(busbw, interpolate_log(ar.measured, 64e6));
  x.whole_s = x.per_step_s = volume / (busbw * giga);
  x.exposed_s = std::max(x.per_step_s - c.comm_overlap * gpu.busy(), 0.05 * x.per_step_s);
  return x;
}

// HSDP (FSDP's HYBRID_SHARD): FSDP inside each node, replicas across nodes. The three passes of
// the parameters stay on the node's own links; across nodes each GPU allreduces its 1/g shard of
// the gradients with the GPUs holding the same shard, every micro-batch. The g shards share the
// node's NICs, so the node sends one whole gradient through a ring over the nodes: the time of a
// whole-gradient allreduce at the network's bus bandwidth.
exchange hsdp(const gpu_times& gpu, const allreduce_model& ar, const constants& c,
              const workload& /*w*/, const std::string& precision, int /*ranks*/) {
  exchange x;
  x.what = "HSDP gather/scatter in the node and gradient allreduce across nodes of ";
  const double param_bytes = activation_bytes(precision);
  const double trained = gpu.params * param_bytes;
  x.bytes = trained + gpu.ops.frozen_weight_bytes;
  const int g = ar.gpus_per_node;
  const int n = ar.nodes;
  double intra = ar.intra_busbw_GBps;
  if (!ar.measured.empty() && n == 1) intra = std::min(intra, interpolate_log(ar.measured, 64e6));
  // A frozen base model (adapters) is gathered twice in the node, never reduced.
  const double passes = 3.0 * trained + 2.0 * gpu.ops.frozen_weight_bytes;
  const double inside = g > 1 ? passes * (g - 1) / g / (intra * giga) : 0.0;
  const double across = n > 1 ? c.allreduce_latency_us * 1e-6 +
                                    trained * 2.0 * (n - 1) / n / (ar.inter_busbw_GBps * giga)
                              : 0.0;
  x.whole_s = x.per_step_s = inside + across;
  x.exposed_s = std::max(x.per_step_s - c.comm_overlap * gpu.busy(), 0.05 * x.per_step_s);
  return x;
}

using sharding = strategy::sharding;
sharding replicated(int /*gpus_per_node*/, int /*nodes*/) {
  return {};
}
// ZeRO stage 1 and 2 (DeepSpeed; PyTorch's ZeroRedundancyOptimizer is stage 1): the optimizer
// state, and at stage 2 the gradients, split over every GPU. Their traffic is DDP's: a
// reduce-scatter and an all-gather move what one allreduce moves (Rajbhandari et al., "ZeRO",
// 2020, section 7).
sharding zero_1(int gpus_per_node, int nodes) {
  return {1, 1, gpus_per_node * nodes};
}
sharding zero_2(int gpus_per_node, int nodes) {
  return {1, gpus_per_node * nodes, gpus_per_node * nodes};
}
sharding every_gpu(int gpus_per_node, int nodes) {
  const int n = gpus_per_node * nodes;
  return {n, n, n};
}
sharding node_gpus(int gpus_per_node, int /*nodes*/) {
  return {gpus_per_node, gpus_per_node, gpus_per_node};
}

constexpr strategy strategies[] = {
    {parallel_strategy::ddp, "ddp", ddp, replicated, false, false},
    {parallel_strategy::zero1, "zero1", zero, zero_1, false, false},
    {parallel_strategy::zero2, "zero2", zero, zero_2, false, false},
    {parallel_strategy::fsdp, "fsdp", fsdp, every_gpu, true, false},
    {parallel_strategy::hsdp, "hsdp", hsdp, node_gpus, true, true},
};

}  // namespace

const strategy& strategy_of(parallel_strategy kind) {
  if (const strategy* row = row_of(strategies, kind)) return *row;
  throw std::logic_error("a parallel strategy without a row in the strategy table");
}

std::span<const strategy> all_strategies() {
  return strategies;
}

}  // namespace gpubench::model::detail

namespace gpubench::model {

std::string_view to_string(parallel_strategy s) noexcept {
  return detail::name_in(detail::strategies, s);
}

std::optional<parallel_strategy> strategy_from_string(std::string_view name) {
  return detail::kind_named(detail::strategies, name);
}

std::string strategy_choices() {
  using detail::strategies;
  std::string out;
  const std::size_t n = std::size(strategies);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    out += '"';
    out += strategies[i].name;
    out += '"';
  }
  return out;
}

}  // namespace gpubench::model

namespace gpubench::model::detail {

namespace {

// Megatron-Core's dispatchers (moe_token_dispatcher_type "alltoall", or "flex" with the DeepEP or
// HybridEP backend). DeepEP's internode kernels and HybridEP's RDMA stage send each token once to
// every node holding one of its experts and forward it over NVLink there (HybridEP sizes its RDMA
// buffer as tokens per rank x (nodes - 1): deepseek-ai/DeepEP docs/Hybrid-EP_Implementation.md,
// section 4.2); NCCL's all-to-all sends every routed copy.
constexpr expert_dispatcher dispatchers[] = {
    {expert_dispatch::alltoall, "alltoall", false},
    {expert_dispatch::deepep, "deepep", true},
    {expert_dispatch::hybridep, "hybridep", true},
};

const expert_dispatcher& dispatcher_of(expert_dispatch kind) {
  if (const expert_dispatcher* row = row_of(dispatchers, kind)) return *row;
  throw std::logic_error("an expert dispatcher without a row in the dispatcher table");
}

}  // namespace

double dispatcher_network_share(const workload& w, int peers_per_node) {
  const int E = w.expert;
  if (!dispatcher_of(w.expert_dispatcher).once_per_node || E <= peers_per_node) return 1;
  // The group's GPUs over E / peers nodes, the X experts evenly over them, top-k routing spread
  // evenly: a node holds none of a token's k experts with probability C(X - X/n, k) / C(X, k).
  const double experts = expert_count(w.model);
  const int k = expert_top_k(w.model);
  const double nodes = static_cast<double>(E) / peers_per_node;
  const double elsewhere = experts - experts / nodes;
  double none = 1;
  for (int i = 0; i < k; ++i) none *= std::max(0.0, (elsewhere - i) / (experts - i));
  const double once_per_node = (nodes - 1) * (1 - none);
  const double every_copy = k * (1 - 1 / nodes);
  return std::min(1.0, once_per_node / every_copy);
}

std::optional<std::string> expert_overlap_problem(const workload& w) {
  // Megatron-Core's checks (megatron/core/transformer/transformer_config.py): an expert split,
  // the combined 1F1B schedule exists without a pipeline or with an interleaved one, and no
  // full recomputation.
  if (w.expert < 2) return "false without expert parallelism (expert > 1)";
  if (w.pipeline > 1 && w.virtual_pipeline < 2) {
    return "false with a pipeline that is not interleaved (Megatron-Core's combined 1F1B schedule "
           "runs with pipeline 1 or virtual_pipeline > 1)";
  }
  const auto full = w.model.flags.find("activation_checkpointing");
  if (full != w.model.flags.end() && full->second) {
    return "false with full activation checkpointing (Megatron-Core refuses full recomputation "
           "with the all-to-all overlap)";
  }
  return std::nullopt;
}

bool expert_overlapped(const workload& w) {
  return w.expert_overlap && !expert_overlap_problem(w);
}

int node_granule(const workload& w, int gpus_per_node) {
  // The job's GPUs must be a multiple of T x P x C (whole replicas, the context split over what
  // is left) and of P x E x K (the experts' splits over a stage's GPUs).
  const auto nodes_for = [&](int divisor) { return divisor / std::gcd(divisor, gpus_per_node); };
  return std::lcm(nodes_for(w.tensor * w.pipeline * w.context),
                  nodes_for(w.pipeline * w.expert * w.expert_tensor));
}

int expert_group(const workload& w, int gpus) {
  return std::max(1, gpus * w.tensor * w.context / (w.expert * w.expert_tensor));
}

namespace {

// Why the job's splits do not come out whole on this many nodes, or nullopt where they do: the
// one check behind data_parallel_group (which names the key) and splits_whole (the advice).
std::optional<std::string> split_problem(const workload& w, int gpus_per_node, int nodes) {
  const int split = w.tensor * w.pipeline;
  const int ranks = gpus_per_node * nodes;
  if (gpus_per_node % w.tensor != 0) {
    return "parallel.tensor: " + std::to_string(w.tensor) + " does not divide the " +
           std::to_string(gpus_per_node) +
           " GPUs per node: a tensor-parallel group stays inside one node (its exchanges run on "
           "every layer)";
  }
  if (ranks % split != 0) {
    return "parallel.tensor x parallel.pipeline: " + std::to_string(w.tensor) + " x " +
           std::to_string(w.pipeline) + " does not divide the job's " + std::to_string(ranks) +
           " GPUs";
  }
  if (w.context > 1 && (ranks / split) % w.context != 0) {
    return "parallel.context: " + std::to_string(w.context) + " does not divide the " +
           std::to_string(ranks / split) + " GPUs left after the tensor x pipeline split";
  }
  // Megatron-Core forms expert-parallel groups from the tensor x data-parallel GPUs of a stage.
  if (w.expert > 1 && (ranks / w.pipeline) % w.expert != 0) {
    return "parallel.expert: " + std::to_string(w.expert) + " does not divide the " +
           std::to_string(ranks / w.pipeline) +
           " GPUs of a pipeline stage (tensor x data parallel) the experts are split over";
  }
  if (w.expert_tensor > 1 && gpus_per_node % w.expert_tensor != 0) {
    return "parallel.expert_tensor: " + std::to_string(w.expert_tensor) + " does not divide the " +
           std::to_string(gpus_per_node) +
           " GPUs per node: an expert's split stays inside one node (its exchanges run on every "
           "MoE layer)";
  }
  if (w.expert_tensor > 1 && (ranks / w.pipeline) % (w.expert * w.expert_tensor) != 0) {
    return "parallel.expert x parallel.expert_tensor: " + std::to_string(w.expert) + " x " +
           std::to_string(w.expert_tensor) + " does not divide the " +
           std::to_string(ranks / w.pipeline) +
           " GPUs of a pipeline stage the experts are split over";
  }
  return std::nullopt;
}

}  // namespace

bool splits_whole(const workload& w, int gpus_per_node, int nodes) {
  return !split_problem(w, gpus_per_node, nodes);
}

data_parallel data_parallel_group(const workload& w, int gpus_per_node, int nodes) {
  if (auto problem = split_problem(w, gpus_per_node, nodes)) {
    throw input_error((w.file.empty() ? "" : w.file + ": ") + *problem);
  }
  const int split = w.tensor * w.pipeline;
  const int ranks = gpus_per_node * nodes;
  if (split <= gpus_per_node && gpus_per_node % split == 0) {
    return {gpus_per_node / split, nodes};
  }
  return {1, ranks / split};  // each replica spans nodes
}

void model_parallel_times(const hardware_profile& hw, const constants& c, const workload& w,
                          const gpu_times& gpu, int gpus_per_node, step_breakdown& step) {
  std::vector<std::string> ignored;
  const step_ops& ops = gpu.ops;
  // One GPU's rate to another: over the node's links, or its NIC's share of the node's network.
  const auto neighbour_GBps = [&](bool across_nodes) {
    return across_nodes ? allreduce_for(hw, c, 1, 2, ignored).inter_busbw_GBps / gpus_per_node
                        : allreduce_for(hw, c, 2, 1, ignored).intra_busbw_GBps;
  };
  // `count` exchanges of `bytes` inside a group of `size` GPUs of a node, each moving
  // `ring_share` of its bytes at the group's bus bandwidth, after the collective's latency.
  const auto in_node = [&](int size, double count, double bytes, double ring_share) {
    const allreduce_model group = allreduce_for(hw, c, size, 1, ignored);
    return count *
           (c.allreduce_latency_us * 1e-6 + bytes * ring_share / (group.intra_busbw_GBps * giga));
  };
  // The GPU work an exchange can still hide under: the tensor group's overlap takes its share
  // first.
  double free_work = step.compute_s + step.memory_s;
  if (w.tensor > 1 && ops.tensor_allreduces > 0) {
    const double t = w.tensor;
    const double exchange =
        in_node(w.tensor, ops.tensor_allreduces, ops.tensor_message_bytes, 2 * (t - 1) / t);
    // Overlapped, each all-gather and reduce-scatter is cut into chunks the GEMM it feeds
    // consumes as they arrive: hidden under the step's GEMMs as far as those last, but no more
    // than the share of a gradient exchange that hides under the backward pass (comm_overlap).
    const double shows = w.tensor_overlap
                             ? std::max(exchange * (1 - c.comm_overlap), exchange - step.compute_s)
                             : exchange;
    step.tensor_parallel_s += shows;
    free_work -= exchange - shows;
  }
  if (w.expert > 1 && ops.expert_alltoalls > 0) {
    // Each all-to-all sends (E - 1)/E of a GPU's routed tokens to the other GPUs of the expert
    // group, formed from GPUs of a stage K apart (Megatron-Core orders the expert tensor group
    // first): those in its node over the node's links, the rest over the network, one NIC's
    // share per GPU, both at once. A measured nccl.alltoall of that many GPUs gives its bus
    // bandwidth at the message size.
    const int E = w.expert;
    const int peers_per_node = std::max(1, gpus_per_node / w.expert_tensor);
    const double bytes = ops.expert_message_bytes;
    // A dispatcher that sends a token once per node sends this share of the network bytes.
    const double network_share = dispatcher_network_share(w, peers_per_node);
    double seconds = 0;
    const int inside = std::min(E, peers_per_node);
    if (!hw.alltoall.empty() && hw.alltoall_ranks == E) {
      std::vector<std::pair<double, double>> measured;
      for (const busbw_point& p : hw.alltoall) measured.emplace_back(p.bytes, p.GBps);
      std::sort(measured.begin(), measured.end());
      // The measured all-to-all sent every copy; the dispatcher's share applies to the
      // (E - inside) of the E - 1 destinations off the node.
      const double sent = ((inside - 1.0) + (E - inside) * network_share) / (E - 1.0);
      seconds = bytes * (E - 1.0) / E / (interpolate_log(measured, bytes) * giga) * sent;
    } else {
      const allreduce_model node = allreduce_for(hw, c, inside, 1, ignored);
      seconds = inside > 1 ? bytes * (inside - 1.0) / E / (node.intra_busbw_GBps * giga) : 0.0;
      if (E > peers_per_node) {
        seconds = std::max(seconds, bytes * static_cast<double>(E - peers_per_node) / E *
                                        network_share / (neighbour_GBps(true) * giga));
      }
    }
    const double exchange = ops.expert_alltoalls * (c.allreduce_latency_us * 1e-6 + seconds);
    // Megatron-Core's combined 1F1B runs one micro-batch's all-to-alls under another's forward or
    // backward work; the first forward and the last backward of a step run alone, so one
    // micro-batch's in every m shows (megatron/core/pipeline_parallel/combined_1f1b.py).
    step.tensor_parallel_s +=
        expert_overlapped(w)
            ? std::max({exchange * (1 - c.expert_comm_overlap),
                        exchange / std::max(1, w.gradient_accumulation), exchange - free_work})
            : exchange;
  }
  if (w.expert_tensor > 1 && ops.expert_tensor_exchanges > 0) {
    // Each all-gather or reduce-scatter moves (K - 1)/K of the gathered tokens over the node's
    // links (the group stays in a node), as the tensor group's sequence-parallel exchanges do.
    const double k = w.expert_tensor;
    step.tensor_parallel_s += in_node(w.expert_tensor, ops.expert_tensor_exchanges,
                                      ops.expert_tensor_message_bytes, (k - 1) / k);
  }
  if (w.context > 1 && ops.context_sends > 0) {
    // Ring attention's K/V sends: to the next GPU of the group, over the node's links when the
    // group (inside each tensor group's stride) fits in a node, else one NIC's share per GPU.
    // Counted whole: the overlap with attention that ring attention aims at is not modelled.
    step.tensor_parallel_s += ops.context_sends * ops.context_message_bytes /
                              (neighbour_GBps(w.tensor * w.context > gpus_per_node) * giga);
  }
  if (w.pipeline > 1) {
    // Each stage sends one micro-batch's activations on and receives their gradient: over the
    // node's links when the stages share a node, else over its network, one NIC's share per GPU.
    const double GBps = neighbour_GBps(w.tensor * w.pipeline > gpus_per_node);
    // Interleaved stages (v model chunks per GPU) cross v times as many stage boundaries.
    step.tensor_parallel_s += 2 * w.virtual_pipeline * ops.stage_message_bytes / (GBps * giga);
    // 1F1B with m micro-batches per step: (stages - 1) / m of the work is bubble; the
    // interleaved schedule divides it by v (Narayanan et al. 2021, section 2.2.2).
    step.pipeline_bubble_s = (w.pipeline - 1.0) / (w.gradient_accumulation * w.virtual_pipeline) *
                             (gpu.busy() + step.tensor_parallel_s);
  }
}

double backward_seconds(const step_breakdown& step) {
  return (step.compute_s + step.memory_s) * 2.0 / 3.0;
}

allreduce_model allreduce_for(const hardware_profile& hw, const constants& c, int gpus_per_node,
                              int nodes, std::vector<std::string>& assumed) {
  allreduce_model model;
  model.gpus_per_node = gpus_per_node;
  model.nodes = nodes;
  model.inter_busbw_GBps = std::numeric_limits<double>::infinity();
  const int ranks = gpus_per_node * nodes;
  if (!hw.allreduce.empty() && hw.allreduce_ranks == ranks) {
    for (const auto& p : hw.allreduce) model.measured.emplace_back(p.bytes, p.GBps);
    std::sort(model.measured.begin(), model.measured.end());
    model.busbw_GBps = model.measured.back().second;
    model.basis = basis::measured;
    model.detail = vocabulary::measurements::allreduce_busbw.benchmark +
                   " busbw by message size, " + std::to_string(ranks) + " GPUs";
    double worst = 0;
    for (const auto& p : hw.allreduce) worst = std::max(worst, p.cv);
    cite_noise(model.noisy, vocabulary::measurements::allreduce_busbw.benchmark, worst);
    return model;
  }
  if (gpus_per_node > 1) {
    const std::string busbw_key = vocabulary::key_of(fig::busbw);
    if (const figure* f = hw.find(fig::busbw)) {
      model.busbw_GBps = f->value;
      model.basis = f->from;
      model.detail = busbw_key;
      cite_noise(model.noisy, hw, fig::busbw);
    } else if (const auto nvlink = hw.value(fig::nvlink)) {
      model.busbw_GBps = *nvlink / 2 * c.nvlink_busbw_fraction;
      model.basis = basis::catalog;
      model.detail =
          "NVLink " + fmt(*nvlink) + " GB/s bidirectional x 1/2 x " + fmt(c.nvlink_busbw_fraction);
      assumed.push_back(busbw_key + " (from NVLink)");
    } else {
      const double h2d = hw.value(fig::pcie_h2d).value_or(12.5);
      model.busbw_GBps = h2d * c.pcie_busbw_fraction;
      model.basis = basis::catalog;
      model.detail = "GPUs share PCIe only: " + fmt(h2d) + " GB/s x " + fmt(c.pcie_busbw_fraction);
      assumed.push_back(busbw_key + " (over PCIe)");
    }
  } else {
    model.busbw_GBps = std::numeric_limits<double>::infinity();
  }
  model.intra_busbw_GBps = model.busbw_GBps;
  if (nodes > 1) {
    double gbps = c.default_network_gbps;
    basis net_basis = basis::assumed_default;
    if (const figure* f = hw.find(fig::network)) {
      gbps = f->value;
      net_basis = f->from;
      if (f->from == basis::assumed_default) {
        // A bare GPU entry's typical network (predict_with sets it): stated, never hidden.
        assumed.push_back(vocabulary::key_of(fig::network) + " (assumed " + fmt(gbps) + ")");
        model.network_assumed = true;
        model.network_assumed_from = f->source;
      }
    } else {
      assumed.push_back(vocabulary::key_of(fig::network) + " (default " +
                        fmt(c.default_network_gbps) + ")");
      model.network_assumed = true;
      model.network_assumed_from = "the model's default_network_gbps, a common 100 Gb/s NIC";
      if (const std::string* why = hw.why_unknown(fig::network)) {
        model.network_unknown_why = *why;
      }
    }
    model.network_gbps = gbps;
    const double network_busbw =
        vocabulary::convert(gbps, fig::network.in, vocabulary::units::GBps) * c.network_efficiency;
    model.inter_busbw_GBps = network_busbw;
    if (network_busbw < model.busbw_GBps) {
      model.busbw_GBps = network_busbw;
      model.basis = net_basis;
      const std::string fabric = model.network_assumed ? "" : hw.network.describe();
      model.detail = "inter-node: " + fmt(gbps) + " Gb/s per node" +
                     (fabric.empty() ? "" : " of " + fabric) + " x " + fmt(c.network_efficiency);
    }
  }
  return model;
}

void advise_communication(const exchange& x, const allreduce_model& ar, const constants& c,
                          const step_breakdown& step, double backward_s, const workload& w,
                          double predicted, const std::function<double(const workload&)>& rate_with,
                          std::vector<std::string>& advice) {
  const double hidden_budget = c.comm_overlap * backward_s;
  // Only the last micro-batch's backward pass can hide the exchange.
  const double factor = x.whole_s / std::max(hidden_budget, 1e-12);
  advice.push_back("gradient exchange limits the job: " + fmt(step.communication_exposed_s * 1e3) +
                   " ms per step is not hidden; about " + fmt(factor, 2) + "x the bus bandwidth (" +
                   fmt(ar.busbw_GBps * factor) + " GB/s) would hide it under the backward pass");
  // The most any overlap can give: the step without its exposed exchange.
  const double all_hidden =
      predicted * step.gpu_step_s / std::max(step.gpu_step_s - step.communication_exposed_s, 1e-12);
  advice.push_back("hidden completely (more overlap), the exchange would leave " + fmt(all_hidden) +
                   " samples/s (now " + fmt(predicted) + "): the most overlap can give");
  if (ar.nodes > 1) {
    const double needed_gbps =
        vocabulary::convert(ar.busbw_GBps * factor, vocabulary::units::GBps, fig::network.in) /
        c.network_efficiency;
    const double most_gbps = c.max_network_gbps_per_gpu * ar.gpus_per_node;
    if (needed_gbps <= most_gbps) {
      advice.push_back("across nodes that is about " + fmt(needed_gbps) +
                       " Gb/s of network per node (this one: " + fmt(ar.network_gbps) + ")");
    } else {
      // Never ask for a network no node of this class has.
      advice.push_back("hiding it would take about " + fmt(needed_gbps) +
                       " Gb/s of network per node, more than a node of " +
                       std::to_string(ar.gpus_per_node) + " GPUs has (at most " + fmt(most_gbps) +
                       " Gb/s, one " + fmt(c.max_network_gbps_per_gpu) +
                       " Gb/s NIC per GPU): the network alone cannot move this limit");
    }
  }
  // A remedy is printed only where the model predicts it fits and runs faster (a layout that
  // does not fit has no rate).
  if (w.strategy == parallel_strategy::fsdp && ar.nodes > 1) {
    workload hybrid = w;
    hybrid.strategy = parallel_strategy::hsdp;
    if (const double rate = rate_with(hybrid); rate > predicted) {
      advice.push_back(
          "hybrid sharding (\"strategy\": \"hsdp\": FSDP inside each node, one gradient "
          "allreduce across nodes) keeps the parameter gathers and scatters on the node's own "
          "links: " +
          fmt(rate) + " samples/s (now " + fmt(predicted) + ")");
    }
  } else if (w.strategy == parallel_strategy::ddp) {
    // The allreduce runs once per optimizer step: k micro-batches share it.
    workload accumulating = w;
    accumulating.gradient_accumulation = w.gradient_accumulation * 4;
    const double per_sample_now = step.communication_exposed_s;
    if (const double rate = rate_with(accumulating); rate > predicted) {
      advice.push_back(
          "gradient accumulation (or a larger batch per GPU) shares the exchange: accumulating " +
          std::to_string(accumulating.gradient_accumulation) + " micro-batches cuts its " +
          fmt(per_sample_now * 1e3) + " ms per micro-batch step to about " +
          fmt(per_sample_now / 4 * 1e3) + " ms: " + fmt(rate) + " samples/s (now " +
          fmt(predicted) + ")");
    }
  }
}

void advise_unknown_network(const allreduce_model& ar, const constants& /*c*/, int nodes,
                            std::vector<std::string>& advice) {
  if (nodes <= 1 || !ar.network_assumed) return;
  const std::string why =
      ar.network_unknown_why.empty() ? std::string() : " (" + ar.network_unknown_why + ")";
  advice.push_back("this machine's network is not known" + why + ": the " + std::to_string(nodes) +
                   "-node figures assume " + fmt(ar.network_gbps) + " Gb/s per node (" +
                   ar.network_assumed_from + "); give the real figure with --set network.gbps=N");
}

}  // namespace gpubench::model::detail

namespace gpubench::model {

std::string_view to_string(expert_dispatch d) noexcept {
  return detail::name_in(detail::dispatchers, d);
}

std::optional<expert_dispatch> dispatch_from_string(std::string_view name) {
  return detail::kind_named(detail::dispatchers, name);
}

std::string dispatch_choices() {
  std::vector<std::string> names;
  for (const detail::expert_dispatcher& row : detail::dispatchers) names.emplace_back(row.name);
  return join(names, ", ");
}

}  // namespace gpubench::model
