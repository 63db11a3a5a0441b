#include "gpubench/core/stop_cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace gpubench {

namespace {

enum slot_state : int { slot_free = 0, slot_filling = 1, slot_ready = 2 };

struct slot {
  std::atomic<int> state{slot_free};
  char path[4096] = {};
};

// 64 files at once: one per --scratch folder of a case, plus a results temporary file.
std::array<slot, 64> slots;

}  // namespace

removed_on_stop::removed_on_stop(const std::filesystem::path& path) noexcept {
  const std::string& text = path.native();
  if (text.size() >= sizeof slots[0].path) return;
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    int expected = slot_free;
    if (slots[i].state.compare_exchange_strong(expected, slot_filling)) {
      std::memcpy(slots[i].path, text.c_str(), text.size() + 1);
      slots[i].state.store(slot_ready);
      slot_ = i;
      return;
    }
  }
}

removed_on_stop::~removed_on_stop() {
  if (slot_ >= 0) slots[slot_].state.store(slot_free);
}

void remove_files_registered_for_stop() noexcept {
  for (auto& s : slots) {
    if (s.state.load() == slot_ready) (void)::unlink(s.path);
  }
}

}  // namespace gpubench
