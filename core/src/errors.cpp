#include "gpubench/core/errors.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

namespace gpubench {

input_error bad_input(std::string_view file, std::string_view json_path,
                      std::string_view expected) {
  std::string message;
  for (std::string_view part : {file, json_path}) {
    if (!part.empty()) {
      message.append(part).append(": ");
    }
  }
  message.append("expected ").append(expected);
  return input_error(message);
}

namespace {
std::string describe(const std::string& library, const std::string& call,
                     const std::string& error_name, const std::string& detail,
                     const source_site& where) {
  std::ostringstream out;
  out << library << " call " << call << " failed with " << error_name;
  if (!detail.empty()) {
    out << " (" << detail << ")";
  }
  out << " at " << where.file << ':' << where.line;
  return out.str();
}
}  // namespace

api_error::api_error(std::string library, std::string call, std::string error_name,
                     const std::string& detail, source_site where)
    : std::runtime_error(describe(library, call, error_name, detail, where)),
      library_(std::move(library)),
      call_(std::move(call)),
      error_name_(std::move(error_name)) {}

std::string errno_name(int error_number) {
  // strerrorname_np is glibc >= 2.32; Debian 12 has 2.36.
  if (const char* name = strerrorname_np(error_number)) {
    return name;
  }
  return "errno " + std::to_string(error_number);
}

void throw_system_error(std::string_view call, int error_number, source_site where) {
  throw api_error("system", std::string(call), errno_name(error_number),
                  std::strerror(error_number), where);
}

}  // namespace gpubench
