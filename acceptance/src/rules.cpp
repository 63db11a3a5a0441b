#include "rules.hpp"

#include <algorithm>
#include <cmath>

#include "gpubench/core/format.hpp"
#include "gpubench/core/parallel.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/units.hpp"

namespace gpubench::acceptance::detail {

std::vector<machine_view> machines_of(const results_document& doc) {
  std::vector<machine_view> out;
  if (doc.nodes.size() > 1) {
    out.reserve(doc.nodes.size());
    for (const node_entry& node : doc.nodes) out.push_back({&node.host, &node.system});
  } else {
    out.push_back({nullptr, &doc.system});
  }
  return out;
}

std::vector<gpu_view> gpus_of(const results_document& doc) {
  std::vector<gpu_view> out;
  for (const machine_view& m : machines_of(doc)) {
    for (const gpu_info& g : m.system->gpus) out.emplace_back(m.host ? *m.host : "", g);
  }
  return out;
}

const gpu_info* first_gpu(const results_document& doc) {
  for (const machine_view& m : machines_of(doc)) {
    if (!m.system->gpus.empty()) return &m.system->gpus.front();
  }
  return nullptr;
}

std::string host_of(const result& r, const results_document& doc) {
  return doc.nodes.size() > 1 ? r.host : "";
}

std::string with_unit(double value, const std::string& unit) {
  return format_number(value) + (unit.empty() ? "" : " " + unit);
}

rule_outcome against_floor(std::string rule, std::string subject, double measured,
                           const expectation& e, double floor, const std::string& unit,
                           better direction) {
  rule_outcome o;
  o.rule = std::move(rule);
  o.subject = std::move(subject);
  o.unit = unit;
  o.measured_value = measured;
  o.expected_value = e.value;
  o.measured = with_unit(measured, unit);
  o.expected = with_unit(e.value, unit);
  // Where lower is better (a latency) the floor bounds the rate the figure is the inverse of: a
  // floor of 0.9 admits expected / 0.9, the latency of a rate at 90% of expected.
  const bool lower = direction == better::lower;
  const double limit = lower ? e.value / floor : e.value * floor;
  o.floor_value = limit;
  o.floor =
      lower ? "<= " + with_unit(limit, unit) + " (expected / " + format_number(floor * 100) + "%)"
            : with_unit(limit, unit) + " (" + format_number(floor * 100) + "%)";
  const bool beyond = lower ? measured > limit : measured < limit;
  o.status = !beyond ? rule_status::pass : e.advisory ? rule_status::warn : rule_status::fail;
  o.detail = e.source;
  if (beyond) {
    o.detail = format_number(100 * measured / e.value) + "% of expected, " +
               (lower ? "over the ceiling; " : "under the floor; ") + o.detail;
  }
  // Far better than any healthy unit measures is no pass: a broken timer, a case that did no
  // work, or a results file edited by hand (docs/validate.md).
  const double ratio = lower ? e.value / measured : measured / e.value;
  if (!std::isfinite(measured) || !std::isfinite(ratio) || ratio > implausible_factor) {
    o.status = rule_status::fail;
    o.detail = "implausible: " + format_number(100 * ratio) + "% of expected, beyond what " +
               "a healthy unit measures (more than " + format_number(implausible_factor) +
               "x); a broken timer or an edited results file? " + e.source;
  }
  return o;
}

rule_outcome simple(std::string rule, std::string subject, rule_status status, std::string measured,
                    std::string expected, std::string detail) {
  rule_outcome o;
  o.rule = std::move(rule);
  o.subject = std::move(subject);
  o.status = status;
  o.measured = std::move(measured);
  o.expected = std::move(expected);
  o.detail = std::move(detail);
  return o;
}

namespace {

bool unusable(const result& r) {
  return r.status == result_status::skipped || r.status == result_status::failed;
}

// Why benchmark `id` has no usable result, given its first skipped or failed one (or none).
std::string why_not(const result* first_unusable, const std::string& id) {
  if (first_unusable == nullptr) {
    return "not in the results file (run it: gpubench run --only " + id + ")";
  }
  const result& r = *first_unusable;
  return r.status == result_status::skipped ? "skipped: " + r.reason : "failed: " + r.error;
}

}  // namespace

// Why a benchmark has no usable result: its skip reason or its error, if the file says.
std::string why_not_measured(const results_document& doc, const std::string& id) {
  for (const result& r : doc.results) {
    if (r.id == id && unusable(r)) return why_not(&r, id);
  }
  return why_not(nullptr, id);
}

results_index::results_index(const results_document& doc) {
  for (const result& r : doc.results) {
    const std::string host = host_of(r, doc);
    by_host_[host].push_back(&r);
    by_id_[r.id].push_back(&r);
    if (const auto gpu = axis_number(r.axes, "gpu")) {
      by_gpu_[{host, static_cast<int>(*gpu)}].push_back(&r);
    }
    if (unusable(r)) not_measured_.emplace(r.id, &r);
  }
}

const std::vector<const result*>& results_index::on_gpu(const gpu_view& g) const {
  static const std::vector<const result*> none;
  const auto found = by_gpu_.find({g.host, g.gpu->index});
  return found == by_gpu_.end() ? none : found->second;
}

const std::vector<const result*>& results_index::on_host(const std::string& host) const {
  static const std::vector<const result*> none;
  const auto found = by_host_.find(host);
  return found == by_host_.end() ? none : found->second;
}

const std::optional<std::string>& results_index::catalog_gpu(const gpu_info& gpu) const {
  auto key = std::make_pair(gpu.name, gpu.memory_bytes);
  {
    const std::shared_lock<std::shared_mutex> reading(catalog_lock_);
    if (const auto it = catalog_gpus_.find(key); it != catalog_gpus_.end()) return it->second;
  }
  const double memory_GiB = vocabulary::convert(
      static_cast<double>(gpu.memory_bytes), vocabulary::units::bytes, model::fig::gpu_memory.in);
  auto found = model::catalog_gpu_for_device(gpu.name, memory_GiB);
  const std::lock_guard<std::shared_mutex> writing(catalog_lock_);
  // Another core may have put it there meanwhile: the same answer, kept once.
  return catalog_gpus_.try_emplace(std::move(key), std::move(found)).first->second;
}

const std::map<std::int64_t, json_view>& results_index::entries_by(const result& r,
                                                                   const std::string& list,
                                                                   const std::string& key) const {
  auto which = std::make_tuple(&r, list, key);
  {
    const std::shared_lock<std::shared_mutex> reading(entries_lock_);
    if (const auto it = entries_.find(which); it != entries_.end()) return it->second;
  }
  std::map<std::int64_t, json_view> made;
  for (const json_view entry : r.info.view()[list].items()) {
    if (const auto id = entry[key].integer()) made.emplace(*id, entry);
  }
  const std::lock_guard<std::shared_mutex> writing(entries_lock_);
  // A map never moves its elements: the reference stays valid as other cores add theirs.
  return entries_.try_emplace(std::move(which), std::move(made)).first->second;
}

std::vector<const result*> results_index::of_benchmark(const std::string& id) const {
  if (!id.ends_with(".*")) {
    const auto found = by_id_.find(id);
    return found == by_id_.end() ? std::vector<const result*>() : found->second;
  }
  // A family: the ids that start with it sort together.
  const std::string_view family = std::string_view(id).substr(0, id.size() - 1);
  std::vector<const result*> out;
  for (auto it = by_id_.lower_bound(family); it != by_id_.end() && it->first.starts_with(family);
       ++it) {
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end());  // one vector's elements: address order is file order
  return out;
}

void name_gpu(rule_outcome& o, const gpu_view& g) {
  if (o.subject != g.subject()) return;
  o.gpu = g.gpu->index;
  o.pci_bus_id = g.gpu->pci_bus_id;
}

std::string results_index::why_not_measured(const std::string& id) const {
  const auto found = not_measured_.find(id);
  return why_not(found == not_measured_.end() ? nullptr : found->second, id);
}

void outcomes_in_order(
    std::size_t n, const std::function<void(std::size_t i, std::vector<rule_outcome>& part)>& check,
    rule_outcomes& out) {
  constexpr std::size_t grain = 512;
  std::vector<std::vector<rule_outcome>> parts((n + grain - 1) / grain);
  parallel_for(n, grain, [&](std::size_t begin, std::size_t end) {
    std::vector<rule_outcome>& part = parts[begin / grain];
    // As many for each item as the first gave: a part grown by doubling moves its outcomes
    // again at each step, into memory the kernel must first clear.
    check(begin, part);
    part.reserve(part.size() * (end - begin));
    for (std::size_t i = begin + 1; i < end; ++i) check(i, part);
  });
  // Kept where they were made: no outcome moves again.
  for (auto& part : parts) out.append(std::move(part));
}

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
    const model::figure* f = catalog->find_key(name);
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

}  // namespace gpubench::acceptance::detail
