// size --serve --search (docs/serving.md, "Search"): every split, precision and load of the
// serving model, ranked by what a buyer asks: the most output tokens/s per GPU within the
// latency targets, or the fewest GPUs that carry a request rate within them.
#include <algorithm>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/model/serving.hpp"

namespace gpubench::model {

namespace {

constexpr int max_split = 8;        // a tensor or pipeline group of a bare GPU entry, at most
constexpr int max_replicas = 4096;  // the most replicas a --rate search adds

serving_layout layout_of(const serving_result& r) {
  serving_layout l;
  l.tensor = r.tensor;
  l.pipeline = r.pipeline;
  l.replicas = r.replicas;
  l.gpus = r.gpus;
  l.weights = r.weights;
  l.fits = r.fits;
  l.meets_targets =
      r.fits && !r.over_capacity && r.ttft_met.value_or(true) && r.tpot_met.value_or(true);
  if (r.fits && !r.over_capacity) {
    l.concurrency = r.concurrency;
    l.output_tokens_per_s = r.output_tokens_per_s;
    l.output_tokens_per_s_per_gpu = r.output_tokens_per_s_per_gpu;
    l.requests_per_s = r.requests_per_s;
    l.ttft_ms = r.ttft_ms;
    l.tpot_ms = r.tpot_ms;
  }
  l.limiting_component = r.limiting_component;
  return l;
}

}  // namespace

std::vector<std::string> serving_question::weights_to_try() const {
  return weights.empty() ? std::vector<std::string>{"bf16", "fp8", "fp4"} : weights;
}

std::string serving_question::describe() const {
  std::string out = std::to_string(options.input_tokens) + " tokens in, " +
                    std::to_string(options.output_tokens) + " out, " + options.stack;
  if (options.ttft_ms) out += ", TTFT <= " + format_number(*options.ttft_ms) + " ms";
  if (options.tpot_ms) out += ", TPOT <= " + format_number(*options.tpot_ms) + " ms";
  return out;
}

json to_json(const serving_question& q) {
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return json{{"input_tokens", q.options.input_tokens},
              {"output_tokens", q.options.output_tokens},
              {"ttft_ms", opt(q.options.ttft_ms)},
              {"tpot_ms", opt(q.options.tpot_ms)},
              {"stack", q.options.stack},
              {"weights", q.weights}};
}

std::vector<serving_layout> search_serving(const hardware_profile& hw, const workload& w,
                                           const constants& c, const serving_constants& sc,
                                           const serving_options& options,
                                           const std::vector<std::string>& weights) {
  check_decoder(w);  // every layout would refuse it: say so once, as the error it is
  const int per_node = hw.scalable ? max_split : hw.gpus_per_node;
  const int gpus = options.gpus.value_or(per_node);
  const bool by_rate = options.load == serving_load::rate;
  std::vector<serving_layout> out;
  const auto attempt = [&](const serving_options& o) -> std::optional<serving_result> {
    try {
      return predict_serving(hw, w, c, sc, o);
    } catch (const input_error&) {
      return std::nullopt;  // a split the model or the GPU cannot take
    }
  };
  for (const std::string& precision : weights) {
    for (int t = 1; t <= per_node; t *= 2) {
      for (int p = 1; p <= max_split; p *= 2) {
        serving_options o = options;
        o.weights = precision;
        o.tensor = t;
        o.pipeline = p;
        if (by_rate) {
          // The fewest replicas that carry the rate within the targets: more replicas never
          // carry less, so bisect on their count.
          const auto meets = [&](int replicas) -> std::optional<serving_result> {
            o.gpus = replicas * t * p;
            auto r = attempt(o);
            if (!r || !r->fits || r->over_capacity || !r->ttft_met.value_or(true) ||
                !r->tpot_met.value_or(true)) {
              return std::nullopt;
            }
            return r;
          };
          o.gpus = t * p;
          const auto first = attempt(o);
          if (!first) continue;
          if (!first->fits) {
            out.push_back(layout_of(*first));
            continue;
          }
          int lo = 0;
          int hi = 1;
          std::optional<serving_result> found = meets(hi);
          while (!found && hi < max_replicas) {
            lo = hi;
            hi = std::min(hi * 2, max_replicas);
            found = meets(hi);
          }
          if (!found) {
            out.push_back(layout_of(*first));
            continue;
          }
          while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (auto r = meets(mid)) {
              hi = mid;
              found = std::move(r);
            } else {
              lo = mid;
            }
          }
          out.push_back(layout_of(*found));
          continue;
        }
        if (gpus % (t * p) != 0) continue;
        o.gpus = gpus;
        o.load = serving_load::max_throughput;
        const auto most = attempt(o);
        if (!most) continue;
        out.push_back(layout_of(*most));
        if (!most->fits) continue;
        // Fewer in flight than the most: lower latency, fewer tokens/s.
        for (double in_flight = most->replicas; in_flight < most->max_concurrency; in_flight *= 2) {
          o.load = serving_load::concurrency;
          o.load_value = in_flight;
          if (const auto r = attempt(o)) out.push_back(layout_of(*r));
        }
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const serving_layout& a, const serving_layout& b) {
    if (a.meets_targets != b.meets_targets) return a.meets_targets;
    if (a.fits != b.fits) return a.fits;
    if (by_rate && a.gpus != b.gpus) return a.gpus < b.gpus;
    return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
  });
  return out;
}

json to_json(const serving_layout& l) {
  const auto rate = [&](double v) { return l.fits ? json(v) : json(nullptr); };
  return json{{"tensor", l.tensor},
              {"pipeline", l.pipeline},
              {"replicas", l.replicas},
              {"gpus", l.gpus},
              {"weights", l.weights},
              {"concurrency", rate(l.concurrency)},
              {"fits", l.fits},
              {"meets_targets", l.meets_targets},
              {"output_tokens_per_s", rate(l.output_tokens_per_s)},
              {"output_tokens_per_s_per_gpu", rate(l.output_tokens_per_s_per_gpu)},
              {"requests_per_s", rate(l.requests_per_s)},
              {"ttft_ms", rate(l.ttft_ms)},
              {"tpot_ms", rate(l.tpot_ms)},
              {"limiting_component", l.limiting_component}};
}

}  // namespace gpubench::model
