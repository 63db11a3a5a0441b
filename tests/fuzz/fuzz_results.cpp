// Results files, as `report`, `compare`, `size --hardware` and `validate` read them: the parser,
// the model's profile built from them and the acceptance rules applied to them.
#include "fuzz_input.hpp"
#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/model/hardware.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubench::acceptance::spec h100 = gpubench::acceptance::load_spec("h100-sxm5-80gb");
  return gpubench::fuzzing::parse_input(data, size, [](const gpubench::json& doc) {
    const auto results = gpubench::parse_results(doc, "fuzz.json");
    (void)gpubench::model::profile_from_results(results, "fuzz.json");
    const auto v = gpubench::acceptance::validate(results, "fuzz.json", h100);
    (void)gpubench::acceptance::to_json(v).dump();
  });
}
