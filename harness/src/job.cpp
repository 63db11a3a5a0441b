#include "gpubench/harness/job.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/runner.hpp"

#if GPUBENCH_HAVE_MPI
#include <mpi.h>
#endif

namespace gpubench {

namespace {
#if GPUBENCH_HAVE_MPI
void check_mpi(int rc, const char* call, source_site where = source_site::current()) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw api_error("MPI", call, "MPI error " + std::to_string(rc),
                    std::string(text, static_cast<std::size_t>(length)), where);
  }
}
#define GPUBENCH_MPI_CHECK(expr) check_mpi((expr), #expr)
#endif
}  // namespace

std::string node_name() {
  if (const char* name = std::getenv("GPUBENCH_NODE_NAME"); name != nullptr && *name != '\0') {
    return name;
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

job_layout compute_layout(const std::vector<std::string>& node_by_rank, int rank) {
  job_layout l;
  l.rank = rank;
  l.size = static_cast<int>(node_by_rank.size());
  l.node = node_by_rank.at(static_cast<std::size_t>(rank));
  std::map<std::string, int> first_rank;  // node -> its lowest rank
  for (int r = 0; r < l.size; ++r) {
    first_rank.emplace(node_by_rank[static_cast<std::size_t>(r)], r);
  }
  l.node_count = static_cast<int>(first_rank.size());
  l.local_rank = 0;
  l.local_size = 0;
  for (int r = 0; r < l.size; ++r) {
    if (node_by_rank[static_cast<std::size_t>(r)] != l.node) continue;
    if (r < rank) ++l.local_rank;
    ++l.local_size;
  }
  l.node_leader = l.local_rank == 0;
  // Nodes numbered in the order of their lowest ranks.
  const int mine = first_rank.at(l.node);
  l.node_index = 0;
  for (const auto& [node, lowest] : first_rank) {
    if (lowest < mine) ++l.node_index;
    l.node_leaders.push_back(lowest);
  }
  std::sort(l.node_leaders.begin(), l.node_leaders.end());
  for (const int leader : l.node_leaders) {
    l.node_names.push_back(node_by_rank[static_cast<std::size_t>(leader)]);
  }
  l.node_ranks.resize(l.node_leaders.size());
  for (int r = 0; r < l.size; ++r) {
    const auto node = std::find(l.node_names.begin(), l.node_names.end(),
                                node_by_rank[static_cast<std::size_t>(r)]);
    l.node_ranks[static_cast<std::size_t>(node - l.node_names.begin())].push_back(r);
  }
  return l;
}

std::optional<std::string> mpi_launcher_detected() {
  for (const char* variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(variable); value != nullptr && std::atoi(value) > 1) {
      // srun sets SLURM_NTASKS for the whole allocation; SLURM_PROCID says this is a task of it.
      if (std::string(variable) == "SLURM_NTASKS" && std::getenv("SLURM_PROCID") == nullptr)
        continue;
      return std::string(variable) + "=" + value;
    }
  }
  return std::nullopt;
}

std::unique_ptr<job> job::start() {
  std::unique_ptr<job> j(new job());
#if GPUBENCH_HAVE_MPI
  if (mpi_launcher_detected()) {
    int provided = 0;
    GPUBENCH_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
    j->mpi_initialized_ = true;
    int rank = 0;
    int size = 1;
    GPUBENCH_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    GPUBENCH_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    j->layout_.rank = rank;
    j->layout_.size = size;
    j->layout_ = compute_layout(j->all_gather(node_name()), rank);
    return j;
  }
#endif
  j->layout_ = compute_layout({node_name()}, 0);
  return j;
}

job::~job() {
#if GPUBENCH_HAVE_MPI
  if (mpi_initialized_ && !interrupt_requested()) MPI_Finalize();
#endif
}

#if GPUBENCH_HAVE_MPI
namespace {
// Variable-length strings through MPI: lengths first, then the bytes at prefix-sum offsets.
struct packed_layout {
  std::vector<int> lengths;
  std::vector<int> offsets;
  [[nodiscard]] std::size_t total() const {
    return lengths.empty() ? 0 : static_cast<std::size_t>(offsets.back() + lengths.back());
  }
  [[nodiscard]] std::vector<std::string> unpack(const std::string& all) const {
    std::vector<std::string> out;
    out.reserve(lengths.size());
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }
};

packed_layout packed(std::vector<int> lengths) {
  packed_layout p{std::move(lengths), {}};
  p.offsets.assign(p.lengths.size(), 0);
  for (std::size_t r = 1; r < p.lengths.size(); ++r)
    p.offsets[r] = p.offsets[r - 1] + p.lengths[r - 1];
  return p;
}
}  // namespace
#endif

std::vector<std::string> job::all_gather(const std::string& mine) const {
  if (layout_.size == 1) return {mine};
#if GPUBENCH_HAVE_MPI
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(layout_.size));
  GPUBENCH_MPI_CHECK(
      MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD));
  const packed_layout p = packed(std::move(lengths));
  std::string all(p.total(), '\0');
  GPUBENCH_MPI_CHECK(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), p.lengths.data(),
                                    p.offsets.data(), MPI_CHAR, MPI_COMM_WORLD));
  return p.unpack(all);
#else
  return {mine};
#endif
}

std::vector<std::string> job::gather_to_root(const std::string& mine) const {
  if (layout_.size == 1) return {mine};
#if GPUBENCH_HAVE_MPI
  const int length = static_cast<int>(mine.size());
  const bool root = layout_.rank == 0;
  std::vector<int> lengths(root ? static_cast<std::size_t>(layout_.size) : 0);
  GPUBENCH_MPI_CHECK(
      MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  const packed_layout p = packed(std::move(lengths));  // empty off the root
  std::string all(p.total(), '\0');
  GPUBENCH_MPI_CHECK(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), p.lengths.data(),
                                 p.offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD));
  return root ? p.unpack(all) : std::vector<std::string>{};
#else
  return {mine};
#endif
}

void job::barrier() const {
#if GPUBENCH_HAVE_MPI
  if (layout_.size <= 1) return;
  // Waiting ranks sleep instead of spinning (MPI_Barrier busy-polls): they share the node with
  // a rank that may be measuring its cores or memory.
  MPI_Request request = MPI_REQUEST_NULL;
  GPUBENCH_MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
  int done = 0;
  while (true) {
    GPUBENCH_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0 || interrupt_requested()) return;  // interrupted: abandoned with the job
    ::usleep(1000);
  }
#endif
}

void job::broadcast_bytes(void* data, int bytes) const {
#if GPUBENCH_HAVE_MPI
  if (layout_.size > 1) GPUBENCH_MPI_CHECK(MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
#else
  (void)data;
  (void)bytes;
#endif
}

void job::exchange(const std::vector<transfer>& transfers, double timeout_s) const {
  if (transfers.empty()) return;
#if GPUBENCH_HAVE_MPI
  std::vector<MPI_Request> requests(transfers.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const transfer& t = transfers[i];
    if (t.bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw std::invalid_argument("a message of " + std::to_string(t.bytes) +
                                  " bytes: MPI counts are int, at most 2^31 - 1");
    }
    const int count = static_cast<int>(t.bytes);
    if (t.way == transfer::direction::send) {
      GPUBENCH_MPI_CHECK(
          MPI_Isend(t.data, count, MPI_BYTE, t.peer, 0, MPI_COMM_WORLD, &requests[i]));
    } else {
      GPUBENCH_MPI_CHECK(
          MPI_Irecv(t.data, count, MPI_BYTE, t.peer, 0, MPI_COMM_WORLD, &requests[i]));
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (unsigned polls = 1;; ++polls) {
    int done = 0;
    GPUBENCH_MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                   MPI_STATUSES_IGNORE));
    if (done != 0) return;
    // The clock and the signal flag are read now and then, not on every poll.
    if (polls % 4096 != 0) continue;
    const bool interrupted = interrupt_requested();
    if (!interrupted && std::chrono::steady_clock::now() < deadline) continue;
    std::set<int> peer_ranks;
    for (const transfer& t : transfers) peer_ranks.insert(t.peer);
    std::vector<std::string> peers;
    peers.reserve(peer_ranks.size());
    for (const int rank : peer_ranks) peers.push_back("rank " + std::to_string(rank));
    // The requests stay pending: MPI has no way to take back a send a peer never matched, and
    // the job ends with this error.
    throw std::runtime_error(std::string(interrupted ? "interrupted" : "timed out") +
                             " waiting for messages with " + join(peers, ", ") +
                             (interrupted ? "" : " after " + format_plain(timeout_s) + " s"));
  }
#else
  (void)timeout_s;
  throw std::logic_error("point-to-point messages need a build with MPI");
#endif
}

void require_agreement(const std::string& what, const std::vector<std::string>& value_by_rank) {
  std::map<std::string, std::vector<int>> ranks_by_value;
  for (std::size_t r = 0; r < value_by_rank.size(); ++r) {
    ranks_by_value[value_by_rank[r]].push_back(static_cast<int>(r));
  }
  if (ranks_by_value.size() <= 1) return;
  // Groups in the order of their lowest rank: rank 0's value first.
  std::vector<std::pair<std::string, std::vector<int>>> groups(ranks_by_value.begin(),
                                                               ranks_by_value.end());
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
  std::string message = "ranks disagree on " + what + ":";
  bool first = true;
  for (const auto& [value, ranks] : groups) {
    message += first ? " " : "; ";
    first = false;
    message += ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (i > 0) message += ',';
      message += std::to_string(ranks[i]);
    }
    message += ranks.size() == 1 ? " has '" : " have '";
    message += value;
    message += "'";
  }
  throw input_error(message);
}

}  // namespace gpubench
