#include "standard_streams.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "gpubench/core/text.hpp"

namespace gpubench::app {

checked_output::checked_output(int fd) : fd_(fd) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

checked_output::int_type checked_output::overflow(int_type ch) {
  if (sync() != 0) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int checked_output::sync() {
  std::string_view pending(pbase(), static_cast<std::size_t>(pptr() - pbase()));
  // A C1 control is two bytes in UTF-8: a lead byte at the end waits for the next write.
  const bool hold_back = !pending.empty() && static_cast<unsigned char>(pending.back()) == 0xc2;
  if (hold_back) pending.remove_suffix(1);
  const std::string text = printable(pending);
  std::size_t done = 0;
  while (done < text.size() && error_ == 0) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  if (hold_back) {
    buffer_[0] = static_cast<char>(0xc2);
    pbump(1);
  }
  return error_ == 0 ? 0 : -1;
}

bool redrawable_terminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && term != nullptr && *term != '\0' &&
         std::string_view(term) != "dumb";
}

void write_terminal_control(const char* sequence) {
  std::cerr.flush();
  (void)!::write(STDERR_FILENO, sequence, std::strlen(sequence));
}

}  // namespace gpubench::app
