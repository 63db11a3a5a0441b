// gpubench report / compare: results files into reports people read.
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/results.hpp"
#include "gpubench/text.hpp"
#include "reports/compare.hpp"
#include "reports/report.hpp"
#include "reports/validate.hpp"

namespace gpubench::cli {
namespace {

void write_report(const reports::report_writer& writer, const reports::machine_report& report,
                  const std::string& path) {
  std::ostringstream text;
  writer.write(text, report);
  write_file_atomically(path, text.str());
}

}  // namespace

void write_run_reports(const reports::machine_report& report,
                       const std::filesystem::path& results_path) {
  write_report(reports::html_writer{}, report,
               (results_path.parent_path() / "report.html").string());
  write_report(reports::markdown_writer{}, report,
               (results_path.parent_path() / "report.md").string());
}

int report_command(const report_args& args) {
  const results_document doc = read_results(args.results);
  const reports::machine_report report =
      reports::make_report(doc, args.results, args.workloads, args.settings);
  bool wrote = false;
  if (!args.html.empty()) {
    write_report(reports::html_writer{}, report, args.html);
    std::cout << "wrote " << args.html << "\n";
    wrote = true;
  }
  if (!args.markdown.empty()) {
    write_report(reports::markdown_writer{}, report, args.markdown);
    std::cout << "wrote " << args.markdown << "\n";
    wrote = true;
  }
  if (!args.csv.empty()) {
    write_report(reports::csv_writer{}, report, args.csv);
    std::cout << "wrote " << args.csv << "\n";
    wrote = true;
  }
  if (!wrote) reports::markdown_writer{}.write(std::cout, report);
  return exit_ok;
}

int compare_command(const compare_args& args) {
  const reports::comparison c = reports::compare_machines(args.machines, args.workloads);
  if (!args.html.empty()) {
    write_file_atomically(args.html, reports::to_html(c));
  }
  if (args.as_json) {
    std::cout << reports::to_json(c).dump(2) << "\n";
  } else {
    std::cout << reports::to_text(c);
    if (!args.html.empty()) std::cout << "wrote " << args.html << "\n";
  }
  return exit_ok;
}

int validate_command(const validate_args& args) {
  const results_document doc = read_results(args.results);
  std::string spec_name = args.spec;
  if (spec_name.empty()) {
    std::string why_not;
    if (const auto found = reports::spec_for(doc, why_not)) {
      spec_name = *found;
    } else if (args.baselines.empty()) {
      throw input_error(args.results + ": no spec applies (" + why_not +
                        "); name one with --spec (" + join(reports::spec_names()) +
                        ") or give --baseline files");
    }
  }
  reports::validation v;
  if (!spec_name.empty()) {
    v = reports::validate(doc, args.results, reports::load_spec(spec_name));
  } else {
    v.results_file = args.results;
  }
  if (!args.baselines.empty()) {
    reports::check_against_baseline(v, doc, reports::make_baseline(args.baselines),
                                    args.baseline_tolerance_pct);
  }
  if (args.as_json) {
    std::cout << reports::to_json(v).dump(2) << "\n";
  } else {
    std::cout << reports::to_text(v);
  }
  return v.passed() ? exit_ok : exit_failure;
}

}  // namespace gpubench::cli
