// gpubench fleet: many servers' results at once. Every node is validated against its spec, then
// every figure of every GPU (and every node-level figure) is held against the fleet's median of
// the same figure, so a GPU 12% slower than its siblings stands out even above the SKU's floor.
// docs/validate.md, "Fleets".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpubench/acceptance/validate.hpp"

namespace gpubench::acceptance {

// One node: its verdict (the worst of its spec's rules and of its figures that stand out from
// the fleet), and the worst outcome per rule family ("gemm", "pcie", "ecc"...).
struct fleet_node {
  std::string host;
  std::string file;
  std::string spec_name;
  std::string finished;  // when its run ended (the results' meta.finished, ISO-8601 UTC)
  vocabulary::verdict verdict = vocabulary::verdict::pass;
  std::map<std::string, rule_status> families;
  std::size_t passed = 0;
  std::vector<rule_outcome> failures;      // the rules it failed
  std::vector<rule_outcome> warnings;      // the rules that warned
  std::vector<std::string> missing_rules;  // rules without the measurement they need, as text
  // What fails the node before any rule: its file is not a readable results file, or its host
  // name is another file's too.
  std::vector<std::string> problems;
  std::size_t outliers = 0;  // its figures that stand out from the fleet
};

// A node's failures and warnings on one line ("; " between them), each in full or by rule and
// subject only, then how many rules lack a measurement and how many figures stand out.
[[nodiscard]] std::string failures_line(const fleet_node& n, bool names_only);

// One figure far from the fleet's median of it.
struct fleet_outlier {
  std::string host;
  std::optional<int> gpu;  // absent for a node-level figure (host memory, NVMe, CPU)
  std::string uuid;
  std::string pci_bus_id;
  std::string figure;  // "gemm dtype=bf16 shape=8192x8192x8192 TFLOPs"
  std::string unit;
  double value = 0;
  double fleet_median = 0;
  double deviation = 0;  // (value - median) / median
  double threshold = 0;  // the |deviation| from which this figure stands out
  std::size_t members = 0;
  bool worse = false;  // in the figure's worse direction (lower rate, longer time)

  // fail when worse; warn when better (a different clock or power setting is worth a look).
  [[nodiscard]] vocabulary::verdict verdict() const;
};

// The fleet's thresholds: the siblings rule's (validate.hpp), over the fleet.
using fleet_settings = outlier_settings;

struct fleet_report {
  std::vector<fleet_node> nodes;
  std::vector<std::string> families;    // the columns, in first-seen order
  std::vector<fleet_outlier> outliers;  // furthest first
  std::size_t figures_compared = 0;     // figures with min_members or more measurements
  std::vector<std::string> spec_notes;  // nodes no spec applied to, and why
  fleet_settings settings;

  // The worst of the nodes' verdicts (each the worst of its rules and outliers); fail without
  // a node.
  [[nodiscard]] vocabulary::verdict result() const;
  // Exit 0: the result is pass or warn.
  [[nodiscard]] bool passed() const;
  [[nodiscard]] std::size_t count(vocabulary::verdict v) const;  // nodes with this verdict
};

// One results file of the fleet, read; or a file of a fleet folder that is not a readable
// results file, and why (`unusable`): it fails the fleet as a node would, named, since an
// acceptance check that passes over a broken file hides exactly the broken node.
struct fleet_input {
  std::string file;
  results_document doc;
  std::string unusable;
};

// Results files, and folders of them (every *.json, sorted), each read once. A folder's file
// that is not a readable gpubench.results/1 document comes back with `unusable` set. Throws
// input_error for a path that is neither, a folder without one results file, or a named file
// that does not parse.
[[nodiscard]] std::vector<fleet_input> read_fleet(const std::vector<std::string>& paths);

// `spec`: a spec name or file for every node; else each node's own (spec_for).
[[nodiscard]] fleet_report check_fleet(const std::vector<fleet_input>& inputs,
                                       const std::optional<std::string>& spec,
                                       const fleet_settings& settings = {});

// "FAIL: 16 nodes, 13 pass, 1 warn, 2 fail; 6 figure(s) stand out (6 worse) of 42 compared ..."
[[nodiscard]] std::string summary_line(const fleet_report& f);
[[nodiscard]] json to_json(const fleet_report& f);
[[nodiscard]] std::string to_text(const fleet_report& f);
// One row per node and one per outlier, for a spreadsheet or a vendor ticket.
[[nodiscard]] std::string to_csv(const fleet_report& f);

}  // namespace gpubench::acceptance
