// The scenario: one YAML file that describes a study, and the composition root that turns
// it into configured models.
//
// Loading order (later layers override earlier ones key by key):
//   1. the file named by `extends:` (recursively; relative to the extending file, or a
//      built-in scenario such as quickstart.yaml),
//   2. the file itself,
//   3. each `--set key.path=value`, in command-line order, then `--seed`.
// Then required keys are checked, catalogs are read (the built-in one, then each file in
// `catalogs:`, later entries overriding earlier ones of the same name) and names are
// resolved. Every problem is collected; if there is any, load_scenario throws
// config::InputError carrying all of them and nothing is run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "models/calibration/profile.hpp"
#include "models/cluster/cluster.hpp"
#include "models/config/decode.hpp"
#include "models/cost/config.hpp"
#include "models/fabric/config.hpp"
#include "models/fabric/fabric.hpp"
#include "models/fabric/pricing.hpp"
#include "models/hardware/catalog.hpp"
#include "models/network/config.hpp"
#include "models/compute/profile.hpp"
#include "models/workload/job.hpp"
#include "models/workload/model.hpp"
#include "models/reliability/config.hpp"

namespace clustersim::scenario {
struct SweepAxes;
}  // namespace clustersim::scenario

namespace clustersim::config {
template <>
struct Codec<scenario::SweepAxes> {
  static bool decode(const YAML::Node& n, scenario::SweepAxes& out, const Context& ctx);
  static Json encode(const scenario::SweepAxes& v);
  static std::string type_name() { return "mapping of scenario keys (as --set takes them) to lists of values"; }
};
}  // namespace clustersim::config

namespace clustersim::scenario {

struct SimulationConfig {
  std::uint64_t seed = 1;
  std::optional<sim::Time> horizon;
  std::int64_t replications = 1;

  static auto fields() {
    return std::tuple{
        config::field("seed", &SimulationConfig::seed,
                      "root seed of every random stream; same scenario and seed give identical results"),
        config::field("horizon", &SimulationConfig::horizon,
                      "how long the cluster runs with failures (54d); default: until every job has trained, "
                      "stopping at the last submit plus 100 times the jobs' failure-free time one after "
                      "another (at least a day), or at 100 years"),
        config::field("replications", &SimulationConfig::replications,
                      "independent replications of the failure process (mean and 95% interval of each result)")
            .at_least(1)
            .at_most(1'000'000),
    };
  }
};

/// One axis of a `sweep:` block: a scenario key, as `--set` takes it (cluster.nodes,
/// workload.jobs[0].parallelism.tp, fabric), and its values, each kept as YAML flow text
/// for `--set` (a mapping value replaces a whole section: `fabric: [{topology: torus, ...}]`).
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  std::vector<config::Location> where;  ///< of each value, for diagnostics
  friend bool operator==(const SweepAxis& a, const SweepAxis& b) { return a.key == b.key && a.values == b.values; }
};

/// A mapping of keys to lists of values, in file order (a later layer's key replaces the
/// earlier one's list in place; a new key is appended).
struct SweepAxes {
  std::vector<SweepAxis> axes;
  friend bool operator==(const SweepAxes&, const SweepAxes&) = default;
};

/// `sweep:` the points `clustersim sweep` (and `compare`) run. The zipped lists (all of one
/// length) make one axis, point k taking the k-th value of each; every grid key is an axis
/// of its own. Points are the product of the axes: the zip first, then the grid keys in
/// file order, then the command's --param axes, the last varying fastest.
struct SweepConfig {
  SweepAxes grid;
  SweepAxes zip;

  static auto fields() {
    return std::tuple{
        config::field("grid", &SweepConfig::grid,
                      "keys and their values, every combination (e.g. cluster.nodes: [1024, 2048, 4096])"),
        config::field("zip", &SweepConfig::zip,
                      "keys whose lists (all of one length) vary together, one design per position (e.g. name: "
                      "[fat-tree, torus] with fabric: [{topology: fat_tree, ...}, {topology: torus, ...}])"),
    };
  }
};

struct Scenario {
  std::string name;
  std::string description;
  std::string extends;
  std::vector<std::string> catalogs;
  std::string calibration;
  cluster::ClusterConfig cluster;
  std::optional<fabric::FabricConfig> fabric;
  network::NetworkConfig network;
  workload::WorkloadConfig workload;
  std::optional<reliability::FailuresConfig> failures;
  reliability::SchedulerConfig scheduler;
  reliability::CheckpointConfig checkpoint;
  cost::EconomicsConfig economics;
  cost::MonitoringConfig monitoring;
  SimulationConfig simulation;
  std::optional<SweepConfig> sweep;

  static auto fields() {
    return std::tuple{
        config::field("name", &Scenario::name, "short name of the study"),
        config::field("description", &Scenario::description, "what the study is about"),
        config::field("extends", &Scenario::extends,
                      "a scenario this one starts from (path relative to this file, or a built-in such as "
                      "quickstart.yaml)"),
        config::field("catalogs", &Scenario::catalogs,
                      "extra catalog files (GPU and node types), relative to this file; an entry replaces the "
                      "built-in one of the same name, or one from a file earlier in the list; in a file that "
                      "extends another, the list replaces the other's (list its files too)"),
        config::field("calibration", &Scenario::calibration,
                      "a calibration profile (JSON, relative to this file; validation/calibration/): replaces the "
                      "GPU type's built-in compute profile and, if it has them, the network calibration parameters"),
        config::field("cluster", &Scenario::cluster, "the machines: node type and count"),
        config::field("fabric", &Scenario::fabric, "the scale-out network joining the nodes' NICs (optional)"),
        config::field("network", &Scenario::network, "the network model: level of detail and calibration"),
        config::field("workload", &Scenario::workload, "training jobs: model, GPUs, parallelism, batch"),
        config::field("failures", &Scenario::failures,
                      "failure processes, GPU heterogeneity and repair times (optional: none, no failures)"),
        config::field("scheduler", &Scenario::scheduler, "hot spares, retirement of failing nodes, the job queue and burn-in"),
        config::field("checkpoint", &Scenario::checkpoint, "checkpoint interval and storage bandwidth"),
        config::field("economics", &Scenario::economics,
                      "energy price, PUE, depreciation life and prices for the cost model (defaults sourced in "
                      "models/cost/config.hpp)"),
        config::field("monitoring", &Scenario::monitoring,
                      "metric counts, sampling interval, compression, rollups and retention of the monitoring "
                      "load"),
        config::field("simulation", &Scenario::simulation, "seed and run control"),
        config::field("sweep", &Scenario::sweep,
                      "the points `clustersim sweep` and `clustersim compare` run (`clustersim run` runs the scenario "
                      "as written)"),
    };
  }
};

struct LoadOptions {
  std::vector<std::string> sets;     ///< "key.path=value" overrides, applied in order
  std::optional<std::uint64_t> seed;  ///< overrides simulation.seed
  bool check_memory = true;           ///< a job that does not fit in HBM is an error
  /// A key that changes nothing where it is written is an error. Off for the base of a grid
  /// (plan, sweep), whose points set the key that decides (tp 1 beside sequence_parallel).
  bool check_inert = true;
  /// The last point_sets of `sets` are a grid point's values (sweep, plan): a key they set
  /// decides whether another is inert and is never the mistake (tp 1 beside the file's
  /// sequence_parallel). The other --set are the user's, judged as a file written last.
  std::size_t point_sets = 0;
  /// Keys whose overrides apply to several scenarios at once (compare's --set, with more
  /// than one scenario): a key at or under one of these that is inert in one scenario
  /// (simulation.replications where nothing fails) is not an error there.
  std::vector<std::string> shared_keys = {};
  /// Off: stop once the scenario has decoded and its node and calibration are resolved,
  /// without building the fabric or placing the jobs (LoadedScenario::fabric and jobs stay
  /// empty). For the base of a sweep, whose points may hold what it does not (a job larger
  /// than the base's cluster, with cluster.nodes a parameter).
  bool resolve = true;
  /// The workload is its first job alone: the others are dropped once the scenario has
  /// decoded (their errors are still said). For plan, which gives that job the whole
  /// cluster: another job, larger than a cluster size it tries, made every point fail.
  bool first_job_only = false;
  /// When given, set once the files have decoded (so even when the load then fails): whether
  /// the scenario has a sweep block with an axis (check takes such a scenario's base as sweep
  /// does).
  bool* sweep_block = nullptr;
};

/// A job resolved against the catalogs and placed on the cluster.
struct ResolvedJob {
  workload::JobConfig config;
  std::string model_name;  ///< catalog name, or "inline"
  workload::ModelSpec model;
  compute::ComputeProfile profile;  ///< of the node's GPU type
  std::int64_t first_gpu = 0;       ///< runs on GPUs first_gpu .. first_gpu + gpus - 1 (nominal, with a queue)
  std::size_t entry = 0;            ///< its workload.jobs[] entry
  std::int64_t copy = 0;            ///< which of the entry's `count` copies (named NAME-copy when count > 1)
  config::Location where;           ///< of its workload.jobs[] entry, for errors found when it runs
};

/// A scenario fully resolved against its catalogs: what the models are built from.
struct LoadedScenario {
  Scenario config;
  /// Inert keys set by compare's shared --set (LoadOptions::shared_keys), not errors here:
  /// compare refuses one that is inert in every scenario it compares.
  config::Diagnostics shared_inert;
  hardware::Catalog catalog;
  cluster::ResolvedNode node;
  std::optional<fabric::Fabric> fabric;  ///< built when the scenario has a fabric section
  fabric::PricingTable pricing;
  std::vector<ResolvedJob> jobs;
  std::optional<calibration::CalibrationProfile> calibration;  ///< the profile named by `calibration:`
  /// The calibration keys (network.scaleup_efficiency, ...: those of a profile's network
  /// section, without the prefix) the scenario writes itself, in files or with --set: they
  /// win over the calibration, built-in or named. Sorted, unique.
  std::vector<std::string> calibration_overrides;
  std::string file;  ///< the scenario's path, or the built-in's name
  std::vector<std::string> sets;  ///< the --set overrides applied (KEY=VALUE), in order
  /// The file whose `description` the scenario inherits, when it is a file it extends (its
  /// text may describe that file's cluster, not this one's); empty when the scenario's own.
  std::string description_from;
  /// The names of the jobs LoadOptions::first_job_only left out, in scenario order.
  std::vector<std::string> dropped_jobs;
};

/// Loads the scenario at `path`. Throws config::InputError with every problem found.
LoadedScenario load_scenario(const std::string& path, const LoadOptions& options);

/// The key a --set writes, as a plain dotted path: up to the first '=' outside double
/// quotes (config::set_value_start, as config::split_set_argument reads it), without
/// spaces, and without quotes but around a name that holds '.' or '=', so that
/// ' "simulation".seed = 7' writes simulation.seed. Commands that look at what a --set
/// writes compare this.
std::string set_key(const std::string& set);

/// The model a job names (its inline definition, or the built-in catalog's entry) and the
/// name a report gives it; nullopt for a name the catalog lacks. For a base that does not
/// resolve in full (plan's), whose jobs are not resolved.
std::optional<std::pair<std::string, workload::ModelSpec>> job_model(const workload::JobConfig& job);

/// Whether the jobs queue: they need more GPUs together than the cluster has, or one is
/// submitted after the start. Such a workload runs through the long-horizon model's
/// scheduler, with failures or without.
bool jobs_queue(const LoadedScenario& loaded);

/// Whether the scenario runs the long-horizon model (failures, the queue, checkpoints):
/// with failures, with jobs that queue, or with jobs and a fixed checkpoint interval (whose
/// writes cost time even when nothing fails) or a simulation horizon. Otherwise each job's
/// time to train is its step time x its steps.
bool long_run(const LoadedScenario& loaded);

/// Bytes one checkpoint of `job` writes: checkpoint.size, else 14 per parameter (bf16
/// weights, fp32 master weights and Adam's two moments).
double checkpoint_bytes(const LoadedScenario& loaded, const ResolvedJob& job);

/// What the long run's figures are "with": "with failures", "in the queue", "with
/// checkpoints" or "over the horizon" (the first that applies).
std::string_view long_run_label(const LoadedScenario& loaded);

/// Loads the built-in default scenario (scenarios/quickstart.yaml, compiled in).
LoadedScenario load_default_scenario(const LoadOptions& options);

/// Built-in scenario texts by file name ("quickstart.yaml"); empty if there is none.
std::string_view builtin_scenario_text(std::string_view file_name);

/// The scenario's reference, generated from the field tables. `section` narrows it to one
/// top-level key ("cluster") or to "catalog" (the catalog file schema); empty: everything.
/// Returns false if there is no such section.
bool describe(std::string_view section, std::vector<config::FieldDoc>& out);

}  // namespace clustersim::scenario
