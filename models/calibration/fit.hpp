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
//   attention_efficiency is not measured: it keeps the built-in profile's value.
// Collectives: each series (op, ranks, nodes) is fitted by min-of-lines regimes
// (models/calibration/profile.hpp): the sizes, in order, are cut into 1 to 4 contiguous
// segments (every cut is tried), each segment gets a weighted least-squares line
// t = latency + factor S / busbw (weights 1 / t^2: relative errors); the cut with the least
// worst relative error wins, a regime more only when it lowers that by over 1 point.
// Network parameters from the all-reduce series: scaleup_efficiency = busbw of the
// largest-size regime on one node / the GPU's NVLink rate per direction; scaleout_efficiency
// = the same across nodes / NIC rate per GPU; call_overhead and step_latency from the
// smallest-size regime's latency, alpha(n) = call_overhead + 2 (n - 1) step_latency, fitted
// over the rank counts measured (one rank count: step_latency 0).
//
// LIMITATIONS: a regime is not named (NCCL's algorithm and protocol are not in the logs);
// the network model itself has one latency and one efficiency per level, so sizes where NCCL
// runs a slower protocol are not reproduced by the simulator, only by the fit. NVLS and
// SHARP efficiencies are not fitted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/calibration/measurements.hpp"
#include "models/calibration/profile.hpp"
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
};

/// What the fit needs besides the measurements: the catalog GPU (peaks, built-in profile)
/// and the line rates the efficiencies are shares of.
struct FitTarget {
  std::string gpu_name;
  hardware::GpuSpec gpu;
  double scaleup_line = 0.0;       ///< NVLink bytes/s per GPU and direction (0: unknown)
  double nic_line_per_gpu = 0.0;   ///< scale-out bytes/s per GPU (0: unknown)
};

/// The catalog GPU a device name stands for ("NVIDIA H100 80GB HBM3" -> "h100-sxm"), if known.
std::optional<std::string> catalog_gpu_for(const std::string& device_name);

/// Fits the compute profile; `base` (the built-in profile) supplies what was not measured.
compute::ComputeProfile fit_compute(const Measurements& m, const compute::ComputeProfile& base, FitReport& report);

/// Fits one series (same op, ranks and nodes). Precondition: at least two distinct sizes.
CollectiveFit fit_collective_series(const std::vector<CollectivePoint>& points, int max_regimes = 4);

/// Fits every series in `points`, adding each point's prediction to `report`.
std::vector<CollectiveFit> fit_collectives(const std::vector<CollectivePoint>& points, FitReport& report);

/// The network parameters the fits imply (see the header).
NetworkCalibration network_from(const std::vector<CollectiveFit>& fits, const FitTarget& target, FitReport& report);

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
