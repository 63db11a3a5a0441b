// Results files, as `report`, `compare`, `size --hardware` and `validate` read them: the parser,
// the model's profile built from them and the acceptance rules applied to them. The fast reader
// (simdjson) is held to the checked one: what it reads, the checked reader reads alike.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/detail/results_fast.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/model/hardware.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubench::acceptance::spec h100 = gpubench::acceptance::load_spec("h100-sxm5-80gb");
  const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes as text
  const auto fast = gpubench::detail::parse_results_fast(text, "fuzz.json");
  bool checked_read = false;
  gpubench::fuzzing::parse_input(data, size, [&](const gpubench::json& doc) {
    const auto results = gpubench::parse_results(doc, "fuzz.json");
    checked_read = true;
    if (fast && gpubench::json(*fast) != gpubench::json(results)) std::abort();
    (void)gpubench::model::profile_from_results(results, "fuzz.json");
    const auto v = gpubench::acceptance::validate(results, "fuzz.json", h100);
    const std::string checked = gpubench::acceptance::to_json(v).dump();
    // The rules read the fast reader's results through views into its document: they judge alike.
    if (fast &&
        gpubench::acceptance::to_json(gpubench::acceptance::validate(*fast, "fuzz.json", h100))
                .dump() != checked) {
      std::abort();
    }
  });
  if (fast && !checked_read) std::abort();  // read fast, refused by the checked reader
  return 0;
}
