#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"

#include "gpubench/core/config.hpp"
#include "gpubench/core/parallel.hpp"

#if GPUBENCH_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpubench::augment {

crop_box random_resized_crop_params(int width, int height, std::mt19937_64& rng) {
  const double area = static_cast<double>(width) * height;
  const double log_min = std::log(3.0 / 4.0);
  const double log_max = std::log(4.0 / 3.0);
  std::uniform_real_distribution<double> scale(0.08, 1.0);
  std::uniform_real_distribution<double> log_ratio(log_min, log_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * scale(rng);
    const double aspect = std::exp(log_ratio(rng));
    const int w = static_cast<int>(std::lround(std::sqrt(target_area * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(target_area / aspect)));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int top = std::uniform_int_distribution<int>(0, height - h)(rng);
      const int left = std::uniform_int_distribution<int>(0, width - w)(rng);
      return {top, left, h, w};
    }
  }
  // Centre crop, aspect ratio clamped to [3/4, 4/3].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (in_ratio < 3.0 / 4.0) {
    h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
  } else if (in_ratio > 4.0 / 3.0) {
    w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

namespace {

constexpr int precision_bits = 32 - 8 - 2;  // PIL's PRECISION_BITS for 8-bit images

struct coefficients {
  int taps = 0;                 // coefficients per output pixel (padded)
  std::vector<int> first;       // first input index of each output pixel
  std::vector<int> count;       // inputs used by each output pixel
  std::vector<std::int32_t> k;  // fixed-point weights, taps per output pixel
};

// PIL's precompute_coeffs with the bilinear (triangle) filter, support 1, widened by the
// downscale factor (the antialias), then normalize_coeffs_8bpc.
coefficients precompute(int in_size, double in0, double in1, int out_size) {
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;
  coefficients c;
  c.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<std::size_t>(out_size));
  c.count.resize(static_cast<std::size_t>(out_size));
  c.k.assign(static_cast<std::size_t>(out_size) * static_cast<std::size_t>(c.taps), 0);
  std::vector<double> w(static_cast<std::size_t>(c.taps));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filter_scale;
    // PIL truncates (center -/+ support + 0.5) toward zero; kept so pixels match it exactly.
    int xmin = static_cast<int>(center - support + 0.5);  // NOLINT(bugprone-incorrect-roundings)
    xmin = std::max(xmin, 0);
    int xmax = static_cast<int>(center + support + 0.5);  // NOLINT(bugprone-incorrect-roundings)
    xmax = std::min(xmax, in_size) - xmin;
    double total = 0;
    for (int x = 0; x < xmax; ++x) {
      const double t = std::abs((x + xmin - center + 0.5) * ss);
      w[static_cast<std::size_t>(x)] = t < 1.0 ? 1.0 - t : 0.0;
      total += w[static_cast<std::size_t>(x)];
    }
    for (int x = 0; x < xmax; ++x) {
      const double v = total != 0 ? w[static_cast<std::size_t>(x)] / total : 0;
      c.k[static_cast<std::size_t>(xx) * static_cast<std::size_t>(c.taps) +
          static_cast<std::size_t>(x)] =
          static_cast<std::int32_t>(v < 0 ? -0.5 + v * (1 << precision_bits)
                                          : 0.5 + v * (1 << precision_bits));
    }
    c.first[static_cast<std::size_t>(xx)] = xmin;
    c.count[static_cast<std::size_t>(xx)] = xmax;
  }
  return c;
}

std::uint8_t clip8(std::int64_t sum) {
  const std::int64_t v = sum >> precision_bits;
  return static_cast<std::uint8_t>(std::clamp<std::int64_t>(v, 0, 255));
}

}  // namespace

rgb_image resize_bilinear_antialias(const rgb_image& src, const crop_box& box, int out_width,
                                    int out_height) {
  if (box.width <= 0 || box.height <= 0 || box.left < 0 || box.top < 0 ||
      box.left + box.width > src.width || box.top + box.height > src.height) {
    throw std::invalid_argument("resize: crop box outside the image");
  }
  // Crop first (as torchvision's resized_crop does on PIL images), then resize the crop.
  const coefficients horizontal = precompute(box.width, 0, box.width, out_width);
  const coefficients vertical = precompute(box.height, 0, box.height, out_height);
  rgb_image temp;
  temp.width = out_width;
  temp.height = box.height;
  temp.pixels.resize(static_cast<std::size_t>(out_width) * box.height * 3);
  for (int y = 0; y < box.height; ++y) {
    const std::uint8_t* row =
        src.pixels.data() + (static_cast<std::size_t>(box.top + y) * src.width + box.left) * 3;
    std::uint8_t* out = temp.pixels.data() + static_cast<std::size_t>(y) * out_width * 3;
    for (int xx = 0; xx < out_width; ++xx) {
      const int first = horizontal.first[static_cast<std::size_t>(xx)];
      const int count = horizontal.count[static_cast<std::size_t>(xx)];
      const std::int32_t* k =
          &horizontal.k[static_cast<std::size_t>(xx) * static_cast<std::size_t>(horizontal.taps)];
      std::int64_t s0 = 1 << (precision_bits - 1);
      std::int64_t s1 = s0;
      std::int64_t s2 = s0;
      for (int x = 0; x < count; ++x) {
        const std::uint8_t* p = row + static_cast<std::size_t>(first + x) * 3;
        s0 += static_cast<std::int64_t>(p[0]) * k[x];
        s1 += static_cast<std::int64_t>(p[1]) * k[x];
        s2 += static_cast<std::int64_t>(p[2]) * k[x];
      }
      std::uint8_t* o = out + static_cast<std::size_t>(xx) * 3;
      o[0] = clip8(s0);
      o[1] = clip8(s1);
      o[2] = clip8(s2);
    }
  }
  rgb_image result;
  result.width = out_width;
  result.height = out_height;
  result.pixels.resize(static_cast<std::size_t>(out_width) * out_height * 3);
  for (int yy = 0; yy < out_height; ++yy) {
    const int first = vertical.first[static_cast<std::size_t>(yy)];
    const int count = vertical.count[static_cast<std::size_t>(yy)];
    const std::int32_t* k =
        &vertical.k[static_cast<std::size_t>(yy) * static_cast<std::size_t>(vertical.taps)];
    std::uint8_t* out = result.pixels.data() + static_cast<std::size_t>(yy) * out_width * 3;
    for (int xx = 0; xx < out_width * 3; ++xx) {
      std::int64_t s = 1 << (precision_bits - 1);
      for (int y = 0; y < count; ++y) {
        s += static_cast<std::int64_t>(
                 temp.pixels[static_cast<std::size_t>(first + y) * out_width * 3 +
                             static_cast<std::size_t>(xx)]) *
             k[y];
      }
      out[xx] = clip8(s);
    }
  }
  return result;
}

void flip_horizontal(rgb_image& image) {
  for (int y = 0; y < image.height; ++y) {
    std::uint8_t* row = image.pixels.data() + static_cast<std::size_t>(y) * image.width * 3;
    for (int a = 0, b = image.width - 1; a < b; ++a, --b) {
      for (int c = 0; c < 3; ++c) std::swap(row[a * 3 + c], row[b * 3 + c]);
    }
  }
}

void normalize_to_chw(const rgb_image& image, float* out) {
  // The passes torchvision makes, in its order: ToTensor (HWC uint8 to CHW float, then / 255),
  // then Normalize (per channel: - mean, then / std). One fused multiply-add pass would be several
  // times faster than the loaders this pipeline stands for (docs/methodology.md).
  const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
  for (int c = 0; c < 3; ++c) {
    float* dst = out + static_cast<std::size_t>(c) * plane;
    for (std::size_t i = 0; i < plane; ++i) {
      dst[i] = static_cast<float>(image.pixels[i * 3 + static_cast<std::size_t>(c)]);
    }
  }
  for (std::size_t i = 0; i < 3 * plane; ++i) out[i] /= 255.0f;
  for (int c = 0; c < 3; ++c) {
    float* dst = out + static_cast<std::size_t>(c) * plane;
    for (std::size_t i = 0; i < plane; ++i) dst[i] -= imagenet_mean[c];
    for (std::size_t i = 0; i < plane; ++i) dst[i] /= imagenet_std[c];
  }
}

namespace {
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Smoothly interpolated lattice noise in [-1, 1].
double value_noise(double x, double y, std::uint64_t seed) {
  const auto xi = static_cast<std::int64_t>(std::floor(x));
  const auto yi = static_cast<std::int64_t>(std::floor(y));
  const double fx = x - static_cast<double>(xi);
  const double fy = y - static_cast<double>(yi);
  const auto lattice = [seed](std::int64_t a, std::int64_t b) {
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(a) * 0x9E3779B97F4A7C15ULL +
                                           static_cast<std::uint64_t>(b)));
    return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  };
  const double sx = fx * fx * (3 - 2 * fx);
  const double sy = fy * fy * (3 - 2 * fy);
  const double top = lattice(xi, yi) + sx * (lattice(xi + 1, yi) - lattice(xi, yi));
  const double bottom = lattice(xi, yi + 1) + sx * (lattice(xi + 1, yi + 1) - lattice(xi, yi + 1));
  return top + sy * (bottom - top);
}
}  // namespace

rgb_image synthetic_photo(int width, int height, std::uint32_t index,
                          const std::function<bool()>& stop) {
  rgb_image image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<std::size_t>(width) * height * 3);
  const std::uint64_t seed = mix(0xC0FFEEULL + index);
  // A base colour per picture, a luminance field with a 1/f spectrum (octaves of halving
  // amplitude, as natural images have), a weaker colour field, and sensor-like grain.
  const double base[3] = {90.0 + static_cast<double>(mix(seed) % 80),
                          90.0 + static_cast<double>(mix(seed + 1) % 80),
                          80.0 + static_cast<double>(mix(seed + 2) % 80)};
  for (int y = 0; y < height; ++y) {
    if (stop && stop()) break;
    for (int x = 0; x < width; ++x) {
      double luminance = 0;
      double amplitude = 60;
      double frequency = 1.0 / 96;
      for (int octave = 0; octave < 8; ++octave) {
        luminance += amplitude * value_noise(x * frequency, y * frequency,
                                             seed + static_cast<std::uint64_t>(octave));
        amplitude *= 0.8;
        frequency *= 2;
      }
      const std::uint64_t grain =
          mix(seed ^ (static_cast<std::uint64_t>(y) << 32 | static_cast<std::uint64_t>(x)));
      for (int c = 0; c < 3; ++c) {
        const double chroma =
            25 * value_noise(x / 64.0, y / 64.0, seed + 100 + static_cast<std::uint64_t>(c));
        const double noise = static_cast<double>((grain >> (c * 8)) & 0xff) / 255.0 * 64 - 32;
        const double v = base[c] + luminance + chroma + noise;
        image.pixels[(static_cast<std::size_t>(y) * width + x) * 3 + static_cast<std::size_t>(c)] =
            static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return image;
}

std::vector<std::vector<std::uint8_t>> make_corpus(int width, int height,
                                                   const std::function<bool()>& stop,
                                                   std::size_t threads) {
  std::vector<std::vector<std::uint8_t>> corpus(corpus_images);
  // One picture per range: 64 of them at 500x375 take 5 s on one core.
  parallel_for(
      corpus.size(), 1,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          // Stopped: neither the pictures left nor the encode of an unfinished one (an 8192x8192
          // encode takes a second).
          if (stop && stop()) return;
          const rgb_image photo =
              synthetic_photo(width, height, static_cast<std::uint32_t>(i), stop);
          if (stop && stop()) return;
          corpus[i] = encode_jpeg(photo, corpus_jpeg_quality);
        }
      },
      threads);
  return corpus;
}

#if GPUBENCH_HAVE_TURBOJPEG
std::vector<std::uint8_t> encode_jpeg(const rgb_image& image, int quality) {
  tjhandle handle = tjInitCompress();
  if (handle == nullptr)
    throw std::runtime_error(std::string("tjInitCompress: ") + tjGetErrorStr2(nullptr));
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(handle, image.pixels.data(), image.width, 0, image.height, TJPF_RGB,
                             &jpeg, &size, TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
  if (rc != 0) {
    const std::string error = tjGetErrorStr2(handle);
    tjDestroy(handle);
    throw std::runtime_error("tjCompress2: " + error);
  }
  std::vector<std::uint8_t> out(jpeg, jpeg + size);
  tjFree(jpeg);
  tjDestroy(handle);
  return out;
}

jpeg_decoder::jpeg_decoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr)
    throw std::runtime_error(std::string("tjInitDecompress: ") + tjGetErrorStr2(nullptr));
}

jpeg_decoder::~jpeg_decoder() {
  tjDestroy(static_cast<tjhandle>(handle_));
}

void jpeg_decoder::decode(const std::vector<std::uint8_t>& jpeg, rgb_image& out) {
  auto* handle = static_cast<tjhandle>(handle_);
  int width = 0;
  int height = 0;
  int subsampling = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &width, &height, &subsampling,
                          &colorspace) != 0) {
    throw std::runtime_error(std::string("tjDecompressHeader3: ") + tjGetErrorStr2(handle));
  }
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<std::size_t>(width) * height * 3);
  // Flags 0: libjpeg's defaults (accurate integer IDCT, fancy upsampling), as PIL decodes.
  if (tjDecompress2(handle, jpeg.data(), jpeg.size(), out.pixels.data(), width, 0, height, TJPF_RGB,
                    0) != 0) {
    throw std::runtime_error(std::string("tjDecompress2: ") + tjGetErrorStr2(handle));
  }
}

#else
std::vector<std::uint8_t> encode_jpeg(const rgb_image&, int) {
  throw std::runtime_error("built without libturbojpeg");
}
jpeg_decoder::jpeg_decoder() : handle_(nullptr) {
  throw std::runtime_error("built without libturbojpeg");
}
jpeg_decoder::~jpeg_decoder() = default;
void jpeg_decoder::decode(const std::vector<std::uint8_t>&, rgb_image&) {}
#endif

}  // namespace gpubench::augment
