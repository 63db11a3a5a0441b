// A profile from a results file: which measurement each measured figure is read from, and how.
#include "catalog.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/json_reader.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/vocabulary/measurements.hpp"

namespace gpubench::model {
namespace {

// ---- measured figures: which results each comes from ------------------------------------------

using vocabulary::rows;
namespace measurements = vocabulary::measurements;

// A measured figure, marked with how far the repetitions of the rows it was made of spread.
void set_measured(hardware_profile& p, const figure_def& f, double value, const rows& from,
                  std::string source) {
  p.set(f, value, basis::measured, std::move(source));
  p.figures[vocabulary::key_of(f)].cv = vocabulary::worst_cv(from);
}

void read_gemm(const vocabulary::query& /*q*/, const rows& selected,
               const results_document& /*doc*/, hardware_profile& p) {
  for (const auto& [dtype, of_dtype] : vocabulary::group_by(selected, "dtype")) {
    for (const auto& [shape_text, points] : vocabulary::group_by(of_dtype, "shape")) {
      try {
        const gemm_shape shape = parse_gemm_shape(shape_text);
        p.gemm.push_back(gemm_point{dtype, shape.m, shape.n, shape.k,
                                    *vocabulary::median_of(points), vocabulary::worst_cv(points)});
      } catch (const std::invalid_argument&) {
        continue;  // not a shape the gemm benchmark writes: the point is left out
      }
    }
  }
}

void read_hbm(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
              hardware_profile& p) {
  set_measured(p, fig::hbm, *vocabulary::evaluate(selected, q), selected,
               q.benchmark + " (median over GPUs)");
}

void read_launch(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                 hardware_profile& p) {
  set_measured(p, fig::launch_latency, *vocabulary::evaluate(selected, q), selected,
               q.benchmark + " " + describe(q.where));
}

// A copy rate at the largest size measured.
void read_largest_copy(const vocabulary::query& q, const rows& selected, const figure_def& f,
                       hardware_profile& p) {
  const rows largest = vocabulary::at_largest(selected, q.axis);
  const auto bytes = axis_number(largest.front().from->axes, q.axis).value_or(0);
  set_measured(
      p, f, *vocabulary::median_of(largest), largest,
      q.benchmark + " pinned, " + std::to_string(static_cast<std::int64_t>(bytes)) + " bytes");
}
void read_h2d(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
              hardware_profile& p) {
  read_largest_copy(q, selected, fig::pcie_h2d, p);
}
void read_h2d_all(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                  hardware_profile& p) {
  read_largest_copy(q, selected, fig::pcie_h2d_all, p);
}

void read_allreduce(const vocabulary::query& q, const rows& selected, const results_document& doc,
                    hardware_profile& p) {
  for (const auto& [bytes, points] : vocabulary::group_by_number(selected, "bytes")) {
    p.allreduce.push_back(
        busbw_point{bytes, *vocabulary::median_of(points), vocabulary::worst_cv(points)});
  }
  (void)q;
  if (!p.allreduce.empty()) {
    p.allreduce_ranks = doc.meta.mpi_ranks > 1 ? doc.meta.mpi_ranks : p.gpus_per_node;
  }
}

void read_alltoall(const vocabulary::query& /*q*/, const rows& selected,
                   const results_document& doc, hardware_profile& p) {
  for (const auto& [bytes, points] : vocabulary::group_by_number(selected, "bytes")) {
    p.alltoall.push_back(
        busbw_point{bytes, *vocabulary::median_of(points), vocabulary::worst_cv(points)});
  }
  if (!p.alltoall.empty()) {
    p.alltoall_ranks = doc.meta.mpi_ranks > 1 ? doc.meta.mpi_ranks : p.gpus_per_node;
  }
}

void read_triad(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                hardware_profile& p) {
  set_measured(p, fig::host_membw, *vocabulary::evaluate(selected, q), selected,
               q.benchmark + " " + q.where.front().value);
}

// The block size nearest a typical dataset sample (128 KiB) wins; then the faster one.
void read_rand_read(const vocabulary::query& q, const rows& selected,
                    const results_document& /*doc*/, hardware_profile& p) {
  std::optional<std::pair<std::int64_t, vocabulary::row>> best;  // block size, its result
  const auto distance = [](std::int64_t b) {
    return std::abs(std::log2(static_cast<double>(std::max<std::int64_t>(b, 1)) / 131072.0));
  };
  for (const vocabulary::row& r : selected) {
    const double v = r.value();
    const auto block =
        static_cast<std::int64_t>(axis_number(r.from->axes, "block_size").value_or(0));
    if (!best || distance(block) < distance(best->first) ||
        (block == best->first && v > best->second.value())) {
      best = {{block, r}};
    }
  }
  if (best) {
    set_measured(p, fig::storage_read, best->second.value(), {best->second},
                 q.benchmark + ", " + std::to_string(best->first) + "-byte blocks");
  }
}

void read_seq_read(const vocabulary::query& q, const rows& selected,
                   const results_document& /*doc*/, hardware_profile& p) {
  const auto fastest = vocabulary::best_of(selected);
  if (fastest && fastest->value() > 0) {
    set_measured(p, fig::storage_seq, fastest->value(), {*fastest}, q.benchmark);
  }
}

// The per-core rate of the case with the most threads (later cases win ties), and the size of
// the image it decoded.
void read_augment(const vocabulary::query& q, const rows& selected, const results_document& /*doc*/,
                  hardware_profile& p) {
  const vocabulary::row last = vocabulary::at_largest(selected, q.axis).back();
  const double per_core = last.value();
  if (per_core <= 0) return;
  const json& axes = last.from->axes;
  const double pixels = axis_number(axes, "image_width").value_or(500) *
                        axis_number(axes, "image_height").value_or(375);
  const auto threads = static_cast<std::int64_t>(axis_number(axes, q.axis).value_or(1));
  set_measured(p, fig::augment_per_core, per_core, {last},
               q.benchmark + ", " + std::to_string(threads) + " threads");
  p.set(fig::augment_pixels, pixels, basis::measured, q.benchmark + " axes");
}

// PyTorch's DataLoader: the per-worker rate at the fewest workers measured (one, by default),
// how the per-worker rate holds at the most, the image size, and where one worker's time goes
// (the script's one-process stage times over the one-worker time per image).
void read_dataloader(const vocabulary::query& q, const rows& selected,
                     const results_document& /*doc*/, hardware_profile& p) {
  const auto by_workers = vocabulary::group_by_number(selected, "workers");
  if (by_workers.empty()) return;
  const auto& [fewest, first_rows] = *by_workers.begin();
  const auto& [most, last_rows] = *by_workers.rbegin();
  const double per_worker = *vocabulary::median_of(first_rows);
  if (per_worker <= 0) return;
  const vocabulary::row& first = first_rows.back();
  set_measured(p, fig::dataloader_per_worker, per_worker, first_rows,
               q.benchmark + ", " + format_number(fewest) + " worker(s)");
  p.set(fig::dataloader_scaling, *vocabulary::median_of(last_rows) / per_worker, basis::measured,
        q.benchmark + ", " + format_number(most) + " workers over " + format_number(fewest));
  p.figures[vocabulary::key_of(fig::dataloader_scaling)].cv = vocabulary::worst_cv(last_rows);
  p.set(fig::dataloader_workers, most, basis::measured, q.benchmark + " axes");
  const json& axes = first.from->axes;
  p.set(fig::dataloader_pixels,
        axis_number(axes, "image_width").value_or(500) *
            axis_number(axes, "image_height").value_or(375),
        basis::measured, q.benchmark + " axes");
  namespace stage = vocabulary::measurements::dataloader_stages;
  const json_view stages = first.from->info.view()[stage::list];
  const auto ms = [&](const char* name) -> std::optional<double> {
    const auto it = stages[name].number();
    if (!it || *it < 0) return std::nullopt;
    return it;
  };
  const double ms_per_image = 1e3 / per_worker;
  const auto decode = ms(stage::decode);
  const auto resize = ms(stage::crop_resize);
  if (decode && resize && *decode + *resize < ms_per_image) {
    p.set(fig::dataloader_decode_share, *decode / ms_per_image, basis::measured,
          q.benchmark + " info." + stage::list);
    p.set(fig::dataloader_resize_share, *resize / ms_per_image, basis::measured,
          q.benchmark + " info." + stage::list);
  }
  double pil_ms = 0;
  bool all_stages = true;
  for (const char* name :
       {stage::decode, stage::crop_resize, stage::flip, stage::to_tensor, stage::normalize}) {
    const auto v = ms(name);
    all_stages = all_stages && v.has_value();
    pil_ms += v.value_or(0);
  }
  const auto tensor_path = ms(stage::torchvision_io);
  if (all_stages && tensor_path && pil_ms <= ms_per_image) {
    p.set(fig::dataloader_transform_share, pil_ms / ms_per_image, basis::measured,
          q.benchmark + " info." + stage::list);
    p.set(fig::dataloader_tensor_path, *tensor_path / ms_per_image, basis::measured,
          q.benchmark + " info." + stage::list);
  }
}

// Which measurement each measured part of a profile is read from, and how. A table: a new
// measured figure is a row and its reader.
struct figure_source {
  const vocabulary::query* measurement;
  void (*read)(const vocabulary::query& q, const rows& selected, const results_document& doc,
               hardware_profile& p);
};

const figure_source figure_sources[] = {
    {&measurements::gemm, read_gemm},
    {&measurements::hbm_copy, read_hbm},
    {&measurements::launch_latency, read_launch},
    {&measurements::h2d_pinned, read_h2d},
    {&measurements::h2d_all, read_h2d_all},
    {&measurements::allreduce_busbw, read_allreduce},
    {&measurements::alltoall_busbw, read_alltoall},
    {&measurements::host_triad, read_triad},
    {&measurements::storage_random, read_rand_read},
    {&measurements::storage_seq, read_seq_read},
    {&measurements::augment_per_core, read_augment},
    {&measurements::dataloader, read_dataloader},
};

}  // namespace

hardware_profile profile_from_results(const results_document& doc, const std::string& file) {
  hardware_profile profile;
  profile.kind = "measured";
  profile.origin = file;
  profile.name = doc.system.host.empty() ? "measured" : doc.system.host;
  const system_info& sys = doc.nodes.empty() ? doc.system : doc.nodes.front().system;
  profile.gpus_per_node = std::max<int>(1, static_cast<int>(sys.gpus.size()));

  // Host figures.
  const auto cores = sys.cpu.cores_available > 0 ? sys.cpu.cores_available : sys.cpu.cores;
  if (cores > 0) {
    profile.set(fig::cpu_cores, static_cast<double>(cores), basis::measured, "system.cpu");
  }
  if (sys.memory_bytes > 0) {
    profile.set(fig::host_memory,
                vocabulary::convert(static_cast<double>(sys.memory_bytes), vocabulary::units::bytes,
                                    fig::host_memory.in),
                basis::measured, "system.memory_bytes");
  }

  for (const figure_source& source : figure_sources) {
    const vocabulary::rows selected = vocabulary::select(doc, *source.measurement);
    if (!selected.empty()) source.read(*source.measurement, selected, doc, profile);
  }
  const std::string network = vocabulary::key_of(fig::network);
  profile.unknown.emplace(network,
                          "not measured by a single-node run: use --set " + network + "=N");

  if (!sys.gpus.empty()) {
    const gpu_info& gpu = sys.gpus.front();
    profile.description = std::to_string(sys.gpus.size()) + "x " + gpu.name + " on " +
                          (sys.host.empty() ? std::string("this host") : sys.host);
    const double memory_GiB = vocabulary::convert(static_cast<double>(gpu.memory_bytes),
                                                  vocabulary::units::bytes, fig::gpu_memory.in);
    if (const auto entry = catalog_gpu_for_device(gpu.name, memory_GiB)) {
      detail::fill_from_gpu_entry(profile, *entry);
    } else {
      profile.notes.push_back("no catalog entry matches GPU '" + gpu.name +
                              "': only measured GPU figures are available");
    }
    if (gpu.sm_count) {
      profile.set(fig::sm_count, *gpu.sm_count, basis::measured, "system.gpus");
    }
    profile.set(fig::gpu_memory, memory_GiB, basis::measured, "system.gpus");
  } else {
    profile.description = "no GPU found on " + (sys.host.empty() ? "this host" : sys.host);
    profile.notes.push_back("the results have no GPU: " + (sys.gpu_status.reason.empty()
                                                               ? std::string("none was found")
                                                               : sys.gpu_status.reason));
  }
  return profile;
}

}  // namespace gpubench::model
