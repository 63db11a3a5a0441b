// gpubench compare as text and as one HTML page.
#include "gpubench/reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "compare_parts.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/svg.hpp"
#include "gpubench/vocabulary/units.hpp"

namespace gpubench::reports {
namespace {

std::string hours_text(double hours) {
  if (hours < 1) return format_number(hours * 60) + " min";
  return format_number(hours) + " h";
}

std::string basis_letter(const model::figure* f) {
  return f == nullptr ? "" : " (" + std::string(to_string(f->from)) + ")";
}

std::string network_text(const compared_machine& m) {
  return m.network_Gbps ? format_number(*m.network_Gbps) + " Gb/s (" +
                              std::string(to_string(m.network_basis)) + ")"
                        : "unknown";
}

// "does not fit: 95 of 79.6 GiB per GPU", or the predicted rate.
std::string predicted_text(const model::sizing& s, const std::string& unit) {
  if (!s.memory.fits) {
    return "does not fit: " + format_number(s.memory.per_gpu_GiB) +
           (s.memory.capacity_GiB ? " of " + format_number(*s.memory.capacity_GiB) : "") + " " +
           std::string(vocabulary::units::GiB.symbol) + " per GPU";
  }
  return format_number(s.predicted_samples_per_s) + " " + unit +
         (s.interval ? " (" + range_header() + " " + range_text(s) + ")" : "");
}

std::string budget_text(const compared_cell& cell) {
  if (!cell.budget_hours) return "-";
  return format_number(*cell.budget_hours / 24) + " days" +
         (cell.budget_usd ? ", " + money(cell.budget_usd) : "");
}

}  // namespace

std::string best_label(const std::vector<std::size_t>& fastest_ties,
                       const std::vector<std::size_t>& cheapest_ties, std::size_t i) {
  const auto label = [i](const std::vector<std::size_t>& tied, const char* what) -> std::string {
    if (std::find(tied.begin(), tied.end(), i) == tied.end()) return "";
    return std::string(what) + (tied.size() > 1 ? " (tie)" : "");
  };
  const std::string fastest = label(fastest_ties, "fastest");
  const std::string cheapest = label(cheapest_ties, "cheapest");
  return fastest.empty() || cheapest.empty() ? fastest + cheapest : fastest + ", " + cheapest;
}

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
  out += serving_text(c);
  const bool budget = !c.options.budgets.empty();
  for (const auto& w : c.workloads) {
    out += w.name +
           (w.samples_per_epoch ? " (epoch of " + format_number(*w.samples_per_epoch) + " samples)"
                                : std::string()) +
           (w.budget_samples && w.budget ? "; budget " + format_number(*w.budget_samples) +
                                               " samples (" + w.budget->given + ")"
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
      row.push_back(best_label(w.fastest_ties, w.cheapest_ties, i));
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
  page.raw(serving_html(c));
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
      const std::string best = best_label(w.fastest_ties, w.cheapest_ties, i);
      t.row({c.machines[i].name, std::to_string(s.nodes) + " x " + std::to_string(s.gpus_per_node),
             predicted_text(s, w.unit), std::string(to_string(s.limiting_component)),
             money(cell.usd_per_million_samples), money(cell.usd_per_million_tokens),
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
      // Appended, not "(" + word + ")": gcc 12 warns (-Wrestrict, a false positive) on that.
      std::string limit("(");
      limit.append(to_string(cell.sizing->limiting_component)).append(")");
      rate.push_back(
          {c.machines[i].name, cell.sizing->predicted_samples_per_s, w.fastest == i, limit});
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
      "/ stored bytes per sample; a budget of tokens, samples or epochs takes samples / predicted "
      "rate. "
      "Machines within 2% of the best are a tie.</p></section>\n");
  return page.finish();
}

}  // namespace gpubench::reports
