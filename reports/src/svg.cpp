#include "gpubench/reports/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpubench/core/format.hpp"

namespace gpubench::reports {
namespace {

// Colour-blind-safe palette (Okabe-Ito), the accent first.
constexpr const char* palette[] = {"#d55e00", "#0072b2", "#009e73", "#cc79a7",
                                   "#e69f00", "#56b4e9", "#000000", "#f0e442"};
constexpr const char* muted = "#8aa4bf";

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string open_figure(std::string_view id, std::string_view title, int width, int height) {
  return "<figure class=\"chart\" id=\"" + escape_html(id) + "\"><figcaption>" +
         escape_html(title) +
         "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         std::to_string(width) + " " + std::to_string(height) +
         "\" style=\"max-width:" + std::to_string(width) + "px\" role=\"img\" aria-label=\"" +
         escape_html(title) + "\">";
}

std::string close_figure() {
  return "</svg></figure>\n";
}

std::string text(double x, double y, std::string_view content, std::string_view anchor = "start",
                 std::string_view extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + std::string(anchor) +
         "\"" + std::string(extra) + ">" + escape_html(content) + "</text>";
}

std::string line(double x1, double y1, double x2, double y2, std::string_view style) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" " + std::string(style) + "/>";
}

// "Nice" linear ticks from 0 to at least `top`.
std::vector<double> linear_ticks(double top) {
  if (top <= 0) top = 1;
  const double raw = top / 5;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = 0; t < top + step * 0.999; t += step) ticks.push_back(t);
  return ticks;
}

// Ticks of a linear axis from `lo` to `hi`: the multiples of a 1-2-2.5-5 step inside the range, so
// a time axis reads 0, 2, 4 s rather than the samples' own 0.51, 2.01 s.
std::vector<double> linear_ticks_between(double lo, double hi) {
  if (hi <= lo) return {lo};
  const std::vector<double> from_zero = linear_ticks(hi - lo);
  const double step = from_zero.size() > 1 ? from_zero[1] : hi - lo;
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

// A legend label in lines of at most `width` characters, broken between words (a longer word
// is cut), so no label runs past the chart's edge.
std::vector<std::string> wrap(std::string_view label, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < label.size()) {
    const std::size_t space = label.find(' ', at);
    std::string_view word =
        label.substr(at, space == std::string_view::npos ? std::string_view::npos : space - at);
    at = space == std::string_view::npos ? label.size() : space + 1;
    while (!word.empty()) {
      const std::size_t room = line.empty() ? width : width - std::min(width, line.size() + 1);
      if (word.size() <= room) {
        if (!line.empty()) line += ' ';
        line += word;
        word = {};
      } else if (!line.empty()) {
        lines.push_back(std::move(line));
        line.clear();
      } else {
        lines.emplace_back(word.substr(0, width));
        word.remove_prefix(width);
      }
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string format_x(double x, x_scale scale) {
  if (scale == x_scale::log2_bytes) return format_bytes(static_cast<std::uint64_t>(x));
  return format_number(x);
}

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string bar_chart(std::string_view id, std::string_view title, const std::vector<bar>& bars,
                      std::string_view unit) {
  constexpr int width = 720;
  constexpr int label_w = 150;
  constexpr int value_w = 170;
  constexpr int row_h = 26;
  constexpr double cap = 5;  // the axis ends at cap x the highlighted bar
  double top = 0;
  double limit = 0;
  for (const bar& b : bars) {
    top = std::max(top, b.value);
    if (b.highlight) limit = std::max(limit, b.value);
  }
  // Ceilings far above the limit would squeeze the bars that matter: the axis stops at the first
  // tick past 5x the highlighted bar (a 1-2-2.5-5 step: at most 7x) and longer bars are cut at
  // the edge, marked, their value printed.
  if (limit > 0) top = std::min(top, cap * limit);
  const auto ticks = linear_ticks(top);
  const double scale_top = ticks.back();
  const bool any_clipped =
      std::any_of(bars.begin(), bars.end(), [&](const bar& b) { return b.value > scale_top; });
  const int height = static_cast<int>(bars.size()) * row_h + 36 + (any_clipped ? 16 : 0);
  const double axis_y = static_cast<int>(bars.size()) * row_h + 8;
  const double plot_w = width - label_w - value_w;
  std::string out = open_figure(id, title, width, height);
  for (const double t : ticks) {
    const double x = label_w + plot_w * t / scale_top;
    out += line(x, 4, x, axis_y, "class=\"grid\"");
    out += text(x, axis_y + 16, format_number(t), "middle", " class=\"tick\"");
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const bar& b = bars[i];
    const double y = 6 + static_cast<double>(i) * row_h;
    const bool clipped = b.value > scale_top;
    const double w = std::max(1.0, plot_w * std::min(b.value, scale_top) / scale_top);
    out += text(label_w - 8, y + 15, b.label, "end");
    out += "<rect class=\"bar" + std::string(b.highlight ? " limit" : "") +
           (clipped ? " capped" : "") + "\" x=\"" + num(label_w) + "\" y=\"" + num(y) +
           "\" width=\"" + num(w) + "\" height=\"18\" fill=\"" +
           (b.highlight ? palette[0] : muted) + "\"><title>" + escape_html(b.label) + ": " +
           escape_html(format_number(b.value)) + " " + escape_html(unit) + "</title></rect>";
    if (clipped) {
      // An axis break across the bar's end: the bar goes on beyond the axis.
      const double x = label_w + w;
      out += "<path class=\"cap-marker\" d=\"M" + num(x - 10) + " " + num(y + 20) + " L" +
             num(x - 4) + " " + num(y - 2) + " M" + num(x - 5) + " " + num(y + 20) + " L" +
             num(x + 1) + " " + num(y - 2) + "\" stroke=\"#fff\" stroke-width=\"2.5\"/>";
    }
    out += text(label_w + w + 6, y + 15,
                (clipped ? "» " : "") + format_number(b.value) + " " + std::string(unit) +
                    (b.note.empty() ? "" : " " + b.note),
                "start", b.highlight ? " font-weight=\"bold\"" : "");
  }
  if (any_clipped) {
    out += text(label_w, height - 4,
                "» beyond the axis, which ends at its first tick past " + format_number(cap) +
                    "x the highlighted bar",
                "start", " class=\"tick\"");
  }
  return out + close_figure();
}

std::string line_chart(std::string_view id, std::string_view title,
                       const std::vector<series>& lines, std::string_view x_label,
                       std::string_view y_label, x_scale scale) {
  constexpr int width = 720;
  constexpr int height = 340;
  constexpr double left = 64;
  constexpr double right = 150;  // legend
  constexpr double top_margin = 12;
  constexpr double bottom = 48;
  double x_min = std::numeric_limits<double>::infinity();
  double x_max = -x_min;
  double y_max = 0;
  for (const series& s : lines) {
    for (const auto& [x, y] : s.points) {
      x_min = std::min(x_min, x);
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  const bool log = scale != x_scale::linear;
  auto fx = [&](double x) {
    const double plot_w = width - left - right;
    if (x_max <= x_min) return left + plot_w / 2;
    const double t =
        log ? std::log2(x / x_min) / std::log2(x_max / x_min) : (x - x_min) / (x_max - x_min);
    return left + plot_w * t;
  };
  const auto y_ticks = linear_ticks(y_max);
  const double y_top = y_ticks.back();
  auto fy = [&](double y) { return top_margin + (height - top_margin - bottom) * (1 - y / y_top); };
  std::string out = open_figure(id, title, width, height);
  for (const double t : y_ticks) {
    out += line(left, fy(t), width - right, fy(t), "class=\"grid\"");
    out += text(left - 6, fy(t) + 4, format_number(t), "end", " class=\"tick\"");
  }
  // x ticks: on log scales every measured x (powers of two the data hit); on a linear one
  // (time) round numbers.
  std::vector<double> xs;
  if (log) {
    for (const series& s : lines) {
      for (const auto& p : s.points) xs.push_back(p.first);
    }
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  } else if (x_min <= x_max) {
    xs = linear_ticks_between(x_min, x_max);
  }
  const std::size_t stride = std::max<std::size_t>(1, (xs.size() + 7) / 8);
  for (std::size_t i = 0; i < xs.size(); i += stride) {
    out +=
        text(fx(xs[i]), height - bottom + 16, format_x(xs[i], scale), "middle", " class=\"tick\"");
  }
  out += text(left + (width - left - right) / 2, height - 8, x_label, "middle");
  out += text(
      14, top_margin + (height - top_margin - bottom) / 2, y_label, "middle",
      " transform=\"rotate(-90 14 " + num(top_margin + (height - top_margin - bottom) / 2) + ")\"");
  // Legend lines of 12 px text fit the right margin at about 7 px a character.
  const double legend_x = width - right + 36;
  const auto legend_chars = static_cast<std::size_t>((width - legend_x) / 7);
  double ly = top_margin + 14;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const series& s = lines[i];
    const char* colour = palette[(i + 1) % std::size(palette)];
    std::string path;
    for (const auto& [x, y] : s.points) {
      path += (path.empty() ? "M" : " L") + num(fx(x)) + " " + num(fy(y));
    }
    out += "<path class=\"series\" d=\"" + path + "\" fill=\"none\" stroke=\"" + colour +
           "\" stroke-width=\"2\"/>";
    for (const auto& [x, y] : s.points) {
      out += "<circle cx=\"" + num(fx(x)) + "\" cy=\"" + num(fy(y)) + "\" r=\"3\" fill=\"" +
             colour + "\"><title>" + escape_html(s.name) + " at " +
             escape_html(format_x(x, scale)) + ": " + escape_html(format_number(y)) +
             "</title></circle>";
    }
    out += line(width - right + 12, ly - 4, width - right + 30, ly - 4,
                std::string("stroke=\"") + colour + "\" stroke-width=\"3\"");
    const std::vector<std::string> label = wrap(s.name, legend_chars);
    out += "<text class=\"legend\" x=\"" + num(legend_x) + "\" y=\"" + num(ly) + "\">";
    for (std::size_t k = 0; k < label.size(); ++k) {
      out += "<tspan x=\"" + num(legend_x) + "\" dy=\"" + (k == 0 ? "0" : "14") + "\">" +
             escape_html(label[k]) + "</tspan>";
    }
    out += "</text>";
    ly += 14 * static_cast<double>(label.size()) + 4;
  }
  return out + close_figure();
}

std::string heat_map(std::string_view id, std::string_view title,
                     const std::vector<std::string>& rows, const std::vector<std::string>& columns,
                     const std::vector<std::vector<std::optional<double>>>& cells,
                     std::string_view unit) {
  constexpr double label_w = 90;
  constexpr double cell = 64;
  const int width = static_cast<int>(label_w + cell * static_cast<double>(columns.size()) + 20);
  const int height = static_cast<int>(40 + cell * 0.6 * static_cast<double>(rows.size()) + 30);
  double top = 0;
  for (const auto& row : cells) {
    for (const auto& v : row) {
      if (v) top = std::max(top, *v);
    }
  }
  std::string out = open_figure(id, title, width, height);
  out += text(label_w - 8, 18, "from \\ to", "end", " class=\"tick\"");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    out += text(label_w + cell * (static_cast<double>(c) + 0.5), 30, columns[c], "middle");
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = 40 + cell * 0.6 * static_cast<double>(r);
    out += text(label_w - 8, y + cell * 0.38, rows[r], "end");
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto& v = c < cells[r].size() ? cells[r][c] : std::nullopt;
      const double x = label_w + cell * static_cast<double>(c);
      if (!v) {
        out += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(cell - 2) +
               "\" height=\"" + num(cell * 0.6 - 2) +
               "\" fill=\"#f2f2f2\"><title>not measured</title></rect>";
        out += text(x + cell / 2, y + cell * 0.38, "-", "middle", " class=\"tick\"");
        continue;
      }
      // Light (low) to dark blue (high); the text flips to white on dark cells.
      const double t = top > 0 ? *v / top : 0;
      const int shade = static_cast<int>(235 - 175 * t);
      char fill[16];
      std::snprintf(fill, sizeof fill, "#%02x%02x%02x", shade / 3, shade / 2 + 40, 240);
      out += "<rect class=\"cell\" x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" +
             num(cell - 2) + "\" height=\"" + num(cell * 0.6 - 2) + "\" fill=\"" + fill +
             "\"><title>" + escape_html(rows[r]) + " to " + escape_html(columns[c]) + ": " +
             escape_html(format_number(*v)) + " " + escape_html(unit) + "</title></rect>";
      out += text(x + cell / 2, y + cell * 0.38, format_number(*v), "middle",
                  t > 0.55 ? " fill=\"#ffffff\"" : "");
    }
  }
  out += text(label_w, height - 8, "values in " + std::string(unit), "start", " class=\"tick\"");
  return out + close_figure();
}

std::string roofline(std::string_view id, std::string_view title, double peak_tflops,
                     double bandwidth_GBps, const std::vector<roofline_point>& points) {
  constexpr int width = 720;
  constexpr int height = 360;
  constexpr double left = 64;
  constexpr double right = 170;
  constexpr double top_margin = 12;
  constexpr double bottom = 48;
  // Intensity from 1 to 10^4 FLOP/byte (wider when a workload falls outside), TFLOP/s on log10.
  double i_min = 1;
  double i_max = 1e4;
  for (const auto& p : points) {
    if (p.intensity > 0) {
      i_min = std::min(i_min, std::pow(10, std::floor(std::log10(p.intensity))));
      i_max = std::max(i_max, std::pow(10, std::ceil(std::log10(p.intensity))));
    }
  }
  const double y_max = std::pow(10, std::ceil(std::log10(peak_tflops * 1.05)));
  const double y_min = std::min(y_max / 1e4, bandwidth_GBps * i_min / 1e3);
  auto fx = [&](double i) {
    return left + (width - left - right) * std::log10(i / i_min) / std::log10(i_max / i_min);
  };
  auto fy = [&](double t) {
    return top_margin +
           (height - top_margin - bottom) * (1 - std::log10(t / y_min) / std::log10(y_max / y_min));
  };
  std::string out = open_figure(id, title, width, height);
  for (double i = i_min; i <= i_max * 1.0001; i *= 10) {
    out += line(fx(i), top_margin, fx(i), height - bottom, "class=\"grid\"");
    out += text(fx(i), height - bottom + 16, format_number(i), "middle", " class=\"tick\"");
  }
  for (double t = y_min; t <= y_max * 1.0001; t *= 10) {
    out += line(left, fy(t), width - right, fy(t), "class=\"grid\"");
    out += text(left - 6, fy(t) + 4, format_number(t), "end", " class=\"tick\"");
  }
  out += text(left + (width - left - right) / 2, height - 8,
              "arithmetic intensity (FLOP per byte of GPU memory traffic)", "middle");
  out += text(14, 180, "TFLOP/s per GPU", "middle", " transform=\"rotate(-90 14 180)\"");
  // The roof: bandwidth slope up to the ridge, then flat at the peak.
  const double ridge = peak_tflops * 1e3 / bandwidth_GBps;
  const double start_y = std::max(y_min, bandwidth_GBps * i_min / 1e3);
  const double start_i = start_y * 1e3 / bandwidth_GBps;
  out += "<path class=\"roof\" d=\"M" + num(fx(start_i)) + " " + num(fy(start_y)) + " L" +
         num(fx(std::min(ridge, i_max))) + " " +
         num(fy(std::min(peak_tflops, bandwidth_GBps * i_max / 1e3))) + " L" + num(fx(i_max)) +
         " " + num(fy(std::min(peak_tflops, bandwidth_GBps * i_max / 1e3))) +
         "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"2.5\"/>";
  out += text(fx(i_max) - 4, fy(peak_tflops) - 6, format_number(peak_tflops) + " TFLOP/s", "end",
              " class=\"tick\"");
  out += text(fx(std::max(i_min * 1.3, start_i * 1.3)), fy(start_y) - 10,
              format_number(bandwidth_GBps) + " GB/s", "start", " class=\"tick\"");
  for (std::size_t k = 0; k < points.size(); ++k) {
    const auto& p = points[k];
    if (p.intensity <= 0 || p.tflops <= 0) continue;
    const char* colour = palette[(k + 1) % std::size(palette)];
    out += "<circle class=\"workload\" cx=\"" + num(fx(p.intensity)) + "\" cy=\"" +
           num(fy(std::max(p.tflops, y_min))) + "\" r=\"6\" fill=\"" + colour + "\"><title>" +
           escape_html(p.name) + ": " + escape_html(format_number(p.intensity)) + " FLOP/byte, " +
           escape_html(format_number(p.tflops)) + " TFLOP/s</title></circle>";
    const double ly = top_margin + 14 + static_cast<double>(k) * 18;
    out += "<circle cx=\"" + num(width - right + 18) + "\" cy=\"" + num(ly - 4) +
           "\" r=\"5\" fill=\"" + colour + "\"/>";
    out += text(width - right + 28, ly, p.name);
  }
  return out + close_figure();
}

}  // namespace gpubench::reports
