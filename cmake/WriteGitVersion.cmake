# cmake -DSOURCE_DIR=... -DGIT_EXECUTABLE=... -DPROJECT_VERSION=... -DIN=... -DOUT=... -P WriteGitVersion.cmake
# Writes OUT from the template IN with CLUSTERSIM_GIT_COMMIT set to the checkout's commit;
# configure_file leaves OUT untouched when its text would not change.
set(CLUSTERSIM_GIT_COMMIT "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _commit)
    set(CLUSTERSIM_GIT_COMMIT "${_commit}")
    # 1 when tracked files differ from the commit (untracked files do not count).
    execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD --
                    WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE _dirty
                    OUTPUT_QUIET ERROR_QUIET)
    if(_dirty EQUAL 1)
      string(APPEND CLUSTERSIM_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
