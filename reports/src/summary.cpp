#include "gpubench/reports/summary.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "gpubench/core/format.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/report.hpp"
#include "gpubench/vocabulary/query.hpp"
#include "gpubench/vocabulary/units.hpp"
#include "serving_section.hpp"

namespace gpubench::reports {

std::string skipped_line(const std::string& reason, const std::vector<std::string>& ids) {
  std::string line = "skipped, " + reason + ": " + join(ids);
  if (ids.size() > 1) line += " (" + std::to_string(ids.size()) + ")";
  return line;
}

std::vector<std::string> skipped_lines(
    const std::vector<std::pair<std::string, std::string>>& skipped) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& item : skipped) {
    // Not a structured binding: a lambda may not capture one before C++20's clang 16.
    const std::string& reason = item.second;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&reason](const auto& g) { return g.first == reason; });
    if (group == groups.end()) group = groups.insert(groups.end(), {reason, {}});
    group->second.push_back(item.first);
  }
  std::vector<std::string> lines;
  lines.reserve(groups.size());
  for (const auto& [reason, ids] : groups) lines.push_back(skipped_line(reason, ids));
  return lines;
}

void print_summary(std::ostream& out, const results_document& doc) {
  text_table table({"benchmark", "case", "metric", "median", "min", "max", "cv", "status"});
  std::vector<std::pair<std::string, std::string>> skipped_whole;
  for (const result& r : doc.results) {
    if (r.status == result_status::skipped && r.axes.empty() && !r.rank) {
      skipped_whole.emplace_back(r.id, r.reason);
      continue;
    }
    std::string axes = format_axes(r.axes);
    if (r.rank) {
      // A multi-rank job: say where it was measured.
      std::string where = "rank " + std::to_string(*r.rank) + "@" + r.host;
      if (!axes.empty()) where += " " + axes;
      axes = std::move(where);
    }
    switch (r.status) {
      case result_status::skipped:
        table.add_row({r.id, r.rank ? axes : "", "", "", "", "", "", "skipped: " + r.reason});
        continue;
      case result_status::failed:
        table.add_row({r.id, axes, "", "", "", "", "", "FAILED: " + r.error});
        continue;
      case result_status::ok:
        break;
    }
    for (const auto& [name, s] : r.metrics) {
      char cv[16];
      std::snprintf(cv, sizeof cv, "%.1f%%", s.cv * 100);
      table.add_row({r.id, axes, name, format_number(s.median), format_number(s.min),
                     format_number(s.max),
                     cv + std::string(vocabulary::is_noisy(s) ? " noisy" : ""),
                     r.verified.value_or(false) ? "ok, verified" : "ok"});
    }
  }
  out << table.render();
  for (const std::string& line : skipped_lines(skipped_whole)) out << line << "\n";
  if (const std::string line = noisy_line(doc.results); !line.empty()) out << line << "\n";
}

std::string noisy_line(const std::vector<result>& results) {
  std::vector<std::string> cases;
  for (const result& r : results) {
    if (r.status != result_status::ok) continue;
    for (const auto& [name, s] : r.metrics) {
      if (!vocabulary::is_noisy(s)) continue;
      cases.push_back(r.id + (r.axes.empty() ? "" : " " + format_axes(r.axes)));
      break;
    }
  }
  if (cases.empty()) return "";
  return "noisy: " + std::to_string(cases.size()) + " measurement(s) spread more than " +
         format_number(vocabulary::noisy_cv * 100) +
         "% between repetitions (a busy machine, a throttling part?): " + join(cases, "; ") +
         ". Rerun them on an idle machine (--only) before trusting their figures.";
}

void print_serving(std::ostream& out, const model::serving_result& r) {
  out << r.workload << " served on " << r.hardware << ": " << r.gpus << " GPU(s) as " << r.replicas
      << " replica(s) of tensor " << r.tensor << " x pipeline " << r.pipeline << ", weights "
      << r.weights << ", KV cache " << r.kv_cache << ", " << r.stack << "; " << r.input_tokens
      << " tokens in, " << r.output_tokens << " out, " << to_string(r.load);
  if (r.load != model::serving_load::max_throughput) out << " " << format_number(r.load_value);
  out << "\n";
  const std::string gb = " GB";
  if (!r.fits) {
    out << "predicted: none, the model does not fit (limited by " << r.limiting_component
        << "): weights " << format_number(r.weights_GB_per_gpu) << gb << " per GPU of "
        << format_number(r.capacity_GB_per_gpu) << gb << "\n";
  } else if (r.over_capacity) {
    out << "predicted: none, " << format_number(r.load_value)
        << " requests/s is beyond what this deployment carries (at most "
        << format_number(r.max_requests_per_s) << " requests/s); limited by "
        << r.limiting_component << "\n";
  } else {
    out << "predicted " << format_number(r.output_tokens_per_s) << " output tokens/s ("
        << format_number(r.output_tokens_per_s_per_gpu) << " per GPU), "
        << format_number(r.requests_per_s) << " requests/s; limited by " << r.limiting_component
        << "\n";
    out << "time to first token " << format_number(r.ttft_ms) << " ms, time per output token "
        << format_number(r.tpot_ms) << " ms, end to end " << format_number(r.e2e_latency_ms)
        << " ms, " << format_number(r.concurrency) << " sequences in flight\n";
    if (!r.interval.empty()) {
      out << range_header() << ":";
      for (const auto& [figure, range] : r.interval) {
        out << " " << figure << " " << format_number(range.first) << " to "
            << format_number(range.second) << ";";
      }
      out << " (" << r.interval_basis << ")\n";
    }
  }
  out << "GPU memory per GPU: weights " << format_number(r.weights_GB_per_gpu) << gb
      << ", KV cache " << format_number(r.kv_cache_GB_per_gpu) << gb << " of "
      << format_number(r.capacity_GB_per_gpu) << gb << "; the KV caches hold "
      << format_number(r.max_concurrency) << " sequences of "
      << format_number(static_cast<double>(r.input_tokens + r.output_tokens)) << " tokens ("
      << format_number(r.kv_bytes_per_token / 1e6) << " MB per token)\n";
  if (r.fits) {
    text_table table(
        {"phase", "step ms", "GEMMs", "attention", "communication", "overhead", "limited by"});
    const auto row = [&](const char* name, const model::serving_phase& p) {
      table.add_row({name, format_number(p.time_ms), format_number(p.gemm_ms),
                     format_number(p.attention_ms), format_number(p.communication_ms),
                     format_number(p.overhead_ms), std::string(to_string(p.limiting_component))});
    };
    row("prefill", r.prefill);
    row("decode", r.decode);
    out << "\n" << table.render();
  }
  if (r.ttft_met)
    out << "time to first token target: " << (*r.ttft_met ? "met" : "NOT met") << "\n";
  if (r.tpot_met)
    out << "time per output token target: " << (*r.tpot_met ? "met" : "NOT met") << "\n";
  if (!r.recommendations.empty()) {
    out << "\n";
    for (const auto& line : r.recommendations) out << "- " << line << "\n";
  }
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  if (!r.assumed.empty()) out << "assumed (not measured): " << join(r.assumed, ", ") << "\n";
}

void print_serving_layouts(std::ostream& out, const std::vector<model::serving_layout>& layouts) {
  const auto meeting =
      std::count_if(layouts.begin(), layouts.end(),
                    [](const model::serving_layout& l) { return l.meets_targets; });
  out << "\n"
      << layouts.size() << " layouts, " << meeting
      << " within capacity and the targets; the best ten:\n";
  text_table table(serving_header());
  for (const auto& row : serving_layout_rows(layouts)) table.add_row(row);
  out << table.render();
}

void print_sizing(std::ostream& out, const model::sizing& s) {
  out << s.workload << " on " << s.hardware << ": " << s.gpus_per_node << " GPU(s) x " << s.nodes
      << " node(s), " << model::batch_text(s) << " per GPU, " << s.precision << ", " << s.stack
      << " stack" << (s.anchored ? ", anchored on a reference point" : "");
  if (!s.network_assumption.empty()) out << "; network " << s.network_assumption;
  out << "\n";
  const model::memory_verdict& memory = s.memory;
  if (memory.fits) {
    out << "predicted " << format_number(s.predicted_samples_per_s) << " " << samples_unit(s)
        << " (" << format_number(s.per_gpu_samples_per_s) << " per GPU";
    if (s.sample_unit == "sequence") {
      out << ", " << format_number(s.predicted_samples_per_s * s.tokens_per_sample) << " tokens/s";
    }
    out << "); limited by " << s.limiting_component << "\n";
    if (s.interval) {
      out << range_header() << ": " << range_text(s) << " " << samples_unit(s) << " ("
          << s.interval->basis() << ")\n";
    }
  } else {
    out << "predicted: none, the job does not fit in GPU memory (limited by "
        << s.limiting_component << "); the ceilings below are what it would reach if it fit\n";
  }
  const std::string_view gib = vocabulary::units::GiB.symbol;
  out << "GPU memory: " << format_number(memory.per_gpu_GiB) << " " << gib << " per GPU";
  if (memory.capacity_GiB) {
    out << " of " << format_number(*memory.capacity_GiB) << " " << gib << " ("
        << format_number(memory.per_gpu_GiB / *memory.capacity_GiB * 100) << "%, "
        << memory.capacity_basis;
    if (memory.fits && !memory.within_headroom) {
      out << "; above the " << format_number(memory.headroom * 100) << "% headroom";
    }
    out << ")";
  } else {
    out << " (capacity not known)";
  }
  out << ":";
  for (std::size_t i = 0; i < memory.parts.size(); ++i) {
    out << (i ? "," : "") << " " << memory.parts[i].name << " "
        << format_number(memory.parts[i].GiB);
  }
  for (const std::string& missing : memory.unknown) out << "; not counted: " << missing;
  out << "\n\n";
  text_table table({"component", "ceiling/s", "utilization", "basis", "detail"});
  for (const model::component& c : s.components) {
    table.add_row({std::string(to_string(c.name)) + (c.name == s.limiting_component ? " *" : ""),
                   c.samples_per_s ? format_number(*c.samples_per_s) : "-",
                   c.samples_per_s && std::isfinite(c.utilization)
                       ? format_number(c.utilization * 100) + "%"
                       : "-",
                   basis_text(c), c.detail});
  }
  out << table.render();
  if (!s.recommendations.empty()) {
    out << "\n";
    for (const auto& r : s.recommendations) out << "- " << r << "\n";
  }
  for (const auto& n : s.notes) out << "note: " << n << "\n";
  if (!s.assumed.empty()) {
    out << "assumed (not measured): ";
    for (std::size_t i = 0; i < s.assumed.size(); ++i) out << (i ? ", " : "") << s.assumed[i];
    out << "\n";
  }
}

// The ten best layouts that fit, as a table under the sizing.
void print_layouts(std::ostream& out, const std::vector<model::layout>& layouts) {
  const auto fitting =
      std::count_if(layouts.begin(), layouts.end(), [](const model::layout& l) { return l.fits; });
  const auto within = std::count_if(layouts.begin(), layouts.end(),
                                    [](const model::layout& l) { return l.within_headroom; });
  out << "\nlayouts: " << fitting << " of " << layouts.size() << " fit in GPU memory, " << within
      << " within the headroom (those first); the fastest ten:\n";
  const std::string gib(vocabulary::units::GiB.symbol);
  // The expert, expert tensor and context columns only where a layout splits experts or sequences.
  const bool experts = std::any_of(layouts.begin(), layouts.end(),
                                   [](const model::layout& l) { return l.expert > 1; });
  const bool contexts = std::any_of(layouts.begin(), layouts.end(),
                                    [](const model::layout& l) { return l.context > 1; });
  const bool expert_tensors = std::any_of(
      layouts.begin(), layouts.end(), [](const model::layout& l) { return l.expert_tensor > 1; });
  std::vector<std::string> header{"tensor", "pipeline", "data"};
  if (experts) header.emplace_back("expert");
  if (expert_tensors) header.emplace_back("expert tensor");
  if (contexts) header.emplace_back("context");
  for (const char* name : {"micro-batch", "accumulation", "checkpointing", "strategy"}) {
    header.emplace_back(name);
  }
  header.insert(header.end(), {gib + " per GPU", "predicted/s", "limited by"});
  text_table table(header);
  int shown = 0;
  for (const model::layout& l : layouts) {
    if (!l.fits || shown++ == 10) break;
    std::vector<std::string> row{std::to_string(l.tensor), std::to_string(l.pipeline),
                                 std::to_string(l.data)};
    if (experts) row.push_back(std::to_string(l.expert));
    if (expert_tensors) row.push_back(std::to_string(l.expert_tensor));
    if (contexts) row.push_back(std::to_string(l.context));
    row.insert(row.end(), {std::to_string(l.micro_batch), std::to_string(l.accumulation),
                           l.activation_checkpointing  ? "full"
                           : l.selective_checkpointing ? "selective"
                                                       : "none",
                           std::string(to_string(l.strategy)),
                           format_number(l.per_gpu_GiB) + (l.within_headroom ? "" : " (tight)"),
                           format_number(l.predicted_samples_per_s),
                           std::string(to_string(l.limiting_component))});
    table.add_row(row);
  }
  if (shown == 0) {
    out << "none fits; the nearest needs " << format_number(layouts.front().per_gpu_GiB) << " "
        << gib << " per GPU\n";
    return;
  }
  out << table.render();
}

void print_sizing_summary(std::ostream& out, const machine_report& report,
                          const std::string& results_file) {
  text_table table({"workload", "predicted/s", "per GPU", "limited by", "basis"});
  for (const workload_row& row : report.workloads) {
    if (!row.sizing) {
      out << "\nsizing skipped: " << row.error << "\n";
      return;
    }
    const model::sizing& s = *row.sizing;
    const std::string basis = limit_basis(s);
    table.add_row({row.workload, format_number(s.predicted_samples_per_s) + " " + samples_unit(s),
                   format_number(s.per_gpu_samples_per_s),
                   std::string(to_string(s.limiting_component)), basis});
  }
  out << "\nsizing (gpubench size --workload NAME --hardware " << results_file
      << " for the details):\n"
      << table.render();
}

}  // namespace gpubench::reports
