#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/scratch_file.hpp"
#include "temp_dir.hpp"

using namespace gpubench;
using gpubench::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("a scratch file holds the pattern and is removed with its owner", "[scratch]") {
  const temp_dir dir(fs::current_path());  // a real disk, not a possible tmpfs
  fs::path path;
  {
    const scratch_file file(dir.path, 1 << 20, 99);
    path = file.path();
    CHECK(path.parent_path() == dir.path);
    CHECK(fs::file_size(path) == 1 << 20);
    std::ifstream in(path, std::ios::binary);
    for (std::uint64_t offset : {0ULL, 8ULL, 4096ULL, (1ULL << 20) - 8}) {
      in.seekg(static_cast<std::streamoff>(offset));
      std::uint64_t word = 0;
      in.read(reinterpret_cast<char*>(&word), sizeof word);
      CHECK(word == scratch_word(offset, 99));
    }
    CHECK(scratch_word(0, 99) != scratch_word(8, 99));
    CHECK(scratch_word(0, 99) != 0);
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(count_files(dir.path) == 0);
}

TEST_CASE("scratch files never take over an existing file", "[scratch]") {
  const temp_dir dir(fs::current_path());  // a real disk, not a possible tmpfs
  // Every name this process could pick next is taken by a file of someone else's.
  for (int n = 0; n < 400; ++n) {
    std::ofstream(dir.path / ("gpubench-scratch-" + std::to_string(getpid()) + "-" +
                              std::to_string(n) + ".dat"))
        << "not gpubench's";
  }
  try {
    const scratch_file file(dir.path, 4096, 1);
    // A free name was found: the existing files are untouched either way.
    CHECK(file.path().filename().string().find("gpubench-scratch-") == 0);
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no free file name"));
  }
  std::size_t intact = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    std::ifstream in(e.path());
    std::string text;
    std::getline(in, text);
    intact += text == "not gpubench's" ? 1 : 0;
  }
  CHECK(intact == 400);
}

TEST_CASE("an interrupt while the file is written removes it", "[scratch]") {
  const temp_dir dir(fs::current_path());  // a real disk, not a possible tmpfs
  request_interrupt();
  CHECK_THROWS_WITH(scratch_file(dir.path, 64 << 20, 1), Catch::Contains("interrupted"));
  clear_interrupt();
  CHECK(count_files(dir.path) == 0);
  CHECK_THROWS_AS(scratch_file(dir.path, 1000, 1), std::invalid_argument);  // not 4 KiB pages
}

TEST_CASE("describe_storage names the filesystem and the device", "[scratch]") {
  const storage_info root = describe_storage("/");
  CHECK_FALSE(root.filesystem.empty());
  CHECK(root.mount_point == "/");
  if (fs::exists("/dev/shm")) {
    CHECK(describe_storage("/dev/shm").filesystem == "tmpfs");
    CHECK(describe_storage("/dev/shm").device.empty());
  }
}

TEST_CASE("the free-space reserve holds per filesystem: folders on one disk share its room",
          "[scratch]") {
  constexpr std::uint64_t gib = std::uint64_t{1} << 30;
  // 100 GiB disk, 30 GiB free: it keeps 10 GiB, so 20 GiB may be written on it.
  const filesystem_space disk{7, 30 * gib, 100 * gib};
  CHECK(room_per_test_file({disk}, 4096) == 20 * gib);
  // Two folders on it: two files of 10 GiB, not two of 20 (which would leave it full).
  CHECK(room_per_test_file({disk, disk}, 4096) == 10 * gib);
  // Another disk beside it does not share: the tighter filesystem sets the size of every file.
  const filesystem_space roomy{8, 500 * gib, 1000 * gib};
  CHECK(room_per_test_file({disk, roomy}, 4096) == 20 * gib);
  CHECK(room_per_test_file({disk, roomy, disk}, 4096) == 10 * gib);
  // Small disks keep 1 GiB; a full one has no room; sizes are whole blocks.
  CHECK(room_per_test_file({{9, 3 * gib, 8 * gib}}, 4096) == 2 * gib);
  CHECK(room_per_test_file({{9, gib / 2, 8 * gib}}, 4096) == 0);
  CHECK(room_per_test_file({{9, 2 * gib + 5000, 8 * gib}}, 1 << 20) == gib);
  // The real folder: its space is the statvfs of its filesystem.
  const filesystem_space here = space_of(fs::current_path());
  CHECK(here.total_bytes >= here.free_bytes);
  CHECK(here.device == space_of(fs::current_path() / ".").device);
}
