# Same scenario and seed give byte-identical result documents outside "run_info"; another
# seed changes the recorded seed, and where the run draws random numbers (failures, repairs,
# ECMP hashing), its results. Invoked by ctest with -DEXE=... -DWORKDIR=...
function(run_json out_var scenario seed)
  execute_process(COMMAND "${EXE}" run ${scenario} --seed ${seed} --format json ${ARGN}
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${scenario} failed (${rc}): ${err}")
  endif()
  string(JSON stripped REMOVE "${out}" run_info)
  set(${out_var} "${stripped}" PARENT_SCOPE)
endfunction()

# The quickstart: no random draw, the seed is only recorded.
run_json(first scenarios/quickstart.yaml 7)
run_json(second scenarios/quickstart.yaml 7)
run_json(third scenarios/quickstart.yaml 8)
if(NOT first STREQUAL second)
  message(FATAL_ERROR "two runs of the quickstart with seed 7 differ outside run_info")
endif()
string(JSON seed GET "${third}" seed)
if(NOT seed EQUAL 8)
  message(FATAL_ERROR "seed 8 recorded as ${seed}")
endif()

# Runs that draw: 54 days of failures and repairs on 16,384 GPUs (5 replications), and a
# training step on the flow-level network (jobs starting mid-node). Seed 7 twice: the same
# bytes; the failures at seed 8: other failure counts.
foreach(case "scenarios/llama3-405b-54d.yaml|--set|simulation.replications=5"
             "tests/scenarios/mid_node_jobs.yaml|--set|network.model=flow"
             "scenarios/shared-cluster.yaml|--set|simulation.replications=2")
  string(REPLACE "|" ";" argv "${case}")
  list(POP_FRONT argv scenario)
  run_json(a ${scenario} 7 ${argv})
  run_json(b ${scenario} 7 ${argv})
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "two runs of ${scenario} ${argv} with seed 7 differ outside run_info")
  endif()
endforeach()
run_json(a scenarios/llama3-405b-54d.yaml 7 --set simulation.replications=5)
run_json(c scenarios/llama3-405b-54d.yaml 8 --set simulation.replications=5)
string(JSON failures_7 GET "${a}" failures)
string(JSON failures_8 GET "${c}" failures)
if(failures_7 STREQUAL failures_8)
  message(FATAL_ERROR "seeds 7 and 8 gave the same failures: the seed does not reach the draws")
endif()
