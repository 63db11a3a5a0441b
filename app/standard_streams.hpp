// What gpubench prints goes through these buffers: they make text safe for a terminal (see
// gpubench::printable) and keep the first write error, so a full disk or a closed descriptor is
// reported instead of exit 0.
#pragma once

#include <array>
#include <streambuf>

namespace gpubench::app {

class checked_output final : public std::streambuf {
 public:
  explicit checked_output(int fd);
  checked_output(const checked_output&) = delete;
  checked_output& operator=(const checked_output&) = delete;
  // The errno of the first write that failed, or 0.
  [[nodiscard]] int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  int fd_;
  std::array<char, 1 << 16> buffer_{};
  int error_ = 0;
};

// Standard error is a terminal that takes cursor control: TERM set and not "dumb" (Emacs
// shells, some CI logs).
[[nodiscard]] bool redrawable_terminal();

// Terminal control that gpubench itself sends (the progress line's "\r\033[K"): written past
// the filter, after what is buffered.
void write_terminal_control(const char* sequence);

}  // namespace gpubench::app
