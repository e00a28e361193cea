# clustersim::warnings: the warning set our own code builds clean with, as errors.
# An INTERFACE target, linked by our targets only: third-party headers are included
# as SYSTEM by their imported targets and are not held to it.
add_library(clustersim_warnings INTERFACE)
add_library(clustersim::warnings ALIAS clustersim_warnings)
target_compile_options(clustersim_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                 -Wsign-conversion -Wnon-virtual-dtor -Werror>)
