#include "detail/shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace gpubench::detail {

std::unique_ptr<shared_library> shared_library::open(const std::vector<std::string>& candidates,
                                                     std::string& why_not) {
  why_not.clear();
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      std::string path = candidate;
      const link_map* map = nullptr;
      if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
          map->l_name[0] != '\0') {
        path = map->l_name;
      }
      return std::unique_ptr<shared_library>(new shared_library(handle, std::move(path)));
    }
    const char* error = dlerror();
    if (!why_not.empty()) why_not += "; ";
    why_not += error != nullptr ? error : candidate + ": not loaded";
  }
  if (why_not.empty()) why_not = "no library named";
  return nullptr;
}

shared_library::~shared_library() {
  dlclose(handle_);
}

void* shared_library::symbol(const char* name) const {
  return dlsym(handle_, name);
}

}  // namespace gpubench::detail
