// elementwise: memory-bound kernels shaped like a transformer's softmax and layer norm, over
// sizes. One block per row of `cols` bf16 values; softmax: row max, sum of exponentials,
// normalize; layernorm: mean, variance, normalize. Each reads its input once and writes its
// output once (bytes = 2 x rows x cols x 2), as the compute model's memory-bound term assumes.
// Record: {"record":"elementwise","kind":"softmax"|"layernorm","rows":R,"cols":C,"bytes":B,"time_s":..,"gbps":..}
//
// Usage: elementwise [--quick]
#include <cstring>

#include <cuda_bf16.h>

#include "common.cuh"

namespace {

constexpr int kThreads = 256;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float shared[kThreads / 32];
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  float r = is_max ? -INFINITY : 0.0f;
  for (int i = 0; i < kThreads / 32; ++i) r = is_max ? fmaxf(r, shared[i]) : r + shared[i];
  __syncthreads();
  return r;
}

__global__ void softmax(const __nv_bfloat16* in, __nv_bfloat16* out, int cols) {
  const __nv_bfloat16* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  __nv_bfloat16* dst = out + static_cast<std::size_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, __bfloat162float(row[i]));
  m = block_reduce(m, true);
  float s = 0.0f;
  for (int i = threadIdx.x; i < cols; i += kThreads) s += __expf(__bfloat162float(row[i]) - m);
  s = block_reduce(s, false);
  for (int i = threadIdx.x; i < cols; i += kThreads) dst[i] = __float2bfloat16(__expf(__bfloat162float(row[i]) - m) / s);
}

__global__ void layernorm(const __nv_bfloat16* in, __nv_bfloat16* out, int cols) {
  const __nv_bfloat16* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  __nv_bfloat16* dst = out + static_cast<std::size_t>(blockIdx.x) * cols;
  float s = 0.0f, sq = 0.0f;
  for (int i = threadIdx.x; i < cols; i += kThreads) {
    const float v = __bfloat162float(row[i]);
    s += v;
    sq += v * v;
  }
  s = block_reduce(s, false);
  sq = block_reduce(sq, false);
  const float mean = s / cols;
  const float inv = rsqrtf(fmaxf(sq / cols - mean * mean, 0.0f) + 1e-5f);
  for (int i = threadIdx.x; i < cols; i += kThreads) dst[i] = __float2bfloat16((__bfloat162float(row[i]) - mean) * inv);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  microbench::print_device("elementwise");
  const std::size_t max_elems = quick ? (std::size_t{1} << 22) : (std::size_t{1} << 29);
  __nv_bfloat16 *in, *out;
  MB_CHECK(cudaMalloc(&in, max_elems * 2));
  MB_CHECK(cudaMalloc(&out, max_elems * 2));
  MB_CHECK(cudaMemset(in, 0, max_elems * 2));
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreate(&stream));
  for (int cols : {1024, 4096, 8192}) {
    for (std::size_t rows = 256; rows * cols <= max_elems; rows *= 4) {
      for (int kind = 0; kind < 2; ++kind) {
        const microbench::Stats t = microbench::time_it(stream, [&](cudaStream_t s) {
          if (kind == 0) softmax<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(in, out, cols);
          else layernorm<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(in, out, cols);
        });
        const double bytes = 2.0 * double(rows) * cols * 2.0;
        std::printf("{\"record\":\"elementwise\",\"kind\":\"%s\",\"rows\":%zu,\"cols\":%d,\"bytes\":%.0f,",
                    kind == 0 ? "softmax" : "layernorm", rows, cols, bytes);
        microbench::print_stats(t);
        std::printf(",\"gbps\":%.3f}\n", bytes / t.median / 1e9);
        std::fflush(stdout);
      }
    }
  }
  MB_CHECK(cudaStreamDestroy(stream));
  cudaFree(in);
  cudaFree(out);
  return 0;
}
