#include "reports/validate.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "gpubench/errors.hpp"
#include "gpubench/json_reader.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/statistics.hpp"
#include "gpubench/config_paths.hpp"
#include "gpubench/text.hpp"
#include "reports/format.hpp"

namespace gpubench::reports {
namespace {

namespace fs = std::filesystem;

// ---- reading specs ---------------------------------------------------------------------------

// "expected": a number (with "source" beside it) or {"catalog": [KEY, ...]}, the product of
// figures of the spec's catalog entry (peak x efficiency).
expectation read_expectation(const json_reader& owner, const std::string& key,
                             const model::hardware_profile* catalog, double max) {
  const json_reader value = owner.member(key);
  expectation e;
  if (value.node().is_number()) {
    e.value = owner.get_number(key, 1e-9, max);
    e.source = owner.find_string("source").value_or("");
    return e;
  }
  value.expect_object({"catalog"});
  if (catalog == nullptr) {
    value.fail_here("a number: this spec names no catalog entry to take figures from");
  }
  const auto keys = value.elements("catalog", 1);
  e.value = 1;
  std::vector<std::string> names;
  for (const json_reader& k : keys) {
    if (!k.node().is_string()) k.fail_here("a catalog figure name");
    const std::string name = k.node().get<std::string>();
    const model::figure* f = catalog->find(name);
    if (f == nullptr) {
      k.fail_here("a figure of catalog entry '" + catalog->name + "' (it has no '" + name + "')");
    }
    e.value *= f->value;
    if (f->source.rfind("assumed", 0) == 0) e.advisory = true;
    names.push_back(name);
  }
  e.source = "catalog:" + catalog->name + " " + join(names, " x ");
  if (e.advisory) e.source += " (rests on an assumed figure: below the floor warns)";
  return e;
}

figure_rule read_figure_rule(const json_reader& r, const model::hardware_profile* catalog) {
  r.expect_object({"name", "benchmark", "axes", "metric", "per", "expected", "source", "floor",
                   "min_gpus", "ranks"});
  figure_rule rule;
  rule.name = r.get_string("name");
  rule.benchmark = r.get_string("benchmark");
  rule.metric = r.get_string("metric");
  rule.per = r.find_string("per").value_or("gpu");
  if (rule.per != "gpu" && rule.per != "pair" && rule.per != "machine") {
    r.fail("per", "gpu, pair or machine");
  }
  if (r.has("axes")) {
    const json_reader axes = r.member("axes");
    if (!axes.node().is_object()) axes.fail_here("an object of axis values");
    for (const auto& [name, value] : axes.node().items()) {
      const json_reader v(value, r.file(), json_path(axes.path(), name));
      if (value.is_string()) {
        rule.axes[name] = value.get<std::string>();
      } else if (value.is_number_integer()) {
        rule.axes[name] = value.dump();
      } else {
        v.fail_here("a string or an integer");
      }
    }
  }
  rule.expected = read_expectation(r, "expected", catalog, 1e9);
  rule.floor = r.find_number("floor", 0.01, 1.0).value_or(0.9);
  rule.min_gpus = static_cast<int>(r.find_int("min_gpus", 1, 1 << 20).value_or(1));
  if (const auto ranks = r.find_int("ranks", 1, 1 << 20)) rule.ranks = static_cast<int>(*ranks);
  return rule;
}

void read_health(const json_reader& h, const model::hardware_profile* catalog, health_rules& out) {
  h.expect_object({"gpus", "gpu_model", "pcie", "ecc", "nvlink_links", "peer_access",
                   "power_limit_W", "throttle_reasons_fail", "burn", "cpu_cores", "memory_GB"});
  if (const auto n = h.find_int("gpus", 1, 1 << 16)) out.gpus = static_cast<int>(*n);
  if (const auto m = h.find_string("gpu_model")) out.gpu_model = *m;
  if (h.has("pcie")) {
    const json_reader p = h.member("pcie");
    p.expect_object({"gen", "width"});
    if (const auto g = p.find_int("gen", 1, 9)) out.pcie_gen = static_cast<int>(*g);
    if (const auto w = p.find_int("width", 1, 32)) out.pcie_width = static_cast<int>(*w);
  }
  if (const auto ecc = h.find_bool("ecc")) out.ecc = *ecc;
  if (const auto n = h.find_int("nvlink_links", 0, 64)) {
    // 0: not checked (one GPU of a board, whose links may be absent by design).
    out.nvlink_links = *n == 0 ? std::nullopt : std::optional<int>(static_cast<int>(*n));
  }
  if (const auto p = h.find_string("peer_access")) {
    if (*p != "nvlink" && *p != "none") h.fail("peer_access", "\"nvlink\" or \"none\"");
    out.peer_access_over_nvlink = *p == "nvlink";
  }
  if (h.has("power_limit_W")) {
    const json_reader p = h.member("power_limit_W");
    p.expect_object({"expected", "source", "floor"});
    out.power_limit_W = read_expectation(p, "expected", catalog, 1e5);
    out.power_limit_floor = p.find_number("floor", 0.01, 1.0).value_or(0.95);
  }
  if (h.has("throttle_reasons_fail")) {
    out.throttle_reasons_fail.clear();
    for (const json_reader& r : h.elements("throttle_reasons_fail")) {
      if (!r.node().is_string()) r.fail_here("a throttle reason name");
      out.throttle_reasons_fail.push_back(r.node().get<std::string>());
    }
  }
  if (h.has("burn")) {
    const json_reader b = h.member("burn");
    b.expect_object({"max_drop_pct", "sustain_fraction", "sm_clock_fraction"});
    if (const auto d = b.find_number("max_drop_pct", 0, 100)) out.burn_max_drop_pct = *d;
    if (const auto s = b.find_number("sustain_fraction", 0.01, 1.0)) {
      out.burn_sustain_fraction = *s;
    }
    if (const auto c = b.find_number("sm_clock_fraction", 0.01, 1.0)) out.sm_clock_fraction = *c;
  }
  if (h.has("cpu_cores")) {
    const json_reader c = h.member("cpu_cores");
    c.expect_object({"expected", "source"});
    out.cpu_cores = read_expectation(c, "expected", catalog, 1e5);
  }
  if (h.has("memory_GB")) {
    const json_reader m = h.member("memory_GB");
    m.expect_object({"expected", "source", "floor"});
    out.memory_GB = read_expectation(m, "expected", catalog, 1e7);
    out.memory_floor = m.find_number("floor", 0.01, 1.0).value_or(0.9);
  }
}

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
      s.figures.push_back(read_figure_rule(r, figures_from));
    }
  }
  if (top.has("health")) read_health(top.member("health"), figures_from, s.health);
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
      throw input_error("--spec " + name_or_file + ": expected a spec name (" + join(spec_names()) +
                        ") or a spec file");
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

// ---- reading results -------------------------------------------------------------------------

struct gpu_view {
  std::string host;  // empty in a single-node run
  const gpu_info* gpu = nullptr;
  [[nodiscard]] std::string subject() const {
    return (host.empty() ? "" : host + " ") + "GPU " + std::to_string(gpu->index);
  }
};

std::vector<gpu_view> gpus_of(const results_document& doc) {
  std::vector<gpu_view> out;
  if (doc.nodes.size() > 1) {
    for (const node_entry& node : doc.nodes) {
      for (const gpu_info& g : node.system.gpus) out.push_back({node.host, &g});
    }
  } else {
    for (const gpu_info& g : doc.system.gpus) out.push_back({"", &g});
  }
  return out;
}

std::string host_of(const result& r, const results_document& doc) {
  return doc.nodes.size() > 1 ? r.host : "";
}

bool axes_match(const result& r, const std::map<std::string, std::string>& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& entry) {
    const auto value = axis_text(r.axes, entry.first);
    return value && *value == entry.second;
  });
}

std::string unit_text(const std::string& metric) {
  if (metric == "TFLOPs" || metric.ends_with("_TFLOPs")) return "TFLOP/s";
  if (metric == "GBps" || metric.ends_with("_GBps")) return "GB/s";
  if (metric == "us" || metric.ends_with("_us")) return "us";
  return "";
}

bool lower_is_better(const std::string& metric) {
  return metric == "us" || metric.ends_with("_us") || metric.ends_with("_pct");
}

std::string with_unit(double value, const std::string& unit) {
  return format_number(value) + (unit.empty() ? "" : " " + unit);
}

rule_outcome against_floor(std::string rule, std::string subject, double measured,
                           const expectation& e, double floor, const std::string& unit) {
  rule_outcome o;
  o.rule = std::move(rule);
  o.subject = std::move(subject);
  o.unit = unit;
  o.measured_value = measured;
  o.expected_value = e.value;
  o.floor_value = e.value * floor;
  o.measured = with_unit(measured, unit);
  o.expected = with_unit(e.value, unit);
  o.floor = with_unit(e.value * floor, unit) + " (" + format_number(floor * 100) + "%)";
  const bool below = measured < e.value * floor;
  o.status = !below ? rule_status::pass : e.advisory ? rule_status::warn : rule_status::fail;
  o.detail = e.source;
  if (below) {
    o.detail =
        format_number(100 * measured / e.value) + "% of expected, under the floor; " + o.detail;
  }
  return o;
}

rule_outcome simple(std::string rule, std::string subject, rule_status status, std::string measured,
                    std::string expected, std::string detail = "") {
  rule_outcome o;
  o.rule = std::move(rule);
  o.subject = std::move(subject);
  o.status = status;
  o.measured = std::move(measured);
  o.expected = std::move(expected);
  o.detail = std::move(detail);
  return o;
}

// Why a benchmark has no usable result: its skip reason or its error, if the file says.
std::string why_not_measured(const results_document& doc, const std::string& id) {
  for (const result& r : doc.results) {
    if (r.id != id) continue;
    if (r.status == result_status::skipped) return "skipped: " + r.reason;
    if (r.status == result_status::failed) return "failed: " + r.error;
  }
  return "not in the results file (run it: gpubench run --only " + id + ")";
}

// ---- figure rules ----------------------------------------------------------------------------

void check_figure(const figure_rule& rule, const results_document& doc, std::size_t gpu_count,
                  std::vector<rule_outcome>& out) {
  if (gpu_count > 0 && static_cast<int>(gpu_count) < rule.min_gpus) {
    out.push_back(simple(rule.name, "machine", rule_status::not_applicable, "", "",
                         "needs " + std::to_string(rule.min_gpus) + " GPUs; the run had " +
                             std::to_string(gpu_count)));
    return;
  }
  std::map<std::string, double> best;  // subject -> best value
  std::map<std::string, std::string> failures;
  for (const result& r : doc.results) {
    if (r.id != rule.benchmark || !axes_match(r, rule.axes)) continue;
    if (rule.ranks) {
      const auto ranks = r.info.find("ranks");
      if (ranks == r.info.end() || !ranks->is_number() || ranks->get<int>() != *rule.ranks) {
        continue;
      }
    }
    std::string subject;
    const std::string host = host_of(r, doc);
    if (rule.per == "gpu") {
      subject = "GPU " + axis_text(r.axes, "gpu").value_or("?");
    } else if (rule.per == "pair") {
      subject = "GPUs " + axis_text(r.axes, "pair").value_or("?");
    } else {
      subject = "machine";
    }
    if (!host.empty()) subject.insert(0, host + " ");
    if (r.status == result_status::failed) {
      failures[subject] = r.error;
      continue;
    }
    const auto value = metric_median(r, rule.metric);
    if (r.status != result_status::ok || !value) continue;
    auto [it, fresh] = best.emplace(subject, *value);
    if (!fresh) it->second = std::max(it->second, *value);
  }
  for (const auto& [subject, error] : failures) {
    if (best.count(subject) != 0) continue;
    out.push_back(simple(rule.name, subject, rule_status::fail, "",
                         with_unit(rule.expected.value, unit_text(rule.metric)),
                         "the benchmark failed: " + error));
  }
  if (best.empty() && failures.empty()) {
    out.push_back(simple(rule.name, "machine", rule_status::missing, "",
                         with_unit(rule.expected.value, unit_text(rule.metric)),
                         rule.benchmark + " " + why_not_measured(doc, rule.benchmark)));
    return;
  }
  for (const auto& [subject, value] : best) {
    out.push_back(against_floor(rule.name, subject, value, rule.expected, rule.floor,
                                unit_text(rule.metric)));
  }
}

// ---- health rules ----------------------------------------------------------------------------

std::string link_text(const pcie_link_info& link) {
  return "Gen" + (link.gen ? std::to_string(*link.gen) : std::string("?")) + " x" +
         (link.width ? std::to_string(*link.width) : std::string("?"));
}

// The worst PCIe link this GPU showed while a per-GPU PCIe benchmark copied through it.
std::optional<pcie_link_info> link_under_load(const results_document& doc, const gpu_view& g) {
  std::optional<pcie_link_info> worst;
  for (const result& r : doc.results) {
    if (!r.id.starts_with("pcie.") || r.status != result_status::ok) continue;
    if (host_of(r, doc) != g.host) continue;
    const auto gpu = axis_number(r.axes, "gpu");
    if (!gpu || static_cast<int>(*gpu) != g.gpu->index) continue;
    const auto seen = r.info.find("pcie_link_during_copy");
    if (seen == r.info.end() || !seen->is_object()) continue;
    const auto link = seen->get<pcie_link_info>();
    if (!link.gen) continue;
    if (!worst || *link.gen < worst->gen.value_or(99) ||
        link.width.value_or(0) < worst->width.value_or(99)) {
      worst = link;
    }
  }
  return worst;
}

void check_pcie(const health_rules& h, const results_document& doc, const gpu_view& g,
                std::vector<rule_outcome>& out) {
  const std::string expected =
      "Gen" + std::to_string(*h.pcie_gen) + " x" + std::to_string(h.pcie_width.value_or(16));
  const int want_width = h.pcie_width.value_or(16);
  const auto& idle = g.gpu->pcie;
  if (idle && idle->max_gen && *idle->max_gen < *h.pcie_gen) {
    out.push_back(simple("pcie link", g.subject(), rule_status::fail,
                         "max Gen" + std::to_string(*idle->max_gen), expected,
                         "the slot, riser or BIOS limits the link below the GPU's generation"));
    return;
  }
  if (const auto loaded = link_under_load(doc, g)) {
    const bool ok = *loaded->gen >= *h.pcie_gen && loaded->width.value_or(0) >= want_width;
    out.push_back(simple("pcie link", g.subject(), ok ? rule_status::pass : rule_status::fail,
                         link_text(*loaded) + " under load", expected,
                         ok ? "sampled through NVML while pcie.* copied"
                            : "the link trained down: reseat the GPU, check the riser and the "
                              "slot's BIOS setting"));
    return;
  }
  if (!idle || !idle->gen) {
    out.push_back(simple("pcie link", g.subject(), rule_status::missing, "", expected,
                         "NVML gave no link state and no pcie.* result carries one"));
    return;
  }
  // Idle links drop their generation to save power; their width is what they trained to.
  const bool narrow = idle->width.value_or(0) < want_width;
  const bool slow = *idle->gen < *h.pcie_gen;
  out.push_back(simple("pcie link", g.subject(),
                       narrow ? rule_status::fail
                       : slow ? rule_status::warn
                              : rule_status::pass,
                       link_text(*idle) + " idle", expected,
                       slow && !narrow ? "idle links drop generation; run pcie.* to see the link "
                                         "under load"
                                       : "read while idle (no pcie.* result with a link sample)"));
}

void check_ecc(const gpu_view& g, std::vector<rule_outcome>& out) {
  const gpu_info& gpu = *g.gpu;
  if (!gpu.ecc_enabled) {
    out.push_back(simple("ecc", g.subject(), rule_status::missing, "", "enabled",
                         "NVML did not report the ECC mode"));
  } else {
    out.push_back(simple("ecc", g.subject(),
                         *gpu.ecc_enabled ? rule_status::pass : rule_status::fail,
                         *gpu.ecc_enabled ? "enabled" : "disabled", "enabled",
                         *gpu.ecc_enabled ? "" : "enable with nvidia-smi -e 1 and reset the GPU"));
  }
  const memory_error_info& m = gpu.memory_errors;
  std::vector<std::string> problems;
  if (m.uncorrected_volatile.value_or(0) > 0) {
    problems.push_back(std::to_string(*m.uncorrected_volatile) +
                       " uncorrected ECC errors since the driver loaded");
  }
  if (m.row_remap_failure.value_or(false)) problems.emplace_back("a row remap failed");
  if (m.row_remap_pending.value_or(false)) problems.emplace_back("a row remap waits for a reset");
  if (m.retired_pages_pending.value_or(false)) {
    problems.emplace_back("a page retirement waits for a reset");
  }
  const bool known = m.uncorrected_volatile || m.row_remap_pending || m.retired_pages_pending;
  std::string life;
  if (m.uncorrected_aggregate) {
    life = std::to_string(*m.uncorrected_aggregate) + " uncorrected over the GPU's life";
  }
  if (!known) {
    out.push_back(simple("memory errors", g.subject(), rule_status::missing, "", "none",
                         "NVML gave no ECC counters or remap state"));
  } else if (problems.empty()) {
    out.push_back(simple("memory errors", g.subject(), rule_status::pass, "none", "none", life));
  } else {
    out.push_back(simple("memory errors", g.subject(), rule_status::fail, join(problems, "; "),
                         "none", life.empty() ? "" : life));
  }
}

const json* burn_gpu(const results_document& doc, const gpu_view& g, const result** owner) {
  for (const result& r : doc.results) {
    if (r.id != "gpu.burn" || r.status == result_status::skipped) continue;
    if (host_of(r, doc) != g.host) continue;
    const auto gpus = r.info.find("gpus");
    if (gpus == r.info.end() || !gpus->is_array()) continue;
    for (const json& entry : *gpus) {
      if (entry.value("gpu", -1) == g.gpu->index) {
        *owner = &r;
        return &entry;
      }
    }
  }
  return nullptr;
}

std::optional<double> gemm_rate(const results_document& doc, const gpu_view& g,
                                const std::string& dtype, const std::string& shape) {
  std::optional<double> best;
  for (const result& r : doc.results) {
    if (r.id != "gemm" || r.status != result_status::ok || host_of(r, doc) != g.host) continue;
    const auto gpu = axis_number(r.axes, "gpu");
    if (!gpu || static_cast<int>(*gpu) != g.gpu->index) continue;
    if (axis_text(r.axes, "dtype") != dtype) continue;
    const auto s = axis_text(r.axes, "shape");
    if (!s) continue;
    const gemm_shape a = parse_gemm_shape(*s);
    const gemm_shape b = parse_gemm_shape(shape);
    if (a.m != b.m || a.n != b.n || a.k != b.k) continue;
    const auto rate = metric_median(r, "TFLOPs");
    if (rate) best = std::max(best.value_or(0), *rate);
  }
  return best;
}

void check_burn(const health_rules& h, const results_document& doc, const gpu_view& g,
                std::vector<rule_outcome>& out) {
  const bool any = !h.throttle_reasons_fail.empty() || h.burn_max_drop_pct ||
                   h.burn_sustain_fraction || h.sm_clock_fraction;
  if (!any) return;
  const result* owner = nullptr;
  const json* b = burn_gpu(doc, g, &owner);
  if (b == nullptr) {
    out.push_back(simple("sustained load", g.subject(), rule_status::missing, "", "gpu.burn",
                         "gpu.burn " + why_not_measured(doc, "gpu.burn")));
    return;
  }
  if (owner->status == result_status::failed) {
    out.push_back(simple("sustained load", g.subject(), rule_status::fail, "", "",
                         "gpu.burn failed: " + owner->error));
  }
  if (!h.throttle_reasons_fail.empty()) {
    std::vector<std::string> seen;
    std::vector<std::string> bad;
    for (const json& r : b->value("throttle_reasons_seen", json::array())) {
      const auto name = r.get<std::string>();
      seen.push_back(name);
      if (std::find(h.throttle_reasons_fail.begin(), h.throttle_reasons_fail.end(), name) !=
          h.throttle_reasons_fail.end()) {
        bad.push_back(name);
      }
    }
    const bool sampled = owner->info.find("nvml") == owner->info.end();
    std::string detail = "forbidden: " + join(h.throttle_reasons_fail) +
                         "; seen during gpu.burn: " + (seen.empty() ? "none" : join(seen));
    if (!sampled) detail = owner->info.value("nvml", std::string());
    if (!bad.empty()) {
      detail =
          "the GPU slowed itself under sustained load (check cooling, airflow, power "
          "delivery); " +
          detail;
    }
    out.push_back(simple("throttling", g.subject(),
                         !sampled      ? rule_status::missing
                         : bad.empty() ? rule_status::pass
                                       : rule_status::fail,
                         bad.empty() ? "none forbidden" : join(bad), "no slowdown", detail));
  }
  if (h.burn_max_drop_pct) {
    const double drop = b->value("drop_pct", 0.0);
    rule_outcome o = simple(
        "sustained drop", g.subject(),
        drop <= *h.burn_max_drop_pct ? rule_status::pass : rule_status::fail,
        format_number(drop) + "%", "<= " + format_number(*h.burn_max_drop_pct) + "%",
        "first tenth " + format_number(b->value("first_tenth_TFLOPs", 0.0)) + ", last tenth " +
            format_number(b->value("last_tenth_TFLOPs", 0.0)) + " TFLOP/s");
    o.measured_value = drop;
    o.floor_value = *h.burn_max_drop_pct;
    o.unit = "%";
    out.push_back(std::move(o));
  }
  if (h.burn_sustain_fraction) {
    const double sustained = b->value("TFLOPs", 0.0);
    const std::string shape = std::to_string(owner->info.value("m", 0)) + "x" +
                              std::to_string(owner->info.value("n", 0)) + "x" +
                              std::to_string(owner->info.value("k", 0));
    const auto burst = gemm_rate(doc, g, b->value("dtype", std::string()), shape);
    if (!burst) {
      out.push_back(simple("sustained rate", g.subject(), rule_status::missing,
                           with_unit(sustained, "TFLOP/s"), "",
                           "no gemm result at " + b->value("dtype", std::string()) + " " + shape +
                               " on this GPU to compare with"));
    } else {
      expectation e{*burst, "this GPU's gemm rate at the same dtype and shape", false};
      out.push_back(against_floor("sustained rate", g.subject(), sustained, e,
                                  *h.burn_sustain_fraction, "TFLOP/s"));
    }
  }
  if (h.sm_clock_fraction) {
    const json typical = b->value("sm_mhz_median", json());
    const json max = b->value("sm_max_mhz", json());
    if (!typical.is_number() || !max.is_number()) {
      out.push_back(simple("sm clock", g.subject(), rule_status::missing, "", "",
                           "NVML gave no SM clocks during gpu.burn"));
    } else {
      expectation e{max.get<double>(), "NVML's maximum SM clock for this GPU", false};
      out.push_back(against_floor("sm clock", g.subject(), typical.get<double>(), e,
                                  *h.sm_clock_fraction, "MHz"));
    }
  }
}

void check_peer_access(const results_document& doc, const std::vector<gpu_view>& gpus,
                       std::vector<rule_outcome>& out) {
  std::set<int> nvlinked;
  for (const gpu_view& g : gpus) {
    if (g.gpu->nvlink_links_up.value_or(0) > 0) nvlinked.insert(g.gpu->index);
  }
  if (gpus.size() < 2 || nvlinked.size() < 2) {
    out.push_back(simple("peer access", "machine", rule_status::not_applicable, "", "",
                         "fewer than two GPUs with NVLink links up"));
    return;
  }
  bool any = false;
  std::vector<std::string> missing;
  for (const result& r : doc.results) {
    if (r.id != "p2p.copy" || r.status == result_status::failed) continue;
    const auto pair = axis_text(r.axes, "pair");
    const auto access = r.info.find("peer_access");
    if (!pair || access == r.info.end() || !access->is_boolean()) continue;
    const auto ends = split(*pair, '>');
    if (ends.size() != 2) continue;
    if (nvlinked.count(std::stoi(ends[0])) == 0 || nvlinked.count(std::stoi(ends[1])) == 0) {
      continue;
    }
    any = true;
    if (!access->get<bool>() && std::find(missing.begin(), missing.end(), *pair) == missing.end()) {
      missing.push_back(*pair);
    }
  }
  if (!any) {
    out.push_back(simple("peer access", "machine", rule_status::missing, "", "every NVLink pair",
                         "p2p.copy " + why_not_measured(doc, "p2p.copy")));
    return;
  }
  out.push_back(simple(
      "peer access", "machine", missing.empty() ? rule_status::pass : rule_status::fail,
      missing.empty() ? "every NVLink pair" : "none for " + join(missing), "every NVLink pair",
      missing.empty() ? "" : "check the fabric manager and the IOMMU/ACS setting"));
}

void check_health(const health_rules& h, const results_document& doc,
                  std::vector<rule_outcome>& out) {
  const std::vector<gpu_view> gpus = gpus_of(doc);
  if (h.gpus) {
    std::vector<std::pair<std::string, std::size_t>> per_node;
    if (doc.nodes.size() > 1) {
      for (const node_entry& n : doc.nodes) per_node.emplace_back(n.host, n.system.gpus.size());
    } else {
      per_node.emplace_back("machine", doc.system.gpus.size());
    }
    for (const auto& [node, count] : per_node) {
      out.push_back(
          simple("gpu count", node,
                 static_cast<int>(count) == *h.gpus ? rule_status::pass : rule_status::fail,
                 std::to_string(count), std::to_string(*h.gpus),
                 static_cast<int>(count) == *h.gpus ? "" : doc.system.gpu_status.reason));
    }
  }
  if (gpus.empty() && !h.gpu_model.empty()) {
    out.push_back(simple("gpu model", "machine", rule_status::fail, "no GPU", h.gpu_model,
                         doc.system.gpu_status.reason));
  }
  for (const gpu_view& g : gpus) {
    const gpu_info& gpu = *g.gpu;
    if (!h.gpu_model.empty()) {
      const auto entry =
          model::catalog_gpu_for_device(gpu.name, static_cast<double>(gpu.memory_bytes) / 1e9);
      out.push_back(simple("gpu model", g.subject(),
                           entry == h.gpu_model ? rule_status::pass : rule_status::fail,
                           gpu.name + (entry ? " (" + *entry + ")" : ""), h.gpu_model));
    }
    if (h.pcie_gen) check_pcie(h, doc, g, out);
    if (h.ecc) check_ecc(g, out);
    if (h.nvlink_links) {
      if (!gpu.nvlink_links_up) {
        out.push_back(simple("nvlink links", g.subject(), rule_status::missing, "",
                             std::to_string(*h.nvlink_links), "NVML gave no NVLink state"));
      } else {
        const bool ok = *gpu.nvlink_links_up >= *h.nvlink_links;
        out.push_back(
            simple("nvlink links", g.subject(), ok ? rule_status::pass : rule_status::fail,
                   std::to_string(*gpu.nvlink_links_up) + " up", std::to_string(*h.nvlink_links),
                   ok ? ""
                      : "links down: check the NVSwitch trays, the fabric "
                        "manager and nvidia-smi nvlink -s"));
      }
    }
    if (h.power_limit_W) {
      if (!gpu.power_limit_W) {
        out.push_back(simple("power limit", g.subject(), rule_status::missing, "", "",
                             "NVML gave no power limit"));
      } else {
        out.push_back(against_floor("power limit", g.subject(), *gpu.power_limit_W,
                                    *h.power_limit_W, h.power_limit_floor, "W"));
      }
    }
    check_burn(h, doc, g, out);
  }
  if (h.peer_access_over_nvlink) check_peer_access(doc, gpus, out);
  if (h.cpu_cores) {
    out.push_back(
        against_floor("cpu cores", "machine", doc.system.cpu.cores, *h.cpu_cores, 1.0, "cores"));
  }
  if (h.memory_GB) {
    out.push_back(against_floor("host memory", "machine",
                                static_cast<double>(doc.system.memory_bytes) / 1e9, *h.memory_GB,
                                h.memory_floor, "GB"));
  }
}

// ---- baselines -------------------------------------------------------------------------------

std::string figure_key(const result& r, const std::string& metric) {
  return r.id + " " + format_axes(r.axes) + " " + metric;
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
  const std::vector<gpu_view> gpus = gpus_of(doc);
  if (gpus.empty()) {
    why_not = doc.system.gpu_status.reason.empty() ? std::string("no GPU in the results")
                                                   : doc.system.gpu_status.reason;
    return std::nullopt;
  }
  const gpu_info& first = *gpus.front().gpu;
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

std::string_view to_string(rule_status status) {
  switch (status) {
    case rule_status::pass:
      return "pass";
    case rule_status::fail:
      return "fail";
    case rule_status::warn:
      return "warn";
    case rule_status::missing:
      return "missing";
    case rule_status::not_applicable:
      return "n/a";
  }
  return "?";
}

bool validation::passed() const {
  const bool any_checked = rules.size() > count(rule_status::not_applicable);
  return any_checked && count(rule_status::fail) == 0 && count(rule_status::missing) == 0;
}

std::size_t validation::count(rule_status status) const {
  return static_cast<std::size_t>(std::count_if(
      rules.begin(), rules.end(), [&](const rule_outcome& r) { return r.status == status; }));
}

std::string validation::verdict() const {
  const std::string against =
      spec_name.empty() ? std::string("the fleet baseline") : "spec " + spec_name;
  const std::size_t checked = rules.size() - count(rule_status::not_applicable);
  if (passed()) {
    std::string text = "PASS: " + std::to_string(checked) + " rules against " + against;
    if (count(rule_status::warn) > 0) {
      text += " (" + std::to_string(count(rule_status::warn)) + " warnings)";
    }
    return text;
  }
  if (checked == 0) return "FAIL: no rule of " + against + " applies to these results";
  std::vector<std::string> what;
  for (const rule_outcome& r : rules) {
    if (r.status != rule_status::fail && r.status != rule_status::missing) continue;
    if (what.size() == 4) {
      what.emplace_back("...");
      break;
    }
    what.push_back(r.rule + " " + r.subject +
                   (r.status == rule_status::missing ? " not measured" : ": " + r.measured));
  }
  return "FAIL: " + std::to_string(count(rule_status::fail)) + " failed, " +
         std::to_string(count(rule_status::missing)) + " not measured, of " +
         std::to_string(checked) + " rules against " + against + " (" + join(what, "; ") + ")";
}

validation validate(const results_document& doc, const std::string& file, const spec& s) {
  validation v;
  v.results_file = file;
  v.spec_name = s.name;
  v.spec_file = s.file;
  const std::size_t gpu_count = gpus_of(doc).size();
  check_health(s.health, doc, v.rules);
  for (const figure_rule& rule : s.figures) check_figure(rule, doc, gpu_count, v.rules);
  return v;
}

baseline make_baseline(const std::vector<std::string>& files) {
  baseline base;
  std::map<std::string, std::vector<double>> values;
  for (const std::string& file : files) {
    const results_document doc = read_results(file);
    base.files.push_back(file);
    for (const result& r : doc.results) {
      if (r.status != result_status::ok) continue;
      for (const auto& [metric, stats] : r.metrics) {
        values[figure_key(r, metric)].push_back(stats.median);
      }
    }
  }
  for (auto& [key, list] : values) {
    base.median[key] = summarize(list).median;
    base.machines[key] = list.size();
  }
  return base;
}

void check_against_baseline(validation& v, const results_document& doc, const baseline& base,
                            double tolerance_pct) {
  v.baseline_files = base.files;
  for (const result& r : doc.results) {
    if (r.status != result_status::ok) continue;
    for (const auto& [metric, stats] : r.metrics) {
      const std::string key = figure_key(r, metric);
      const auto it = base.median.find(key);
      if (it == base.median.end() || it->second == 0) continue;
      const double ratio = stats.median / it->second;
      const bool lower = lower_is_better(metric);
      const double limit = lower ? 1 + tolerance_pct / 100 : 1 - tolerance_pct / 100;
      const bool ok = lower ? ratio <= limit : ratio >= limit;
      rule_outcome o;
      o.rule = "baseline " + r.id + " " + metric;
      o.subject = format_axes(r.axes);
      if (!host_of(r, doc).empty()) o.subject = r.host + " " + o.subject;
      o.unit = unit_text(metric);
      o.measured_value = stats.median;
      o.expected_value = it->second;
      o.floor_value = it->second * limit;
      o.measured = with_unit(stats.median, o.unit);
      o.expected = with_unit(it->second, o.unit);
      o.floor = (lower ? "<= " : ">= ") + with_unit(it->second * limit, o.unit);
      o.status = ok ? rule_status::pass : rule_status::fail;
      o.detail = "median of " + std::to_string(base.machines.at(key)) + " machines; " +
                 format_number(100 * (ratio - 1)) + "% from it";
      v.rules.push_back(std::move(o));
    }
  }
}

json to_json(const validation& v) {
  json rules = json::array();
  for (const rule_outcome& r : v.rules) {
    rules.push_back(json{{"rule", r.rule},
                         {"subject", r.subject},
                         {"status", to_string(r.status)},
                         {"measured", r.measured},
                         {"expected", r.expected},
                         {"floor", r.floor},
                         {"measured_value", r.measured_value},
                         {"expected_value", r.expected_value},
                         {"floor_value", r.floor_value},
                         {"unit", r.unit},
                         {"detail", r.detail}});
  }
  json counts = json::object();
  for (rule_status s : {rule_status::pass, rule_status::fail, rule_status::warn,
                        rule_status::missing, rule_status::not_applicable}) {
    counts[std::string(to_string(s))] = v.count(s);
  }
  return json{
      {"schema", validation_schema},
      {"results", v.results_file},
      {"spec", v.spec_name.empty() ? json() : json{{"name", v.spec_name}, {"file", v.spec_file}}},
      {"baseline", v.baseline_files},
      {"passed", v.passed()},
      {"verdict", v.verdict()},
      {"counts", counts},
      {"rules", rules}};
}

std::string to_text(const validation& v) {
  std::string out = "validate " + v.results_file;
  if (!v.spec_name.empty()) out += " against spec " + v.spec_name;
  if (!v.baseline_files.empty()) {
    out += (v.spec_name.empty() ? " against" : " and") + std::string(" a baseline of ") +
           std::to_string(v.baseline_files.size()) + " results files";
  }
  out += "\n\n";
  text_table table({"RULE", "SUBJECT", "MEASURED", "EXPECTED", "FLOOR", "RESULT", "DETAIL"});
  for (const rule_outcome& r : v.rules) {
    std::string result(to_string(r.status));
    std::transform(result.begin(), result.end(), result.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    table.add_row({r.rule, r.subject, r.measured, r.expected, r.floor, result, r.detail});
  }
  out += table.render();
  out += "\n" + v.verdict() + "\n";
  return out;
}

}  // namespace gpubench::reports
