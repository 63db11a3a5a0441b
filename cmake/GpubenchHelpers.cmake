# Warnings and defaults for gpubench's own targets: set per target, never through CMAKE_CXX_FLAGS.
# NO_FUZZ_COVERAGE: code no fuzz input reaches (the benchmarks' measuring loops). libFuzzer's
# coverage counters are shared bytes that every thread running a loop increments, so two threads
# in one instrumented loop fight over a cache line: cpu.augment ran at 0.62 of two cores' rate
# under the fuzz build, and a picture took up to 3x as long on two threads as on one.
function(gpubench_target_defaults target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_FUZZ_COVERAGE" "" "")
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror cross-execution-space-call -Xcompiler=-Wall>)
  if(GPUBENCH_SANITIZE)
    # AddressSanitizer and UndefinedBehaviorSanitizer; any finding aborts, so a test fails. Line
    # tables (-g1) are all a report's stack needs, and build faster than full debug info.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:
      -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1>)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
  if(GPUBENCH_FUZZ AND NOT arg_NO_FUZZ_COVERAGE)
    # Coverage for libFuzzer in the objects the fuzz targets link; their main comes from
    # -fsanitize=fuzzer on the fuzz targets alone (tests/fuzz/).
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  endif()
endfunction()
