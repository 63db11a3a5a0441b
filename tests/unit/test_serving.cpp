// The serving model (docs/serving.md) on cases counted by hand, its behaviour under load, and the
// input it refuses.
#include <catch2/catch.hpp>

#include "gpubench/core/errors.hpp"
#include "gpubench/model/serving.hpp"

using namespace gpubench;
using namespace gpubench::model;

namespace {

// A one-GPU profile with round figures: 100 TFLOP/s at bf16 and fp16, 1000 GB/s, 1 GiB.
hardware_profile round_gpu() {
  hardware_profile hw;
  hw.name = hw.origin = "round-gpu";
  hw.kind = "file";
  hw.scalable = true;
  hw.gpu_model = "round";
  for (const char* dtype : {"bf16", "fp16"}) {
    hw.set(fig::peak_tflops, 100, basis::catalog, "", "", dtype);
    hw.set(fig::gemm_efficiency, 1.0, basis::catalog, "", "", dtype);
  }
  hw.set(fig::sm_count, 128, basis::catalog, "");
  hw.set(fig::hbm, 1000, basis::catalog, "");
  hw.set(fig::gpu_memory, 1, basis::catalog, "");
  hw.set(fig::launch_latency, 1, basis::catalog, "");
  hw.set(fig::nvlink, 400, basis::catalog, "");
  return hw;
}

// One engine with nothing hidden: half the memory, no reserve, no step overhead, full
// efficiencies, blocks of 16 tokens; continuous or static.
serving_constants round_engine(bool continuous) {
  const json values = {{"memory_fraction", 0.5},
                       {"fraction_of_free", false},
                       {"max_sequences", 0},
                       {"max_batched_tokens", 0},
                       {"kv_block_tokens", 16},
                       {"cuda_graphs", true},
                       {"continuous_batching", continuous},
                       {"step_overhead_us", 0},
                       {"host_us_per_kernel", 0},
                       {"matmul_efficiency", 1},
                       {"memory_efficiency", 1},
                       {"runtime_reserved_GiB", 0}};
  const auto constant = [](double v) { return json{{"value", v}, {"source", "test"}}; };
  const json doc = {{"schema", "gpubench.serving-constants/1"},
                    {"about", "test"},
                    {"constants",
                     {{"allreduce_latency_us", constant(10)},
                      {"weight_only_compute_fraction", constant(0.5)},
                      {"graph_kernel_gap_us", constant(0)}}},
                    {"stacks", json::array({{{"name", "round"},
                                             {"about", "test"},
                                             {"values", values},
                                             {"sources", json::object()}}})}};
  return parse_serving_constants(doc, "round.json");
}

// Two layers, hidden 64, 4 heads of 16 with 2 key/value heads, a plain FFN of 256, a tied
// vocabulary of 100.
workload tiny_decoder() {
  return parse_workload(json{{"schema", "gpubench.workload/1"},
                             {"name", "tiny"},
                             {"model",
                              {{"preset", "gpt"},
                               {"layers", 2},
                               {"hidden", 64},
                               {"heads", 4},
                               {"kv_heads", 2},
                               {"ffn", 256},
                               {"seq_len", 128},
                               {"vocab", 100}}},
                             {"precision", "amp_bf16"},
                             {"batch_per_gpu", 1}},
                        "tiny.json");
}

serving_options tiny_options() {
  serving_options o;
  o.input_tokens = 100;
  o.output_tokens = 28;
  o.stack = "round";
  return o;
}

}  // namespace

TEST_CASE("size --serve: weights, KV cache and what it holds, counted by hand", "[unit][serving]") {
  const serving_result r =
      predict_serving(round_gpu(), tiny_decoder(), constants{}, round_engine(true), tiny_options());
  REQUIRE(r.fits);
  // Per layer: Q and O 2 x 64 x 64, K and V 2 x 64 x (2 x 16), the FFN 2 x 64 x 256: 45,056
  // weights; 2 layers in bf16, 180,224 bytes; the tied vocabulary 100 x 64 and the norms
  // 2 x 2 x 64, 13,312 bytes in 16-bit.
  CHECK(r.weights_GB_per_gpu * 1e9 == Approx(193536));
  // K and V of 2 heads of 16, 2 layers, 2 bytes.
  CHECK(r.kv_bytes_per_token == Approx(2 * 2 * 2 * 16 * 2));
  // The pool: half of 1 GiB less the weights and the live activations of a 100-token prompt
  // (100 x (4 x 64 + 256) x 2 bytes, and 100 fp32 logit rows of 100): 536,534,976 bytes. A
  // sequence of 128 tokens takes 8 blocks of 16 at 256 bytes a token.
  const double pool = 0.5 * 1073741824.0 - 193536 - (100 * 512 * 2 + 100 * 100 * 4);
  CHECK(r.kv_cache_GB_per_gpu * 1e9 == Approx(pool));
  CHECK(r.max_concurrency == std::floor(pool / (128 * 256.0)));
  // A decode step streams every linear weight and the vocabulary projection's (16-bit) once.
  CHECK(r.decode.weight_bytes == Approx(180224 + 100 * 64 * 2));
}

TEST_CASE("size --serve: a layer that attends within a window caches and reads the window only",
          "[unit][serving]") {
  workload windowed = tiny_decoder();
  windowed.model.params["attention_window"] = 32;
  windowed.model.params["windowed_layers"] = 1;
  serving_options o = tiny_options();
  o.load = serving_load::batch;
  o.load_value = 1;
  const serving_result r =
      predict_serving(round_gpu(), windowed, constants{}, round_engine(true), o);
  REQUIRE(r.fits);
  // K and V of a token on one layer: 2 x 2 heads x 16 x 2 bytes = 128. A sequence of 128 tokens
  // keeps 8 pages of 16 on the full layer and, on the windowed one, the pages its last 32 tokens
  // straddle: ceil(31/16) + 1 = 3. (128 + 48) x 128 bytes, against 2 x 128 x 128 without a
  // window; a token of context below the window still costs both layers.
  CHECK(r.kv_bytes_per_token == Approx(256));
  const double pool = r.kv_cache_GB_per_gpu * 1e9;
  CHECK(r.max_concurrency == std::floor(pool / ((128 + 48) * 128.0)));
  // A decode step at the mean context of 100 + 28/2 = 114 tokens reads 114 on the full layer
  // and 32 on the windowed one, and writes the new token's K and V on both.
  CHECK(r.decode.kv_bytes == Approx((114 + 32) * 128.0 + 2 * 128.0));
  const serving_result full =
      predict_serving(round_gpu(), tiny_decoder(), constants{}, round_engine(true), o);
  CHECK(full.decode.kv_bytes == Approx(2 * 114 * 128.0 + 2 * 128.0));
}

TEST_CASE("size --serve: decode at small batches streams the weights, a long prompt computes",
          "[unit][serving]") {
  const hardware_profile hw = load_catalog("h100-sxm5-80gb");
  const serving_constants sc = load_serving_constants();
  const workload llama = load_workload("llama3.1-8b");
  serving_options o;
  o.input_tokens = 128;
  o.output_tokens = 128;
  o.load = serving_load::batch;
  o.load_value = 1;
  const serving_result one = predict_serving(hw, llama, load_constants(), sc, o);
  CHECK(one.decode.limiting_component == component_id::gpu_memory);
  // One sequence: each decode step is at least the weight stream at the GPU's memory rate.
  CHECK(one.tpot_ms >= one.decode.weight_bytes / (*gpu_memory_GBps(hw) * 1e9) * 1e3);
  // More sequences share each weight read: many more tokens per second, each step slower.
  o.load_value = 64;
  const serving_result many = predict_serving(hw, llama, load_constants(), sc, o);
  CHECK(many.output_tokens_per_s > 10 * one.output_tokens_per_s);
  CHECK(many.tpot_ms > one.tpot_ms);
  // A prompt of 32k tokens is math: at least 2 x 7.5e9 linear weights' FLOP a token at the
  // H100's bf16 peak.
  o.input_tokens = 32768;
  o.load_value = 1;
  const serving_result prompt = predict_serving(hw, llama, load_constants(), sc, o);
  CHECK(prompt.prefill.limiting_component == component_id::gpu_compute);
  CHECK(prompt.ttft_ms >= 2 * 6.9e9 * 32768 / 989e12 * 1e3);
}

TEST_CASE(
    "size --serve: a tensor split halves the weights per GPU and pays allreduces, fp8 KV "
    "holds twice the sequences",
    "[unit][serving]") {
  const hardware_profile hw = round_gpu();
  const serving_constants sc = round_engine(true);
  serving_options o = tiny_options();
  const serving_result whole = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  o.tensor = 2;
  const serving_result split = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  // 2 GPUs, one replica: Q, O and the FFN split, K and V one head each, the vocabulary split.
  CHECK(split.replicas == 1);
  CHECK(split.weights_GB_per_gpu * 1e9 == Approx((2 * 45056 / 2.0) * 2 + (3200 + 256) * 2));
  CHECK(split.decode.communication_ms > 0);
  CHECK(whole.decode.communication_ms == 0);
  o.tensor = 1;
  o.kv_cache = "fp8";
  const serving_result fp8 = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  CHECK(fp8.kv_bytes_per_token == Approx(whole.kv_bytes_per_token / 2));
  CHECK(fp8.max_concurrency == Approx(2 * whole.max_concurrency).margin(1));
}

TEST_CASE("size --serve: Poisson arrivals queue, and a rate beyond capacity gets no number",
          "[unit][serving]") {
  const hardware_profile hw = round_gpu();
  const serving_constants sc = round_engine(true);
  serving_options o = tiny_options();
  const serving_result full = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  REQUIRE(full.max_requests_per_s > 0);
  o.load = serving_load::rate;
  o.load_value = full.max_requests_per_s * 0.1;
  const serving_result light = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  o.load_value = full.max_requests_per_s * 0.8;
  const serving_result heavy = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  CHECK_FALSE(light.over_capacity);
  CHECK(light.requests_per_s == Approx(full.max_requests_per_s * 0.1));
  CHECK(heavy.ttft_ms > light.ttft_ms);
  CHECK(heavy.concurrency > light.concurrency);
  o.load_value = full.max_requests_per_s * 1.5;
  const serving_result over = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  CHECK(over.over_capacity);
  CHECK(to_json(over)["serving"]["output_tokens_per_s"].is_null());
  // A target is met or not, said in the answer.
  o.load_value = full.max_requests_per_s * 0.1;
  o.ttft_ms = light.ttft_ms * 2;
  o.tpot_ms = light.tpot_ms / 2;
  const serving_result targets = predict_serving(hw, tiny_decoder(), constants{}, sc, o);
  REQUIRE(targets.ttft_met.has_value());
  CHECK(*targets.ttft_met);
  CHECK_FALSE(*targets.tpot_met);
}

TEST_CASE("size --serve: a model that does not fit says so with the numbers and the way out",
          "[unit][serving]") {
  const hardware_profile h100 = load_catalog("h100-sxm5-80gb");
  serving_options o;
  o.input_tokens = 2048;
  o.output_tokens = 256;
  const serving_result r = predict_serving(h100, load_workload("llama3.1-70b"), load_constants(),
                                           load_serving_constants(), o);
  CHECK_FALSE(r.fits);
  CHECK(r.limiting_component == component_id::memory_capacity);
  REQUIRE_FALSE(r.recommendations.empty());
  CHECK_THAT(r.recommendations.front(), Catch::Contains("weights 1") &&
                                            Catch::Contains("--tensor") &&
                                            Catch::Contains("--weights fp8"));
  CHECK(to_json(r)["serving"]["output_tokens_per_s"].is_null());
}

TEST_CASE("size --serve refuses what it cannot size, naming the flag", "[unit][serving]") {
  const hardware_profile h100 = load_catalog("h100-sxm5-80gb");
  const constants c = load_constants();
  const serving_constants sc = load_serving_constants();
  const workload llama = load_workload("llama3.1-8b");
  serving_options o;
  o.input_tokens = 128;
  o.output_tokens = 128;
  serving_options bad = o;
  bad.tensor = 3;
  CHECK_THROWS_WITH(predict_serving(h100, llama, c, sc, bad),
                    Catch::Contains("--tensor 3 does not divide the model's 32 attention heads"));
  bad = o;
  bad.weights = "fp4";
  CHECK_THROWS_WITH(predict_serving(h100, llama, c, sc, bad),
                    Catch::Contains("--weights fp4 needs nvfp4 GEMMs"));
  bad = o;
  bad.output_tokens = 0;
  CHECK_THROWS_WITH(predict_serving(h100, llama, c, sc, bad), Catch::Contains("--output-tokens"));
  bad = o;
  bad.stack = "pytorch";
  bad.load = serving_load::rate;
  bad.load_value = 1;
  CHECK_THROWS_WITH(predict_serving(h100, llama, c, sc, bad), Catch::Contains("--rate needs"));
  CHECK_THROWS_WITH(predict_serving(h100, load_workload("bert-large"), c, sc, o),
                    Catch::Contains("decoder language model"));
}

TEST_CASE(
    "calibrate --serve --fit: the fit depends on the rows, never on the shipped value, and every "
    "source group is predicted by a fit made without it",
    "[unit][serving]") {
  // Four published rows of two source groups (configs/calibration/serving.json).
  json doc = read_json_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/calibration/serving.json");
  json rows = json::array();
  for (const json& row : doc.at("rows")) {
    const int id = row.at("id");
    if (id == 2 || id == 6 || id == 28 || id == 29) rows.push_back(row);
  }
  REQUIRE(rows.size() == 4);
  doc["rows"] = rows;
  const constants c = load_constants();
  const serving_constants sc = load_serving_constants();
  const serving_fit fit = fit_serving(doc, "four.json", c, sc);
  REQUIRE_FALSE(fit.values.empty());
  // Every fit starts from the knobs' priors, never from the values shipped (which the rows held
  // out fitted): another shipped value gives the same fit.
  serving_constants other = sc;
  other.graph_kernel_gap_us = 9;
  const serving_fit again = fit_serving(doc, "four.json", c, other);
  CHECK(again.values == fit.values);
  CHECK(fit_objective(again.held_out) == Approx(fit_objective(fit.held_out)));
  CHECK(fit.held_out.rows.size() == 4);
  for (const serving_check_row& row : fit.held_out.rows) CHECK_FALSE(row.figures.empty());
  // One source group (rows 2 and 6, both trtllm-bench offline): nothing to hold out.
  json one = doc;
  one["rows"] = json::array({rows[0], rows[1]});
  const serving_fit alone = fit_serving(one, "two.json", c, sc);
  CHECK(alone.held_out.rows.empty());
  CHECK(alone.in_fit.rows.size() == 2);
}

TEST_CASE(
    "size --serve's error band: configs/model/serving_bands.json is what the published rows "
    "give, each predicted by a fit made without its source group, and an answer's range holds it",
    "[unit][serving][long]") {
  const std::string file = std::string(GPUBENCH_SOURCE_DIR) + "/configs/calibration/serving.json";
  const serving_fit fit =
      fit_serving(read_json_file(file), file, load_constants(), load_serving_constants());
  // The shipped constant is the one the fit gives (configs/model/serving.json).
  REQUIRE(fit.values.size() == 1);
  CHECK(fit.values[0].first == "graph_kernel_gap_us");
  CHECK(fit.values[0].second == Approx(load_serving_constants().graph_kernel_gap_us).margin(0.01));
  const std::vector<serving_band> computed = serving_bands(fit.held_out);
  const std::vector<serving_band> shipped = load_serving_bands();
  REQUIRE(computed.size() == shipped.size());
  for (std::size_t i = 0; i < computed.size(); ++i) {
    INFO(computed[i].figure);
    CHECK(shipped[i].figure == computed[i].figure);
    CHECK(shipped[i].rows == computed[i].rows);
    CHECK(shipped[i].low == Approx(computed[i].low));
    CHECK(shipped[i].high == Approx(computed[i].high));
    CHECK(shipped[i].held_out_coverage == Approx(computed[i].held_out_coverage));
    // At least 80% of the rows' ratios lie within the band by construction (conformal ranks).
    CHECK(computed[i].low <= 1.2);
    CHECK(computed[i].high >= 0.8);
  }
  serving_options o;
  o.input_tokens = 2048;
  o.output_tokens = 256;
  serving_result r = predict_serving(load_catalog("h100-sxm5-80gb"), load_workload("llama3.1-8b"),
                                     load_constants(), load_serving_constants(), o);
  apply_serving_bands(r, shipped);
  REQUIRE(r.interval.contains("output_tokens_per_s"));
  const auto [low, high] = r.interval.at("output_tokens_per_s");
  CHECK(low <= r.output_tokens_per_s);
  CHECK(high >= r.output_tokens_per_s);
  CHECK(to_json(r)["serving"]["interval"]["tpot_ms"]["low"].get<double>() ==
        Approx(r.interval.at("tpot_ms").first));
}
