#include "gpubench/benchmarks/cpu/jpeg_corpus.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"
#include "gpubench/harness/runner.hpp"

namespace gpubench::augment {
namespace {

struct latest_corpus {
  int width = 0;
  int height = 0;
  std::shared_ptr<const jpeg_corpus> corpus;
};

}  // namespace

std::shared_ptr<const jpeg_corpus> jpeg_corpus_for(const context& ctx, int width, int height,
                                                   std::size_t threads) {
  const std::string key = "jpeg corpus";
  auto* latest = ctx.resources().find<latest_corpus>(key);
  if (latest != nullptr && latest->width == width && latest->height == height) {
    return latest->corpus;
  }
  if (latest != nullptr) ctx.resources().remove(key);  // the cases that hold it keep it
  auto made = std::make_shared<jpeg_corpus>();
  made->images = make_corpus(
      width, height, [] { return interrupt_requested(); }, threads);
  stop_if_interrupted("while the JPEG corpus was made");
  if (std::any_of(made->images.begin(), made->images.end(),
                  [](const auto& jpeg) { return jpeg.empty(); })) {
    throw std::runtime_error("the JPEG corpus was left unfinished");
  }
  double bytes = 0;
  for (const auto& jpeg : made->images) bytes += static_cast<double>(jpeg.size());
  made->mean_bytes = bytes / static_cast<double>(made->images.size());
  auto slot = std::make_unique<latest_corpus>();
  slot->width = width;
  slot->height = height;
  slot->corpus = std::move(made);
  return ctx.resources().add(key, std::move(slot)).corpus;
}

}  // namespace gpubench::augment
