// The words a prediction or a diagnosis answers with, each an enum with one to_string and one
// from_string: what limits a job (the model's sizing, watch's verdict, the reports), where a
// figure came from (a hardware profile, a component's ceiling, watch's ceilings) and what an
// acceptance check concludes (validate, fleet, the reports, export).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace gpubench::vocabulary {

// The part of a machine that bounds a training job.
enum class component {
  gpu_compute,      // GPU math
  gpu_memory,       // GPU memory bandwidth
  communication,    // gradient and parameter exchange between GPUs and nodes
  pcie,             // host-to-GPU copies
  storage,          // reading the dataset
  cpu,              // preparing the data
  memory_capacity,  // the job does not fit in GPU memory (no rate)
  none,             // a watched job near no ceiling
};
[[nodiscard]] std::string_view to_string(component c) noexcept;
[[nodiscard]] std::optional<component> component_from_string(std::string_view name);
// The parts of one GPU step (their times add up), as opposed to the input pipeline beside it.
[[nodiscard]] bool in_gpu_step(component c) noexcept;

// Where a figure or a ceiling came from.
enum class basis {
  measured,              // a results file of this machine
  catalog,               // configs/hardware/ (datasheets and published measurements)
  measured_and_catalog,  // a step whose GEMMs were partly measured
  set,                   // --set KEY=VALUE
  anchored,              // scaled from a published reference run of the workload
  derived,               // from another measurement by an assumed ratio (cpu.augment x 0.79)
  assumed_default,       // the model's default (no figure at all)
  reported,              // what the machine itself reports (a link's speed)
  not_applicable,        // the component plays no part (one GPU: no communication)
  unknown,               // the figure is needed and nobody states it
};
[[nodiscard]] std::string_view to_string(basis b) noexcept;
[[nodiscard]] std::optional<basis> basis_from_string(std::string_view name);

// What an acceptance check concludes of a rule, a node or a fleet, worse ones larger: the
// number is what Prometheus exports carry (docs/deploy/README.md). One model for validate, fleet,
// the reports and export (docs/validate.md, "Verdicts").
enum class verdict {
  pass = 0,  // every rule that applies passed
  warn = 1,  // nothing failed; something is worth a look and is named (a figure under a floor
             // that rests on an assumed catalog figure, an idle link, a faster sibling)
  fail = 2,  // a rule failed or lacks the measurement it needs
};
[[nodiscard]] std::string_view to_string(verdict v) noexcept;
[[nodiscard]] std::optional<verdict> verdict_from_string(std::string_view name);
[[nodiscard]] constexpr verdict worst(verdict a, verdict b) noexcept {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}
// Exit 0 for pass and warn, as validate has always exited for warnings.
[[nodiscard]] constexpr bool accepted(verdict v) noexcept {
  return v != verdict::fail;
}

// In text and in JSON as their words (found by argument-dependent lookup).
std::ostream& operator<<(std::ostream& out, component c);
std::ostream& operator<<(std::ostream& out, basis b);
std::ostream& operator<<(std::ostream& out, verdict v);
template <typename Json>
void to_json(Json& j, component c) {
  j = std::string(to_string(c));
}
template <typename Json>
void to_json(Json& j, basis b) {
  j = std::string(to_string(b));
}
template <typename Json>
void to_json(Json& j, verdict v) {
  j = std::string(to_string(v));
}

}  // namespace gpubench::vocabulary
