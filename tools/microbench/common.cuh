// Shared helpers of the microbenchmarks: error checks, the device line, CUDA-event timing.
//
// Every program writes JSON lines on stdout: first one {"record":"device",...} line (device
// name, SM count, clocks, driver and runtime versions), then one line per measurement
// ({"record":"gemm",...}, "memory", "launch", "elementwise", "collective") or a
// {"record":"skipped",...} line saying why a part did not run. `clustersim calibrate` reads
// them (models/calibration/measurements.hpp documents the fields).
//
// Timing: each measurement runs `warmup` times untimed, then `repeats` batches, each timed
// with a pair of CUDA events on the stream around `calls` back-to-back calls; a repeat's time
// is its batch's over `calls`. The record holds the median (time_s), the minimum and maximum
// and `calls`. `calls` is sized from one call timed alone (an upper bound of a call's time)
// for a batch of about 200 us or more, at most 1000 calls. Back to back, the host issues the
// next call while the GPU runs the last, as a training step's host runs ahead: a call costs
// the larger of its kernel's time with the gap between kernels and the host's cost of issuing
// it (one call alone between two events paid both, one after the other). For most kernels
// the GPU is the slower side; for a very small cuBLASLt GEMM the host can be, and its time is
// then the host's issue rate, which the compute model charges as launch_overhead (the rate of
// back-to-back empty kernels, launch.cu) plus the kernel. Repeats are capped so that one
// point takes about `budget_s`.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define MB_CHECK(call)                                                                         \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

namespace microbench {

struct Stats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  int repeats = 0;
  int calls = 1;  ///< back-to-back calls per timed batch
};

/// Prints the device line for `bench` and returns the device's SM count. Without a usable
/// GPU (no driver: CUDA says "driver version is insufficient"; no device) it says so in
/// plain words and exits with status 2, before measuring anything.
inline int print_device(const char* bench, int device = 0) {
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices <= device) {
    std::fprintf(stderr,
                 "%s: no usable NVIDIA GPU here (%s): the microbenchmarks measure a GPU; run them where one and "
                 "its driver are installed (tools/microbench/device-check.sh OUT_DIR)\n",
                 bench, probe != cudaSuccess ? cudaGetErrorString(probe) : "no CUDA device");
    std::exit(2);
  }
  cudaDeviceProp p{};
  MB_CHECK(cudaGetDeviceProperties(&p, device));
  int driver = 0, runtime = 0, sm_clock = 0, mem_clock = 0, mem_bus = 0;
  MB_CHECK(cudaDriverGetVersion(&driver));
  MB_CHECK(cudaRuntimeGetVersion(&runtime));
  MB_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, device));
  MB_CHECK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, device));
  MB_CHECK(cudaDeviceGetAttribute(&mem_bus, cudaDevAttrGlobalMemoryBusWidth, device));
  int count = 0;
  MB_CHECK(cudaGetDeviceCount(&count));
  std::printf(
      "{\"record\":\"device\",\"bench\":\"%s\",\"name\":\"%s\",\"sm_count\":%d,\"compute_capability\":\"%d.%d\","
      "\"sm_clock_mhz\":%.0f,\"mem_clock_mhz\":%.0f,\"mem_bus_bits\":%d,\"memory_bytes\":%zu,"
      "\"driver_version\":%d,\"cuda_version\":%d,\"device_count\":%d}\n",
      bench, p.name, p.multiProcessorCount, p.major, p.minor, sm_clock / 1000.0, mem_clock / 1000.0, mem_bus,
      p.totalGlobalMem, driver, runtime, count);
  std::fflush(stdout);
  return p.multiProcessorCount;
}

/// Seconds `calls` back-to-back calls of `run(stream)` take, between events `start` and `stop`.
template <class F>
double batch_seconds(cudaStream_t stream, F& run, int calls, cudaEvent_t start, cudaEvent_t stop) {
  MB_CHECK(cudaEventRecord(start, stream));
  for (int c = 0; c < calls; ++c) run(stream);
  MB_CHECK(cudaEventRecord(stop, stream));
  MB_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

/// Times `run(stream)`: `warmup` untimed calls, then, when `warmup_s` > 0, more untimed calls
/// until they have kept the GPU busy `warmup_s` seconds (a GPU at its power limit lowers its
/// clocks within about a second of heavy load: measured after it, a point is what the GPU
/// holds under that load, not a boost it keeps for a moment), then up to `max_repeats` timed
/// ones (at least 3), stopping early once `budget_s` seconds have been measured. Seconds per call.
template <class F>
Stats time_it(cudaStream_t stream, F&& run, int warmup = 3, int max_repeats = 25, double budget_s = 0.5,
              double warmup_s = 0.0) {
  cudaEvent_t start, stop;
  MB_CHECK(cudaEventCreate(&start));
  MB_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) run(stream);
  MB_CHECK(cudaStreamSynchronize(stream));
  for (double warm = 0.0, batch = 1; warm < warmup_s;) {
    const double s = batch_seconds(stream, run, static_cast<int>(batch), start, stop);
    warm += s;
    // Batches of about 50 ms (at most 10,000 calls): the host stays ahead of the GPU.
    batch = std::clamp(batch * 0.05 / std::max(1e-6, s), 1.0, 10000.0);
  }
  // One call, timed alone (host issue cost included: an upper bound), sizes the batch.
  const double one_s = batch_seconds(stream, run, 1, start, stop);
  constexpr double kBatchS = 200e-6;
  const int calls = std::clamp(static_cast<int>(kBatchS / std::max(1e-9, one_s)) + 1, 1, 1000);
  std::vector<double> t;
  double total = 0.0;
  for (int i = 0; i < max_repeats && (i < 3 || total < budget_s); ++i) {
    const double s = batch_seconds(stream, run, calls, start, stop);
    t.push_back(s / calls);
    total += s;
  }
  MB_CHECK(cudaEventDestroy(start));
  MB_CHECK(cudaEventDestroy(stop));
  std::sort(t.begin(), t.end());
  Stats s;
  s.median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  s.min = t.front();
  s.max = t.back();
  s.repeats = static_cast<int>(t.size());
  s.calls = calls;
  return s;
}

inline void print_stats(const Stats& s) {
  std::printf("\"time_s\":%.9e,\"min_s\":%.9e,\"max_s\":%.9e,\"repeats\":%d,\"calls\":%d", s.median, s.min, s.max,
              s.repeats, s.calls);
}

}  // namespace microbench
