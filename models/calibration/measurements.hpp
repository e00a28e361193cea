// Measurements that calibration fits: the microbenchmarks' JSON lines (tools/microbench/)
// and nccl-tests logs, read into plain records.
//
// Microbenchmark results: one JSON object per line. {"record":"device",...} gives the GPU
// (name, sm_count, sm_clock_mhz, driver_version, cuda_version); then
//   {"record":"gemm","dtype":"bf16","m":..,"n":..,"k":..,"batch":1,"time_s":..}
//   {"record":"memory","kind":"d2d_copy"|"triad"|"h2d"|"d2h","bytes":..,"moved_bytes":..,"time_s":..}
//   {"record":"launch","kind":"stream"|"graph"|"roundtrip","time_s":..}        (per kernel)
//   {"record":"elementwise","kind":..,"bytes":..,"time_s":..}
//   {"record":"collective","op":"all_reduce",..,"ranks":n,"nodes":1,"bytes":S,"time_s":..}
//   {"record":"skipped","bench":..,"reason":..}
//   {"record":"attention","backend":"cudnn","dtype":"bf16","batch_heads":..,"q_len":..,"kv_len":..,
//    "head_dim":..,"causal":true,"pass":"forward"|"backward","time_s":..}   (attention.py)
//   {"record":"sustained","dtype":"bf16","m":..,"n":..,"k":..,"t_s":..,"window_s":..,"calls":..}
//     one window of a GEMM held back to back (gemm --sustained), t_s its end since the start;
//     sm_clock_mhz, power_w, temperature_c (-1: not read) and clock_event_reasons optional
// Other keys are kept by the programs for people (tflops, gbps, min_s, ...) and not fitted;
// the rates among them (gemm's and attention's tflops; memory's and elementwise's gbps; a
// collective's algbw_gbps and busbw_gbps, as nccl-tests defines them) must be what the
// record's own numbers give, to the 3 decimals printed: one that is not was edited, and the
// time may have been too (sustained's tflops is over a window printed to 0.1 ms: unchecked).
//
// nccl-tests logs: the text all_reduce_perf and its siblings print. The "#  Rank r Group g
// Pid p on HOST device d [bus] NAME" lines give the ranks and the nodes (distinct hosts);
// each data row "size count type [redop] [root] time algbw busbw #wrong time algbw busbw
// #wrong" gives an out-of-place and an in-place point (time in microseconds). The
// collective is named by the binary (".../all_reduce_perf" in the log, or in the file's
// name); rows are checked against themselves (algbw = size / time, busbw / algbw = the
// nccl-tests factor of that collective on that many ranks), so a garbled number is caught.
// A time longer than the simulated clock's range (292 years, sim/time.hpp) is no
// measurement and an error in both formats; the consistency check cannot catch it at small
// sizes, where nccl-tests prints algbw 0.00 for any long time.
//
// Errors (a garbled or truncated line, a missing header) are diagnostics naming the file,
// line and the column of the bad value; reading goes on to report them all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/config/diagnostics.hpp"
#include "models/network/collective.hpp"

namespace clustersim::calibration {

struct DeviceInfo {
  std::string name;
  std::int64_t sm_count = 0;
  double sm_clock_mhz = 0.0;
  std::int64_t driver_version = 0;
  std::int64_t cuda_version = 0;
  std::string where;  ///< "file:line" of its first record
};

struct GemmPoint {
  compute::GemmShape shape;
  compute::Dtype dtype = compute::Dtype::bf16;
  double seconds = 0.0;
  std::string where;  ///< "file:line"
};

/// A memory-bound measurement: `moved` bytes through HBM (or the host link) in `seconds`.
struct MemoryPoint {
  std::string kind;  ///< d2d_copy, triad, h2d, d2h, softmax, layernorm
  double moved = 0.0;
  double seconds = 0.0;
  std::string where;  ///< "file:line"
};

struct LaunchPoint {
  std::string kind;  ///< stream, graph, roundtrip
  double seconds = 0.0;
  std::string where;  ///< "file:line"
};

struct CollectivePoint {
  network::Op op = network::Op::all_reduce;
  std::int64_t ranks = 0;
  std::int64_t nodes = 1;
  double bytes = 0.0;
  double seconds = 0.0;
  std::string where;  ///< "file:line"
};

/// One fused attention call, forward or backward (tools/microbench/attention.py).
struct AttentionPoint {
  compute::AttentionShape shape;
  compute::Dtype dtype = compute::Dtype::bf16;
  bool backward = false;
  std::string backend;  ///< the kernel library (cudnn, flash)
  double seconds = 0.0;
  std::string where;  ///< "file:line"
};

/// One window of a GEMM held back to back (gemm --sustained): `calls` calls in `window_s`
/// seconds, ending `t_s` seconds into the run.
struct SustainedPoint {
  compute::GemmShape shape;
  compute::Dtype dtype = compute::Dtype::bf16;
  double t_s = 0.0;
  double window_s = 0.0;
  std::int64_t calls = 0;
  double sm_clock_mhz = -1.0;  ///< -1: not read
  double power_w = -1.0;
  double temperature_c = -1.0;
  std::string where;  ///< "file:line"

  /// FLOP/s over the window.
  [[nodiscard]] double flops() const {
    return 2.0 * double(shape.m) * double(shape.n) * double(shape.k) * double(shape.batch) * double(calls) / window_s;
  }
};

struct Measurements {
  std::optional<DeviceInfo> device;
  std::vector<GemmPoint> gemm;
  std::vector<MemoryPoint> memory;  ///< d2d_copy, triad, h2d, d2h and elementwise kernels
  std::vector<LaunchPoint> launch;
  std::vector<CollectivePoint> collectives;
  std::vector<AttentionPoint> attention;
  std::vector<SustainedPoint> sustained;  ///< in file order
  std::vector<std::string> skipped;  ///< "bench: reason"
};

/// Reads microbenchmark JSON lines (`text` of `file`) into `out`. Returns false, with a
/// diagnostic per bad line in `errors`, when any line is not a valid record.
bool read_results(const std::string& file, const std::string& text, Measurements& out, config::Diagnostics& errors);

/// Reads an nccl-tests log into out.collectives. Returns false with diagnostics on error.
bool read_nccl_tests(const std::string& file, const std::string& text, Measurements& out,
                     config::Diagnostics& errors);

/// The same size of a collective series (op, ranks, nodes) from two input files (a file
/// given twice, two runs): an error per pair of files, at the later file's first such row;
/// one file's own repeats are its measured spread. Returns false when any.
bool check_series_across_files(const Measurements& m, config::Diagnostics& errors);

}  // namespace clustersim::calibration
