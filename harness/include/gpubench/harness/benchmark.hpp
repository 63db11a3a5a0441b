// The public API for writing a benchmark: one file defines a benchmark_definition and registers
// it with GPUBENCH_REGISTER. The harness owns warm-up, timing, repetitions, statistics, rates,
// verification bookkeeping and error recording; a benchmark only says what it does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/vocabulary/units.hpp"

namespace gpubench {

class context;
// A benchmark declares each metric's unit as one of these: units::GBps, units::us, ...
namespace units = vocabulary::units;

using axis_value = std::variant<std::int64_t, std::string>;

enum class axis_kind {
  integer,  // a count (threads, queue depth)
  bytes,    // a size in bytes
  string,   // a choice (dtype, kernel, mode)
};

// The values an integer or byte axis can work with: from min to max, a multiple of `step`.
struct axis_range {
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::int64_t step = 1;
};

struct axis {
  std::string name;
  axis_kind kind = axis_kind::integer;
  std::string description;
  // Values swept when neither the suite nor the command line sets the axis. A function of the
  // context, because sensible defaults depend on the machine (GPUs, cores, cache sizes).
  std::function<std::vector<axis_value>(const context&)> defaults;
  // Optional: throws std::invalid_argument for a value the benchmark cannot take, so a bad
  // suite or --axis value is refused before anything runs (even where the benchmark is skipped).
  std::function<void(const axis_value&)> check{};
  // Integer and byte axes: what they can work with on this machine (set_range). Values outside it
  // are refused with the range before anything runs, and `gpubench list` shows it.
  std::function<axis_range(const context&)> range{};
};

// "an integer from 1 to 1024", "a size from 4 KiB to 64 MiB, a multiple of 4 KiB".
[[nodiscard]] std::string describe_range(axis_kind kind, const axis_range& range);
// Throws std::invalid_argument saying the range when `value` is outside it.
void check_in_range(axis_kind kind, const axis_range& range, std::int64_t value);

// One point of a benchmark's parameter space: an ordered name -> value list.
class axis_values {
 public:
  void set(std::string name, axis_value value);

  [[nodiscard]] std::int64_t get_int64(std::string_view name) const;
  [[nodiscard]] const std::string& get_string(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const;

  [[nodiscard]] const std::vector<std::pair<std::string, axis_value>>& entries() const noexcept {
    return entries_;
  }
  // "kernel=triad threads=8"
  [[nodiscard]] std::string label() const;
  [[nodiscard]] json to_json() const;

 private:
  [[nodiscard]] const axis_value& find(std::string_view name) const;
  std::vector<std::pair<std::string, axis_value>> entries_;
};

// The work one iteration does. The harness turns it into rates (docs/methodology.md).
struct work {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  double items = 0;  // samples, launches, messages...
};

// How a metric is derived from one repetition's seconds per iteration t and the declared work, in
// its dimension's base unit; the unit the benchmark declares converts it. The formulas are data,
// as in BabelStream's kernel table: see docs/methodology.md.
enum class metric_kind {
  bandwidth,           // (bytes_read + bytes_written) / t, bytes/s
  compute,             // flops / t, FLOP/s
  items_per_s,         // items / t
  time_per_item,       // t / items, s: lower is better
  time_per_iteration,  // t, s: lower is better
};

// A metric a benchmark reports: its name, its unit and which way is better (written with every
// result), and how it is derived (from the declared work), unless the benchmark computes it
// itself (instance::extra_metrics).
struct metric_spec {
  std::string name;  // its unit in its name too: "GBps", "TFLOPs", "us", "samples_per_s"
  vocabulary::unit in;
  better direction = better::higher;
  std::optional<metric_kind> kind;  // nullopt: an extra metric the instance computes

  // What a results file says of it.
  [[nodiscard]] metric_unit written() const { return {std::string(in.symbol), direction}; }
};

// The metric of `kind` for one repetition, in `unit` (which must be of the kind's dimension).
[[nodiscard]] double derive_metric(metric_kind kind, const work& w, double seconds_per_iteration,
                                   const vocabulary::unit& unit);

// Where a benchmark runs in a multi-rank (MPI) job.
enum class run_scope {
  per_rank,  // on every rank, with that rank's GPU (GPU benchmarks)
  per_node,  // once per node, on its lowest rank (storage, CPU, host memory)
};

// Who measures an iteration's time.
enum class timing {
  host_wall,  // the harness's wall clock around run_iteration()
  manual,     // the benchmark returns the seconds it measured (CUDA events, copy-engine timing)
};

struct verification {
  bool passed = true;
  std::string detail;  // what was checked, or what was wrong
};

// One configured case of a benchmark: built once, warmed up, then timed iteration by iteration.
class instance {
 public:
  instance() = default;
  instance(const instance&) = delete;
  instance& operator=(const instance&) = delete;
  instance(instance&&) = delete;
  instance& operator=(instance&&) = delete;
  virtual ~instance() = default;

  // The work of one iteration.
  [[nodiscard]] virtual work work_per_iteration() const = 0;
  // Runs one iteration. With timing::manual, returns the measured seconds; with
  // timing::host_wall, returns nullopt and must not return before the work is complete.
  virtual std::optional<double> run_iteration() = 0;
  // Called once the untimed warm-up iterations are over (figures kept beside the metrics, such as
  // per-GPU times, start counting here).
  virtual void warmup_done() {}
  // Checks the data the iterations produced (called after timing unless verification is off).
  [[nodiscard]] virtual verification verify() = 0;
  // Facts about the case to keep with its result: resolved sizes, placement, links seen.
  [[nodiscard]] virtual json info() const { return json::object(); }
  // Metrics that need more than the declared work (busbw, per-core rates), for one repetition.
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> extra_metrics(
      double /*seconds_per_iteration*/) const {
    return {};
  }
};

// Returns why the benchmark cannot run here, or nullopt when it can.
using support_check = std::function<std::optional<std::string>(const context&)>;
using instance_factory =
    std::function<std::unique_ptr<instance>(const context&, const axis_values&)>;

class benchmark_definition {
 public:
  explicit benchmark_definition(std::string id);

  benchmark_definition& set_description(std::string text);
  benchmark_definition& add_axis(axis a);
  // An axis with fixed default values.
  benchmark_definition& add_axis(std::string name, axis_kind kind, std::vector<axis_value> values,
                                 std::string description = {});
  // A string axis that takes one of `choices`; by default `defaults`, or all of them when that is
  // empty. Other values are refused before the run.
  benchmark_definition& add_choice_axis(std::string name, std::vector<std::string> choices,
                                        std::string description = {},
                                        std::vector<std::string> defaults = {});
  // The range of an integer or byte axis added before (every such axis needs one): fixed, or
  // depending on the machine (a share of its memory).
  benchmark_definition& set_range(std::string_view axis_name, axis_range range);
  benchmark_definition& set_range(std::string_view axis_name,
                                  std::function<axis_range(const context&)> range);
  // A metric derived from the declared work, in `unit` (of the kind's dimension, else
  // std::logic_error); lower is better for times, higher for rates.
  benchmark_definition& add_metric(std::string name, metric_kind kind,
                                   const vocabulary::unit& unit);
  // A metric the instance computes itself (extra_metrics), with its unit and direction.
  benchmark_definition& add_extra_metric(std::string name, const vocabulary::unit& unit,
                                         better direction);
  benchmark_definition& set_timing(timing t);
  benchmark_definition& set_scope(run_scope scope);
  // The benchmark sets its own length (a sustained load whose duration is one of its axes): the
  // harness runs one repetition of one iteration with no warm-up, whatever the suite says.
  benchmark_definition& set_single_iteration();
  // The benchmark drives GPUs: a run on a machine with GPUs where every such benchmark was
  // skipped fails (a burn-in must not pass a box whose GPUs never ran).
  benchmark_definition& set_needs_gpu();
  benchmark_definition& set_supported(support_check check);
  benchmark_definition& set_factory(instance_factory factory);
  template <class Instance>
  benchmark_definition& set_instance() {
    return set_factory([](const context& ctx, const axis_values& values) {
      return std::make_unique<Instance>(ctx, values);
    });
  }

  [[nodiscard]] const std::string& id() const noexcept { return id_; }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  [[nodiscard]] const std::vector<axis>& axes() const noexcept { return axes_; }
  [[nodiscard]] const axis* find_axis(std::string_view name) const;
  // Every metric, derived ones first, in declaration order.
  [[nodiscard]] const std::vector<metric_spec>& metrics() const noexcept { return metrics_; }
  [[nodiscard]] const metric_spec* find_metric(std::string_view name) const;
  [[nodiscard]] timing timing_mode() const noexcept { return timing_; }
  [[nodiscard]] run_scope scope() const noexcept { return scope_; }
  [[nodiscard]] bool single_iteration() const noexcept { return single_iteration_; }
  [[nodiscard]] bool needs_gpu() const noexcept { return needs_gpu_; }
  [[nodiscard]] bool has_factory() const noexcept { return static_cast<bool>(factory_); }
  // Why it cannot run in this context, or nullopt.
  [[nodiscard]] std::optional<std::string> unsupported_reason(const context& ctx) const;
  [[nodiscard]] std::unique_ptr<instance> make_instance(const context& ctx,
                                                        const axis_values& values) const;

 private:
  benchmark_definition& add_declared(metric_spec metric);

  std::string id_;
  std::string description_;
  std::vector<axis> axes_;
  std::vector<metric_spec> metrics_;
  timing timing_ = timing::host_wall;
  run_scope scope_ = run_scope::per_rank;
  bool single_iteration_ = false;
  bool needs_gpu_ = false;
  support_check supported_;
  instance_factory factory_;
};

// The set of known benchmarks. Benchmarks add themselves to registry::global() at start-up;
// tests build registries of their own.
class registry {
 public:
  registry() = default;
  static registry& global();

  // Throws std::logic_error when the id is taken or the definition is incomplete (no factory, no
  // metric, an integer or byte axis without a range).
  void add(benchmark_definition definition);
  [[nodiscard]] const benchmark_definition* find(std::string_view id) const;
  // Every definition, ordered by id.
  [[nodiscard]] std::vector<const benchmark_definition*> all() const;

 private:
  std::vector<std::unique_ptr<benchmark_definition>> definitions_;
};

struct registration {
  explicit registration(benchmark_definition definition);
};

}  // namespace gpubench

#define GPUBENCH_DETAIL_CONCAT_INNER(a, b) a##b
#define GPUBENCH_DETAIL_CONCAT(a, b) GPUBENCH_DETAIL_CONCAT_INNER(a, b)
// Registers a benchmark_definition with the global registry when the program starts.
#define GPUBENCH_REGISTER(definition)                                                              \
  static const ::gpubench::registration GPUBENCH_DETAIL_CONCAT(gpubench_registration_, __LINE__) { \
    definition                                                                                     \
  }
