# Records the git commit the build came from, for results' provenance.
# Read at configure time; "unknown" outside a git checkout.
find_package(Git QUIET)
set(CLUSTERSIM_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
                  WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _commit)
    set(CLUSTERSIM_GIT_COMMIT "${_commit}")
  endif()
endif()
