// The model's named constants (configs/model/constants.json): what no microbenchmark measures,
// fitted on the calibration set or taken from sources (docs/model.md).
#include <algorithm>
#include <optional>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/model.hpp"

namespace gpubench::model {

namespace {

struct constant_field {
  const char* name;
  double constants::*member;
  // Which way makes a step faster, for the constants a stack may only improve on (docs/model.md,
  // "Software stacks"); none for the rest.
  std::optional<better> faster = std::nullopt;
};

constexpr constant_field constant_fields[] = {
    {"matmul_efficiency", &constants::matmul_efficiency, better::higher},
    {"conv_efficiency", &constants::conv_efficiency, better::higher},
    {"memory_efficiency", &constants::memory_efficiency, better::higher},
    {"kernel_overhead_us", &constants::kernel_overhead_us, better::lower},
    {"comm_overlap", &constants::comm_overlap},
    {"expert_comm_overlap", &constants::expert_comm_overlap},
    {"loader_efficiency", &constants::loader_efficiency},
    {"loader_efficiency_low", &constants::loader_efficiency_low},
    {"loader_efficiency_high", &constants::loader_efficiency_high},
    {"loader_decode_share", &constants::loader_decode_share},
    {"loader_resize_share", &constants::loader_resize_share},
    {"loader_transform_share", &constants::loader_transform_share},
    {"loader_torchvision_io_share", &constants::loader_torchvision_io_share},
    {"pillow_simd_resize_speedup", &constants::pillow_simd_resize_speedup},
    {"dali_gpu_decode_per_gpu", &constants::dali_gpu_decode_per_gpu},
    {"page_cache_fraction", &constants::page_cache_fraction},
    {"network_efficiency", &constants::network_efficiency},
    {"nvlink_busbw_fraction", &constants::nvlink_busbw_fraction},
    {"pcie_busbw_fraction", &constants::pcie_busbw_fraction},
    {"allreduce_latency_us", &constants::allreduce_latency_us},
    {"ddp_bucket_bytes", &constants::ddp_bucket_bytes},
    {"default_augment_per_core", &constants::default_augment_per_core},
    {"default_network_gbps", &constants::default_network_gbps},
    {"max_network_gbps_per_gpu", &constants::max_network_gbps_per_gpu},
    {"default_launch_latency_us", &constants::default_launch_latency_us},
    {"loader_cores_reserved_per_gpu", &constants::loader_cores_reserved_per_gpu},
    {"memory_pass_fraction", &constants::memory_pass_fraction, better::lower},
    {"nchw_conv_passes", &constants::nchw_conv_passes, better::lower},
    {"winograd_flop_reduction", &constants::winograd_flop_reduction},
    {"framework_reserved_GiB", &constants::framework_reserved_GiB},
    {"allocator_fragmentation", &constants::allocator_fragmentation},
    {"memory_headroom", &constants::memory_headroom},
    {"band_widening", &constants::band_widening},
};

// The choices of a stack's "memory" object, each a yes or no (docs/model.md, "Memory").
struct layout_field {
  const char* name;
  bool memory_layout::*member;
};
constexpr layout_field layout_fields[] = {
    {"fp32_parameters", &memory_layout::fp32_parameters},
    {"autocast_copies", &memory_layout::autocast_copies},
    {"gradient_buckets", &memory_layout::gradient_buckets},
    {"fp8_weight_copies", &memory_layout::fp8_weight_copies},
    {"quantized_saved_inputs", &memory_layout::quantized_saved_inputs},
};

memory_layout parse_layout(const json_reader& r) {
  std::vector<std::string_view> known{"default_strategy", "source"};
  for (const layout_field& f : layout_fields) known.emplace_back(f.name);
  r.expect_object(known);
  memory_layout m;
  for (const layout_field& f : layout_fields) {
    const auto value = r.find_bool(f.name);
    if (!value) r.fail(f.name, "true or false");
    m.*f.member = *value;
  }
  if (auto name = r.find_string("default_strategy")) {
    m.default_strategy = strategy_from_string(*name);
    if (!m.default_strategy) r.fail("default_strategy", strategy_choices());
  }
  m.source = r.find_string("source").value_or("");
  if (m.source.empty()) r.fail("source", "where this stack's memory layout is documented");
  return m;
}

bool is_constant(const std::string& name) {
  return std::any_of(std::begin(constant_fields), std::end(constant_fields),
                     [&name](const constant_field& f) { return name == f.name; });
}

// A stack that improves on another may not make a step slower than it through any constant,
// unless the entry says why (a sourced `slower_because`): a fit on another framework's rows is
// not a reason (issue 40: torch.compile predicted slower than eager PyTorch).
void check_improves(const constants& c, const constants::stack_entry& entry,
                    const json_reader& values) {
  const constants base = c.for_stack(entry.improves_on);
  for (const auto& [name, value] : entry.values) {
    const std::optional<better> faster = constants::faster_way(name);
    if (!faster || entry.slower_because.contains(name)) continue;
    const double was = base.at(name);
    if (*faster == better::higher ? value < was : value > was) {
      values.member(name).fail("value",
                               std::string(*faster == better::higher ? "at least " : "at most ") +
                                   format_plain(was) + " (" + entry.improves_on + "'s " + name +
                                   ": this stack improves on it), or a sourced slower_because");
    }
  }
}

}  // namespace

const std::vector<std::string>& constants::fitted_names() {
  static const std::vector<std::string> names{"matmul_efficiency", "conv_efficiency",
                                              "memory_efficiency", "kernel_overhead_us"};
  return names;
}

double& constants::at(const std::string& name) {
  for (const auto& field : constant_fields) {
    if (name == field.name) return this->*field.member;
  }
  throw input_error("unknown model constant '" + name + "'");
}

std::optional<better> constants::faster_way(const std::string& name) {
  for (const constant_field& f : constant_fields) {
    if (name == f.name) return f.faster;
  }
  throw input_error("unknown model constant '" + name + "'");
}

double constants::at(const std::string& name) const {
  return const_cast<constants*>(this)->at(name);
}

const constants::stack_entry& constants::stack_named(const std::string& name) const {
  for (const stack_entry& s : stacks) {
    if (s.name == name) return s;
  }
  throw input_error("stack: expected one of " + join(stack_names()) + ", got '" + name + "'" +
                    did_you_mean(name, stack_names()));
}

memory_layout constants::memory_layout_of(const std::string& name) const {
  // A stack without its own layout keeps the state as the stack it improves on does.
  for (const stack_entry* s = &stack_named(name);; s = &stack_named(s->improves_on)) {
    if (s->memory) return *s->memory;
    if (s->improves_on.empty()) return memory;
  }
}

std::vector<std::string> constants::stack_names() const {
  std::vector<std::string> names;
  names.reserve(stacks.size());
  for (const stack_entry& s : stacks) names.push_back(s.name);
  return names;
}

constants constants::for_stack(const std::string& name) const {
  // Constants built in code with no stack table apply as they are.
  if (stacks.empty()) return *this;
  const stack_entry& entry = stack_named(name);
  constants out = *this;
  for (const auto& [constant, value] : out.base_values) out.at(constant) = value;
  out.base_values.clear();
  for (const auto& [constant, value] : entry.values) {
    out.base_values[constant] = out.at(constant);
    out.at(constant) = value;
  }
  out.stack = name;
  out.memory = memory_layout_of(name);
  return out;
}

constants parse_constants(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "fitted_on", "constants", "stacks"});
  if (root.get_string("schema") != "gpubench.model-constants/1") {
    root.fail("schema", "\"gpubench.model-constants/1\"");
  }
  constants c;
  const json_reader table = root.member("constants");
  for (const auto& field : constant_fields) {
    const json_reader entry = table.member(field.name);
    entry.expect_object({"value", "fitted", "source"});
    c.*field.member = entry.get_number("value", 0, 1e12);
    c.sources[field.name] = entry.find_string("source").value_or("");
  }
  for (const auto& item : table.node().items()) {
    const std::string& key = item.key();
    if (std::none_of(std::begin(constant_fields), std::end(constant_fields),
                     [&key](const constant_field& f) { return key == f.name; })) {
      table.fail(key, "a known model constant");
    }
  }
  // The stacks: the first is the default and keeps the base values; each other names the
  // constants it sets, each with its source and whether it was fitted on the stack's rows.
  for (const json_reader& s : root.elements("stacks", 1)) {
    s.expect_object({"name", "about", "improves_on", "constants", "memory"});
    constants::stack_entry entry;
    entry.name = s.get_string("name");
    entry.about = s.get_string("about");
    entry.improves_on = s.find_string("improves_on").value_or("");
    if (!entry.improves_on.empty() &&
        std::none_of(c.stacks.begin(), c.stacks.end(),
                     [&](const auto& e) { return e.name == entry.improves_on; })) {
      s.fail("improves_on", "a stack listed before this one");
    }
    if (entry.name.empty() || std::any_of(c.stacks.begin(), c.stacks.end(),
                                          [&](const auto& e) { return e.name == entry.name; })) {
      s.fail("name", "a stack name not used before");
    }
    const json_reader values = s.member("constants");
    if (!values.node().is_object()) values.fail_here("an object");
    if (c.stacks.empty() && !values.node().empty()) {
      values.fail_here("an empty object (the first stack is the default: the base constants)");
    }
    for (const auto& item : values.node().items()) {
      if (!is_constant(item.key())) values.fail(item.key(), "a known model constant");
      const json_reader entry_value = values.member(item.key());
      entry_value.expect_object({"value", "fitted", "source", "slower_because"});
      entry.values[item.key()] = entry_value.get_number("value", 0, 1e12);
      entry.sources[item.key()] = entry_value.find_string("source").value_or("");
      if (auto why = entry_value.find_string("slower_because")) {
        entry.slower_because[item.key()] = std::move(*why);
      }
      if (entry_value.find_bool("fitted").value_or(false)) entry.fitted.push_back(item.key());
    }
    if (!entry.improves_on.empty()) check_improves(c, entry, values);
    if (s.has("memory")) {
      entry.memory = parse_layout(s.member("memory"));
    } else if (c.stacks.empty()) {
      s.fail("memory", "the default stack's memory layout");
    }
    c.stacks.push_back(std::move(entry));
  }
  c.stack = c.stacks.front().name;
  c.memory = *c.stacks.front().memory;
  return c;
}

constants load_constants() {
  const auto path = config_dir() / "model" / "constants.json";
  return parse_constants(read_json_file(path), path.string());
}

json to_json(const constants& c) {
  json out = json::object();
  for (const auto& field : constant_fields) out[field.name] = c.*field.member;
  out["stack"] = c.stack;
  return out;
}

}  // namespace gpubench::model
