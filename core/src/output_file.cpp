#include "gpubench/core/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "gpubench/core/errors.hpp"
#include "gpubench/core/stop_cleanup.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {

std::optional<struct stat> lstat_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string label(const output_request& out) {
  return out.flag.empty() ? out.path.string() : out.flag + " " + out.path.string();
}

// Where the text will land: the path itself, or what its symlinks lead to. A link that points
// nowhere yet names the file to create, as the shell's `>` treats it.
fs::path resolve_target(const fs::path& path, const std::string& name) {
  fs::path target = path;
  for (int hops = 0; hops < 40; ++hops) {
    const auto st = lstat_of(target);
    if (!st || !S_ISLNK(st->st_mode)) return target;
    std::error_code ec;
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) return target;
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  throw input_error(name + ": expected a file to write, got a symlink loop");
}

fs::path folder_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

// A new file gets what the user's umask allows of rw-rw-rw-, as `>` would give it.
mode_t new_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(0666 & ~std::stoul(line.substr(6), nullptr, 8));
    }
  }
  return 0644;
}

[[noreturn]] void write_failed(const fs::path& path, int error) {
  throw std::runtime_error(path.string() + ": could not write (" + std::strerror(error) + ")");
}

}  // namespace

void check_output_files(const std::vector<output_request>& outputs,
                        const std::vector<fs::path>& inputs) {
  std::vector<fs::path> targets;
  for (const auto& out : outputs) {
    const std::string name = label(out);
    const fs::path target = resolve_target(out.path, name);
    if (const auto st = lstat_of(target); st && !S_ISREG(st->st_mode)) {
      throw input_error(name + ": expected a regular file or a new name, got " +
                        kind_of(st->st_mode));
    }
    const fs::path folder = folder_of(target);
    struct stat folder_st {};
    if (::stat(folder.c_str(), &folder_st) != 0) {
      throw input_error(name + ": expected a folder that exists (" + folder.string() + ": " +
                        std::strerror(errno) + ")");
    }
    if (!S_ISDIR(folder_st.st_mode)) {
      throw input_error(name + ": expected a path in a folder (" + folder.string() +
                        " is not a folder)");
    }
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw input_error(name + ": expected a folder gpubench may write to (" + folder.string() +
                        ": " + std::strerror(errno) + ")");
    }
    std::error_code ec;
    for (const auto& input : inputs) {
      if (fs::equivalent(input, target, ec)) {
        throw input_error(name + ": expected a file other than the input " + input.string() +
                          " (writing it would replace what it is made from)");
      }
    }
    // Absolute first: a relative name that does not exist yet stays as written ("X" against
    // "./X" would pass as two files).
    const fs::path canonical = fs::weakly_canonical(fs::absolute(target, ec), ec);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (targets[i] == canonical) {
        throw input_error(name + ": expected a file other than " + label(outputs[i]) +
                          " (both would write the same file)");
      }
    }
    targets.push_back(canonical);
  }
}

void write_file_atomically(const fs::path& path, std::string_view text, at_symlink links) {
  const fs::path target = links == at_symlink::follow ? resolve_target(path, path.string()) : path;
  // What may stand at the target: a regular file, or nothing; a link too where it is replaced.
  const auto writable = [&](mode_t mode) {
    return S_ISREG(mode) || (links == at_symlink::replace && S_ISLNK(mode));
  };
  auto before = lstat_of(target);
  if (before && !writable(before->st_mode)) {
    throw input_error(path.string() + ": expected a regular file or a new name, got " +
                      kind_of(before->st_mode));
  }
  if (before && S_ISLNK(before->st_mode)) before.reset();  // its mode is no file's to keep
  // Hidden, in the same folder (rename must not cross filesystems); mkstemp fills the X's.
  std::string hidden_name = ".";  // appended, not "." + name: GCC 12 warns falsely on that
  hidden_name.append(target.filename().string()).append(".XXXXXX");
  std::string temp = (folder_of(target) / hidden_name).string();
  const int fd = ::mkstemp(temp.data());
  if (fd == -1) write_failed(path, errno);
  const removed_on_stop temp_guard(temp);  // a stop at once leaves no half-written file
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temp.c_str());
    write_failed(path, error);
  };
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600: a file that was there keeps its mode (and, for root, its owner).
  if (::fchmod(fd, before ? before->st_mode & 07777 : new_file_mode()) != 0) fail(errno);
  if (before && ::geteuid() == 0) (void)::fchown(fd, before->st_uid, before->st_gid);
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    write_failed(path, error);
  }
  // Checked again at the last moment: something may have been put there while we wrote.
  if (const auto now = lstat_of(target); now && !writable(now->st_mode)) {
    ::unlink(temp.c_str());
    throw input_error(path.string() + ": expected a regular file or a new name, got " +
                      kind_of(now->st_mode));
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    write_failed(path, error);
  }
}

claimed_folder::claimed_folder(claimed_folder&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

claimed_folder& claimed_folder::operator=(claimed_folder&& other) noexcept {
  if (this != &other) {
    if (fd_ != -1) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

claimed_folder::~claimed_folder() {
  if (fd_ != -1) ::close(fd_);  // closing releases the lock
}

namespace {

// What a run leaves in its folder before its finished file exists: the marker, scratch folders
// (real folders, not links: scratch files are written inside them) and its file in progress (a
// regular file, not a link).
bool left_by_a_run(const fs::directory_entry& entry, std::string_view in_progress) {
  const std::string name = entry.path().filename().string();
  if (name == results_folder_marker) return true;
  std::error_code ec;
  if (!in_progress.empty() && name == in_progress) {
    return entry.is_regular_file(ec) && !entry.is_symlink(ec);
  }
  const bool scratch_name = name == "scratch" || name.rfind("scratch-", 0) == 0;
  return scratch_name && entry.is_directory(ec) && !entry.is_symlink(ec);
}

// Why gpubench may not write a run into `folder`, or empty. Looked at under the lock.
std::string why_not_ours(const fs::path& folder, const folder_use& use) {
  const std::string_view finished = use.finished;
  std::error_code ec;
  bool marked = false;
  std::string foreign;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == finished) return "it holds an earlier " + std::string(finished);
    marked = marked || name == results_folder_marker;
    if (foreign.empty() && !left_by_a_run(entry, use.in_progress)) foreign = name;
  }
  if (ec) return "it cannot be read (" + ec.message() + ")";
  if (!foreign.empty()) {
    return "it holds " + foreign + ", which gpubench did not make";
  }
  if (!marked) {
    // Scratch folders without the marker: not ours either.
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      return "it holds " + entry.path().filename().string() + ", which gpubench did not make";
    }
  }
  return {};
}

std::string read_marker(const fs::path& marker) {
  std::ifstream in(marker);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

claimed_folder claim_results_folder(const fs::path& folder, const std::string& name,
                                    folder_use use) {
  std::error_code ec;
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec)) {
    throw input_error(name + ": expected a folder, got an existing file");
  }
  if (folder.has_parent_path()) {
    fs::create_directories(folder.parent_path(), ec);
    if (ec) {
      throw input_error(name + ": cannot create the folder (" + ec.message() + ")");
    }
  }
  if (::mkdir(folder.c_str(), 0777) != 0 && errno != EEXIST) {
    throw input_error(name + ": cannot create the folder (" + std::strerror(errno) + ")");
  }
  if (!fs::is_directory(folder, ec)) {
    throw input_error(name + ": expected a folder, got an existing file");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw input_error(name + ": expected a folder gpubench may write to");
  }
  // Refused before the marker is made: a foreign folder is left exactly as it was.
  if (std::string why = why_not_ours(folder, use); !why.empty()) {
    throw input_error(name + ": expected a new or empty folder, or one gpubench made; " + why);
  }
  const fs::path marker = folder / results_folder_marker;
  const int fd = ::open(marker.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd == -1) {
    throw input_error(name + ": cannot claim the folder (" + marker.string() + ": " +
                      std::strerror(errno) + ")");
  }
  claimed_folder claim(folder, fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const std::string holder = read_marker(marker);
    throw input_error(name + ": expected a folder no other run is using; " +
                      (holder.empty() ? std::string("another gpubench run holds it") : holder));
  }
  // Under the lock, again: the run that held it a moment ago may have finished.
  if (std::string why = why_not_ours(folder, use); !why.empty()) {
    throw input_error(name + ": expected a new or empty folder, or one gpubench made; " + why);
  }
  char host[256] = {};
  (void)::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const std::string text = std::string(use.writer) + " (pid " + std::to_string(::getpid()) +
                           " on " + host + ", started " + when + ") is writing to it\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    throw input_error(name + ": cannot claim the folder (" + marker.string() + ": " +
                      std::strerror(errno) + ")");
  }
  return claim;
}

std::string folder_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &utc);
  return buffer;
}

claimed_folder claim_new_folder(const fs::path& parent, const std::string& base, folder_use use) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw input_error(parent.string() + ": cannot create the folder (" + ec.message() + ")");
  }
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const fs::path candidate =
        parent / (attempt == 0 ? base : base + "-" + std::to_string(attempt));
    if (::mkdir(candidate.c_str(), 0777) == 0) {
      return claim_results_folder(candidate, candidate.string(), use);
    }
    if (errno != EEXIST) {
      throw input_error(candidate.string() + ": cannot create the folder (" + std::strerror(errno) +
                        ")");
    }
  }
  throw input_error(parent.string() + ": could not find an unused folder name");
}

}  // namespace gpubench
