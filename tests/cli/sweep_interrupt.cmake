# Ctrl-C during a sweep: the rows written stand, stderr says how to resume, and the process
# ends by the signal as it would have (a shell sees 130). Invoked by ctest with -DEXE=...
# -DWORKDIR=... -DOUT=... -DTIMEOUT=... (coreutils' timeout, which sends the SIGINT).
file(REMOVE_RECURSE "${OUT}")
# A grid far too long to finish in the 4 s before the interrupt (each point a 16,384-GPU step).
execute_process(COMMAND "${TIMEOUT}" -s INT 4 "${EXE}" sweep scenarios/llama3-405b-16k.yaml
                        --set network.model=analytical --param fabric.ecmp_seed=0:9999:+1 -j 1 -q --out "${OUT}"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT EXISTS "${OUT}/sweep.csv")
  message(FATAL_ERROR "the sweep had not started its points when interrupted (rc ${rc}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "sweep interrupted: the rows written in .* stand; run the same command again to resume")
  message(FATAL_ERROR "an interrupted sweep should say how to resume (rc ${rc}):\n${out}\n${err}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "an interrupted sweep exited 0:\n${out}")
endif()
