// The image pipeline of a typical PyTorch/torchvision training loader, in C++:
// JPEG decode -> RandomResizedCrop(224, scale 0.08-1, ratio 3/4-4/3, bilinear with antialias as
// PIL resizes) -> RandomHorizontalFlip -> ToTensor + Normalize(ImageNet mean/std), float32 CHW.
// Also the deterministic JPEG corpus it runs on. Used by cpu.augment and its tests.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace gpubench::augment {

struct rgb_image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // HWC, 3 bytes per pixel
};

struct crop_box {
  int top = 0;
  int left = 0;
  int height = 0;
  int width = 0;
};

// torchvision's RandomResizedCrop.get_params: up to 10 tries of a random area fraction in
// [0.08, 1] and log-uniform aspect ratio in [3/4, 4/3], else the centre crop.
[[nodiscard]] crop_box random_resized_crop_params(int width, int height, std::mt19937_64& rng);

// PIL's antialiased bilinear resize (ImagingResample, 8-bit fixed point, horizontal pass then
// vertical pass) of the `box` region of `src` to out_width x out_height.
[[nodiscard]] rgb_image resize_bilinear_antialias(const rgb_image& src, const crop_box& box,
                                                  int out_width, int out_height);

void flip_horizontal(rgb_image& image);

// ToTensor + Normalize: out[c][y][x] = (pixel / 255 - mean[c]) / std[c], CHW float32.
void normalize_to_chw(const rgb_image& image, float* out);
inline constexpr float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
inline constexpr float imagenet_std[3] = {0.229f, 0.224f, 0.225f};

// A deterministic, natural-image-like picture (1/f value noise in correlated colour, plus grain):
// encodes to ImageNet-like JPEG sizes (~110 KB at 500x375, quality 90). `stop`, when given, is
// asked once per row: true leaves the rest of the picture unmade (one 8192x8192 picture takes
// seconds), for a caller that then discards it.
[[nodiscard]] rgb_image synthetic_photo(int width, int height, std::uint32_t index,
                                        const std::function<bool()>& stop = {});

// The corpus cpu.augment and cpu.dataloader both run on: synthetic_photo 0..63, at quality 90.
inline constexpr int corpus_images = 64;
inline constexpr int corpus_jpeg_quality = 90;

// JPEG encode/decode with libturbojpeg (4:2:0, accurate DCT as libjpeg's default). Throws on a
// libturbojpeg error.
[[nodiscard]] std::vector<std::uint8_t> encode_jpeg(const rgb_image& image, int quality);

// The corpus at one image size: synthetic_photo 0..corpus_images-1, each encoded at
// corpus_jpeg_quality, made on up to `threads` threads, 0 for every core (image i depends on i
// alone, so the bytes do not depend on the split). `stop` is passed to synthetic_photo: a stopped
// corpus is unfinished and the caller discards it.
[[nodiscard]] std::vector<std::vector<std::uint8_t>> make_corpus(
    int width, int height, const std::function<bool()>& stop = {}, std::size_t threads = 0);

class jpeg_decoder {
 public:
  jpeg_decoder();
  jpeg_decoder(const jpeg_decoder&) = delete;
  jpeg_decoder& operator=(const jpeg_decoder&) = delete;
  ~jpeg_decoder();
  // Decodes into `out` (reusing its storage).
  void decode(const std::vector<std::uint8_t>& jpeg, rgb_image& out);

 private:
  void* handle_;
};

}  // namespace gpubench::augment
