// Writes cpu.augment's JPEG corpus (the same bytes the benchmark generates) and, for image 0,
// the benchmark's resize of a fixed crop, so docs/validation/augment_vs_pil.py can run PIL on
// the same files and compare both speed and pixels.
// Usage: gpubench_jpeg_corpus OUT_DIR [COUNT]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"

int main(int argc, char** argv) {
  using namespace gpubench::augment;
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " OUT_DIR [COUNT]\n";
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  const int count = argc > 2 ? std::stoi(argv[2]) : 64;
  std::filesystem::create_directories(dir);
  // The benchmark's own corpus (made on every core), and any pictures past it one by one.
  const auto corpus = make_corpus(500, 375);
  std::vector<std::uint8_t> first;
  for (int i = 0; i < count; ++i) {
    const auto jpeg = i < corpus_images
                          ? corpus[static_cast<std::size_t>(i)]
                          : encode_jpeg(synthetic_photo(500, 375, static_cast<std::uint32_t>(i)),
                                        corpus_jpeg_quality);
    char name[32];
    std::snprintf(name, sizeof name, "img_%03d.jpg", i);
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(jpeg.data()),
               static_cast<std::streamsize>(jpeg.size()));
    if (i == 0) first = jpeg;
  }
  // The fixed crop cpu.augment's own check uses: (top, left, height, width) of a 500x375 image.
  jpeg_decoder decoder;
  rgb_image image;
  decoder.decode(first, image);
  const crop_box box{image.height / 8, image.width / 10, image.height * 3 / 4, image.width * 4 / 5};
  const rgb_image out = resize_bilinear_antialias(image, box, 224, 224);
  std::ofstream ppm(dir / "img_000_crop_224.ppm", std::ios::binary);
  ppm << "P6\n224 224\n255\n";
  ppm.write(reinterpret_cast<const char*>(out.pixels.data()),
            static_cast<std::streamsize>(out.pixels.size()));
  std::cout << box.top << " " << box.left << " " << box.height << " " << box.width << "\n";
  return 0;
}
