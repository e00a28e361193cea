// Calibration profiles: the JSON file that `clustersim calibrate` writes and models read.
//
// A scenario names one with `calibration: path/to/profile.json` (relative to the scenario
// file); its `compute` section replaces the GPU type's built-in compute profile
// (models/compute/profiles.yaml) for the jobs, and its `network` section, when present,
// replaces the network model's calibration parameters: those of the GPU type's built-in
// network calibration (models/calibration/network.yaml, which a scenario without a profile
// runs on), else the generic defaults (scenario keys written explicitly under `network:` or
// with --set still win). Format (every key optional but `gpu`):
//
//   {
//     "format": 1,
//     "gpu": "h100-sxm",                     catalog GPU this profile is for
//     "kind": "measured" | "derived",        measured on a device, or derived from published figures
//     "source": "...",                       where the numbers come from
//     "device": {"name": .., "sm_count": .., "driver_version": .., "cuda_version": .., "date": ..},
//     "compute": { ComputeProfile keys: sms, peak_flops, gemm_efficiency, gemm_efficiency_by_dtype,
//                  tile_m, tile_n, k_half, k_saturation, attention_efficiency,
//                  attention_backward_efficiency, attention_kv_half, sustained_factor,
//                  hbm_bandwidth, launch_overhead,
//                  source; a key not written keeps the built-in profile's: write sustained_factor 1
//                  with efficiencies measured after a warm-up, as clustersim calibrate does },
//     "network": { scaleup_efficiency, scaleout_efficiency, call_overhead, step_latency,
//                  nvls_efficiency, sharp_efficiency,
//                  scaleup_size_factors, scaleout_size_factors: [{"size": "1MiB", "factor": 0.3}, ...] },
//     "collectives": [ {"op": "all_reduce", "ranks": 8, "nodes": 1, "level": "scaleup",
//                       "regimes": [{"from": "8B", "latency": "32us", "busbw": "230GB/s"}, ...]} ]
//   }
//
// Quantities carry units as in scenarios ("2.9TB/s", "5.8us"). The file is read with the
// scenario decoder (JSON is YAML), so errors name the file, line, column and key.
//
// Collective fits. For one series (a collective on a fixed number of ranks and nodes) the
// time of a call of S bytes is that of the regime whose size range holds S,
//     t(S) = latency_r + factor(op, n) S / busbw_r,   r the last regime with from_r <= S
// (the first regime below every from), factor the nccl-tests bus factor (collective.hpp).
// A regime stands for one configuration NCCL runs at those sizes (algorithm, protocol,
// channel count), which the logs do not name; regimes are sorted by `from`, the smallest
// size each was fitted on. The regime is chosen by SIZE, not as the fastest: NCCL's tuner
// picks a configuration per size from its own cost estimate, which is not always the
// fastest one, so the measured curve can jump up where the choice changes. In the A100 log
// of tests/calibration the time goes from 398 us at 32 MiB to 590 us at 64 MiB, a marginal
// bus bandwidth of 307 GB/s, above the 300 GB/s NVLink line rate: the two sizes cannot run
// the same configuration, and no fastest-of-lines (concave) curve comes within 5.8% of
// 32, 64 and 128 MiB together. Level: scaleup when every rank is on one node (NVLink),
// scaleout otherwise.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/config/decode.hpp"
#include "models/network/collective.hpp"
#include "models/network/config.hpp"

namespace clustersim::calibration {

enum class Level { scaleup, scaleout };

constexpr std::array<std::pair<Level, std::string_view>, 2> enum_names(Level) {
  return {{{Level::scaleup, "scaleup"}, {Level::scaleout, "scaleout"}}};
}

struct Regime {
  sim::Bytes from;        ///< smallest size it was fitted on
  sim::Time latency;      ///< fixed cost of a call
  sim::Bandwidth busbw;   ///< bus bandwidth (nccl-tests definition)

  static auto fields() {
    using config::field;
    return std::tuple{field("from", &Regime::from, "smallest size this regime was fitted on"),
                      field("latency", &Regime::latency, "fixed cost of one call"),
                      field("busbw", &Regime::busbw, "bus bandwidth (nccl-tests definition)")};
  }
};

struct CollectiveFit {
  network::Op op = network::Op::all_reduce;
  std::int64_t ranks = 2;
  std::int64_t nodes = 1;
  Level level = Level::scaleup;
  std::vector<Regime> regimes;

  static auto fields() {
    using config::field;
    return std::tuple{field("op", &CollectiveFit::op, "the collective"),
                      field("ranks", &CollectiveFit::ranks, "ranks (GPUs)").at_least(2),
                      field("nodes", &CollectiveFit::nodes, "nodes the ranks are on").at_least(1),
                      field("level", &CollectiveFit::level, "scaleup (one node) or scaleout"),
                      field("regimes", &CollectiveFit::regimes, "latency and bus bandwidth per size regime")};
  }
};

/// Seconds of one call of `bytes` by the fit: the regime whose size range holds `bytes`
/// (see the header). Precondition: regimes not empty.
double collective_seconds(const CollectiveFit& fit, double bytes);

/// The network model's calibration parameters a profile sets (each optional).
struct NetworkCalibration {
  std::optional<double> scaleup_efficiency;
  std::optional<double> scaleout_efficiency;
  std::optional<sim::Time> call_overhead;
  std::optional<sim::Time> step_latency;
  std::optional<double> nvls_efficiency;
  std::optional<sim::Time> nvls_latency;
  std::optional<double> sharp_efficiency;
  std::optional<std::vector<network::SizeFactor>> scaleup_size_factors;
  std::optional<std::vector<network::SizeFactor>> scaleout_size_factors;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("scaleup_efficiency", &NetworkCalibration::scaleup_efficiency, "network.scaleup_efficiency"),
        field("scaleout_efficiency", &NetworkCalibration::scaleout_efficiency, "network.scaleout_efficiency"),
        field("call_overhead", &NetworkCalibration::call_overhead, "network.call_overhead"),
        field("step_latency", &NetworkCalibration::step_latency, "network.step_latency"),
        field("nvls_efficiency", &NetworkCalibration::nvls_efficiency, "network.nvls_efficiency"),
        field("nvls_latency", &NetworkCalibration::nvls_latency, "network.nvls_latency"),
        field("sharp_efficiency", &NetworkCalibration::sharp_efficiency, "network.sharp_efficiency"),
        field("scaleup_size_factors", &NetworkCalibration::scaleup_size_factors, "network.scaleup_size_factors"),
        field("scaleout_size_factors", &NetworkCalibration::scaleout_size_factors, "network.scaleout_size_factors")};
  }
};

struct DeviceRecord {
  std::string name;
  std::int64_t sm_count = 0;
  std::int64_t driver_version = 0;
  std::int64_t cuda_version = 0;
  std::string date;

  static auto fields() {
    using config::field;
    return std::tuple{field("name", &DeviceRecord::name, "device name as the driver reports it"),
                      field("sm_count", &DeviceRecord::sm_count, "streaming multiprocessors (0: unknown, as from an nccl-tests log)").at_least(0),
                      field("driver_version", &DeviceRecord::driver_version, "CUDA driver version").at_least(0),
                      field("cuda_version", &DeviceRecord::cuda_version, "CUDA runtime version").at_least(0),
                      field("date", &DeviceRecord::date, "when it was measured")};
  }
};

struct CalibrationProfile {
  std::int64_t format = 1;
  std::string gpu;
  std::string kind = "derived";
  std::string source;
  std::optional<DeviceRecord> device;
  std::optional<compute::ComputeProfile> compute;
  std::optional<NetworkCalibration> network;
  std::vector<CollectiveFit> collectives;
  /// Key paths under "compute" the file wrote (load_profile fills it; not a file key):
  /// compute_profile() takes only these from `compute`.
  std::vector<std::string> compute_keys;
  /// Where each of compute_keys was written (load_profile fills it).
  std::map<std::string, config::Location> compute_locations;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("format", &CalibrationProfile::format, "profile format version (1)").at_least(1).at_most(1),
        field("gpu", &CalibrationProfile::gpu, "catalog GPU this profile is for").require(),
        field("kind", &CalibrationProfile::kind, "measured (on a device) or derived (from published figures)"),
        field("source", &CalibrationProfile::source, "where the numbers come from"),
        field("device", &CalibrationProfile::device, "the device measured (measured profiles)"),
        field("compute", &CalibrationProfile::compute, "the compute cost model's profile"),
        field("network", &CalibrationProfile::network, "the network model's calibration parameters"),
        field("collectives", &CalibrationProfile::collectives, "fitted collective series"),
    };
  }
};

/// Reads the profile at `path`; problems are added to `state` (file, line, column, key).
/// Returns nothing when there were any.
std::optional<CalibrationProfile> load_profile(const std::string& path, config::LoadState& state,
                                               const config::Location& named_at = {}, const std::string& named_by = {});

/// The profile's compute section completed for GPU `gpu_name` with spec `gpu`: keys the
/// profile lacks keep the built-in profile's values (compute::default_profile).
compute::ComputeProfile compute_profile(const CalibrationProfile& profile, std::string_view gpu_name,
                                        const hardware::GpuSpec& gpu);

/// Overlays the profile's network parameters on `cfg`, except those named in `keep`
/// (e.g. "call_overhead": set explicitly by the scenario).
void apply_network(const NetworkCalibration& n, network::NetworkConfig& cfg, const std::vector<std::string>& keep);

/// One GPU type's built-in network calibration (models/calibration/network.yaml): what a
/// scenario on that GPU type starts from, before its `calibration:` profile and its own
/// `network:` keys.
struct BuiltinNetwork {
  NetworkCalibration network;
  std::string source;

  static auto fields() {
    using config::field;
    return std::tuple{field("network", &BuiltinNetwork::network, "the network model's calibration parameters"),
                      field("source", &BuiltinNetwork::source, "where the numbers come from").require()};
  }
};

struct BuiltinNetworkCatalog {
  std::map<std::string, BuiltinNetwork> profiles;

  static auto fields() {
    using config::field;
    return std::tuple{field("profiles", &BuiltinNetworkCatalog::profiles, "network calibrations by catalog GPU name")};
  }
};

/// The built-in network calibrations' text (models/calibration/network.yaml, compiled in).
std::string_view builtin_network_text();
/// Its file name, as diagnostics print it.
inline constexpr std::string_view kBuiltinNetworkFile = "models/calibration/network.yaml";

/// The built-in network calibration of catalog GPU `gpu_name`; nothing where the file has
/// no entry for it (the network model's generic defaults then stand).
std::optional<BuiltinNetwork> builtin_network(std::string_view gpu_name);

/// The network keys some GPU type's built-in calibration sets ("scaleup_efficiency", ...).
std::vector<std::string> builtin_network_keys();

/// The profile as JSON (the format above).
config::Json to_json(const CalibrationProfile& p);

}  // namespace clustersim::calibration
