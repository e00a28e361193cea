#!/usr/bin/env bash
# Builds the project and the CUDA microbenchmarks, runs them on GPU 0 (collectives on every
# visible GPU), fits a calibration profile and writes into OUT_DIR:
#   results.jsonl  every measurement (JSON lines)
#   profile.json   the fitted profile (clustersim calibrate)
#   report.txt     the fit report: each point, its prediction and error
#   plots/         measured vs fitted PNGs, when a Python with matplotlib is found
#   build.log, <bench>.err
# At most 6 minutes in all: each step has its own timeout, cut to what is left of the
# 6 minutes (15 s kept for the fit); a step with no time left is skipped and said so.
# Usage: tools/microbench/device-check.sh OUT_DIR [--quick]
# With collectives measured on several GPUs, the catalog node type they ran on sets the
# network parameters: give it as CLUSTERSIM_NODE=dgx-h100 (calibrate --node) when the
# catalog has several nodes of the GPU.
set -uo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [--quick]" >&2
  exit 2
fi
out=$(mkdir -p "$1" && cd "$1" && pwd)
quick=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/device-check"
start=$SECONDS
deadline=$((start + 360 - 15))
jobs=$(nproc 2>/dev/null || echo 4)
# cap WANTED_S: the step's own timeout, or what is left before the deadline if less.
cap() {
  local left=$((deadline - SECONDS))
  echo $(( $1 < left ? $1 : left ))
}

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-check: no GPU visible (nvidia-smi -L failed); nothing measured" | tee "$out/report.txt" >&2
  exit 1
fi
nvidia-smi -L > "$out/gpus.txt"

echo "device-check: building into $build"
if ! timeout "$(cap 150)" bash -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCHMARKS=OFF && \
      cmake --build '$build' -j$jobs --target clustersim microbench_gemm microbench_memory microbench_launch \
      microbench_elementwise microbench_collectives" > "$out/build.log" 2>&1; then
  echo "device-check: build failed, see $out/build.log" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
echo "device-check: built in $((SECONDS - start)) s"

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
all_gpus=$(nvidia-smi -L | awk '{printf "%s%d", (NR > 1 ? "," : ""), NR - 1}')
run launch 30:0
run memory 60:0
run elementwise 40:0
run gemm 120:0
run collectives 45:"$all_gpus"

echo "device-check: fitting"
plot=()
for py in "${CLUSTERSIM_PYTHON:-}" /usr/bin/python3 python3; do
  if [[ -n "$py" ]] && "$py" -c "import matplotlib" >/dev/null 2>&1; then
    plot=(--plot "$out/plots")
    break
  fi
done
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
