// Files gpubench writes for the user (results, reports). gpubench writes only over a regular file
// or where nothing is: never through to a device, a FIFO or a folder, never over its own input.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench {

// One file a command will write, named by what asked for it ("--html", "--out").
struct output_request {
  std::string flag;
  std::filesystem::path path;
};

// Before any work: every output is nothing yet or a regular file (a symlink is followed), in a
// folder that exists and may be written, and is not the same file as one of `inputs` or as
// another output. Throws input_error naming the flag and the path.
void check_output_files(const std::vector<output_request>& outputs,
                        const std::vector<std::filesystem::path>& inputs = {});

// What a write does with a symlink at its path. A file the user named (--html, --out) follows it,
// as the shell's `>` does. A file of a folder gpubench claimed (results.json, watch.json) has a
// name that is gpubench's own: a link planted there while gpubench runs is replaced, never
// written through to what it points at.
enum class at_symlink { follow, replace };

// Writes the text whole or not at all: a temporary file in the target's folder, fsync, rename, so
// a reader sees the old file or the new one. A symlink is followed (the link stays; what it
// points to gets the text) or replaced, as `links` says; a file that is there keeps its
// permissions; anything else but a regular file is refused (input_error). A failed write throws
// std::runtime_error "PATH: could not write (REASON)".
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           at_symlink links = at_symlink::follow);

// The folder a run writes its results into, held (an flock on its marker file) while this object
// lives, so a second run given the same folder is refused rather than mixing its files in.
class claimed_folder {
 public:
  claimed_folder() = default;
  claimed_folder(std::filesystem::path path, int lock_fd) : path_(std::move(path)), fd_(lock_fd) {}
  claimed_folder(claimed_folder&& other) noexcept;
  claimed_folder& operator=(claimed_folder&& other) noexcept;
  claimed_folder(const claimed_folder&) = delete;
  claimed_folder& operator=(const claimed_folder&) = delete;
  ~claimed_folder();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// The marker a results folder holds from the moment gpubench claims it: how gpubench knows a
// folder is its own.
inline constexpr const char* results_folder_marker = ".gpubench-run";

// What a folder's run leaves there when it has finished (a later run must not mix its files in),
// what it writes as it goes (a run stopped with SIGKILL leaves it behind), and what the marker
// says is writing to it.
struct folder_use {
  std::string_view finished = "results.json";
  std::string_view in_progress = {};
  std::string_view writer = "gpubench run";
};

// A folder gpubench may write a run into: new (made here, parents too), empty, or one gpubench
// made (it holds the marker) that holds no `use.finished` file yet and only what a run leaves
// there (scratch folders, a `use.in_progress` file). Refused, as input_error naming `name`: a file,
// a folder with anything else in it (the user's files, a symlink), a folder another gpubench run
// holds now. The check and the claim are one step under the lock: of two runs started together, one
// goes ahead.
[[nodiscard]] claimed_folder claim_results_folder(const std::filesystem::path& folder,
                                                  const std::string& name, folder_use use = {});

// Now, in UTC, as part of a folder name: "20261127T183000Z".
[[nodiscard]] std::string folder_timestamp();

// A new folder for a run under `parent` (made if need be): `base`, else base-1, base-2, ...,
// the first that did not exist, claimed as claim_results_folder does.
[[nodiscard]] claimed_folder claim_new_folder(const std::filesystem::path& parent,
                                              const std::string& base, folder_use use = {});

}  // namespace gpubench
