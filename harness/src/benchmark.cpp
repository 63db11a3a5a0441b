#include "gpubench/harness/benchmark.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/context.hpp"

namespace gpubench {

// ---- axis_values -------------------------------------------------------------------------

void axis_values::set(std::string name, axis_value value) {
  for (auto& [key, existing] : entries_) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

const axis_value& axis_values::find(std::string_view name) const {
  for (const auto& [key, value] : entries_) {
    if (key == name) {
      return value;
    }
  }
  throw std::out_of_range("no axis named '" + std::string(name) + "'");
}

bool axis_values::contains(std::string_view name) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const auto& entry) { return entry.first == name; });
}

std::int64_t axis_values::get_int64(std::string_view name) const {
  const auto& value = find(name);
  if (const auto* number = std::get_if<std::int64_t>(&value)) {
    return *number;
  }
  throw std::logic_error("axis '" + std::string(name) + "' is not an integer axis");
}

const std::string& axis_values::get_string(std::string_view name) const {
  const auto& value = find(name);
  if (const auto* text = std::get_if<std::string>(&value)) {
    return *text;
  }
  throw std::logic_error("axis '" + std::string(name) + "' is not a string axis");
}

std::string axis_values::label() const {
  std::string out;
  for (const auto& [key, value] : entries_) {
    if (!out.empty()) {
      out += ' ';
    }
    out += key + '=';
    out += std::visit(
        [](const auto& v) -> std::string {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            return v;
          } else {
            return std::to_string(v);
          }
        },
        value);
  }
  return out;
}

json axis_values::to_json() const {
  json out = json::object();
  for (const auto& entry : entries_) {
    std::visit([&](const auto& v) { out[entry.first] = v; }, entry.second);
  }
  return out;
}

// ---- metrics -----------------------------------------------------------------------------

namespace {
std::string range_value(axis_kind kind, std::int64_t value) {
  return kind == axis_kind::bytes ? format_bytes(static_cast<std::uint64_t>(value))
                                  : std::to_string(value);
}
}  // namespace

std::string describe_range(axis_kind kind, const axis_range& range) {
  std::string text = kind == axis_kind::bytes ? "a size from " : "an integer from ";
  text += range_value(kind, range.min) + " to " + range_value(kind, range.max);
  if (range.step > 1) text += ", a multiple of " + range_value(kind, range.step);
  return text;
}

void check_in_range(axis_kind kind, const axis_range& range, std::int64_t value) {
  if (value < range.min || value > range.max || value % range.step != 0) {
    std::string got = std::to_string(value);
    if (kind == axis_kind::bytes) got += value == 1 ? " byte" : " bytes";
    throw std::invalid_argument("expected " + describe_range(kind, range) + ", got " + got);
  }
}

namespace {
// The unit a kind's formula gives its value in.
const vocabulary::unit& base_unit(metric_kind kind) {
  switch (kind) {
    case metric_kind::bandwidth:
      return units::bytes_per_s;
    case metric_kind::compute:
      return units::FLOPs;
    case metric_kind::items_per_s:
      return units::per_s;
    case metric_kind::time_per_item:
    case metric_kind::time_per_iteration:
      return units::seconds;
  }
  throw std::logic_error("unknown metric kind");
}
}  // namespace

double derive_metric(metric_kind kind, const work& w, double seconds_per_iteration,
                     const vocabulary::unit& unit) {
  if (!(seconds_per_iteration > 0)) {
    throw std::invalid_argument("derive_metric: iteration time must be positive");
  }
  const double t = seconds_per_iteration;
  double value = 0;
  switch (kind) {
    case metric_kind::bandwidth:
      value = (w.bytes_read + w.bytes_written) / t;
      break;
    case metric_kind::compute:
      value = w.flops / t;
      break;
    case metric_kind::items_per_s:
      value = w.items / t;
      break;
    case metric_kind::time_per_item:
      if (!(w.items > 0)) {
        throw std::invalid_argument("derive_metric: time_per_item needs items > 0");
      }
      value = t / w.items;
      break;
    case metric_kind::time_per_iteration:
      value = t;
      break;
  }
  return vocabulary::convert(value, base_unit(kind), unit);
}

// ---- benchmark_definition ----------------------------------------------------------------

benchmark_definition::benchmark_definition(std::string id) : id_(std::move(id)) {}

benchmark_definition& benchmark_definition::set_description(std::string text) {
  description_ = std::move(text);
  return *this;
}

benchmark_definition& benchmark_definition::add_axis(axis a) {
  if (find_axis(a.name) != nullptr) {
    throw std::logic_error(id_ + ": axis '" + a.name + "' declared twice");
  }
  axes_.push_back(std::move(a));
  return *this;
}

benchmark_definition& benchmark_definition::add_axis(std::string name, axis_kind kind,
                                                     std::vector<axis_value> values,
                                                     std::string description) {
  return add_axis(axis{std::move(name), kind, std::move(description),
                       [values = std::move(values)](const context&) { return values; }});
}

benchmark_definition& benchmark_definition::add_choice_axis(std::string name,
                                                            std::vector<std::string> choices,
                                                            std::string description,
                                                            std::vector<std::string> defaults) {
  if (defaults.empty()) defaults = choices;
  for (const auto& d : defaults) {
    if (std::find(choices.begin(), choices.end(), d) == choices.end()) {
      std::string what = id_;
      what.append(": axis '").append(name).append("' defaults to '").append(d);
      what.append("', not one of its choices");
      throw std::logic_error(what);
    }
  }
  std::vector<axis_value> values(defaults.begin(), defaults.end());
  auto check = [choices](const axis_value& value) {
    const auto* text = std::get_if<std::string>(&value);
    if (text == nullptr || std::find(choices.begin(), choices.end(), *text) == choices.end()) {
      throw std::invalid_argument("expected one of " + join(choices) + ", got '" +
                                  (text ? *text : std::string("a number")) + "'" +
                                  (text ? did_you_mean(*text, choices) : std::string()));
    }
  };
  return add_axis(axis{std::move(name), axis_kind::string, std::move(description),
                       [values = std::move(values)](const context&) { return values; },
                       std::move(check)});
}

benchmark_definition& benchmark_definition::set_range(std::string_view axis_name,
                                                      axis_range range) {
  if (range.min > range.max || range.step < 1) {
    throw std::logic_error(id_ + ": axis '" + std::string(axis_name) + "' has an empty range");
  }
  return set_range(axis_name, [range](const context&) { return range; });
}

benchmark_definition& benchmark_definition::set_range(
    std::string_view axis_name, std::function<axis_range(const context&)> range) {
  const auto it =
      std::find_if(axes_.begin(), axes_.end(), [&](const axis& a) { return a.name == axis_name; });
  if (it == axes_.end() || it->kind == axis_kind::string) {
    throw std::logic_error(id_ + ": set_range on '" + std::string(axis_name) +
                           "', which is no integer or byte axis of it");
  }
  it->range = std::move(range);
  return *this;
}

benchmark_definition& benchmark_definition::add_metric(std::string name, metric_kind kind,
                                                       const vocabulary::unit& unit) {
  if (unit.of != base_unit(kind).of) {
    throw std::logic_error(id_ + ": metric '" + name + "' in " + std::string(unit.symbol) +
                           " is not of its kind's dimension (" +
                           std::string(vocabulary::to_string(base_unit(kind).of)) + ")");
  }
  const bool time = base_unit(kind).of == vocabulary::dimension::time;
  return add_declared(
      metric_spec{std::move(name), unit, time ? better::lower : better::higher, kind});
}

benchmark_definition& benchmark_definition::add_extra_metric(std::string name,
                                                             const vocabulary::unit& unit,
                                                             better direction) {
  return add_declared(metric_spec{std::move(name), unit, direction, std::nullopt});
}

benchmark_definition& benchmark_definition::add_declared(metric_spec metric) {
  if (find_metric(metric.name) != nullptr) {
    throw std::logic_error(id_ + ": metric '" + metric.name + "' declared twice");
  }
  metrics_.push_back(std::move(metric));
  return *this;
}

const metric_spec* benchmark_definition::find_metric(std::string_view name) const {
  for (const metric_spec& m : metrics_) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

benchmark_definition& benchmark_definition::set_timing(timing t) {
  timing_ = t;
  return *this;
}

benchmark_definition& benchmark_definition::set_scope(run_scope scope) {
  scope_ = scope;
  return *this;
}

benchmark_definition& benchmark_definition::set_single_iteration() {
  single_iteration_ = true;
  return *this;
}

benchmark_definition& benchmark_definition::set_needs_gpu() {
  needs_gpu_ = true;
  return *this;
}

benchmark_definition& benchmark_definition::set_supported(support_check check) {
  supported_ = std::move(check);
  return *this;
}

benchmark_definition& benchmark_definition::set_factory(instance_factory factory) {
  factory_ = std::move(factory);
  return *this;
}

const axis* benchmark_definition::find_axis(std::string_view name) const {
  const auto it =
      std::find_if(axes_.begin(), axes_.end(), [&](const axis& a) { return a.name == name; });
  return it == axes_.end() ? nullptr : &*it;
}

std::optional<std::string> benchmark_definition::unsupported_reason(const context& ctx) const {
  return supported_ ? supported_(ctx) : std::nullopt;
}

std::unique_ptr<instance> benchmark_definition::make_instance(const context& ctx,
                                                              const axis_values& values) const {
  return factory_(ctx, values);
}

// ---- registry ----------------------------------------------------------------------------

registry& registry::global() {
  static registry instance;
  return instance;
}

void registry::add(benchmark_definition definition) {
  if (definition.id().empty()) {
    throw std::logic_error("benchmark registered without an id");
  }
  if (find(definition.id()) != nullptr) {
    throw std::logic_error("benchmark id registered twice: " + definition.id());
  }
  if (!definition.has_factory()) {
    throw std::logic_error(definition.id() + ": a benchmark must set a factory");
  }
  if (definition.metrics().empty()) {
    throw std::logic_error(definition.id() + ": a benchmark must declare at least one metric");
  }
  for (const axis& a : definition.axes()) {
    if (a.kind != axis_kind::string && !a.range) {
      throw std::logic_error(definition.id() + ": axis '" + a.name + "' declares no range");
    }
  }
  definitions_.push_back(std::make_unique<benchmark_definition>(std::move(definition)));
}

const benchmark_definition* registry::find(std::string_view id) const {
  for (const auto& definition : definitions_) {
    if (definition->id() == id) {
      return definition.get();
    }
  }
  return nullptr;
}

std::vector<const benchmark_definition*> registry::all() const {
  std::vector<const benchmark_definition*> out;
  out.reserve(definitions_.size());
  for (const auto& definition : definitions_) {
    out.push_back(definition.get());
  }
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->id() < b->id(); });
  return out;
}

registration::registration(benchmark_definition definition) {
  registry::global().add(std::move(definition));
}

}  // namespace gpubench
