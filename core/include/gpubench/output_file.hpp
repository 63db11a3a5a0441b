// Files gpubench writes for the user (results, reports). gpubench writes only over a regular file
// or where nothing is: never through to a device, a FIFO or a folder, never over its own input.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
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

// Writes the text whole or not at all: a temporary file in the target's folder, fsync, rename, so
// a reader sees the old file or the new one. A symlink is followed (the link stays; what it
// points to gets the text); a file that is there keeps its permissions; anything but a regular
// file is refused (input_error). A failed write throws std::runtime_error
// "PATH: could not write (REASON)".
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace gpubench
