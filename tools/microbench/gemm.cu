// gemm: cuBLASLt matrix multiplies over a grid of shapes and datatypes.
//
// Shapes: square sweeps (256 .. 16384), a depth sweep (m = n = 8192, k = 128 .. 8192), a
// sweep of sizes that are not multiples of any tile (wave quantization), m != n shapes that
// tell a tile's rows from its columns, and the forward
// GEMMs of the catalog's transformers (models/workload/models.yaml: llama3-8b, llama3-70b,
// llama3-405b, gpt3-175b) at TP 1, 2, 4, 8 with 4096 tokens per micro-batch: QKV
// projection, attention output, MLP up (gate and up fused, SwiGLU or 4h GELU) and down, and
// the weight-gradient GEMM of MLP down (k = tokens).
// Datatypes: fp32 (plain FP32), tf32, bf16, fp16, and fp8 (e4m3 inputs, bf16 output, fast
// accumulation) on compute capability 8.9 and later. Layout "TN" (A transposed), which every
// type supports. Inputs are pseudo-random in [-1, 1), as real data (see fill()).
// Record: {"record":"gemm","dtype":..,"m":..,"n":..,"k":..,"batch":1,"time_s":..,"tflops":..}
// time_s is one call's share of back-to-back calls on the stream (common.cuh: the gap
// between kernels included, the host's cost of issuing them overlapped, as in training).
//
// Each point is timed after 0.5 s of its own calls (kWarmupS), in the clocks the GPU holds
// under that load.
// Datatypes run in order of use in training (bf16, fp8, fp16, tf32, fp32), so that a run cut
// short by its time limit has measured the ones that matter.
//
// --sustained SECONDS: instead, one bf16 GEMM (m = n = k = 8192) back to back for SECONDS, in
// windows of about one second, each its own record with the GPU's SM clock, power draw,
// temperature and clock-event reasons read through NVML at the window's end:
// {"record":"sustained","dtype":"bf16","m":..,"n":..,"k":..,"t_s":end of window since start,
//  "window_s":..,"calls":..,"tflops":..,"sm_clock_mhz":..,"power_w":..,"temperature_c":..,
//  "clock_event_reasons":"0x.."}   (a value NVML could not read is -1)
// It tells whether the short measurements of the sweep hold under minutes of load, as a
// training step's GEMMs run (power or thermal limits lower the clocks).
//
// Usage: gemm [--quick]   (--quick: a few shapes, for a smoke run)
//        gemm --sustained SECONDS
#include <cstdint>
#include <initializer_list>
#include <cstdlib>
#include <dlfcn.h>
#include <cstring>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common.cuh"

#define LT_CHECK(call)                                                                  \
  do {                                                                                  \
    cublasStatus_t st_ = (call);                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)st_); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace {

struct Dtype {
  const char* name;
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  int bytes;
  int min_cc;  // major * 10 + minor
};

const Dtype kDtypes[] = {
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 80},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 89},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 70},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 80},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 0},
};

// Each point is timed after half a second of its own calls: an H200 at its 700 W limit ran an
// 8192^3 bf16 GEMM at 794 TFLOP/s measured at once after lighter work and at 702 in the same
// sweep a few seconds into heavy load (tools/microbench/README.md). Measured so, a point is
// what the GPU holds under that shape's load.
constexpr double kWarmupS = 0.5;

struct Shape {
  std::int64_t m, n, k;
  const char* tag;
};

std::vector<Shape> shapes(bool quick) {
  std::vector<Shape> out;
  if (quick) return {{1024, 1024, 1024, "square"}, {4096, 4096, 4096, "square"}};
  for (std::int64_t s = 256; s <= 16384; s *= 2) out.push_back({s, s, s, "square"});
  for (std::int64_t k = 128; k <= 8192; k *= 2) out.push_back({8192, 8192, k, "depth"});
  // Multiples of 8 (16-byte rows in 2-byte types: cuBLASLt's fast kernels, and fp8's
  // requirement) but of no tile size.
  for (std::int64_t s : {1000, 1496, 2504, 3000, 5000, 6000, 7000, 9000, 12000}) out.push_back({s, s, 4096, "odd"});
  // m and n multiples of different powers of two: they tell the tile's rows from its columns.
  for (auto mn : {std::pair<std::int64_t, std::int64_t>{192, 5632}, {5632, 192}, {320, 3328}, {3328, 320}}) {
    out.push_back({mn.first, mn.second, 2048, "tile"});
  }
  struct Model {
    std::int64_t hidden, ffn, heads, kv_heads;
    bool swiglu;
  };
  const Model models[] = {{4096, 14336, 32, 8, true}, {8192, 28672, 64, 8, true}, {16384, 53248, 128, 8, true},
                          {12288, 49152, 96, 96, false}};
  const std::int64_t tokens = 4096;
  for (const Model& md : models) {
    const std::int64_t hd = md.hidden / md.heads;
    for (std::int64_t tp : {1, 2, 4, 8}) {
      const std::int64_t qkv = (md.heads + 2 * md.kv_heads) * hd / tp;
      const std::int64_t up = (md.swiglu ? 2 : 1) * md.ffn / tp;
      out.push_back({tokens, qkv, md.hidden, "transformer"});
      out.push_back({tokens, md.hidden, md.hidden / tp, "transformer"});
      out.push_back({tokens, up, md.hidden, "transformer"});
      out.push_back({tokens, md.hidden, md.ffn / tp, "transformer"});
      out.push_back({md.hidden, md.ffn / tp, tokens, "transformer"});
    }
  }
  return out;
}

// Uniform pseudo-random values in [-1, 1) from the element index (splitmix64): real data.
// A constant pattern switches fewer bits, draws less power and lets large GEMMs hold higher
// clocks than training data does, so it would overstate the achieved FLOP rate.
__device__ float uniform_pm1(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 bits
}

template <class T>
__global__ void fill_uniform(T* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    p[i] = T(uniform_pm1(i, seed));
  }
}

/// Fills `n` elements of type `type` at `p` with values in [-1, 1). Products summed over
/// k <= 53,248 stay far below every output type's range (fp16: 65,504).
void fill(void* p, cudaDataType_t type, std::size_t n, std::uint64_t seed) {
  switch (type) {
    case CUDA_R_32F: fill_uniform<<<1024, 256>>>(static_cast<float*>(p), n, seed); break;
    case CUDA_R_16BF: fill_uniform<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), n, seed); break;
    case CUDA_R_16F: fill_uniform<<<1024, 256>>>(static_cast<__half*>(p), n, seed); break;
    case CUDA_R_8F_E4M3: fill_uniform<<<1024, 256>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed); break;
    default: std::fprintf(stderr, "gemm: no fill for data type %d\n", static_cast<int>(type)); std::exit(1);
  }
  MB_CHECK(cudaGetLastError());
  MB_CHECK(cudaDeviceSynchronize());
}

/// One cuBLASLt matmul, C = A^T B ("TN"), of a datatype and shape, with the algorithm
/// cuBLASLt's heuristic picks first; `found` is false when it has none for the shape.
struct Matmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  bool found = false;

  Matmul(cublasLtHandle_t lt, const Dtype& d, const Shape& s, std::size_t workspace_bytes) {
    LT_CHECK(cublasLtMatmulDescCreate(&op, d.compute, CUDA_R_32F));
    if (d.ab == CUDA_R_8F_E4M3) {
      // Fast accumulation, as FP8 training runs its forward GEMMs (Transformer Engine).
      const std::int8_t fast = 1;
      LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
    }
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, d.ab, s.k, s.m, s.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, d.ab, s.k, s.n, s.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, d.cd, s.m, s.n, s.m));
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof(workspace_bytes)));
    int count = 0;
    status = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heuristic, &count);
    found = status == CUBLAS_STATUS_SUCCESS && count > 0;
  }
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  ~Matmul() {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }

  void run(cublasLtHandle_t lt, const void* a, const void* b, void* c, void* workspace, std::size_t workspace_bytes,
           cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &heuristic.algo, workspace,
                            workspace_bytes, stream));
  }
};

/// NVML, the driver's management library, opened at run time (libnvidia-ml.so.1 comes with
/// the driver, not the toolkit: a build machine without a driver builds this all the same).
/// Declarations as nvml.h makes them (NVML_SUCCESS 0, NVML_CLOCK_SM 1, NVML_TEMPERATURE_GPU 0).
class Nvml {
 public:
  /// The GPU CUDA numbers `cuda_device`, found by its PCI bus id (NVML numbers GPUs in its own
  /// order and ignores CUDA_VISIBLE_DEVICES).
  explicit Nvml(int cuda_device) {
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) != cudaSuccess) return;
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (lib_ == nullptr) return;
    const auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    const auto handle =
        reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
    power_ = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib_, "nvmlDeviceGetPowerUsage"));
    temperature_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetTemperature"));
    reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(
        dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (reasons_ == nullptr) {  // drivers before 535 name it so
      reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(
          dlsym(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    }
    ok_ = init != nullptr && handle != nullptr && init() == 0 && handle(bus_id, &device_) == 0;
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml() {
    if (ok_) {
      if (const auto shutdown = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"))) shutdown();
    }
    if (lib_ != nullptr) dlclose(lib_);
  }
  bool ok() const { return ok_; }

  /// The GPU's state, each value -1 where NVML cannot read it.
  struct State {
    double sm_clock_mhz = -1, power_w = -1, temperature_c = -1;
    long long reasons = -1;
  };
  State read() const {
    State g;
    if (!ok_) return g;
    unsigned v = 0;
    if (clock_ != nullptr && clock_(device_, 1, &v) == 0) g.sm_clock_mhz = v;
    if (power_ != nullptr && power_(device_, &v) == 0) g.power_w = v / 1000.0;
    if (temperature_ != nullptr && temperature_(device_, 0, &v) == 0) g.temperature_c = v;
    unsigned long long r = 0;
    if (reasons_ != nullptr && reasons_(device_, &r) == 0) g.reasons = static_cast<long long>(r);
    return g;
  }

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  bool ok_ = false;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*power_)(void*, unsigned*) = nullptr;
  int (*temperature_)(void*, int, unsigned*) = nullptr;
  int (*reasons_)(void*, unsigned long long*) = nullptr;
};

/// Frees what a run of GEMMs set up: the cuBLASLt handle, the stream and the device buffers.
void release(cublasLtHandle_t lt, cudaStream_t stream, std::initializer_list<void*> buffers) {
  cublasLtDestroy(lt);
  MB_CHECK(cudaStreamDestroy(stream));
  for (void* p : buffers) cudaFree(p);
}

/// --sustained: one bf16 8192^3 GEMM back to back for `seconds`, a record per ~1 s window.
int sustained(double seconds) {
  const Dtype& d = kDtypes[0];
  const Shape s{8192, 8192, 8192, "square"};
  const std::size_t elems = static_cast<std::size_t>(s.m * s.k);
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  const std::size_t workspace_bytes = 64u << 20;
  MB_CHECK(cudaMalloc(&a, elems * d.bytes));
  MB_CHECK(cudaMalloc(&b, elems * d.bytes));
  MB_CHECK(cudaMalloc(&c, elems * d.bytes));
  MB_CHECK(cudaMalloc(&workspace, workspace_bytes));
  fill(a, d.ab, elems, 1);
  fill(b, d.ab, elems, 2);
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  const Nvml nvml(0);
  if (!nvml.ok()) std::fprintf(stderr, "gemm --sustained: NVML unavailable; clocks, power and temperature are -1\n");
  {
    const Matmul mm(lt, d, s, workspace_bytes);
    if (!mm.found) {
      std::fprintf(stderr, "gemm --sustained: cuBLASLt has no bf16 algorithm for 8192^3 (status %d)\n",
                   static_cast<int>(mm.status));
      return 1;
    }
    const auto call = [&] { mm.run(lt, a, b, c, workspace, workspace_bytes, stream); };
    for (int i = 0; i < 3; ++i) call();
    MB_CHECK(cudaStreamSynchronize(stream));
    cudaEvent_t start, stop;
    MB_CHECK(cudaEventCreate(&start));
    MB_CHECK(cudaEventCreate(&stop));
    // Calls per window from one batch of 20 (an 8192^3 bf16 call is ~1.5 ms on a Hopper GPU).
    MB_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < 20; ++i) call();
    MB_CHECK(cudaEventRecord(stop, stream));
    MB_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    const int calls = std::max(1, static_cast<int>(1000.0 / std::max(1e-3, ms / 20.0)));
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    double elapsed = 0.0;
    while (elapsed < seconds) {
      MB_CHECK(cudaEventRecord(start, stream));
      for (int i = 0; i < calls; ++i) call();
      MB_CHECK(cudaEventRecord(stop, stream));
      MB_CHECK(cudaEventSynchronize(stop));
      const Nvml::State g = nvml.read();
      MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
      elapsed += ms * 1e-3;
      std::printf("{\"record\":\"sustained\",\"dtype\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"t_s\":%.4f,"
                  "\"window_s\":%.4f,\"calls\":%d,\"tflops\":%.3f,\"sm_clock_mhz\":%.0f,\"power_w\":%.1f,"
                  "\"temperature_c\":%.0f,\"clock_event_reasons\":\"%s%llx\"}\n",
                  d.name, (long long)s.m, (long long)s.n, (long long)s.k, elapsed, ms * 1e-3, calls,
                  flops * calls / (ms * 1e-3) / 1e12, g.sm_clock_mhz, g.power_w, g.temperature_c,
                  g.reasons < 0 ? "-" : "0x", g.reasons < 0 ? 1ull : static_cast<unsigned long long>(g.reasons));
      std::fflush(stdout);
    }
    MB_CHECK(cudaEventDestroy(start));
    MB_CHECK(cudaEventDestroy(stop));
  }
  release(lt, stream, {a, b, c, workspace});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double sustained_s = 0.0;
  if (argc > 1 && std::strcmp(argv[1], "--sustained") == 0) {
    char* end = nullptr;
    sustained_s = argc > 2 ? std::strtod(argv[2], &end) : 0.0;
    if (argc != 3 || end == argv[2] || *end != '\0' || !(sustained_s > 0.0 && sustained_s <= 3600.0)) {
      std::fprintf(stderr, "gemm: --sustained takes a duration in seconds, above 0 and at most 3600 (e.g. "
                           "--sustained 60)\n");
      return 2;
    }
  } else if (argc > 1 && !quick) {
    std::fprintf(stderr, "gemm: unknown option '%s' (--quick, --sustained SECONDS)\n", argv[1]);
    return 2;
  }
  microbench::print_device("gemm");
  if (sustained_s > 0.0) return sustained(sustained_s);
  int major = 0, minor = 0;
  MB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  MB_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  const int cc = major * 10 + minor;

  const std::vector<Shape> grid = shapes(quick);
  std::size_t max_elems = 0;
  for (const Shape& s : grid) {
    max_elems = std::max({max_elems, static_cast<std::size_t>(s.m * s.k), static_cast<std::size_t>(s.k * s.n),
                          static_cast<std::size_t>(s.m * s.n)});
  }
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  const std::size_t workspace_bytes = 64u << 20;
  MB_CHECK(cudaMalloc(&a, max_elems * 4));
  MB_CHECK(cudaMalloc(&b, max_elems * 4));
  MB_CHECK(cudaMalloc(&c, max_elems * 4));
  MB_CHECK(cudaMalloc(&workspace, workspace_bytes));
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));

  for (const Dtype& d : kDtypes) {
    if (cc < d.min_cc) {
      std::printf("{\"record\":\"skipped\",\"bench\":\"gemm\",\"dtype\":\"%s\",\"reason\":\"compute capability %d.%d "
                  "has no %s tensor cores\"}\n", d.name, major, minor, d.name);
      continue;
    }
    fill(a, d.ab, max_elems, 1);
    fill(b, d.ab, max_elems, 2);
    for (const Shape& s : grid) {
      if (std::strcmp(d.name, "fp32") == 0 && s.m * s.n * s.k > (std::int64_t{8192} * 8192 * 8192)) {
        std::printf("{\"record\":\"skipped\",\"bench\":\"gemm\",\"dtype\":\"fp32\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
                    "\"reason\":\"beyond 8192^3 in plain FP32 (seconds per call): left out for time\"}\n",
                    (long long)s.m, (long long)s.n, (long long)s.k);
        continue;
      }
      const Matmul mm(lt, d, s, workspace_bytes);
      if (!mm.found) {
        std::printf("{\"record\":\"skipped\",\"bench\":\"gemm\",\"dtype\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
                    "\"reason\":\"cuBLASLt has no algorithm for this shape (status %d)\"}\n",
                    d.name, (long long)s.m, (long long)s.n, (long long)s.k, (int)mm.status);
      } else {
        const auto run = [&](cudaStream_t str) { mm.run(lt, a, b, c, workspace, workspace_bytes, str); };
        const microbench::Stats t = microbench::time_it(stream, run, 3, 25, 0.25, kWarmupS);
        const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
        std::printf("{\"record\":\"gemm\",\"dtype\":\"%s\",\"shape\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
                    "\"batch\":1,", d.name, s.tag, (long long)s.m, (long long)s.n, (long long)s.k);
        microbench::print_stats(t);
        std::printf(",\"tflops\":%.3f}\n", flops / t.median / 1e12);
      }
      std::fflush(stdout);
    }
  }
  release(lt, stream, {a, b, c, workspace});
  return 0;
}
