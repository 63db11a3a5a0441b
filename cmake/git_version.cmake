# Run at build time (not configure time) so the recorded commit is never stale.
# Inputs: SOURCE_DIR, OUTPUT.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE GPUBENCH_GIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR GPUBENCH_GIT STREQUAL "")
  set(GPUBENCH_GIT "unknown")
endif()
set(_content "// Generated at build time by cmake/git_version.cmake.\n#include \"gpubench/harness/build_info.hpp\"\nnamespace gpubench {\nconst char* git_describe() noexcept { return \"${GPUBENCH_GIT}\"; }\n}  // namespace gpubench\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" _old)
endif()
if(NOT "${_old}" STREQUAL "${_content}")
  file(WRITE "${OUTPUT}" "${_content}")
endif()
