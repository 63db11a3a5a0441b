#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/output_file.hpp"
#include "input_error_message.hpp"
#include "temp_dir.hpp"

using namespace gpubench;
using gpubench::testing::input_error_message;
using gpubench::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    (void)entry;
    ++n;
  }
  return n;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode;
}

}  // namespace

TEST_CASE("write_file_atomically replaces the file and leaves no temporary behind", "[output]") {
  temp_dir dir;
  const fs::path target = dir.path / "results.json";
  write_file_atomically(target, "first\n");
  CHECK(slurp(target) == "first\n");
  write_file_atomically(target, "second\n");
  CHECK(slurp(target) == "second\n");
  CHECK(entries_in(dir.path) == 1);
  // A new file gets rw-rw-rw- less the umask, as the shell's `>` gives it.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((mode_of(target) & 0777) == (0666 & ~mask));
}

TEST_CASE("a file that is there keeps its permissions", "[output]") {
  temp_dir dir;
  const fs::path target = dir.path / "report.html";
  write_file_atomically(target, "old\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(target, "new\n");
  CHECK(slurp(target) == "new\n");
  CHECK((mode_of(target) & 0777) == 0600);
}

TEST_CASE("a symlink is followed: the link stays and what it points to gets the text", "[output]") {
  temp_dir dir;
  fs::create_directory(dir.path / "real");
  const fs::path real = dir.path / "real" / "report.md";
  write_file_atomically(real, "old\n");
  const fs::path link = dir.path / "latest.md";
  fs::create_symlink("real/report.md", link);
  write_file_atomically(link, "new\n");
  CHECK(S_ISLNK(mode_of(link)));
  CHECK(slurp(real) == "new\n");
  // A link that points nowhere yet names the file to create.
  fs::create_symlink("real/fresh.md", dir.path / "fresh.md");
  write_file_atomically(dir.path / "fresh.md", "x\n");
  CHECK(S_ISLNK(mode_of(dir.path / "fresh.md")));
  CHECK(slurp(dir.path / "real" / "fresh.md") == "x\n");
}

TEST_CASE("in a folder gpubench claimed, a planted link is replaced, never written through",
          "[output]") {
  temp_dir dir;
  const fs::path precious = dir.path / "precious.txt";
  write_file_atomically(precious, "mine\n");
  fs::permissions(precious, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path planted = dir.path / "results.json";
  fs::create_symlink(precious, planted);
  write_file_atomically(planted, "{}\n", at_symlink::replace);
  CHECK(S_ISREG(mode_of(planted)));
  CHECK(slurp(planted) == "{}\n");
  CHECK(slurp(precious) == "mine\n");
  // A new file's mode, not the link's or its target's.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((mode_of(planted) & 0777) == (0666 & ~mask));
  // Anything else but a regular file is still refused.
  REQUIRE(::mkfifo((dir.path / "report.html").c_str(), 0600) == 0);
  CHECK(input_error_message([&] {
          write_file_atomically(dir.path / "report.html", "x", at_symlink::replace);
        }).find("got a FIFO") != std::string::npos);
  CHECK(entries_in(dir.path) == 3);
}

TEST_CASE("only a regular file is written over: FIFOs, folders and devices are refused",
          "[output]") {
  temp_dir dir;
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(input_error_message([&] { write_file_atomically(fifo, "x"); }) ==
        fifo.string() + ": expected a regular file or a new name, got a FIFO");
  CHECK(S_ISFIFO(mode_of(fifo)));
  fs::create_directory(dir.path / "folder");
  CHECK(input_error_message([&] {
          write_file_atomically(dir.path / "folder", "x");
        }).find("got a folder") != std::string::npos);
  // /dev/null through a symlink: what the link leads to decides.
  fs::create_symlink("/dev/null", dir.path / "null");
  CHECK(input_error_message([&] {
          write_file_atomically(dir.path / "null", "x");
        }).find("got a character device") != std::string::npos);
  CHECK(S_ISCHR(mode_of("/dev/null")));
  CHECK(entries_in(dir.path) == 3);  // no temporary left behind
}

TEST_CASE("a failed write names the file and the reason, not the system call", "[output]") {
  temp_dir dir;
  try {
    write_file_atomically(dir.path / "missing" / "r.json", "x");
    FAIL("accepted");
  } catch (const input_error&) {
    FAIL("a failed write is not bad input once the command has begun");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == (dir.path / "missing" / "r.json").string() +
                                       ": could not write (No such file or directory)");
  }
  fs::create_symlink("loop", dir.path / "loop");
  CHECK(input_error_message([&] {
          write_file_atomically(dir.path / "loop", "x");
        }).find("a symlink loop") != std::string::npos);
}

TEST_CASE("check_output_files refuses what the write would harm, before any work", "[output]") {
  temp_dir dir;
  const fs::path input = dir.path / "r.json";
  write_file_atomically(input, "{}\n");
  const auto check = [&](std::vector<output_request> outputs) {
    return input_error_message([&] { check_output_files(outputs, {input}); });
  };
  CHECK(check({{"--html", dir.path / "report.html"}, {"--md", dir.path / "report.md"}}) ==
        "(accepted)");
  CHECK(check({{"--html", input}}) ==
        "--html " + input.string() + ": expected a file other than the input " + input.string() +
            " (writing it would replace what it is made from)");
  // The input under another name is still the input.
  fs::create_symlink("r.json", dir.path / "alias.json");
  CHECK(check({{"--csv", dir.path / "alias.json"}}).find("other than the input") !=
        std::string::npos);
  CHECK(check({{"--html", dir.path / "a.html"}, {"--md", dir.path / "." / "a.html"}}) ==
        "--md " + (dir.path / "." / "a.html").string() + ": expected a file other than --html " +
            (dir.path / "a.html").string() + " (both would write the same file)");
  // A new file named relative to the working folder in two spellings is still one file.
  CHECK(check({{"--html", "gpubench-test-new.html"}, {"--md", "./gpubench-test-new.html"}}) ==
        "--md ./gpubench-test-new.html: expected a file other than --html "
        "gpubench-test-new.html (both would write the same file)");
  CHECK(check({{"--html", "/dev/null"}}) ==
        "--html /dev/null: expected a regular file or a new name, got a character device");
  CHECK(
      check({{"--html", dir.path / "nowhere" / "a.html"}}).find("expected a folder that exists") !=
      std::string::npos);
  CHECK(check({{"--html", input / "a.html"}}).find("is not a folder") != std::string::npos);
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directory(dir.path / "locked");
    fs::permissions(dir.path / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(check({{"--html", dir.path / "locked" / "a.html"}})
              .find("expected a folder gpubench may write to") != std::string::npos);
  }
}

TEST_CASE("a results folder is new, empty or gpubench's own, and one run holds it at a time",
          "[output]") {
  temp_dir dir;
  const auto claim_message = [&](const fs::path& folder) {
    return input_error_message([&] { (void)claim_results_folder(folder, "--out X"); });
  };
  {
    // New (parents too) and empty folders are claimed; the marker says who holds them.
    const claimed_folder fresh = claim_results_folder(dir.path / "a" / "b", "--out X");
    CHECK(fs::exists(dir.path / "a" / "b" / results_folder_marker));
    CHECK_THAT(slurp(dir.path / "a" / "b" / results_folder_marker),
               Catch::Contains("pid " + std::to_string(::getpid())));
    // A second claim while the first is held: refused, naming the holder.
    CHECK_THAT(claim_message(dir.path / "a" / "b"),
               Catch::StartsWith("--out X: expected a folder no other run is using; gpubench "
                                 "run (pid " +
                                 std::to_string(::getpid())));
  }
  // Released: an interrupted run's folder (marker, scratch folder, no results.json) is reused.
  fs::create_directory(dir.path / "a" / "b" / "scratch");
  CHECK(claim_message(dir.path / "a" / "b") == "(accepted)");
  write_file_atomically(dir.path / "a" / "b" / "results.json", "{}");
  CHECK(claim_message(dir.path / "a" / "b") ==
        "--out X: expected a new or empty folder, or one gpubench made; it holds an earlier "
        "results.json");

  // The user's folders are left exactly as they were: no marker added.
  fs::create_directory(dir.path / "mine");
  write_file_atomically(dir.path / "mine" / "report.html", "<p>my notes</p>");
  CHECK(claim_message(dir.path / "mine") ==
        "--out X: expected a new or empty folder, or one gpubench made; it holds report.html, "
        "which gpubench did not make");
  CHECK(entries_in(dir.path / "mine") == 1);
  fs::create_directory(dir.path / "linked");
  fs::create_directory(dir.path / "elsewhere");
  fs::create_directory_symlink(dir.path / "elsewhere", dir.path / "linked" / "scratch");
  CHECK_THAT(claim_message(dir.path / "linked"), Catch::EndsWith("it holds scratch, which "
                                                                 "gpubench did not make"));
  // A scratch folder alone, without the marker, is not proof either.
  fs::create_directories(dir.path / "bare" / "scratch");
  CHECK_THAT(claim_message(dir.path / "bare"), Catch::Contains("it holds scratch"));
  write_file_atomically(dir.path / "file", "x");
  CHECK(claim_message(dir.path / "file") == "--out X: expected a folder, got an existing file");
}

TEST_CASE("a watch's folder in progress is its own: reused after a kill, held while it runs",
          "[output]") {
  temp_dir dir;
  constexpr folder_use watch{
      .finished = "watch.json", .in_progress = "watch.jsonl", .writer = "gpubench watch"};
  const fs::path folder = dir.path / "w";
  const auto claim_message = [&](folder_use use) {
    return input_error_message([&] { (void)claim_results_folder(folder, "--out w", use); });
  };
  {
    const claimed_folder first = claim_results_folder(folder, "--out w", watch);
    write_file_atomically(folder / "watch.jsonl", "{}\n");
    // A second watch meanwhile is told the folder is in use, not that the file is foreign.
    CHECK_THAT(claim_message(watch), Catch::StartsWith("--out w: expected a folder no other run is "
                                                       "using; gpubench watch (pid"));
  }
  // Left by a watch that was killed (marker, watch.jsonl, no watch.json): reused.
  CHECK(claim_message(watch) == "(accepted)");
  // Not a run's file, and not a link planted under the name.
  CHECK_THAT(claim_message(folder_use{}), Catch::EndsWith("it holds watch.jsonl, which gpubench "
                                                          "did not make"));
  fs::remove(folder / "watch.jsonl");
  write_file_atomically(dir.path / "victim.txt", "mine");
  fs::create_symlink(dir.path / "victim.txt", folder / "watch.jsonl");
  CHECK_THAT(claim_message(watch), Catch::EndsWith("it holds watch.jsonl, which gpubench did "
                                                   "not make"));
  CHECK(slurp(dir.path / "victim.txt") == "mine");
}
