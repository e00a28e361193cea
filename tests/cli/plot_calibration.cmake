# calibrate --plot writes one PNG per group of points, and the CSV data behind them.
# Invoked by ctest with -DEXE=... -DWORKDIR=... -DTMP=... -DPYTHON=... (a Python with matplotlib).
file(REMOVE_RECURSE "${TMP}")
set(ENV{CLUSTERSIM_PYTHON} "${PYTHON}")
execute_process(COMMAND "${EXE}" calibrate tests/calibration/synthetic_h100_results.jsonl
                        tests/calibration/synthetic_h100_attention.jsonl
                        --nccl-tests tests/calibration/all_reduce_perf_2x8_h100.log --node a3-mega -o "${TMP}/profile.json"
                        --plot "${TMP}/plots"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate --plot exited ${rc}:\n${out}\n${err}")
endif()
if(NOT out MATCHES "plots written to")
  message(FATAL_ERROR "calibrate --plot did not say where the plots are:\n${out}")
endif()
foreach(f points.csv curves.csv)
  if(NOT EXISTS "${TMP}/plots/${f}")
    message(FATAL_ERROR "calibrate --plot did not write ${f}")
  endif()
endforeach()
# The collective, network-model, memory (fitted and cross-check), GEMM and attention groups
# each get a PNG (the network model, what simulations run, was skipped; attention was), which
# opens with the PNG signature.
foreach(png collective_all_reduce_2x8 network_all_reduce_2x8 memory_d2d_copy memory_triad gemm_bf16
        attention_bf16_forward attention_bf16_backward)
  set(f "${TMP}/plots/${png}.png")
  if(NOT EXISTS "${f}")
    file(GLOB written "${TMP}/plots/*")
    message(FATAL_ERROR "calibrate --plot did not write ${png}.png; wrote: ${written}")
  endif()
  file(READ "${f}" head LIMIT 8 HEX)
  if(NOT head STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${png}.png does not begin with the PNG signature: ${head}")
  endif()
  file(SIZE "${f}" size)
  if(size LESS 10000)
    message(FATAL_ERROR "${png}.png is only ${size} bytes: an empty plot?")
  endif()
endforeach()
# Without a Python that has matplotlib: exit 2, the package named, nothing written.
file(REMOVE_RECURSE "${TMP}/none")
set(ENV{CLUSTERSIM_PYTHON} "${TMP}/no-such-python")
execute_process(COMMAND "${EXE}" calibrate --nccl-tests tests/calibration/all_reduce_perf_1x8_a100.log
                        --gpu a100-sxm-40gb -o "${TMP}/none/profile.json" --plot "${TMP}/none/plots"
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "python3-matplotlib" OR EXISTS "${TMP}/none")
  message(FATAL_ERROR "calibrate --plot without matplotlib: exit ${rc}, stderr:\n${err}")
endif()
