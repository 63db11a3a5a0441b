// The JPEG corpus of cpu.augment and cpu.dataloader, shared by their cases in a run: a sweep of
// thread or worker counts does not remake it per case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpubench/harness/context.hpp"

namespace gpubench::augment {

struct jpeg_corpus {
  std::vector<std::vector<std::uint8_t>> images;  // make_corpus's, in order
  double mean_bytes = 0;
};

// The run's corpus at width x height, made on first use on up to `threads` threads (0: every
// core), the case's own count: a case of one thread stays on one core, as a user who asked for
// one expects. The run keeps the latest size only (one of 8192x8192 pictures is about a
// gigabyte); a case keeps its own for as long as it runs. Throws the stop request's error if a
// stop came while it was made (nothing is kept then).
[[nodiscard]] std::shared_ptr<const jpeg_corpus> jpeg_corpus_for(const context& ctx, int width,
                                                                 int height, std::size_t threads);

}  // namespace gpubench::augment
