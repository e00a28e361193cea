// `clustersim compare A.yaml B.yaml ...`: designs side by side.
//
// Each scenario is loaded (with the same --set overrides) and run as `clustersim run` would;
// a scenario with a `sweep:` block stands for its points (at most kMaxComparePoints), e.g.
// one job on several topologies (scenarios/topology-comparison-32k.yaml). Each is run
// (compute_run, on one thread each); the rows are the figures a buyer compares, in base
// units in JSON and CSV, scaled with SI prefixes in the table:
//   GPUs, fabric capex (USD; its NIC line included, which the capex leaves out when the
//   servers include NICs), fabric power (W), peak IT power (W: GPUs, hosts, network and
//   idle spares at full load), peak facility power
//   (W, PUE included), capex of the whole cluster (USD), cost per GPU-hour (USD/GPU-h,
//   depreciation + energy), bisection bandwidth (B/s, one way), and for the first job: step
//   time (s), throughput (tokens/s), MFU, memory per GPU (B), ETTR, time to train (s; with
//   failures, from the long-horizon run, otherwise train_tokens / throughput), total cost
//   of the training run (USD: its GPU-hours at the cluster's cost per GPU-hour) and cost per
//   million trained tokens (USD). The cost rows come from models/cost/cost.hpp.
// A row whose better direction is known marks its best value(s) (ties within 1e-9
// relative are all best); a row no scenario has a value for is left out.
//
// With --ecmp-seeds N, each design whose routes are hashed runs N times, one flow-hash draw
// (fabric.ecmp_seed) each: its column holds the run of median step time, and two rows the
// fastest and slowest step, so that a difference between designs smaller than one design's
// spread over draws is seen as such (one draw can rank an oversubscribed Clos ahead of a
// less oversubscribed one).
//
// LIMITATIONS: only the first job is compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/config/decode.hpp"

namespace clustersim::tools {

/// At most this many designs from one scenario's sweep block.
inline constexpr std::int64_t kMaxComparePoints = 64;

struct CompareArgs {
  std::vector<std::string> files;  ///< at least one
  std::vector<std::string> sets;   ///< applied to every scenario
  std::optional<std::uint64_t> seed;
  std::string format = "table";  ///< table, json or csv
  /// Flow-hash draws per design whose routes are hashed (ECMP on a Clos, Valiant groups on
  /// a dragonfly): each is run with fabric.ecmp_seed = its own + 0 .. ecmp_seeds - 1, and its
  /// column shows the run of median step time, with the fastest and slowest step beside it.
  std::int64_t ecmp_seeds = 1;
};

enum class Better { none, lower, higher };

struct CompareRow {
  std::string metric;  ///< "fabric capex"
  std::string key;     ///< "fabric_capex_usd": the JSON and CSV name, with its unit
  std::string unit;    ///< "USD": the base unit of the values
  Better better = Better::none;
  std::vector<std::optional<double>> values;  ///< one per scenario
  std::vector<bool> best;                     ///< one per scenario
  /// Half-widths of the values' 95% intervals over replications, one per scenario (empty, or
  /// nullopt, where a value has none); printed beside the values.
  std::vector<std::optional<double>> ci95 = {};
  /// Each scenario's per-replication values, where the row has them (empty otherwise). The
  /// designs of one comparison run on the same seeds, replication r of each on the same
  /// failure draws: a value whose paired differences from the best one's have a 95% interval
  /// holding 0 is marked best too (the replications cannot tell them apart).
  std::vector<std::vector<double>> samples = {};
};

/// The first job's step of one design, by activity (seconds), for the breakdown plot.
struct DesignStep {
  std::string job;
  double step_time_s = 0.0;
  double compute = 0.0, tp = 0.0, cp = 0.0, ep = 0.0, pp = 0.0, dp = 0.0, bubble = 0.0, optimizer = 0.0,
         contention = 0.0;
};

struct Comparison {
  std::vector<std::string> names;  ///< column titles: each scenario's name (or file), unique
  std::vector<std::string> files;
  std::vector<CompareRow> rows;
  bool several_jobs = false;  ///< a scenario has more than one job: the job rows are its first's
  std::int64_t ecmp_seeds = 1;  ///< CompareArgs::ecmp_seeds
  /// Per design, the fabric.ecmp_seed of the run shown (median step time of ecmp_seeds);
  /// none where routes are not hashed or one seed was run.
  std::vector<std::optional<std::int64_t>> ecmp_seed;
  /// Per design, its first job's step as run (the median seed's): none without a job.
  std::vector<std::optional<DesignStep>> steps;
};

/// Loads and runs every scenario. Throws config::InputError with the diagnostics of all of
/// them when any is invalid.
Comparison compare(const CompareArgs& args);

/// Values within this share of a row's best are as good as it: no study decides on a 0.05%
/// difference, and the models' own error is far above it.
inline constexpr double kTieShare = 5e-4;

/// Marks the best values of a row (by its direction), every value within kTieShare of it,
/// and every value that prints as the best one (the table's precision: 4 significant digits;
/// the JSON and CSV `best` lists use the same marks, beside their full-precision values);
/// exposed for tests.
void mark_best(CompareRow& row);

std::string compare_table(const Comparison& c);
config::Json compare_json(const Comparison& c);
std::string compare_csv(const Comparison& c);
/// The designs' first-job breakdowns as plot.py breakdown reads them:
/// design,job,step_time_s,compute_s,...,optimizer_s,contention_s.
std::string compare_breakdown_csv(const Comparison& c);

}  // namespace clustersim::tools
