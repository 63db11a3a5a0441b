// nccl-tests' bus-bandwidth convention (its doc/PERFORMANCE.md; derived in docs/methodology.md):
// busbw = algbw x factor(n), the rate each link carries, comparable with the hardware's peak
// whatever the rank count. `size` is the message size nccl-tests reports for each collective.
#pragma once

#include <string_view>

namespace gpubench::collectives {

enum class collective { all_reduce, all_gather, reduce_scatter, broadcast, alltoall };

struct collective_spec {
  std::string_view id;
  collective op;
  std::string_view size_means;  // what the `bytes` axis counts, as nccl-tests defines it
};

inline constexpr collective_spec collective_specs[] = {
    {"nccl.all_reduce", collective::all_reduce, "bytes reduced per rank (send = receive)"},
    {"nccl.all_gather", collective::all_gather,
     "bytes gathered per rank (n x the part each sends)"},
    {"nccl.reduce_scatter", collective::reduce_scatter,
     "bytes sent per rank (n x the part each receives)"},
    {"nccl.broadcast", collective::broadcast, "bytes broadcast from rank 0"},
    {"nccl.alltoall", collective::alltoall, "bytes sent per rank (n parts, one per peer)"},
};

// all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast 1.
[[nodiscard]] constexpr double bus_factor(collective op, int ranks) noexcept {
  const double n = ranks;
  switch (op) {
    case collective::all_reduce:
      return 2 * (n - 1) / n;
    case collective::all_gather:
    case collective::reduce_scatter:
    case collective::alltoall:
      return (n - 1) / n;
    case collective::broadcast:
      return 1;
  }
  return 1;
}

}  // namespace gpubench::collectives
