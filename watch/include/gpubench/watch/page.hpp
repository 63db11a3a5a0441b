// watch.html: the verdict and the job's timelines, one self-contained page (inline SVG, no script).
#pragma once

#include <string>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/watch/sample.hpp"

namespace gpubench::watch {

// `summary_doc` is watch.json; `samples` the lines of watch.jsonl.
[[nodiscard]] std::string render_page(const json& summary_doc,
                                      const std::vector<interval>& samples);

}  // namespace gpubench::watch
