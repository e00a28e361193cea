# `clustersim calibrate --plot DIR` whose plot script fails leaves nothing: no profile, no
# folder it made, and in a folder that was there only what it held before (a PNG the script
# wrote before failing was left, and the profile was written before the plots).
# Invoked by ctest with -DEXE=... -DWORKDIR=... -DOUT=... (a scratch folder).
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/existing")
file(WRITE "${OUT}/existing/keep.txt" "kept\n")
# A stand-in for Python: it passes the matplotlib probe (-c ...), then writes a PNG and fails.
file(WRITE "${OUT}/fakepy" "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then exit 0; fi\ntouch \"$4/half.png\"; exit 1\n")
file(CHMOD "${OUT}/fakepy" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
foreach(dir existing made/below)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy
                          "${EXE}" calibrate tests/calibration/synthetic_h100_results.jsonl -o "${OUT}/profile.json"
                          --plot "${OUT}/${dir}"
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "--plot ${dir}: expected exit 2, got ${rc}: ${err}")
  endif()
  if(EXISTS "${OUT}/profile.json")
    message(FATAL_ERROR "--plot ${dir}: the profile was written although the plots failed")
  endif()
endforeach()
file(GLOB left RELATIVE "${OUT}/existing" "${OUT}/existing/*")
if(NOT left STREQUAL "keep.txt")
  message(FATAL_ERROR "the existing folder holds '${left}', not just keep.txt")
endif()
if(EXISTS "${OUT}/made")
  message(FATAL_ERROR "the folders calibrate made are left")
endif()

# `clustersim run --out DIR --plot` whose plots fail writes nothing either: no results.json
# (it stayed, with exit 2), no plot the script wrote, no folder the run made, nothing printed.
file(WRITE "${OUT}/fakepy_run" "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then exit 0; fi\ntouch \"$3/breakdown.png\"; exit 1\n")
file(CHMOD "${OUT}/fakepy_run" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy_run
                        "${EXE}" run tests/scenarios/sweep_small.yaml --out "${OUT}/run/made" --plot
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "run --plot: expected exit 2, got ${rc}: ${err}")
endif()
if(EXISTS "${OUT}/run")
  message(FATAL_ERROR "run --plot: a failed plot left ${OUT}/run behind")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "run --plot: a failed plot still printed the results: ${out}")
endif()
# ... and in a folder that held an earlier run's outputs, they stay as they were.
file(MAKE_DIRECTORY "${OUT}/earlier")
file(WRITE "${OUT}/earlier/results.json" "earlier\n")
file(WRITE "${OUT}/earlier/timeline.png" "earlier\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy_run
                        "${EXE}" run tests/scenarios/sweep_small.yaml --out "${OUT}/earlier" --plot
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
file(READ "${OUT}/earlier/results.json" results)
file(GLOB left RELATIVE "${OUT}/earlier" "${OUT}/earlier/*" "${OUT}/earlier/.*")
list(SORT left)
if(NOT rc EQUAL 2 OR NOT results STREQUAL "earlier\n" OR NOT "${left}" STREQUAL "results.json;timeline.png")
  message(FATAL_ERROR "run --plot into an earlier run's folder: exit ${rc}, results.json '${results}', left '${left}': ${err}")
endif()

# A folder where a plot would go (breakdown.png): refused before anything is written (the
# plot's move failed unseen, exit 0, the other outputs written).
# (A stand-in for Python that would draw nothing: the folder is found before it runs.)
file(MAKE_DIRECTORY "${OUT}/blocked/breakdown.png")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy_run
                        "${EXE}" run scenarios/llama3-405b-16k.yaml --out "${OUT}/blocked" --plot
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
file(GLOB left RELATIVE "${OUT}/blocked" "${OUT}/blocked/*" "${OUT}/blocked/.*")
if(NOT rc EQUAL 2 OR NOT "${left}" STREQUAL "breakdown.png" OR NOT err MATCHES "breakdown.png': it is a folder")
  message(FATAL_ERROR "run --plot onto a folder named breakdown.png: exit ${rc}, left '${left}': ${err}")
endif()
# A folder named like a plot this run does not draw (timeline.png: no failures) is no
# obstacle: the run goes on (its plot script, the stand-in, then fails: exit 2 all the same,
# but not for the folder).
file(MAKE_DIRECTORY "${OUT}/other/timeline.png")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy_run
                        "${EXE}" run scenarios/llama3-405b-16k.yaml --out "${OUT}/other" --plot
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(err MATCHES "it is a folder")
  message(FATAL_ERROR "run --plot refused a folder for a plot it does not draw: ${err}")
endif()

# `clustersim compare --plot DIR` whose plot fails: no CSV, no half-drawn PNG, no folder it
# made; a folder that was there keeps only what it held.
file(WRITE "${OUT}/fakepy_cmp" "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then exit 0; fi\ntouch \"$5\" \"$5.tmp.png\"; exit 1\n")
file(CHMOD "${OUT}/fakepy_cmp" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
foreach(dir existing made/below)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env CLUSTERSIM_PYTHON=${OUT}/fakepy_cmp
                          "${EXE}" compare scenarios/quickstart.yaml scenarios/fat-tree-k16.yaml --plot "${OUT}/${dir}"
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "compare --plot ${dir}: expected exit 2, got ${rc}: ${err}")
  endif()
endforeach()
file(GLOB left RELATIVE "${OUT}/existing" "${OUT}/existing/*" "${OUT}/existing/.*")
if(NOT left STREQUAL "keep.txt")
  message(FATAL_ERROR "compare --plot: the existing folder holds '${left}', not just keep.txt")
endif()
if(EXISTS "${OUT}/made")
  message(FATAL_ERROR "compare --plot: the folders it made are left")
endif()
