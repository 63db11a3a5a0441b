// gpubench report / compare: results files into reports people read.
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/results.hpp"
#include "reports/compare.hpp"
#include "reports/report.hpp"

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

}  // namespace gpubench::cli
