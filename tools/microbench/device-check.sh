#!/usr/bin/env bash
# Builds the project and the CUDA microbenchmarks, runs them on GPU 0 (collectives on every
# visible GPU), fits a calibration profile and writes into OUT_DIR:
#   results.jsonl  every measurement (JSON lines)
#   profile.json   the fitted profile (clustersim calibrate)
#   report.txt     the fit report: each point, its prediction and error
#   build.log, <bench>.err
# At most 6 minutes in all: each step has its own timeout.
# Usage: tools/microbench/device-check.sh OUT_DIR [--quick]
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
jobs=$(nproc 2>/dev/null || echo 4)

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-check: no GPU visible (nvidia-smi -L failed); nothing measured" | tee "$out/report.txt" >&2
  exit 1
fi
nvidia-smi -L > "$out/gpus.txt"

echo "device-check: building into $build"
if ! timeout 150 bash -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCHMARKS=OFF && \
      cmake --build '$build' -j$jobs --target clustersim microbench_gemm microbench_memory microbench_launch \
      microbench_elementwise microbench_collectives" > "$out/build.log" 2>&1; then
  echo "device-check: build failed, see $out/build.log" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
echo "device-check: built in $((SECONDS - start)) s"

: > "$out/results.jsonl"
run() {  # name timeout_s
  local t0=$SECONDS
  if CUDA_VISIBLE_DEVICES=${2#*:} timeout "${2%%:*}" "$build/tools/microbench/$1" $quick \
      >> "$out/results.jsonl" 2> "$out/$1.err"; then
    echo "device-check: $1 done in $((SECONDS - t0)) s"
  else
    echo "device-check: $1 failed or timed out after $((SECONDS - t0)) s (see $out/$1.err)" >&2
  fi
}
all_gpus=$(nvidia-smi -L | awk '{printf "%s%d", NR > 1 ? "," : "", NR - 1}')
run launch 30:0
run memory 60:0
run elementwise 40:0
run gemm 120:0
run collectives 45:"$all_gpus"

echo "device-check: fitting"
"$build/tools/clustersim/clustersim" calibrate "$out/results.jsonl" -o "$out/profile.json" \
  --source "measured by tools/microbench/device-check.sh on $(head -1 "$out/gpus.txt"), $(date -u +%Y-%m-%d)" \
  > "$out/report.txt" 2>&1
rc=$?
cat "$out/report.txt"
echo "device-check: finished in $((SECONDS - start)) s (calibrate exit code $rc); results in $out"
exit $rc
