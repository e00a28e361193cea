#!/usr/bin/env bash
# Builds the project and the CUDA microbenchmarks, runs them on GPU 0 (collectives on every
# visible GPU), fits a calibration profile and writes into OUT_DIR:
#   results.jsonl  every measurement (JSON lines); fused attention too (attention.py), where a
#                  Python with PyTorch is found
#   sustained.jsonl  one bf16 GEMM held for a minute, a record a second with the SM clock,
#                  power and temperature (gemm --sustained; not fitted: read it against the
#                  sweep's figure for the same shape)
#   profile.json   the fitted profile (clustersim calibrate)
#   report.txt     the fit report: each point, its prediction and error
#   plots/         measured vs fitted PNGs, when a Python with matplotlib is found
#   build.log, <bench>.err, environment.txt (GPU, driver, tools found)
# At most 9 1/2 minutes in all: each step has its own timeout, cut to what is left of them
# (15 s kept for the fit); a step with no time left is skipped and said so.
# The microbenchmarks are a CMake project of their own (tools/microbench) that needs only the
# CUDA toolkit, built first for the GPU present; clustersim, for the fit, builds in the
# background while they measure, where its libraries (README: tools/install-deps.sh) are
# installed. Where they are not, the measurements are kept and the script says how to fit
# them elsewhere (exit 3).
# Usage: tools/microbench/device-check.sh OUT_DIR [--quick]
# The build goes to build/device-check in the source tree, or to $CLUSTERSIM_BUILD_DIR.
# The microbenchmarks are built for the GPU present (CUDA architecture 'native'), or for
# $CLUSTERSIM_CUDA_ARCHITECTURES (e.g. "80;90").
# Exit: 0 measured and fitted; 1 nothing measured (no driver, GPU or nvcc; build failed) or
# the fit failed; 2 bad arguments; 3 measured, not fitted (clustersim could not be built).
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
deadline=$((start + 570 - 15))
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
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; command -v nvcc ninja cmake; nvcc --version | tail -1; } \
  > "$out/environment.txt" 2>&1
echo "device-check: $(head -1 "$out/environment.txt")"

# The microbenchmarks first (a few nvcc files, for this GPU alone): measuring starts within a
# minute. clustersim (the fit) builds in the background while the GPU is measured (it takes
# minutes of CPU), after the launch-latency benchmark, which the build's load on the host
# would disturb.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
bench_dir="$build/microbench"
echo "device-check: building the microbenchmarks into $bench_dir"
if ! timeout "$(cap 120)" bash -c "cmake -S '$root/tools/microbench' -B '$bench_dir' ${generator[*]} \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${CLUSTERSIM_CUDA_ARCHITECTURES:-native} && cmake --build '$bench_dir' -j$jobs" \
      > "$out/build.log" 2>&1; then
  echo "device-check: build failed, see $out/build.log" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
echo "device-check: microbenchmarks built in $((SECONDS - start)) s"

: > "$out/results.jsonl"
run() {  # name timeout_s:gpus [results file [arguments]]
  local t0=$SECONDS limit name=$1 into=${3:-results.jsonl}
  limit=$(cap "${2%%:*}")
  if (( limit < 1 )); then
    echo "device-check: $name skipped: the 9 1/2 minutes are spent" | tee "$out/$name.err" >&2
    return
  fi
  local args=("${@:4}")
  [[ ${#args[@]} -eq 0 && -n "$quick" ]] && args=("$quick")
  [[ $into != results.jsonl ]] && name=${into%.jsonl}
  if CUDA_VISIBLE_DEVICES=${2#*:} timeout "$limit" "$bench_dir/$1" "${args[@]}" \
      >> "$out/$into" 2> "$out/$name.err"; then
    echo "device-check: $name done in $((SECONDS - t0)) s"
  else
    echo "device-check: $name failed or timed out after $((SECONDS - t0)) s (see $out/$name.err)" >&2
  fi
}
# GPU indices as CUDA numbers them (nvidia-smi -L also lists MIG instances, on lines of their own).
all_gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
run launch 30:0
# Leave two cores to the benchmarks' host threads. Configuring fails at once where
# clustersim's libraries are missing: then nothing is built and nothing fitted.
build_jobs=$(( jobs > 4 ? jobs - 2 : 2 ))
setsid nice -n 10 bash -c "cmake -S '$root' -B '$build' ${generator[*]} -DCMAKE_BUILD_TYPE=Release \
    -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCHMARKS=OFF -DCLUSTERSIM_BUILD_MICROBENCH=OFF && \
    cmake --build '$build' -j$build_jobs --target clustersim" > "$out/clustersim-build.log" 2>&1 &
builder=$!
run memory 60:0
run elementwise 40:0
run gemm 330:0
run collectives 45:"$all_gpus"
: > "$out/sustained.jsonl"
if [[ -z "$quick" ]]; then
  run gemm 70:0 sustained.jsonl --sustained 60
else
  run gemm 20:0 sustained.jsonl --sustained 5
fi
sustained_summary() {  # the first and last windows of sustained.jsonl, in words
  local first last
  first=$(grep -m1 '"record":"sustained"' "$out/sustained.jsonl")
  last=$(grep '"record":"sustained"' "$out/sustained.jsonl" | tail -1)
  [[ -z "$first" ]] && return
  field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" <<< "$2"; }
  echo "device-check: sustained bf16 8192^3: $(field tflops "$first") TFLOP/s at $(field sm_clock_mhz "$first") MHz," \
       "$(field power_w "$first") W, $(field temperature_c "$first") C in the first second;" \
       "$(field tflops "$last") TFLOP/s at $(field sm_clock_mhz "$last") MHz, $(field power_w "$last") W," \
       "$(field temperature_c "$last") C at $(field t_s "$last") s"
}
sustained_summary
# Fused attention through PyTorch (cuDNN's kernel, as training runs it), where a Python with
# PyTorch is found ($CLUSTERSIM_PYTHON first).
torch_py=""
for py in ${CLUSTERSIM_PYTHON:-} python3; do
  if "$py" -c "import torch" >/dev/null 2>&1; then torch_py=$py; break; fi
done
if [[ -n "$torch_py" ]]; then
  t0=$SECONDS
  limit=$(cap 90)
  if (( limit >= 1 )) && CUDA_VISIBLE_DEVICES=0 timeout "$limit" "$torch_py" "$root/tools/microbench/attention.py" $quick \
      >> "$out/results.jsonl" 2> "$out/attention.err"; then
    echo "device-check: attention done in $((SECONDS - t0)) s"
  else
    echo "device-check: attention failed, timed out or had no time left after $((SECONDS - t0)) s (see $out/attention.err)" >&2
  fi
else
  echo "device-check: no Python with PyTorch: attention not measured (the profile keeps the built-in attention figures)" \
    | tee "$out/attention.err" >&2
fi
echo "device-check: waiting for the clustersim build"
left=$(cap 300)
waited=0
while kill -0 "$builder" 2>/dev/null && (( waited < left )); do
  sleep 1
  waited=$((waited + 1))
done
fit_elsewhere="fit them where clustersim builds: clustersim calibrate $out/results.jsonl $out/sustained.jsonl -o profile.json"
if kill -0 "$builder" 2>/dev/null; then
  kill -- -"$builder" 2>/dev/null || kill "$builder" 2>/dev/null
  echo "device-check: clustersim did not build within the 9 1/2 minutes; the measurements are in" \
       "$out/results.jsonl: $fit_elsewhere" >&2
  exit 3
fi
if ! wait "$builder"; then
  echo "device-check: clustersim could not be built here (its libraries missing? see $out/clustersim-build.log);" \
       "the measurements are in $out/results.jsonl: $fit_elsewhere" >&2
  grep -m3 -i "error" "$out/clustersim-build.log" >&2
  exit 3
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
held=()
grep -q '"record":"sustained"' "$out/sustained.jsonl" 2>/dev/null && held=("$out/sustained.jsonl")
timeout 15 "$build/tools/clustersim/clustersim" calibrate "$out/results.jsonl" "${held[@]}" -o "$out/profile.json" "${plot[@]}" "${node[@]}" \
  --source "measured by tools/microbench/device-check.sh on $(head -1 "$out/gpus.txt"), $(date -u +%Y-%m-%d)" \
  > "$out/report.txt" 2>&1
rc=$?
cat "$out/report.txt"
echo "device-check: finished in $((SECONDS - start)) s (calibrate exit code $rc); results in $out"
exit $rc
