// Acceptance checks (`gpubench validate`): a results file against the spec of its SKU
// (configs/specs/*.json, schema gpubench.spec/1), DCGM-style: measured figures against a floor
// that is a fraction of what a healthy unit measures, and health rules (PCIe link under load,
// ECC and row remapping, NVLink links, peer access, power limit, throttling, clocks and drop
// during the sustained load). Optionally against a fleet baseline, SuperBench-style: the median of
// many machines' results, with a tolerance. docs/validate.md describes every rule.
#pragma once

#include <array>

#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/core/chunked_vector.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/vocabulary/query.hpp"
#include "gpubench/vocabulary/verdicts.hpp"

namespace gpubench::acceptance {

inline constexpr const char* spec_schema = "gpubench.spec/1";
inline constexpr const char* validation_schema = "gpubench.validation/1";

// A rule's outcome. A node's or a fleet's verdict is the worst verdict_of its rules: missing
// fails (an unmeasured figure cannot be accepted), not_applicable counts for nothing.
enum class rule_status { pass, fail, warn, missing, not_applicable };
[[nodiscard]] std::string_view to_string(rule_status status);
[[nodiscard]] vocabulary::verdict verdict_of(rule_status status);

// An expected figure and where it came from. `advisory`: it rests on an assumed catalog figure,
// so falling below its floor warns instead of failing.
struct expectation {
  double value = 0;
  std::string source;
  bool advisory = false;
};

// A measured figure against a floor: the best value of the measurement's metric over the results
// it selects (a benchmark, the values its axes must have), per GPU, per GPU pair or for the whole
// machine.
struct figure_rule {
  std::string name;  // "gemm bf16"
  vocabulary::query measured;
  std::string per = "gpu";  // gpu | pair | machine
  expectation expected;
  double floor = 0.9;        // fraction of expected
  int min_gpus = 1;          // the rule applies where the run had at least this many GPUs
  std::optional<int> ranks;  // only results over this many ranks (collectives)
};

// Thresholds (docs/validate.md, "Fleets"): a figure stands out from the median of the same
// figure over a fleet's GPUs, or a node's, when it is further from it than both min_deviation
// and mad_multiple robust standard deviations (1.4826 x MAD).
struct outlier_settings {
  double min_deviation = 0.05;
  double mad_multiple = 4;
  std::size_t min_members = 3;  // fewer measurements of a figure: no median to hold it to
};

// Each GPU of a node held to its siblings (the node's other GPUs) with the fleet's statistic:
// one figure that stands out on the worse side gives `worse` (fail, or warn), on the better side
// a warning.
struct sibling_rule {
  outlier_settings settings;  // min_members: the GPUs a node needs for the rule to apply
  rule_status worse = rule_status::fail;
};

struct health_rules {
  std::optional<int> gpus;  // GPUs every node must have
  std::string gpu_model;    // catalog GPU entry every GPU must be
  std::optional<int> pcie_gen;
  std::optional<int> pcie_width;
  bool ecc = false;  // ECC on; no uncorrected errors, pending or failed remaps
  std::optional<int> nvlink_links;
  bool peer_access_over_nvlink = false;
  std::optional<expectation> power_limit_W;
  double power_limit_floor = 0.95;
  std::vector<std::string> throttle_reasons_fail;
  std::optional<double> burn_max_drop_pct;
  std::optional<double> burn_sustain_fraction;  // of the same GPU's gemm rate, same dtype/shape
  std::optional<double> sm_clock_fraction;      // highest SM clock under load / NVML's maximum
  std::optional<expectation> cpu_cores;
  std::optional<expectation> memory_GB;
  double memory_floor = 0.9;
  // InfiniBand/RoCE ports every node must have up (ACTIVE) at this rate or more.
  std::optional<int> network_ports;
  double network_port_Gbps = 0;
  std::optional<sibling_rule> siblings;
};

struct spec {
  std::string name;
  std::string description;
  std::string file;
  std::string extends;  // the spec whose rules this one starts from
  std::vector<figure_rule> figures;
  health_rules health;
};

// NAME (configs/specs/NAME.json) or a file. Throws input_error naming the file, the JSON path
// and what was expected.
[[nodiscard]] spec load_spec(const std::string& name_or_file);
[[nodiscard]] spec parse_spec(const json& document, const std::string& file);
[[nodiscard]] std::vector<std::string> spec_names();
// The spec of the GPUs in a results file (by the catalog entry their name matches), or nullopt
// with the reason in `why_not`.
[[nodiscard]] std::optional<std::string> spec_for(const results_document& doc,
                                                  std::string& why_not);

struct rule_outcome {
  std::string rule;
  std::string subject;  // "GPU 0", "GPUs 0>1", "machine", "node-a GPU 3"
  rule_status status = rule_status::pass;
  std::string measured;  // as text, with its unit
  std::string expected;
  std::string floor;
  std::optional<double> measured_value;
  std::optional<double> expected_value;
  std::optional<double> floor_value;
  std::string unit;
  std::string detail;  // why it failed, or where the figures come from
  // The GPU a per-GPU rule judged, and its PCI bus id (system.gpus[].pci_bus_id) where known.
  std::optional<int> gpu;
  std::string pci_bus_id;
};

// A validation's outcomes, in the order the rules made them: kept as the parts each rule built
// on its threads (core/chunked_vector.hpp).
using rule_outcomes = chunked_vector<rule_outcome>;

// The subject with its GPU's bus id: "GPU 3 (0000:5d:00.0)", "node-b GPU 3 (0000:5d:00.0)".
[[nodiscard]] std::string named_subject(const rule_outcome& o);
// "gemm bf16 GPU 1 (0000:19:00.0): FAIL, 700 TFLOP/s, floor 716 TFLOP/s (88% of expected, ...)"
[[nodiscard]] std::string outcome_text(const rule_outcome& o);

struct validation {
  std::string results_file;
  std::string spec_name;  // empty when only a baseline was checked
  std::string spec_file;
  std::vector<std::string> baseline_files;
  rule_outcomes rules;

  // How many rules have each status, counted in one pass: a fleet's validation holds a million,
  // and each pass over them reads 400 MB.
  struct status_counts {
    std::array<std::size_t, 5> of{};  // by rule_status
    [[nodiscard]] std::size_t operator[](rule_status s) const {
      return of[static_cast<std::size_t>(s)];
    }
  };
  [[nodiscard]] status_counts counts() const;
  // fail: no rule applied, or one failed or is missing a measurement; warn: one warned.
  [[nodiscard]] vocabulary::verdict result() const { return result_of(counts()); }
  [[nodiscard]] vocabulary::verdict result_of(const status_counts& counted) const;
  // Exit 0: the result is pass or warn.
  [[nodiscard]] bool passed() const;
  [[nodiscard]] std::size_t count(rule_status status) const { return counts()[status]; }
  // One line, the result first, every failure and warning named (the first few):
  // "PASS: 42 rules against spec h100-sxm5-80gb", "WARN: ...; 1 warning: gemm fp8 GPU 3 ...".
  [[nodiscard]] std::string verdict() const { return verdict_of(counts()); }
  [[nodiscard]] std::string verdict_of(const status_counts& counted) const;
};

[[nodiscard]] validation validate(const results_document& doc, const std::string& file,
                                  const spec& s);

// Fleet baseline: the median of every figure over the baseline files, keyed by benchmark, axes
// and metric. A figure more than `tolerance_pct` worse than its baseline fails.
struct baseline {
  std::vector<std::string> files;
  std::map<std::string, double> median;  // key -> median value
  std::map<std::string, std::size_t> machines;
};
[[nodiscard]] baseline make_baseline(const std::vector<std::string>& files);
void check_against_baseline(validation& v, const results_document& doc, const baseline& base,
                            double tolerance_pct);

[[nodiscard]] json to_json(const validation& v);
// What json_text(to_json(v), indent) gives, written an outcome at a time (write_json_text): a
// fleet's validation of 100,000 GPUs has 1.3 million outcomes.
void write_json(std::ostream& out, const validation& v, int indent);
// The rules as a table, every rule that did not pass in full, and the verdict. Past max_text_rows
// rules (a fleet's merged file) the table counts each rule's results instead, with its lowest and
// highest figure and where they were measured.
inline constexpr std::size_t max_text_rows = 2000;
[[nodiscard]] std::string to_text(const validation& v);
// Whether the text, and the reports' tables of passing rules, count each rule's results.
[[nodiscard]] inline bool counted_per_rule(const validation& v) {
  return v.rules.size() > max_text_rows;
}

// One rule over every subject it judged: how many had each result, and the outcomes with the
// lowest and highest measured value (null where none was measured). Points into the rules.
struct rule_tally {
  std::string rule;
  std::size_t subjects = 0;
  std::map<rule_status, std::size_t> count;
  const rule_outcome* lowest = nullptr;
  const rule_outcome* highest = nullptr;
  [[nodiscard]] std::size_t of(rule_status status) const;
};
// Per rule, in the order rules first appear.
[[nodiscard]] std::vector<rule_tally> tally_rules(const rule_outcomes& rules);
// A tally as a table's row (validate's text, the reports): rule, subjects, the count of each
// result, and the lowest and highest figure with where each was measured; and the header.
[[nodiscard]] const std::vector<std::string>& tally_header();
[[nodiscard]] std::vector<std::string> tally_cells(const rule_tally& t);

}  // namespace gpubench::acceptance
