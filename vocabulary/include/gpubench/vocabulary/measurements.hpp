// The measurements the layers above read from results files, each a named query: the one place
// outside benchmarks/ that names a benchmark id or a metric, so a renamed benchmark or metric is
// one test failure here (tests/unit/test_benchmark_ids.cpp checks every query against the
// registry), never a figure silently left unread.
#pragma once

#include <span>
#include <string_view>

#include "gpubench/vocabulary/query.hpp"

namespace gpubench::vocabulary::measurements {

// GPU math and memory
extern const query gemm;            // TFLOP/s per GPU, dtype and shape
extern const query burn;            // the sustained load (per-GPU figures in its info)
extern const query hbm_copy;        // GB/s per GPU, median over GPUs
extern const query hbm_any;         // every hbm.* kernel's GB/s
extern const query launch_latency;  // us per launch, stream mode, median over GPUs
// Host to GPU
extern const query pcie_any;    // every pcie.* case (their link samples)
extern const query h2d_pinned;  // pinned host to one GPU, at the largest copy
extern const query d2h_pinned;  // one GPU to pinned host
extern const query h2d_all;     // every GPU at once, at the largest copy
// Between GPUs
extern const query peer_any;         // every p2p.copy case (peer access in its info)
extern const query peer_ce_one_way;  // copy engine, one direction
extern const query peer_one_way;     // one direction, any engine
extern const query peer_both_ways;   // both directions at once
extern const query allreduce_busbw;  // nccl.all_reduce bus bandwidth, out of place
extern const query alltoall_busbw;   // nccl.alltoall bus bandwidth (expert parallelism)
extern const query nccl_busbw;       // every collective's bus bandwidth, out of place
// Host
extern const query host_triad;        // host.membw triad GB/s
extern const query storage_random;    // nvme.rand_read GB/s
extern const query storage_seq;       // nvme.seq_read GB/s, the best
extern const query augment_per_core;  // cpu.augment per core, at the most threads
extern const query dataloader;        // cpu.dataloader per worker, every worker count

// Every query above (a test checks each against the registry).
[[nodiscard]] std::span<const query* const> all();

// The sustained load's figures for each GPU, in its result's info ({"gpus": [{...}, ...]}): the
// names gpu.burn writes and the health rules read.
namespace burn_gpu {
inline constexpr const char* list = "gpus";
inline constexpr const char* gpu = "gpu";
inline constexpr const char* dtype = "dtype";
inline constexpr const char* rate = "TFLOPs";  // over the whole run
inline constexpr const char* first_tenth = "first_tenth_TFLOPs";
inline constexpr const char* last_tenth = "last_tenth_TFLOPs";
inline constexpr const char* drop = "drop_pct";  // last tenth against the first
inline constexpr const char* throttle_reasons = "throttle_reasons_seen";
inline constexpr const char* sm_mhz_median = "sm_mhz_median";
inline constexpr const char* sm_max_mhz = "sm_max_mhz";
}  // namespace burn_gpu

// What cpu.dataloader's Python side (configs/python/cpu_dataloader.py) writes in its result's
// info: milliseconds per image of each step of the transforms, in one process.
namespace dataloader_stages {
inline constexpr const char* list = "stages_ms";
inline constexpr const char* decode = "decode";
inline constexpr const char* crop_resize = "crop_resize";
inline constexpr const char* flip = "flip";
inline constexpr const char* to_tensor = "to_tensor";
inline constexpr const char* normalize = "normalize";
inline constexpr const char* torchvision_io = "torchvision_io_total";  // the whole tensor path
}  // namespace dataloader_stages

}  // namespace gpubench::vocabulary::measurements
