#include "gpubench/core/text.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace gpubench {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) {
      return parts;
    }
    start = end + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (const auto& part : parts) {
    if (!text.empty()) text.append(separator);
    text += part;
  }
  return text;
}

gemm_shape parse_gemm_shape(const std::string& text) {
  // Digits and 'x' only, read with from_chars: sscanf let " 8192", "+8192" and "8192abc" through,
  // and was a tenth of validating 100,000 GPUs, which reads every gemm result's shape.
  std::int64_t dims[3] = {0, 0, 0};
  int count = 0;
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  bool well_formed = !text.empty();
  while (well_formed && count < 3) {
    const auto [next, error] = std::from_chars(at, end, dims[count]);
    well_formed = error == std::errc() && next != at && (*at >= '0' && *at <= '9');
    ++count;
    at = next;
    if (at == end || !well_formed) break;
    well_formed = *at == 'x' && count < 3;
    ++at;
  }
  well_formed = well_formed && at == end && (count == 1 || count == 3);
  if (!well_formed) {
    throw std::invalid_argument("expected a shape N (square) or MxNxK, got '" + text + "'");
  }
  if (count == 1) dims[1] = dims[2] = dims[0];
  constexpr std::int64_t limit = std::int64_t{1} << 20;
  for (const std::int64_t d : dims) {
    if (d <= 0 || d > limit) {
      throw std::invalid_argument("expected M, N, K from 1 to 2^20, got '" + text + "'");
    }
  }
  return {dims[0], dims[1], dims[2]};
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof buffer, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    const bool whole = value >= 100 || value == static_cast<double>(static_cast<long long>(value));
    std::snprintf(buffer, sizeof buffer, whole ? "%.0f %s" : "%.1f %s", value, units[unit]);
  }
  return buffer;
}

std::string format_plain(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

namespace {

// A byte printable() leaves as it is, bar 0xc2 (a C1 control's lead byte, judged with the next).
bool plain_byte(unsigned char byte) {
  return (byte >= 0x20 || byte == '\n' || byte == '\t') && byte != 0x7f && byte != 0xc2;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char escape[8];
  std::size_t i = 0;
  while (i < text.size()) {
    // Runs of plain bytes are copied whole: stdout passes every byte of a --json document here.
    std::size_t run = i;
    while (run < text.size() && plain_byte(static_cast<unsigned char>(text[run]))) ++run;
    out.append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte != 0xc2) {
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(text[++i]));
      out += escape;
    } else {
      out += text[i];
    }
    ++i;
  }
  return out;
}

std::string upper_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace gpubench
