# Warnings and defaults for gpubench's own targets: set per target, never through CMAKE_CXX_FLAGS.
function(gpubench_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror cross-execution-space-call -Xcompiler=-Wall>)
endfunction()
