#include "reports/compare.hpp"

#include <set>

#include "gpubench/errors.hpp"
#include "gpubench/format.hpp"
#include "gpubench/model/workload.hpp"
#include "reports/html_page.hpp"
#include "reports/report.hpp"
#include "reports/svg.hpp"

namespace gpubench::reports {
namespace {

std::string hours_text(double hours) {
  if (hours < 1) return format_number(hours * 60) + " min";
  return format_number(hours) + " h";
}

std::string basis_letter(const model::figure* f) {
  if (f == nullptr) return "";
  switch (f->from) {
    case model::basis::measured:
      return " (measured)";
    case model::basis::catalog:
      return " (catalog)";
    case model::basis::user:
      return " (set)";
  }
  return "";
}

// "fastest", "cheapest", both or neither for machine i on workload w.
std::string best_label(const compared_workload& w, std::size_t i) {
  std::string best;
  if (w.fastest == i) best = "fastest";
  if (w.cheapest == i) best += best.empty() ? "cheapest" : ", cheapest";
  return best;
}

}  // namespace

comparison compare_machines(const std::vector<std::string>& specs,
                            std::vector<std::string> workloads) {
  if (specs.empty()) throw input_error("compare: expected at least one machine");
  comparison c;
  std::set<std::string> keys;
  for (const auto& spec : specs) {
    compared_machine m;
    m.spec = spec;
    m.hw = model::load_hardware(spec);
    m.name = m.hw.name.empty() ? spec : m.hw.name;
    m.usd_per_hour = m.hw.value("price.usd_per_hour");
    for (const auto& [key, fig] : m.hw.figures) keys.insert(key);
    c.machines.push_back(std::move(m));
  }
  c.figure_keys.assign(keys.begin(), keys.end());
  if (workloads.empty()) workloads = model::default_workloads();
  const model::constants constants = model::load_constants();
  for (const auto& name : workloads) {
    const model::workload w = model::load_workload(name);
    compared_workload cw;
    cw.name = w.name;
    if (w.data.dataset_bytes > 0 && w.data.bytes_per_sample_stored > 0) {
      cw.samples_per_epoch = w.data.dataset_bytes / w.data.bytes_per_sample_stored;
    }
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const compared_machine& m = c.machines[i];
      compared_cell cell;
      try {
        cell.sizing = model::predict(m.hw, w, constants);
      } catch (const input_error& e) {
        cell.error = e.what();
      }
      if (cell.sizing && cell.sizing->predicted_samples_per_s > 0) {
        const double rate = cell.sizing->predicted_samples_per_s;
        cw.unit = samples_unit(*cell.sizing);
        if (m.usd_per_hour) cell.usd_per_million_samples = *m.usd_per_hour / (rate * 3600) * 1e6;
        if (cw.samples_per_epoch) cell.epoch_hours = *cw.samples_per_epoch / rate / 3600;
        if (!cw.fastest || rate > cw.cells[*cw.fastest].sizing->predicted_samples_per_s) {
          cw.fastest = i;
        }
        if (cell.usd_per_million_samples &&
            (!cw.cheapest ||
             *cell.usd_per_million_samples < *cw.cells[*cw.cheapest].usd_per_million_samples)) {
          cw.cheapest = i;
        }
      }
      cw.cells.push_back(std::move(cell));
    }
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
                        {"usd_per_hour", m.usd_per_hour ? json(*m.usd_per_hour) : json(nullptr)}});
  }
  json figures = json::array();
  for (const auto& key : c.figure_keys) {
    json values = json::array();
    const model::figure* first = c.machines.front().hw.find(key);
    for (const auto& m : c.machines) {
      const model::figure* f = m.hw.find(key);
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
      cells.push_back({{"predicted_samples_per_s", cell.sizing->predicted_samples_per_s},
                       {"per_gpu_samples_per_s", cell.sizing->per_gpu_samples_per_s},
                       {"limiting_component", cell.sizing->limiting_component},
                       {"usd_per_million_samples", opt(cell.usd_per_million_samples)},
                       {"epoch_hours", opt(cell.epoch_hours)}});
    }
    auto index = [](const std::optional<std::size_t>& i) { return i ? json(*i) : json(nullptr); };
    workloads.push_back(
        {{"workload", w.name},
         {"unit", w.unit},
         {"samples_per_epoch", w.samples_per_epoch ? json(*w.samples_per_epoch) : json(nullptr)},
         {"fastest", index(w.fastest)},
         {"cheapest", index(w.cheapest)},
         {"machines", cells}});
  }
  return {{"schema", "gpubench.compare/1"},
          {"machines", machines},
          {"workloads", workloads},
          {"figures", figures}};
}

std::string to_text(const comparison& c) {
  std::string out;
  for (const auto& w : c.workloads) {
    out += w.name +
           (w.samples_per_epoch ? " (epoch of " + format_number(*w.samples_per_epoch) + " samples)"
                                : std::string()) +
           ":\n";
    text_table t(
        {"machine", "predicted", "limited by", "$/hour", "$ per M samples", "epoch", "best"});
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const auto& m = c.machines[i];
      const auto& cell = w.cells[i];
      if (!cell.sizing) {
        t.add_row({m.name, "not sized: " + cell.error, "", "", "", "", ""});
        continue;
      }
      const std::string best = best_label(w, i);
      t.add_row(
          {m.name, format_number(cell.sizing->predicted_samples_per_s) + " " + w.unit,
           cell.sizing->limiting_component,
           m.usd_per_hour ? "$" + format_number(*m.usd_per_hour) : "no price",
           cell.usd_per_million_samples ? "$" + format_number(*cell.usd_per_million_samples) : "-",
           cell.epoch_hours ? hours_text(*cell.epoch_hours) : "-", best});
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
    html_table t({"machine", "from", "description", "$/hour"}, "machines");
    for (const auto& m : c.machines) {
      t.row({m.name, m.spec, m.hw.description,
             m.usd_per_hour ? "$" + format_number(*m.usd_per_hour) : "no price"});
    }
    page.raw(t.render());
  }
  for (const auto& w : c.workloads) {
    page.raw("<h3>" + escape_html(w.name) + "</h3>");
    html_table t({"machine", "predicted", "limited by", "$ per M samples", "epoch", "best"},
                 "workload-" + w.name);
    for (std::size_t i = 0; i < c.machines.size(); ++i) {
      const auto& cell = w.cells[i];
      if (!cell.sizing) {
        t.row({c.machines[i].name, "not sized", "", "", "", cell.error});
        continue;
      }
      const std::string best = best_label(w, i);
      t.row(
          {c.machines[i].name, format_number(cell.sizing->predicted_samples_per_s) + " " + w.unit,
           cell.sizing->limiting_component,
           cell.usd_per_million_samples ? "$" + format_number(*cell.usd_per_million_samples) : "-",
           cell.epoch_hours ? hours_text(*cell.epoch_hours) : "-", best},
          {0, w.fastest == i ? 1 : 0, 0, w.cheapest == i ? 1 : 0, 0, best.empty() ? 0 : 1});
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
                      "(" + cell.sizing->limiting_component + ")"});
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
      const model::figure* first = c.machines.front().hw.find(key);
      for (std::size_t i = 0; i < c.machines.size(); ++i) {
        const model::figure* f = c.machines[i].hw.find(key);
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
      "(predicted samples/s x 3600) x 10^6; an epoch is the workload's dataset bytes / stored "
      "bytes per sample.</p></section>\n");
  return page.finish();
}

}  // namespace gpubench::reports
