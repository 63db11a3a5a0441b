// Anchoring (docs/model.md): where the workload names a throughput measured on known hardware,
// the reference point is modelled on its own hardware, at its own batch, accumulation and
// precision, and every part of this machine's modelled GPU work is scaled by the reference's
// measured over modelled step.
#include <algorithm>

#include "components.hpp"
#include "gpubench/core/errors.hpp"

namespace gpubench::model::detail {

void anchor(const workload& w, const constants& c, const std::string& precision,
            step_breakdown& step, sizing& s) {
  if (!w.reference) return;
  const reference_point& ref = *w.reference;
  if (!ref.profile) {
    throw std::logic_error("the reference point's hardware (" + ref.hardware +
                           ") was not resolved when the workload was loaded");
  }
  const hardware_profile& ref_hw = *ref.profile;
  const std::string ref_precision = ref.precision.value_or(precision);
  check_runs(ref_hw, ref_precision);
  const int ref_per_node = std::min(ref.gpus, ref_hw.scalable ? ref.gpus : ref_hw.gpus_per_node);
  const int ref_nodes = (ref.gpus + ref_per_node - 1) / ref_per_node;
  std::vector<std::string> ignored;
  workload ref_w = w;
  ref_w.reference.reset();
  ref_w.gradient_accumulation = ref.gradient_accumulation.value_or(w.gradient_accumulation);
  const gpu_times ref_gpu = gpu_step(ref_hw, ref_w, c, ref_precision, ref.batch_per_gpu,
                                     data_parallel_group(ref_w, ref_per_node, ref_nodes), ignored);
  run_options ref_options;
  ref_options.gpus = ref_per_node;
  ref_options.nodes = ref_nodes;
  ref_options.batch = ref.batch_per_gpu;
  ref_options.precision = ref_precision;
  ref_options.advise = false;  // its rate and step only
  workload ref_synthetic = ref_w;
  ref_synthetic.data.source = "synthetic";
  hardware_profile scaled_ref = ref_hw;
  scaled_ref.scalable = true;
  const sizing ref_model = predict(scaled_ref, ref_synthetic, c, ref_options);
  const double actual_step = ref.batch_per_gpu / (ref.samples_per_s / ref.gpus);
  // The modelled step of the reference (all but the exposed communication) against what it
  // measured: every part of this machine's modelled step is scaled by that ratio.
  const double ref_work = ref_gpu.busy();
  const double actual_work = actual_step - ref_model.step.communication_exposed_s;
  if (actual_work > 0 && ref_work > 0) {
    step.anchor_factor = actual_work / ref_work;
    for (double* part :
         {&step.compute_s, &step.memory_s, &step.optimizer_s, &step.launch_s, &step.host_s}) {
      *part *= step.anchor_factor;
    }
    s.anchored = true;
    s.notes.push_back("anchored on " + fmt(ref.samples_per_s) + " samples/s measured on " +
                      ref.hardware + " (" + std::to_string(ref.gpus) + " GPUs, batch " +
                      std::to_string(ref.batch_per_gpu) + "): GPU work scaled by " +
                      fmt(step.anchor_factor));
  } else {
    s.notes.push_back(
        "reference point ignored: its step time is below the modelled "
        "communication time");
  }
}

}  // namespace gpubench::model::detail
