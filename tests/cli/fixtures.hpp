// The synthetic results files of tests/data with a fault applied: validate-faults/NAME.json is a
// JSON Patch (RFC 6902, made by make_validate_fixtures.py) of validate-healthy.json, or of the
// file its "base" names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "process.hpp"

namespace gpubench::testing {

// Ordered, as gpubench writes results: figures are keyed by their axes in the file's order.
inline nlohmann::ordered_json fault_document(const std::string& data_dir, const std::string& name) {
  using ordered = nlohmann::ordered_json;
  const ordered fault = ordered::parse(read_file(data_dir + "/validate-faults/" + name + ".json"));
  const ordered healthy = ordered::parse(
      read_file(data_dir + "/" + fault.value("base", std::string("validate-healthy.json"))));
  return healthy.patch(fault.at("patch"));
}

}  // namespace gpubench::testing
