#include <catch2/catch.hpp>

#include <cmath>

#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"
#include "gpubench/benchmarks/cpu/jpeg_corpus.hpp"
#include "gpubench/harness/discovery.hpp"

using namespace gpubench::augment;

namespace {
rgb_image gray_row(std::vector<std::uint8_t> values) {
  rgb_image image;
  image.width = static_cast<int>(values.size());
  image.height = 1;
  for (auto v : values) image.pixels.insert(image.pixels.end(), {v, v, v});
  return image;
}
}  // namespace

TEST_CASE("antialiased bilinear downscale matches hand-computed PIL weights", "[augment]") {
  // 4 -> 2 pixels: scale 2, support 2. Output 0 has centre 1.0 and inputs 0..2 with triangle
  // weights 0.75, 0.75, 0.25 (normalized by 1.75): (0*.75 + 100*.75 + 200*.25) / 1.75 = 71.43.
  // Output 1 has centre 3.0, inputs 1..3, weights .25, .75, .75: (25 + 150 + 191.25) / 1.75 =
  // 209.29.
  const rgb_image src = gray_row({0, 100, 200, 255});
  const rgb_image out = resize_bilinear_antialias(src, {0, 0, 1, 4}, 2, 1);
  REQUIRE(out.pixels.size() == 6);
  CHECK(out.pixels[0] == 71);
  CHECK(out.pixels[3] == 209);
  CHECK(out.pixels[1] == 71);  // every channel alike
}

TEST_CASE("upscaling interpolates between neighbours", "[augment]") {
  // 2 -> 4 pixels: scale 0.5, support 1 (no widening). Output 1 has centre 0.75: inputs 0 and 1
  // with weights 1 - |0 - 0.75 + 0.5| = 0.75 and 1 - |1 - 0.75 + 0.5| = 0.25: 0.25 * 200 = 50.
  const rgb_image out = resize_bilinear_antialias(gray_row({0, 200}), {0, 0, 1, 2}, 4, 1);
  CHECK(out.pixels[0] == 0);
  CHECK(out.pixels[3] == 50);
  CHECK(out.pixels[6] == 150);
  CHECK(out.pixels[9] == 200);
}

TEST_CASE("the crop box selects the region that is resized", "[augment]") {
  const rgb_image src = gray_row({10, 20, 30, 40, 50, 60});
  const rgb_image out = resize_bilinear_antialias(src, {0, 2, 1, 3}, 3, 1);  // identity on 30..50
  CHECK(out.pixels[0] == 30);
  CHECK(out.pixels[3] == 40);
  CHECK(out.pixels[6] == 50);
  CHECK_THROWS_AS(resize_bilinear_antialias(src, {0, 4, 1, 3}, 3, 1), std::invalid_argument);
}

TEST_CASE("normalize gives ImageNet-standardized float32 CHW", "[augment]") {
  rgb_image image = gray_row({0, 255});
  image.pixels[3] = 255;  // pixel 1: R=255, G=255, B=255
  std::vector<float> out(6);
  normalize_to_chw(image, out.data());
  CHECK(out[0] == Approx((0 - 0.485) / 0.229));  // R plane, pixel 0
  CHECK(out[1] == Approx((1 - 0.485) / 0.229));  // R plane, pixel 1
  CHECK(out[2] == Approx((0 - 0.456) / 0.224));  // G plane
  CHECK(out[5] == Approx((1 - 0.406) / 0.225));  // B plane, pixel 1
}

TEST_CASE("horizontal flip mirrors each row", "[augment]") {
  rgb_image image = gray_row({1, 2, 3});
  flip_horizontal(image);
  CHECK(image.pixels == std::vector<std::uint8_t>{3, 3, 3, 2, 2, 2, 1, 1, 1});
}

TEST_CASE("RandomResizedCrop parameters follow torchvision", "[augment]") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 1000; ++i) {
    const crop_box b = random_resized_crop_params(500, 375, rng);
    REQUIRE(b.width > 0);
    REQUIRE(b.height > 0);
    REQUIRE(b.left + b.width <= 500);
    REQUIRE(b.top + b.height <= 375);
    const double area = static_cast<double>(b.width) * b.height / (500.0 * 375.0);
    CHECK(area >= 0.08 * 0.95);  // rounding of w and h
  }
  // A sliver no crop fits in: the centre crop with the aspect ratio clamped to 4/3.
  std::mt19937_64 rng2(1);
  const crop_box b = random_resized_crop_params(1000, 10, rng2);
  CHECK(b.height == 10);
  CHECK(b.width == 13);
  CHECK(b.left == (1000 - 13) / 2);
  CHECK(b.top == 0);
}

TEST_CASE("the JPEG corpus is deterministic and ImageNet-sized", "[augment]") {
  const auto a = encode_jpeg(synthetic_photo(500, 375, 3), 90);
  const auto b = encode_jpeg(synthetic_photo(500, 375, 3), 90);
  const auto c = encode_jpeg(synthetic_photo(500, 375, 4), 90);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.size() > 60'000);
  CHECK(a.size() < 160'000);
  jpeg_decoder decoder;
  rgb_image decoded;
  decoder.decode(a, decoded);
  CHECK(decoded.width == 500);
  CHECK(decoded.height == 375);
  // Natural-image-like: not flat, not white noise (neighbours correlate).
  double diff = 0;
  double spread = 0;
  for (std::size_t i = 3; i < decoded.pixels.size(); i += 3) {
    diff += std::abs(decoded.pixels[i] - decoded.pixels[i - 3]);
    spread += std::abs(decoded.pixels[i] - 128.0);
  }
  const double pixels = static_cast<double>(decoded.pixels.size() / 3);
  CHECK(spread / pixels > 10);
  CHECK(diff / pixels < 40);
  CHECK_THROWS_AS(decoder.decode(std::vector<std::uint8_t>{0xff, 0xd8, 0x00}, decoded),
                  std::runtime_error);
}

TEST_CASE("the corpus made on every core holds the bytes made picture by picture, once per run",
          "[augment]") {
  // Small pictures: the split over cores, not the size, is what is checked.
  const auto corpus = make_corpus(96, 72);
  REQUIRE(corpus.size() == static_cast<std::size_t>(corpus_images));
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    INFO("picture " << i);
    CHECK(corpus[i] ==
          encode_jpeg(synthetic_photo(96, 72, static_cast<std::uint32_t>(i)), corpus_jpeg_quality));
  }
  CHECK(make_corpus(96, 72, {}, 1) == corpus);  // on one thread: the same bytes
  // The run's cases share one corpus of a size; a new size replaces it in the run, and a case
  // that holds the old one keeps it.
  const gpubench::context ctx(gpubench::system_info{}, gpubench::run_options{});
  const auto first = jpeg_corpus_for(ctx, 96, 72, 0);
  CHECK(jpeg_corpus_for(ctx, 96, 72, 0) == first);
  CHECK(first->images == corpus);
  double bytes = 0;
  for (const auto& jpeg : corpus) bytes += static_cast<double>(jpeg.size());
  CHECK(first->mean_bytes == Approx(bytes / corpus_images));
  const auto other = jpeg_corpus_for(ctx, 64, 48, 1);
  CHECK(other != first);
  CHECK(ctx.resources().size() == 1);
  CHECK(first->images == corpus);
  CHECK(jpeg_corpus_for(ctx, 96, 72, 0) != first);  // made again: the run kept only 64x48
}
