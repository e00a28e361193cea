# The plots of a run (MODE=run), of a comparison and of a Pareto front (MODE=compare), by
# tools/plot.py, each PNG beside its CSV. Invoked by ctest with -DEXE=... -DWORKDIR=... -DTMP=...
# -DPYTHON=... (a Python with matplotlib) -DMODE=run|compare.
file(REMOVE_RECURSE "${TMP}")
set(ENV{CLUSTERSIM_PYTHON} "${PYTHON}")

function(expect_png f)
  if(NOT EXISTS "${f}")
    get_filename_component(dir "${f}" DIRECTORY)
    file(GLOB written "${dir}/*")
    message(FATAL_ERROR "${f} was not written; the folder has: ${written}")
  endif()
  file(READ "${f}" head LIMIT 8 HEX)
  if(NOT head STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${f} does not begin with the PNG signature: ${head}")
  endif()
  file(SIZE "${f}" size)
  if(size LESS 10000)
    message(FATAL_ERROR "${f} is only ${size} bytes: an empty plot?")
  endif()
endfunction()

function(run_ok what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} exited ${rc}:\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "run")
  # A run with a job and failures: the step breakdown, the failure timeline, the GPU heat map.
  run_ok("run --plot" "${EXE}" run scenarios/llama3-405b-54d.yaml --set simulation.replications=2 --out "${TMP}/run"
         --plot)
  if(NOT out MATCHES "plots written to .*breakdown.png, timeline.png, gpu_health.png \\(the breakdown's data: breakdown.csv\\)")
    message(FATAL_ERROR "run --plot did not name its plots:\n${out}")
  endif()
  foreach(png breakdown timeline gpu_health)
    expect_png("${TMP}/run/${png}.png")
  endforeach()
  file(STRINGS "${TMP}/run/breakdown.csv" lines)
  list(GET lines 0 header)
  if(NOT header STREQUAL "design,job,step_time_s,compute_s,tp_s,cp_s,ep_s,pp_s,dp_s,bubble_s,optimizer_s,contention_s")
    message(FATAL_ERROR "breakdown.csv header is '${header}'")
  endif()
  list(GET lines 1 row)
  if(NOT row MATCHES "^llama3-405b-54d,pretrain,[0-9.e+-]+,")
    message(FATAL_ERROR "breakdown.csv row is '${row}'")
  endif()

  # A run without a job draws no breakdown: an earlier breakdown.csv there is removed with
  # the earlier breakdown.png (it was kept, as if this run's).
  run_ok("run --plot without a job" "${EXE}" run scenarios/llama3-405b-54d.yaml --set simulation.replications=1
         --set workload.jobs=~ --out "${TMP}/run" --plot)
  if(EXISTS "${TMP}/run/breakdown.csv" OR EXISTS "${TMP}/run/breakdown.png")
    message(FATAL_ERROR "run --plot without a job kept the earlier breakdown")
  endif()

  # --plot needs --out.
  execute_process(COMMAND "${EXE}" run scenarios/llama3-405b-54d.yaml --plot WORKING_DIRECTORY "${WORKDIR}"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "give --out DIR")
    message(FATAL_ERROR "run --plot without --out: exit ${rc}, stderr:\n${err}")
  endif()
  return()
endif()

# Three fabrics for one job: the comparison bars and the breakdown per design. With --format
# json, stdout stays the JSON document (the plots print nothing there).
run_ok("compare --plot" "${EXE}" compare tests/scenarios/sweep_small.yaml tests/scenarios/small_fat_tree.yaml
       tests/scenarios/small_dragonfly.yaml --plot "${TMP}/compare" --format json)
string(JSON n_designs LENGTH "${out}" scenarios)
if(NOT n_designs EQUAL 3)
  message(FATAL_ERROR "compare --format json --plot: stdout is not the comparison document:\n${out}")
endif()
foreach(png compare breakdown)
  expect_png("${TMP}/compare/${png}.png")
endforeach()
file(STRINGS "${TMP}/compare/breakdown.csv" lines)
list(LENGTH lines n)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "compare's breakdown.csv has ${n} lines, expected a header and 3 designs")
endif()
file(READ "${TMP}/compare/compare.csv" csv)
if(NOT csv MATCHES "^metric,unit,better,sweep-small,small-fat-tree,small-dragonfly,best")
  message(FATAL_ERROR "compare.csv: ${csv}")
endif()

# The first column of each line of a front CSV, the header's included.
function(front_designs file out)
  file(STRINGS "${file}" front)
  set(designs "")
  foreach(line IN LISTS front)
    string(REGEX MATCH "^[^,]*" d "${line}")
    list(APPEND designs "${d}")
  endforeach()
  set(${out} "${designs}" PARENT_SCOPE)
endfunction()

# The Pareto front of a generic CSV: time against cost, both lower is better. Of the ten
# rows with numbers (j is an error row), e is beaten by d, g by f, b by c, i by h; k ties
# with c on both axes, so neither beats the other and both are on the front (k was dropped).
run_ok("plot.py pareto" "${PYTHON}" tools/plot.py pareto tests/plots/pareto_points.csv --label nodes
       --label topology -o "${TMP}/pareto/pareto.png")
expect_png("${TMP}/pareto/pareto.png")
front_designs("${TMP}/pareto/pareto_front.csv" designs)
if(NOT designs STREQUAL "design;f;d;c;k;a;h")
  message(FATAL_ERROR "Pareto front is '${designs}', expected f, d, c, k, a, h")
endif()
execute_process(COMMAND "${PYTHON}" tools/plot.py pareto tests/plots/pareto_points.csv --y cost -o "${TMP}/x.png"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no column 'cost'; the columns are design, nodes")
  message(FATAL_ERROR "pareto with an unknown column: exit ${rc}, stderr:\n${err}")
endif()

# A plan's CSV marks its own front (within --capex-budget, here without f, whose capex is
# over it): on the plan's axes that is the front drawn (f was drawn on it, computed afresh).
run_ok("plot.py pareto on a plan" "${PYTHON}" tools/plot.py pareto tests/plots/pareto_plan.csv --x time_to_train_s
       --y total_cost_usd -o "${TMP}/pareto_plan/pareto.png")
front_designs("${TMP}/pareto_plan/pareto_front.csv" designs)
if(NOT designs STREQUAL "point;d;c;a;h")
  message(FATAL_ERROR "the plan's Pareto front is '${designs}', expected d, c, a, h (its pareto column)")
endif()
# A CSV of one's own with a column named pareto (0s, not a plan's true/false) is no plan:
# its front is computed (it was read as the plan's, and came out empty).
run_ok("plot.py pareto with a pareto column of one's own" "${PYTHON}" tools/plot.py pareto
       tests/plots/pareto_own_column.csv -o "${TMP}/pareto_own/pareto.png")
file(STRINGS "${TMP}/pareto_own/pareto_front.csv" front)
list(LENGTH front rows)
if(NOT rows EQUAL 6)
  message(FATAL_ERROR "the front of a CSV with its own pareto column has ${rows} lines, expected a header and f, d, c, a, h")
endif()
# A file whose rows do not match its header (plan.json given for plan.csv): an error, exit 2
# (the message itself failed with a Python traceback).
execute_process(COMMAND "${PYTHON}" tools/plot.py pareto tests/plots/ragged.csv --x a --y b -o "${TMP}/y.png"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "row 2 does not have the header's 2 fields")
  message(FATAL_ERROR "pareto on a ragged file: exit ${rc}, stderr:\n${err}")
endif()

# The heat map's layout: one pixel per GPU, a node's GPUs in a row, a rack's nodes stacked,
# racks left to right with one-pixel gaps.
run_ok("heat map layout" "${PYTHON}" -c "
import sys; sys.path.insert(0, 'tools'); import plot, math
g, racks, across = plot.heatmap_grid([(n, l, n * 8 + l) for n in range(10) for l in range(8)], 10, 8, 4, True)
assert (racks, across) == (3, 2), (racks, across)
assert g[0, 0] == 0 and g[0, 7] == 7 and g[1, 0] == 8 and g[3, 7] == 31    # rack 0: nodes 0-3, top to bottom
assert math.isnan(g[0, 8]) and g[0, 9] == 32 and g[3, 16] == 63               # a gap, then rack 1 (nodes 4-7)
assert all(math.isnan(v) for v in g[4]) and g[5, 0] == 64 and g[6, 7] == 79   # a gap row, then rack 2
assert int((~__import__('numpy').isnan(g)).sum()) == 80                       # every GPU once
")
