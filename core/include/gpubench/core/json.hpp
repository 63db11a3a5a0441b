// JSON conventions shared by every gpubench file type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpubench {

// Keys keep the order they were written in, so files read the way the design documents them.
using json = nlohmann::ordered_json;

// The largest JSON file gpubench reads, and so the largest it writes: a results file of a
// many-rank run (100k results is about 100 MB) fits well inside it.
inline constexpr std::uintmax_t max_json_file_bytes = std::uintmax_t{1} << 30;
// Every file gpubench reads is a few levels deep; a document nested far deeper would be parsed,
// then overflow the stack of whatever walks it (copies, dumps, the readers).
inline constexpr int max_json_depth = 128;

// Reads and parses a JSON file. Throws input_error naming the file and the reason when it cannot
// be reached (missing, a symlink loop, a folder on its path gpubench may not enter), is not a
// regular file, cannot be read, is larger than max_json_file_bytes, is empty or is not JSON.
[[nodiscard]] json read_json_file(const std::filesystem::path& path);
// Its text, unparsed, after the same checks (for a reader with its own parser).
[[nodiscard]] std::string read_json_file_text(const std::filesystem::path& path);
// The spare capacity read_json_file_text leaves past the text: simdjson reads up to 64 bytes
// beyond a text's end, and copies one that has less room.
inline constexpr std::size_t json_text_padding = 64;

// A JSON file's bytes in memory with at least json_text_padding readable bytes past them, for a
// reader that parses the text where it lies and lets it go once parsed (release()).
class json_file_bytes {
 public:
  json_file_bytes() = default;
  json_file_bytes(json_file_bytes&& other) noexcept;
  json_file_bytes& operator=(json_file_bytes&& other) noexcept;
  json_file_bytes(const json_file_bytes&) = delete;
  json_file_bytes& operator=(const json_file_bytes&) = delete;
  ~json_file_bytes();

  [[nodiscard]] std::string_view text() const { return {data_, size_}; }
  // Readable bytes past the text's end.
  [[nodiscard]] std::size_t room() const { return room_; }
  // Frees the bytes; text() is empty after (its data() null).
  void release();
  // The text as a string (moved out where it is one), and the bytes released.
  [[nodiscard]] std::string take_text();

 private:
  friend json_file_bytes read_json_file_bytes(const std::filesystem::path& path);
  std::string owned_;  // a small file's text, in a string
  void* mapped_ = nullptr;
  std::size_t mapped_size_ = 0;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t room_ = 0;
};
// The same checks as read_json_file_text; a large file is read into memory mapped for it.
[[nodiscard]] json_file_bytes read_json_file_bytes(const std::filesystem::path& path);
// The same for text already in memory; `file` names it in messages.
[[nodiscard]] json parse_json_text(const std::string& content, const std::string& file);

// JSON text of a document gpubench writes (files, --json): paths and names are bytes, and a byte
// sequence that is not UTF-8 (a Latin-1 file name) is written as U+FFFD rather than making the
// whole document fail (nlohmann's type_error.316) and lose what was measured.
[[nodiscard]] std::string json_text(const json& doc, int indent = -1);

// Writes to `out` what json_text(doc, indent) gives once doc's top-level member `key` (an empty
// array in `doc`) holds element(0) .. element(count - 1), without holding them all as one
// document: each element is built and dumped when its turn comes, a range at a time on every
// core. A fleet's validation holds a million outcomes; as one document they took 6 s and 4 GB.
// `batch`: the elements whose texts are held at once.
void write_json_text(std::ostream& out, const json& doc, std::string_view key, std::size_t count,
                     const std::function<json(std::size_t)>& element, int indent = -1,
                     std::size_t batch = std::size_t{1} << 16);

// The JSON Pointer of an array element or object member, for error messages: "/benchmarks/3".
[[nodiscard]] std::string json_path(const std::string& parent, const std::string& child);
[[nodiscard]] std::string json_path(const std::string& parent, std::size_t index);

}  // namespace gpubench

// std::optional maps to null; nlohmann 3.11.2 has no built-in support for it.
template <class T>
struct nlohmann::adl_serializer<std::optional<T>> {
  template <class BasicJson>
  static void to_json(BasicJson& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
  template <class BasicJson>
  static void from_json(const BasicJson& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.template get<T>();
    }
  }
};

namespace gpubench::detail {

// `out = j.value(key, fallback)`, looking first at member `next`, where the member after the
// last one read sits: gpubench writes a type's members in the order it reads them, and an ordered
// object finds a key by comparing it with each member before it, so a type of 25 members compared
// 300 keys (converting a fleet's 100,000 GPU entries). `next` is then the member after this one.
template <class BasicJson, class T>
void read_member(const BasicJson& j, std::size_t& next, const char* key, T& out,
                 const T& fallback) {
  using object = typename BasicJson::object_t;
  if constexpr (std::random_access_iterator<typename object::const_iterator>) {
    if (j.is_object()) {
      const object& members = j.template get_ref<const object&>();
      auto at = members.begin() + static_cast<std::ptrdiff_t>(std::min(next, members.size()));
      if (at == members.end() || at->first != key) {
        at = std::find_if(members.begin(), members.end(),
                          [key](const auto& member) { return member.first == key; });
      }
      if (at == members.end()) {
        out = fallback;
        return;
      }
      out = at->second.template get<T>();
      next = static_cast<std::size_t>(at - members.begin()) + 1;
      return;
    }
  }
  out = j.value(key, fallback);  // a map's own lookup; or nlohmann's error for no object
}

}  // namespace gpubench::detail

#define GPUBENCH_JSON_FROM(v1)                                                                  \
  ::gpubench::detail::read_member(nlohmann_json_j, gpubench_json_next, #v1, nlohmann_json_t.v1, \
                                  nlohmann_json_default_obj.v1);

// Like NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, but for any basic_json (ordered_json
// included), which the 3.11.2 macro does not support, and reading each member where it is first
// looked for (detail::read_member).
#define GPUBENCH_JSON_FIELDS(Type, ...)                                        \
  template <class BasicJson>                                                   \
  void to_json(BasicJson& nlohmann_json_j, const Type& nlohmann_json_t) {      \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))   \
  }                                                                            \
  template <class BasicJson>                                                   \
  void from_json(const BasicJson& nlohmann_json_j, Type& nlohmann_json_t) {    \
    const Type nlohmann_json_default_obj{};                                    \
    std::size_t gpubench_json_next = 0;                                        \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(GPUBENCH_JSON_FROM, __VA_ARGS__)) \
  }
