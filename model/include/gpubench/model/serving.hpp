// Serving sizing (docs/serving.md): a decoder language model served on a machine -> output
// tokens/s, time to first token, time per output token, the KV cache's capacity, the limiting
// component and what would move it, from the machine's own figures (measured or catalog).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/model/model.hpp"
#include "gpubench/model/workload.hpp"

namespace gpubench::model {

inline constexpr const char* serving_schema = "gpubench.serving/1";

// How requests arrive (size --serve's load flags): B requests started together, C always in
// flight, Poisson arrivals at R requests/s, or as many in flight as the KV cache and the stack
// allow (the offline benchmark of every engine).
enum class serving_load { batch, concurrency, rate, max_throughput };
[[nodiscard]] std::string_view to_string(serving_load load) noexcept;

// A serving engine's traits (the "stacks" table of configs/model/serving.json), each sourced
// there: what it keeps free, how it batches, what a step costs it beyond the kernels.
struct serving_stack {
  std::string name;
  std::string about;
  double memory_fraction = 0.9;   // of the GPU's memory the engine plans to fill
  bool fraction_of_free = false;  // of the memory left after the weights (TensorRT-LLM's)
  int max_sequences = 256;  // sequences a replica runs at once (0: only the KV cache bounds it)
  int max_batched_tokens = 8192;  // tokens one step may carry (the prefill chunk budget)
  int kv_block_tokens = 16;       // paged KV cache: a sequence takes whole blocks
  bool cuda_graphs = true;        // decode steps replayed as CUDA graphs
  bool continuous_batching = true;
  double step_overhead_us = 0;      // the scheduler's and sampler's time per step the GPU waits on
  double host_us_per_kernel = 0;    // without CUDA graphs: the framework's time to issue a kernel
  double matmul_efficiency = 1;     // of the GEMM benchmark's rate, in the engine's GEMMs
  double memory_efficiency = 1;     // of hbm.copy's rate, streaming weights and the KV cache
  double runtime_reserved_GiB = 1;  // CUDA context, CUDA graphs, workspaces (outside the KV pool)
  std::vector<std::pair<std::string, std::string>> sources;  // field -> where its value comes from
};

struct serving_constants {
  // The time of one small-message allreduce of the tensor group when nothing measured it.
  double allreduce_latency_us = 8;
  // A weight-only quantised GEMM (int8/int4 weights, 16-bit activations) runs at this share of
  // the 16-bit GEMM rate when compute-bound: the dequantisation in the main loop.
  double weight_only_compute_fraction = 0.7;
  // What each kernel of a CUDA-graph step costs beyond its bytes and FLOPs: its boundary in the
  // replay and a small kernel's setup and teardown (fitted; configs/model/serving.json).
  double graph_kernel_gap_us = 1.0;
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<serving_stack> stacks;
  [[nodiscard]] const serving_stack& stack_named(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> stack_names() const;
};
[[nodiscard]] serving_constants load_serving_constants();  // configs/model/serving.json
[[nodiscard]] serving_constants parse_serving_constants(const json& doc, const std::string& file);

// The weight and KV-cache precisions (one table each, in serving.cpp).
[[nodiscard]] const std::vector<std::string>& serving_weight_names();
[[nodiscard]] const std::vector<std::string>& serving_kv_names();
// A --weights precision's GEMM dtype (the 16-bit one for weight-only int8/int4) and its bytes per
// weight element, block scales included. Throws input_error for a name not in the table.
[[nodiscard]] std::string serving_weight_dtype(const std::string& weights);
[[nodiscard]] double serving_weight_bytes(const std::string& weights);

struct serving_options {
  std::optional<int> gpus;  // all GPUs (default: the machine's, or T x P)
  int tensor = 1;
  int pipeline = 1;
  std::string weights = "bf16";
  std::string kv_cache;  // "" = the weights' 16-bit type, or bf16 under quantised weights
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  serving_load load = serving_load::max_throughput;
  double load_value = 0;          // B, C or R
  std::optional<double> ttft_ms;  // targets: met or not, said in the answer
  std::optional<double> tpot_ms;
  std::string stack = "vllm";
};

// What compare --serve and report --serve ask: the requests, the targets, the engine, and the
// weight precisions the search may choose among.
struct serving_question {
  serving_options options;
  std::vector<std::string> weights;  // empty: bf16, fp8 and fp4, where the GPU runs them
  // The precisions to search: `weights`, or the native ones (weight-only int8/int4 change the
  // model's accuracy, so only when named).
  [[nodiscard]] std::vector<std::string> weights_to_try() const;
  // "2048 tokens in, 256 out, vllm, TTFT <= 1000 ms, TPOT <= 50 ms"
  [[nodiscard]] std::string describe() const;
};
[[nodiscard]] json to_json(const serving_question& q);

// One phase's time split (per step of that phase, on the slowest GPU of a replica).
struct serving_phase {
  double time_ms = 0;
  double gemm_ms = 0;
  double attention_ms = 0;
  double communication_ms = 0;
  double overhead_ms = 0;   // launches, the scheduler's step, issuing kernels
  double weight_bytes = 0;  // streamed from GPU memory per step
  double kv_bytes = 0;
  double flops = 0;
  double tokens = 0;  // tokens the step computes (prefill: the chunk; decode: the sequences)
  component_id limiting_component = component_id::gpu_memory;
};

struct serving_result {
  std::string workload;
  std::string hardware;
  std::string stack;
  std::string weights;
  std::string kv_cache;
  int gpus = 1;
  int tensor = 1;
  int pipeline = 1;
  int replicas = 1;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  serving_load load = serving_load::max_throughput;
  double load_value = 0;
  bool fits = true;
  bool over_capacity = false;     // --rate beyond what the replicas can carry
  double max_requests_per_s = 0;  // what they carry at most (max-throughput)
  double output_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0;
  double requests_per_s = 0;
  double ttft_ms = 0;
  double tpot_ms = 0;
  double e2e_latency_ms = 0;
  double concurrency = 0;      // sequences in flight, all replicas
  double max_concurrency = 0;  // what the KV caches hold at I + O, all replicas
  double weights_GB_per_gpu = 0;
  double kv_cache_GB_per_gpu = 0;
  double kv_bytes_per_token = 0;  // the whole model's, one token
  double capacity_GB_per_gpu = 0;
  component_id limiting_component = component_id::gpu_memory;
  serving_phase prefill;
  serving_phase decode;
  std::optional<bool> ttft_met;
  std::optional<bool> tpot_met;
  std::vector<std::string> recommendations;
  std::vector<std::string> notes;
  std::vector<std::string> assumed;
  // figure -> (low, high): where 80% of the published runs fell around the model's answers
  // (apply_serving_bands); empty without a rate.
  std::map<std::string, std::pair<double, double>> interval;
  std::string interval_basis;
};

// Throws input_error unless the workload is a decoder language model (a transformer preset with
// causal attention and a vocabulary): the one thing no layout of the search can change.
void check_decoder(const workload& w);

// Throws input_error naming the flag for input the model cannot take (a tensor split that does
// not divide the heads, zero tokens, a rate <= 0, a precision the GPU lacks, a model that is not a
// decoder).
[[nodiscard]] serving_result predict_serving(const hardware_profile& hardware, const workload& w,
                                             const constants& c, const serving_constants& sc,
                                             const serving_options& options);
[[nodiscard]] json to_json(const serving_result& r);

// One way to serve the model on the machine (size --serve --search): the split, the weights'
// precision, the replicas and the sequences in flight, with what they give.
struct serving_layout {
  int tensor = 1;
  int pipeline = 1;
  int replicas = 1;
  int gpus = 1;
  std::string weights;
  double concurrency = 0;  // all replicas
  bool fits = false;
  bool meets_targets = false;  // fits, within capacity and every target given
  double output_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0;
  double requests_per_s = 0;
  double ttft_ms = 0;
  double tpot_ms = 0;
  component_id limiting_component = component_id::gpu_memory;
};
// Every tensor x pipeline split (powers of two that divide the heads, a tensor group in a node),
// every precision in `weights` the GPU has, and the sequences in flight (powers of two up to what
// the KV cache holds). Without --rate: on the job's GPUs, those meeting the targets first, the
// most output tokens/s per GPU first. With --rate: for each split and precision the fewest
// replicas that carry the rate within the targets, the fewest GPUs first.
[[nodiscard]] std::vector<serving_layout> search_serving(const hardware_profile& hardware,
                                                         const workload& w, const constants& c,
                                                         const serving_constants& sc,
                                                         const serving_options& options,
                                                         const std::vector<std::string>& weights);
[[nodiscard]] json to_json(const serving_layout& l);

// calibrate --serve (docs/serving.md, "Held to published figures"): every row of
// configs/calibration/serving.json sized as published, each published figure beside the model's.
struct serving_check_row {
  int id = 0;
  std::string source_group;
  std::string what;  // "llama3.1-70b on 4 x h100-sxm5-80gb, tp 4, fp8, 2048/128, rate 8"
  // figure (a key of the serving JSON: output_tokens_per_s, ttft_ms, ...) -> published,
  // predicted (NaN: the model gives none: does not fit, or over capacity).
  std::vector<std::tuple<std::string, double, double>> figures;
  // The naive roofline's value of each figure it gives (figure -> value): offline output
  // tokens/s, TTFT (the prompt's FLOPs at the datasheet peak), TPOT (the weights at the
  // datasheet bandwidth).
  std::map<std::string, double> naive;
};
struct serving_check {
  std::vector<serving_check_row> rows;
  // figure -> (rows, median |predicted/published - 1|); the same per source group.
  std::map<std::string, std::pair<int, double>> by_figure;
  std::map<std::pair<std::string, std::string>, std::pair<int, double>> by_group;
  std::map<std::string, std::pair<int, double>> naive;  // figure -> the naive roofline's
};
// Reads the rows (a gpubench.serving-rows/1 document) and sizes each; throws input_error naming
// the row for one the model cannot take.
[[nodiscard]] serving_check check_serving(const json& rows, const std::string& file,
                                          const constants& c, const serving_constants& sc);
// Sets the check's medians (per figure, per source group and figure, and the naive roofline's)
// from its rows.
void summarise(serving_check& check);
[[nodiscard]] json to_json(const serving_check& check);
[[nodiscard]] std::string to_markdown(const serving_check& check);

// How sure a serving answer is (docs/serving.md, "Error band"): per figure, the band of
// published / predicted over the published rows, each predicted by the constants fitted without
// its source group (serving_fit::held_out), holding band_coverage of them, and how often a band
// built without a source group held that group's rows.
struct serving_band {
  std::string figure;  // output_tokens_per_s, ttft_ms, tpot_ms
  int rows = 0;
  double low = 1;  // published / predicted
  double high = 1;
  double held_out_coverage = 0;
};
[[nodiscard]] std::vector<serving_band> serving_bands(const serving_check& check);
[[nodiscard]] json to_json(const std::vector<serving_band>& bands);
[[nodiscard]] std::vector<serving_band> parse_serving_bands(const json& doc,
                                                            const std::string& file);
[[nodiscard]] std::vector<serving_band> load_serving_bands();  // configs/model/serving_bands.json
// The answer's range for each banded figure it gives: value x [low, high].
void apply_serving_bands(serving_result& r, const std::vector<serving_band>& bands);

// calibrate --serve --fit: the shared constant graph_kernel_gap_us fitted on the rows (the mean
// over source group and figure of the median |log(predicted / published)|), and the rows of each
// source group predicted by constants fitted without it.
struct serving_fit {
  serving_constants fitted;
  std::vector<std::pair<std::string, double>> values;  // "graph_kernel_gap_us" -> value
  serving_check in_fit;
  serving_check held_out;  // each row by constants fitted without its source group (none for
                           // a file of one source group)
};
[[nodiscard]] serving_fit fit_serving(const json& rows, const std::string& file, const constants& c,
                                      const serving_constants& sc);
// What the fit minimises: the mean over (source group, figure) cells of each cell's median
// |log(predicted / published)|, a figure the model does not give counting as log 2.
[[nodiscard]] double fit_objective(const serving_check& check);

}  // namespace gpubench::model
