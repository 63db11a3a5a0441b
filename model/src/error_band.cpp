// The error band (docs/model.md, "Error band"): how far published runs fell from the model's
// held-out predictions, per family, as the range a new prediction carries; and how often such a
// band, built without a source's rows, held that source's rows.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "components.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/model/calibration.hpp"
#include "presets.hpp"

namespace gpubench::model {

using detail::fmt;

namespace {

inline constexpr const char* bands_schema = "gpubench.error-bands/1";
// A family's own band needs min_family_rows rows from min_family_groups source groups; with fewer
// its predictions take every family's band joined with the family's own (shared_band). Rows of a
// few sources share their sources' bias: a band of them holds those sources, not the next one
// (held out, moe's 3 sources held 56% and transformer-xl's 2 held 45% in their own 80% bands).
bool has_own_band(int kept, std::size_t groups) {
  return kept >= min_family_rows && groups >= min_family_groups;
}
constexpr const char* every_family = "all";

// The methods a band is built for, with the prediction of a row each reads.
struct band_method {
  const char* name;
  const std::optional<double> calibration_row::*prediction;
};
constexpr band_method methods[] = {
    {"first_principles", &calibration_row::held_out},
    {"anchored", &calibration_row::anchored},
};

struct sample {
  double ratio;  // published / predicted
  std::string family;
  std::string group;
};

// The band of the samples a filter keeps (ratio_band).
// `groups`, where given, gets the source groups of the samples kept.
std::pair<double, double> band_of(const std::vector<sample>& samples, auto keep, int& kept,
                                  std::set<std::string>* groups = nullptr) {
  std::vector<band_sample> ratios;
  for (const sample& s : samples) {
    if (!keep(s)) continue;
    ratios.push_back({s.ratio, s.group});
    if (groups != nullptr) groups->insert(s.group);
  }
  kept = static_cast<int>(ratios.size());
  return ratio_band(std::move(ratios));
}

// Every family's band joined with the family's own (the same conformal ranks over its rows): the
// band of a family with too few rows or sources for one of its own. Its rows' errors may lean
// one way (a mechanism the model lacks), which every family's band alone would hide; its own
// band alone, from so few sources, would not hold the next source.
std::pair<double, double> shared_band(const std::vector<sample>& samples, const std::string& family,
                                      const std::string& left_out, int& kept) {
  auto band = band_of(
      samples, [&](const sample& s) { return s.group != left_out; }, kept);
  int own = 0;
  const auto mine = band_of(
      samples, [&](const sample& s) { return s.family == family && s.group != left_out; }, own);
  if (own > 0) band = {std::min(band.first, mine.first), std::max(band.second, mine.second)};
  return band;
}

// The family's band, or the shared one where it has too few rows or sources; `left_out` a source
// group the band is built without ("" none).
std::pair<double, double> family_band(const std::vector<sample>& samples, const std::string& family,
                                      const std::string& left_out, int& kept) {
  std::set<std::string> groups;
  const auto band = band_of(
      samples, [&](const sample& s) { return s.family == family && s.group != left_out; }, kept,
      &groups);
  if (has_own_band(kept, groups.size())) return band;
  return shared_band(samples, family, left_out, kept);
}

}  // namespace

std::pair<double, double> ratio_band(std::vector<band_sample> samples) {
  if (samples.empty()) return {1, 1};
  std::sort(samples.begin(), samples.end(),
            [](const band_sample& a, const band_sample& b) { return a.ratio < b.ratio; });
  std::map<std::string, int> rows_of;
  for (const band_sample& s : samples) ++rows_of[s.group];
  // Split-conformal ranks: a next ratio from the same population falls below the
  // floor((n+1)a)-th smallest with probability at most a, for any n of 1/a - 1 or more (fewer:
  // the smallest); the plain quantiles (type 7) held about (n-1)/(n+1) of the coverage.
  // The next ratio comes from a next source, and a source's rows share its bias: each row counts
  // n / (groups x its group's rows), so that a source of many rows weighs no more than one of
  // few (the CDF pooling of Dunn, Wasserman and Ramdas, JASA 2023). With one row per source, or
  // the same number in each, these are the plain ranks.
  const double n = static_cast<double>(samples.size());
  const double groups = static_cast<double>(rows_of.size());
  const double tail = (1 - band_coverage) / 2;
  const auto rank = [&](double k) {
    double cumulative = 0;
    for (const band_sample& s : samples) {
      cumulative += n / (groups * rows_of[s.group]);
      if (cumulative >= k - 1e-9) return s.ratio;
    }
    return samples.back().ratio;
  };
  // (1 - 0.8) / 2 is 0.09999... in binary: without the nudge, 20 x it floors to 1, not 2.
  constexpr double exact = 1e-9;
  return {rank(std::floor((n + 1) * tail + exact)), rank(std::ceil((n + 1) * (1 - tail) - exact))};
}

namespace {

// Per method: the families with a band of their own and all (`shared` false), or the families
// that take the shared band (true), each with its held-out coverage.
std::vector<error_band> bands_of(const std::vector<calibration_row>& calibrated, bool shared) {
  std::vector<error_band> out;
  for (const band_method& method : methods) {
    std::vector<sample> samples;
    std::vector<std::string> families;
    for (const calibration_row& r : calibrated) {
      const std::optional<double>& predicted = r.*method.prediction;
      if (!r.usable || !predicted || *predicted <= 0) continue;
      samples.push_back({r.published / *predicted, r.family, r.source_group});
      if (std::find(families.begin(), families.end(), r.family) == families.end()) {
        families.push_back(r.family);
      }
    }
    std::sort(families.begin(), families.end());
    families.emplace_back(every_family);
    for (const std::string& family : families) {
      const bool all = family == every_family;
      error_band b;
      b.family = family;
      b.method = method.name;
      const auto mine = [&](const sample& s) { return all || s.family == family; };
      std::set<std::string> groups;
      std::tie(b.low, b.high) = band_of(samples, mine, b.rows, &groups);
      // Too few rows or sources of a family: its predictions take the shared band.
      const bool own = all || has_own_band(b.rows, groups.size());
      if (b.rows == 0 || own == shared) continue;
      b.shared = shared;
      if (shared) {
        int every = 0;
        std::tie(b.low, b.high) = shared_band(samples, family, "", every);
      }
      // Held out by source: each row against the band its own source had no part in.
      int inside = 0;
      int counted = 0;
      for (const sample& s : samples) {
        if (!mine(s)) continue;
        int used = 0;
        const auto [low, high] =
            all ? band_of(
                      samples, [&](const sample& o) { return o.group != s.group; }, used)
                : family_band(samples, family, s.group, used);
        if (used == 0) continue;
        ++counted;
        inside += s.ratio >= low && s.ratio <= high ? 1 : 0;
      }
      b.held_out_coverage = counted > 0 ? static_cast<double>(inside) / counted : 0;
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace

std::vector<error_band> error_bands(const std::vector<calibration_row>& rows) {
  return bands_of(rows, false);
}

std::vector<error_band> shared_bands(const std::vector<calibration_row>& rows) {
  return bands_of(rows, true);
}

std::vector<error_band> calibration_report::shipped_bands() const {
  std::vector<error_band> out = bands;
  out.insert(out.end(), shared_bands.begin(), shared_bands.end());
  return out;
}

json to_json(const std::vector<error_band>& bands) {
  json list = json::array();
  for (const error_band& b : bands) {
    json entry{{"family", b.family}, {"method", b.method},
               {"rows", b.rows},     {"low", b.low},
               {"high", b.high},     {"held_out_coverage", b.held_out_coverage}};
    if (b.shared) entry["shared"] = true;
    list.push_back(std::move(entry));
  }
  return {{"schema", bands_schema},
          {"about",
           "Generated by `gpubench calibrate --bands` (docs/model.md, 'Error band'): published / "
           "predicted over the calibration rows each predicted without its own source, between "
           "the split-conformal ranks that hold at least `coverage` of a next row, per family "
           "(from " +
               std::to_string(min_family_rows) + " rows of " + std::to_string(min_family_groups) +
               " sources) and for all; `shared`: a family with fewer, whose band is every "
               "family's joined with the same ranks over its own rows"},
          {"coverage", band_coverage},
          {"bands", std::move(list)}};
}

std::vector<error_band> parse_error_bands(const json& doc, const std::string& file) {
  const json_reader root(doc, file);
  root.expect_object({"schema", "about", "coverage", "bands"});
  if (root.get_string("schema") != bands_schema) {
    root.fail("schema", std::string("\"") + bands_schema + "\"");
  }
  if (root.get_number("coverage", 0, 1) != band_coverage) {
    root.fail("coverage", "the coverage the bands are built for (" + fmt(band_coverage) + ")");
  }
  std::vector<error_band> out;
  for (const json_reader& e : root.elements("bands", 1)) {
    e.expect_object({"family", "method", "rows", "low", "high", "held_out_coverage", "shared"});
    error_band b;
    b.family = e.get_string("family");
    b.method = e.get_string("method");
    if (std::none_of(std::begin(methods), std::end(methods),
                     [&](const band_method& m) { return b.method == m.name; })) {
      e.fail("method", "first_principles or anchored");
    }
    b.rows = static_cast<int>(e.get_int("rows", 1, 1 << 20));
    b.low = e.get_number("low", 0, 1e3);
    b.high = e.get_number("high", b.low, 1e3);
    b.held_out_coverage = e.get_number("held_out_coverage", 0, 1);
    b.shared = e.find_bool("shared").value_or(false);
    if (b.shared && b.family == every_family) e.fail("shared", "false for every family's band");
    if (std::any_of(out.begin(), out.end(), [&](const error_band& o) {
          return o.family == b.family && o.method == b.method;
        })) {
      e.fail("family", "one band per family and method (" + b.family + ", " + b.method +
                           " is there already)");
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string prediction_interval::basis() const {
  const std::string made = "of the model's " +
                           std::string(method == "anchored" ? "anchored " : "") +
                           "predictions made without their source (" +
                           fmt(held_out_coverage * 100) + "% of each source's ";
  std::string out =
      shared ? "every family's band joined with the band of the " + std::to_string(rows) +
                   " published " + family + " runs, too few rows or sources for a band of their " +
                   "own: " + fmt((held_low - 1) * 100) + "% / +" + fmt((held_high - 1) * 100) +
                   "% " + made + family + " runs inside such a band built without it)"
             : fmt(coverage * 100) + "% of " + std::to_string(rows) + " published " +
                   (family == every_family ? "runs of every family" : family + " runs") +
                   ", each source weighing the same, fell within " + fmt((held_low - 1) * 100) +
                   "% / +" + fmt((held_high - 1) * 100) + "% " + made +
                   "runs inside a band built without it)";
  if (!widened.empty()) {
    out += "; widened to " + fmt((low_ratio - 1) * 100) + "% / +" + fmt((high_ratio - 1) * 100) +
           "%: " + join(widened, "; ");
  }
  return out;
}

namespace detail {

namespace {

const std::vector<error_band>& shipped_bands() {
  static const std::vector<error_band> bands = [] {
    const auto path = config_dir() / "model" / "error_bands.json";
    return parse_error_bands(read_json_file(path), path.string());
  }();
  return bands;
}

}  // namespace

std::optional<prediction_interval> interval_for(const sizing& s, const workload& w,
                                                const hardware_profile& hw, const constants& c) {
  if (!s.memory.fits || s.predicted_samples_per_s <= 0) return std::nullopt;
  const preset_info* preset = w.model.preset.empty() ? nullptr : find_preset(w.model.preset);
  const std::string family = expert_count(w.model) > 0 ? "moe"
                             : preset && !preset->calibration_family.empty()
                                 ? preset->calibration_family
                                 : every_family;
  const std::string method = s.anchored ? "anchored" : "first_principles";
  const error_band* chosen = nullptr;
  for (const std::string& name : {family, std::string(every_family)}) {
    for (const error_band& b : shipped_bands()) {
      if (b.family == name && b.method == method) chosen = &b;
    }
    if (chosen) break;
  }
  if (!chosen) return std::nullopt;
  prediction_interval out;
  out.family = chosen->family;
  out.method = method;
  out.rows = chosen->rows;
  out.coverage = band_coverage;
  out.held_out_coverage = chosen->held_out_coverage;
  out.shared = chosen->shared;
  out.low_ratio = out.held_low = chosen->low;
  out.high_ratio = out.held_high = chosen->high;
  if (family == every_family) {
    out.widened.emplace_back("a model no calibration family covers: every family's band");
  } else if (chosen->family != family) {
    out.widened.emplace_back("the " + family + " family has no " +
                             (method == "anchored" ? "anchored " : "") +
                             "band: every family's band");
  }
  // Inputs nothing measured or published: each widens the band by band_widening either side.
  const auto widen = [&](std::string why) {
    out.low_ratio *= 1 - c.band_widening;
    out.high_ratio *= 1 + c.band_widening;
    out.widened.push_back(std::move(why));
  };
  // The limit's own efficiency, where the catalog assumed it for this GPU and nothing measured
  // the GPU.
  for (const component& comp : s.components) {
    if (comp.name != s.limiting_component || comp.basis == basis::measured) continue;
    const figure* efficiency = comp.name == component_id::gpu_compute
                                   ? hw.find(fig::gemm_efficiency, gemm_dtype(s.precision))
                               : comp.name == component_id::gpu_memory
                                   ? hw.find(fig::hbm_efficiency)
                                   : nullptr;
    if (efficiency && efficiency->assumed) {
      widen("the limit (" + std::string(to_string(comp.name)) + ") rests on an assumed " +
            (comp.name == component_id::gpu_compute ? "GEMM" : "memory") + " efficiency (" +
            fmt(efficiency->value) + "), not a measurement of this GPU");
    }
  }
  // A limit derived by a ratio measured on other machines: the band holds at least that
  // ratio's measured spread.
  for (const component& comp : s.components) {
    if (comp.name != s.limiting_component || !comp.range || !comp.samples_per_s ||
        *comp.samples_per_s <= 0) {
      continue;
    }
    const double low = comp.range->first / *comp.samples_per_s;
    const double high = comp.range->second / *comp.samples_per_s;
    if (low < out.low_ratio || high > out.high_ratio) {
      out.low_ratio = std::min(out.low_ratio, low);
      out.high_ratio = std::max(out.high_ratio, high);
      out.widened.push_back("the limit (" + std::string(to_string(comp.name)) +
                            ") is derived by a ratio measured from " + fmt(comp.range->first) +
                            " to " + fmt(comp.range->second) + " samples/s on other machines");
    }
  }
  if (w.finetune.adapters()) {
    widen("no published " + w.finetune.method + " run is in the calibration sets");
  }
  out.low = s.predicted_samples_per_s * out.low_ratio;
  out.high = s.predicted_samples_per_s * out.high_ratio;
  return out;
}

}  // namespace detail

}  // namespace gpubench::model
