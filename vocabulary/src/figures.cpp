#include "gpubench/vocabulary/figures.hpp"

#include <algorithm>
#include <vector>

#include "gpubench/core/precision.hpp"

namespace gpubench::vocabulary {

std::span<const figure_def* const> all_figures() {
  using namespace figures;
  static constexpr const figure_def* table[] = {
      &cpu_cores,
      &augment_per_core,
      &augment_pixels,
      &dataloader_per_worker,
      &dataloader_scaling,
      &dataloader_workers,
      &dataloader_pixels,
      &dataloader_decode_share,
      &dataloader_resize_share,
      &dataloader_transform_share,
      &dataloader_tensor_path,
      &host_memory,
      &storage_read,
      &storage_seq,
      &host_membw,
      &network,
      &pcie_gen,
      &pcie_h2d,
      &pcie_h2d_all,
      &peak_tflops,
      &gemm_efficiency,
      &decode_gemm_efficiency,
      &hbm_peak,
      &hbm_efficiency,
      &hbm,
      &gpu_memory,
      &memory_headroom,
      &sm_count,
      &tdp,
      &launch_latency,
      &nvlink,
      &busbw,
      &allreduce_latency,
      &price,
  };
  return table;
}

std::string key_of(const figure_def& f, std::string_view dtype) {
  std::string key(f.key);
  if (f.per_dtype) key.append(".").append(dtype);
  return key;
}

const renamed_figure* find_renamed_figure(std::string_view key) {
  static const renamed_figure renamed[] = {
      // GPU memory is a size: GiB, as nvidia-smi and PyTorch report it (issue 40). Until
      // 2026-11-26 it was decimal GB and the catalog wrote the datasheet's "80" there.
      {"gpu.memory_GB", &figures::gpu_memory, units::GB, "decimal GB, before 2026-11-26"},
  };
  for (const renamed_figure& r : renamed) {
    if (key == r.key) return &r;
  }
  return nullptr;
}

std::optional<named_figure> find_figure(std::string_view key) {
  for (const figure_def* f : all_figures()) {
    if (!f->per_dtype) {
      if (key == f->key) return named_figure{f, ""};
      continue;
    }
    if (key.size() > f->key.size() + 1 && key.starts_with(f->key) && key[f->key.size()] == '.') {
      const std::string_view dtype = key.substr(f->key.size() + 1);
      if (is_gemm_dtype(dtype)) return named_figure{f, std::string(dtype)};
    }
  }
  return std::nullopt;
}

std::vector<std::string> figure_keys() {
  std::vector<std::string> keys;
  for (const figure_def* f : all_figures()) {
    if (!f->per_dtype) keys.push_back(key_of(*f));
    for (const auto dtype : gemm_dtypes) {
      if (f->per_dtype) keys.push_back(key_of(*f, dtype));
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string figure_keys_text() {
  std::vector<std::string> keys;
  for (const figure_def* f : all_figures()) {
    keys.push_back(f->per_dtype ? std::string(f->key) + ".{" + gemm_dtype_list(",") + "}"
                                : std::string(f->key));
  }
  std::sort(keys.begin(), keys.end());
  std::string text;
  for (const std::string& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
}

json figures_json() {
  json out = json::array();
  for (const figure_def* f : all_figures()) {
    out.push_back({{"key", f->key},
                   {"per_dtype", f->per_dtype},
                   {"unit", f->in.symbol},
                   {"dimension", to_string(f->in.of)},
                   {"better", f->direction},
                   {"min", f->min},
                   {"max", f->max},
                   {"what_if", f->what_if},
                   {"of_gpu", f->of_gpu},
                   {"description", f->description}});
  }
  return out;
}

}  // namespace gpubench::vocabulary
