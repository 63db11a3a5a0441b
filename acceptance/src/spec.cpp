// Reading specs (configs/specs/*.json, gpubench.spec/1): a spec extends its parent's, figure
// rules add up, health fields replace.
#include <algorithm>
#include <filesystem>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "rules.hpp"

namespace gpubench::acceptance {

namespace fs = std::filesystem;
using detail::gpu_view;

namespace {

// Reads one spec document over `s`: its figure rules are added to those already there and the
// health fields it sets replace theirs (a system spec extends its GPU's spec).
void parse_into(const json& document, const std::string& file, spec& s) {
  const json_reader top(document, file);
  top.expect_object({"schema", "name", "description", "catalog", "extends", "figures", "health"});
  if (top.get_string("schema") != spec_schema) {
    top.fail("schema", std::string("\"") + spec_schema + "\"");
  }
  s.name = top.get_string("name");
  s.description = top.find_string("description").value_or("");
  s.extends = top.find_string("extends").value_or("");
  s.file = file;
  std::optional<model::hardware_profile> catalog;
  if (const auto c = top.find_string("catalog")) {
    try {
      catalog = model::load_catalog(*c);
    } catch (const input_error& e) {
      top.fail("catalog", std::string("a catalog entry (") + e.what() + ")");
    }
  }
  const model::hardware_profile* figures_from = catalog ? &*catalog : nullptr;
  if (top.has("figures")) {
    for (const json_reader& r : top.elements("figures")) {
      s.figures.push_back(detail::read_figure_rule(r, figures_from));
    }
  }
  if (top.has("health")) detail::read_health(top.member("health"), figures_from, s.health);
}

fs::path specs_dir() {
  return config_dir() / "specs";
}

spec load_spec_chain(const std::string& name_or_file, int depth) {
  if (depth > 4) {
    throw input_error("spec " + name_or_file + ": \"extends\" chain longer than 4 (a loop?)");
  }
  fs::path path = name_or_file;
  const bool is_file =
      name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".json");
  if (!is_file) {
    path = specs_dir() / (name_or_file + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      const std::vector<std::string> names = spec_names();
      throw input_error("--spec " + name_or_file + ": expected a spec name (" +
                        known_names(names, "gpubench list --names specs") + ") or a spec file" +
                        did_you_mean(name_or_file, names));
    }
  }
  const json doc = read_json_file(path);
  const json_reader top(doc, path.string());
  spec s;
  if (const auto parent = top.find_string("extends"); parent && !parent->empty()) {
    s = load_spec_chain(*parent, depth + 1);
  }
  parse_into(doc, path.string(), s);
  return s;
}

}  // namespace

spec parse_spec(const json& document, const std::string& file) {
  spec s;
  parse_into(document, file, s);
  return s;
}

spec load_spec(const std::string& name_or_file) {
  return load_spec_chain(name_or_file, 0);
}

std::vector<std::string> spec_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(specs_dir(), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> spec_for(const results_document& doc, std::string& why_not) {
  const gpu_info* found = detail::first_gpu(doc);
  if (found == nullptr) {
    why_not = doc.system.gpu_status.reason.empty() ? std::string("no GPU in the results")
                                                   : doc.system.gpu_status.reason;
    return std::nullopt;
  }
  const gpu_info& first = *found;
  auto entry =
      model::catalog_gpu_for_device(first.name, static_cast<double>(first.memory_bytes) / 1e9);
  if (!entry) {
    why_not = "no catalog GPU matches '" + first.name + "'";
    return std::nullopt;
  }
  const auto names = spec_names();
  if (std::find(names.begin(), names.end(), *entry) == names.end()) {
    why_not = "no spec for catalog GPU " + *entry;
    return std::nullopt;
  }
  return entry;
}

}  // namespace gpubench::acceptance
