// The scenario's `economics:` and `monitoring:` sections: what the cost and monitoring
// models (models/cost/cost.hpp, models/cost/monitoring.hpp) read besides the cluster.
//
// Defaults and where they come from (each is an input a study should set to its own site):
// - pue 1.3: ESTIMATE for a new-build AI hall, between the Uptime Institute Global Data
//   Center Survey 2023's industry average of 1.58 (flat since ~2020, pulled up by legacy
//   sites) and the 1.1-1.2 that hyperscale facilities report.
// - energy_price 0.08 USD/kWh: US industrial average retail price in 2023, 8.06 cents/kWh
//   (EIA, Electric Power Annual 2023, average revenue per kWh, industrial sector).
// - life 4 y: straight-line depreciation over 4 years with no residual value, the top of
//   the 3-4 year GPU service life the issue asks for (hyperscalers book servers over 5-6
//   years; a shorter life is the conservative choice for accelerators).
// - gpu_idle_fraction 0.12: ESTIMATE. An idle Hopper GPU draws ~75-80 W of its 700 W TDP
//   (H200 measured at 73.65 W dormant and 80.3 W idle with nvidia-smi: ConserveMode case
//   study on RunPod, and the Serial Alice GPU energy benchmark, 2026), i.e. 10.5-11.5%;
//   rounded up to 12%.
// - host_idle_fraction 0.5: servers at idle draw about half their peak power (L. A. Barroso
//   and U. Hoelzle, 'The Case for Energy-Proportional Computing', IEEE Computer 40(12),
//   2007).
// - monitoring: metrics_per_gpu 21, the fields enabled in NVIDIA dcgm-exporter's
//   etc/default-counters.csv (github.com/NVIDIA/dcgm-exporter, 2024-2025: clocks 2,
//   temperatures 2, power and energy 2, PCIe 3, utilisation 4, XID 1, framebuffer 2, NVLink
//   bandwidth 1, vGPU licence 1, row remapping 3); interval 30 s, dcgm-exporter's default
//   --collect-interval of 30000 ms (pkg/cmd/app.go); bytes_per_sample 16 B uncompressed
//   (an int64 millisecond timestamp and a float64 value); compression 8, i.e. 2 B per
//   stored sample, the top of the 'around 1-2 bytes per sample' of the Prometheus storage
//   documentation (Facebook's Gorilla, Pelkonen et al., VLDB 2015, reports 1.37 B);
//   rollups as Thanos' compactor downsamples (5 min resolution for blocks older than 40 h,
//   1 h for blocks older than 10 d; each downsampled point holds 5 aggregates: count, sum,
//   min, max, counter); retention 365 d, a choice (Prometheus keeps 15 d by default,
//   Thanos everything unless told). metrics_per_node 2000: ESTIMATE, node_exporter's
//   node_cpu_seconds_total alone is 8 modes x 224 logical CPUs = 1,792 series on a DGX H100
//   (2 x 56-core Xeon 8480C with hyper-threading), plus ~200 for memory, disks, filesystems
//   and network interfaces. metrics_per_switch 640: ESTIMATE, 64 ports x 10 per-port
//   counters (octets, packets, errors and discards in and out, link state, speed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::cost {

struct EconomicsConfig {
  double pue = 1.3;
  sim::EnergyPrice energy_price = sim::EnergyPrice::of(0.08);
  sim::Time life = sim::Time::from_ns(4 * 31'557'600'000'000'000LL);
  double gpu_idle_fraction = 0.12;
  double host_idle_fraction = 0.5;
  std::optional<double> utilization;
  std::optional<sim::Money> node_price;
  std::optional<std::int64_t> nodes_per_rack;
  sim::Money other_capex;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("pue", &EconomicsConfig::pue,
              "power usage effectiveness: facility power / IT power (Uptime Institute 2023 average 1.58; "
              "hyperscale 1.1-1.2)")
            .at_least(1.0)
            .at_most(5.0),
        field("energy_price", &EconomicsConfig::energy_price,
              "price of electricity (default: US industrial average 2023, EIA)"),
        field("life", &EconomicsConfig::life,
              "depreciation life: capex is written off in straight line over it, no residual value")
            .at_least(sim::Time::from_ns(86'400'000'000'000LL)),
        field("gpu_idle_fraction", &EconomicsConfig::gpu_idle_fraction,
              "power of an idle GPU as a fraction of its TDP (busy: the TDP)")
            .at_least(0.0)
            .at_most(1.0),
        field("host_idle_fraction", &EconomicsConfig::host_idle_fraction,
              "power of an idle host (all but the GPUs) as a fraction of its power at load")
            .at_least(0.0)
            .at_most(1.0),
        field("utilization", &EconomicsConfig::utilization,
              "busy share of every GPU for the fleet's opex and cost per GPU-hour (default: each job's "
              "compute share of its step; GPUs in no job idle; full load when the scenario has no job); a "
              "job's training cost and energy use its own busy share")
            .at_least(0.0)
            .at_most(1.0),
        field("node_price", &EconomicsConfig::node_price,
              "price of one node with its scale-out NICs (default: the priced table, "
              "models/fabric/pricing.yaml)"),
        field("nodes_per_rack", &EconomicsConfig::nodes_per_rack,
              "nodes in one rack, for the rack power density and for which torus and dragonfly cables leave "
              "a rack (optical) (default: the priced table's, else 1)")
            .at_least(1)
            .at_most(1000),
        field("other_capex", &EconomicsConfig::other_capex,
              "capex the model does not price, added as one line: storage, racks, facility fit-out"),
    };
  }
};

/// Samples older than `after` are kept at one point per `interval`, each point holding
/// `aggregates` values (a downsampling level).
struct Rollup {
  sim::Time after;
  sim::Time interval;
  std::int64_t aggregates = 5;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("after", &Rollup::after, "age from which samples are kept at this resolution (> 0)"),
        field("interval", &Rollup::interval, "one point per series per interval (coarser than the level before)"),
        field("aggregates", &Rollup::aggregates,
              "values stored per point (Thanos: count, sum, min, max, counter = 5)")
            .at_least(1)
            .at_most(100),
    };
  }
};

inline std::vector<Rollup> default_rollups() {
  constexpr std::int64_t kMinute = 60'000'000'000LL;
  return {Rollup{sim::Time::from_ns(40 * 60 * kMinute), sim::Time::from_ns(5 * kMinute), 5},
          Rollup{sim::Time::from_ns(10 * 24 * 60 * kMinute), sim::Time::from_ns(60 * kMinute), 5}};
}

struct MonitoringConfig {
  std::int64_t metrics_per_gpu = 21;
  std::int64_t metrics_per_node = 2000;
  std::int64_t metrics_per_switch = 640;
  sim::Time interval = sim::Time::from_ns(30'000'000'000LL);
  sim::Bytes bytes_per_sample = sim::Bytes::of(16);
  double compression = 8.0;
  std::vector<Rollup> rollups = default_rollups();
  sim::Time retention = sim::Time::from_ns(365LL * 86'400'000'000'000LL);

  static auto fields() {
    using config::field;
    return std::tuple{
        field("metrics_per_gpu", &MonitoringConfig::metrics_per_gpu,
              "time series per GPU (default: the 21 fields of dcgm-exporter's default-counters.csv)")
            .at_least(0)
            .at_most(1'000'000),
        field("metrics_per_node", &MonitoringConfig::metrics_per_node,
              "time series per host besides its GPUs (node_exporter and the like; a node holds one host, a GB200 "
              "NVL72 rack 18: the catalog's hosts)")
            .at_least(0)
            .at_most(1'000'000),
        field("metrics_per_switch", &MonitoringConfig::metrics_per_switch, "time series per fabric switch")
            .at_least(0)
            .at_most(1'000'000),
        field("interval", &MonitoringConfig::interval,
              "sampling interval of every series (default: dcgm-exporter's 30 s collect interval)"),
        field("bytes_per_sample", &MonitoringConfig::bytes_per_sample,
              "size of one sample before compression (timestamp and value)"),
        field("compression", &MonitoringConfig::compression,
              "stored size = ingested size / compression (Prometheus: about 1-2 bytes per 16-byte sample)")
            .at_least(1.0)
            .at_most(1000.0),
        field("rollups", &MonitoringConfig::rollups,
              "downsampling levels by increasing age (default: Thanos' 5min after 40h, 1h after 10d, less those no "
              "coarser than the sampling interval or past the retention)"),
        field("retention", &MonitoringConfig::retention, "how long samples are kept, at any resolution"),
    };
  }
};

/// A problem with the relations between keys that field tables cannot check: key path
/// below the section, message, suggestion.
struct ConfigProblem {
  std::string path;
  std::string message;
  std::string hint;
};

/// Rollups after 0 and in increasing age, each interval coarser than the one before and at
/// least the sampling interval; positive intervals and retention.
std::vector<ConfigProblem> check_monitoring(const MonitoringConfig& m);

}  // namespace clustersim::cost
