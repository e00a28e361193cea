# cmake -DSOURCE_DIR=... -DGIT_EXECUTABLE=... -DPROJECT_VERSION=... -DIN=... -DOUT=... -P WriteGitVersion.cmake
# Writes OUT from the template IN with CLUSTERSIM_GIT_COMMIT set to the checkout's commit;
# configure_file leaves OUT untouched when its text would not change. Only a checkout whose
# top is SOURCE_DIR counts: sources unpacked inside another repository are "unknown". Git
# runs without optional locks, so that a build never writes the index a user's git is using.
set(CLUSTERSIM_GIT_COMMIT "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks rev-parse --show-toplevel
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE _top OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _top)
    file(REAL_PATH "${_top}" _top)
    file(REAL_PATH "${SOURCE_DIR}" _source)
  endif()
  if(_rc EQUAL 0 AND _top AND _top STREQUAL _source)
    execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks rev-parse --short=12 HEAD
                    WORKING_DIRECTORY "${SOURCE_DIR}"
                    OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND _commit)
      set(CLUSTERSIM_GIT_COMMIT "${_commit}")
      # 1 when tracked files differ from the commit (untracked files do not count).
      execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks diff --quiet HEAD --
                      WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE _dirty
                      OUTPUT_QUIET ERROR_QUIET)
      if(_dirty EQUAL 1)
        string(APPEND CLUSTERSIM_GIT_COMMIT "-dirty")
      endif()
    endif()
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
