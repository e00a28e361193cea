// Reliability configuration (scenario sections `failures`, `scheduler`, `checkpoint`).
//
//   failures:
//     components:                       # any names; these have defaults for `per`:
//       gpu:    {rate: 0.0002/gpu-day}  #   gpu hbm sram gsp thermal sdc: per gpu
//       hbm:    {mtbf: 5000d, per: gpu} #   nvlink nvswitch nic host cpu memory psu ssd chassis
//       switch: {mtbf: 500d, distribution: weibull, shape: 0.7}   #   maintenance: per node
//                                       #   switch: per switch; cable optic link: per link
//                                       #   (a cable between boxes: NIC to switch, switch to
//                                       #   switch; NVLink and host links fail with the node)
//                                       #   software nccl: per job
//     heterogeneity: {kind: power_law, top_fraction: 0.01, failure_share: 0.5}
//     repair: {detect: 5min, restart: 10min, replace: lognormal(4h, 1.0)}
//   scheduler: {spare_nodes: 32, retire_after: 3, retire_window: 30d, policy: backfill, burn_in: 48h}
//   checkpoint: {interval: auto, write_bandwidth: 2TB/s}
//
// A rate is failures per unit and day ("0.0002/gpu-day", "/node-day", "/switch-day",
// "/link-day", "/job-day"); an MTBF is the mean time between failures of one unit. Times
// between failures of a unit follow `distribution` with that mean: exponential, weibull
// (shape < 1: infant mortality, decreasing hazard; > 1: wear-out) or lognormal (shape = the
// sigma of the underlying normal). Durations in `repair` are a fixed time ("10min") or a
// law: exponential(MEAN), lognormal(MEAN, SIGMA), weibull(MEAN, SHAPE), with the limits of
// the failure laws: SIGMA from 0.05 to 5, SHAPE from 0.2 to 20.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/config/decode.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

namespace clustersim::reliability {

/// What one failure process is counted per.
enum class Per { gpu, node, switch_, link, job };

constexpr std::array<std::pair<Per, std::string_view>, 5> enum_names(Per) {
  return {{{Per::gpu, "gpu"}, {Per::node, "node"}, {Per::switch_, "switch"}, {Per::link, "link"}, {Per::job, "job"}}};
}

enum class Distribution { exponential, weibull, lognormal };

/// How old the installed units are when the run starts (see FailuresConfig).
enum class FleetAge { in_service, new_ };

constexpr std::array<std::pair<FleetAge, std::string_view>, 2> enum_names(FleetAge) {
  return {{{FleetAge::in_service, "in_service"}, {FleetAge::new_, "new"}}};
}

constexpr std::array<std::pair<Distribution, std::string_view>, 3> enum_names(Distribution) {
  return {{{Distribution::exponential, "exponential"},
           {Distribution::weibull, "weibull"},
           {Distribution::lognormal, "lognormal"}}};
}

/// Failures per unit and day, with the unit ("0.0002/gpu-day").
struct FailureRate {
  double per_day = 0.0;
  Per per = Per::gpu;
  friend bool operator==(const FailureRate&, const FailureRate&) = default;
};

/// A duration: fixed, or drawn from a law with the given mean.
struct DurationLaw {
  enum class Kind { fixed, exponential, lognormal, weibull };
  Kind kind = Kind::fixed;
  sim::Time mean;
  double shape = 1.0;  ///< lognormal sigma, Weibull shape
  friend bool operator==(const DurationLaw&, const DurationLaw&) = default;
};

/// What a failure does to the jobs that use the element.
/// reroute (switches and links only): the fabric routes around the element; the jobs run at
/// their degraded step time until it is repaired, or restart if it cuts them off.
enum class Effect { restart, none, reroute };

constexpr std::array<std::pair<Effect, std::string_view>, 3> enum_names(Effect) {
  return {{{Effect::restart, "restart"}, {Effect::none, "none"}, {Effect::reroute, "reroute"}}};
}

struct ComponentConfig {
  std::optional<FailureRate> rate;
  std::optional<sim::Time> mtbf;
  std::optional<Per> per;
  Distribution distribution = Distribution::exponential;
  double shape = 1.0;
  std::optional<bool> hardware;  ///< the node must be swapped out (default: by name)
  bool planned = false;          ///< announced: the job checkpoints first, loses no work
  Effect effect = Effect::restart;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("rate", &ComponentConfig::rate, "failures per unit and day, e.g. 0.0002/gpu-day"),
        field("mtbf", &ComponentConfig::mtbf, "mean time between failures of one unit (instead of rate)"),
        field("per", &ComponentConfig::per, "the unit: gpu, node, switch, link or job (default: by the name)"),
        field("distribution", &ComponentConfig::distribution, "times between failures of one unit"),
        field("shape", &ComponentConfig::shape, "Weibull shape (at least 0.2), or lognormal sigma (at most 5)").at_least(0.05).at_most(20.0),
        field("hardware", &ComponentConfig::hardware,
              "the failed node is swapped for a spare and repaired (default: all but software and maintenance)"),
        field("planned", &ComponentConfig::planned,
              "announced (maintenance): the job writes a last checkpoint and stops, losing no work; not detected nor diagnosed"),
        field("effect", &ComponentConfig::effect,
              "restart the jobs using the element, none, or (switch and link components) reroute: traffic goes "
              "around it and the jobs run at the degraded fabric's step time until it is repaired"),
    };
  }
};

enum class HeterogeneityKind { none, power_law };

constexpr std::array<std::pair<HeterogeneityKind, std::string_view>, 2> enum_names(HeterogeneityKind) {
  return {{{HeterogeneityKind::none, "none"}, {HeterogeneityKind::power_law, "power_law"}}};
}

struct Heterogeneity {
  HeterogeneityKind kind = HeterogeneityKind::none;
  double shape = 0.0;           ///< Pareto shape alpha > 1; 0: from top_fraction and failure_share
  double top_fraction = 0.0;    ///< e.g. 0.01: the top 1% of GPUs ...
  double failure_share = 0.0;   ///< ... cause this share of the failures, e.g. 0.5

  static auto fields() {
    using config::field;
    return std::tuple{
        field("kind", &Heterogeneity::kind, "none (every GPU alike) or power_law (Pareto rate multipliers, mean 1)"),
        field("shape", &Heterogeneity::shape, "Pareto shape alpha (> 1); or give top_fraction and failure_share")
            .at_least(0.0),
        field("top_fraction", &Heterogeneity::top_fraction, "the share of GPUs ... (0.01: the top 1%)")
            .at_least(0.0)
            .at_most(1.0),
        field("failure_share", &Heterogeneity::failure_share, "... that cause this share of failures (0.5)")
            .at_least(0.0)
            .at_most(1.0),
    };
  }
};

struct RepairConfig {
  DurationLaw detect{DurationLaw::Kind::fixed, sim::Time::from_seconds(300), 1.0};
  DurationLaw diagnose{DurationLaw::Kind::fixed, sim::Time::zero(), 1.0};
  DurationLaw restart{DurationLaw::Kind::fixed, sim::Time::from_seconds(600), 1.0};
  DurationLaw replace{DurationLaw::Kind::lognormal, sim::Time::from_seconds(4 * 3600), 1.0};

  static auto fields() {
    using config::field;
    return std::tuple{
        field("detect", &RepairConfig::detect,
              "from the failure until the job is stopped (a hang waits for a watchdog): 5min, or a law such as "
              "lognormal(5min, 1.0)"),
        field("diagnose", &RepairConfig::diagnose,
              "from the stop until the cause is known and the job may restart (health checks, triage): a time or a "
              "law"),
        field("restart", &RepairConfig::restart,
              "restarting the job (scheduling, initialisation), checkpoint read apart: a time or a law"),
        field("replace", &RepairConfig::replace,
              "repairing or replacing a failed node, from when detect and diagnose have named it (a switch or cable: from its failure): 4h, exponential(4h), lognormal(4h, 1.0), weibull(4h, 0.7)"),
    };
  }
};

struct FailuresConfig {
  std::map<std::string, ComponentConfig> components;
  Heterogeneity heterogeneity;
  RepairConfig repair;
  /// in_service: the installed units have been running for long (a renewal process in
  /// equilibrium): each one's first failure comes after the residual of a life, drawn from
  /// the stationary excess law (density (1 - F(t)) / MEAN), so that the fleet fails at
  /// exactly the configured rate from the start whatever the law. That is how rates are
  /// measured (Meta's Llama 3 interruptions, Schroeder and Gibson's times between failures:
  /// fleets in service). new: every unit starts at age 0, as a fleet just installed; with a
  /// Weibull shape below 1 (infant mortality) or a lognormal, far more fail early than the
  /// rate says (shape 0.7, a mean life of 3,333 days, over 54 days: ~4x; the first 54 days'
  /// expected failures, (54 / scale)^0.7 with scale = 3333 / Gamma(1 + 1/0.7), against
  /// 54 / 3333). Replaced parts are new either way. Exponential lives are memoryless: both
  /// are the same. checkpoint.interval auto reads the configured rate, not a new fleet's
  /// higher early one.
  FleetAge fleet_age = FleetAge::in_service;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("components", &FailuresConfig::components,
              "failure processes by component class; GPU and node units fail while their node serves a running "
              "job (rates are measured under load: idle nodes and hot spares do not fail nor age), switches and "
              "cables always"),
        field("heterogeneity", &FailuresConfig::heterogeneity, "how unevenly failures spread over GPUs"),
        field("repair", &FailuresConfig::repair, "detection, diagnosis, restart and repair times"),
        field("fleet_age", &FailuresConfig::fleet_age,
              "in_service (the installed units fail at the configured rate from the start: a "
              "fleet long in service, how rates are measured) or new (every unit at age 0: a "
              "Weibull shape below 1 fails early); replaced parts are new either way"),
    };
  }
};

/// The order in which queued jobs start: first come, first served, or EASY backfilling (a
/// later job may start first when it does not delay the head job's reservation).
enum class QueuePolicy { fifo, backfill };

constexpr std::array<std::pair<QueuePolicy, std::string_view>, 2> enum_names(QueuePolicy) {
  return {{{QueuePolicy::fifo, "fifo"}, {QueuePolicy::backfill, "backfill"}}};
}

/// What becomes of a node that a switch or cable that is down has cut off from some of its
/// NICs, not all (on a rail-optimized Clos a leaf holds one NIC of each node under it; a NIC's
/// own cable one of the node's).
enum class NicLoss {
  drain,  ///< its health check fails (a NIC port down): it serves no multi-node job until they are all back
  keep,   ///< it serves on with the NICs it has, at full speed (optimistic: NCCL's detour is not modelled)
};

constexpr std::array<std::pair<NicLoss, std::string_view>, 2> enum_names(NicLoss) {
  return {{{NicLoss::drain, "drain"}, {NicLoss::keep, "keep"}}};
}

struct SchedulerConfig {
  std::int64_t spare_nodes = 0;
  std::int64_t retire_after = 0;
  sim::Time retire_window = sim::Time::from_seconds(30 * 86400);
  bool shrink = false;
  QueuePolicy policy = QueuePolicy::fifo;
  sim::Time burn_in = sim::Time::zero();
  NicLoss nic_loss = NicLoss::drain;

  static auto fields() {
    using config::field;
    return std::tuple{
        // At most 100,000 (more than most clusters have nodes): the long run keeps every spare
        // node's state, ~1.1 KB each, and 10 million ran out of memory.
        field("spare_nodes", &SchedulerConfig::spare_nodes, "hot spare nodes kept beside the cluster")
            .at_least(0)
            .at_most(100'000),
        field("retire_after", &SchedulerConfig::retire_after,
              "retire a node after this many failures within retire_window (0: never)")
            .at_least(0),
        field("retire_window", &SchedulerConfig::retire_window, "the window retire_after counts failures in"),
        field("shrink", &SchedulerConfig::shrink,
              "when no spare is free, restart with fewer data-parallel replicas instead of waiting for a repair"),
        field("policy", &SchedulerConfig::policy,
              "job queue: fifo (in submission order) or backfill (EASY: a later job may start early if it does not "
              "delay the first queued job's reservation)"),
        field("burn_in", &SchedulerConfig::burn_in,
              "burn-in of every node entering the fleet (installed, replacing a retired one, back from repair) "
              "before it serves jobs or joins the spares; failures during it are caught there (0s: none). The "
              "installed fleet's runs before the start: its catches are reported apart (caught_installed)")
            .at_least(sim::Time::zero()),
        field("nic_loss", &SchedulerConfig::nic_loss,
              "a node cut off from some of its NICs by a switch or cable that is down (a rail-optimized leaf holds "
              "one NIC of each node under it; a NIC's cable, one): drain (its health check fails, so it serves no "
              "multi-node job until they are back, as a node that lost them all) or keep (it serves on at full "
              "speed with the NICs it has: optimistic, NCCL's slower detour through them is not modelled)"),
    };
  }
};

/// A checkpoint interval: auto (Young/Daly) or a duration.
struct CheckpointInterval {
  bool automatic = true;
  sim::Time every;
  friend bool operator==(const CheckpointInterval&, const CheckpointInterval&) = default;
};

struct CheckpointConfig {
  CheckpointInterval interval;
  sim::Bandwidth write_bandwidth = sim::Bandwidth::of(1e12);
  std::optional<sim::Bandwidth> read_bandwidth;
  std::optional<sim::Bytes> size;
  bool async = false;
  sim::Bandwidth snapshot_bandwidth = sim::Bandwidth::of(25e9);

  static auto fields() {
    using config::field;
    return std::tuple{
        field("interval", &CheckpointConfig::interval,
              "auto (Young/Daly from the job's MTBF) or a duration (2h); taken between steps, so rounded to a whole "
              "number of the job's steps (at least one)"),
        field("write_bandwidth", &CheckpointConfig::write_bandwidth, "shared-storage write bandwidth, all GPUs")
            .at_least(sim::Bandwidth::of(1.0)),
        field("read_bandwidth", &CheckpointConfig::read_bandwidth, "shared-storage read bandwidth (default: write)")
            .at_least(sim::Bandwidth::of(1.0)),
        field("size", &CheckpointConfig::size,
              "checkpoint size (default: parameters x 14 bytes: bf16 weights, fp32 master, Adam m and v)")
            .at_least(sim::Bytes::of(1.0)),
        field("async", &CheckpointConfig::async,
              "asynchronous: the job pauses only to copy its state to host memory, then writes in the background"),
        field("snapshot_bandwidth", &CheckpointConfig::snapshot_bandwidth,
              "per GPU, device-to-host copy rate of an asynchronous checkpoint (25GB/s: PCIe 5 x16 achieved, ESTIMATE)")
            .at_least(sim::Bandwidth::of(1.0)),
    };
  }
};

/// Parses "0.0002/gpu-day". Returns false and a message on error, and in `hint` (when
/// given) the same rate per day where another period was written ("0.01/gpu-hour").
bool parse_rate(std::string_view text, FailureRate& out, std::string& why, std::string* hint = nullptr);
/// Parses "4h", "exponential(4h)", "lognormal(4h, 1.0)", "weibull(4h, 0.7)".
bool parse_duration_law(std::string_view text, DurationLaw& out, std::string& why);
std::string format_duration_law(const DurationLaw& d);

/// The unit a component name counts per by default, if it is a known name.
std::optional<Per> default_per(std::string_view component);
/// Whether a component's failures need the node swapped, by default.
bool default_hardware(std::string_view component);
/// The unit component `name` fails per: its rate's unit, else its `per`, else by its name
/// (a node when the name is not known; check_failures says so).
Per unit_of(std::string_view name, const ComponentConfig& c);

}  // namespace clustersim::reliability

namespace clustersim::config {

template <>
struct Codec<reliability::FailureRate> {
  static bool decode(const YAML::Node& n, reliability::FailureRate& out, const Context& ctx);
  static Json encode(const reliability::FailureRate& r);
  static std::string type_name() { return "failures per unit and day (e.g. 0.0002/gpu-day, 0.01/node-day)"; }
};

template <>
struct Codec<reliability::DurationLaw> {
  static bool decode(const YAML::Node& n, reliability::DurationLaw& out, const Context& ctx);
  static Json encode(const reliability::DurationLaw& d) { return reliability::format_duration_law(d); }
  static std::string type_name() { return "a time (4h) or a law: exponential(4h), lognormal(4h, 1.0), weibull(4h, 0.7)"; }
};

template <>
struct Codec<reliability::CheckpointInterval> {
  static bool decode(const YAML::Node& n, reliability::CheckpointInterval& out, const Context& ctx);
  static Json encode(const reliability::CheckpointInterval& c);
  static std::string type_name() { return "auto, or a time (e.g. 2h)"; }
};

}  // namespace clustersim::config
