#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/parallel.hpp"
#include "gpubench/core/text.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {

// Why stat() could not reach `path`, as the end of "expected ...".
std::string unreachable(const fs::path& path, int error) {
  switch (error) {
    case ENOENT: {
      std::error_code ec;
      if (fs::is_symlink(fs::symlink_status(path, ec))) {
        return "an existing file (it is a symlink to " + fs::read_symlink(path, ec).string() +
               ", which does not exist)";
      }
      return "an existing file (it does not exist)";
    }
    case EACCES:
      return "a file gpubench may reach (permission denied on a folder on its path)";
    case ELOOP:
      return "a file (its path is a symlink loop)";
    case ENOTDIR:
      return "an existing file (a part of its path is a file, not a folder)";
    case ENAMETOOLONG:
      return "a file name the system takes (it is too long)";
    default:
      return std::string("a file gpubench can reach (") + std::strerror(error) + ")";
  }
}

}  // namespace

std::string json_text(const json& doc, int indent) {
  return doc.dump(indent, ' ', false, json::error_handler_t::replace);
}

void write_json_text(std::ostream& out, const json& doc, std::string_view key, std::size_t count,
                     const std::function<json(std::size_t)>& element, int indent,
                     std::size_t batch) {
  const std::string text = json_text(doc, indent);
  // The member as nlohmann writes it at the top level. With an indent it starts a line, and a
  // raw newline occurs only between members (inside strings it is escaped), so the line found is
  // the member's own. Without one (or with 0, where every line starts alike), the member must be
  // the document's last.
  const std::string newline = indent < 0 ? "" : "\n";
  const std::string pad = indent < 0 ? "" : std::string(static_cast<std::size_t>(indent), ' ');
  const std::string member =
      newline + pad + json(std::string(key)).dump() + (indent < 0 ? ":" : ": ") + "[]";
  std::size_t at = std::string::npos;
  if (doc.is_object() && doc.contains(std::string(key))) {
    if (indent > 0) {
      at = text.find(member);
    } else if (const std::string last = member + newline + "}"; text.ends_with(last)) {
      at = text.size() - last.size();
    }
  }
  if (at == std::string::npos) {
    throw std::logic_error("write_json_text: no empty array member '" + std::string(key) + "'");
  }
  const std::size_t open = at + member.size() - 1;  // the ']' of "[]"
  out.write(text.data(), static_cast<std::streamsize>(open));
  // An element one level down: each of its lines moves right by two indents, as in the whole.
  const std::string inner = newline + pad + pad;
  batch = std::max<std::size_t>(batch, 1);
  std::vector<std::string> parts;
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t n = std::min(batch, count - first);
    parts.assign(n, std::string());
    parallel_for(n, 1024, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const std::string one = json_text(element(first + i), indent);
        std::string& part = parts[i];
        part.reserve(one.size() + one.size() / 4 + inner.size());
        part += (first + i == 0 ? "" : ",") + inner;
        for (std::size_t from = 0; from < one.size();) {
          const std::size_t line_end = std::min(one.find('\n', from), one.size());
          part.append(one, from, line_end - from);
          if (line_end < one.size()) part += inner;
          from = line_end + 1;
        }
      }
    });
    for (const std::string& part : parts)
      out.write(part.data(), static_cast<std::streamsize>(part.size()));
  }
  if (count > 0) out << newline << pad;
  out.write(text.data() + open, static_cast<std::streamsize>(text.size() - open));
}

namespace {

// A JSON file opened after stat's checks: its descriptor, closed with this, and its size then.
struct opened_file {
  int fd = -1;
  std::size_t size = 0;
  opened_file() = default;
  opened_file(const opened_file&) = delete;
  opened_file& operator=(const opened_file&) = delete;
  ~opened_file() {
    if (fd != -1) ::close(fd);
  }
};

void open_json_file(const fs::path& path, opened_file& f) {
  const std::string file = path.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw bad_input(file, "", unreachable(path, errno));
  if (S_ISDIR(st.st_mode)) throw bad_input(file, "", "a regular file (it is a folder)");
  if (!S_ISREG(st.st_mode)) throw bad_input(file, "", "a regular file (it is a special file)");
  if (static_cast<std::uintmax_t>(st.st_size) > max_json_file_bytes) {
    throw bad_input(file, "",
                    "a JSON file of at most " + format_bytes(max_json_file_bytes) + " (it has " +
                        format_bytes(static_cast<std::uint64_t>(st.st_size)) + ")");
  }
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd == -1) {
    const int error = errno;
    throw bad_input(file, "",
                    error == EACCES
                        ? std::string("a file gpubench may read (permission denied)")
                        : std::string("a readable file (") + std::strerror(error) + ")");
  }
  f.size = static_cast<std::size_t>(st.st_size);
}

// Reads into [at, at + room) until the file ends or the room is full; how many bytes it read.
std::size_t read_into(const fs::path& path, const opened_file& f, char* at, std::size_t room) {
  std::size_t done = 0;
  while (done < room) {
    const ssize_t n = ::read(f.fd, at + done, room - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;  // before anything else may change it
      throw bad_input(path.string(), "",
                      std::string("a readable file (") + std::strerror(error) + ")");
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

// Below this a file is read into a string: a mapping of its own is worth it only for many pages.
constexpr std::size_t mapped_from_bytes = std::size_t{1} << 22;

// The rest of an opened file as a string, with room for a parser's padding past it.
std::string read_text(const fs::path& path, const opened_file& f) {
  // A byte more than the file has, so that the read finding its end needs no larger string
  // (growing one copies it: 263 MB for a fleet's file), and room past it for a parser's padding
  // (json_text_padding), so that the fast reader parses the text where it lies.
  std::string text;
  text.reserve(f.size + 1 + json_text_padding);
  text.resize(f.size + 1);
  std::size_t done = 0;
  while (true) {
    done += read_into(path, f, text.data() + done, text.size() - done);
    if (done < text.size()) break;
    if (done > max_json_file_bytes) {
      throw bad_input(path.string(), "",
                      "a JSON file of at most " + format_bytes(max_json_file_bytes));
    }
    text.resize(text.size() + 65536);  // it grew, or /proc-like
  }
  text.resize(done);
  return text;
}

}  // namespace

std::string read_json_file_text(const fs::path& path) {
  opened_file f;
  open_json_file(path, f);
  return read_text(path, f);
}

json_file_bytes::json_file_bytes(json_file_bytes&& other) noexcept {
  *this = std::move(other);
}

json_file_bytes& json_file_bytes::operator=(json_file_bytes&& other) noexcept {
  if (this == &other) return *this;
  release();
  owned_ = std::move(other.owned_);
  mapped_ = std::exchange(other.mapped_, nullptr);
  mapped_size_ = std::exchange(other.mapped_size_, 0);
  size_ = std::exchange(other.size_, 0);
  room_ = std::exchange(other.room_, 0);
  // An emptied (released) object stays so: its text has no bytes at all.
  data_ = other.data_ == nullptr ? nullptr : mapped_ != nullptr ? other.data_ : owned_.data();
  other.data_ = nullptr;
  return *this;
}

json_file_bytes::~json_file_bytes() {
  release();
}

std::string json_file_bytes::take_text() {
  std::string text = mapped_ != nullptr ? std::string(this->text()) : std::move(owned_);
  release();
  return text;
}

void json_file_bytes::release() {
  if (mapped_ != nullptr) ::munmap(mapped_, mapped_size_);
  mapped_ = nullptr;
  mapped_size_ = 0;
  std::string().swap(owned_);
  data_ = nullptr;
  size_ = 0;
  room_ = 0;
}

json_file_bytes read_json_file_bytes(const fs::path& path) {
  json_file_bytes out;
  {
    opened_file f;
    open_json_file(path, f);
    const std::size_t size = f.size;
    if (size < mapped_from_bytes) {
      out.owned_ = read_text(path, f);  // the file opened once, as read_json_file_text would
    } else {
      // Memory the kernel clears and maps in one call (MAP_POPULATE), then read into: faulted
      // in a page at a time, a fleet's 263 MB took 64,000 faults, and a string's resize cleared
      // it once more before the read.
      const long page = ::sysconf(_SC_PAGESIZE);
      const std::size_t page_bytes = page > 0 ? static_cast<std::size_t>(page) : 4096;
      const std::size_t want = size + 1 + json_text_padding;
      const std::size_t length = (want + page_bytes - 1) / page_bytes * page_bytes;
      void* mapped = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (mapped == MAP_FAILED) {
        out.owned_ = read_text(path, f);
      } else {
        out.mapped_ = mapped;
        out.mapped_size_ = length;
        char* bytes = static_cast<char*>(mapped);
        const std::size_t done = read_into(path, f, bytes, size + 1);
        if (done <= size) {  // it ended where stat said, or earlier: the rest stays zero
          out.data_ = bytes;
          out.size_ = done;
          out.room_ = length - done;
          return out;
        }
        out.release();  // it grew while read: read again as a string, which grows with it
        out.owned_ = read_json_file_text(path);
      }
    }
  }
  out.data_ = out.owned_.data();
  out.size_ = out.owned_.size();
  out.room_ = out.owned_.capacity() - out.owned_.size();
  return out;
}

json read_json_file(const fs::path& path) {
  return parse_json_text(read_json_file_text(path), path.string());
}

namespace {

// Refused up front, in one pass over the text that skips strings.
void check_json_depth(const std::string& content, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const char ch = content[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (ch == '\\') {
        escaped = true;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_json_depth) {
        const auto line =
            1 + std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(i), '\n');
        throw bad_input(file, "",
                        "JSON nested at most " + std::to_string(max_json_depth) +
                            " levels deep (deeper at line " + std::to_string(line) + ")");
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

}  // namespace

json parse_json_text(const std::string& content, const std::string& file) {
  if (content.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw bad_input(file, "", "a JSON document (the file is empty)");
  }
  check_json_depth(content, file);
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
