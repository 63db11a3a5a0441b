// Which GPUs CUDA_VISIBLE_DEVICES leaves, and which GPU each rank of a node drives.
#include <catch2/catch.hpp>

#include "gpubench/harness/gpu_assignment.hpp"

using namespace gpubench;

namespace {
const std::vector<std::string> four{"GPU-aaaa0000", "GPU-bbbb1111", "GPU-cccc2222", "GPU-aaaa3333"};

std::vector<std::optional<std::size_t>> positions(const std::vector<rank_gpu>& ranks) {
  std::vector<std::optional<std::size_t>> out;
  for (const auto& r : ranks) out.push_back(r.position);
  return out;
}
}  // namespace

TEST_CASE("CUDA_VISIBLE_DEVICES cuts NVML's list as the CUDA runtime would", "[gpus]") {
  using mask = std::vector<bool>;
  CHECK(cuda_visible_mask(std::nullopt, four) == mask{true, true, true, true});
  CHECK(cuda_visible_mask(std::string(""), four) == mask{false, false, false, false});
  CHECK(cuda_visible_mask(std::string("2,0"), four) == mask{true, false, true, false});
  CHECK(cuda_visible_mask(std::string(" 1 , 3"), four) == mask{false, true, false, true});
  // A UUID, or an unambiguous prefix of one; an ambiguous prefix names nothing.
  CHECK(cuda_visible_mask(std::string("GPU-bbbb1111"), four) == mask{false, true, false, false});
  CHECK(cuda_visible_mask(std::string("GPU-cc"), four) == mask{false, false, true, false});
  CHECK(cuda_visible_mask(std::string("GPU-aaaa"), four) == mask{false, false, false, false});
  // The first entry that names no GPU ends the list, as in CUDA.
  CHECK(cuda_visible_mask(std::string("1,7,2"), four) == mask{false, true, false, false});
  CHECK(cuda_visible_mask(std::string("-1,0"), four) == mask{false, false, false, false});
  CHECK(cuda_visible_mask(std::string("MIG-1234,0"), four) == mask{false, false, false, false});
}

TEST_CASE("ranks that see the node's GPUs take the local-rank-th one (mpirun)", "[gpus]") {
  const auto ranks = assign_rank_gpus({four, four, four, four});
  CHECK(positions(ranks) == std::vector<std::optional<std::size_t>>{0, 1, 2, 3});
  for (const auto& r : ranks) CHECK(r.problem.empty());

  const auto crowded = assign_rank_gpus({four, four, four, four, four});
  CHECK_FALSE(crowded[4].position);
  CHECK(crowded[4].problem ==
        "local rank 4 of 5 on a node where the ranks see 4 GPUs: start one rank per GPU");
  CHECK(crowded[3].position == 3u);
}

TEST_CASE("ranks that each see their own GPU take it (srun --gpus-per-task=1)", "[gpus]") {
  // Each rank sees one GPU, as CUDA ordinal 0: the old rule (local rank i takes ordinal i) gave
  // every rank but the first no GPU at all.
  const auto ranks =
      assign_rank_gpus({{"GPU-aaaa0000"}, {"GPU-bbbb1111"}, {"GPU-cccc2222"}, {"GPU-aaaa3333"}});
  CHECK(positions(ranks) == std::vector<std::optional<std::size_t>>{0, 0, 0, 0});
  // Two GPUs each (--gpus-per-task=2): the first of its own.
  const auto pairs = assign_rank_gpus({{four[0], four[1]}, {four[2], four[3]}});
  CHECK(positions(pairs) == std::vector<std::optional<std::size_t>>{0, 0});
  // One rank alone takes the first GPU it sees.
  CHECK(positions(assign_rank_gpus({four})) == std::vector<std::optional<std::size_t>>{0});
}

TEST_CASE("two ranks never drive one GPU, and a rank without a GPU is named", "[gpus]") {
  const auto shared = assign_rank_gpus({{four[0]}, {four[0]}});
  for (const auto& r : shared) {
    CHECK_FALSE(r.position);
    CHECK_THAT(r.problem, Catch::StartsWith("local ranks 0 and 1 would both drive GPU-aaaa0000"));
  }
  const auto overlap = assign_rank_gpus({{four[0], four[1]}, {four[1]}, {four[0]}});
  CHECK_FALSE(overlap[0].position);
  CHECK(overlap[1].position == 0u);
  CHECK_FALSE(overlap[2].position);
  CHECK_THAT(overlap[2].problem, Catch::StartsWith("local ranks 0 and 2"));

  const auto none = assign_rank_gpus({{four[0]}, {}});
  CHECK(none[0].position == 0u);
  CHECK(none[1].problem == "local rank 1 sees no GPU");
}
