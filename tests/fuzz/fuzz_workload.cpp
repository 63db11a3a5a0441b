// Workload files (`size --workload FILE`), and a prediction for the workload read.
#include "fuzz_input.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto constants = gpubench::model::load_constants();
  static const auto machine = gpubench::model::load_catalog("dgx-h100");
  return gpubench::fuzzing::parse_input(data, size, [](const gpubench::json& doc) {
    const auto workload = gpubench::model::parse_workload(doc, "fuzz.json");
    (void)gpubench::model::predict(machine, workload, constants);
  });
}
