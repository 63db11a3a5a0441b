#include <algorithm>
#include <fstream>
#include <sstream>

#include "gpubench/errors.hpp"
#include "gpubench/json.hpp"

namespace gpubench {

namespace fs = std::filesystem;

json read_json_file(const fs::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw bad_input(file, "", "an existing file (it does not exist)");
  }
  if (!fs::is_regular_file(status)) {
    throw bad_input(file, "", "a regular file (it is a directory or a special file)");
  }
  constexpr std::uintmax_t max_bytes = 64ULL << 20;
  if (fs::file_size(path, ec) > max_bytes) {
    throw bad_input(file, "", "a JSON file of at most 64 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw bad_input(file, "", "a readable file (permission denied?)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_json_text(text.str(), file);
}

json parse_json_text(const std::string& content, const std::string& file) {
  if (content.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw bad_input(file, "", "a JSON document (the file is empty)");
  }
  try {
    return json::parse(content);
  } catch (const json::parse_error& e) {
    // The parser counts bytes from 1 up to the one it stopped at: say where that is in the text.
    const std::size_t at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, content.size());
    const auto stop = content.begin() + static_cast<std::ptrdiff_t>(at);
    const auto line = 1 + std::count(content.begin(), stop, '\n');
    const std::size_t newline = at == 0 ? std::string::npos : content.rfind('\n', at - 1);
    const std::size_t column = newline == std::string::npos ? at + 1 : at - newline;
    throw bad_input(file, "",
                    "valid JSON (parse error at line " + std::to_string(line) + ", column " +
                        std::to_string(column) + ")");
  } catch (const json::out_of_range&) {
    // 1e999: valid JSON grammar, but no double holds it.
    throw bad_input(file, "", "valid JSON (a number too large for a double)");
  }
}

std::string json_path(const std::string& parent, const std::string& child) {
  // RFC 6901 escaping: '~' -> "~0", '/' -> "~1".
  std::string escaped;
  for (char c : child) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return parent + "/" + escaped;
}

std::string json_path(const std::string& parent, std::size_t index) {
  return parent + "/" + std::to_string(index);
}

}  // namespace gpubench
