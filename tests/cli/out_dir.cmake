# --out writes results.json; a run with bad input (or a bad --trace path) writes nothing there.
# Invoked by ctest with -DEXE=... -DWORKDIR=... -DTMP=...
file(REMOVE_RECURSE "${TMP}")
execute_process(COMMAND "${EXE}" run --out "${TMP}/good" WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(NOT rc EQUAL 0 OR NOT EXISTS "${TMP}/good/results.json")
  message(FATAL_ERROR "run --out did not write results.json (exit ${rc})")
endif()
file(READ "${TMP}/good/results.json" doc)
string(JSON gpus GET "${doc}" inventory gpus)
if(NOT gpus EQUAL 128)
  message(FATAL_ERROR "results.json has inventory.gpus = ${gpus}, expected 128")
endif()
file(GLOB leftovers "${TMP}/good/*.tmp")
if(leftovers)
  message(FATAL_ERROR "temporary files left behind: ${leftovers}")
endif()
execute_process(COMMAND "${EXE}" run tests/config_errors/out_of_range.yaml --out "${TMP}/bad"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "bad input exited ${rc}, expected 2")
endif()
if(EXISTS "${TMP}/bad")
  message(FATAL_ERROR "bad input created ${TMP}/bad")
endif()
# A --trace path that cannot be written fails before --out is written.
execute_process(COMMAND "${EXE}" run tests/scenarios/sweep_small.yaml --out "${TMP}/trace" --trace /dev/null/step.json
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "a bad --trace path exited ${rc}, expected 2")
endif()
if(EXISTS "${TMP}/trace/results.json")
  message(FATAL_ERROR "a bad --trace path still wrote ${TMP}/trace/results.json")
endif()
# ... nor the --out folder it had created for them.
if(EXISTS "${TMP}/trace")
  message(FATAL_ERROR "a bad --trace path left the folder ${TMP}/trace behind")
endif()
# A bare file name is written in the working directory (it failed with "cannot create ''").
file(MAKE_DIRECTORY "${TMP}/cwd")
execute_process(COMMAND "${EXE}" run "${WORKDIR}/tests/scenarios/sweep_small.yaml" --trace step.json
                WORKING_DIRECTORY "${TMP}/cwd" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${TMP}/cwd/step.json")
  message(FATAL_ERROR "--trace step.json exited ${rc} and wrote nothing: ${err}")
endif()
# An earlier run's outputs that this run does not write go (a failures.csv beside a run
# without failures was read as this run's).
file(MAKE_DIRECTORY "${TMP}/reused")
file(WRITE "${TMP}/reused/failures.csv" "stale\n")
file(WRITE "${TMP}/reused/timeline.png" "stale\n")
file(WRITE "${TMP}/reused/notes.txt" "the user's\n")
execute_process(COMMAND "${EXE}" run tests/scenarios/sweep_small.yaml --out "${TMP}/reused"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR EXISTS "${TMP}/reused/failures.csv" OR EXISTS "${TMP}/reused/timeline.png")
  message(FATAL_ERROR "a reused --out folder kept an earlier run's outputs (exit ${rc}): ${err}")
endif()
if(NOT EXISTS "${TMP}/reused/notes.txt" OR NOT err MATCHES "removed failures.csv, timeline.png")
  message(FATAL_ERROR "a reused --out folder: the user's file went, or the removal was not said: ${err}")
endif()
