// The input pipeline (docs/model.md): it runs beside the GPUs, so each of its parts limits the
// job only where it is slower: CPU data preparation (per-core rate x loader cores), storage
// (random reads of the stored samples, unless the dataset fits in the page cache) and host-to-GPU
// copies (bytes per sample at the all-GPU rate).
#include <algorithm>
#include <cmath>

#include "components.hpp"

namespace gpubench::model::detail {

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
    const figure* rate = hw.find(fig::augment_per_core);
    in.per_core = rate ? rate->value : c.default_augment_per_core;
    if (!rate) assumed.push_back("cpu.augment_per_core (default " + fmt(in.per_core) + "/s)");
    // Decoding dominates and scales with the source pixels: rescale from the measured size.
    const double measured_pixels = hw.value(fig::augment_pixels).value_or(500.0 * 375.0);
    in.per_core *= measured_pixels / (static_cast<double>(data.image_width) * data.image_height);
    if (data.loader == "python") in.per_core *= c.loader_efficiency;
    if (const figure* cores = hw.find(fig::cpu_cores)) {
      in.free_cores = std::max(1.0, cores->value - c.loader_cores_reserved_per_gpu * gpus_per_node);
      in.loader_cores = in.free_cores;
      if (data.loader_workers_per_gpu) {
        in.loader_cores = std::min(
            in.loader_cores, static_cast<double>(*data.loader_workers_per_gpu) * gpus_per_node);
      }
      in.idle_cores = in.free_cores - in.loader_cores;
      in.cpu = make_component(
          component_id::cpu, in.per_core * in.loader_cores * nodes,
          rate ? basis_of(rate) : basis::assumed_default,
          fmt(in.loader_cores) + " loader cores x " + fmt(in.per_core) + " samples/s per core (" +
              data.loader + " loader, " + std::to_string(data.image_width) + "x" +
              std::to_string(data.image_height) + " JPEG)" +
              (in.idle_cores > 0
                   ? "; " + fmt(in.idle_cores) + " more cores idle: " +
                         std::to_string(*data.loader_workers_per_gpu) + " loader workers per GPU"
                   : std::string()));
      if (cores->from == basis::set) in.cpu.basis = basis::set;
      cite_noise(in.cpu.noisy, hw, fig::augment_per_core);
    } else {
      in.cpu = make_component(component_id::cpu, std::nullopt, basis::unknown,
                              "CPU core count unknown for this profile");
    }
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
  } else if (const figure* read = hw.find(fig::storage_read)) {
    in.storage =
        make_component(component_id::storage,
                       read->value * giga / data.bytes_per_sample_stored * nodes, basis_of(read),
                       fmt(read->value) + " GB/s random reads / " +
                           fmt(data.bytes_per_sample_stored / 1e3) + " kB per sample");
    cite_noise(in.storage.noisy, hw, fig::storage_read);
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
    if (data.loader == "python") {
      advice.push_back("a native loader (DALI CPU or a C++ pipeline) runs about " +
                       fmt(1 / c.loader_efficiency, 2) +
                       "x faster per core than torchvision/PIL "
                       "workers; GPU JPEG decoding (DALI mixed) removes most of the CPU work");
    }
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
