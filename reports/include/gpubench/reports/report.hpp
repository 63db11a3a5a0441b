// What a report shows, gathered once from a results file: the machine, every measured figure,
// the figures the sizing model took from the catalog, skipped and failed benchmarks, the sizing
// of the default workloads and the environment. The HTML, Markdown and CSV writers all print
// this one structure, so they carry the same numbers.
#pragma once

#include <filesystem>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/serving.hpp"

namespace gpubench::reports {

struct figure_row {
  std::string benchmark;
  std::string axes;  // "gpu=0 dtype=bf16 shape=8192"
  std::string metric;
  std::string unit;  // "GB/s", "TFLOP/s", "us", "/s"
  double value = 0;  // median
  double cv = 0;
  bool noisy = false;  // cv above vocabulary::noisy_cv
  std::size_t n = 0;
  std::optional<bool> verified;
  std::optional<double> percent_of_peak;  // of the datasheet figure, where one applies
  std::string peak_key;                   // the catalog figure it is compared with
  std::string host;                       // the node, in a multi-node job
};

// Past this many measured figures (a fleet's merged file: 100,000 GPUs give over a million) the
// Markdown and HTML reports show each figure once over every GPU that measured it (figure_spread)
// instead of a row per GPU; CSV keeps every figure.
inline constexpr std::size_t max_figure_rows = 2000;

// One figure (benchmark, configuration but the GPU, metric) over every GPU and node measuring it.
struct figure_spread {
  std::string benchmark;
  std::string axes;  // the configuration, without its gpu axis
  std::string metric;
  std::string unit;
  std::size_t count = 0;  // the figures: one per GPU, or per node where it has no gpu axis
  bool per_gpu = false;
  double median = 0;  // of their medians
  double lowest = 0;
  double highest = 0;
  std::string lowest_at;  // "node-0003 GPU 5"
  std::string highest_at;
  std::optional<double> percent_of_peak;  // the median's
  std::size_t noisy = 0;
  std::size_t unverified = 0;  // whose data check failed
};

struct assumed_row {
  std::string key;
  double value = 0;
  std::string basis;  // catalog | user
  std::string source;
};

struct not_run_row {
  std::string benchmark;
  std::string axes;
  std::string status;  // skipped | failed
  std::string reason;
};

// Where a run's time went, per benchmark: its cases' wall_s summed. In a multi-rank run the ranks
// run a benchmark at the same time, so the rank that took longest stands for it.
struct time_row {
  std::string benchmark;
  std::size_t cases = 0;  // on every rank
  double seconds = 0;
  double share = 0;  // of the seconds of every row
};

struct workload_row {
  std::string workload;
  std::optional<model::sizing> sizing;
  std::string error;  // why it could not be sized
  // What the job costs where the profile has a price (price.usd_per_hour per node, --set one):
  // per hour for all its nodes, and per million samples at the predicted rate (a job that does
  // not fit has no rate, so no cost per sample).
  std::optional<double> usd_per_hour;
  std::optional<double> usd_per_million_samples;
};

// report --serve: a model served on the machine, every layout of size --serve --search on its
// GPUs (docs/serving.md), drawn as the throughput-latency curve.
struct serving_section {
  std::string workload;
  model::serving_question question;            // the lengths, the targets, the engine
  std::vector<model::serving_layout> layouts;  // best first
  std::string error;                           // why there are none
};

struct machine_report {
  std::string source;   // the results file as named on the command line (its file name)
  std::string summary;  // the machine in one line
  std::string verdict;  // from `validate` where a spec matches, else why not
  std::optional<acceptance::validation> acceptance;  // every rule of that spec
  std::vector<figure_row> figures;
  std::vector<figure_spread> spreads;  // past max_figure_rows figures, else empty
  std::vector<assumed_row> assumed;
  std::vector<not_run_row> not_run;
  std::vector<time_row> time_spent;   // longest first; empty for a file without case times
  std::optional<double> run_seconds;  // how long the run took (meta.started to finished)
  std::vector<workload_row> workloads;
  std::optional<serving_section> serving;  // report --serve
  std::vector<std::pair<std::string, std::string>> environment;
  std::optional<model::hardware_profile> profile;  // absent when the file gives none
  std::string profile_error;                       // why not
  results_document results;
};

// `file` names the results file in the report (only its file name is printed). `workloads`
// empty: configs/workloads/default.json. `settings`: what-if changes to the profile (--set
// KEY=VALUE, docs/model.md), shown as such. Throws input_error for an unknown workload or setting.
[[nodiscard]] machine_report make_report(results_document doc, const std::string& file,
                                         std::vector<std::string> workloads,
                                         const std::vector<std::string>& settings = {});

// Sizes serving `workload` on the report's profile (report --serve); a profile that cannot serve
// it leaves the reason in the section. Throws input_error for a workload that is not a decoder.
void add_serving(machine_report& report, const std::string& workload,
                 const model::serving_question& question);

// One interface for every output format.
class report_writer {
 public:
  virtual ~report_writer() = default;
  virtual void write(std::ostream& out, const machine_report& report) const = 0;
};

class html_writer final : public report_writer {
 public:
  void write(std::ostream& out, const machine_report& report) const override;
};
class markdown_writer final : public report_writer {
 public:
  void write(std::ostream& out, const machine_report& report) const override;
};
class csv_writer final : public report_writer {
 public:
  void write(std::ostream& out, const machine_report& report) const override;
};

// One format of the report as text.
[[nodiscard]] std::string render_report(const report_writer& writer, const machine_report& report);
// Writes one format of the report to `path` atomically (write_file_atomically).
void write_report_file(const report_writer& writer, const machine_report& report,
                       const std::string& path, at_symlink links = at_symlink::follow);
// report.html and report.md beside a run's results.json, in the run's own folder: a link planted
// there is replaced.
void write_run_reports(const machine_report& report, const std::filesystem::path& results_path);

// The rules that did not pass, in the order a reader acts on them: failures, rules without a
// measurement, warnings. Empty without a validation.
[[nodiscard]] std::vector<const acceptance::rule_outcome*> not_passed(const machine_report& report);
// How many not_passed lists, from the validation's status counts.
[[nodiscard]] std::size_t not_passed_count(const acceptance::validation::status_counts& counted);
// $ per million samples = $/hour x nodes / (predicted samples/s x 3600) x 10^6
// (docs/methodology.md); nullopt for a job without a rate.
[[nodiscard]] std::optional<double> usd_per_million_samples(double usd_per_hour_per_node,
                                                            const model::sizing& s);
// "20 min 30 s", "1 h 5 min", "45 s".
[[nodiscard]] std::string duration_text(double seconds);

// "images/s", "sequences/s" or "samples/s" for a sizing.
[[nodiscard]] std::string samples_unit(const model::sizing& s);
// "21.1 to 27.8": the rate's error band (docs/model.md, "Error band"), or "-" without one; and
// the header of its column, "80% range".
[[nodiscard]] std::string range_text(const model::sizing& s);
[[nodiscard]] std::string range_header();
// Where the limiting component's figure came from (measured, catalog, anchored, ...).
[[nodiscard]] std::string limit_basis(const model::sizing& s);
// A component's basis as the tables print it: "measured", or "measured, noisy" where a
// measurement its ceiling rests on is noisy.
[[nodiscard]] std::string basis_text(const model::component& c);
// "2.3%", or "21.7% noisy" above vocabulary::noisy_cv: a measurement's spread in every table.
[[nodiscard]] std::string cv_text(double cv, bool noisy);
// "yes, 43.3 GiB of 79.6", "yes, above the 90% headroom: 75.8 GiB of 79.6" or "no, 92.8 GiB of
// 79.6": whether the job fits in GPU memory, as the report's tables say it.
[[nodiscard]] std::string fits_text(const model::sizing& s);
// "$98.3", or "-" without a figure: money in every table of the report and of compare.
[[nodiscard]] std::string money(const std::optional<double>& usd);
// A rule's row in the report's acceptance tables: rule, subject, measured, expected, floor,
// result, detail.
[[nodiscard]] std::vector<std::string> rule_cells(const acceptance::rule_outcome& r);
// The measured figures past max_figure_rows: the header, a figure's row, and the sentence that
// says what the table is.
[[nodiscard]] const std::vector<std::string>& spread_header();
[[nodiscard]] std::vector<std::string> spread_cells(const figure_spread& s);
[[nodiscard]] std::string spread_intro(const machine_report& report);

}  // namespace gpubench::reports
