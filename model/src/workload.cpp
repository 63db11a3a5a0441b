#include "gpubench/model/workload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "components.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "presets.hpp"

namespace gpubench::model {
namespace {

namespace fs = std::filesystem;

fs::path workloads_dir() {
  return config_dir() / "workloads";
}

// The largest figures a workload may state: beyond them the input is a typo, not a job.
constexpr double max_dataset_bytes = 1e18;  // an exabyte
constexpr double max_sample_bytes = 1e10;   // 10 GB per sample
constexpr std::int64_t max_gpus_per_node = 1024;
constexpr std::int64_t max_nodes = 100000;
constexpr std::int64_t max_batch = 1 << 24;
constexpr std::int64_t max_accumulation = 1 << 20;
constexpr std::int64_t max_pipeline_stages = 1024;

// Tensor and pipeline splits (Megatron-LM's) apply to transformer presets: the tensor group
// divides the attention heads, the pipeline the layers. Checked where the GPUs are known too
// (predict()).
void check_model_parallel(const workload& w, const json_reader& p) {
  if (w.expert > 1) {
    const int count = expert_count(w.model);
    if (count < 1) p.fail("expert", "1: expert parallelism needs a model with experts");
    if (count % w.expert != 0) {
      p.fail("expert", "a divisor of the model's " + std::to_string(count) + " experts, got " +
                           std::to_string(w.expert));
    }
  }
  if (w.expert_tensor > 1) {
    if (expert_count(w.model) < 1) {
      p.fail("expert_tensor", "1: expert tensor parallelism needs a model with experts");
    }
    const auto width = static_cast<std::int64_t>(w.model.params.at("moe_ffn"));
    if (width % w.expert_tensor != 0) {
      p.fail("expert_tensor", "a divisor of the experts' FFN width " + std::to_string(width) +
                                  ", got " + std::to_string(w.expert_tensor));
    }
  }
  if (w.expert_dispatcher != expert_dispatch::alltoall && w.expert < 2) {
    p.fail("expert_dispatcher", "alltoall without expert parallelism (expert > 1)");
  }
  if (w.expert_overlap) {
    if (auto problem = detail::expert_overlap_problem(w)) p.fail("expert_overlap", *problem);
  }
  if (w.tensor == 1 && w.pipeline == 1 && !w.sequence_parallel && !w.tensor_overlap) return;
  if (w.family != "transformer" || w.model.preset.empty()) {
    p.fail(w.tensor > 1     ? "tensor"
           : w.pipeline > 1 ? "pipeline"
                            : "sequence_parallel",
           "no model split: tensor and pipeline parallelism are modelled for transformer presets "
           "only");
  }
  const auto whole = [&](const char* key) {
    return static_cast<std::int64_t>(w.model.params.at(key));
  };
  if (whole("heads") % w.tensor != 0) {
    p.fail("tensor", "a divisor of the model's " + std::to_string(whole("heads")) +
                         " attention heads, got " + std::to_string(w.tensor));
  }
  const std::int64_t kv_heads = detail::key_value_heads(w.model.params);
  if (kv_heads % w.tensor != 0) {
    p.fail("tensor", "a divisor of the model's " + std::to_string(kv_heads) +
                         " key/value heads, got " + std::to_string(w.tensor));
  }
  // A pipeline that does not divide the layers is split as Megatron-LM splits it (presets.hpp).
  if (whole("layers") % w.pipeline != 0 && !detail::split_unevenly(whole("layers"), w.pipeline)) {
    p.fail("pipeline", "at most " + std::to_string((whole("layers") + 2) / 2) +
                           " stages for the model's " + std::to_string(whole("layers")) +
                           " layers (the first and last stages each hold a layer beside the "
                           "embedding or the loss), got " +
                           std::to_string(w.pipeline));
  }
  if (w.sequence_parallel && w.tensor == 1) {
    p.fail("sequence_parallel", "false without a tensor split (tensor > 1)");
  }
  if (w.tensor_overlap && !w.sequence_parallel) {
    p.fail("tensor_overlap",
           "false without sequence parallelism (Megatron-Core overlaps the "
           "sequence-parallel all-gathers and reduce-scatters)");
  }
}

// A mixture-of-experts FFN, the model's "experts" object: each member and the preset parameter
// it sets (docs/model.md, "Mixture of experts"). `imbalance` is the busiest GPU's routed tokens
// over the mean, 1 for perfectly balanced routing.
struct expert_member {
  const char* name;
  const char* param;
  double min;
  double max;
};
constexpr expert_member expert_members[] = {
    {"count", "moe_experts", 1, 1 << 16},
    {"top_k", "moe_top_k", 1, 1 << 16},
    {"ffn", "moe_ffn", 1, 1e8},
    {"shared", "moe_shared", 0, 1 << 16},
    {"imbalance", "moe_imbalance", 1, 1 << 16},
};

// An "experts" member's value as the preset parameter the table maps it to, 0 where unset.
int expert_value(const model_spec& m, std::string_view member) {
  for (const expert_member& e : expert_members) {
    if (e.name != member) continue;
    const auto value = m.params.find(e.param);
    return value == m.params.end() ? 0 : static_cast<int>(value->second);
  }
  throw std::logic_error("an experts member without a row in the experts table");
}

}  // namespace

int expert_count(const model_spec& m) {
  return expert_value(m, "count");
}

int expert_top_k(const model_spec& m) {
  return expert_value(m, "top_k");
}

namespace {

void parse_experts(const json_reader& e, model_spec& spec) {
  std::vector<std::string_view> known;
  for (const expert_member& m : expert_members) known.emplace_back(m.name);
  e.expect_object(known);
  for (const expert_member& m : expert_members) {
    if (e.has(m.name)) spec.params[m.param] = e.get_number(m.name, m.min, m.max);
  }
  const double count = spec.params.at("moe_experts");
  if (count < 1) e.fail("count", "the experts of each MoE layer (at least 1)");
  if (spec.params.at("moe_top_k") < 1) spec.params["moe_top_k"] = 1;
  if (spec.params.at("moe_top_k") > count) e.fail("top_k", "at most count");
  if (spec.params.at("moe_ffn") <= 0) {
    spec.params["moe_ffn"] =
        spec.params.at("ffn") > 0 ? spec.params.at("ffn") : 4 * spec.params.at("hidden");
  }
}

model_spec parse_model(const json_reader& m, std::string& family, std::string& unit) {
  model_spec spec;
  if (m.has("preset")) {
    spec.preset = m.get_string("preset");
    const detail::preset_info* info = detail::find_preset(spec.preset);
    if (info == nullptr) {
      m.fail("preset", "one of " + join(preset_names()) + ", got '" + spec.preset + "'" +
                           did_you_mean(spec.preset, preset_names()));
    }
    family = info->family;
    unit = info->sample_unit;
    spec.params = info->numbers;
    spec.flags = info->flags;
    for (const auto& [key, value] : m.node().items()) {
      if (key == "preset" || (key == "experts" && family == "transformer")) continue;
      if (info->flags.contains(key) && !key.starts_with("moe_")) {
        spec.flags[key] = *m.find_bool(key);
      } else if (info->numbers.contains(key) && !key.starts_with("moe_")) {
        const bool fraction = key == "lm_head_fraction";
        spec.params[key] =
            fraction ? m.get_number(key, 0, 1) : static_cast<double>(m.get_int(key, 0, 100000000));
      } else {
        std::string known;
        for (const auto& [k, v] : info->numbers) {
          if (!k.starts_with("moe_")) known += (known.empty() ? "" : ", ") + k;
        }
        for (const auto& [k, v] : info->flags) known += ", " + k;
        if (family == "transformer") known += ", experts";
        m.fail(key, "a parameter of preset " + spec.preset + " (" + known + ")");
      }
    }
    if (family == "transformer") {
      for (const char* key : {"layers", "hidden", "heads", "seq_len"}) {
        if (spec.params.at(key) < 1 &&
            !(key == std::string("seq_len") && spec.params.at("image_size") > 0)) {
          m.fail(key, "a positive integer");
        }
      }
      if (spec.params.at("head_dim") <= 0 &&
          static_cast<std::int64_t>(spec.params.at("hidden")) %
                  static_cast<std::int64_t>(spec.params.at("heads")) !=
              0) {
        m.fail("heads", "a divisor of hidden (or a head_dim)");
      }
      if (spec.params.at("activation_offload_layers") > spec.params.at("layers")) {
        m.fail("activation_offload_layers", "at most layers");
      }
      const auto kv_heads = static_cast<std::int64_t>(spec.params.at("kv_heads"));
      if (kv_heads > 0 && static_cast<std::int64_t>(spec.params.at("heads")) % kv_heads != 0) {
        m.fail("kv_heads", "a divisor of heads (0: as many as heads)");
      }
      if (spec.params.at("image_size") > 0) {
        // ViT: the patches tile the image, and the classifier has classes to score.
        if (spec.params.at("patch") < 1 || spec.params.at("patch") > spec.params.at("image_size")) {
          m.fail("patch", "a patch side of 1 to image_size pixels");
        }
        if (spec.params.at("classes") < 1) m.fail("classes", "at least 1 class");
      }
      // Sliding-window attention: a causal decoder's layers, all of them unless windowed_layers
      // says how many.
      const double window = spec.params.at("attention_window");
      const double windowed = spec.params.at("windowed_layers");
      if (window > 0) {
        if (!spec.flags.at("causal") || spec.params.at("memory_len") > 0) {
          m.fail("attention_window",
                 "0 for a model that is not a causal decoder without memory (a sliding window "
                 "is modelled for a decoder's earlier tokens)");
        }
        if (windowed > spec.params.at("layers")) m.fail("windowed_layers", "at most layers");
        if (windowed == 0) spec.params["windowed_layers"] = spec.params.at("layers");
      } else if (windowed > 0) {
        m.fail("windowed_layers", "0 without an attention_window");
      }
      if (m.has("experts")) {
        if (spec.params.at("image_size") > 0) {
          m.fail("experts", "no experts: a ViT preset has a dense FFN");
        }
        parse_experts(m.member("experts"), spec);
      }
    } else if (spec.params.at("image_size") < 32) {
      m.fail("image_size", "an integer of at least 32");
    }
    return spec;
  }
  family = "custom";
  unit = "sample";
  if (m.has("ops")) {
    m.expect_object({"ops", "params", "kernels_per_step", "param_tensors"});
    for (const json_reader& entry : m.elements("ops", 1)) {
      if (entry.has("gemm")) {
        entry.expect_object({"gemm", "count", "kind"});
        const auto dims = entry.elements("gemm", 3);
        if (dims.size() != 3) entry.fail("gemm", "[M, N, K]");
        std::int64_t mnk[3];
        for (std::size_t i = 0; i < 3; ++i) {
          if (!dims[i].node().is_number_integer() || dims[i].node().get<std::int64_t>() < 1 ||
              dims[i].node().get<std::int64_t>() > (std::int64_t{1} << 40)) {
            dims[i].fail_here("a positive integer");
          }
          mnk[i] = dims[i].node().get<std::int64_t>();
        }
        const std::string kind = entry.find_string("kind").value_or("matmul");
        if (kind != "matmul" && kind != "conv") entry.fail("kind", "\"matmul\" or \"conv\"");
        spec.ops.push_back(op{kind == "conv" ? op_kind::conv : op_kind::matmul, mnk[0], mnk[1],
                              mnk[2], entry.find_number("count", 1e-9, 1e9).value_or(1), 0, false,
                              false, 1});
      } else if (entry.has("elementwise_bytes")) {
        entry.expect_object({"elementwise_bytes", "count"});
        spec.ops.push_back(op{op_kind::memory, 0, 0, 0,
                              entry.find_number("count", 1e-9, 1e9).value_or(1),
                              entry.get_number("elementwise_bytes", 1, 1e15), false, false, 1});
      } else {
        entry.fail_here("an op: {\"gemm\": [M, N, K], \"count\": C} or {\"elementwise_bytes\": B}");
      }
    }
    spec.total_params = m.get_number("params", 1, 1e13);
    spec.params["kernels_per_step"] = m.find_number("kernels_per_step", 0, 1e7).value_or(0);
    spec.params["param_tensors"] = m.find_number("param_tensors", 0, 1e7).value_or(0);
    return spec;
  }
  m.expect_object({"flops_per_sample", "params", "activation_bytes_per_sample", "kernels_per_step",
                   "param_tensors"});
  if (!m.has("flops_per_sample")) {
    m.fail_here(
        "a model: {\"preset\": NAME}, {\"ops\": [...], \"params\": N} or "
        "{\"flops_per_sample\": F, \"params\": N}");
  }
  spec.flops_per_sample = m.get_number("flops_per_sample", 1, 1e18);
  spec.total_params = m.get_number("params", 1, 1e13);
  spec.bytes_per_sample = m.find_number("activation_bytes_per_sample", 0, 1e13).value_or(0);
  spec.params["kernels_per_step"] = m.find_number("kernels_per_step", 0, 1e7).value_or(0);
  spec.params["param_tensors"] = m.find_number("param_tensors", 0, 1e7).value_or(0);
  return spec;
}

void parse_data(const json_reader& d, workload& w) {
  d.expect_object({"source", "pipeline", "image", "bytes_per_sample_stored", "bytes_per_sample_h2d",
                   "dataset_bytes", "loader_workers_per_gpu", "loader", "format"});
  data_spec& data = w.data;
  if (auto s = d.find_string("source")) {
    if (*s != "synthetic" && *s != "storage") d.fail("source", "\"synthetic\" or \"storage\"");
    data.source = *s;
  }
  if (auto p = d.find_string("pipeline")) {
    if (*p != "jpeg_rrc_flip_normalize" && *p != "tokens" && *p != "none") {
      d.fail("pipeline", "\"jpeg_rrc_flip_normalize\", \"tokens\" or \"none\"");
    }
    data.pipeline = *p;
  }
  if (d.has("image")) {
    const json_reader image = d.member("image");
    image.expect_object({"width", "height", "out"});
    data.image_width =
        static_cast<int>(image.find_int("width", 8, 65536).value_or(data.image_width));
    data.image_height =
        static_cast<int>(image.find_int("height", 8, 65536).value_or(data.image_height));
    data.image_out = static_cast<int>(image.find_int("out", 8, 65536).value_or(data.image_out));
  }
  data.bytes_per_sample_stored = d.find_number("bytes_per_sample_stored", 1, max_sample_bytes)
                                     .value_or(data.bytes_per_sample_stored);
  data.bytes_per_sample_h2d = d.find_number("bytes_per_sample_h2d", 1, max_sample_bytes)
                                  .value_or(data.bytes_per_sample_h2d);
  data.dataset_bytes =
      d.find_number("dataset_bytes", 1, max_dataset_bytes).value_or(data.dataset_bytes);
  // PyTorch's num_workers=0 (loading inside the training process, in series with each step) is
  // not modelled: the loader ceiling assumes worker processes that overlap the GPU step.
  if (auto workers = d.find_int("loader_workers_per_gpu", 1, 1024)) {
    data.loader_workers_per_gpu = static_cast<int>(*workers);
  }
  if (auto loader = d.find_string("loader")) {
    const std::vector<std::string> names = detail::loader_names();
    if (std::find(names.begin(), names.end(), *loader) == names.end()) {
      d.fail("loader", "one of " + join(names));
    }
    data.loader = *loader;
  }
  if (auto format = d.find_string("format")) {
    if (*format != "files" && *format != "shards") d.fail("format", "\"files\" or \"shards\"");
    data.format = *format;
  }
}

// Defaults for the input pipeline by kind of sample, before the file's own data section.
void default_data(workload& w, const step_ops& probe) {
  data_spec& data = w.data;
  if (w.sample_unit == "image") {
    data.source = "storage";
    data.pipeline = "jpeg_rrc_flip_normalize";
    data.bytes_per_sample_stored = 110000;  // ImageNet-1k average JPEG
    data.dataset_bytes = 140e9;             // ImageNet-1k training set
  } else if (w.sample_unit == "sequence") {
    data.source = "storage";
    data.pipeline = "tokens";
    data.bytes_per_sample_stored = 2 * probe.tokens_per_sample;  // uint16 token ids
    data.bytes_per_sample_h2d = 8 * probe.tokens_per_sample;     // int64 token ids
  }
}

}  // namespace

double step_ops::matmul_flops() const {
  double flops = 0;
  for (const op& o : ops) {
    if (o.kind == op_kind::matmul || o.kind == op_kind::conv) {
      flops += 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) *
               static_cast<double>(o.k) * o.count;
    }
  }
  return flops;
}

const std::vector<std::string>& preset_names() {
  return detail::preset_names();
}

namespace {
// fp8: per-tensor scales (Transformer Engine's delayed or current scaling, torchao's tensorwise);
// mxfp8 and nvfp4: Blackwell's block-scaled types (TE's MXFP8BlockScaling, NVFP4BlockScaling).
constexpr std::array<training_precision, 7> precision_table{{
    {"fp32", "fp32", 4, false, "fp32"},
    {"tf32", "tf32", 4, false, "tf32"},
    {"amp_fp16", "fp16", 2, true, "fp16"},
    {"amp_bf16", "bf16", 2, true, "bf16"},
    {"fp8", "fp8", 2, true, "bf16"},
    {"mxfp8", "mxfp8", 2, true, "bf16"},
    {"nvfp4", "nvfp4", 2, true, "bf16"},
}};
constexpr bool every_gemm_dtype_known() {
  for (const auto& p : precision_table) {
    if (!is_gemm_dtype(p.gemm_dtype)) return false;
  }
  return true;
}
static_assert(every_gemm_dtype_known(), "a training precision names a GEMM dtype gpubench lacks");
}  // namespace

namespace {
// docs/model.md, "The optimizer", derives each row: fused = the state read and written once in
// fp32; unfused = one kernel per torch.optim operation, each a pass over an fp32 tensor.
constexpr std::array<optimizer_kind, 4> optimizer_table{{
    {"sgd", 20, 11, 4, 4},
    {"adam", 28, 20, 8, 8},
    {"adamw", 28, 22, 9, 8},
    {"lamb", 32, 25, 10, 8},
}};
constexpr std::array<std::string_view, 3> optimizer_impl_table{"fused", "foreach", "per_tensor"};

template <typename Names>
std::string quoted_names(const Names& names) {
  std::vector<std::string> quoted;
  quoted.reserve(std::size(names));
  for (const std::string_view name : names) quoted.push_back(json(name).dump());  // JSON quoting
  return join(quoted);
}
std::string optimizer_names() {
  std::vector<std::string_view> names;
  names.reserve(optimizer_table.size());
  for (const optimizer_kind& o : optimizer_table) names.push_back(o.name);
  return quoted_names(names);
}

// nullptr for a name not in the table.
const optimizer_kind* find_optimizer(std::string_view name) {
  const auto it = std::find_if(optimizer_table.begin(), optimizer_table.end(),
                               [&](const optimizer_kind& o) { return o.name == name; });
  return it == optimizer_table.end() ? nullptr : &*it;
}
}  // namespace

const optimizer_kind& optimizer_of(std::string_view name) {
  if (const optimizer_kind* kind = find_optimizer(name)) return *kind;
  std::vector<std::string> names;
  names.reserve(optimizer_table.size());
  for (const optimizer_kind& o : optimizer_table) names.emplace_back(o.name);
  throw input_error("optimizer: expected one of " + optimizer_names() + ", got '" +
                    std::string(name) + "'" + did_you_mean(name, names));
}

std::span<const training_precision> training_precisions() {
  return precision_table;
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    out.reserve(precision_table.size());
    for (const auto& p : precision_table) out.emplace_back(p.name);
    return out;
  }();
  return names;
}

const training_precision& precision_of(std::string_view name) {
  for (const auto& p : precision_table) {
    if (p.name == name) return p;
  }
  throw input_error("precision: expected one of " + join(precision_names()) + ", got '" +
                    std::string(name) + "'" + did_you_mean(name, precision_names()));
}

// A workload's gradient_precision and parameter_precision: fp32 (every stack's default), or the
// 16-bit weights' own precision (Megatron's grad_reduce_in_fp32=False; a model kept in bf16).
constexpr std::array<std::string_view, 2> state_precision_table{"fp32", "weights"};
// parameter_precision may also be "master": the model cast to 16-bit with its gradients, and an
// fp32 master copy held by the optimizer (apex amp O2, DeepSpeed's fp16 and bf16 modes).
constexpr std::array<std::string_view, 3> parameter_precision_table{
    state_precision_table[0], state_precision_table[1], "master"};

double activation_bytes(const std::string& precision) {
  return precision_of(precision).activation_bytes;
}

bool sixteen_bit_parameters(const workload& w, const std::string& precision) {
  return w.parameter_precision == parameter_precision_table[1] && precision_of(precision).mixed;
}

bool master_copy_parameters(const workload& w, const std::string& precision) {
  return w.parameter_precision == parameter_precision_table[2] && precision_of(precision).mixed;
}

double gradient_bytes(const workload& w, const std::string& precision) {
  const training_precision& format = precision_of(precision);
  const bool sixteen = (w.gradient_precision == state_precision_table[1] && format.mixed) ||
                       sixteen_bit_parameters(w, precision) || master_copy_parameters(w, precision);
  return sixteen ? format.activation_bytes : 4.0;
}

std::string gemm_dtype(const std::string& precision) {
  return std::string(precision_of(precision).gemm_dtype);
}

namespace {

// "finetune": {method, rank, targets}: adapters on a language model's linear layers.
finetune_spec parse_finetune(const json_reader& f, const workload& w) {
  f.expect_object({"method", "rank", "targets"});
  finetune_spec tune;
  tune.method = f.get_string("method");
  const std::vector<std::string>& methods = finetune_methods();
  if (std::find(methods.begin(), methods.end(), tune.method) == methods.end()) {
    f.fail("method", "one of " + quoted_names(methods) + did_you_mean(tune.method, methods));
  }
  tune.rank = static_cast<int>(f.find_int("rank", 1, 1 << 16).value_or(tune.rank));
  if (f.has("targets")) {
    const std::vector<std::string>& known = finetune_targets();
    for (const json_reader& t : f.elements("targets", 1)) {
      if (!t.node().is_string() ||
          std::find(known.begin(), known.end(), t.node().get<std::string>()) == known.end()) {
        t.fail_here("one of " + quoted_names(known));
      }
      tune.targets.push_back(t.node().get<std::string>());
    }
  }
  if (tune.adapters() && (w.family != "transformer" || w.model.preset.empty() ||
                          w.model.params.at("image_size") > 0 || expert_count(w.model) > 0)) {
    f.fail("method",
           "\"full\": adapters are modelled on dense language-model transformer presets only");
  }
  return tune;
}

}  // namespace

workload parse_workload(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  if (!doc.is_object()) root.fail_here("a gpubench.workload/1 object");
  root.expect_object({"schema", "name", "description", "model", "precision", "batch_per_gpu",
                      "gradient_accumulation", "optimizer", "optimizer_impl", "gradient_precision",
                      "parameter_precision", "stack", "finetune", "data", "parallel", "reference"});
  if (root.get_string("schema") != workload_schema) {
    root.fail("schema", std::string("\"") + workload_schema + "\"");
  }
  workload w;
  w.file = file;
  w.name = root.get_string("name");
  if (w.name.empty()) root.fail("name", "a non-empty string");
  w.description = root.find_string("description").value_or("");
  const json_reader m = root.member("model");
  if (!m.node().is_object()) m.fail_here("an object");
  w.model = parse_model(m, w.family, w.sample_unit);
  if (auto p = root.find_string("precision")) {
    if (std::find(precision_names().begin(), precision_names().end(), *p) ==
        precision_names().end()) {
      root.fail("precision", "one of " + join(precision_names()));
    }
    w.precision = *p;
  }
  w.batch_per_gpu =
      static_cast<int>(root.find_int("batch_per_gpu", 1, max_batch).value_or(w.batch_per_gpu));
  w.gradient_accumulation =
      static_cast<int>(root.find_int("gradient_accumulation", 1, max_accumulation).value_or(1));
  if (auto o = root.find_string("optimizer")) {
    if (find_optimizer(*o) == nullptr) root.fail("optimizer", "one of " + optimizer_names());
    w.optimizer = *o;
  }
  if (auto impl = root.find_string("optimizer_impl")) {
    if (std::find(optimizer_impl_table.begin(), optimizer_impl_table.end(), *impl) ==
        optimizer_impl_table.end()) {
      root.fail("optimizer_impl", "one of " + quoted_names(optimizer_impl_table));
    }
    w.optimizer_impl = *impl;
  }
  if (auto stack = root.find_string("stack")) {
    const constants c = load_constants();
    const std::vector<std::string> stacks = c.stack_names();
    if (std::find(stacks.begin(), stacks.end(), *stack) == stacks.end()) {
      root.fail("stack", "one of " + join(stacks));
    }
    w.stack = *stack;
    // Megatron's distributed optimizer unless the workload names a strategy.
    if (auto kind = c.memory_layout_of(*stack).default_strategy) w.strategy = *kind;
  }
  const auto state_precision =
      [&root](const char* key,
              std::span<const std::string_view> names) -> std::optional<std::string> {
    auto value = root.find_string(key);
    if (value && std::find(names.begin(), names.end(), *value) == names.end()) {
      root.fail(key, "one of " + quoted_names(names));
    }
    return value;
  };
  const bool mixed = precision_of(w.precision).mixed;
  if (auto params = state_precision("parameter_precision", parameter_precision_table)) {
    if (*params != state_precision_table[0] && !mixed) {
      root.fail("parameter_precision", "\"fp32\": 16-bit parameters need a mixed precision");
    }
    w.parameter_precision = *params;
  }
  if (auto grads = state_precision("gradient_precision", state_precision_table)) {
    // 16-bit gradients are the 16-bit weights' own: a stack that keeps fp32 weights (torch.amp)
    // has fp32 gradients unless the parameters themselves are 16-bit.
    if (*grads != state_precision_table[0] &&
        (!mixed || (load_constants().memory_layout_of(w.stack).fp32_parameters &&
                    w.parameter_precision == state_precision_table[0]))) {
      root.fail("gradient_precision",
                "\"fp32\": only 16-bit weights (the megatron and mlperf stacks, or "
                "parameter_precision \"weights\") under a mixed precision have 16-bit gradients");
    }
    w.gradient_precision = *grads;
  }
  if (root.has("finetune")) w.finetune = parse_finetune(root.member("finetune"), w);
  default_data(w, w.model.preset.empty() ? step_ops{} : expand(w, 1));
  if (root.has("data")) parse_data(root.member("data"), w);
  if (w.data.bytes_per_sample_h2d <= 0 && w.data.pipeline == "jpeg_rrc_flip_normalize") {
    w.data.bytes_per_sample_h2d = 3.0 * w.data.image_out * w.data.image_out;  // uint8 HWC
  }
  if (root.has("parallel")) {
    const json_reader p = root.member("parallel");
    p.expect_object({"gpus", "nodes", "strategy", "tensor", "pipeline", "sequence_parallel",
                     "tensor_overlap", "expert", "expert_tensor", "expert_dispatcher",
                     "expert_overlap", "virtual_pipeline", "context"});
    if (auto g = p.find_int("gpus", 1, max_gpus_per_node)) w.gpus = static_cast<int>(*g);
    w.nodes = static_cast<int>(p.find_int("nodes", 1, max_nodes).value_or(1));
    if (auto s = p.find_string("strategy")) {
      const auto kind = strategy_from_string(*s);
      if (!kind) p.fail("strategy", strategy_choices());
      w.strategy = *kind;
    }
    w.tensor = static_cast<int>(p.find_int("tensor", 1, max_gpus_per_node).value_or(1));
    w.pipeline = static_cast<int>(p.find_int("pipeline", 1, max_pipeline_stages).value_or(1));
    w.sequence_parallel = p.find_bool("sequence_parallel").value_or(false);
    w.tensor_overlap = p.find_bool("tensor_overlap").value_or(false);
    w.expert = static_cast<int>(p.find_int("expert", 1, max_gpus_per_node * max_nodes).value_or(1));
    w.expert_tensor =
        static_cast<int>(p.find_int("expert_tensor", 1, max_gpus_per_node).value_or(1));
    w.virtual_pipeline =
        static_cast<int>(p.find_int("virtual_pipeline", 1, max_pipeline_stages).value_or(1));
    if (w.virtual_pipeline > 1 && w.pipeline < 2) {
      p.fail("virtual_pipeline", "1 without a pipeline (pipeline > 1)");
    }
    if (auto d = p.find_string("expert_dispatcher")) {
      const auto kind = dispatch_from_string(*d);
      if (!kind) p.fail("expert_dispatcher", dispatch_choices());
      w.expert_dispatcher = *kind;
    }
    w.expert_overlap = p.find_bool("expert_overlap").value_or(false);
    w.context =
        static_cast<int>(p.find_int("context", 1, max_gpus_per_node * max_nodes).value_or(1));
    if (w.context > 1) {
      if (w.family != "transformer" || w.model.preset.empty() ||
          w.model.params.at("image_size") > 0) {
        p.fail("context", "1: context parallelism splits a language model's sequences");
      }
      const auto seq = static_cast<std::int64_t>(w.model.params.at("seq_len"));
      if (seq % w.context != 0) {
        p.fail("context", "a divisor of the sequence length " + std::to_string(seq));
      }
    }
    check_model_parallel(w, p);
  }
  if (root.has("reference")) {
    const json_reader r = root.member("reference");
    r.expect_object({"hardware", "gpus", "batch_per_gpu", "gradient_accumulation", "samples_per_s",
                     "precision"});
    reference_point ref;
    ref.hardware = r.get_string("hardware");
    ref.gpus = static_cast<int>(r.find_int("gpus", 1, max_gpus_per_node * max_nodes).value_or(1));
    ref.batch_per_gpu =
        static_cast<int>(r.find_int("batch_per_gpu", 1, max_batch).value_or(w.batch_per_gpu));
    if (auto a = r.find_int("gradient_accumulation", 1, max_accumulation)) {
      ref.gradient_accumulation = static_cast<int>(*a);
    }
    ref.samples_per_s = r.get_number("samples_per_s", 1e-9, 1e12);
    if (auto p = r.find_string("precision")) {
      if (std::find(precision_names().begin(), precision_names().end(), *p) ==
          precision_names().end()) {
        r.fail("precision", "one of " + join(precision_names()));
      }
      ref.precision = *p;
    }
    w.reference = ref;
    try {
      resolve_reference(w);
    } catch (const input_error& e) {
      r.fail("hardware",
             std::string("catalog:NAME, a results file or a hardware profile (") + e.what() + ")");
    }
  }
  return w;
}

void resolve_reference(workload& w) {
  if (w.reference && !w.reference->profile) {
    w.reference->profile =
        std::make_shared<const hardware_profile>(load_hardware(w.reference->hardware));
  }
}

workload load_workload(const std::string& name_or_file) {
  const bool looks_like_path =
      name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".json");
  fs::path path =
      looks_like_path ? fs::path(name_or_file) : workloads_dir() / (name_or_file + ".json");
  std::error_code ec;
  if (!looks_like_path && (!fs::exists(path, ec) || name_or_file == "default")) {
    throw input_error("--workload: expected a workload name (" + join(workload_names()) +
                      ") or a workload file, got '" + name_or_file + "'" +
                      did_you_mean(name_or_file, workload_names()));
  }
  return parse_workload(read_json_file(path), path.string());
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(workloads_dir(), ec)) {
    if (entry.path().extension() == ".json" && entry.path().stem() != "default") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> default_workloads() {
  const fs::path path = workloads_dir() / "default.json";
  const json doc = read_json_file(path);
  const json_reader root(doc, path.string());
  root.expect_object({"schema", "workloads"});
  std::vector<std::string> names;
  for (const json_reader& entry : root.elements("workloads", 1)) {
    if (!entry.node().is_string()) entry.fail_here("a workload name");
    names.push_back(entry.node().get<std::string>());
  }
  return names;
}

step_ops expand(const workload& w, int batch) {
  const double act = activation_bytes(w.precision);
  if (!w.model.preset.empty()) {
    detail::model_split split{w.tensor, w.pipeline, w.sequence_parallel, w.gradient_accumulation};
    split.expert = w.expert;
    split.expert_tensor = w.expert_tensor;
    split.extra_in_flight = detail::expert_overlapped(w) ? 1 : 0;
    split.context = w.context;
    const auto stage = [&] {
      step_ops ops =
          detail::expand_preset(w.model.preset, w.model.params, w.model.flags, batch, act, split);
      detail::apply_finetune(ops, w.finetune, w.model.params, w.model.flags, batch, act, split);
      detail::apply_fp8_casts(ops, precision_of(w.precision));
      return ops;
    };
    const auto layers = w.model.params.find("layers");
    const auto uneven =
        layers != w.model.params.end() && w.pipeline > 1 &&
                static_cast<std::int64_t>(layers->second) % w.pipeline != 0
            ? detail::split_unevenly(static_cast<std::int64_t>(layers->second), w.pipeline)
            : std::nullopt;
    if (!uneven) return stage();
    // The step is the slowest stage's: the last (fewer layers, the vocabulary projection and the
    // loss) or the fullest middle one, whichever runs more FLOPs.
    split.stage_layers = uneven->last;
    step_ops last = stage();
    if (uneven->middle == 0) return last;
    split.stage_layers = uneven->middle;
    split.last_stage = false;
    step_ops middle = stage();
    return middle.matmul_flops() > last.matmul_flops() ? middle : last;
  }
  step_ops step;
  step.params = w.model.total_params.value_or(0);
  const auto stated = [&](const char* key) {
    const auto it = w.model.params.find(key);
    return it == w.model.params.end() ? 0.0 : it->second;
  };
  step.kernels = stated("kernels_per_step");
  step.param_tensors = stated("param_tensors");
  step.param_groups = step.param_tensors;  // no layer structure is known
  if (w.model.flops_per_sample) {
    // Totals: the FLOPs run as large square GEMMs; the bytes as memory-bound kernels.
    constexpr std::int64_t side = 4096;
    const double per_gemm = 2.0 * static_cast<double>(side) * side * side;
    step.ops.push_back(op{op_kind::matmul, side, side, side,
                          *w.model.flops_per_sample * batch / per_gemm, 0, false, false, 1});
    if (w.model.bytes_per_sample.value_or(0) > 0) {
      step.ops.push_back(
          op{op_kind::memory, 0, 0, 0, 1, *w.model.bytes_per_sample * batch, false, false, 1});
    }
    return step;
  }
  // Explicit ops are stated at the workload's batch; another batch scales their counts.
  const double scale = static_cast<double>(batch) / w.batch_per_gpu;
  for (op o : w.model.ops) {
    o.count *= scale;
    step.ops.push_back(o);
  }
  return step;
}

json to_json(const workload& w) {
  json model = json::object();
  if (!w.model.preset.empty()) {
    model["preset"] = w.model.preset;
    for (const auto& [k, v] : w.model.params) {
      if (!k.starts_with("moe_")) model[k] = v;
    }
    if (expert_count(w.model) > 0) {
      json experts = json::object();
      for (const expert_member& m : expert_members) experts[m.name] = w.model.params.at(m.param);
      model["experts"] = std::move(experts);
    }
    for (const auto& [k, v] : w.model.flags) model[k] = v;
  } else if (w.model.flops_per_sample) {
    model["flops_per_sample"] = *w.model.flops_per_sample;
    model["params"] = w.model.total_params.value_or(0);
  } else {
    model["ops"] = w.model.ops.size();
    model["params"] = w.model.total_params.value_or(0);
  }
  json data = {{"source", w.data.source},
               {"pipeline", w.data.pipeline},
               {"bytes_per_sample_stored", w.data.bytes_per_sample_stored},
               {"bytes_per_sample_h2d", w.data.bytes_per_sample_h2d},
               {"dataset_bytes", w.data.dataset_bytes},
               {"loader", w.data.loader},
               {"format", w.data.format}};
  if (w.data.pipeline == "jpeg_rrc_flip_normalize") {
    data["image"] = {
        {"width", w.data.image_width}, {"height", w.data.image_height}, {"out", w.data.image_out}};
  }
  json out = {{"name", w.name},
              {"file", w.file},
              {"model", model},
              {"family", w.family},
              {"sample", w.sample_unit},
              {"precision", w.precision},
              {"batch_per_gpu", w.batch_per_gpu},
              {"gradient_accumulation", w.gradient_accumulation},
              {"optimizer", w.optimizer},
              {"optimizer_impl", w.optimizer_impl},
              {"gradient_precision", w.gradient_precision},
              {"parameter_precision", w.parameter_precision},
              {"data", data},
              {"strategy", w.strategy},
              {"tensor", w.tensor},
              {"pipeline", w.pipeline},
              {"sequence_parallel", w.sequence_parallel},
              {"tensor_overlap", w.tensor_overlap},
              {"expert", w.expert},
              {"expert_tensor", w.expert_tensor},
              {"expert_dispatcher", w.expert_dispatcher},
              {"expert_overlap", w.expert_overlap},
              {"virtual_pipeline", w.virtual_pipeline},
              {"context", w.context},
              {"stack", w.stack}};
  if (w.finetune.adapters()) {
    out["finetune"] = {
        {"method", w.finetune.method},
        {"rank", w.finetune.rank},
        {"targets", w.finetune.targets.empty() ? finetune_targets() : w.finetune.targets}};
  }
  if (w.reference) {
    out["reference"] = {{"hardware", w.reference->hardware},
                        {"gpus", w.reference->gpus},
                        {"batch_per_gpu", w.reference->batch_per_gpu},
                        {"gradient_accumulation",
                         w.reference->gradient_accumulation.value_or(w.gradient_accumulation)},
                        {"samples_per_s", w.reference->samples_per_s},
                        {"precision", w.reference->precision}};
  }
  return out;
}

}  // namespace gpubench::model
