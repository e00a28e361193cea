# `clustersim run --out DIR --trace FILE` writes every output or none: with a trace that
# cannot be written (here a directory), it exits 2 and leaves no results.json in DIR.
# Invoked by ctest with -DEXE=... -DWORKDIR=... -DOUT=... (a scratch folder).
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/trace_is_a_folder")
execute_process(COMMAND "${EXE}" run tests/scenarios/sweep_small.yaml --out "${OUT}/results"
                        --trace "${OUT}/trace_is_a_folder"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}: ${err}")
endif()
if(NOT err MATCHES "is a directory")
  message(FATAL_ERROR "expected 'is a directory' in: ${err}")
endif()
if(EXISTS "${OUT}/results/results.json")
  message(FATAL_ERROR "results.json was written although the run failed")
endif()

# Standard output that cannot be written (a full disk): exit 2 and say so, not exit 0 with a
# truncated file.
if(EXISTS /dev/full)
  execute_process(COMMAND "${EXE}" run --format json WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc
                  OUTPUT_FILE /dev/full ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "stdout on /dev/full: expected exit 2, got ${rc}: ${err}")
  endif()
  if(NOT err MATCHES "cannot write the output to standard output")
    message(FATAL_ERROR "stdout on /dev/full: expected an error naming standard output in: ${err}")
  endif()
endif()

# An output onto an input of the same command (--trace onto the scenario): refused, and the
# input kept.
file(COPY "${WORKDIR}/tests/scenarios/sweep_small.yaml" DESTINATION "${OUT}/inputs")
file(READ "${OUT}/inputs/sweep_small.yaml" before)
execute_process(COMMAND "${EXE}" run "${OUT}/inputs/sweep_small.yaml" --trace "${OUT}/inputs/sweep_small.yaml"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "it is an input of this command")
  message(FATAL_ERROR "--trace onto the scenario: expected exit 2 naming the input, got ${rc}: ${err}")
endif()
file(READ "${OUT}/inputs/sweep_small.yaml" after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "--trace onto the scenario overwrote it")
endif()
