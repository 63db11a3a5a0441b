// The serving question's flags, which size --serve, compare --serve and report --serve share
// (docs/serving.md): one definition, so the three commands take them alike.
#pragma once

#include <CLI/CLI.hpp>

#include <string_view>

#include "gpubench/model/serving.hpp"

namespace gpubench::app {

// --input-tokens, --output-tokens, --ttft-ms, --tpot-ms and --stack into `q.options`, each
// needing `serve`; with `weights_list`, --weights as precisions to try (comma-separated).
void add_serving_flags(CLI::App* sub, model::serving_question& q, CLI::Option* serve,
                       bool weights_list);
// Throws input_error ("COMMAND --serve: --input-tokens and --output-tokens are required") when
// they were not given.
void require_tokens(const model::serving_question& q, std::string_view command);

}  // namespace gpubench::app
