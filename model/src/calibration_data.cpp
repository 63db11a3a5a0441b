#include "calibration_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {
namespace {

using detail::prepared_row;

struct model_rule {
  std::string match;
  std::string family;
  json workload;
};

struct gpu_rule {
  std::string match;
  std::string catalog;
  std::string generation;
  // GPUs one NVLink domain joins: a DGX node's 8, a GB200 NVL72 rack's 72.
  int nvlink_domain = 8;
};

struct precision_rule {
  std::string match;
  std::string precision;
  std::string otherwise;  // when the GPU has no rate at `precision` ("" for none)
};

struct mapping {
  std::vector<std::string> sets;  // file names in configs/calibration/
  std::vector<model_rule> models;
  std::vector<std::pair<std::string, std::string>> stacks;  // framework/precision text -> stack
  std::map<std::pair<std::string, std::size_t>, json> row_details;  // (set, row) -> merge patch
  std::vector<std::pair<std::string, std::string>> unusable;        // match -> why
  std::vector<gpu_rule> gpus;                                       // row gpu prefix -> catalog
  std::vector<precision_rule> precisions;                           // prefix -> precision
  std::vector<std::pair<std::string, double>> networks;             // system match -> Gb/s
};

std::filesystem::path mapping_path() {
  return config_dir() / "calibration" / "models.json";
}

std::string set_name(const std::string& file) {
  return std::filesystem::path(file).stem().string();
}

mapping load_mapping() {
  const auto path = mapping_path();
  const json doc = read_json_file(path);
  const json_reader root(doc, path.string());
  root.expect_object({"schema", "about", "sets", "models", "stacks", "row_details", "unusable",
                      "gpus", "precisions", "networks"});
  mapping m;
  for (const json_reader& e : root.elements("sets", 1)) {
    if (!e.node().is_string()) e.fail_here("a file name in configs/calibration/");
    m.sets.push_back(e.node().get<std::string>());
  }
  for (const json_reader& e : root.elements("models", 1)) {
    e.expect_object({"match", "family", "workload"});
    m.models.push_back({e.get_string("match"), e.get_string("family"), e.node().at("workload")});
  }
  for (const json_reader& e : root.elements("stacks")) {
    e.expect_object({"match", "stack"});
    m.stacks.emplace_back(e.get_string("match"), e.get_string("stack"));
  }
  for (const json_reader& e : root.elements("row_details")) {
    e.expect_object({"set", "rows", "workload", "why"});
    if (!e.node().at("workload").is_object()) e.member("workload").fail_here("an object");
    const std::string set = e.find_string("set").value_or("calibration");
    if (std::none_of(m.sets.begin(), m.sets.end(),
                     [&](const std::string& f) { return set_name(f) == set; })) {
      e.fail("set", "the name of a listed set without .json");
    }
    for (const json_reader& row : e.elements("rows", 1)) {
      if (!row.node().is_number_unsigned()) row.fail_here("a row index");
      m.row_details[{set, row.node().get<std::size_t>()}] = e.node().at("workload");
    }
  }
  for (const json_reader& e : root.elements("unusable")) {
    e.expect_object({"match", "why"});
    m.unusable.emplace_back(e.get_string("match"), e.get_string("why"));
  }
  for (const json_reader& e : root.elements("gpus", 1)) {
    e.expect_object({"match", "catalog", "generation", "nvlink_domain"});
    m.gpus.push_back({e.get_string("match"), e.get_string("catalog"), e.get_string("generation"),
                      static_cast<int>(e.find_int("nvlink_domain", 1, 100000).value_or(8))});
  }
  for (const json_reader& e : root.elements("precisions", 1)) {
    e.expect_object({"match", "precision", "otherwise"});
    m.precisions.push_back({e.get_string("match"), e.get_string("precision"),
                            e.find_string("otherwise").value_or("")});
  }
  for (const json_reader& e : root.elements("networks")) {
    e.expect_object({"match", "gbps"});
    m.networks.emplace_back(e.get_string("match"), e.get_number("gbps", 1, 1e7));
  }
  return m;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The unit a held-out fit leaves out: the repository and its top folder ("NVIDIA/
// DeepLearningExamples:PyTorch", "lambdal/deeplearning-benchmark:pytorch"), so one team's
// READMEs or one benchmark run's tables go out together.
std::string source_group(const std::string& source) {
  const std::size_t colon = source.find(':');
  if (colon == std::string::npos) return source.substr(0, source.find(' '));
  const std::size_t end = source.find_first_of("/ ", colon + 1);
  return source.substr(0, end);
}

bool has_rate(const hardware_profile& hw, const std::string& precision) {
  return hw.value(fig::peak_tflops, gemm_dtype(precision)).has_value();
}

// One published row: the workload, hardware and options it is predicted with, or why it cannot
// be used (rows.why_not). `catalog` keeps each GPU's entry read once.
prepared_row prepare_row(const mapping& map, std::map<std::string, hardware_profile>& catalog,
                         const std::string& set_id, std::size_t i, const json_reader& e,
                         const std::string& file) {
  prepared_row p;
  calibration_row& r = p.row;
  r.id = set_id + "#" + std::to_string(i);
  r.source = e.get_string("source");
  r.source_group = source_group(r.source);
  r.model = e.get_string("model");
  r.framework = e.find_string("framework").value_or("");
  r.gpus = static_cast<int>(e.get_int("gpus", 1, 100000));
  r.batch = e.node().contains("batch_per_gpu") && e.node().at("batch_per_gpu").is_null()
                ? 0
                : static_cast<int>(e.find_int("batch_per_gpu", 1, 1 << 24).value_or(0));
  // Every formula divides by it: a published rate of 0 is a broken row, not a prediction to grade.
  const double throughput = e.get_number("throughput", 1e-9, 1e12);
  const std::string unit = e.get_string("unit");
  const std::string gpu = e.get_string("gpu");
  const std::string precision = e.get_string("precision");
  const std::string system = e.find_string("system").value_or("");
  const std::string data = e.find_string("data").value_or("");
  auto reject = [&](std::string why) {
    r.why_not = std::move(why);
    return p;
  };
  if (auto it = std::find_if(map.unusable.begin(), map.unusable.end(),
                             [&](const auto& u) {
                               return contains(r.model, u.first) ||
                                      contains(r.framework, u.first) || contains(data, u.first);
                             });
      it != map.unusable.end()) {
    return reject(it->second);
  }
  const auto rule = std::find_if(map.models.begin(), map.models.end(),
                                 [&](const model_rule& m) { return contains(r.model, m.match); });
  if (rule == map.models.end()) {
    return reject("no workload mapping for this model");
  }
  const auto gpu_map = std::find_if(map.gpus.begin(), map.gpus.end(),
                                    [&](const gpu_rule& g) { return gpu.starts_with(g.match); });
  if (gpu_map == map.gpus.end()) {
    return reject("no catalog entry for GPU " + gpu);
  }
  const auto prec =
      std::find_if(map.precisions.begin(), map.precisions.end(),
                   [&](const precision_rule& pr) { return precision.starts_with(pr.match); });
  if (prec == map.precisions.end()) {
    return reject("precision '" + precision + "' not mapped");
  }
  if (r.batch == 0) {
    return reject("no batch size per GPU");
  }
  r.family = rule->family;
  r.gpu = gpu_map->catalog;
  r.generation = gpu_map->generation;
  if (!catalog.contains(r.gpu)) catalog.emplace(r.gpu, load_catalog(r.gpu));
  p.hw = catalog.at(r.gpu);
  p.hw.scalable = true;
  r.precision = !has_rate(p.hw, prec->precision) && !prec->otherwise.empty() ? prec->otherwise
                                                                             : prec->precision;
  const std::string stack_text = r.framework + " | " + precision;
  const auto stack = std::find_if(map.stacks.begin(), map.stacks.end(),
                                  [&](const auto& st) { return contains(stack_text, st.first); });
  json wdoc = rule->workload;
  wdoc["schema"] = workload_schema;
  wdoc["name"] = r.model;
  wdoc["precision"] = r.precision;
  wdoc["batch_per_gpu"] = r.batch;
  if (stack != map.stacks.end()) wdoc["stack"] = stack->second;
  if (const auto detail = map.row_details.find({set_id, i}); detail != map.row_details.end()) {
    wdoc.merge_patch(detail->second);
  }
  if (!wdoc.contains("data")) wdoc["data"] = json::object();
  wdoc["data"]["source"] = "synthetic";  // the rows are GPU-bound benchmark runs
  p.w = parse_workload(wdoc, file + " row " + std::to_string(i));
  r.stack = p.w.stack;
  // A "node" is what one NVLink domain joins: the largest share of the row's GPUs that fits in
  // one, so the GPUs split into whole nodes (256 GB200s: four racks of 64).
  int per_node = std::min(r.gpus, gpu_map->nvlink_domain);
  while (r.gpus % per_node != 0) --per_node;
  p.options.gpus = per_node;
  p.options.nodes = r.gpus / per_node;
  p.options.precision = r.precision;
  // Calibration reads the rate, the step and the memory: advice would size other layouts of every
  // row on each of the fit's thousands of predictions, for text nobody reads.
  p.options.advise = false;
  for (const auto& [match, gbps] : map.networks) {
    if (contains(system, match)) {
      p.hw.set(fig::network, gbps, basis::catalog, "calibration mapping: " + match);
      break;
    }
  }
  if (!has_rate(p.hw, r.precision)) {
    return reject(r.gpu + " has no " + gemm_dtype(r.precision) + " rate");
  }
  // Throughput in samples/s over all GPUs.
  if (contains(unit, "TFLOP/s")) {
    return reject("published as achieved TFLOP/s per GPU, not a throughput");
  }
  double samples = throughput;
  if (contains(unit, "PER GPU") || contains(unit, "per GPU")) samples *= r.gpus;
  if (unit.starts_with("tokens/s")) samples /= expand(p.w, 1).tokens_per_sample;
  r.published = samples;
  r.usable = true;
  r.supported = !unsupported_reason(p.w);
  return p;
}

}  // namespace

namespace detail {

std::vector<prepared_row> prepare(const std::vector<calibration_set>& sets) {
  const mapping map = load_mapping();
  std::vector<prepared_row> rows;
  std::map<std::string, hardware_profile> catalog;
  for (const calibration_set& set : sets) {
    const std::string set_id = set_name(set.file);
    const json_reader root(set.doc, set.file);
    root.expect_object({"about", "rows"});
    const auto entries = root.elements("rows", 1);
    for (const auto& [key, detail] : map.row_details) {
      if (key.first == set_id && key.second >= entries.size()) {
        throw input_error(mapping_path().string() + ": row_details names row " + set_id + "#" +
                          std::to_string(key.second) + ", but " + set.file + " has " +
                          std::to_string(entries.size()) + " rows");
      }
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      rows.push_back(prepare_row(map, catalog, set_id, i, entries[i], set.file));
    }
  }
  return rows;
}

}  // namespace detail

std::vector<calibration_set> default_calibration_sets() {
  std::vector<calibration_set> sets;
  for (const std::string& name : load_mapping().sets) {
    const auto path = config_dir() / "calibration" / name;
    sets.push_back({read_json_file(path), path.string()});
  }
  return sets;
}

}  // namespace gpubench::model
