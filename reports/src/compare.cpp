#include "gpubench/reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {
namespace {

std::string hours_text(double hours) {
  if (hours < 1) return format_number(hours * 60) + " min";
  return format_number(hours) + " h";
}

std::string basis_letter(const model::figure* f) {
  return f == nullptr ? "" : " (" + std::string(to_string(f->from)) + ")";
}

// "fastest", "cheapest", both or neither for machine i on workload w; "(tie)" when another
// machine is within tie_share of it.
std::string best_label(const compared_workload& w, std::size_t i) {
  const auto label = [i](const std::vector<std::size_t>& tied, const char* what) -> std::string {
    if (std::find(tied.begin(), tied.end(), i) == tied.end()) return "";
    return std::string(what) + (tied.size() > 1 ? " (tie)" : "");
  };
  const std::string fastest = label(w.fastest_ties, "fastest");
  const std::string cheapest = label(w.cheapest_ties, "cheapest");
  return fastest.empty() || cheapest.empty() ? fastest + cheapest : fastest + ", " + cheapest;
}

}  // namespace

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
      std::string what = "--set ";
      what.append(setting).append(": no machine '").append(target).append("' in the comparison");
      throw input_error(what);
    }
  }
}

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

}  // namespace

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
    m.network_basis = network ? std::string(model::to_string(network->from)) : "unknown";
    for (const auto& [key, fig] : m.hw.figures) keys.insert(key);
  }
  c.figure_keys.assign(keys.begin(), keys.end());
  if (workloads.empty()) workloads = model::default_workloads();
  const model::constants constants = model::load_constants();
  model::run_options run;
  run.nodes = options.nodes;
  run.gpus = options.gpus;
  for (const auto& name : workloads) {
    const model::workload w = model::load_workload(name);
    compared_workload cw;
    cw.name = w.name;
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
          cell.usd_per_million_samples = *usd_per_hour / (rate * 3600) * 1e6;
          if (s.sample_unit == "sequence" && s.tokens_per_sample > 0) {
            cell.usd_per_million_tokens = *cell.usd_per_million_samples / s.tokens_per_sample;
          }
        }
        if (cw.samples_per_epoch) cell.epoch_hours = *cw.samples_per_epoch / rate / 3600;
        std::optional<double> samples;
        if (options.tokens) {
          if (s.sample_unit == "sequence" && s.tokens_per_sample > 0) {
            samples = *options.tokens / s.tokens_per_sample;
          } else {
            cw.budget_note = "--tokens: " + w.name + " is not a sequence model";
          }
        } else if (options.epochs) {
          const std::optional<double> epoch =
              options.dataset_samples ? options.dataset_samples : cw.samples_per_epoch;
          if (epoch) {
            samples = *options.epochs * *epoch;
          } else {
            cw.budget_note = "--epochs: " + w.name + " states no dataset size (--dataset-samples)";
          }
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
    for (std::size_t i = 0; i < rates.size(); ++i) {
      if (rates[i] && (!cw.fastest || *rates[i] > *rates[*cw.fastest])) cw.fastest = i;
      if (costs[i] && (!cw.cheapest || *costs[i] < *costs[*cw.cheapest])) cw.cheapest = i;
    }
    cw.fastest_ties = ties(rates, false);
    cw.cheapest_ties = ties(costs, true);
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
      cells.push_back({{"predicted_samples_per_s", s.predicted_samples_per_s},
                       {"per_gpu_samples_per_s", s.per_gpu_samples_per_s},
                       {"limiting_component", std::string(to_string(s.limiting_component))},
                       {"nodes", s.nodes},
                       {"gpus_per_node", s.gpus_per_node},
                       {"fits", s.memory.fits},
                       {"memory_per_gpu_GB", s.memory.per_gpu_GB},
                       {"memory_capacity_GB", opt(s.memory.capacity_GB)},
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
         {"budget_samples", w.budget_samples ? json(*w.budget_samples) : json(nullptr)},
         {"budget_note", w.budget_note},
         {"machines", cells}});
  }
  const auto& o = c.options;
  const auto opt_int = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
  const auto opt_num = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"schema", "gpubench.compare/1"},
          {"options",
           {{"nodes", opt_int(o.nodes)},
            {"gpus", opt_int(o.gpus)},
            {"settings", o.settings},
            {"tokens", opt_num(o.tokens)},
            {"epochs", opt_num(o.epochs)},
            {"dataset_samples", opt_num(o.dataset_samples)}}},
          {"machines", machines},
          {"workloads", workloads},
          {"figures", figures}};
}

namespace {

std::string money(const std::optional<double>& usd) {
  return usd ? "$" + format_number(*usd) : "-";
}

std::string network_text(const compared_machine& m) {
  return m.network_Gbps ? format_number(*m.network_Gbps) + " Gb/s (" + m.network_basis + ")"
                        : "unknown";
}

// "does not fit: 95 of 80 GB per GPU", or the predicted rate.
std::string predicted_text(const model::sizing& s, const std::string& unit) {
  if (!s.memory.fits) {
    return "does not fit: " + format_number(s.memory.per_gpu_GB) +
           (s.memory.capacity_GB ? " of " + format_number(*s.memory.capacity_GB) : "") +
           " GB per GPU";
  }
  return format_number(s.predicted_samples_per_s) + " " + unit;
}

std::string budget_text(const compared_cell& cell) {
  if (!cell.budget_hours) return "-";
  return format_number(*cell.budget_hours / 24) + " days" +
         (cell.budget_usd ? ", " + money(cell.budget_usd) : "");
}

}  // namespace

std::string to_text(const comparison& c) {
  std::string out;
  {
    text_table t({"machine", "from", "$/hour per node", "network between nodes"});
    for (const auto& m : c.machines) {
      t.add_row(
          {m.name, m.spec, m.usd_per_hour ? money(m.usd_per_hour) : "no price", network_text(m)});
    }
    out += t.render() + "\n";
  }
  const bool budget = c.options.tokens || c.options.epochs;
  for (const auto& w : c.workloads) {
    out += w.name +
           (w.samples_per_epoch ? " (epoch of " + format_number(*w.samples_per_epoch) + " samples)"
                                : std::string()) +
           (w.budget_samples ? "; budget " + format_number(*w.budget_samples) + " samples"
                             : std::string()) +
           (w.budget_note.empty() ? std::string() : "; " + w.budget_note) + ":\n";
    bool tokens = false;
    for (const auto& cell : w.cells) tokens = tokens || cell.usd_per_million_tokens.has_value();
    std::vector<std::string> header{"machine", "nodes x GPUs", "predicted", "limited by",
                                    "$ per M samples"};
    if (tokens) header.emplace_back("$ per M tokens");
    header.emplace_back("epoch");
    if (budget) header.emplace_back("budget");
    header.emplace_back("best");
    text_table t(header);
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const auto& m = c.machines[i];
      const auto& cell = w.cells[i];
      std::vector<std::string> row{m.name};
      if (!cell.sizing) {
        row.push_back("not sized: " + cell.error);
        row.resize(header.size());
        t.add_row(row);
        continue;
      }
      const model::sizing& s = *cell.sizing;
      row.push_back(std::to_string(s.nodes) + " x " + std::to_string(s.gpus_per_node));
      row.push_back(predicted_text(s, w.unit));
      row.push_back(std::string(to_string(s.limiting_component)));
      row.push_back(money(cell.usd_per_million_samples));
      if (tokens) row.push_back(money(cell.usd_per_million_tokens));
      row.push_back(cell.epoch_hours ? hours_text(*cell.epoch_hours) : "-");
      if (budget) row.push_back(budget_text(cell));
      row.push_back(best_label(w, i));
      t.add_row(row);
    }
    out += t.render() + "\n";
  }
  return out;
}

std::string to_html(const comparison& c) {
  std::string names;
  for (const auto& m : c.machines) names += (names.empty() ? "" : " vs ") + m.name;
  html_page page("gpubench compare: " + names);
  page.heading(1, "gpubench compare");
  page.raw("<section id=\"summary\"><h2>Summary</h2>");
  {
    html_table t({"machine", "from", "description", "$/hour per node", "network between nodes"},
                 "machines");
    for (const auto& m : c.machines) {
      t.row({m.name, m.spec, m.hw.description, m.usd_per_hour ? money(m.usd_per_hour) : "no price",
             network_text(m)});
    }
    page.raw(t.render());
  }
  for (const auto& w : c.workloads) {
    page.raw("<h3>" + escape_html(w.name) + "</h3>");
    html_table t({"machine", "nodes x GPUs", "predicted", "limited by", "$ per M samples",
                  "$ per M tokens", "epoch", "budget", "best"},
                 "workload-" + w.name);
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const auto& cell = w.cells[i];
      if (!cell.sizing) {
        t.row({c.machines[i].name, "", "not sized", "", "", "", "", "", cell.error});
        continue;
      }
      const model::sizing& s = *cell.sizing;
      const std::string best = best_label(w, i);
      t.row({c.machines[i].name, std::to_string(s.nodes) + " x " + std::to_string(s.gpus_per_node),
             predicted_text(s, w.unit), std::string(to_string(s.limiting_component)), money(cell.usd_per_million_samples),
             money(cell.usd_per_million_tokens),
             cell.epoch_hours ? hours_text(*cell.epoch_hours) : "-", budget_text(cell), best},
            {0, 0, w.fastest == i ? 1 : 0, 0, w.cheapest == i ? 1 : 0, 0, 0, 0,
             best.empty() ? 0 : 1});
    }
    page.raw(t.render());
  }
  page.raw("</section>\n<section id=\"charts\"><h2>Charts</h2>");
  int index = 0;
  for (const auto& w : c.workloads) {
    std::vector<bar> rate;
    std::vector<bar> cost;
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const auto& cell = w.cells[i];
      if (!cell.sizing) continue;
      rate.push_back({c.machines[i].name, cell.sizing->predicted_samples_per_s, w.fastest == i,
                      "(" + std::string(to_string(cell.sizing->limiting_component)) + ")"});
      if (cell.usd_per_million_samples) {
        cost.push_back({c.machines[i].name, *cell.usd_per_million_samples, w.cheapest == i, ""});
      }
    }
    const std::string id = std::to_string(index++);
    if (!rate.empty()) {
      page.raw(bar_chart("chart-rate-" + id, w.name + ": predicted " + w.unit, rate, w.unit));
    }
    if (!cost.empty()) {
      page.raw(bar_chart("chart-cost-" + id, w.name + ": $ per million samples", cost, "$/M"));
    }
  }
  page.raw("</section>\n<section id=\"figures\"><h2>Figures</h2>");
  {
    std::vector<std::string> header{"figure"};
    for (const auto& m : c.machines) header.push_back(m.name);
    html_table t(header, "figures-table");
    for (const auto& key : c.figure_keys) {
      std::vector<std::string> row{key};
      const model::figure* first = c.machines.front().hw.find_key(key);
      for (std::size_t i = 0; i < c.machines.size(); ++i) {
        const model::figure* f = c.machines[i].hw.find_key(key);
        if (f == nullptr) {
          row.emplace_back("-");
          continue;
        }
        std::string text = format_number(f->value) + basis_letter(f);
        if (i > 0 && first != nullptr && first->value != 0) {
          text += " x" + format_number(f->value / first->value);
        }
        row.push_back(text);
      }
      t.row(row);
    }
    page.raw(t.render());
  }
  page.raw(
      "<p class=\"note\">Ratios are to the first machine. $ per million samples = $/hour / "
      "(predicted samples/s x 3600) x 10^6, $/hour being the price per node times the nodes; per "
      "million tokens, divided by the tokens per sequence. An epoch is the workload's dataset "
      "bytes "
      "/ stored bytes per sample; a budget of tokens or epochs takes samples / predicted rate. "
      "Machines within 2% of the best are a tie.</p></section>\n");
  return page.finish();
}

}  // namespace gpubench::reports
