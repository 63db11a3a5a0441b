// gpubench compare: several machines (measured results and/or catalog systems) side by side —
// every figure with its ratio to the first machine, predicted samples/s per workload, $/hour,
// $ per million samples, time per epoch, and the best choice per workload.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/serving.hpp"

namespace gpubench::reports {

// A training budget, as --tokens, --samples or --epochs gives it: "[WORKLOAD=]N", for one
// workload or, without WORKLOAD, for every workload of the comparison it can apply to.
struct training_budget {
  std::string unit;      // tokens (sequence workloads only), samples or epochs
  std::string workload;  // empty: every workload
  double amount = 0;
  std::string given;  // as typed: "--tokens llama3-8b=1e12"
};
inline constexpr std::string_view budget_units[] = {"tokens", "samples", "epochs"};

// Reads "[WORKLOAD=]N", N a positive number, for the flag of `unit` (one of budget_units).
// Throws input_error naming the flag.
[[nodiscard]] training_budget parse_budget(std::string_view unit, const std::string& text);

// The rental question: how many nodes of each, what they cost, and what a training budget takes.
struct compare_options {
  std::optional<int> nodes;           // per machine
  std::optional<int> gpus;            // per node
  std::vector<std::string> settings;  // KEY=VALUE for every machine, MACHINE:KEY=VALUE for one
  // At most one without a workload; at most one per workload, which it takes over that one.
  std::vector<training_budget> budgets;
  std::optional<double> dataset_samples;         // an epoch's samples (else the workload's dataset)
  std::optional<model::serving_question> serve;  // compare serving instead of training
};

struct compared_machine {
  std::string spec;  // as given: catalog:NAME or a file
  std::string name;
  model::hardware_profile hw;
  std::optional<double> usd_per_hour;  // per node, after --set
  std::optional<double> network_Gbps;  // between nodes, per node
  model::basis network_basis = model::basis::unknown;
};

struct compared_cell {
  std::optional<model::sizing> sizing;
  std::string error;
  std::optional<double> usd_per_million_samples;
  std::optional<double> usd_per_million_tokens;  // sequence workloads
  std::optional<double> epoch_hours;
  std::optional<double> budget_hours;  // the --tokens or --epochs budget
  std::optional<double> budget_usd;
};

struct compared_workload {
  std::string name;
  std::string unit;                         // images/s, sequences/s, samples/s
  std::optional<double> samples_per_epoch;  // dataset bytes / stored bytes per sample
  std::vector<compared_cell> cells;         // one per machine
  std::optional<std::size_t> fastest;
  std::optional<std::size_t> cheapest;  // lowest $ per million samples
  // Machines within tie_share of the fastest rate or the lowest cost: a tie when two or more.
  std::vector<std::size_t> fastest_ties;
  std::vector<std::size_t> cheapest_ties;
  std::optional<training_budget> budget;  // the one that applies to this workload
  std::optional<double> budget_samples;   // what the budget asks of this workload
  std::string budget_note;                // why there is none, when a budget was given
};

// One model served on each machine: its best layout within the targets (size --serve --search
// on all of the machine's GPUs) and what a million output tokens cost there.
struct compared_serving_cell {
  std::optional<model::serving_layout> best;  // none: no layout fits or meets the targets
  std::string error;                          // why there is none
  int gpus = 0;
  std::optional<double> usd_per_million_output_tokens;
};
struct compared_serving {
  std::string name;
  std::vector<compared_serving_cell> cells;  // one per machine
  std::optional<std::size_t> fastest;        // the most output tokens/s
  std::optional<std::size_t> cheapest;       // the lowest $ per million output tokens
  std::vector<std::size_t> fastest_ties;
  std::vector<std::size_t> cheapest_ties;
};

// Closer than this share to the best is a tie: the model's own error is larger.
inline constexpr double tie_share = 0.02;

struct comparison {
  compare_options options;
  std::vector<compared_machine> machines;
  std::vector<std::string> figure_keys;  // every figure any machine has
  std::vector<compared_workload> workloads;
  std::vector<compared_serving> serving;  // with compare_options::serve, in place of workloads
};

// Throws input_error for a machine or workload that cannot be read, and for a budget that names
// no workload of the comparison, or tokens of a workload that does not count tokens.
[[nodiscard]] comparison compare_machines(const std::vector<std::string>& specs,
                                          std::vector<std::string> workloads,
                                          const compare_options& options = {});
[[nodiscard]] json to_json(const comparison& c);
[[nodiscard]] std::string to_text(const comparison& c);
[[nodiscard]] std::string to_html(const comparison& c);

}  // namespace gpubench::reports
