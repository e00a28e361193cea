# Ctrl-C during a sweep: the rows written stand, stderr says how to resume, and the process
# ends by the signal as it would have (a shell sees 130). Invoked by ctest with -DEXE=...
# -DWORKDIR=... -DOUT=... -DTIMEOUT=... (coreutils' timeout, which sends the SIGINT and, with
# --preserve-status, exits as the sweep did).
file(REMOVE_RECURSE "${OUT}")
# A grid far too long to finish in the 8 s before the interrupt (each point a 16,384-GPU
# step), and long enough after the sweep's start (loading the scenario, checking the 10,000
# values; seconds under the sanitizers) for rows to be written.
execute_process(COMMAND "${TIMEOUT}" --preserve-status -s INT 8 "${EXE}" sweep scenarios/llama3-405b-16k.yaml
                        --set network.model=analytical --param fabric.ecmp_seed=0:9999:+1 -j 1 -q --out "${OUT}"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(rows 0)
if(EXISTS "${OUT}/sweep.jsonl")
  file(STRINGS "${OUT}/sweep.jsonl" lines)
  list(LENGTH lines rows)
endif()
if(rows EQUAL 0)
  message(FATAL_ERROR "no row was written before the interrupt (rc ${rc}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "sweep interrupted: the rows written in .* stand; run the same command again to resume")
  message(FATAL_ERROR "an interrupted sweep should say how to resume (rc ${rc}):\n${out}\n${err}")
endif()
if(NOT rc STREQUAL "130")
  message(FATAL_ERROR "an interrupted sweep should end by its SIGINT (exit status 130), got ${rc}:\n${out}\n${err}")
endif()
