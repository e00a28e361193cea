// launch: what one kernel costs besides its work.
// Records {"record":"launch","kind":K,"kernels":N,"time_s":per-kernel seconds,...}:
//   "stream"     N = 1000 empty kernels back to back on a stream, timed by CUDA events: the
//                per-kernel issue cost when the GPU is kept fed (what the compute model's
//                launch_overhead charges each kernel of a step)
//   "graph"      the same N kernels captured in a CUDA graph and launched at once
//   "roundtrip"  one launch followed by cudaStreamSynchronize, host clock: launch plus the
//                wait for completion (N = 1)
//
// Usage: launch [--quick]
#include <chrono>
#include <cstring>

#include "common.cuh"

namespace {

__global__ void empty_kernel() {}

void report(const char* kind, int kernels, const microbench::Stats& per_kernel) {
  std::printf("{\"record\":\"launch\",\"kind\":\"%s\",\"kernels\":%d,", kind, kernels);
  microbench::print_stats(per_kernel);
  std::printf("}\n");
  std::fflush(stdout);
}

microbench::Stats per(microbench::Stats s, int n) {
  s.median /= n;
  s.min /= n;
  s.max /= n;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  microbench::print_device("launch");
  const int n = quick ? 100 : 1000;
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreate(&stream));
  report("stream", n, per(microbench::time_it(stream, [&](cudaStream_t s) {
                             for (int i = 0; i < n; ++i) empty_kernel<<<1, 1, 0, s>>>();
                           }), n));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  MB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  MB_CHECK(cudaStreamEndCapture(stream, &graph));
  MB_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  report("graph", n, per(microbench::time_it(stream, [&](cudaStream_t s) { MB_CHECK(cudaGraphLaunch(exec, s)); }), n));

  // Round trip: host clock around launch + synchronize, median of 200.
  std::vector<double> t;
  for (int i = 0; i < 220; ++i) {
    const auto start = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1, 0, stream>>>();
    MB_CHECK(cudaStreamSynchronize(stream));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= 20) t.push_back(s);
  }
  std::sort(t.begin(), t.end());
  microbench::Stats rt{t[t.size() / 2], t.front(), t.back(), static_cast<int>(t.size())};
  report("roundtrip", 1, rt);

  MB_CHECK(cudaGraphExecDestroy(exec));
  MB_CHECK(cudaGraphDestroy(graph));
  MB_CHECK(cudaStreamDestroy(stream));
  return 0;
}
