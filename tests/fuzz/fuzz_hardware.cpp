// Hardware profile files (`size --hardware FILE`), and a prediction on the profile read.
#include "fuzz_input.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto constants = gpubench::model::load_constants();
  static const auto workload = gpubench::model::load_workload("resnet50");
  return gpubench::fuzzing::parse_input(data, size, [](const gpubench::json& doc) {
    const auto profile = gpubench::model::parse_hardware(doc, "fuzz.json");
    (void)gpubench::model::predict(profile, workload, constants);
  });
}
