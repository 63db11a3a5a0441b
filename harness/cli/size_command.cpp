// gpubench size / calibrate: the sizing model on the command line.
#include <iostream>

#include "commands.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/model/calibration.hpp"
#include "gpubench/model/model.hpp"
#include "reports/format.hpp"
#include "reports/report.hpp"

namespace gpubench::cli {
using reports::format_number;
using reports::samples_unit;

void print_sizing(std::ostream& out, const model::sizing& s) {
  out << s.workload << " on " << s.hardware << ": " << s.gpus_per_node << " GPU(s) x " << s.nodes
      << " node(s), " << model::batch_text(s) << " per GPU, " << s.precision
      << (s.anchored ? ", anchored on a reference point" : "") << "\n";
  out << "predicted " << format_number(s.predicted_samples_per_s) << " " << samples_unit(s) << " ("
      << format_number(s.per_gpu_samples_per_s) << " per GPU";
  if (s.sample_unit == "sequence") {
    out << ", " << format_number(s.predicted_samples_per_s * s.tokens_per_sample) << " tokens/s";
  }
  out << "); limited by " << s.limiting_component << "\n\n";
  reports::text_table table({"component", "ceiling/s", "utilization", "basis", "detail"});
  for (const model::component& c : s.components) {
    table.add_row({c.name + (c.name == s.limiting_component ? " *" : ""),
                   c.samples_per_s ? format_number(*c.samples_per_s) : "-",
                   c.samples_per_s ? format_number(c.utilization * 100) + "%" : "-", c.basis,
                   c.detail});
  }
  out << table.render();
  if (!s.recommendations.empty()) {
    out << "\n";
    for (const auto& r : s.recommendations) out << "- " << r << "\n";
  }
  for (const auto& n : s.notes) out << "note: " << n << "\n";
  if (!s.assumed.empty()) {
    out << "assumed (not measured): ";
    for (std::size_t i = 0; i < s.assumed.size(); ++i) out << (i ? ", " : "") << s.assumed[i];
    out << "\n";
  }
}

void print_sizing_summary(std::ostream& out, const reports::machine_report& report,
                          const std::string& results_file) {
  reports::text_table table({"workload", "predicted/s", "per GPU", "limited by", "basis"});
  for (const reports::workload_row& row : report.workloads) {
    if (!row.sizing) {
      out << "\nsizing skipped: " << row.error << "\n";
      return;
    }
    const model::sizing& s = *row.sizing;
    const std::string basis = reports::limit_basis(s);
    table.add_row({row.workload, format_number(s.predicted_samples_per_s) + " " + samples_unit(s),
                   format_number(s.per_gpu_samples_per_s), s.limiting_component, basis});
  }
  out << "\nsizing (gpubench size --workload NAME --hardware " << results_file
      << " for the details):\n"
      << table.render();
}

int size_command(const size_args& args) {
  const model::constants constants = model::load_constants();
  const model::workload workload = model::load_workload(args.workload);
  model::hardware_profile hardware = model::load_hardware(args.hardware);
  for (const auto& setting : args.settings) model::apply_setting(hardware, setting);
  model::run_options options;
  options.gpus = args.gpus;
  options.nodes = args.nodes;
  options.batch = args.batch;
  options.precision = args.precision;
  const model::sizing result = model::predict(hardware, workload, constants, options);
  if (args.as_json) {
    std::cout << model::to_json(result, hardware, workload, constants).dump(2) << "\n";
  } else {
    print_sizing(std::cout, result);
  }
  return exit_ok;
}

int calibrate_command(const calibrate_args& args) {
  model::constants constants = model::load_constants();
  const json published = read_json_file(args.file);
  if (args.fit) {
    constants = model::fit_constants(published, args.file, constants);
    json fitted = json::object();
    for (const auto& name : model::constants::fitted_names()) fitted[name] = constants.at(name);
    std::cerr << "fitted constants (put them in configs/model/constants.json):\n"
              << fitted.dump(2) << "\n";
  }
  const model::calibration_report report = model::calibrate(published, args.file, constants);
  if (args.as_json) {
    std::cout << model::to_json(report).dump(2) << "\n";
  } else {
    std::cout << model::to_markdown(report);
  }
  return exit_ok;
}

}  // namespace gpubench::cli
