#include "gpubench/reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "compare_parts.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/suggest.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {

namespace {

// --set: "KEY=VALUE" for every machine, "MACHINE:KEY=VALUE" for the one whose spec or name is
// MACHINE (keys hold no ':', so the last one before '=' ends the machine).
void apply_settings(std::vector<compared_machine>& machines,
                    const std::vector<std::string>& settings) {
  for (const std::string& setting : settings) {
    const auto equals = setting.find('=');
    const auto colon = setting.rfind(':', equals);
    if (equals == std::string::npos || colon == std::string::npos) {
      for (compared_machine& m : machines) model::apply_setting(m.hw, setting);
      continue;
    }
    const std::string target = setting.substr(0, colon);
    bool found = false;
    for (compared_machine& m : machines) {
      if (m.spec == target || m.name == target) {
        model::apply_setting(m.hw, setting.substr(colon + 1));
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> known;
      for (const compared_machine& m : machines) {
        known.push_back(m.spec);
        if (m.name != m.spec) known.push_back(m.name);
      }
      std::string what = "--set ";
      what.append(setting).append(": no machine '").append(target).append("' in the comparison");
      throw input_error(what + did_you_mean(target, known));
    }
  }
}

constexpr std::string_view tokens_unit = budget_units[0];
constexpr std::string_view samples_unit_name = budget_units[1];

// A workload as the comparison has it: as given on the command line (a name or a file), loaded.
struct named_workload {
  std::string given;
  model::workload w;
};

bool counts_tokens(const model::workload& w) {
  return w.sample_unit == "sequence";
}

// The budget that applies to each workload (nullptr: none), the budgets checked against the
// workloads first: one for every workload at most, one per workload at most (it takes over the
// one for every workload), each naming a workload of the comparison, and tokens only for a
// workload that counts them (a token budget is never turned into images).
std::vector<const training_budget*> assign_budgets(const std::vector<training_budget>& budgets,
                                                   const std::vector<named_workload>& workloads) {
  std::vector<std::string> names;
  for (const named_workload& nw : workloads) names.push_back(nw.given);
  const training_budget* for_all = nullptr;
  std::vector<const training_budget*> assigned(workloads.size(), nullptr);
  for (const training_budget& b : budgets) {
    if (b.workload.empty()) {
      if (for_all != nullptr) {
        throw input_error(for_all->given + " and " + b.given +
                          ": expected one budget for every workload (one workload's: --" + b.unit +
                          " WORKLOAD=N)");
      }
      for_all = &b;
      continue;
    }
    bool found = false;
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      const named_workload& nw = workloads[i];
      if (b.workload != nw.given && b.workload != nw.w.name) continue;
      found = true;
      if (assigned[i] != nullptr) {
        throw input_error(assigned[i]->given + " and " + b.given +
                          ": expected one budget per workload");
      }
      if (b.unit == tokens_unit && !counts_tokens(nw.w)) {
        throw input_error(b.given + ": expected a workload that counts tokens, but " + nw.w.name +
                          " counts " + nw.w.sample_unit + "s (its budget: --samples " + b.workload +
                          "=N or --epochs " + b.workload + "=N)");
      }
      assigned[i] = &b;
    }
    if (!found) {
      throw input_error(b.given + ": expected a workload of the comparison (" + join(names) + ")" +
                        did_you_mean(b.workload, names));
    }
  }
  if (for_all != nullptr && for_all->unit == tokens_unit &&
      std::none_of(workloads.begin(), workloads.end(),
                   [](const named_workload& nw) { return counts_tokens(nw.w); })) {
    throw input_error(for_all->given + ": expected a workload that counts tokens, but none of " +
                      join(names) + " does (a budget for them: --samples or --epochs)");
  }
  for (const training_budget*& b : assigned) {
    if (b == nullptr) b = for_all;
  }
  return assigned;
}

// The samples a budget asks of a workload on a machine's sizing; nullopt with the reason in
// `note` when it cannot say.
std::optional<double> budget_samples(const training_budget& b, const model::workload& w,
                                     const model::sizing& s, const compare_options& options,
                                     const std::optional<double>& samples_per_epoch,
                                     std::string& note) {
  if (b.unit == tokens_unit) {
    if (!counts_tokens(w)) {
      note = "no budget: " + b.given + " is for workloads that count tokens, " + w.name +
             " counts " + w.sample_unit + "s (its budget: --samples " + w.name + "=N or --epochs " +
             w.name + "=N)";
      return std::nullopt;
    }
    if (s.tokens_per_sample > 0) return b.amount / s.tokens_per_sample;
    note = b.given + ": " + w.name + " states no tokens per sequence";
    return std::nullopt;
  }
  if (b.unit == samples_unit_name) return b.amount;
  const std::optional<double> epoch =
      options.dataset_samples ? options.dataset_samples : samples_per_epoch;
  if (epoch) return b.amount * *epoch;
  note = b.given + ": " + w.name + " states no dataset size (--dataset-samples)";
  return std::nullopt;
}

}  // namespace

// The machines within tie_share of the best value (highest, or lowest when `lower`).
std::vector<std::size_t> ties(const std::vector<std::optional<double>>& values, bool lower) {
  std::optional<double> best;
  for (const auto& v : values) {
    if (v && (!best || (lower ? *v < *best : *v > *best))) best = v;
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; best && i < values.size(); ++i) {
    if (values[i] && std::abs(*values[i] - *best) <= tie_share * std::abs(*best)) out.push_back(i);
  }
  return out;
}

best_machines pick_best(const std::vector<std::optional<double>>& rates,
                        const std::vector<std::optional<double>>& costs) {
  best_machines best;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (rates[i] && (!best.fastest || *rates[i] > *rates[*best.fastest])) best.fastest = i;
    if (costs[i] && (!best.cheapest || *costs[i] < *costs[*best.cheapest])) best.cheapest = i;
  }
  best.fastest_ties = ties(rates, false);
  best.cheapest_ties = ties(costs, true);
  return best;
}

training_budget parse_budget(std::string_view unit, const std::string& text) {
  training_budget b;
  b.unit = std::string(unit);
  b.given = "--" + b.unit + " " + text;
  std::string number = text;
  if (const auto equals = text.find('='); equals != std::string::npos) {
    b.workload = text.substr(0, equals);
    number = text.substr(equals + 1);
  }
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(value) || value <= 0 ||
      (text.find('=') != std::string::npos && b.workload.empty())) {
    throw input_error(b.given + ": expected [WORKLOAD=]N, N a positive number (" + b.unit +
                      "), got '" + text + "'");
  }
  b.amount = value;
  return b;
}

comparison compare_machines(const std::vector<std::string>& specs,
                            std::vector<std::string> workloads, const compare_options& options) {
  if (specs.empty()) throw input_error("compare: expected at least one machine");
  comparison c;
  c.options = options;
  for (const auto& spec : specs) {
    compared_machine m;
    m.spec = spec;
    m.hw = model::load_hardware(spec);
    m.name = m.hw.name.empty() ? spec : m.hw.name;
    c.machines.push_back(std::move(m));
  }
  apply_settings(c.machines, options.settings);
  std::set<std::string> keys;
  for (compared_machine& m : c.machines) {
    m.usd_per_hour = m.hw.value(model::fig::price);
    const model::figure* network = m.hw.find(model::fig::network);
    m.network_Gbps = network ? std::optional<double>(network->value) : std::nullopt;
    m.network_basis = network ? network->from : model::basis::unknown;
    for (const auto& [key, fig] : m.hw.figures) keys.insert(key);
  }
  c.figure_keys.assign(keys.begin(), keys.end());
  if (options.serve) {
    c.serving = compare_serving(c.machines, workloads, options);
    return c;
  }
  if (workloads.empty()) workloads = model::default_workloads();
  const model::constants constants = model::load_constants();
  model::run_options run;
  run.nodes = options.nodes;
  run.gpus = options.gpus;
  std::vector<named_workload> loaded;
  for (const auto& name : workloads) loaded.push_back({name, model::load_workload(name)});
  const std::vector<const training_budget*> budgets = assign_budgets(options.budgets, loaded);
  for (std::size_t k = 0; k < loaded.size(); ++k) {
    const model::workload& w = loaded[k].w;
    compared_workload cw;
    cw.name = w.name;
    if (budgets[k] != nullptr && (budgets[k]->unit != tokens_unit || counts_tokens(w))) {
      cw.budget = *budgets[k];
    }
    if (w.data.dataset_bytes > 0 && w.data.bytes_per_sample_stored > 0) {
      cw.samples_per_epoch = w.data.dataset_bytes / w.data.bytes_per_sample_stored;
    }
    std::vector<std::optional<double>> rates;
    std::vector<std::optional<double>> costs;
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const compared_machine& m = c.machines[i];
      compared_cell cell;
      try {
        cell.sizing = model::predict(m.hw, w, constants, run);
      } catch (const input_error& e) {
        cell.error = e.what();
      }
      if (cell.sizing && cell.sizing->predicted_samples_per_s > 0) {
        const model::sizing& s = *cell.sizing;
        const double rate = s.predicted_samples_per_s;
        cw.unit = samples_unit(s);
        // A price is per node (machine) and hour; a job of several nodes pays for each.
        const std::optional<double> usd_per_hour =
            m.usd_per_hour ? std::optional<double>(*m.usd_per_hour * s.nodes) : std::nullopt;
        if (usd_per_hour) {
          cell.usd_per_million_samples = usd_per_million_samples(*m.usd_per_hour, s);
          if (s.sample_unit == "sequence" && s.tokens_per_sample > 0) {
            cell.usd_per_million_tokens = *cell.usd_per_million_samples / s.tokens_per_sample;
          }
        }
        if (cw.samples_per_epoch) cell.epoch_hours = *cw.samples_per_epoch / rate / 3600;
        std::optional<double> samples;
        if (budgets[k] != nullptr) {
          samples =
              budget_samples(*budgets[k], w, s, options, cw.samples_per_epoch, cw.budget_note);
        }
        if (samples) {
          cw.budget_samples = samples;
          cell.budget_hours = *samples / rate / 3600;
          if (usd_per_hour) cell.budget_usd = *cell.budget_hours * *usd_per_hour;
        }
        rates.emplace_back(rate);
        costs.push_back(cell.usd_per_million_samples);
      } else {
        rates.emplace_back(std::nullopt);
        costs.emplace_back(std::nullopt);
      }
      cw.cells.push_back(std::move(cell));
    }
    set_best(cw, rates, costs);
    if (cw.unit.empty()) cw.unit = "samples/s";
    c.workloads.push_back(std::move(cw));
  }
  return c;
}

json to_json(const comparison& c) {
  json machines = json::array();
  for (const auto& m : c.machines) {
    machines.push_back({{"spec", m.spec},
                        {"name", m.name},
                        {"description", m.hw.description},
                        {"usd_per_hour", m.usd_per_hour ? json(*m.usd_per_hour) : json(nullptr)},
                        {"network",
                         {{"gbps", m.network_Gbps ? json(*m.network_Gbps) : json(nullptr)},
                          {"basis", m.network_basis}}}});
  }
  json figures = json::array();
  for (const auto& key : c.figure_keys) {
    json values = json::array();
    const model::figure* first = c.machines.front().hw.find_key(key);
    for (const auto& m : c.machines) {
      const model::figure* f = m.hw.find_key(key);
      if (f == nullptr) {
        values.push_back(nullptr);
        continue;
      }
      json v = {{"value", f->value}, {"basis", std::string(model::to_string(f->from))}};
      v["ratio_to_first"] =
          first != nullptr && first->value != 0 ? json(f->value / first->value) : json(nullptr);
      values.push_back(v);
    }
    figures.push_back({{"figure", key}, {"machines", values}});
  }
  json workloads = json::array();
  for (const auto& w : c.workloads) {
    json cells = json::array();
    for (const auto& cell : w.cells) {
      if (!cell.sizing) {
        cells.push_back({{"error", cell.error}});
        continue;
      }
      auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
      const model::sizing& s = *cell.sizing;
      cells.push_back(
          {{"predicted_samples_per_s", s.predicted_samples_per_s},
           {"per_gpu_samples_per_s", s.per_gpu_samples_per_s},
           {"predicted_low_samples_per_s", s.interval ? json(s.interval->low) : json()},
           {"predicted_high_samples_per_s", s.interval ? json(s.interval->high) : json()},
           {"limiting_component", std::string(to_string(s.limiting_component))},
           {"nodes", s.nodes},
           {"gpus_per_node", s.gpus_per_node},
           {"fits", s.memory.fits},
           {"memory_per_gpu_GiB", s.memory.per_gpu_GiB},
           {"memory_capacity_GiB", opt(s.memory.capacity_GiB)},
           {"usd_per_million_samples", opt(cell.usd_per_million_samples)},
           {"usd_per_million_tokens", opt(cell.usd_per_million_tokens)},
           {"epoch_hours", opt(cell.epoch_hours)},
           {"budget_hours", opt(cell.budget_hours)},
           {"budget_usd", opt(cell.budget_usd)}});
    }
    auto index = [](const std::optional<std::size_t>& i) { return i ? json(*i) : json(nullptr); };
    workloads.push_back(
        {{"workload", w.name},
         {"unit", w.unit},
         {"samples_per_epoch", w.samples_per_epoch ? json(*w.samples_per_epoch) : json(nullptr)},
         {"fastest", index(w.fastest)},
         {"cheapest", index(w.cheapest)},
         {"ties", {{"fastest", w.fastest_ties}, {"cheapest", w.cheapest_ties}}},
         {"budget", w.budget ? json{{"unit", w.budget->unit},
                                    {"amount", w.budget->amount},
                                    {"given", w.budget->given}}
                             : json(nullptr)},
         {"budget_samples", w.budget_samples ? json(*w.budget_samples) : json(nullptr)},
         {"budget_note", w.budget_note},
         {"machines", cells}});
  }
  const auto& o = c.options;
  const auto opt_int = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
  const auto opt_num = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  // "tokens" and "epochs": the budget for every workload, as before per-workload budgets.
  const auto for_all = [&o](std::string_view unit) {
    for (const training_budget& b : o.budgets) {
      if (b.workload.empty() && b.unit == unit) return json(b.amount);
    }
    return json(nullptr);
  };
  json budgets = json::array();
  for (const training_budget& b : o.budgets) {
    budgets.push_back({{"unit", b.unit},
                       {"workload", b.workload.empty() ? json(nullptr) : json(b.workload)},
                       {"amount", b.amount}});
  }
  return {{"schema", "gpubench.compare/1"},
          {"options",
           {{"nodes", opt_int(o.nodes)},
            {"gpus", opt_int(o.gpus)},
            {"settings", o.settings},
            {"tokens", for_all(tokens_unit)},
            {"epochs", for_all(budget_units[2])},
            {"budgets", budgets},
            {"dataset_samples", opt_num(o.dataset_samples)},
            {"serve", o.serve ? model::to_json(*o.serve) : json(nullptr)}}},
          {"machines", machines},
          {"workloads", workloads},
          {"serving", serving_json(c)},
          {"figures", figures}};
}

}  // namespace gpubench::reports
