#!/usr/bin/env bash
# Builds the project and the CUDA microbenchmarks, runs them on GPU 0 (collectives on every
# visible GPU), fits a calibration profile and writes into OUT_DIR:
#   results.jsonl  every measurement (JSON lines)
#   profile.json   the fitted profile (clustersim calibrate)
#   report.txt     the fit report: each point, its prediction and error
#   plots/         measured vs fitted PNGs, when a Python with matplotlib is found
#   build.log, <bench>.err, environment.txt (GPU, driver, tools found)
# At most 6 minutes in all: each step has its own timeout, cut to what is left of the
# 6 minutes (15 s kept for the fit); a step with no time left is skipped and said so.
# The microbenchmarks are built first; clustersim, for the fit, builds in the background
# while they measure.
# Usage: tools/microbench/device-check.sh OUT_DIR [--quick]
# The build goes to build/device-check in the source tree, or to $CLUSTERSIM_BUILD_DIR.
# With collectives measured on several GPUs, the catalog node type they ran on sets the
# network parameters: give it as CLUSTERSIM_NODE=dgx-h100 (calibrate --node) when the
# catalog has several nodes of the GPU.
set -uo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [--quick]" >&2
  exit 2
fi
if ! out=$(mkdir -p "$1" && cd "$1" && pwd) || [[ -z "$out" ]]; then
  echo "device-check: cannot create the output folder '$1'" >&2
  exit 2
fi
quick=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CLUSTERSIM_BUILD_DIR:-"$root/build/device-check"}
start=$SECONDS
deadline=$((start + 360 - 15))
jobs=$(nproc 2>/dev/null || echo 4)
# cap WANTED_S: the step's own timeout, or what is left before the deadline if less.
cap() {
  local left=$((deadline - SECONDS))
  echo $(( $1 < left ? $1 : left ))
}

if ! command -v nvidia-smi >/dev/null; then
  echo "device-check: no nvidia-smi (no NVIDIA driver installed); nothing measured" | tee "$out/report.txt" >&2
  exit 1
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-check: no GPU visible (nvidia-smi -L failed); nothing measured" | tee "$out/report.txt" >&2
  exit 1
fi
nvidia-smi -L > "$out/gpus.txt"

# nvcc where the toolkit installs it, when it is not on the PATH (CMake looks there for it).
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null; then  # CMake takes $CUDACXX first
  echo "device-check: no CUDA compiler (nvcc not on the PATH nor in /usr/local/cuda/bin): install the CUDA" \
       "toolkit; nothing measured" | tee "$out/report.txt" >&2
  exit 1
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; command -v nvcc ninja cmake; } \
  > "$out/environment.txt" 2>&1
echo "device-check: $(head -1 "$out/environment.txt")"

# The microbenchmarks first (a few nvcc files): measuring starts within a minute. clustersim
# (the fit) builds in the background while the GPU is measured (it takes minutes of CPU),
# after the launch-latency benchmark, which the build's load on the host would disturb.
echo "device-check: building the microbenchmarks into $build"
if ! timeout "$(cap 120)" bash -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCHMARKS=OFF && \
      cmake --build '$build' -j$jobs --target microbench_gemm microbench_memory microbench_launch \
      microbench_elementwise microbench_collectives" > "$out/build.log" 2>&1; then
  echo "device-check: build failed, see $out/build.log" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
echo "device-check: microbenchmarks built in $((SECONDS - start)) s"

: > "$out/results.jsonl"
run() {  # name timeout_s:gpus
  local t0=$SECONDS limit
  limit=$(cap "${2%%:*}")
  if (( limit < 1 )); then
    echo "device-check: $1 skipped: the 6 minutes are spent" | tee "$out/$1.err" >&2
    return
  fi
  if CUDA_VISIBLE_DEVICES=${2#*:} timeout "$limit" "$build/tools/microbench/$1" $quick \
      >> "$out/results.jsonl" 2> "$out/$1.err"; then
    echo "device-check: $1 done in $((SECONDS - t0)) s"
  else
    echo "device-check: $1 failed or timed out after $((SECONDS - t0)) s (see $out/$1.err)" >&2
  fi
}
# GPU indices as CUDA numbers them (nvidia-smi -L also lists MIG instances, on lines of their own).
all_gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
run launch 30:0
# Leave two cores to the benchmarks' host threads.
build_jobs=$(( jobs > 4 ? jobs - 2 : 2 ))
nice -n 10 cmake --build "$build" -j"$build_jobs" --target clustersim >> "$out/build.log" 2>&1 &
builder=$!
run memory 60:0
run elementwise 40:0
run gemm 120:0
run collectives 45:"$all_gpus"
echo "device-check: waiting for the clustersim build"
left=$(cap 300)
waited=0
while kill -0 "$builder" 2>/dev/null && (( waited < left )); do
  sleep 1
  waited=$((waited + 1))
done
if kill -0 "$builder" 2>/dev/null; then
  kill "$builder" 2>/dev/null
  echo "device-check: clustersim did not build within the 6 minutes; results are in $out/results.jsonl," \
       "fit them elsewhere with clustersim calibrate" >&2
  exit 1
fi
if ! wait "$builder"; then
  echo "device-check: clustersim build failed, see $out/build.log; results are in $out/results.jsonl" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
echo "device-check: clustersim built at $((SECONDS - start)) s"

echo "device-check: fitting"
plot=()
if [[ -n "${CLUSTERSIM_PYTHON:-}" ]]; then
  # calibrate --plot uses that interpreter and no other: check it, not a fallback.
  "$CLUSTERSIM_PYTHON" -c "import matplotlib" >/dev/null 2>&1 && plot=(--plot "$out/plots")
else
  for py in /usr/bin/python3 python3; do
    if "$py" -c "import matplotlib" >/dev/null 2>&1; then
      plot=(--plot "$out/plots")
      break
    fi
  done
fi
[[ ${#plot[@]} -eq 0 ]] && echo "device-check: no Python with matplotlib (python3-matplotlib); no plots"
node=()
[[ -n "${CLUSTERSIM_NODE:-}" ]] && node=(--node "$CLUSTERSIM_NODE")
timeout 15 "$build/tools/clustersim/clustersim" calibrate "$out/results.jsonl" -o "$out/profile.json" "${plot[@]}" "${node[@]}" \
  --source "measured by tools/microbench/device-check.sh on $(head -1 "$out/gpus.txt"), $(date -u +%Y-%m-%d)" \
  > "$out/report.txt" 2>&1
rc=$?
cat "$out/report.txt"
echo "device-check: finished in $((SECONDS - start)) s (calibrate exit code $rc); results in $out"
exit $rc
