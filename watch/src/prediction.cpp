#include "gpubench/watch/prediction.hpp"

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/reports/report.hpp"

namespace gpubench::watch {

namespace {

// What a watched limit is made of in the model: lifting it doubles these figures.
struct lift {
  vocabulary::component component;
  std::vector<const vocabulary::figure_def*> figures;
};
const std::vector<lift>& lifts() {
  namespace fig = vocabulary::figures;
  static const std::vector<lift> table{
      {vocabulary::component::cpu, {&fig::cpu_cores}},
      {vocabulary::component::storage, {&fig::storage_read}},
      {vocabulary::component::pcie, {&fig::pcie_h2d}},
      {vocabulary::component::communication, {&fig::network, &fig::nvlink}},
  };
  return table;
}

}  // namespace

std::optional<machine_figures> catalog_figures(const std::vector<gpu_activity>& gpus) {
  if (gpus.empty()) return std::nullopt;
  const gpu_activity& g = gpus.front();
  const auto name = model::catalog_gpu_for_device(g.name, g.memory_total_GB.value_or(0));
  if (!name) return std::nullopt;
  return machine_figures{model::load_catalog(*name),
                         "catalog:" + *name + ", matched to '" + g.name + "'"};
}

json predict_for_job(const std::string& workload_name, const model::workload& w,
                     const std::optional<machine_figures>& machine, const summary& s, verdict& v) {
  const std::string origin = machine ? machine->origin : "";
  json out{{"workload", workload_name}, {"hardware", origin}};
  if (!machine) {
    out["skipped"] = "no --results, and no catalog entry for the GPUs NVML names";
    return out;
  }
  if (s.job_gpus == 0) {
    out["skipped"] = "the job held no GPU while watched";
    return out;
  }
  model::hardware_profile hw = machine->profile;
  const int cores = std::max(1, static_cast<int>(s.cpu_cores_allowed));
  model::apply_setting(hw, vocabulary::key_of(model::fig::cpu_cores) + "=" + std::to_string(cores));
  const model::constants constants = model::load_constants();
  model::run_options options;
  options.gpus = s.job_gpus;
  try {
    const model::sizing now = model::predict(hw, w, constants, options);
    out["cpu_cores"] = cores;
    out["gpus"] = s.job_gpus;
    out["sample_unit"] = now.sample_unit;
    out["predicted_samples_per_s"] = now.predicted_samples_per_s;
    out["limiting_component"] = now.limiting_component;
    // The CPU's ceiling the model holds the job to: the measured DataLoader's where the results
    // have cpu.dataloader (basis measured), else derived from cpu.augment.
    for (const model::component& comp : now.components) {
      if (comp.name != vocabulary::component::cpu || !comp.samples_per_s) continue;
      out["cpu_ceiling"] = {
          {"samples_per_s", *comp.samples_per_s}, {"basis", comp.basis}, {"detail", comp.detail}};
    }
    out["recommendations"] = now.recommendations;
    const std::string unit = reports::samples_unit(now);
    std::string line = "gpubench size predicts " + format_number(now.predicted_samples_per_s) +
                       " " + unit + " for " + workload_name + " on " + origin + " with the job's " +
                       std::to_string(cores) + " cores and " + std::to_string(s.job_gpus) +
                       " GPU(s), limited by " + std::string(to_string(now.limiting_component));
    for (const lift& l : lifts()) {
      if (l.component != v.limiting_component) continue;
      model::hardware_profile lifted = hw;
      std::vector<std::string> settings;
      for (const vocabulary::figure_def* f : l.figures) {
        if (const auto value = lifted.value(*f)) {
          settings.push_back(vocabulary::key_of(*f) + "=" + format_number(2 * *value));
          model::apply_setting(lifted, settings.back());
        }
      }
      if (settings.empty()) break;
      const model::sizing more = model::predict(lifted, w, constants, options);
      out["lifted"] = {{"settings", settings},
                       {"predicted_samples_per_s", more.predicted_samples_per_s},
                       {"limiting_component", more.limiting_component}};
      line += "; with " + join(settings, ", ") + ": " +
              format_number(more.predicted_samples_per_s) + " " + unit + ", limited by " +
              std::string(to_string(more.limiting_component));
    }
    v.advice.push_back(line);
  } catch (const std::exception& e) {
    out["skipped"] = e.what();
  }
  return out;
}

}  // namespace gpubench::watch
