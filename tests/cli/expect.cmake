# Runs one clustersim command and compares its exit code, and optionally its stderr or
# stdout, with expectations. Invoked by ctest as:
#   cmake -DEXE=... -DARGS="a|b|c" -DRC=2 [-DSTDERR_FILE=f] [-DSTDERR_CONTAINS=s] [-DSTDOUT_FILE=f]
#         [-DSTDOUT_CONTAINS=s] [-DSTDOUT_LACKS=s]
#         [-DFRESH_DIR=d] -DWORKDIR=... -P expect.cmake
# FRESH_DIR: a folder removed first (a command's --out, so that an earlier run's files, of
# another build, are not resumed from).
string(REPLACE "|" ";" ARGS "${ARGS}")
if(DEFINED FRESH_DIR)
  file(REMOVE_RECURSE "${FRESH_DIR}")
endif()
execute_process(COMMAND "${EXE}" ${ARGS}
                WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(failed OFF)
if(NOT rc STREQUAL RC)
  message(SEND_ERROR "exit code ${rc}, expected ${RC}\nstderr:\n${err}")
  set(failed ON)
endif()
if(DEFINED STDERR_FILE)
  file(READ "${STDERR_FILE}" want)
  if(NOT err STREQUAL want)
    message(SEND_ERROR "stderr differs from ${STDERR_FILE}\n--- got:\n${err}--- expected:\n${want}")
  endif()
endif()
if(DEFINED STDOUT_FILE)
  file(READ "${STDOUT_FILE}" want)
  if(NOT out STREQUAL want)
    message(SEND_ERROR "stdout differs from ${STDOUT_FILE} (regenerate it if the change is intended)")
  endif()
endif()
foreach(stream out err)
  string(TOUPPER "STD${stream}_CONTAINS" want)
  if(DEFINED ${want})
    string(FIND "${${stream}}" "${${want}}" at)
    if(at EQUAL -1)
      message(SEND_ERROR "std${stream} lacks '${${want}}':\n${${stream}}")
    endif()
  endif()
endforeach()
if(DEFINED STDOUT_LACKS)
  string(FIND "${out}" "${STDOUT_LACKS}" at)
  if(NOT at EQUAL -1)
    message(SEND_ERROR "stdout holds '${STDOUT_LACKS}', which it should not:\n${out}")
  endif()
endif()
