// The input pipeline (docs/model.md): it runs beside the GPUs, so each of its parts limits the
// job only where it is slower: CPU data preparation (per-core rate x loader cores), storage
// (random reads of the stored samples, unless the dataset fits in the page cache) and host-to-GPU
// copies (bytes per sample at the all-GPU rate).
#include <algorithm>
#include <cmath>

#include "components.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/measurements.hpp"

namespace gpubench::model::detail {

namespace {

namespace measurements = vocabulary::measurements;

// Linear in the worker count between one worker (1) and the most measured (the measured
// scaling), held beyond: the per-worker rate of a DataLoader with n workers over its one-worker
// rate.
double scaling_at(const hardware_profile& hw, double n) {
  const double most = hw.value(fig::dataloader_workers).value_or(1);
  const double scaling = hw.value(fig::dataloader_scaling).value_or(1);
  if (most <= 1 || n <= 1) return n <= 1 ? 1.0 : scaling;
  return n >= most ? scaling : 1 + (scaling - 1) * (n - 1) / (most - 1);
}

// What one loader core does for this workload's images with its loader, and what that rests
// on. `band` is the per-core rate at the ends of an assumed ratio's measured range.
struct core_rate {
  double per_core = 0;
  basis from = basis::unknown;
  std::string detail;
  std::optional<std::pair<double, double>> band;
};

// cpu.augment's rate per core and the image it was measured at, or the default (said in
// `assumed`) where the profile has none: what both the derived python rate and the native one
// start from.
struct augment_rate {
  const figure* measured = nullptr;
  double per_core = 0;
  double pixels = 0;
};
augment_rate augment_rate_of(const hardware_profile& hw, const constants& c,
                             std::vector<std::string>* assumed) {
  augment_rate out;
  out.measured = hw.find(fig::augment_per_core);
  out.per_core = out.measured ? out.measured->value : c.default_augment_per_core;
  if (!out.measured && assumed) {
    assumed->push_back(vocabulary::key_of(fig::augment_per_core) + " (default " +
                       fmt(out.per_core) + "/s)");
  }
  out.pixels = hw.value(fig::augment_pixels).value_or(500.0 * 375.0);
  return out;
}

core_rate python_rate(const hardware_profile& hw, const data_spec& data, const constants& c,
                      const loader_option& option, double loader_cores,
                      std::vector<std::string>* assumed) {
  const double pixels = static_cast<double>(data.image_width) * data.image_height;
  const loader_split split = loader_split_of(hw, c);
  core_rate out;
  if (const figure* one = hw.find(fig::dataloader_per_worker)) {
    const double measured_pixels = hw.value(fig::dataloader_pixels).value_or(500.0 * 375.0);
    const double share = option.time_share(split, c, pixels / measured_pixels);
    const double scaling = scaling_at(hw, loader_cores);
    out.per_core = one->value * scaling / share;
    out.from = basis_of(one);
    out.detail =
        measurements::dataloader.benchmark + ": " + fmt(one->value) + " images/s with one worker";
    if (scaling != 1) out.detail += ", x" + fmt(scaling, 2) + " per worker at " + fmt(loader_cores);
    return out;
  }
  // No DataLoader measured: gpubench's C++ pipeline rate times the ratio a DataLoader worker
  // was measured at on other machines, the spread of that ratio as the band.
  const augment_rate augment_at = augment_rate_of(hw, c, assumed);
  const figure* augment = augment_at.measured;
  const double per_core = augment_at.per_core;
  const double share = option.time_share(split, c, pixels / augment_at.pixels);
  out.per_core = per_core * c.loader_efficiency / share;
  out.band = {
      {per_core * c.loader_efficiency_low / share, per_core * c.loader_efficiency_high / share}};
  out.from = augment ? (augment->from == basis::set ? basis::set : basis::derived)
                     : basis::assumed_default;
  out.detail = measurements::augment_per_core.benchmark + " " + fmt(per_core) +
               "/s x loader_efficiency " + fmt(c.loader_efficiency, 2) + " (measured " +
               fmt(c.loader_efficiency_low, 2) + " to " + fmt(c.loader_efficiency_high, 2) +
               " across machines; " + measurements::dataloader.benchmark + " measures it)";
  return out;
}

core_rate native_rate(const hardware_profile& hw, const data_spec& data, const constants& c,
                      std::vector<std::string>* assumed) {
  const augment_rate augment = augment_rate_of(hw, c, assumed);
  core_rate out;
  // Decoding dominates gpubench's C++ pipeline and scales with the source pixels.
  out.per_core = augment.per_core * augment.pixels /
                 (static_cast<double>(data.image_width) * data.image_height);
  out.from = augment.measured ? basis_of(augment.measured) : basis::assumed_default;
  out.detail = measurements::augment_per_core.benchmark;
  return out;
}

// The storage figure a dataset is read at: random reads of one file per sample, or sequential
// reads of tar shards (WebDataset), where the storage's sequential rate was measured.
struct storage_read_rate {
  const figure* rate;
  const figure_def* def;
  std::string how;
};
std::optional<storage_read_rate> storage_rate(const hardware_profile& hw, const data_spec& data) {
  if (data.format == "shards") {
    if (const figure* seq = hw.find(fig::storage_seq)) {
      return storage_read_rate{seq, &fig::storage_seq, "sequential reads of tar shards"};
    }
  }
  if (const figure* read = hw.find(fig::storage_read)) {
    return storage_read_rate{read, &fig::storage_read, "random reads"};
  }
  return std::nullopt;
}

}  // namespace

cpu_ceiling cpu_ceiling_of(const hardware_profile& hw, const data_spec& data, const constants& c,
                           int gpus_per_node, int nodes, std::vector<std::string>* assumed) {
  cpu_ceiling out;
  const loader_option& option = find_loader(data.loader);
  const std::string image =
      std::to_string(data.image_width) + "x" + std::to_string(data.image_height) + " JPEG";
  if (option.kind == loader_kind::gpu_decode) {
    // The GPUs decode; what the CPU still does (reading files, DALI's scheduling) is not
    // modelled as a limit.
    const double pixels = static_cast<double>(data.image_width) * data.image_height;
    out.per_core = c.dali_gpu_decode_per_gpu * (500.0 * 375.0) / pixels;
    out.comp = make_component(
        component_id::cpu, out.per_core * gpus_per_node * nodes, basis::assumed_default,
        std::to_string(gpus_per_node) + " GPUs x " + fmt(out.per_core) +
            " images/s of GPU JPEG decoding (DALI mixed; dali_gpu_decode_per_gpu, A100's figure, "
            "for " +
            image + ")");
    return out;
  }
  const figure* cores = hw.find(fig::cpu_cores);
  if (cores == nullptr) {
    out.comp = make_component(component_id::cpu, std::nullopt, basis::unknown,
                              "CPU core count unknown for this profile");
    return out;
  }
  out.free_cores = std::max(1.0, cores->value - c.loader_cores_reserved_per_gpu * gpus_per_node);
  out.loader_cores = out.free_cores;
  if (data.loader_workers_per_gpu) {
    out.loader_cores = std::min(out.loader_cores,
                                static_cast<double>(*data.loader_workers_per_gpu) * gpus_per_node);
  }
  out.idle_cores = out.free_cores - out.loader_cores;
  const core_rate rate = option.kind == loader_kind::native
                             ? native_rate(hw, data, c, assumed)
                             : python_rate(hw, data, c, option, out.loader_cores, assumed);
  out.per_core = rate.per_core;
  const double scale = out.loader_cores * nodes;
  out.comp = make_component(
      component_id::cpu, out.per_core * scale, rate.from,
      fmt(out.loader_cores) + " loader cores x " + fmt(out.per_core) + " samples/s per core (" +
          data.loader + " loader, " + image + "; " + rate.detail + ")" +
          (out.idle_cores > 0
               ? "; " + fmt(out.idle_cores) + " more cores idle: " +
                     std::to_string(*data.loader_workers_per_gpu) + " loader workers per GPU"
               : std::string()));
  if (rate.band) out.comp.range = {{rate.band->first * scale, rate.band->second * scale}};
  if (cores->from == basis::set) out.comp.basis = basis::set;
  if (rate.from == basis::measured && option.kind == loader_kind::python_worker) {
    cite_noise(out.comp.noisy, hw, fig::dataloader_per_worker);
  } else {
    cite_noise(out.comp.noisy, hw, fig::augment_per_core);
  }
  return out;
}

input_pipeline input_ceilings(const hardware_profile& hw, const workload& w, const constants& c,
                              int gpus_per_node, int nodes, std::vector<std::string>& assumed) {
  input_pipeline in;
  in.cpu = make_component(component_id::cpu, std::nullopt, basis::not_applicable, "");
  in.storage = make_component(component_id::storage, std::nullopt, basis::not_applicable, "");
  in.pcie = make_component(component_id::pcie, std::nullopt, basis::not_applicable, "");
  const data_spec& data = w.data;
  if (data.source == "synthetic") {
    in.cpu.detail = in.storage.detail = in.pcie.detail = "synthetic data: no input pipeline";
    return in;
  }
  if (data.pipeline == "jpeg_rrc_flip_normalize") {
    const cpu_ceiling cpu = cpu_ceiling_of(hw, data, c, gpus_per_node, nodes, &assumed);
    in.cpu = cpu.comp;
    in.per_core = cpu.per_core;
    in.loader_cores = cpu.loader_cores;
    in.free_cores = cpu.free_cores;
    in.idle_cores = cpu.idle_cores;
  } else {
    in.cpu.detail = "token pipeline: no per-sample CPU decode";
  }
  const double memory_bytes = hw.value(fig::host_memory).value_or(0) * giga;
  const bool fits_in_cache = data.dataset_bytes > 0 && memory_bytes > 0 &&
                             data.dataset_bytes <= c.page_cache_fraction * memory_bytes;
  if (fits_in_cache) {
    in.storage =
        make_component(component_id::storage, std::nullopt, basis_of(hw.find(fig::host_memory)),
                       "dataset (" + fmt(data.dataset_bytes / giga) +
                           " GB) fits in the page cache after the first epoch");
  } else if (const auto read = storage_rate(hw, data)) {
    in.storage = make_component(component_id::storage,
                                read->rate->value * giga / data.bytes_per_sample_stored * nodes,
                                basis_of(read->rate),
                                fmt(read->rate->value) + " GB/s " + read->how + " / " +
                                    fmt(data.bytes_per_sample_stored / 1e3) + " kB per sample");
    cite_noise(in.storage.noisy, hw, *read->def);
  } else {
    in.storage = make_component(component_id::storage, std::nullopt, basis::unknown,
                                "storage read rate unknown for this profile");
  }
  const figure* all = hw.find(fig::pcie_h2d_all);
  const figure* one = hw.find(fig::pcie_h2d);
  if (data.bytes_per_sample_h2d > 0 && (all || one)) {
    const double per_node = all ? all->value : one->value * gpus_per_node;
    if (!all) assumed.push_back("pcie.h2d_all_GBps (per-GPU rate x GPUs)");
    in.pcie =
        make_component(component_id::pcie, per_node * giga / data.bytes_per_sample_h2d * nodes,
                       basis_of(all ? all : one),
                       fmt(per_node) + " GB/s host-to-GPU per node / " +
                           fmt(data.bytes_per_sample_h2d / 1e3) + " kB per sample");
    cite_noise(in.pcie.noisy, hw, all ? fig::pcie_h2d_all : fig::pcie_h2d);
  }
  return in;
}

void add_activation_offload(const hardware_profile& hw, double bytes, double samples_per_step,
                            input_pipeline& in, std::vector<std::string>& assumed) {
  if (bytes <= 0) return;
  const figure* link = hw.find(fig::pcie_h2d);
  if (link == nullptr) {
    assumed.push_back("pcie.h2d_GBps unknown: the offloaded activations' copies are not counted");
    return;
  }
  const double seconds = bytes / (link->value * giga);
  // The input copies and the activations coming back share the host-to-GPU direction.
  const double input_seconds =
      in.pcie.samples_per_s ? samples_per_step / *in.pcie.samples_per_s : 0.0;
  const std::string offload = fmt(bytes / giga) + " GB of offloaded activations per micro-batch " +
                              "each way at " + fmt(link->value) + " GB/s per GPU";
  in.pcie = make_component(component_id::pcie, samples_per_step / (seconds + input_seconds),
                           basis_of(link),
                           in.pcie.samples_per_s ? in.pcie.detail + "; " + offload : offload);
  cite_noise(in.pcie.noisy, hw, fig::pcie_h2d);
}

namespace {

// Pre-resizing the stored images so their shorter side is this (RandomResizedCrop to 224 still
// has room), as the fast ImageNet training recipes store them.
constexpr double pre_resized_side = 256;

// The loader changes that lift a CPU-bound image job, cheapest first (loader_options.cpp's
// effort, with pre-resized images after the script changes), with the CPU ceiling each gives;
// the first one that keeps the GPUs fed is named.
void advise_loader(const hardware_profile& hw, const workload& w, const constants& c,
                   int gpus_per_node, int nodes, double gpu_rate,
                   std::vector<std::string>& advice) {
  const loader_option& now = find_loader(w.data.loader);
  struct change {
    double effort;
    std::string what;
    data_spec data;
  };
  std::vector<change> changes;
  for (const loader_option& o : loader_options()) {
    if (o.effort <= now.effort) continue;
    data_spec d = w.data;
    d.loader = o.name;
    changes.push_back({static_cast<double>(o.effort),
                       "data.loader " + std::string(o.name) + " (" + std::string(o.change) + ")",
                       d});
  }
  const double shorter = std::min(w.data.image_width, w.data.image_height);
  if (now.kind != loader_kind::gpu_decode && shorter > pre_resized_side * 1.1) {
    data_spec d = w.data;
    const double scale = pre_resized_side / shorter;
    d.image_width = static_cast<int>(std::lround(w.data.image_width * scale));
    d.image_height = static_cast<int>(std::lround(w.data.image_height * scale));
    changes.push_back({2.5,
                       "images stored pre-resized to " + std::to_string(d.image_width) + "x" +
                           std::to_string(d.image_height) + " (shorter side " +
                           fmt(pre_resized_side) + ", once, offline)",
                       d});
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const change& a, const change& b) { return a.effort < b.effort; });
  std::vector<std::string> listed;
  std::optional<std::string> enough;
  std::pair<double, std::string> best{0, ""};
  for (const change& ch : changes) {
    const cpu_ceiling ceiling = cpu_ceiling_of(hw, ch.data, c, gpus_per_node, nodes, nullptr);
    if (!ceiling.comp.samples_per_s) continue;
    const double rate = *ceiling.comp.samples_per_s;
    listed.push_back(ch.what + ": " + fmt(rate));
    if (!enough && rate >= gpu_rate) {
      enough = ch.what + ", CPU ceiling " + fmt(rate) + " samples/s";
    }
    if (rate > best.first) best = {rate, ch.what};
  }
  if (listed.empty()) return;
  const std::string fed =
      std::to_string(gpus_per_node * nodes) + " GPUs fed at " + fmt(gpu_rate) + " samples/s";
  advice.push_back(enough ? "the cheapest loader change that keeps the " + fed + ": " + *enough
                          : "no loader change alone keeps the " + fed + "; the most, " +
                                fmt(best.first) + " samples/s: " + best.second);
  advice.push_back("CPU ceilings (samples/s) of the loader changes, cheapest first: " +
                   join(listed, "; "));
}

}  // namespace

void advise_input(component_id limit, const input_pipeline& in, const hardware_profile& hw,
                  const workload& w, const constants& c, int gpus_per_node, int nodes,
                  double gpu_rate, std::vector<std::string>& advice) {
  const data_spec& data = w.data;
  if (limit == component_id::cpu) {
    const double reserved = c.loader_cores_reserved_per_gpu * gpus_per_node;
    const double loader_cores_needed = std::ceil(gpu_rate / nodes / in.per_core);
    const std::string fed = " to keep " + std::to_string(gpus_per_node) + " GPUs fed at " +
                            fmt(gpu_rate) + " samples/s";
    if (in.idle_cores > 0) {
      // Cores the node has but the workers cap leaves unused come first: they cost nothing.
      const double workers_to_use_them = std::floor(in.free_cores / gpus_per_node);
      const double workers_needed = std::ceil(loader_cores_needed / gpus_per_node);
      const double reach = std::min(gpu_rate, in.per_core * gpus_per_node * nodes *
                                                  std::min(workers_to_use_them, workers_needed));
      advice.push_back(
          fmt(in.idle_cores) + " of the node's cores sit idle: loader_workers_per_gpu " +
          std::to_string(*w.data.loader_workers_per_gpu) + " caps the loaders at " +
          fmt(in.loader_cores) + "; " + fmt(std::min(workers_to_use_them, workers_needed)) +
          " workers per GPU would take the CPU ceiling to " + fmt(reach) + " samples/s");
    }
    if (loader_cores_needed > in.free_cores) {
      advice.push_back("CPU data preparation limits the job: needs " +
                       fmt(loader_cores_needed + reserved) + " cores per node (" +
                       fmt(loader_cores_needed - in.free_cores) + " more)" + fed);
    }
    advise_loader(hw, w, c, gpus_per_node, nodes, gpu_rate, advice);
  }
  if (limit == component_id::storage) {
    const double needed = gpu_rate / nodes * data.bytes_per_sample_stored / giga;
    advice.push_back("storage limits the job: needs " + fmt(needed) +
                     " GB/s of random reads per node to keep the GPUs busy");
    const double memory_bytes = hw.value(fig::host_memory).value_or(0) * giga;
    if (data.dataset_bytes > 0) {
      advice.push_back(
          "the dataset (" + fmt(data.dataset_bytes / giga) + " GB) does not fit in " +
          fmt(c.page_cache_fraction * 100, 2) + "% of RAM (" + fmt(memory_bytes / giga) +
          " GB): " + fmt(std::ceil(data.dataset_bytes / c.page_cache_fraction / giga)) +
          " GB of RAM would serve epochs after the first from the page cache");
    }
  }
  if (limit == component_id::pcie && w.model.params.contains("activation_offload_layers") &&
      w.model.params.at("activation_offload_layers") > 0) {
    advice.push_back(
        "the GPUs' host link limits the job: offloaded activations go out and come back each "
        "micro-batch; fewer offloaded layers (activation_offload_layers), activation "
        "checkpointing or a faster host link move it");
    return;
  }
  if (limit == component_id::pcie) {
    const double needed = gpu_rate / nodes * data.bytes_per_sample_h2d / giga;
    advice.push_back(
        "host-to-GPU copies limit the job: needs " + fmt(needed) +
        " GB/s per node; send uint8 images and normalise on the GPU, or use GPU decoding");
  }
}

}  // namespace gpubench::model::detail
