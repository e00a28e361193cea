# clustersim sweep: the same files, byte for byte but for the measured wall_s, whatever the
# threads or ranks and after a resume from a kill (rows in point order, not completion
# order); error rows. Invoked by ctest with -DEXE=... -DWORKDIR=... -DTMP=...
# -DMODE=jobs|resume|error|mpi [-DMPIEXEC=... -DMPIFLAGS=a|b].
cmake_minimum_required(VERSION 3.25)  # if(IN_LIST) in script mode
set(scenario tests/scenarios/sweep_small.yaml)
# 3 x 4 x 2 = 24 points; tp 3 does not divide the model's heads and most (tp, dp) pairs do
# not multiply to the job's 64 GPUs: error rows.
set(params --param cluster.nodes=8:32:x2 --param "workload.jobs[0].parallelism.tp=1,2,3,4"
           --param "workload.jobs[0].parallelism.dp=16,32")
set(points 24)
file(REMOVE_RECURSE "${TMP}")

function(sweep out)
  execute_process(COMMAND "${EXE}" sweep ${scenario} ${params} --out "${TMP}/${out}" --quiet ${ARGN}
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sweep into ${out} exited ${rc}\n${stdout}\n${err}")
  endif()
  set(stdout "${stdout}" PARENT_SCOPE)
endfunction()

# A file with each wall_s value (the CSV's last column, the JSONL's "wall_s" key) replaced by
# W: the seconds a point took are measured, not computed, and are the only bytes that may
# differ between two runs of the same sweep.
function(without_wall_s out_var file)
  file(READ "${TMP}/${file}" text)
  if(file MATCHES "\\.csv$")
    string(REGEX REPLACE ",[^,\n]*\n" ",W\n" text "${text}")
  else()
    string(REGEX REPLACE "\"wall_s\":[-+.0-9eE]+" "\"wall_s\":W" text "${text}")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Both files of `dir` equal those of ref but for wall_s, and the CSV has every point once, in
# point order.
function(same_files dir)
  foreach(name sweep.csv sweep.jsonl)
    without_wall_s(a "ref/${name}")
    without_wall_s(b "${dir}/${name}")
    if(a STREQUAL b)
      continue()
    endif()
    # The first line that differs (";" would split CMake lists).
    string(REPLACE ";" ":" a "${a}")
    string(REPLACE ";" ":" b "${b}")
    string(REPLACE "\n" ";" a "${a}")
    string(REPLACE "\n" ";" b "${b}")
    list(LENGTH a na)
    list(LENGTH b nb)
    set(k 0)
    while(k LESS na AND k LESS nb)
      list(GET a ${k} want)
      list(GET b ${k} got)
      if(NOT want STREQUAL got)
        break()
      endif()
      math(EXPR k "${k} + 1")
    endwhile()
    math(EXPR k "${k} + 1")
    message(FATAL_ERROR "${dir}/${name} differs from ref/${name} (${MODE}; wall_s aside) at line ${k} "
                        "(of ${na} and ${nb}):\n--- ref:\n${want}\n--- ${dir}:\n${got}")
  endforeach()
  file(STRINGS "${TMP}/${dir}/sweep.csv" lines)
  list(POP_FRONT lines)
  set(want 0)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^[0-9]+" p "${line}")
    if(NOT p STREQUAL want)
      message(FATAL_ERROR "${dir}/sweep.csv: row ${want} is point '${p}': rows are not in point order")
    endif()
    math(EXPR want "${want} + 1")
  endforeach()
  if(NOT want EQUAL points)
    message(FATAL_ERROR "${dir}/sweep.csv has ${want} rows, expected ${points}")
  endif()
endfunction()

function(check_jsonl dir)
  file(STRINGS "${TMP}/${dir}/sweep.jsonl" lines)
  set(seen "")
  foreach(line IN LISTS lines)
    string(JSON p GET "${line}" point)
    if(p IN_LIST seen)
      message(FATAL_ERROR "${dir}/sweep.jsonl: point ${p} is there twice")
    endif()
    list(APPEND seen ${p})
  endforeach()
  list(LENGTH seen n)
  if(NOT n EQUAL points)
    message(FATAL_ERROR "${dir}/sweep.jsonl has ${n} points, expected ${points}")
  endif()
endfunction()

sweep(ref -j 1)
check_jsonl(ref)
file(READ "${TMP}/ref/sweep.csv" ref_text)

if(MODE STREQUAL "jobs")
  sweep(two -j 2)
elseif(MODE STREQUAL "mpi")
  string(REPLACE "|" ";" flags "${MPIFLAGS}")
  execute_process(COMMAND "${MPIEXEC}" ${flags} -n 2 "${EXE}" sweep ${scenario} ${params} --out "${TMP}/two" --quiet
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun sweep exited ${rc}\n${stdout}\n${err}")
  endif()
  string(FIND "${stdout}" "on each of 2 MPI ranks" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the sweep did not run on 2 MPI ranks:\n${stdout}")
  endif()
elseif(MODE STREQUAL "resume")
  # A kill after 7 records, finished out of point order as on threads, and in the middle of
  # the 8th: a partial line in both files.
  file(STRINGS "${TMP}/ref/sweep.jsonl" jl)
  set(head "")
  foreach(i 20 3 11 0 17 6 9)
    list(GET jl ${i} line)
    list(APPEND head "${line}")
  endforeach()
  list(GET jl 7 eighth)
  string(SUBSTRING "${eighth}" 0 40 partial)
  list(JOIN head "\n" text)
  file(WRITE "${TMP}/two/sweep.jsonl" "${text}\n${partial}")
  string(SUBSTRING "${ref_text}" 0 300 csv_partial)
  file(WRITE "${TMP}/two/sweep.csv" "${csv_partial}")
  file(COPY "${TMP}/ref/sweep.base.json" DESTINATION "${TMP}/two")  # written as the first run starts
  # Resuming with another base (here the seed) is refused: its points would be mixed in.
  file(COPY "${TMP}/two/" DESTINATION "${TMP}/other")
  execute_process(COMMAND "${EXE}" sweep ${scenario} ${params} --out "${TMP}/other" --quiet --seed 8
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "its 7 finished points were computed from another base scenario: seed 1 then, 8 now")
    message(FATAL_ERROR "a resume with another seed should be refused (exit 2), got ${rc}:\n${out}\n${err}")
  endif()
  file(READ "${TMP}/other/sweep.jsonl" other_after)
  if(NOT other_after STREQUAL "${text}\n${partial}")
    message(FATAL_ERROR "a refused resume rewrote sweep.jsonl")
  endif()
  # A grid grown by a value of its slowest axis keeps the finished points' indexes: they are
  # reused, and the change of grid is said (it was silent).
  file(COPY "${TMP}/two/" DESTINATION "${TMP}/grown")
  execute_process(COMMAND "${EXE}" sweep ${scenario} --param cluster.nodes=8:64:x2
                          --param "workload.jobs[0].parallelism.tp=1,2,3,4" --param "workload.jobs[0].parallelism.dp=16,32"
                          --out "${TMP}/grown" --quiet
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "32 points \\(7 resumed, 25 run\\)"
     OR NOT err MATCHES "note: the grid was cluster.nodes=8,16,32 x ")
    message(FATAL_ERROR "a grown grid should reuse the 7 finished points and say the grid changed, got ${rc}:\n${out}\n${err}")
  endif()
  # Grown by a value of its fastest axis, the grid numbers the finished points anew: they are
  # found by their values (the resume was refused, "not this sweep's"), written under their
  # new numbers, and the files are those of a fresh sweep of the grown grid.
  file(COPY "${TMP}/two/" DESTINATION "${TMP}/grown_fast")
  set(fast_params --param cluster.nodes=8:32:x2 --param "workload.jobs[0].parallelism.tp=1,2,3,4"
                  --param "workload.jobs[0].parallelism.dp=16,32,64")
  foreach(dir grown_fast fresh_fast)
    execute_process(COMMAND "${EXE}" sweep ${scenario} ${fast_params} --out "${TMP}/${dir}" --quiet -j 1
                    WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(dir STREQUAL "grown_fast" AND (NOT rc EQUAL 0 OR NOT out MATCHES "36 points \\(7 resumed, 29 run\\)"
                                      OR NOT err MATCHES "7 finished points of this grid reused, [0-9]+ of them under a new point number"))
      message(FATAL_ERROR "a grid grown on its fastest axis should reuse the 7 finished points, got ${rc}:\n${out}\n${err}")
    endif()
  endforeach()
  foreach(name sweep.csv sweep.jsonl)
    without_wall_s(a "fresh_fast/${name}")
    without_wall_s(b "grown_fast/${name}")
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "grown_fast/${name} differs from a fresh sweep of the same grid (wall_s aside)")
    endif()
  endforeach()
  sweep(two -j 2)
  string(FIND "${stdout}" "(7 resumed, 17 run)" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the resumed sweep did not reuse the 7 finished points:\n${stdout}")
  endif()
  # Once more: nothing is left to do and nothing changes.
  file(READ "${TMP}/two/sweep.jsonl" before)
  sweep(two -j 2)
  string(FIND "${stdout}" "nothing left to do" at)
  file(READ "${TMP}/two/sweep.jsonl" after)
  if(at EQUAL -1 OR NOT before STREQUAL after)
    message(FATAL_ERROR "a finished sweep ran again or changed:\n${stdout}")
  endif()
elseif(MODE STREQUAL "error")
  # Point 4 is tp 3, dp 16 on 8 nodes: an error row with the diagnostics, not a crash.
  file(STRINGS "${TMP}/ref/sweep.jsonl" jl)
  foreach(line IN LISTS jl)
    string(JSON p GET "${line}" point)
    if(p EQUAL 4)
      string(JSON status GET "${line}" status)
      string(JSON error GET "${line}" error)
      if(NOT status STREQUAL "error" OR NOT error MATCHES "tp x cp x pp x dp = 3 x 1 x 2 x 16 = 96")
        message(FATAL_ERROR "point 4 should be an error row with the parallelism diagnostic: ${line}")
      endif()
    endif()
    if(p EQUAL 2)
      string(JSON status GET "${line}" status)
      string(JSON mfu GET "${line}" results mfu)
      if(NOT status STREQUAL "ok" OR mfu LESS_EQUAL 0)
        message(FATAL_ERROR "point 2 should have run: ${line}")
      endif()
    endif()
  endforeach()
  return()
endif()

check_jsonl(two)
same_files(two)
