// How much the cluster's monitoring ingests and stores: at 10k GPUs monitoring is itself a
// capacity problem.
//
// Series (one time series per metric and device):
//   S = gpus x metrics_per_gpu + hosts x metrics_per_node + switches x metrics_per_switch
//   (hosts: the nodes times the catalog's hosts per node, 18 compute trays in a GB200 NVL72)
// Ingest, every series sampled once per interval Δ, b bytes per sample before compression:
//   samples/s = S / Δ;   ingest bytes/s = S b / Δ
// Storage, with compression ratio c (stored = ingested / c):
//   raw storage per day = S (86,400 s / Δ) b / c
// Retention R with rollups (after_k, Δ_k, a_k) in increasing age: a sample is kept at the
// raw interval from age 0 to after_1, then at Δ_1 (a_1 values per point) until after_2, and
// so on; the last level runs to R (a level of the scenario's that starts at or after R is
// an error, monitoring.rollups[k].after; a default one there is left out):
//   stored at retention = sum_k S (window_k / Δ_k) a_k b / c,  window_k = min(after_{k+1}, R) - after_k
// with level 0 the raw samples (after_0 = 0, Δ_0 = Δ, a_0 = 1).
//
// Sources of the defaults: models/cost/config.hpp. Validation: the hand-computed cases in
// tests/models/test_cost.cpp.
//
// LIMITATIONS: a tiered store (each sample kept at one resolution at a time; Thanos keeps
// the raw and downsampled blocks side by side unless retention is set per resolution, which
// roughly doubles the first weeks); index, write-ahead log and replication overheads are not
// counted (multiply by the replica count for HA pairs); logs and traces are not metrics.
#pragma once

#include <cstdint>
#include <vector>

#include "models/config/decode.hpp"
#include "models/cost/config.hpp"

namespace clustersim::cost {

struct MonitoringLevel {
  double from_s = 0.0;      ///< age where this resolution starts
  double to_s = 0.0;        ///< and ends
  double interval_s = 0.0;  ///< one point per series per interval
  std::int64_t aggregates = 1;
  double bytes = 0.0;  ///< stored, compressed
};

struct MonitoringLoad {
  std::int64_t series = 0;
  std::int64_t series_gpus = 0;
  std::int64_t series_nodes = 0;
  std::int64_t series_switches = 0;
  double samples_per_s = 0.0;
  double ingest_bytes_per_s = 0.0;  ///< before compression
  double stored_bytes_per_day = 0.0;  ///< raw resolution, compressed
  std::vector<MonitoringLevel> levels;
  double stored_bytes_at_retention = 0.0;
  double retention_s = 0.0;
};

/// The monitoring model (see the header). `m` must pass check_monitoring. O(rollups).
MonitoringLoad monitoring_load(std::int64_t gpus, std::int64_t hosts, std::int64_t switches, const MonitoringConfig& m);

config::Json to_json(const MonitoringLoad& l);

}  // namespace clustersim::cost
