// Fitting calibration profiles to measurements (`clustersim calibrate`).
//
// Compute (the equations of models/compute/profile.cpp, fitted as they are used):
//   launch_overhead  the "stream" launch record (per-kernel cost of back-to-back kernels);
//                    without one, the intercept of the copy fit below
//   hbm_bandwidth    device-to-device copies: weighted least squares of t = a + moved / B
//                    (weights 1 / t: relative errors), B the achieved HBM bandwidth
//   GEMM terms       for each effective tile (tile_m x tile_n in 64..256) and k_half (a grid
//                    over 0..8192, then golden-section refinement), every datatype's
//                    efficiency e_d in closed form, exp(mean log(t_compute(e=1) / (t - launch)))
//                    over the points that are compute-bound; the (tile, k_half) with the
//                    least squared log error over all GEMM points wins. wave uses the
//                    device's SM count. gemm_efficiency = bf16's e (else the first fitted).
//   attention        attention_efficiency, attention_backward_efficiency and attention_kv_half
//                    from fused attention calls (attention.py): for a kv_half h, each pass's
//                    efficiency is the geometric mean over its calls of (compute time at
//                    efficiency 1, no sequence term) / (t - launch) / (kv / (kv + h)), 2h when
//                    causal; h is the one of least squared log error (with two kv lengths or
//                    more). A pass not measured keeps the built-in profile's value
//   sustained_factor 1 when GEMMs were measured (gemm times each shape after a warm-up: held
//                    figures); else the built-in's
//   sustained        (gemm --sustained) not fitted: a note compares the held GEMM with the
//                    sweep's point of its shape and warns when the sweep ran 5% or more faster
// Collectives: each series (op, ranks, nodes) is fitted by size regimes
// (models/calibration/profile.hpp: piecewise in size, t = latency_r + factor S / busbw_r):
//   1. every run of at least 3 consecutive sizes gets its minimax line: latency >= 0 and
//      1 / busbw >= 0 minimizing the worst relative error max |t_model / t - 1| over the run
//      (the acceptance criterion of a calibration is the worst error, so that is what is
//      minimized; exact: golden section on the slope, a closed-form intercept);
//   2. a dynamic programme cuts the sizes into up to 6 runs (NCCL's ring and tree algorithms
//      times its LL, LL128 and Simple protocols) minimizing the sum over runs of
//      points x worst error;
//   3. neighbouring runs are merged while one line serves both, within the measurement's
//      repeatability (the merged line's worst error on each side exceeds that side's own by
//      at most the median out-of-place vs in-place spread of the log; 0.5% without repeats).
// At least 3 sizes per regime keeps each regime's two parameters over-determined: a line
// through two sizes would reproduce any log and predict nothing.
// Network parameters: the values under which the network model itself (models/network, the
// level `collective` and `run` use) reproduces the measured all-reduce series, found by
// inverting the model on the configuration the log ran on (invert_network; the node type from
// the catalog, FitTarget::node). A line rate alone does not give them: the share of it an
// all-reduce reaches depends on the algorithm and on which links are the bottleneck (on two
// nodes NCCL's tree all-reduce moves S/g per GPU through the NICs but 2S over
// NVLink, so busbw is not a share of the NIC rate). For the largest one-node series, then
// the largest multi-node one (all-reduce where the log has it; else reduce-scatter,
// all-gather, all-to-all, broadcast, in that order), three rounds of
//   call_overhead  the constant c >= 0 minimizing the worst relative error of the model
//                  over the series' three smallest sizes (in its first regime); the model's
//                  time is c plus a part independent of c, so this is a 1-D convex problem,
//                  solved by golden section. A multi-node series after a one-node one fits
//                  step_latency instead (the extra latency per algorithm step across nodes;
//                  with `auto` the time is a minimum over algorithms, concave in it, so the
//                  outer search may stop at a local minimum)
//   efficiency     scaleup_efficiency (one node) or scaleout_efficiency (several), the value
//                  in [0.01, 1] minimizing the worst relative error over the series' three
//                  largest sizes (in its last regime): the model's time decreases with it,
//                  so each error is quasi-convex and so is their maximum (golden section)
// then, with those fixed,
//   size factors   at every measured size of the series, the factor f in [0.001, 1] of the
//                  series' level (scaleup_size_factors or scaleout_size_factors,
//                  models/network/config.hpp) under which the model takes the measured time
//                  (the median of the times at that size), by bisection on log f (the time
//                  falls as f grows); f = 1 where the model at full efficiency is already
//                  slower. A size enters the table only where the bandwidth term is at least
//                  a quarter of the time (t(f/2) - t(f) >= t(f) / 4), so that a 1% timing
//                  error moves f by at most ~4%: the latency-bound sizes have no point.
//                  Medium sizes run NCCL configurations (protocol, channel count) that reach
//                  less of the line rate; the table carries them, measured, into every
//                  simulation that uses the profile. The table reproduces its own sizes by
//                  construction, so the report also holds every other size out and gives
//                  the model's error there, fitted on the rest (how well it interpolates).
// Every point of the series is then reported with the model's time (network/...), fitted or
// not.
// NVLS: a one-node all-reduce whose largest sizes reach a bus bandwidth above the NVLink
// line rate (by more than kNvlsAboveLine) on an NVSwitch node was reduced in the switch
// (NCCL's NVLS, its default on Hopper NVSwitch nodes): no ring reaches that. Its series then
// fits nvls_efficiency instead of scaleup_efficiency (the model runs with network.nvls on
// and its `auto` choice, NVLS at those sizes), and no scale-up size table; nvls_latency
// keeps its value (the smallest sizes run NCCL's ring or tree, as the model's auto does).
// scaleup_efficiency needs a log run with NCCL_NVLS_ENABLE=0.
// Without a node (no catalog node for the GPU), network_from() takes ratios instead:
// scaleup_efficiency = busbw of the largest-size regime on one node / the NVLink rate per
// direction; scaleout_efficiency = the same across nodes / the NIC rate per GPU;
// call_overhead and step_latency from the smallest-size regime's latency,
// alpha(n) = call_overhead + 2 (n - 1) step_latency, over the rank counts measured.
//
// LIMITATIONS: a regime is not named (NCCL's algorithm and protocol are not in the logs);
// its boundaries are known only to within the measured sizes (a size between the last of one
// regime and the first of the next uses the lower regime). With the parameters calibrate
// finds, the network model reproduces the 2 x 8 H100 log of tests/calibration within 2.7% at
// 1 MiB and above (scaleout_efficiency 0.882 on A3 Mega's 200 Gb/s NICs, size factors from
// 0.068 at 512 KiB up to 1) and its smallest sizes within 5.2%, the 1 x 8 A100 log within
// 0.8% and its smallest sizes within 0.7%. Between measured sizes the size factors interpolate: with every other size held out
// the model is off there by a median of 2.6% (H100; worst 24.7%, at 16 MiB, where NCCL's
// configuration changes between 16 and 32 MiB) and 5.8% (A100; worst 14.3%, at 2 MiB).
// Those in-sample figures are matched by construction at every tabled size; the held-out
// ones say how the model does between sizes. Sizes below the table's first point (the
// latency-bound ones) take its first factor. A table is fitted on one op (all-reduce where
// the log has it) and one rank count and applies to every collective NCCL's tuner
// configures by size on its level (not send/recv or all-to-all), whose NCCL configurations
// may switch at other sizes and rank counts: a table from a 2-node log slows a 100 MB
// data-parallel all-reduce over 8 nodes by its factor there, measured or not. One
// call_overhead serves every level, so one fitted on a multi-node log (119 us over
// GPUDirect-TCPXO) also applies to NVLink-only collectives. NVLS and SHARP efficiencies are
// not fitted.
// Within a regime the log still wiggles: the A100 log of tests/calibration is reproduced
// within 4.4% (4 to 32 MiB and 64 to 256 MiB alternate above and below their lines from one
// power of two to the next), the H100 one within 1.8% at 1 MiB and above.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/measurements.hpp"
#include "models/calibration/profile.hpp"
#include "models/cluster/cluster.hpp"
#include "models/hardware/catalog.hpp"

namespace clustersim::calibration {

/// One measured point beside the fitted model's prediction.
struct FitPoint {
  std::string group;  ///< gemm/bf16, memory/d2d_copy, launch, collective/all_reduce/8x1, ...
  std::string label;  ///< the point: shape or size
  double measured = 0.0;   ///< seconds
  double predicted = 0.0;  ///< seconds
  bool fitted = true;      ///< false: a cross-check the fit did not use
  double bytes = 0.0;      ///< size of a memory or collective point (0 otherwise)
  [[nodiscard]] double error() const { return predicted / measured - 1.0; }
};

struct FitReport {
  std::vector<FitPoint> points;
  std::vector<std::string> notes;
  /// The compute profile's keys nothing measured, kept at the built-in profile's values
  /// (a profile of launches alone is "measured" for those only; its source says so).
  std::vector<std::string> kept_builtin;
};

/// What the fit needs besides the measurements: the catalog GPU (peaks, built-in profile)
/// and the line rates the efficiencies are shares of.
struct FitTarget {
  std::string gpu_name;
  hardware::GpuSpec gpu;
  double scaleup_line = 0.0;       ///< NVLink bytes/s per GPU and direction (0: unknown)
  double nic_line_per_gpu = 0.0;   ///< scale-out bytes/s per GPU (0: unknown)
  /// The node the measurements ran on: when known, the network parameters are those under
  /// which the network model itself reproduces the all-reduce series (invert_network).
  std::optional<cluster::ResolvedNode> node;
};

/// The buffer size from which a device-to-device copy runs from HBM, not the last-level cache
/// (the L2 is 50 MB on H100, NVIDIA H100 Tensor Core GPU Architecture whitepaper; MI300X's
/// Infinity Cache 256 MB, AMD CDNA 3 white paper): 1 GiB, at least 4 times either. A copy
/// moves twice its buffer.
inline constexpr double kPastCacheBytes = 1024.0 * 1024 * 1024;

/// The catalog GPU a device name stands for ("NVIDIA H100 80GB HBM3" -> "h100-sxm"), if known.
std::optional<std::string> catalog_gpu_for(const std::string& device_name);

/// Seconds fused attention call `a` takes at the dense peak of its datatype in `peaks`: the
/// compute model's attention FLOPs (models/compute/profile.cpp) over that peak, at efficiency
/// 1, with no sequence term, launch or HBM bound. The fit's unit of a call's share of peak, and
/// calibrate's check that no call ran faster than the GPU can.
double attention_peak_seconds(const AttentionPoint& a, const hardware::PeakFlops& peaks);

/// Fits the compute profile; `base` (the built-in profile) supplies what was not measured.
compute::ComputeProfile fit_compute(const Measurements& m, const compute::ComputeProfile& base, FitReport& report);

/// Fits one series (same op, ranks and nodes). Precondition: at least two distinct sizes.
CollectiveFit fit_collective_series(const std::vector<CollectivePoint>& points, int max_regimes = 6);

/// Fits every series in `points`, adding each point's prediction to `report`.
std::vector<CollectiveFit> fit_collectives(const std::vector<CollectivePoint>& points, FitReport& report);

/// The network parameters the fits imply (see the header).
NetworkCalibration network_from(const std::vector<CollectiveFit>& fits, const FitTarget& target, FitReport& report);

/// The network model's time (seconds) for one call of `bytes` in the configuration of
/// `series` (its op, ranks and nodes) under `cfg`.
using NetworkModel = std::function<double(const CollectiveFit& series, double bytes, const network::NetworkConfig& cfg)>;

/// The network model on `series.nodes` nodes of `node` (ranks: the first ranks / nodes GPUs
/// of each node, as nccl-tests places them with -npernode; NaN when they do not fit), behind a non-blocking two-tier fat
/// tree (three tiers beyond 2,048 GPUs) of 64-port switches with 700 ns per hop; the
/// algorithm chosen by size as `collective --algo auto` does; analytical level. Fabrics are
/// built once per node count and kept by the returned function.
NetworkModel network_model_on(const cluster::ResolvedNode& node);

/// The network parameters under which the network model itself reproduces the all-reduce
/// series (see the header): scaleup_efficiency from the largest one-node series,
/// scaleout_efficiency from the largest multi-node one, call_overhead (and, with both
/// kinds of series, step_latency) from their smallest sizes. Adds each point's model
/// prediction to `report` (group network/all_reduce/NxG) and notes what was fitted.
/// `base`: the configuration the profile will run over (the GPU type's built-in network
/// calibration on the generic defaults): what the fit does not set keeps its values, and a
/// level whose series is fitted starts without a size table (the profile then sets that
/// level's table, empty if none was fitted, where the base had one).
/// How far above the NVLink line rate a one-node all-reduce's bus bandwidth must be to count
/// as NVLS (2%: a ring at line rate measures up to ~1% above it through timing noise).
inline constexpr double kNvlsAboveLine = 1.02;

/// `nvls_line`: the NVLink line rate per GPU and direction (bytes/s) of an NVSwitch node, above
/// which (x kNvlsAboveLine) a one-node all-reduce ran NVLS (see the header); 0: never NVLS.
NetworkCalibration invert_network(const std::vector<CollectivePoint>& points, const std::vector<CollectiveFit>& fits,
                                  const NetworkModel& model, FitReport& report,
                                  const network::NetworkConfig& base = {}, double nvls_line = 0.0);

/// The size factors of a series' level (see the header) from its `points`, with the other
/// parameters as in `cfg` and no table for that level. Sizes increasing; empty when no size
/// is bandwidth-bound enough.
std::vector<network::SizeFactor> fit_size_factors(const CollectiveFit* fit,
                                                  const std::vector<const CollectivePoint*>& points, bool scaleup,
                                                  const network::NetworkConfig& cfg, const NetworkModel& model);

/// Everything: the profile `clustersim calibrate` writes, and its report.
CalibrationProfile fit_profile(const Measurements& m, const FitTarget& target, FitReport& report);

/// Median and largest |error| of the points whose group starts with `group_prefix` and
/// whose bytes are at least `min_bytes`.
struct ErrorSummary {
  std::size_t count = 0;
  double median = 0.0;
  double worst = 0.0;
  std::string worst_label;
};
ErrorSummary summarize(const std::vector<FitPoint>& points, const std::string& group_prefix = {},
                       double min_bytes = 0.0);

}  // namespace clustersim::calibration
