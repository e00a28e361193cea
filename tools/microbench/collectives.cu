// collectives: NCCL all-reduce, all-gather, reduce-scatter and all-to-all among the GPUs of
// this machine (one process, one communicator over every visible GPU), sizes 1 KiB .. 1 GiB.
// Sizes follow nccl-tests: S is the per-rank buffer at the end (all-reduce, all-gather) or
// start (reduce-scatter, all-to-all). Record:
//   {"record":"collective","op":..,"ranks":n,"ranks_per_node":n,"nodes":1,"bytes":S,"time_s":..,
//    "algbw_gbps":..,"busbw_gbps":..}
// Timing: as nccl-tests, on the host clock around 20 calls (5 from 128 MiB) launched back to
// back, every rank's stream waited for at the end; time_s is the median over batches of the
// time per call (see main()).
// Without NCCL at build time, or with fewer than two GPUs, it prints a "skipped" record
// saying why and exits 0.
//
// Usage: collectives [--quick]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common.cuh"

#ifdef MICROBENCH_HAVE_NCCL
#include <nccl.h>

#define NCCL_CHECK(call)                                                                         \
  do {                                                                                           \
    ncclResult_t r_ = (call);                                                                    \
    if (r_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)
#endif

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  microbench::print_device("collectives");
  int n = 0;
  MB_CHECK(cudaGetDeviceCount(&n));
#ifndef MICROBENCH_HAVE_NCCL
  (void)quick;
  std::printf("{\"record\":\"skipped\",\"bench\":\"collectives\",\"reason\":\"built without NCCL (libnccl and nccl.h "
              "were not found at configure time)\"}\n");
  return 0;
#else
  if (n < 2) {
    std::printf("{\"record\":\"skipped\",\"bench\":\"collectives\",\"reason\":\"%d GPU visible; collectives need at "
                "least 2\"}\n", n);
    return 0;
  }
  std::vector<ncclComm_t> comms(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  NCCL_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
  const std::size_t max_bytes = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 30);
  std::vector<char*> send(n), recv(n);
  std::vector<cudaStream_t> streams(n);
  for (int i = 0; i < n; ++i) {
    MB_CHECK(cudaSetDevice(i));
    MB_CHECK(cudaMalloc(&send[i], max_bytes));
    MB_CHECK(cudaMalloc(&recv[i], max_bytes));
    MB_CHECK(cudaMemset(send[i], 0, max_bytes));
    MB_CHECK(cudaStreamCreate(&streams[i]));
  }
  const char* ops[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  for (const char* op : ops) {
    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 2) {
      const std::size_t count = bytes / sizeof(float);
      const std::size_t slice = count / static_cast<std::size_t>(n);
      if (slice == 0) continue;
      // One grouped call on every rank, launched without waiting.
      const auto launch = [&]() {
        NCCL_CHECK(ncclGroupStart());
        for (int i = 0; i < n; ++i) {
          if (std::strcmp(op, "all_reduce") == 0) {
            NCCL_CHECK(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
          } else if (std::strcmp(op, "all_gather") == 0) {
            NCCL_CHECK(ncclAllGather(send[i], recv[i], slice, ncclFloat, comms[i], streams[i]));
          } else if (std::strcmp(op, "reduce_scatter") == 0) {
            NCCL_CHECK(ncclReduceScatter(send[i], recv[i], slice, ncclFloat, ncclSum, comms[i], streams[i]));
          } else {
            for (int p = 0; p < n; ++p) {
              NCCL_CHECK(ncclSend(send[i] + p * slice * sizeof(float), slice, ncclFloat, p, comms[i], streams[i]));
              NCCL_CHECK(ncclRecv(recv[i] + p * slice * sizeof(float), slice, ncclFloat, p, comms[i], streams[i]));
            }
          }
        }
        NCCL_CHECK(ncclGroupEnd());
      };
      const auto wait_all = [&]() {
        for (int i = 0; i < n; ++i) {
          MB_CHECK(cudaSetDevice(i));
          MB_CHECK(cudaStreamSynchronize(streams[i]));
        }
        MB_CHECK(cudaSetDevice(0));
      };
      // As nccl-tests times (src/common.cu): `iters` calls launched back to back, then every
      // rank's stream waited for, on the host clock; time per call = elapsed / iters. The
      // launch of one call overlaps the run of the one before, as in training; one call timed
      // alone would also count launching n ranks from one thread.
      const int iters = bytes <= (std::size_t{64} << 20) ? 20 : 5;
      for (int w = 0; w < 5; ++w) launch();
      wait_all();
      std::vector<double> per_call;
      double measured = 0.0;
      while (per_call.size() < 3 || (per_call.size() < 10 && measured < 0.2)) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int it = 0; it < iters; ++it) launch();
        wait_all();
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        per_call.push_back(elapsed / iters);
        measured += elapsed;
      }
      std::sort(per_call.begin(), per_call.end());
      microbench::Stats t;
      t.median = per_call[per_call.size() / 2];
      t.min = per_call.front();
      t.max = per_call.back();
      t.repeats = static_cast<int>(per_call.size()) * iters;
      // nccl-tests' size: the buffer each rank ends with (all-reduce, all-gather) or starts
      // with (reduce-scatter, all-to-all); with a count that n does not divide, the slices
      // hold n x slice elements of it.
      const std::size_t size = std::strcmp(op, "all_reduce") == 0 ? count * sizeof(float) : n * slice * sizeof(float);
      const double algbw = double(size) / t.median / 1e9;
      const double factor = std::strcmp(op, "all_reduce") == 0 ? 2.0 * (n - 1) / n : double(n - 1) / n;
      std::printf("{\"record\":\"collective\",\"op\":\"%s\",\"ranks\":%d,\"ranks_per_node\":%d,\"nodes\":1,"
                  "\"bytes\":%zu,", op, n, n, size);
      microbench::print_stats(t);
      std::printf(",\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f}\n", algbw, algbw * factor);
      std::fflush(stdout);
    }
  }
  for (int i = 0; i < n; ++i) {
    MB_CHECK(cudaSetDevice(i));
    cudaFree(send[i]);
    cudaFree(recv[i]);
    MB_CHECK(cudaStreamDestroy(streams[i]));
    ncclCommDestroy(comms[i]);
  }
  return 0;
#endif
}
