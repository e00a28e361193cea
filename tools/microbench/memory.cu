// memory: achieved bandwidth of HBM (device-to-device copy, STREAM-style triad) and of the
// host link (pinned host-to-device and device-to-host copies), over sizes.
// Records: {"record":"memory","kind":"d2d_copy"|"triad"|"h2d"|"d2h","bytes":B,"moved_bytes":M,
// "time_s":..,"gbps":..}; bytes is the buffer size, moved_bytes what crossed HBM or the link
// (copy: read + write = 2B; triad a = b + s c: 3B; h2d/d2h: B). gbps = moved_bytes / time_s / 1e9.
//
// Usage: memory [--quick]
#include <cstring>

#include "common.cuh"

namespace {

__global__ void triad(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float s,
                      std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    a[i] = b[i] + s * c[i];
  }
}

void report(const char* kind, std::size_t bytes, double moved, const microbench::Stats& t) {
  std::printf("{\"record\":\"memory\",\"kind\":\"%s\",\"bytes\":%zu,\"moved_bytes\":%.0f,", kind, bytes, moved);
  microbench::print_stats(t);
  std::printf(",\"gbps\":%.3f}\n", moved / t.median / 1e9);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int sms = microbench::print_device("memory");
  const std::size_t max_bytes = quick ? (64u << 20) : (std::size_t{4} << 30);
  const std::size_t max_host = quick ? (64u << 20) : (std::size_t{1} << 30);
  float *a, *b, *c, *host;
  MB_CHECK(cudaMalloc(&a, max_bytes));
  MB_CHECK(cudaMalloc(&b, max_bytes));
  MB_CHECK(cudaMalloc(&c, max_bytes));
  MB_CHECK(cudaMemset(b, 0, max_bytes));
  MB_CHECK(cudaMemset(c, 0, max_bytes));
  MB_CHECK(cudaMallocHost(&host, max_host));
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreate(&stream));
  // One kind at a time over all its sizes, so that the fit report shows each as one series.
  for (std::size_t bytes = 1u << 20; bytes <= max_bytes; bytes *= 2) {
    report("d2d_copy", bytes, 2.0 * double(bytes), microbench::time_it(stream, [&](cudaStream_t s) {
             MB_CHECK(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, s));
           }));
  }
  for (std::size_t bytes = 1u << 20; bytes <= max_bytes; bytes *= 2) {
    const std::size_t n = bytes / sizeof(float);
    report("triad", bytes, 3.0 * double(bytes), microbench::time_it(stream, [&](cudaStream_t s) {
             triad<<<sms * 8, 256, 0, s>>>(a, b, c, 3.0f, n);
           }));
  }
  for (std::size_t bytes = 1u << 20; bytes <= max_host; bytes *= 4) {
    report("h2d", bytes, double(bytes), microbench::time_it(stream, [&](cudaStream_t s) {
             MB_CHECK(cudaMemcpyAsync(a, host, bytes, cudaMemcpyHostToDevice, s));
           }));
  }
  for (std::size_t bytes = 1u << 20; bytes <= max_host; bytes *= 4) {
    report("d2h", bytes, double(bytes), microbench::time_it(stream, [&](cudaStream_t s) {
             MB_CHECK(cudaMemcpyAsync(host, a, bytes, cudaMemcpyDeviceToHost, s));
           }));
  }
  MB_CHECK(cudaStreamDestroy(stream));
  cudaFreeHost(host);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
