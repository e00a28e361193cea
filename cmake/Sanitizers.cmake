# clustersim::sanitizers: ASan + UBSan, linked to every target of ours when
# CLUSTERSIM_SANITIZE is ON (the `asan` preset). An INTERFACE target, not global flags.
option(CLUSTERSIM_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
add_library(clustersim_sanitizers INTERFACE)
add_library(clustersim::sanitizers ALIAS clustersim_sanitizers)
if(CLUSTERSIM_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(clustersim_sanitizers INTERFACE ${_san})
  target_link_options(clustersim_sanitizers INTERFACE ${_san})
endif()
