#include "serving_flags.hpp"

#include <string>

#include "command.hpp"
#include "gpubench/core/errors.hpp"

namespace gpubench::app {

void add_serving_flags(CLI::App* sub, model::serving_question& q, CLI::Option* serve,
                       bool weights_list) {
  sub->add_option("--input-tokens", q.options.input_tokens, "prompt tokens per request")
      ->check(finite_range(1, 1e8, true))
      ->needs(serve);
  sub->add_option("--output-tokens", q.options.output_tokens, "generated tokens per request")
      ->check(finite_range(1, 1e8, true))
      ->needs(serve);
  sub->add_option("--ttft-ms", q.options.ttft_ms, "time-to-first-token target (ms)")
      ->check(finite_range(1e-6, 1e9))
      ->needs(serve);
  sub->add_option("--tpot-ms", q.options.tpot_ms, "time-per-output-token target (ms)")
      ->check(finite_range(1e-6, 1e9))
      ->needs(serve);
  sub->add_option("--stack", q.options.stack,
                  "the serving engine: tensorrt-llm, vllm, sglang, pytorch-compiled, pytorch "
                  "(configs/model/serving.json)")
      ->capture_default_str()
      ->needs(serve);
  if (weights_list) {
    sub->add_option("--weights", q.weights,
                    "weight precisions to try, comma-separated (" +
                        join(model::serving_weight_names(), ", ") +
                        "; default bf16, fp8, fp4 where the GPU has them)")
        ->delimiter(',')
        ->check(CLI::IsMember(model::serving_weight_names()))
        ->needs(serve);
  }
}

void require_tokens(const model::serving_question& q, std::string_view command) {
  if (q.options.input_tokens < 1 || q.options.output_tokens < 1) {
    throw input_error(std::string(command) +
                      " --serve: --input-tokens and --output-tokens are required");
  }
}

}  // namespace gpubench::app
