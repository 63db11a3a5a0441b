// Suite files, as `run --suite FILE` reads them: the parser and the plan made from the suite
// against every registered benchmark.
#include "fuzz_input.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubench::context ctx(gpubench::system_info{}, gpubench::run_options{});
  return gpubench::fuzzing::parse_input(data, size, [](const gpubench::json& doc) {
    const gpubench::suite s = gpubench::parse_suite(doc, "fuzz.json");
    (void)gpubench::make_plan(s, {}, gpubench::registry::global(), ctx);
  });
}
