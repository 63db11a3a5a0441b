#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "gpubench/runner.hpp"
#include "gpubench/scratch_file.hpp"
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
