// Health rules: what a spec's "health" asks of every GPU and the machine.
#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/measurements.hpp"
#include "rules.hpp"

namespace gpubench::acceptance::detail {

namespace {

namespace measurements = vocabulary::measurements;
namespace burn_info = measurements::burn_gpu;

std::string link_text(const pcie_link_info& link) {
  return "Gen" + (link.gen ? std::to_string(*link.gen) : std::string("?")) + " x" +
         (link.width ? std::to_string(*link.width) : std::string("?"));
}

// The worst PCIe link this GPU showed while a per-GPU PCIe benchmark copied through it.
std::optional<pcie_link_info> link_under_load(const results_index& index, const gpu_view& g) {
  std::optional<pcie_link_info> worst;
  for (const result* on_gpu : index.on_gpu(g)) {
    const result& r = *on_gpu;
    if (!measurements::pcie_any.matches_id(r.id) || r.status != result_status::ok) continue;
    const json_view seen = r.info.view()["pcie_link_during_copy"];
    // Read field by field: a damaged field is absent, not a thrown type error.
    const auto field = [&](std::string_view name) -> std::optional<int> {
      const auto n = seen[name].integer();
      if (!n || *n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max()) {
        return std::nullopt;
      }
      return static_cast<int>(*n);
    };
    pcie_link_info link;
    link.gen = field("gen");
    link.width = field("width");
    if (!link.gen) continue;
    if (!worst || *link.gen < worst->gen.value_or(99) ||
        link.width.value_or(0) < worst->width.value_or(99)) {
      worst = link;
    }
  }
  return worst;
}

void check_pcie(const health_rules& h, const results_index& index, const gpu_view& g,
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
  if (const auto loaded = link_under_load(index, g)) {
    const bool ok = *loaded->gen >= *h.pcie_gen && loaded->width.value_or(0) >= want_width;
    out.push_back(
        simple("pcie link", g.subject(), ok ? rule_status::pass : rule_status::fail,
               link_text(*loaded) + " under load", expected,
               ok ? "sampled through NVML while " + measurements::pcie_any.benchmark + " copied"
                  : "the link trained down: reseat the GPU, check the riser and the "
                    "slot's BIOS setting"));
    return;
  }
  if (!idle || !idle->gen) {
    out.push_back(simple("pcie link", g.subject(), rule_status::missing, "", expected,
                         "NVML gave no link state and no " + measurements::pcie_any.benchmark +
                             " result carries one"));
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
                       slow && !narrow
                           ? "idle links drop generation; run " + measurements::pcie_any.benchmark +
                                 " to see the link under load"
                           : "read while idle (no " + measurements::pcie_any.benchmark +
                                 " result with a link sample)"));
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

// This GPU's entry in a burn result's info (read where it lies: a fleet's burn samples are most
// of its file), and the result; an absent view where no burn result names the GPU.
json_view burn_gpu(const results_index& index, const gpu_view& g, const result** owner) {
  for (const result* on_host : index.on_host(g.host)) {
    const result& r = *on_host;
    if (!measurements::burn.matches_id(r.id) || r.status == result_status::skipped) continue;
    const auto& entries = index.entries_by(r, burn_info::list, burn_info::gpu);
    if (const auto it = entries.find(g.gpu->index); it != entries.end()) {
      *owner = &r;
      return it->second;
    }
  }
  return {};
}

// A shape as a results file states it; nullopt for one the gemm benchmark never writes (a file
// from elsewhere, or damaged), which then matches nothing.
std::optional<gemm_shape> shape_in_file(const std::string& text) {
  try {
    return parse_gemm_shape(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<double> gemm_rate(const results_index& index, const gpu_view& g,
                                const std::string& dtype, const std::string& shape) {
  const auto b = shape_in_file(shape);
  if (!b) return std::nullopt;
  std::optional<double> best;
  const vocabulary::query on_gpu =
      measurements::gemm.and_where("gpu", std::to_string(g.gpu->index)).and_where("dtype", dtype);
  for (const vocabulary::row& r : vocabulary::select(index.on_gpu(g), on_gpu)) {
    const auto s = axis_text(r.from->axes, "shape");
    if (!s) continue;
    const auto a = shape_in_file(*s);
    if (!a || a->m != b->m || a->n != b->n || a->k != b->k) continue;
    best = std::max(best.value_or(0), r.value());
  }
  return best;
}

void check_burn(const health_rules& h, const results_index& index, const gpu_view& g,
                std::vector<rule_outcome>& out) {
  const bool any = !h.throttle_reasons_fail.empty() || h.burn_max_drop_pct ||
                   h.burn_sustain_fraction || h.sm_clock_fraction;
  if (!any) return;
  const result* owner = nullptr;
  const json_view b = burn_gpu(index, g, &owner);
  if (!b.exists()) {
    const std::string& burn = measurements::burn.benchmark;
    out.push_back(simple("sustained load", g.subject(), rule_status::missing, "", burn,
                         burn + " " + index.why_not_measured(burn)));
    return;
  }
  if (owner->status == result_status::failed) {
    out.push_back(simple("sustained load", g.subject(), rule_status::fail, "", "",
                         measurements::burn.benchmark + " failed: " + owner->error));
  }
  const json_view info = owner->info.view();  // the burn's own: its shape, NVML's word
  if (!h.throttle_reasons_fail.empty()) {
    std::vector<std::string> seen;
    std::vector<std::string> bad;
    for (const json_view r : b[burn_info::throttle_reasons].items()) {
      auto name = r.text().value_or("?");
      if (std::find(h.throttle_reasons_fail.begin(), h.throttle_reasons_fail.end(), name) !=
          h.throttle_reasons_fail.end()) {
        bad.push_back(name);
      }
      seen.push_back(std::move(name));
    }
    const bool sampled = !info["nvml"].exists();
    std::string detail = "forbidden: " + join(h.throttle_reasons_fail) + "; seen during " +
                         measurements::burn.benchmark + ": " + (seen.empty() ? "none" : join(seen));
    if (!sampled) detail = info.value("nvml", std::string());
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
  // A figure the burn did not write, or wrote as something other than a number (a damaged file),
  // is not measured: never read as 0, which would pass the drop.
  const auto unwritten = [&](const char* rule, std::string_view figure, std::string expected) {
    out.push_back(simple(rule, g.subject(), rule_status::missing, "", std::move(expected),
                         measurements::burn.benchmark + " wrote no number for " +
                             std::string(figure) + " of this GPU"));
  };
  if (h.burn_max_drop_pct && !b[burn_info::drop].number()) {
    unwritten("sustained drop", burn_info::drop, "<= " + format_number(*h.burn_max_drop_pct) + "%");
  } else if (h.burn_max_drop_pct) {
    const double drop = *b[burn_info::drop].number();
    rule_outcome o = simple(
        "sustained drop", g.subject(),
        drop <= *h.burn_max_drop_pct ? rule_status::pass : rule_status::fail,
        format_number(drop) + "%", "<= " + format_number(*h.burn_max_drop_pct) + "%",
        "first tenth " + format_number(b.value(burn_info::first_tenth, 0.0)) + ", last tenth " +
            format_number(b.value(burn_info::last_tenth, 0.0)) + " TFLOP/s");
    o.measured_value = drop;
    o.floor_value = *h.burn_max_drop_pct;
    o.unit = "%";
    out.push_back(std::move(o));
  }
  if (h.burn_sustain_fraction && !b[burn_info::rate].number()) {
    unwritten("sustained rate", burn_info::rate, "");
  } else if (h.burn_sustain_fraction) {
    const double sustained = *b[burn_info::rate].number();
    const std::string dtype = b.value(burn_info::dtype, std::string());
    const std::string shape = std::to_string(info.value("m", std::int64_t{0})) + "x" +
                              std::to_string(info.value("n", std::int64_t{0})) + "x" +
                              std::to_string(info.value("k", std::int64_t{0}));
    const auto burst = gemm_rate(index, g, dtype, shape);
    if (!burst) {
      out.push_back(simple(
          "sustained rate", g.subject(), rule_status::missing, with_unit(sustained, "TFLOP/s"), "",
          "no gemm result at " + dtype + " " + shape + " on this GPU to compare with"));
    } else if (const double cold = b.value(burn_info::first_tenth, 0.0);
               cold > 0 && !(*burst <= implausible_factor * cold)) {
      // A reference no GPU reaches (a broken timer, an edited file) is not the burn's fault:
      // even the burn's first seconds, before any heat, ran at a quarter of it or less.
      out.push_back(simple(
          "sustained rate", g.subject(), rule_status::missing, with_unit(sustained, "TFLOP/s"), "",
          "no usable gemm reference: this GPU's gemm figure at " + dtype + " " + shape + ", " +
              with_unit(*burst, "TFLOP/s") + ", is more than " + format_number(implausible_factor) +
              "x what it ran in the burn's first tenth (" + with_unit(cold, "TFLOP/s") +
              "); see the gemm rule"));
    } else {
      expectation e{*burst, "this GPU's gemm rate at the same dtype and shape", false};
      out.push_back(against_floor("sustained rate", g.subject(), sustained, e,
                                  *h.burn_sustain_fraction, "TFLOP/s"));
    }
  }
  if (h.sm_clock_fraction) {
    const auto typical = b[burn_info::sm_mhz_median].number();
    const auto max = b[burn_info::sm_max_mhz].number();
    if (!typical || !max) {
      out.push_back(simple("sm clock", g.subject(), rule_status::missing, "", "",
                           "NVML gave no SM clocks during " + measurements::burn.benchmark));
    } else {
      expectation e{*max, "NVML's maximum SM clock for this GPU", false};
      out.push_back(
          against_floor("sm clock", g.subject(), *typical, e, *h.sm_clock_fraction, "MHz"));
    }
  }
}

void check_peer_access(const results_document& doc, const std::vector<gpu_view>& gpus,
                       rule_outcomes& out) {
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
    if (!measurements::peer_any.matches_id(r.id) || r.status == result_status::failed) continue;
    const auto pair = axis_text(r.axes, "pair");
    const auto access = r.info.view()["peer_access"].boolean();
    if (!pair || !access) continue;
    const auto ends = parse_gpu_pair(*pair);
    if (!ends || nvlinked.count(ends->first) == 0 || nvlinked.count(ends->second) == 0) continue;
    any = true;
    if (!*access && std::find(missing.begin(), missing.end(), *pair) == missing.end()) {
      missing.push_back(*pair);
    }
  }
  if (!any) {
    const std::string& peer = measurements::peer_any.benchmark;
    out.push_back(simple("peer access", "machine", rule_status::missing, "", "every NVLink pair",
                         peer + " " + why_not_measured(doc, peer)));
    return;
  }
  out.push_back(simple(
      "peer access", "machine", missing.empty() ? rule_status::pass : rule_status::fail,
      missing.empty() ? "every NVLink pair" : "none for " + join(missing), "every NVLink pair",
      missing.empty() ? "" : "check the fabric manager and the IOMMU/ACS setting"));
}

// ---- checks not above: one GPU's model, NVLink links, power limit; the machine's GPU count,
// CPU cores and memory --------------------------------------------------------------------------

void check_gpu_count(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (!h.gpus) return;
  for (const machine_view& m : machines_of(doc)) {
    const std::size_t count = m.system->gpus.size();
    out.push_back(simple("gpu count", m.host ? *m.host : "machine",
                         static_cast<int>(count) == *h.gpus ? rule_status::pass : rule_status::fail,
                         std::to_string(count), std::to_string(*h.gpus),
                         static_cast<int>(count) == *h.gpus ? "" : doc.system.gpu_status.reason));
  }
}

void check_no_gpu_model(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (first_gpu(doc) == nullptr && !h.gpu_model.empty()) {
    out.push_back(simple("gpu model", "machine", rule_status::fail, "no GPU", h.gpu_model,
                         doc.system.gpu_status.reason));
  }
}

void check_gpu_model(const health_rules& h, const results_index& index, const gpu_view& g,
                     std::vector<rule_outcome>& out) {
  if (h.gpu_model.empty()) return;
  const gpu_info& gpu = *g.gpu;
  const auto& entry = index.catalog_gpu(gpu);
  out.push_back(simple("gpu model", g.subject(),
                       entry == h.gpu_model ? rule_status::pass : rule_status::fail,
                       gpu.name + (entry ? " (" + *entry + ")" : ""), h.gpu_model));
}

void check_nvlink(const health_rules& h, const results_index& /*index*/, const gpu_view& g,
                  std::vector<rule_outcome>& out) {
  if (!h.nvlink_links) return;
  const gpu_info& gpu = *g.gpu;
  if (!gpu.nvlink_links_up) {
    out.push_back(simple("nvlink links", g.subject(), rule_status::missing, "",
                         std::to_string(*h.nvlink_links), "NVML gave no NVLink state"));
    return;
  }
  const bool ok = *gpu.nvlink_links_up >= *h.nvlink_links;
  out.push_back(simple("nvlink links", g.subject(), ok ? rule_status::pass : rule_status::fail,
                       std::to_string(*gpu.nvlink_links_up) + " up",
                       std::to_string(*h.nvlink_links),
                       ok ? ""
                          : "links down: check the NVSwitch trays, the fabric "
                            "manager and nvidia-smi nvlink -s"));
}

void check_power_limit(const health_rules& h, const results_index& /*index*/, const gpu_view& g,
                       std::vector<rule_outcome>& out) {
  if (!h.power_limit_W) return;
  if (!g.gpu->power_limit_W) {
    out.push_back(simple("power limit", g.subject(), rule_status::missing, "", "",
                         "NVML gave no power limit"));
    return;
  }
  out.push_back(against_floor("power limit", g.subject(), *g.gpu->power_limit_W, *h.power_limit_W,
                              h.power_limit_floor, "W"));
}

void check_peer_access_rule(const health_rules& h, const results_document& doc,
                            rule_outcomes& out) {
  if (h.peer_access_over_nvlink) check_peer_access(doc, gpus_of(doc), out);
}

void check_cpu_cores(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (!h.cpu_cores) return;
  out.push_back(
      against_floor("cpu cores", "machine", doc.system.cpu.cores, *h.cpu_cores, 1.0, "cores"));
}

void check_host_memory(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (!h.memory_GB) return;
  out.push_back(against_floor("host memory", "machine",
                              static_cast<double>(doc.system.memory_bytes) / 1e9, *h.memory_GB,
                              h.memory_floor, "GB"));
}

// Every node's InfiniBand/RoCE ports: enough of them ACTIVE at the spec's rate, and which are not.
void check_network_ports(const health_rules& h, const results_document& doc, rule_outcomes& out) {
  if (!h.network_ports) return;
  const std::string expected = std::to_string(*h.network_ports) + " up at " +
                               with_unit(h.network_port_Gbps, "Gb/s") + " or more";
  for (const machine_view& m : machines_of(doc)) {
    const std::string subject = m.host ? *m.host + " ports" : "machine";
    const system_info* machine = m.system;
    if (machine->network_ports.empty()) {
      out.push_back(simple("network ports", subject, rule_status::missing, "", expected,
                           "no InfiniBand or RoCE port in the results (none under "
                           "/sys/class/infiniband, or a file from before gpubench read them)"));
      continue;
    }
    int good = 0;
    std::string bad;
    for (const network_port& p : machine->network_ports) {
      const bool up = p.state == "ACTIVE" && p.rate_Gbps.value_or(0) >= h.network_port_Gbps;
      if (up) {
        ++good;
        continue;
      }
      bad += (bad.empty() ? "" : "; ") + p.device + "/" + std::to_string(p.port) + " " + p.state +
             " (" + p.physical_state + ")" +
             (p.rate_Gbps ? ", " + with_unit(*p.rate_Gbps, "Gb/s") : std::string());
    }
    out.push_back(simple("network ports", subject,
                         good >= *h.network_ports ? rule_status::pass : rule_status::fail,
                         std::to_string(good) + " of " +
                             std::to_string(machine->network_ports.size()) + " up at rate",
                         expected, bad));
  }
}

// ---- reading each key of "health" -------------------------------------------------------------

using catalog = model::hardware_profile;

void read_gpus(const json_reader& h, const std::string& key, const catalog*, health_rules& out) {
  out.gpus = static_cast<int>(h.get_int(key, 1, 1 << 16));
}
void read_gpu_model(const json_reader& h, const std::string& key, const catalog*,
                    health_rules& out) {
  out.gpu_model = h.get_string(key);
}
void read_pcie(const json_reader& h, const std::string& key, const catalog*, health_rules& out) {
  const json_reader p = h.member(key);
  p.expect_object({"gen", "width"});
  if (const auto g = p.find_int("gen", 1, 9)) out.pcie_gen = static_cast<int>(*g);
  if (const auto w = p.find_int("width", 1, 32)) out.pcie_width = static_cast<int>(*w);
}
void read_ecc(const json_reader& h, const std::string& key, const catalog*, health_rules& out) {
  if (const auto ecc = h.find_bool(key)) out.ecc = *ecc;
}
void read_nvlink_links(const json_reader& h, const std::string& key, const catalog*,
                       health_rules& out) {
  const auto n = h.get_int(key, 0, 64);
  // 0: not checked (one GPU of a board, whose links may be absent by design).
  out.nvlink_links = n == 0 ? std::nullopt : std::optional<int>(static_cast<int>(n));
}
void read_peer_access(const json_reader& h, const std::string& key, const catalog*,
                      health_rules& out) {
  const std::string p = h.get_string(key);
  if (p != "nvlink" && p != "none") h.fail(key, "\"nvlink\" or \"none\"");
  out.peer_access_over_nvlink = p == "nvlink";
}
// {"expected": figure, "source": text, "floor": fraction}: a figure and the share of it to hold.
std::pair<expectation, double> read_expected_with_floor(const json_reader& h,
                                                        const std::string& key,
                                                        const catalog* figures, double largest,
                                                        double default_floor) {
  const json_reader rule = h.member(key);
  rule.expect_object({"expected", "source", "floor"});
  return {read_expectation(rule, "expected", figures, largest),
          rule.find_number("floor", 0.01, 1.0).value_or(default_floor)};
}
void read_power_limit(const json_reader& h, const std::string& key, const catalog* figures,
                      health_rules& out) {
  std::tie(out.power_limit_W, out.power_limit_floor) =
      read_expected_with_floor(h, key, figures, 1e5, 0.95);
}
void read_throttle_reasons(const json_reader& h, const std::string& key, const catalog*,
                           health_rules& out) {
  out.throttle_reasons_fail.clear();
  for (const json_reader& r : h.elements(key)) {
    if (!r.node().is_string()) r.fail_here("a throttle reason name");
    out.throttle_reasons_fail.push_back(r.node().get<std::string>());
  }
}
void read_burn(const json_reader& h, const std::string& key, const catalog*, health_rules& out) {
  const json_reader b = h.member(key);
  b.expect_object({"max_drop_pct", "sustain_fraction", "sm_clock_fraction"});
  if (const auto d = b.find_number("max_drop_pct", 0, 100)) out.burn_max_drop_pct = *d;
  if (const auto s = b.find_number("sustain_fraction", 0.01, 1.0)) out.burn_sustain_fraction = *s;
  if (const auto c = b.find_number("sm_clock_fraction", 0.01, 1.0)) out.sm_clock_fraction = *c;
}
void read_cpu_cores(const json_reader& h, const std::string& key, const catalog* figures,
                    health_rules& out) {
  const json_reader c = h.member(key);
  c.expect_object({"expected", "source"});
  out.cpu_cores = read_expectation(c, "expected", figures, 1e5);
}
void read_memory(const json_reader& h, const std::string& key, const catalog* figures,
                 health_rules& out) {
  std::tie(out.memory_GB, out.memory_floor) = read_expected_with_floor(h, key, figures, 1e7, 0.9);
}
void read_network_ports(const json_reader& h, const std::string& key, const catalog*,
                        health_rules& out) {
  const json_reader p = h.member(key);
  p.expect_object({"count", "rate_Gbps", "source"});
  out.network_ports = static_cast<int>(p.get_int("count", 1, 64));
  out.network_port_Gbps = p.find_number("rate_Gbps", 0, 1e5).value_or(0);
}

// ---- the table --------------------------------------------------------------------------------

using machine_check = void (*)(const health_rules&, const results_document&, rule_outcomes&);
using gpu_check = void (*)(const health_rules&, const results_index&, const gpu_view&,
                           std::vector<rule_outcome>&);

// One row per key of a spec's "health": how it is read, and what it checks of the machine before
// the GPUs, of each GPU, and of the machine after them (the order of the rules in a validation).
// The keys a spec may use are this table's. A new health rule is one row.
struct health_rule {
  std::string_view key;
  void (*read)(const json_reader& health, const std::string& key, const catalog* figures,
               health_rules& out);
  machine_check before = nullptr;
  gpu_check each_gpu = nullptr;
  machine_check after = nullptr;
};

void check_pcie_rule(const health_rules& h, const results_index& index, const gpu_view& g,
                     std::vector<rule_outcome>& out) {
  if (h.pcie_gen) check_pcie(h, index, g, out);
}
void check_ecc_rule(const health_rules& h, const results_index& /*index*/, const gpu_view& g,
                    std::vector<rule_outcome>& out) {
  if (h.ecc) check_ecc(g, out);
}

constexpr health_rule health_table[] = {
    {"gpus", read_gpus, check_gpu_count},
    {"gpu_model", read_gpu_model, check_no_gpu_model, check_gpu_model},
    {"pcie", read_pcie, nullptr, check_pcie_rule},
    {"ecc", read_ecc, nullptr, check_ecc_rule},
    {"nvlink_links", read_nvlink_links, nullptr, check_nvlink},
    {"peer_access", read_peer_access, nullptr, nullptr, check_peer_access_rule},
    {"power_limit_W", read_power_limit, nullptr, check_power_limit},
    {"throttle_reasons_fail", read_throttle_reasons},  // checked with "burn", under the load
    {"burn", read_burn, nullptr, check_burn},
    {"cpu_cores", read_cpu_cores, nullptr, nullptr, check_cpu_cores},
    {"memory_GB", read_memory, nullptr, nullptr, check_host_memory},
    {"network_ports", read_network_ports, nullptr, nullptr, check_network_ports},
    {"siblings", read_siblings, nullptr, nullptr, check_siblings},
};

}  // namespace

void read_health(const json_reader& h, const model::hardware_profile* figures, health_rules& out) {
  std::vector<std::string_view> keys;
  for (const health_rule& rule : health_table) keys.push_back(rule.key);
  h.expect_object(keys);
  for (const health_rule& rule : health_table) {
    const std::string key(rule.key);
    if (h.has(key)) rule.read(h, key, figures, out);
  }
}

void check_health(const health_rules& h, const results_document& doc, const results_index& index,
                  rule_outcomes& out) {
  for (const health_rule& rule : health_table) {
    if (rule.before) rule.before(h, doc, out);
  }
  const std::vector<gpu_view> gpus = gpus_of(doc);
  outcomes_in_order(
      gpus.size(),
      [&](std::size_t i, std::vector<rule_outcome>& part) {
        const std::size_t first = part.size();
        for (const health_rule& rule : health_table) {
          if (rule.each_gpu) rule.each_gpu(h, index, gpus[i], part);
        }
        for (std::size_t j = first; j < part.size(); ++j) name_gpu(part[j], gpus[i]);
      },
      out);
  for (const health_rule& rule : health_table) {
    if (rule.after) rule.after(h, doc, out);
  }
}

}  // namespace gpubench::acceptance::detail
