# A job placed where pods end inside nodes starts on the range inside one pod (node 29).
# Invoked by ctest with -DEXE=... -DWORKDIR=... -DOUT=... (a scratch folder).
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${EXE}" run tests/scenarios/placement_trays.yaml --out "${OUT}"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
file(STRINGS "${OUT}/failures.csv" starts REGEX ",start,,c,")
if(NOT starts MATCHES ",start,,c,29,")
  message(FATAL_ERROR "job c started as '${starts}', expected on node 29")
endif()
