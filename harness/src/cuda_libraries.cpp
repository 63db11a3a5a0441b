#include "gpubench/harness/cuda_libraries.hpp"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <vector>

#include "detail/library_messages.hpp"
#include "detail/shared_library.hpp"
#include "gpubench/core/errors.hpp"

namespace gpubench::cuda {

namespace {

// A library loaded once per process and kept loaded: its entry points, or why it is not there.
template <class Api>
struct loaded_library {
  std::unique_ptr<gpubench::detail::shared_library> library;
  Api api{};
  std::optional<std::string> problem;
};

// Opens the file the user names in facts.variable, if set; else the soname (the loader's search:
// LD_LIBRARY_PATH, the cache, the system folders), then the folder the build found it in.
template <class Api, class Bind>
loaded_library<Api> load(const gpubench::detail::library_facts& facts, const std::string& build_dir,
                         Bind bind) {
  loaded_library<Api> out;
  std::string why_not;
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv(facts.variable.c_str())) {
    candidates.emplace_back(chosen);
  } else {
    candidates.push_back(facts.soname);
    if (!build_dir.empty()) candidates.push_back(build_dir + "/" + facts.soname);
  }
  out.library = gpubench::detail::shared_library::open(candidates, why_not);
  if (!out.library) {
    out.problem = gpubench::detail::library_not_loaded(facts, why_not);
    return out;
  }
  out.api.path = out.library->path();
  if (const std::optional<std::string> missing = bind(*out.library, out.api)) {
    out.problem = gpubench::detail::library_lacks_entry_point(facts, out.api.path, *missing);
    out.library.reset();
  }
  return out;
}

// The entry points, or skip_case with why the library is not there.
template <class Api>
const Api& api_or_skip(const loaded_library<Api>& state) {
  if (state.problem) throw skip_case(*state.problem);
  return state.api;
}

#define GPUBENCH_BIND_REQUIRED(name) \
  if (!library.bind(#name, api.name)) return std::string(#name);
#define GPUBENCH_BIND_OPTIONAL(name) (void)library.bind(#name, api.name);

}  // namespace

#if GPUBENCH_HAVE_CUDA
namespace {
const loaded_library<cublaslt_api>& cublaslt_state() {
  static const loaded_library<cublaslt_api> state =
      load<cublaslt_api>(gpubench::detail::cublaslt_facts(CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR),
                         GPUBENCH_CUDA_LIBRARY_DIR,
                         [](const gpubench::detail::shared_library& library,
                            cublaslt_api& api) -> std::optional<std::string> {
                           GPUBENCH_CUBLASLT_ENTRY_POINTS(GPUBENCH_BIND_REQUIRED)
                           return std::nullopt;
                         });
  return state;
}
}  // namespace

const cublaslt_api& cublaslt() {
  return api_or_skip(cublaslt_state());
}

std::optional<std::string> cublaslt_unavailable_reason() {
  return cublaslt_state().problem;
}
#endif

#if GPUBENCH_HAVE_NCCL
namespace {
std::atomic<bool> nccl_tried{false};

const loaded_library<nccl_api>& nccl_state() {
  static const loaded_library<nccl_api> state = [] {
    nccl_tried.store(true);
    auto out = load<nccl_api>(gpubench::detail::nccl_facts(NCCL_MAJOR, NCCL_MINOR),
                              GPUBENCH_NCCL_LIBRARY_DIR,
                              [](const gpubench::detail::shared_library& library,
                                 nccl_api& api) -> std::optional<std::string> {
                                GPUBENCH_NCCL_ENTRY_POINTS(GPUBENCH_BIND_REQUIRED)
                                GPUBENCH_NCCL_OPTIONAL_ENTRY_POINTS(GPUBENCH_BIND_OPTIONAL)
                                return std::nullopt;
                              });
    int code = 0;
    if (!out.problem && out.api.ncclGetVersion(&code) == ncclSuccess) {
      out.api.version = gpubench::detail::nccl_version_text(code);
    }
    return out;
  }();
  return state;
}
}  // namespace

const nccl_api& nccl() {
  return api_or_skip(nccl_state());
}

std::optional<std::string> nccl_unavailable_reason() {
  return nccl_state().problem;
}
#endif

std::string loaded_cublaslt_version() {
#if GPUBENCH_HAVE_CUDA
  const auto& state = cublaslt_state();
  if (!state.problem) return gpubench::detail::cublas_version_text(state.api.cublasLtGetVersion());
#endif
  return {};
}

std::string loaded_nccl_version() {
#if GPUBENCH_HAVE_NCCL
  return nccl_state().api.version;
#else
  return {};
#endif
}

std::string nccl_version_if_loaded() {
#if GPUBENCH_HAVE_NCCL
  if (nccl_tried.load()) return nccl_state().api.version;
#endif
  return {};
}

std::string cublaslt_status() {
#if GPUBENCH_HAVE_CUDA
  const auto& state = cublaslt_state();
  if (state.problem) return *state.problem;
  return loaded_cublaslt_version() + " (" + state.api.path + ")";
#else
  return "built without CUDA";
#endif
}

std::string nccl_status() {
#if GPUBENCH_HAVE_NCCL
  const auto& state = nccl_state();
  if (state.problem) return *state.problem;
  return state.api.version + " (" + state.api.path + ")";
#else
  return "built without NCCL";
#endif
}

}  // namespace gpubench::cuda
