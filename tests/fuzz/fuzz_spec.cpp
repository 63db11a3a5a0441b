// Acceptance spec files (`validate --spec FILE`).
#include "fuzz_input.hpp"
#include "gpubench/acceptance/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gpubench::fuzzing::parse_input(data, size, [](const gpubench::json& doc) {
    (void)gpubench::acceptance::parse_spec(doc, "fuzz.json");
  });
}
