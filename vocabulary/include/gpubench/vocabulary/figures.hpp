// The figures a hardware profile carries: each named once, here, with its unit, which way is
// better, the values that make sense for it and what it means. The model, the catalog reader,
// --set, watch's ceilings, the specs' catalog expectations, `gpubench list --json` and the
// catalog generators all ask this table; none spells a key of its own.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/vocabulary/units.hpp"

namespace gpubench::vocabulary {

struct figure_def {
  std::string_view key{};  // "gpu.hbm_GBps"; a family (per_dtype) takes ".<dtype>" after it
  unit in{};
  better direction = better::higher;
  double min = 0;  // the values that make sense, in `in`: outside them a file or --set is refused
  double max = 0;
  bool what_if = false;    // offered as a what-if: `--set` lists it (any figure may be set)
  bool per_dtype = false;  // one figure per GEMM dtype: "gpu.peak_tflops.fp16"
  bool of_gpu = false;     // a property of the GPU model: `--set gpu.model` replaces it
  std::string_view description{};
};

namespace figures {
// Host
inline constexpr figure_def cpu_cores{.key = "cpu.cores",
                                      .in = units::count,
                                      .min = 1,
                                      .max = 1e5,
                                      .what_if = true,
                                      .description = "CPU cores the job may use"};
inline constexpr figure_def augment_per_core{
    .key = "cpu.augment_per_core",
    .in = units::per_s,
    .min = 1e-3,
    .max = 1e7,
    .what_if = true,
    .description = "images decoded and augmented per second per core (cpu.augment)"};
inline constexpr figure_def augment_pixels{
    .key = "cpu.augment_image_pixels",
    .in = units::count,
    .min = 1,
    .max = 1e9,
    .description = "pixels of the image cpu.augment_per_core was measured at"};
// PyTorch's DataLoader (cpu.dataloader): one worker's rate, how it holds up as workers are
// added, and where one worker's time goes (the loader options of docs/model.md split it).
inline constexpr figure_def dataloader_per_worker{
    .key = "cpu.dataloader_per_worker",
    .in = units::per_s,
    .min = 1e-3,
    .max = 1e7,
    .what_if = true,
    .description = "images/s of PyTorch's DataLoader with one worker (cpu.dataloader)"};
inline constexpr figure_def dataloader_scaling{
    .key = "cpu.dataloader_scaling",
    .in = units::ratio,
    .min = 1e-3,
    .max = 2,
    .description = "per-worker rate at the most workers measured over the one-worker rate"};
inline constexpr figure_def dataloader_workers{
    .key = "cpu.dataloader_workers",
    .in = units::count,
    .min = 1,
    .max = 1e5,
    .description = "the most DataLoader workers measured (where cpu.dataloader_scaling holds)"};
inline constexpr figure_def dataloader_pixels{
    .key = "cpu.dataloader_image_pixels",
    .in = units::count,
    .min = 1,
    .max = 1e9,
    .description = "pixels of the image cpu.dataloader_per_worker was measured at"};
inline constexpr figure_def dataloader_decode_share{
    .key = "cpu.dataloader_decode_share",
    .in = units::ratio,
    .min = 0,
    .max = 1,
    .description = "share of one DataLoader worker's time per image spent decoding the JPEG"};
inline constexpr figure_def dataloader_resize_share{
    .key = "cpu.dataloader_resize_share",
    .in = units::ratio,
    .min = 0,
    .max = 1,
    .description = "share of one DataLoader worker's time per image spent in RandomResizedCrop"};
inline constexpr figure_def dataloader_transform_share{
    .key = "cpu.dataloader_transform_share",
    .in = units::ratio,
    .min = 0,
    .max = 1,
    .description =
        "share of one DataLoader worker's time per image in its transforms (decode "
        "to Normalize; the rest is collation and the hand-over)"};
inline constexpr figure_def dataloader_tensor_path{
    .key = "cpu.dataloader_torchvision_io_share",
    .in = units::ratio,
    .min = 0,
    .max = 100,
    .description =
        "torchvision.io decode + tensor transforms' time per image, as a share of "
        "one DataLoader worker's"};
inline constexpr figure_def host_memory{.key = "memory.GB",
                                        .in = units::GB,
                                        .min = 1e-3,
                                        .max = 1e7,
                                        .what_if = true,
                                        .description = "host memory"};
inline constexpr figure_def storage_read{
    .key = "storage.read_GBps",
    .in = units::GBps,
    .min = 1e-6,
    .max = 1e5,
    .what_if = true,
    .description = "random reads at sample size (nvme.rand_read nearest 128 KiB)"};
inline constexpr figure_def storage_seq{.key = "storage.seq_GBps",
                                        .in = units::GBps,
                                        .min = 1e-6,
                                        .max = 1e5,
                                        .description = "sequential reads (nvme.seq_read)"};
inline constexpr figure_def host_membw{.key = "host.membw_GBps",
                                       .in = units::GBps,
                                       .min = 1e-3,
                                       .max = 1e5,
                                       .description = "host memory bandwidth (host.membw triad)"};
// Between nodes
inline constexpr figure_def network{.key = "network.gbps",
                                    .in = units::Gbps,
                                    .min = 1e-3,
                                    .max = 1e7,
                                    .what_if = true,
                                    .description = "per node, across nodes"};
// Host to GPU
inline constexpr figure_def pcie_gen{.key = "pcie.gen",
                                     .in = units::count,
                                     .min = 1,
                                     .max = 9,
                                     .description = "PCIe generation of the GPU's link"};
inline constexpr figure_def pcie_h2d{.key = "pcie.h2d_GBps",
                                     .in = units::GBps,
                                     .min = 1e-3,
                                     .max = 1e4,
                                     .what_if = true,
                                     .description = "host-to-GPU copy rate per GPU (pinned)"};
inline constexpr figure_def pcie_h2d_all{
    .key = "pcie.h2d_all_GBps",
    .in = units::GBps,
    .min = 1e-3,
    .max = 1e5,
    .what_if = true,
    .description = "host-to-GPU copy rate of all GPUs of a node at once"};
// GPU
inline constexpr figure_def peak_tflops{.key = "gpu.peak_tflops",
                                        .in = units::TFLOPs,
                                        .min = 1e-3,
                                        .max = 1e5,
                                        .per_dtype = true,
                                        .of_gpu = true,
                                        .description = "datasheet dense peak"};
inline constexpr figure_def gemm_efficiency{
    .key = "gpu.gemm_efficiency",
    .in = units::ratio,
    .min = 1e-3,
    .max = 1.0,
    .per_dtype = true,
    .of_gpu = true,
    .description = "large-GEMM fraction of peak (A100/H100 from peer tools, else 0.8 assumed)"};
inline constexpr figure_def decode_gemm_efficiency{
    .key = "gpu.decode_gemm_efficiency",
    .in = units::ratio,
    .min = 1e-3,
    .max = 1.0,
    .per_dtype = true,
    .of_gpu = true,
    .description =
        "fraction of peak a decode-shaped GEMM (a few rows against the weights) reaches"};
inline constexpr figure_def hbm_peak{.key = "gpu.hbm_peak_GBps",
                                     .in = units::GBps,
                                     .min = 1e-3,
                                     .max = 1e5,
                                     .of_gpu = true,
                                     .description = "datasheet device memory bandwidth"};
inline constexpr figure_def hbm_efficiency{
    .key = "gpu.hbm_efficiency",
    .in = units::ratio,
    .min = 1e-3,
    .max = 1.0,
    .of_gpu = true,
    .description = "hbm.copy's fraction of the datasheet bandwidth"};
inline constexpr figure_def hbm{.key = "gpu.hbm_GBps",
                                .in = units::GBps,
                                .min = 1e-3,
                                .max = 1e5,
                                .what_if = true,
                                .of_gpu = true,
                                .description = "device memory bandwidth (hbm.copy)"};
inline constexpr figure_def gpu_memory{
    .key = "gpu.memory_GiB",
    .in = units::GiB,
    .min = 1e-3,
    .max = 1e4,
    .of_gpu = true,
    .description = "GPU memory the GPU reports (nvidia-smi's total; an 80 GB H100 reports 79.6)"};
inline constexpr figure_def memory_headroom{
    .key = "gpu.memory_headroom",
    .in = units::ratio,
    .min = 0.5,
    .max = 1.0,
    .what_if = true,
    .description =
        "share of GPU memory a job is planned to fill; the rest absorbs the caching "
        "allocator's fragmentation, NCCL's buffers and peaks (default 0.9)"};
inline constexpr figure_def sm_count{.key = "gpu.sm_count",
                                     .in = units::count,
                                     .min = 1,
                                     .max = 1e4,
                                     .of_gpu = true,
                                     .description = "streaming multiprocessors"};
inline constexpr figure_def tdp{.key = "gpu.tdp_W",
                                .in = units::watts,
                                .min = 1,
                                .max = 1e5,
                                .of_gpu = true,
                                .description = "board power (TDP)"};
inline constexpr figure_def launch_latency{
    .key = "gpu.launch_latency_us",
    .in = units::us,
    .direction = better::lower,
    .min = 1e-3,
    .max = 1e5,
    .of_gpu = true,
    .description = "kernel launch latency (gpu.launch_latency, stream)"};
// Between a node's GPUs
inline constexpr figure_def nvlink{.key = "nvlink.bidir_GBps",
                                   .in = units::GBps,
                                   .min = 1e-3,
                                   .max = 1e5,
                                   .of_gpu = true,
                                   .description = "NVLink bandwidth per GPU, both directions"};
inline constexpr figure_def busbw{.key = "interconnect.busbw_GBps",
                                  .in = units::GBps,
                                  .min = 1e-3,
                                  .max = 1e5,
                                  .what_if = true,
                                  .description = "allreduce bus bandwidth between a node's GPUs"};
inline constexpr figure_def allreduce_latency{
    .key = "interconnect.allreduce_latency_us",
    .in = units::us,
    .direction = better::lower,
    .min = 1e-3,
    .max = 1e6,
    .description = "time of a small-message allreduce between a node's GPUs"};
// Cost
inline constexpr figure_def price{.key = "price.usd_per_hour",
                                  .in = units::usd_per_hour,
                                  .direction = better::lower,
                                  .min = 0,
                                  .max = 1e6,
                                  .what_if = true,
                                  .description = "on-demand price per node"};
}  // namespace figures

// Every figure, in the order above (the order --set lists the what-ifs in).
[[nodiscard]] std::span<const figure_def* const> all_figures();

// A figure's full key: "gpu.hbm_GBps", or "gpu.peak_tflops.fp16" for one of a family.
[[nodiscard]] std::string key_of(const figure_def& f, std::string_view dtype = {});

// The figure a full key names, and the dtype of a family's key; nullopt for a key no row has
// (or a family key whose dtype is not a GEMM dtype).
struct named_figure {
  const figure_def* def = nullptr;
  std::string dtype;
};
[[nodiscard]] std::optional<named_figure> find_figure(std::string_view key);

// A key an earlier gpubench wrote into hardware files, read as the figure that replaced it: its
// value is in the old key's unit and is converted.
struct renamed_figure {
  std::string_view key;
  const figure_def* now = nullptr;
  unit was{};
  std::string_view why;
};
[[nodiscard]] const renamed_figure* find_renamed_figure(std::string_view key);

// Every full key, a family's once per GEMM dtype ("gpu.peak_tflops.fp16"), sorted: what a
// misspelt key is matched against.
[[nodiscard]] std::vector<std::string> figure_keys();

// "gpu.hbm_GBps, gpu.peak_tflops.{fp16,bf16,...}, ...": every key, sorted, for messages.
[[nodiscard]] std::string figure_keys_text();

// The table as `gpubench list --json` exports it (the catalog generators read it): one object per
// figure with its key, unit, dimension, direction, range and flags.
[[nodiscard]] json figures_json();

}  // namespace gpubench::vocabulary
