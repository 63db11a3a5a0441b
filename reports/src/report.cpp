#include "gpubench/reports/report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <sstream>
#include <unordered_map>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/calibration.hpp"
#include "gpubench/model/workload.hpp"
#include "gpubench/reports/run_time.hpp"
#include "gpubench/vocabulary/measurements.hpp"
#include "gpubench/vocabulary/units.hpp"

namespace gpubench::reports {
namespace {

namespace measurements = vocabulary::measurements;
namespace fig = vocabulary::figures;

// Which datasheet figure a measured metric is a fraction of. A table, not code: a measurement
// whose figures have a datasheet peak adds a line here; the rest show no percentage.
struct peak_rule {
  const vocabulary::query* measurement;
  const vocabulary::figure_def* peak;  // a per-dtype figure is read at the result's `dtype_axis`
  double scale;                        // peak x scale is what the metric is compared with
  std::string_view dtype_axis = {};
};
const peak_rule peak_rules[] = {
    {&measurements::hbm_any, &fig::hbm_peak, 1.0},
    {&measurements::gemm, &fig::peak_tflops, 1.0, "dtype"},
    // A peer copy one way uses one direction of the NVLink total.
    {&measurements::peer_one_way, &fig::nvlink, 0.5},
    {&measurements::peer_both_ways, &fig::nvlink, 1.0},
};

void add_percent_of_peak(figure_row& row, const result& r, const model::hardware_profile* hw) {
  if (hw == nullptr) return;
  for (const peak_rule& rule : peak_rules) {
    if (row.metric != rule.measurement->metric || !rule.measurement->matches(r)) continue;
    std::string dtype;
    if (rule.peak->per_dtype) {
      const auto value = axis_text(r.axes, rule.dtype_axis);
      if (!value) continue;
      dtype = *value;
    }
    const model::figure* peak = hw->find(*rule.peak, dtype);
    if (peak == nullptr || peak->value <= 0) continue;
    row.percent_of_peak = 100.0 * row.value / (peak->value * rule.scale);
    row.peak_key = vocabulary::key_of(*rule.peak, dtype);
    return;
  }
}

// The figures of a fleet's merged file gathered by what they measure, GPU by GPU.
class spread_builder {
 public:
  void add(const figure_row& row, const result& r) {
    const std::optional<std::string> gpu = axis_text(r.axes, "gpu");
    std::string axes = gpu ? format_axes(r.axes, "gpu") : row.axes;
    std::string key = row.benchmark;
    key.append(1, '\0').append(axes).append(1, '\0').append(row.metric);
    const auto [it, added] = at_.try_emplace(std::move(key), spreads_.size());
    if (added) {
      figure_spread& s = spreads_.emplace_back();
      s.benchmark = row.benchmark;
      s.axes = axes;
      s.metric = row.metric;
      s.unit = row.unit;
      s.per_gpu = gpu.has_value();
      values_.emplace_back();
      peak_share_.emplace_back();
    }
    const std::size_t i = it->second;
    figure_spread& s = spreads_[i];
    const auto where = [&] {
      if (row.host.empty()) return gpu ? "GPU " + *gpu : std::string("the machine");
      return row.host + (gpu ? " GPU " + *gpu : std::string());
    };
    if (s.count == 0 || row.value < s.lowest) {
      s.lowest = row.value;
      s.lowest_at = where();
    }
    if (s.count == 0 || row.value > s.highest) {
      s.highest = row.value;
      s.highest_at = where();
    }
    ++s.count;
    s.noisy += row.noisy ? 1 : 0;
    s.unverified += row.verified == false ? 1 : 0;
    values_[i].push_back(row.value);
    // The peak is the profile's, the same for every GPU: a figure's share of it per unit.
    if (!peak_share_[i] && row.percent_of_peak && row.value != 0) {
      peak_share_[i] = *row.percent_of_peak / row.value;
    }
  }

  [[nodiscard]] std::vector<figure_spread> finish() {
    for (std::size_t i = 0; i < spreads_.size(); ++i) {
      const double median = summarize(values_[i]).median;
      spreads_[i].median = median;
      if (peak_share_[i]) spreads_[i].percent_of_peak = *peak_share_[i] * median;
    }
    return std::move(spreads_);
  }

 private:
  std::vector<figure_spread> spreads_;
  std::vector<std::vector<double>> values_;
  std::vector<std::optional<double>> peak_share_;
  std::unordered_map<std::string, std::size_t> at_;
};

std::string machine_line(const system_info& sys, const results_document& doc) {
  std::string line = sys.host.empty() ? std::string("unnamed host") : sys.host;
  line += ": " + (sys.cpu.model.empty() ? std::string("unknown CPU") : sys.cpu.model);
  if (sys.cpu.cores > 0) line += " (" + std::to_string(sys.cpu.cores) + " cores)";
  if (sys.memory_bytes > 0) line += ", " + format_bytes(sys.memory_bytes) + " RAM";
  if (sys.gpus.empty()) {
    line += ", no GPU";
  } else {
    std::map<std::string, int> models;
    for (const auto& g : sys.gpus) ++models[g.name];
    for (const auto& [name, count] : models) line += ", " + std::to_string(count) + "x " + name;
    if (!sys.gpu_status.driver_version.empty()) {
      line += ", driver " + sys.gpu_status.driver_version;
    }
  }
  if (!doc.nodes.empty()) line += "; " + std::to_string(doc.nodes.size()) + " nodes";
  return line;
}

std::vector<time_row> time_spent(const results_document& doc) {
  struct tally {
    std::size_t cases = 0;
    std::map<int, double> seconds_by_rank;
  };
  std::map<std::string, tally> by_id;
  for (const result& r : doc.results) {
    if (!r.wall_s) continue;
    tally& t = by_id[r.id];
    ++t.cases;
    t.seconds_by_rank[r.rank.value_or(0)] += *r.wall_s;
  }
  std::vector<time_row> rows;
  double total = 0;
  for (const auto& [id, t] : by_id) {
    double longest = 0;
    for (const auto& [rank, seconds] : t.seconds_by_rank) longest = std::max(longest, seconds);
    rows.push_back({id, t.cases, longest, 0});
    total += longest;
  }
  for (time_row& row : rows) row.share = total > 0 ? row.seconds / total : 0;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const time_row& a, const time_row& b) { return a.seconds > b.seconds; });
  return rows;
}

}  // namespace

std::string samples_unit(const model::sizing& s) {
  return s.sample_unit == "image"      ? "images/s"
         : s.sample_unit == "sequence" ? "sequences/s"
                                       : "samples/s";
}

std::string range_text(const model::sizing& s) {
  if (!s.interval) return "-";
  return format_number(s.interval->low) + " to " + format_number(s.interval->high);
}

std::string range_header() {
  return format_number(model::band_coverage * 100) + "% range";
}

namespace {

// The statuses of the rules that did not pass, in the order a reader acts on them.
constexpr std::array<acceptance::rule_status, 3> not_passed_statuses = {
    acceptance::rule_status::fail, acceptance::rule_status::missing, acceptance::rule_status::warn};

}  // namespace

std::vector<const acceptance::rule_outcome*> not_passed(const machine_report& report) {
  std::vector<const acceptance::rule_outcome*> out;
  if (!report.acceptance) return out;
  // One pass over the outcomes, a fleet's 1.3 million, each kept under its status's place.
  std::array<std::vector<const acceptance::rule_outcome*>, not_passed_statuses.size()> by_status;
  for (const acceptance::rule_outcome& r : report.acceptance->rules) {
    const auto* at = std::find(not_passed_statuses.begin(), not_passed_statuses.end(), r.status);
    if (at != not_passed_statuses.end()) by_status[at - not_passed_statuses.begin()].push_back(&r);
  }
  for (const auto& some : by_status) out.insert(out.end(), some.begin(), some.end());
  return out;
}

std::size_t not_passed_count(const acceptance::validation::status_counts& counted) {
  std::size_t n = 0;
  for (const acceptance::rule_status s : not_passed_statuses) n += counted[s];
  return n;
}

std::optional<double> usd_per_million_samples(double usd_per_hour_per_node,
                                              const model::sizing& s) {
  if (!s.memory.fits || s.predicted_samples_per_s <= 0) return std::nullopt;
  return usd_per_hour_per_node * s.nodes / (s.predicted_samples_per_s * 3600) * 1e6;
}

std::string duration_text(double seconds) {
  const auto whole = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  const long long hours = whole / 3600;
  const long long minutes = whole % 3600 / 60;
  const long long rest = whole % 60;
  if (hours > 0) {
    return std::to_string(hours) + " h" +
           (minutes > 0 ? " " + std::to_string(minutes) + " min" : "");
  }
  if (minutes > 0) {
    return std::to_string(minutes) + " min" + (rest > 0 ? " " + std::to_string(rest) + " s" : "");
  }
  return std::to_string(rest) + " s";
}

std::string money(const std::optional<double>& usd) {
  if (!usd) return "-";
  std::string text("$");  // appended: "$" + text draws a gcc 12 false positive
  return text.append(format_number(*usd));
}

std::vector<std::string> rule_cells(const acceptance::rule_outcome& r) {
  return {r.rule,  acceptance::named_subject(r),     r.measured, r.expected,
          r.floor, std::string(to_string(r.status)), r.detail};
}

const std::vector<std::string>& spread_header() {
  static const std::vector<std::string> header{
      "benchmark", "configuration", "metric",         "measured on", "median",      "lowest",
      "highest",   "unit",          "% of datasheet", "noisy",       "not verified"};
  return header;
}

std::vector<std::string> spread_cells(const figure_spread& s) {
  return {s.benchmark,
          s.axes,
          s.metric,
          std::to_string(s.count) + (s.per_gpu ? " GPUs" : " nodes"),
          format_number(s.median),
          format_number(s.lowest) + " (" + s.lowest_at + ")",
          format_number(s.highest) + " (" + s.highest_at + ")",
          s.unit,
          s.percent_of_peak ? format_number(*s.percent_of_peak) + "%" : "",
          std::to_string(s.noisy),
          std::to_string(s.unverified)};
}

std::string spread_intro(const machine_report& report) {
  return std::to_string(report.figures.size()) + " figures, more than " +
         std::to_string(max_figure_rows) +
         ": each is shown once over every GPU that measured it, with the median of their "
         "medians and where the lowest and highest were measured. The CSV report has every "
         "figure.";
}

std::string fits_text(const model::sizing& s) {
  const model::memory_verdict& m = s.memory;
  std::string text = !m.fits ? "no, "
                     : m.within_headroom
                         ? "yes, "
                         : "yes, above the " + format_number(m.headroom * 100) + "% headroom: ";
  text += format_number(m.per_gpu_GiB) + " " + std::string(vocabulary::units::GiB.symbol);
  if (m.capacity_GiB) text += " of " + format_number(*m.capacity_GiB);
  return text;
}

std::string limit_basis(const model::sizing& s) {
  // memory_capacity is not a component: the capacity's own basis stands for it.
  if (!s.memory.fits) return std::string(to_string(s.memory.capacity_basis));
  for (const auto& c : s.components) {
    if (c.name == s.limiting_component) return basis_text(c);
  }
  return "";
}

std::string basis_text(const model::component& c) {
  return std::string(to_string(c.basis)) + (c.noisy.empty() ? "" : ", noisy");
}

std::string cv_text(double cv, bool noisy) {
  return format_number(cv * 100) + "%" + (noisy ? " noisy" : "");
}

machine_report make_report(results_document doc, const std::string& file,
                           std::vector<std::string> workloads,
                           const std::vector<std::string>& settings) {
  machine_report report;
  report.source = std::filesystem::path(file).filename().string();
  const system_info& sys = doc.nodes.empty() ? doc.system : doc.nodes.front().system;
  report.summary = machine_line(sys, doc);
  // The validation runs beside the figures and the sizing, which only read the document too: a
  // fleet's validation has stretches on one core (its index, the figure rules) that the figure
  // table fills.
  std::string no_spec;
  const std::optional<std::string> spec_name = acceptance::spec_for(doc, no_spec);
  std::future<acceptance::validation> validating;
  if (spec_name) {
    validating = std::async(std::launch::async, [&doc, source = report.source, &spec_name] {
      return acceptance::validate(doc, source, acceptance::load_spec(*spec_name));
    });
  }

  try {
    report.profile = model::profile_from_results(doc, file);
  } catch (const input_error& e) {
    report.profile_error = e.what();
  }
  if (report.profile) {
    // A bad --set is the user's error, not the file's: it propagates (exit 2).
    for (const auto& setting : settings) model::apply_setting(*report.profile, setting);
    if (!settings.empty())
      report.summary += " [sized with --set " + join(settings, " --set ") + "]";
  }
  const model::hardware_profile* hw = report.profile ? &*report.profile : nullptr;

  std::size_t figure_count = 0;
  for (const result& r : doc.results) {
    if (r.status == result_status::ok) figure_count += r.metrics.size();
  }
  report.figures.reserve(figure_count);
  spread_builder spreads;
  for (const result& r : doc.results) {
    if (r.status != result_status::ok) {
      report.not_run.push_back({r.id, format_axes(r.axes),
                                r.status == result_status::skipped ? "skipped" : "failed",
                                r.status == result_status::skipped ? r.reason : r.error});
      continue;
    }
    const std::string axes = format_axes(r.axes);  // once for the result's metrics
    for (const auto& [metric, stats] : r.metrics) {
      figure_row row;
      row.benchmark = r.id;
      row.axes = axes;
      row.metric = metric;
      row.unit = stats.unit.unit;
      row.value = stats.median;
      row.cv = stats.cv;
      row.noisy = vocabulary::is_noisy(stats);
      row.n = stats.n;
      row.verified = r.verified;
      row.host = r.host;
      add_percent_of_peak(row, r, hw);
      if (figure_count > max_figure_rows) spreads.add(row, r);
      report.figures.push_back(std::move(row));
    }
  }
  report.spreads = spreads.finish();
  report.time_spent = time_spent(doc);
  report.run_seconds = run_seconds(doc.meta);
  if (hw != nullptr) {
    for (const auto& [key, fig] : hw->figures) {
      if (fig.from == model::basis::measured) continue;
      report.assumed.push_back({key, fig.value, std::string(model::to_string(fig.from)),
                                fig.source + (fig.note.empty() ? "" : " (" + fig.note + ")")});
    }
  }

  // Sizing of the workloads: every one is tried; one that cannot be sized says why.
  if (workloads.empty()) workloads = model::default_workloads();
  std::optional<double> price;  // per node and hour, where the profile has one
  if (hw != nullptr) price = hw->value(model::fig::price);
  const model::constants constants = model::load_constants();
  for (const auto& name : workloads) {
    const model::workload w = model::load_workload(name);
    workload_row row;
    row.workload = w.name;
    if (!report.profile_error.empty()) {
      row.error = report.profile_error;
    } else {
      try {
        row.sizing = model::predict(*hw, w, constants);
      } catch (const input_error& e) {
        row.error = e.what();
      }
    }
    if (row.sizing && price.has_value()) {
      const double per_node = price.value();
      row.usd_per_hour = per_node * row.sizing->nodes;
      row.usd_per_million_samples = usd_per_million_samples(per_node, *row.sizing);
    }
    report.workloads.push_back(std::move(row));
  }

  if (validating.valid()) {
    report.acceptance = validating.get();
    report.verdict = report.acceptance->verdict();
  } else {
    report.verdict = "not validated: " + no_spec + "; gpubench validate " + report.source +
                     " --spec NAME checks it against a spec you choose";
  }
  const run_meta& m = doc.meta;
  report.environment = {{"gpubench", m.version + (m.git.empty() ? "" : " (" + m.git + ")")},
                        {"build", m.build_type + ", " + m.compiler},
                        {"suite", m.suite},
                        {"started", m.started},
                        {"finished", m.finished},
                        {"host", sys.host},
                        {"os", sys.os + " " + sys.kernel},
                        {"cpu", sys.cpu.model + ", " + std::to_string(sys.cpu.sockets) +
                                    " socket(s), " + std::to_string(sys.cpu.cores) + " cores, " +
                                    std::to_string(sys.cpu.threads) + " threads"},
                        {"memory", format_bytes(sys.memory_bytes)},
                        {"gpus", std::to_string(sys.gpus.size())},
                        {"gpu driver", m.driver.empty() ? "none" : m.driver},
                        {"cuda runtime", m.cuda.empty() ? "none" : m.cuda},
                        {"nccl", m.nccl.empty() ? "none" : m.nccl},
                        {"mpi ranks", std::to_string(m.mpi_ranks)}};
  if (!sys.gpu_status.reason.empty())
    report.environment.emplace_back("gpu discovery", sys.gpu_status.reason);
  for (const auto& warning : m.warnings) report.environment.emplace_back("warning", warning);
  if (m.interrupted) report.environment.emplace_back("interrupted", "yes: partial results");
  // Last: the validation above points into the rules, not the results, so the move is safe.
  report.results = std::move(doc);
  return report;
}

std::string render_report(const report_writer& writer, const machine_report& report) {
  std::ostringstream text;
  writer.write(text, report);
  return std::move(text).str();
}

void write_report_file(const report_writer& writer, const machine_report& report,
                       const std::string& path, at_symlink links) {
  write_file_atomically(path, render_report(writer, report), links);
}

void write_run_reports(const machine_report& report, const std::filesystem::path& results_path) {
  const std::filesystem::path folder = results_path.parent_path();  // the run's claimed folder
  write_report_file(html_writer{}, report, (folder / "report.html").string(), at_symlink::replace);
  write_report_file(markdown_writer{}, report, (folder / "report.md").string(),
                    at_symlink::replace);
}

}  // namespace gpubench::reports
