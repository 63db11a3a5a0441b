// gpubench compare --serve: one model served on each machine, the best layout within the latency
// targets (size --serve --search on all its GPUs), and $ per million output tokens.
#include <algorithm>

#include "compare_parts.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/html_page.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {

namespace {

constexpr double seconds_per_hour = 3600;
constexpr double per_million = 1e6;

std::string layout_text(const model::serving_layout& l) {
  return std::to_string(l.replicas) + " x (tensor " + std::to_string(l.tensor) + " x pipeline " +
         std::to_string(l.pipeline) + "), " + l.weights + ", " + format_number(l.concurrency) +
         " in flight";
}

}  // namespace

std::vector<compared_serving> compare_serving(const std::vector<compared_machine>& machines,
                                              const std::vector<std::string>& workloads,
                                              const compare_options& options) {
  const model::serving_question& q = *options.serve;
  if (workloads.empty()) {
    throw input_error(
        "compare --serve: --workload names the model to serve (a decoder, as "
        "llama3.1-70b)");
  }
  const model::constants constants = model::load_constants();
  const model::serving_constants engines = model::load_serving_constants();
  const std::vector<std::string> weights = q.weights_to_try();
  std::vector<compared_serving> out;
  for (const std::string& name : workloads) {
    const model::workload w = model::load_workload(name);
    compared_serving cw;
    cw.name = w.name;
    std::vector<std::optional<double>> rates;
    std::vector<std::optional<double>> costs;
    for (const compared_machine& m : machines) {
      compared_serving_cell cell;
      const int nodes = options.nodes.value_or(1);
      cell.gpus = options.gpus.value_or(m.hw.scalable ? 1 : m.hw.gpus_per_node) * nodes;
      model::serving_options o = q.options;
      o.gpus = cell.gpus;
      const std::vector<model::serving_layout> layouts =
          model::search_serving(m.hw, w, constants, engines, o, weights);
      // The search on one machine throws only for input no layout could take (a model that is
      // not a decoder, an unknown engine): the same for every machine, so it stops the command.
      if (!layouts.empty() && layouts.front().meets_targets) {
        cell.best = layouts.front();
      } else {
        cell.error = layouts.empty() || !layouts.front().fits
                         ? "does not fit on " + std::to_string(cell.gpus) + " GPU(s)"
                         : "no layout meets the targets";
      }
      if (cell.best && m.usd_per_hour) {
        cell.usd_per_million_output_tokens = *m.usd_per_hour * nodes / seconds_per_hour /
                                             cell.best->output_tokens_per_s * per_million;
      }
      rates.push_back(cell.best ? std::optional<double>(cell.best->output_tokens_per_s)
                                : std::nullopt);
      costs.push_back(cell.usd_per_million_output_tokens);
      cw.cells.push_back(std::move(cell));
    }
    set_best(cw, rates, costs);
    out.push_back(std::move(cw));
  }
  return out;
}

json serving_json(const comparison& c) {
  json out = json::array();
  for (const compared_serving& w : c.serving) {
    json cells = json::array();
    for (const compared_serving_cell& cell : w.cells) {
      json entry = {{"gpus", cell.gpus},
                    {"best", cell.best ? model::to_json(*cell.best) : json(nullptr)},
                    {"usd_per_million_output_tokens",
                     cell.usd_per_million_output_tokens ? json(*cell.usd_per_million_output_tokens)
                                                        : json(nullptr)}};
      if (!cell.error.empty()) entry["error"] = cell.error;
      cells.push_back(std::move(entry));
    }
    const auto index = [](const std::optional<std::size_t>& i) {
      return i ? json(*i) : json(nullptr);
    };
    out.push_back({{"workload", w.name},
                   {"fastest", index(w.fastest)},
                   {"cheapest", index(w.cheapest)},
                   {"ties", {{"fastest", w.fastest_ties}, {"cheapest", w.cheapest_ties}}},
                   {"machines", std::move(cells)}});
  }
  return out;
}

std::string serving_text(const comparison& c) {
  if (!c.options.serve) return "";
  std::string out;
  for (const compared_serving& w : c.serving) {
    out += w.name + " served (" + c.options.serve->describe() + "):\n";
    text_table t({"machine", "GPUs", "best layout", "output tokens/s", "per GPU", "TTFT ms",
                  "TPOT ms", "limited by", "$ per M output tokens", "best"});
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const compared_serving_cell& cell = w.cells[i];
      if (!cell.best) {
        t.add_row({c.machines[i].name, std::to_string(cell.gpus), cell.error, "-", "-", "-", "-",
                   "-", "-", ""});
        continue;
      }
      const model::serving_layout& l = *cell.best;
      t.add_row({c.machines[i].name, std::to_string(cell.gpus), layout_text(l),
                 format_number(l.output_tokens_per_s), format_number(l.output_tokens_per_s_per_gpu),
                 format_number(l.ttft_ms), format_number(l.tpot_ms),
                 std::string(to_string(l.limiting_component)),
                 money(cell.usd_per_million_output_tokens),
                 best_label(w.fastest_ties, w.cheapest_ties, i)});
    }
    out += t.render() + "\n";
  }
  return out;
}

std::string serving_html(const comparison& c) {
  if (!c.options.serve) return "";
  std::string out;
  int index = 0;
  for (const compared_serving& w : c.serving) {
    out += "<h3>" + escape_html(w.name) + " served (" + escape_html(c.options.serve->describe()) +
           ")</h3>";
    html_table t({"machine", "GPUs", "best layout", "output tokens/s", "per GPU", "TTFT ms",
                  "TPOT ms", "limited by", "$ per M output tokens", "best"},
                 "serving-" + w.name);
    std::vector<bar> rate;
    std::vector<bar> cost;
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const compared_serving_cell& cell = w.cells[i];
      if (!cell.best) {
        t.row({c.machines[i].name, std::to_string(cell.gpus), cell.error, "", "", "", "", "", "",
               ""});
        continue;
      }
      const model::serving_layout& l = *cell.best;
      const std::string best = best_label(w.fastest_ties, w.cheapest_ties, i);
      t.row({c.machines[i].name, std::to_string(cell.gpus), layout_text(l),
             format_number(l.output_tokens_per_s), format_number(l.output_tokens_per_s_per_gpu),
             format_number(l.ttft_ms), format_number(l.tpot_ms),
             std::string(to_string(l.limiting_component)),
             money(cell.usd_per_million_output_tokens), best},
            {0, 0, 0, w.fastest == i ? 1 : 0, 0, 0, 0, 0, w.cheapest == i ? 1 : 0,
             best.empty() ? 0 : 1});
      rate.push_back({c.machines[i].name, l.output_tokens_per_s, w.fastest == i, ""});
      if (cell.usd_per_million_output_tokens) {
        cost.push_back(
            {c.machines[i].name, *cell.usd_per_million_output_tokens, w.cheapest == i, ""});
      }
    }
    out += t.render();
    const std::string id = std::to_string(index++);
    if (!rate.empty()) {
      out += bar_chart("chart-serving-rate-" + id, w.name + ": output tokens/s", rate, "tokens/s");
    }
    if (!cost.empty()) {
      out += bar_chart("chart-serving-cost-" + id, w.name + ": $ per million output tokens", cost,
                       "$/M");
    }
  }
  return out;
}

}  // namespace gpubench::reports
