// What the rule files of acceptance/ share: the GPUs of a results file, reading results back,
// and one outcome per rule checked. Internal to acceptance/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/model/hardware.hpp"

namespace gpubench::acceptance::detail {

// One GPU of the results, with the node it is in (empty in a single-node run).
struct gpu_view {
  gpu_view(std::string node, const gpu_info& g)
      : host(std::move(node)),
        gpu(&g),
        name((host.empty() ? "" : host + " ") + "GPU " + std::to_string(g.index)) {}
  std::string host;
  const gpu_info* gpu = nullptr;
  // "GPU 3", "node-b GPU 3": made once, as every rule checked on the GPU names it.
  [[nodiscard]] const std::string& subject() const { return name; }

 private:
  std::string name;
};
// The machines of a results file: every node of a multi-node run, else the one machine, which
// has no host (rules name it "machine"). The one place that choice is made for a file's machines;
// host_of makes it for a result.
struct machine_view {
  const std::string* host = nullptr;
  const system_info* system = nullptr;
};
[[nodiscard]] std::vector<machine_view> machines_of(const results_document& doc);
[[nodiscard]] std::vector<gpu_view> gpus_of(const results_document& doc);
// gpus_of(doc).front()'s GPU without the others' views; null where there is none.
[[nodiscard]] const gpu_info* first_gpu(const results_document& doc);
// The node a result was measured on, where the file holds several; else empty.
[[nodiscard]] std::string host_of(const result& r, const results_document& doc);
// Why a benchmark has no usable result: its skip reason or its error, if the file says.
[[nodiscard]] std::string why_not_measured(const results_document& doc, const std::string& id);

// A results file's results grouped once by node and by GPU, so that a rule checked on every GPU
// reads that GPU's few results instead of the whole file: validate on 100,000 GPUs is linear.
class results_index {
 public:
  explicit results_index(const results_document& doc);
  // The results with a "gpu" axis naming this GPU, measured on its node; in file order.
  [[nodiscard]] const std::vector<const result*>& on_gpu(const gpu_view& g) const;
  // The results measured on this node (every result, where the file holds one node).
  [[nodiscard]] const std::vector<const result*>& on_host(const std::string& host) const;
  // The results of benchmark `id`, or of a family ("pcie.*", as query::matches_id reads it); in
  // file order.
  [[nodiscard]] std::vector<const result*> of_benchmark(const std::string& id) const;
  // why_not_measured(doc, id), each benchmark's answer found in one pass over the file.
  [[nodiscard]] std::string why_not_measured(const std::string& id) const;
  // The catalog entry a GPU of the file is (model::catalog_gpu_for_device), looked up once per
  // device name and memory size: the lookup resolves the catalog folder on disk each time, 7%
  // of validating 100,000 GPUs.
  [[nodiscard]] const std::optional<std::string>& catalog_gpu(const gpu_info& gpu) const;
  // The objects of list `list` in a result's info by their integer member `key`, the first of
  // each: a burn's per-GPU entries by "gpu". Made once per result and list, when first asked:
  // each of a node's GPUs looks up its own, and a lookup by key reads every member of an object.
  [[nodiscard]] const std::map<std::int64_t, json_view>& entries_by(const result& r,
                                                                    const std::string& list,
                                                                    const std::string& key) const;

 private:
  // Hashed: every GPU's rules look their GPU and node up, 100,000 of each in a fleet's file.
  struct gpu_key_hash {
    std::size_t operator()(const std::pair<std::string, int>& k) const {
      return std::hash<std::string>()(k.first) * 31 + std::hash<int>()(k.second);
    }
  };
  std::unordered_map<std::pair<std::string, int>, std::vector<const result*>, gpu_key_hash> by_gpu_;
  std::unordered_map<std::string, std::vector<const result*>> by_host_;
  std::map<std::string, std::vector<const result*>, std::less<>> by_id_;
  std::map<std::string, const result*> not_measured_;  // each id's first skipped or failed
  // Rules check GPUs on every core (outcomes_in_order): the caches are read under a shared
  // lock and filled under an exclusive one (one lock for every lookup serialised the cores).
  mutable std::shared_mutex catalog_lock_;
  mutable std::map<std::pair<std::string, std::uint64_t>, std::optional<std::string>> catalog_gpus_;
  mutable std::shared_mutex entries_lock_;
  mutable std::map<std::tuple<const result*, std::string, std::string>,
                   std::map<std::int64_t, json_view>>
      entries_;
};

// Names the GPU a rule judged on an outcome about it (its subject is the GPU's): its index and
// bus id, while the outcome is still in the cache, rather than in a pass over a million later.
void name_gpu(rule_outcome& o, const gpu_view& g);

// Appends the outcomes of n checks that read the results and nothing else, made on every core,
// in the order of i: check(i, part) appends item i's to `part`. A fleet's 100,000 GPUs are
// checked on all the cores the machine gives.
void outcomes_in_order(
    std::size_t n, const std::function<void(std::size_t i, std::vector<rule_outcome>& part)>& check,
    rule_outcomes& out);

[[nodiscard]] std::string with_unit(double value, const std::string& unit);

// More than this many times better than expected is not a measurement to accept.
inline constexpr double implausible_factor = 4;

// A measured figure against `floor` x the expected value, or where lower is better against the
// ceiling expected / `floor`: pass, fail, or warn when the expectation is advisory; a figure
// more than implausible_factor times better than expected (or not finite) fails.
[[nodiscard]] rule_outcome against_floor(std::string rule, std::string subject, double measured,
                                         const expectation& e, double floor,
                                         const std::string& unit,
                                         better direction = better::higher);
[[nodiscard]] rule_outcome simple(std::string rule, std::string subject, rule_status status,
                                  std::string measured, std::string expected,
                                  std::string detail = "");

// A spec's "expected": a number (with "source" beside it) or {"catalog": [KEY, ...]}, the
// product of figures of the spec's catalog entry (peak x efficiency).
[[nodiscard]] expectation read_expectation(const json_reader& owner, const std::string& key,
                                           const model::hardware_profile* catalog, double max);

// figure_rules.cpp
[[nodiscard]] figure_rule read_figure_rule(const json_reader& r,
                                           const model::hardware_profile* catalog);
void check_figure(const figure_rule& rule, const results_document& doc, const results_index& index,
                  std::size_t gpu_count, rule_outcomes& out);

// health_rules.cpp: the health keys of a spec, each read and checked by its own row of a table.
void read_health(const json_reader& h, const model::hardware_profile* catalog, health_rules& out);
void check_health(const health_rules& h, const results_document& doc, const results_index& index,
                  rule_outcomes& out);

// sibling_rule.cpp: each GPU of a node held to the node's other GPUs (health key "siblings").
void read_siblings(const json_reader& h, const std::string& key,
                   const model::hardware_profile* catalog, health_rules& out);
void check_siblings(const health_rules& h, const results_document& doc, rule_outcomes& out);

}  // namespace gpubench::acceptance::detail
