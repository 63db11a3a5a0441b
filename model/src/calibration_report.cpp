// Calibration reports: the rows, the error summaries and the fitted constants, as JSON and as
// the Markdown tables of docs/model.md.
#include "gpubench/model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench::model {

namespace {

json summary_json(const error_summary& s) {
  json out = {{"family", s.family},
              {"rows", s.rows},
              {"first_principles_in_fit_median_abs_error", s.in_fit_median},
              {"first_principles_held_out_median_abs_error", s.held_out_median},
              {"first_principles_held_out_worst_abs_error", s.held_out_worst},
              {"naive_first_principles_held_out_median_abs_error", s.naive_median},
              {"anchored_rows", s.anchored_rows},
              {"anchored_held_out_median_abs_error", s.anchored_median},
              {"anchored_held_out_worst_abs_error", s.anchored_worst},
              {"naive_anchored_median_abs_error", s.naive_anchored_median}};
  if (!s.generation.empty()) out["generation"] = s.generation;
  out["supported"] = s.supported;
  return out;
}

}  // namespace

json to_json(const calibration_report& report) {
  json rows = json::array();
  for (const calibration_row& r : report.rows) {
    json row = {{"id", r.id},       {"model", r.model},   {"framework", r.framework},
                {"gpu", r.gpu},     {"gpus", r.gpus},     {"precision", r.precision},
                {"batch", r.batch}, {"usable", r.usable}, {"source_group", r.source_group}};
    if (!r.usable) {
      row["why_not"] = r.why_not;
    } else {
      row["family"] = r.family;
      row["stack"] = r.stack;
      row["generation"] = r.generation;
      row["published_samples_per_s"] = r.published;
      row["first_principles"] = *r.first_principles;
      row["first_principles_held_out"] = *r.held_out;
      row["naive_first_principles"] = r.naive_first_principles;
      row["flops_per_sample"] = r.flops_per_sample;
      row["anchored"] = r.anchored;
      row["naive"] = r.naive;
      row["reference_row"] = r.reference;
    }
    rows.push_back(std::move(row));
  }
  json families = json::array();
  for (const error_summary& f : report.families) families.push_back(summary_json(f));
  json generations = json::array();
  for (const error_summary& g : report.generations) generations.push_back(summary_json(g));
  json slices = json::array();
  for (const error_summary& s : report.slices) slices.push_back(summary_json(s));
  json stacks = json::array();
  for (const stack_fit& s : report.stacks) {
    json fitted = json::object();
    for (const auto& [name, value] : s.constants) fitted[name] = value;
    stacks.push_back(
        {{"stack", s.stack}, {"rows", s.rows}, {"sources", s.sources}, {"fitted", fitted}});
  }
  return {{"schema", "gpubench.calibration/2"},
          {"all", summary_json(report.all)},
          {"stacks", stacks},
          {"families", families},
          {"generations", generations},
          {"slices", slices},
          {"error_bands", to_json(report.bands).at("bands")},
          {"rows", rows}};
}

namespace {

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", v * 100);
  return std::string(b);
}

// The constants fitted on each stack's rows.
std::string stacks_table(const calibration_report& report) {
  char line[512];
  std::string out;
  out +=
      "Software stacks: the constants fitted on each stack's rows (the others are the first "
      "stack's).\n\n"
      "| stack | rows | sources | fitted |\n|---|---|---|---|\n";
  for (const stack_fit& s : report.stacks) {
    std::vector<std::string> fitted;
    for (const auto& [name, value] : s.constants) {
      std::snprintf(line, sizeof line, "%s %.3g", name.c_str(), value);
      fitted.emplace_back(line);
    }
    out += "| " + s.stack + " | " + std::to_string(s.rows) + " | " + join(s.sources, ", ") + " | " +
           (fitted.empty() ? "-" : join(fitted, ", ")) + " |\n";
  }
  return out;
}

// Per family, then per family and GPU generation: median absolute errors on rows left out of
// the fit (their whole source group), beside the in-fit figure and the naive answers.
std::string error_tables(const calibration_report& report) {
  std::string out;
  const std::string header =
      "| rows | first-principles held out | worst | naive first-principles held out | in fit | "
      "anchored rows | anchored held out | worst | naive anchored |\n";
  const std::string rule = "|---|---|---|---|---|---|---|---|---|---|\n";
  auto summary_cells = [&](const error_summary& s) {
    std::string cells = std::to_string(s.rows) + " | " + pct(s.held_out_median) + " | " +
                        pct(s.held_out_worst) + " | " + pct(s.naive_median) + " | " +
                        pct(s.in_fit_median) + " | " + std::to_string(s.anchored_rows) + " | ";
    if (s.anchored_rows > 0) {
      cells += pct(s.anchored_median) + " | " + pct(s.anchored_worst) + " | " +
               pct(s.naive_anchored_median);
    } else {
      cells += "- | - | -";
    }
    return cells + " |\n";
  };
  out +=
      "\nMedian |predicted/published - 1| per family. Held out: predicted by constants fitted "
      "without the row's source group; naive first-principles = datasheet peak x the median "
      "published/peak ratio of the other sources / FLOP per sample; naive anchored = the "
      "reference row x target peak / reference peak.\n\n| family " +
      header + rule;
  const auto name = [](const error_summary& s) {
    return s.supported ? s.family : s.family + " (unsupported)";
  };
  for (const error_summary& f : report.families) out += "| " + name(f) + " | " + summary_cells(f);
  out += "| **all** | " + summary_cells(report.all);
  out +=
      "\nSlices across families (fp8: the rows whose linear layers run in fp8; blackwell: the "
      "rows on Blackwell GPUs):\n\n| slice " +
      header + rule;
  for (const error_summary& s : report.slices) {
    out += "| " + s.family + (s.supported ? "" : " (with unsupported rows)") + " | " +
           summary_cells(s);
  }
  out += "\nPer family and GPU generation:\n\n| family | generation " + header + "|---" + rule;
  for (const error_summary& g : report.generations) {
    out += "| " + name(g) + " | " + g.generation + " | " + summary_cells(g);
  }
  return out;
}

// Every usable row: published, predicted first-principles, held out and anchored.
std::string rows_table(const calibration_report& report) {
  char line[512];
  std::string out;
  out +=
      "\n| row | model | framework | stack | GPU | GPUs | precision | batch | published | "
      "first-principles | held out | naive first-principles | anchored (ref) | naive anchored "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const calibration_row& r : report.rows) {
    if (!r.usable) continue;
    auto cell = [&](const std::optional<double>& v) {
      if (!v) return std::string("-");
      std::snprintf(line, sizeof line, "%.0f (%+.0f%%)", *v, (*v / r.published - 1) * 100);
      return std::string(line);
    };
    std::snprintf(line, sizeof line, "%.0f", r.published);
    const std::string published(line);  // cell() reuses the buffer
    std::string anchored = cell(r.anchored);
    if (r.reference) anchored += " (" + *r.reference + ")";
    const std::vector<std::string> cells{r.id,
                                         r.model,
                                         r.framework,
                                         r.stack,
                                         r.gpu,
                                         std::to_string(r.gpus),
                                         r.precision,
                                         std::to_string(r.batch),
                                         published,
                                         cell(r.first_principles),
                                         cell(r.held_out),
                                         cell(r.naive_first_principles),
                                         anchored,
                                         cell(r.naive)};
    out += "| ";
    out += join(cells, " | ");
    out += " |\n";
  }
  return out;
}

// The memory model against runs that ran: each published row fit on its GPUs.
std::string memory_check(const calibration_report& report) {
  char line[512];
  std::string out;
  std::vector<const calibration_row*> counted;
  std::vector<const calibration_row*> over;
  for (const calibration_row& r : report.rows) {
    if (!r.usable || !r.capacity_GiB) continue;
    counted.push_back(&r);
    if (r.memory_GiB > *r.capacity_GiB) over.push_back(&r);
  }
  std::vector<double> shares;
  shares.reserve(counted.size());
  for (const calibration_row* r : counted) shares.push_back(r->memory_GiB / *r->capacity_GiB);
  std::sort(shares.begin(), shares.end());
  out +=
      "\nGPU memory: every published run ran, so each must fit. The model's memory per GPU is "
      "within its GPU's capacity for " +
      std::to_string(counted.size() - over.size()) + " of " + std::to_string(counted.size()) +
      " rows";
  if (!shares.empty()) {
    out += " (median " + pct(shares[shares.size() / 2]) + " of capacity, highest " +
           pct(shares.back()) + ")";
  }
  out += over.empty() ? ".\n" : "; over it:\n\n";
  for (const calibration_row* r : over) {
    std::snprintf(line, sizeof line, "%.1f %s of %.1f %s", r->memory_GiB,
                  std::string(vocabulary::units::GiB.symbol).c_str(), *r->capacity_GiB,
                  std::string(vocabulary::units::GiB.symbol).c_str());
    out += "- " + r->id + " " + r->model + " on " + r->gpu + ", batch " + std::to_string(r->batch) +
           ": " + line + "\n";
  }
  return out;
}

}  // namespace

// The error bands a prediction carries, and how often each held the rows of a source it was
// built without.
std::string bands_table(const calibration_report& report) {
  std::string out =
      "\nError band: published / predicted over the rows predicted without their source, between "
      "the split-conformal ranks for " +
      pct(band_coverage) +
      ", each source weighing the same (docs/model.md, \"Error band\"); a family of fewer than " +
      std::to_string(min_family_rows) + " rows or " + std::to_string(min_family_groups) +
      " sources takes every family's band joined with its own rows' band; held-out coverage: the "
      "share of each "
      "source's rows inside the band built from the other sources' rows, which should be near " +
      pct(band_coverage) +
      ".\n\n| method | family | rows | low | high | held-out coverage "
      "|\n|---|---|---|---|---|---|\n";
  std::vector<const error_band*> listed;
  for (const error_band& b : report.bands) listed.push_back(&b);
  for (const error_band& b : report.shared_bands) listed.push_back(&b);
  for (const error_band* b : listed) {
    out += "| " + b->method + " | " + b->family +
           (b->shared ? " (every family's band, joined with its own)" : "") + " | " +
           std::to_string(b->rows) + " | " + pct(b->low - 1) + " | +" + pct(b->high - 1) + " | " +
           pct(b->held_out_coverage) + " |\n";
  }
  return out;
}

std::string to_markdown(const calibration_report& report) {
  std::string out = stacks_table(report) + error_tables(report) + bands_table(report) +
                    rows_table(report) + memory_check(report);
  out += "\nRows not used:\n\n";
  for (const calibration_row& r : report.rows) {
    if (r.usable) continue;
    out += "- " + r.id + " " + r.model + " (" + r.framework + "): " + r.why_not + "\n";
  }
  return out;
}

}  // namespace gpubench::model
