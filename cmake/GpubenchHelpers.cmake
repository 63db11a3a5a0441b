# Warnings and defaults for gpubench's own targets: set per target, never through CMAKE_CXX_FLAGS.
# NO_FUZZ_COVERAGE: code no fuzz input reaches (the benchmarks' measuring loops). libFuzzer's
# coverage counters are shared bytes that every thread running a loop increments, so two threads
# in one instrumented loop fight over a cache line: cpu.augment ran at 0.62 of two cores' rate
# under the fuzz build, and a picture took up to 3x as long on two threads as on one.
# TEST_CODE: a test program's own files. No fuzz input reaches them (no coverage counters), and
# they are assertions, not measuring loops: -O1 after the build type's -O3 compiles the Catch2
# expansions in about two thirds of the time (gcc: 18 s against 27 s for one batch of CLI tests;
# clang with ASan: 41 s against 54 s without the counters), and CI builds them twice.
# NOT_OURS: test code that is not ours (Catch2's runner, compiled from its single header): not
# instrumented by the sanitizers, which look for our faults; it was 54 s of the sanitizer build.
function(gpubench_target_defaults target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_FUZZ_COVERAGE;TEST_CODE;NOT_OURS" "" "")
  if(arg_NOT_OURS)
    set(arg_TEST_CODE ON)
  endif()
  if(arg_TEST_CODE)
    set(arg_NO_FUZZ_COVERAGE ON)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
  if(GPUBENCH_UNITY)
    # Batches of 8 files: each file of a library includes nlohmann/json and instantiates the
    # same templates, and in a batch they are parsed and compiled (and instrumented, in the
    # sanitizer build) once. A target with its own batching sets its size after this.
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror cross-execution-space-call -Xcompiler=-Wall>)
  if(GPUBENCH_SANITIZE AND NOT arg_NOT_OURS)
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
