#include "gpubench/vocabulary/measurements.hpp"

namespace gpubench::vocabulary::measurements {

namespace {
using match = axis_filter::match;
}  // namespace

const query gemm{.benchmark = "gemm", .metric = "TFLOPs"};
const query burn{.benchmark = "gpu.burn", .metric = "TFLOPs"};
const query hbm_copy{.benchmark = "hbm.copy", .metric = "GBps"};
const query hbm_any{.benchmark = "hbm.*", .metric = "GBps"};
const query launch_latency{.benchmark = "gpu.launch_latency",
                           .where = {{.axis = "mode", .value = "stream"}},
                           .metric = "us"};

const query pcie_any{.benchmark = "pcie.*", .metric = "GBps"};
// A file from before the memory axis existed measured pinned copies only.
const query h2d_pinned{
    .benchmark = "pcie.h2d",
    .where = {{.axis = "memory", .value = "pinned", .how = match::equals_or_absent}},
    .metric = "GBps",
    .reduce = reduction::at_largest,
    .axis = "bytes"};
const query d2h_pinned{
    .benchmark = "pcie.d2h",
    .where = {{.axis = "memory", .value = "pinned", .how = match::equals_or_absent}},
    .metric = "GBps",
    .reduce = reduction::at_largest,
    .axis = "bytes"};
const query h2d_all{.benchmark = "pcie.h2d_all",
                    .where = {{.axis = "memory", .value = "pageable", .how = match::differs}},
                    .metric = "GBps",
                    .reduce = reduction::at_largest,
                    .axis = "bytes"};

const query peer_any{.benchmark = "p2p.copy", .metric = "GBps"};
const query peer_ce_one_way{
    .benchmark = "p2p.copy",
    .where = {{.axis = "engine", .value = "ce"}, {.axis = "direction", .value = "uni"}},
    .metric = "GBps"};
const query peer_one_way{
    .benchmark = "p2p.copy", .where = {{.axis = "direction", .value = "uni"}}, .metric = "GBps"};
const query peer_both_ways{
    .benchmark = "p2p.copy", .where = {{.axis = "direction", .value = "bidir"}}, .metric = "GBps"};
const query allreduce_busbw{
    .benchmark = "nccl.all_reduce",
    .where = {{.axis = "placement", .value = "in_place", .how = match::differs}},
    .metric = "busbw_GBps"};
const query alltoall_busbw{
    .benchmark = "nccl.alltoall",
    .where = {{.axis = "placement", .value = "in_place", .how = match::differs}},
    .metric = "busbw_GBps"};
const query nccl_busbw{
    .benchmark = "nccl.*",
    .where = {{.axis = "placement", .value = "out_of_place", .how = match::equals_or_absent}},
    .metric = "busbw_GBps"};

const query host_triad{
    .benchmark = "host.membw", .where = {{.axis = "kernel", .value = "triad"}}, .metric = "GBps"};
const query storage_random{.benchmark = "nvme.rand_read", .metric = "GBps"};
const query storage_seq{.benchmark = "nvme.seq_read", .metric = "GBps", .reduce = reduction::best};
const query augment_per_core{.benchmark = "cpu.augment",
                             .metric = "samples_per_s_per_core",
                             .reduce = reduction::at_largest,
                             .axis = "threads"};
const query dataloader{.benchmark = "cpu.dataloader", .metric = "images_per_s_per_worker"};

std::span<const query* const> all() {
  static const query* const table[] = {
      &gemm,
      &burn,
      &hbm_copy,
      &hbm_any,
      &launch_latency,
      &pcie_any,
      &h2d_pinned,
      &d2h_pinned,
      &h2d_all,
      &peer_any,
      &peer_ce_one_way,
      &peer_one_way,
      &peer_both_ways,
      &allreduce_busbw,
      &alltoall_busbw,
      &nccl_busbw,
      &host_triad,
      &storage_random,
      &storage_seq,
      &augment_per_core,
      &dataloader,
  };
  return table;
}

}  // namespace gpubench::vocabulary::measurements
