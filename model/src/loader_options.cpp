// The image loaders a workload's data.loader can name, and what each costs per image: a table
// (docs/model.md, "The input pipeline"). A python-side option changes parts of one DataLoader
// worker's time per image, which cpu.dataloader splits into the JPEG decode, RandomResizedCrop,
// the other transforms and the rest (collation and the hand-over to the main process); the
// native loader is cpu.augment's C++ pipeline; DALI's GPU decode moves decoding onto the GPUs.
#include <algorithm>
#include <cmath>

#include "components.hpp"

namespace gpubench::model::detail {

namespace {

// A python worker's time per image, as a share of the vanilla loader's at the measured image
// size, where the image has `pixels` times the measured pixels: decode and crop/resize scale
// with the source pixels, the transforms of the 224x224 crop and the hand-over do not.
double vanilla(const loader_split& s, const constants& /*c*/, double pixels) {
  return (s.decode + s.resize) * pixels + (s.transforms - s.decode - s.resize) + (1 - s.transforms);
}
// Pillow-SIMD replaces Pillow's resampling with SIMD code; decoding is libjpeg-turbo either way.
double pillow_simd(const loader_split& s, const constants& c, double pixels) {
  return (s.decode + s.resize / c.pillow_simd_resize_speedup) * pixels +
         (s.transforms - s.decode - s.resize) + (1 - s.transforms);
}
// torchvision.io.decode_jpeg and the tensor transforms in place of PIL: the script times that
// path too; it scales with the image as the PIL transforms it replaces do.
double torchvision_io(const loader_split& s, const constants& /*c*/, double pixels) {
  const double pil = (s.decode + s.resize) * pixels + (s.transforms - s.decode - s.resize);
  return s.torchvision_io / s.transforms * pil + (1 - s.transforms);
}

const loader_option options[] = {
    {"python", loader_kind::python_worker, 0, "PyTorch DataLoader workers: PIL decode, torchvision",
     vanilla},
    {"pillow-simd", loader_kind::python_worker, 1,
     "Pillow-SIMD installed in place of Pillow, the script unchanged", pillow_simd},
    {"torchvision-io", loader_kind::python_worker, 2,
     "torchvision.io.decode_jpeg and tensor transforms in the Dataset", torchvision_io},
    {"native", loader_kind::native, 3,
     "a compiled CPU pipeline: DALI on the CPU, FFCV, or cpu.augment's own", nullptr},
    {"dali-gpu", loader_kind::gpu_decode, 4,
     "the loader rewritten as an NVIDIA DALI pipeline that decodes on the GPUs", nullptr},
};

}  // namespace

std::span<const loader_option> loader_options() {
  return options;
}

const loader_option& find_loader(std::string_view name) {
  for (const loader_option& o : options) {
    if (o.name == name) return o;
  }
  return options[0];  // workload.cpp refuses names outside the table
}

std::vector<std::string> loader_names() {
  std::vector<std::string> out;
  for (const loader_option& o : options) out.emplace_back(o.name);
  return out;
}

loader_split loader_split_of(const hardware_profile& hw, const constants& c) {
  loader_split s{c.loader_decode_share, c.loader_resize_share, c.loader_transform_share,
                 c.loader_torchvision_io_share, basis::assumed_default};
  const auto decode = hw.value(fig::dataloader_decode_share);
  const auto resize = hw.value(fig::dataloader_resize_share);
  if (decode && resize) {
    s.decode = *decode;
    s.resize = *resize;
    s.from = basis_of(hw.find(fig::dataloader_decode_share));
  }
  // The transforms' share and the tensor path's come as one pair: the second is only
  // meaningful against the first.
  const auto transforms = hw.value(fig::dataloader_transform_share);
  const auto tensor = hw.value(fig::dataloader_tensor_path);
  if (transforms && tensor && *transforms >= s.decode + s.resize) {
    s.transforms = *transforms;
    s.torchvision_io = *tensor;
  }
  return s;
}

}  // namespace gpubench::model::detail
