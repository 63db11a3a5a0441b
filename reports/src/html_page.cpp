#include "gpubench/reports/html_page.hpp"

#include "gpubench/reports/svg.hpp"

namespace gpubench::reports {
namespace {

// Readable in a narrow window (tables scroll sideways, charts scale), prints on white.
constexpr const char* style = R"(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d1d1f;
 max-width:1100px;margin:0 auto;padding:16px;background:#fff}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:1.6em}
.machine{font-size:1.1em;font-weight:600}.verdict{padding:6px 10px;background:#f4f6f8;border-left:4px solid #0072b2}
.verdict.pass{border-left-color:#009e73}.verdict.warn{border-left-color:#e69f00}.verdict.fail{border-left-color:#d55e00}
details{margin:.6em 0}details summary{cursor:pointer;font-weight:600}
.note{color:#555;font-size:.9em}.advice{margin:.3em 0}
.scroll{overflow-x:auto;margin:.6em 0}
table{border-collapse:collapse;font-size:.88em;min-width:50%}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f8}td.em{font-weight:700;color:#b34700}
figure.chart{margin:1em 0;page-break-inside:avoid;break-inside:avoid}
figure.chart figcaption{font-weight:600;margin-bottom:4px}
figure.chart svg{width:100%;height:auto;max-width:760px;display:block}
svg text{font:12px system-ui,"DejaVu Sans",sans-serif;fill:#1d1d1f}svg text.tick{fill:#666;font-size:11px}
svg .grid{stroke:#e5e5e5;stroke-width:1}
@media print{body{max-width:none;padding:0}.scroll{overflow:visible}h2{page-break-after:avoid}}
)";

}  // namespace

html_table::html_table(std::vector<std::string> header, std::string id)
    : id_(std::move(id)), header_(std::move(header)) {}

void html_table::row(const std::vector<std::string>& cells, const std::vector<int>& emphasis) {
  body_ += "<tr>";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const bool em = i < emphasis.size() && emphasis[i] != 0;
    body_ += em ? "<td class=\"em\">" : "<td>";
    body_ += escape_html(cells[i]);
    body_ += "</td>";
  }
  body_ += "</tr>\n";
}

std::string html_table::render() const {
  std::string out = "<div class=\"scroll\"><table id=\"" + escape_html(id_) + "\"><thead><tr>";
  for (const auto& h : header_) out += "<th>" + escape_html(h) + "</th>";
  out += "</tr></thead><tbody>\n" + body_ + "</tbody></table></div>\n";
  return out;
}

html_page::html_page(const std::string& title) : title_(title) {}

void html_page::heading(int level, const std::string& text) {
  const std::string tag = std::to_string(level);
  body_ += "<h";
  body_ += tag;
  body_ += ">";
  body_ += escape_html(text);
  body_ += "</h";
  body_ += tag;
  body_ += ">\n";
}

void html_page::raw(const std::string& html) {
  body_ += html;
}

std::string html_page::finish() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; img-src data:\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         escape_html(title_) + "</title>\n<style>" + style + "</style></head>\n<body>\n" + body_ +
         "<footer class=\"note\">Written by gpubench. GB = 10^9 bytes, KiB/MiB/GiB = "
         "2^10/2^20/2^30; "
         "formulas in docs/methodology.md and docs/model.md.</footer>\n</body></html>\n";
}

}  // namespace gpubench::reports
