// Files to remove when gpubench must stop at once (a second stop signal): its scratch files
// and half-written temporary files. Kept in fixed slots so a signal handler can walk them.
#pragma once

#include <filesystem>

namespace gpubench {

// Registers a path for removal on an immediate stop while the object lives. Paths too long for a
// slot, or past the last free slot, are not registered (the normal cleanup still removes them).
class removed_on_stop {
 public:
  explicit removed_on_stop(const std::filesystem::path& path) noexcept;
  removed_on_stop(const removed_on_stop&) = delete;
  removed_on_stop& operator=(const removed_on_stop&) = delete;
  ~removed_on_stop();

 private:
  int slot_ = -1;
};

// Unlinks every registered path. Async-signal-safe: only atomics and unlink().
void remove_files_registered_for_stop() noexcept;

}  // namespace gpubench
