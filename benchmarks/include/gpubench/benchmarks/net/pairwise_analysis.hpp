// net.pairwise's schedule and its reading of the measured links (docs/methodology.md, section
// "net.pairwise"): which pairs meet in which round, and which node or link is slow.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpubench/core/json.hpp"

namespace gpubench::pairwise {

// Rounds in which every pair of `nodes` meets once and no node is in two pairs of a round (the
// circle method): nodes - 1 rounds for an even count, nodes for an odd one (one node sits out
// each round). Pairs are (lower, higher) node index.
[[nodiscard]] std::vector<std::vector<std::pair<int, int>>> rounds(int nodes);

// A link slower than this share of the job's reference link (the upper quartile of the rates)
// is slow: run-to-run noise on a healthy
// fabric is a few percent, a degraded link (a lane down, a port trained at half rate) loses half.
inline constexpr double slow_link_fraction = 0.8;
// A pair whose round trip takes more than this many times the reference (the lower quartile of
// the latencies) is slow.
inline constexpr double slow_latency_factor = 2.0;

// n x n, by node index; [i][j] is the figure from node i to node j; the diagonal is unused.
using matrix = std::vector<std::vector<double>>;

// What the matrices say: the median and reference links, the slow nodes (more than half of their
// links slow, with three or more nodes, so the fault has an end), the slow links no slow node
// explains, the same for latency, and a one-line verdict. `names` by node index.
[[nodiscard]] json findings(const matrix& GBps, const matrix& latency_us,
                            const std::vector<std::string>& names);

}  // namespace gpubench::pairwise
