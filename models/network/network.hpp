// The network model: how long transfers and collectives take on a fabric.
//
// Two levels, one interface (a Schedule of phases of transfers, models/network/collective.hpp):
//
// Analytical (alpha-beta with link sharing). Every transfer t of a phase is routed; each
// directed link l carries n_l of the phase's transfers and offers c_l = line rate x
// efficiency (scale-up efficiency on NVLink, scale-out efficiency elsewhere) x the size
// factor of its level at the collective's size (config.hpp; 1 without a table). Then
//     time(t) = step_latency + sum_{l in path} latency_l + bytes_t / min_{l in path} (c_l / n_l)
// and the phase takes max_t time(t) (a ring's phase, Phase::latency_along, takes
// max_t of the bytes' term plus the mean of its hops' latency terms: its steps chain from
// rank to rank; a pipeline's, Phase::pipelined, max_t of the bytes' term plus the largest
// latency term, paid once); a schedule takes call_overhead + sum of phase times x repeats. A transfer
// into an NVLS switch takes network.nvls_latency for its path's latency, one up SHARP's tree
// network.sharp_latency. Without contention (n_l = 1) this is the textbook alpha-beta cost. Only bytes_t
// depends on the size of the collective: AnalyticalRoutes keeps each transfer's rate and
// fixed time so that one routing serves every size (AnalyticalTimer finds them by shape).
//
// Flow level. Every transfer is a flow on its routed path; each directed link is a
// constraint of the engine's max-min solver (sim/maxmin.hpp) with capacity c_l (without the
// size factor), each flow a variable over its links, with coefficient 1 / (size factor of
// the link's level at its collective's size): concurrent collectives of different sizes
// share a link, each at its own factor. Rates are re-solved whenever flows start or drain; the solver
// re-solves incrementally. A flow's data has drained when its bytes have been sent at its
// (piecewise-constant) rates; it arrives latency_path later (a ring step's flows the mean of
// the step's latencies, a pipeline's the largest), and the phase step ends when its last
// flow arrives. Drains and arrivals are engine events. Without contention both
// levels give the same time (a test checks it on every topology).
//
// Reuse of repeated phases: when one collective runs alone on the network, the repetitions
// of a phase see exactly the same flows on the same idle links, so the first repetition is
// simulated and the others take the same time (a 1 GiB ring all-reduce over 16,384 GPUs is
// 32,766 identical steps: one is solved). With several collectives at once nothing is
// reused: every step runs against the others' traffic.
//
// In-network reduction (NVLS, SHARP; collective.hpp): a transfer into or out of a switch
// crosses only the links between its GPU and that switch, and its rate is bounded by the
// switch's reduction rate, a share (nvls_efficiency, sharp_efficiency) of the line rate of
// the GPU's link into it: a bound of the flow's variable in the max-min solver, a cap on
// the transfer's rate in the analytical model.
//
// Flow-model constraints: a GPU's host link and its NIC's access link, which carry the same
// flows whenever every GPU has its own NIC, share one constraint (constraint_link()).
//
// LIMITATIONS: a flow's latency is added after it drains (no store-and-forward pipelining
// effects on rates); no packet-level effects (incast, congestion control, ECMP collisions
// beyond the deterministic hash); per-link protocol efficiency is one number per class and
// collective size (the size factors), the same for every op and algorithm; the size factors do
// not scale the in-network reductions' rate bounds (nvls_efficiency, sharp_efficiency).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/fabric/fabric.hpp"
#include "models/network/collective.hpp"
#include "models/network/config.hpp"
#include "sim/check.hpp"
#include "sim/engine.hpp"
#include "sim/maxmin.hpp"

namespace clustersim::network {

/// Achieved rate of a link: line rate x the efficiency of its class (bytes/s).
double link_capacity(const fabric::Link& link, const NetworkConfig& cfg);

/// The size factors of a collective (NetworkConfig's tables, config.hpp): a transfer of it
/// reaches factor x link_capacity() on each link of that level.
struct LevelFactors {
  double scaleup = 1.0;   ///< NVLink links
  double scaleout = 1.0;  ///< every other link
};
/// The size factors schedule `s` runs at: those of its size for the ops NCCL's tuner
/// configures by size, 1 for send/recv and all-to-all (point-to-point in NCCL) and for a
/// schedule without a size (built by hand: size 0).
LevelFactors size_factors(const std::vector<SizeFactor>& scaleup, const std::vector<SizeFactor>& scaleout,
                          const Schedule& s);

/// The link whose max-min constraint stands for link `l` in the flow-level model. When
/// every GPU has a NIC of its own (nics_per_node == gpus_per_node) and no link has failed,
/// GPU g's host link (GPU -> NIC) and its NIC's access link (NIC -> switch) carry exactly
/// the same flows in each direction: every route leaving or entering GPU g through the
/// network crosses both. Two constraints over the same variables are one constraint with
/// the smaller capacity (the max-min allocation is the same), so the host link maps to the
/// access link; every other link maps to itself. This halves the incidences of a fabric's
/// flows' first and last hops. O(1).
fabric::LinkId constraint_link(const fabric::Fabric& f, fabric::LinkId l);

/// Capacity of the constraint of representative link `rep` (= constraint_link(f, rep)):
/// the smallest link_capacity() among the links it stands for (bytes/s).
double constraint_capacity(const fabric::Fabric& f, const NetworkConfig& cfg, fabric::LinkId rep);

/// Per-link traffic of a run: bytes carried by each directed link. Data bytes: a call at a
/// size factor f below 1 keeps a link busy while moving f of its achieved rate, so its
/// utilisation reads f, not 1.
struct LinkLoad {
  std::vector<double> bytes;  ///< indexed by LinkId
  [[nodiscard]] double utilisation(const fabric::Fabric& f, const NetworkConfig& cfg, fabric::LinkId l,
                                   sim::Time duration) const;
};

/// The `count` busiest links of a run lasting `duration`: (link, utilisation in [0, 1]),
/// busiest first; ties broken by link id.
std::vector<std::pair<fabric::LinkId, double>> hottest_links(const fabric::Fabric& f, const NetworkConfig& cfg,
                                                             const LinkLoad& load, sim::Time duration,
                                                             std::size_t count);

/// Time of `s` alone on an idle fabric, analytical model. O(sum over phases of transfers x
/// hops) plus O(links) to set up. Fills `load` when given. The same as
/// AnalyticalRoutes(f, cfg, s).time(s) (and add_load), bit for bit.
sim::Time analytical_time(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s,
                          LinkLoad* load = nullptr);

/// UGAL's lookahead over one phase of a schedule: the load its transfers not yet routed
/// will offer on their minimal routes (network.cpp says why). Inactive, and free, unless
/// the fabric's routes read the load (Fabric::load_aware()).
class PendingLoad {
 public:
  /// Adds the minimal routes of the phase's transfers, each counted by its queue pairs'
  /// shares (`by_share`: a transfer counts 1 in all) or by its queue pairs.
  void begin(const fabric::Fabric& f, const NetworkConfig& cfg, const Phase& phase, bool by_share);
  /// Removes transfer `index` of the phase (about to be routed).
  void take(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t, std::size_t index);
  /// Clears the phase's remains.
  void end();
  [[nodiscard]] double at(fabric::LinkId l) const { return active_ ? pending_[l.value] : 0.0; }

 private:
  void add(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t, std::size_t index, double sign);

  bool active_ = false;
  bool by_share_ = true;
  std::vector<double> pending_;
  std::vector<fabric::LinkId> touched_;
  std::vector<fabric::LinkId> paths_;
  std::vector<std::size_t> ends_;
  std::vector<std::pair<fabric::LinkId, std::uint32_t>> merged_;
};

/// Working memory for building AnalyticalRoutes: a transfer count per link of the fabric,
/// all zero between builds, so that a build costs O(its transfers x hops) rather than
/// O(links) to allocate and clear (a 16,384-GPU fabric has some 10^5 links, more than a
/// small collective has hops). Owned by the caller, one per thread; no state survives a
/// build but the zeros.
class RouteScratch {
 public:
  RouteScratch() = default;

 private:
  friend class AnalyticalRoutes;
  std::vector<double> count_;
  PendingLoad pending_;
};

/// The analytical model's routes of one schedule, worked out once: each transfer's paths
/// (one per queue pair, network.qps_per_connection; n_l counts a link's flows by their
/// share), its rate (the bottleneck share min(rate bound, min_{l in path} c_l / n_l), bytes/s, kept
/// per level so that time() applies the size factors of the schedule's size) and
/// its fixed time (step_latency + its slowest path's latency, s). None of these depends on the transfers'
/// bytes or on the phases' repeats: routes depend on (src, dst, hop) and the transfer's index
/// in its phase (the ECMP seed; UGAL's load is the count of earlier transfers on a link), so
/// a collective planned on the same ranks at another size, which differs only in bytes and
/// repeats (a pipelined tree's step count grows with the size), or another collective over
/// the same ring (a reduce-scatter and an all-gather), takes
///     time = call_overhead + sum_phases repeat x max_t (fixed_t + bytes_t / rate_t)
/// (a ring's phase: max_t (bytes_t / rate_t) + the mean of its hops' fixed_t) from these numbers with no routing, in O(transfers). A value: no reference to the fabric
/// is kept, and a const object may be used from several threads.
class AnalyticalRoutes {
 public:
  /// Routes every transfer of `s`. O(sum over phases of transfers x hops) plus O(links) for
  /// the per-link transfer counts.
  AnalyticalRoutes(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s);
  /// The same, counting in `scratch` (no O(links) work once it has been sized to the fabric).
  AnalyticalRoutes(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s, RouteScratch& scratch);

  /// Whether `s` has the shape these routes were built from: as many phases, and the same
  /// transfers (src, dst, hop) in the same order; bytes and repeats may differ.
  /// O(transfers).
  [[nodiscard]] bool matches(const Schedule& s) const;

  /// Time of `s` alone on the idle fabric, exactly analytical_time(f, cfg, s) for the
  /// fabric and configuration of the constructor. Precondition: matches(s) (the phase and
  /// transfer counts are checked, the rest is not). O(transfers).
  [[nodiscard]] sim::Time time(const Schedule& s) const;

  /// Adds the bytes `s` puts on each link to `load` (sized to the fabric's links when it is
  /// empty). Precondition: matches(s). O(transfers x hops).
  void add_load(const Schedule& s, LinkLoad& load) const;

 private:
  // A transfer's rate at size factors k is min(bound, k.scaleup x scaleup, k.scaleout x
  // scaleout): its bottleneck share among the links of each level (+inf: none).
  struct Route {
    double fixed = 0.0;     // step_latency + path latency (s)
    double bound = 0.0;     // rate bound of an in-network hop (bytes/s), +inf for none
    double scaleup = 0.0;   // min over its NVLink links of c_l / n_l (bytes/s)
    double scaleout = 0.0;  // min over its other links of c_l / n_l (bytes/s)
    std::uint32_t first_link = 0;  // into links_: its flows' paths, back to back
    std::uint32_t link_count = 0;
    sim::Time latency;             // of its slowest path
    std::int64_t src = 0, dst = 0;
    Hop hop = Hop::gpu;
    bool feeds_next = false;
  };
  void build(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s, std::vector<double>& count,
             PendingLoad& pending);
  void check_counts(const Schedule& s) const;

  double call_overhead_ = 0.0;  // s
  std::size_t fabric_links_ = 0;
  std::vector<SizeFactor> scaleup_factors_;   // the configuration's size factors
  std::vector<SizeFactor> scaleout_factors_;
  std::vector<std::size_t> phase_first_;     // per phase + 1: first route of the phase
  std::vector<Route> routes_;
  std::vector<fabric::LinkId> links_;        // each transfer's links, back to back
  std::vector<double> weights_;              // per entry of links_: its pairs there / its pairs
};

/// Analytical times of many schedules on one fabric, each shape routed once: a schedule
/// that matches() routes built before (the same collective on the same ranks at another
/// size, say) is timed from them in O(transfers); any other is routed and its routes kept.
/// Shapes are found by a hash of (phases, src, dst, hop). time(s) equals
/// analytical_time(f, cfg, s) exactly. Holds references to the fabric (which must outlive
/// it) and a copy of the configuration; not for concurrent use (one per thread).
class AnalyticalTimer {
 public:
  AnalyticalTimer(const fabric::Fabric& f, const NetworkConfig& cfg);
  /// Fills `load` when given, from the same routes (AnalyticalRoutes::add_load).
  [[nodiscard]] sim::Time time(const Schedule& s, LinkLoad* load = nullptr);
  [[nodiscard]] const fabric::Fabric& fabric() const { return fabric_; }
  [[nodiscard]] const NetworkConfig& config() const { return cfg_; }
  /// Shapes routed so far.
  [[nodiscard]] std::size_t shapes() const { return routes_.size(); }

 private:
  const fabric::Fabric& fabric_;
  NetworkConfig cfg_;
  RouteScratch scratch_;
  std::vector<std::pair<std::uint64_t, AnalyticalRoutes>> routes_;  // (shape hash, routes)
};

/// The flow-level network: flows on the fabric, advanced by an engine.
class FlowNetwork {
 public:
  FlowNetwork(sim::Engine& engine, const fabric::Fabric& fabric, const NetworkConfig& cfg);

  /// Starts `s` now; when its last transfer arrives, `done(arg)` is scheduled on the engine.
  /// `s` must outlive the run.
  void start(const Schedule& s, sim::HandlerId done, std::uint64_t arg);

  [[nodiscard]] const LinkLoad& load() const { return load_; }
  /// Flows started so far and rate re-solves done.
  [[nodiscard]] std::uint64_t flows_started() const { return flows_started_; }
  [[nodiscard]] std::uint64_t solves() const { return solves_; }
  /// Largest usage/capacity ratio seen on any link at any solve (<= 1 up to rounding).
  [[nodiscard]] double max_link_ratio() const { return max_link_ratio_; }

 private:
  // A flow's bytes left are kept as of the last change of its rate: at time t they are
  // remaining - rate (t - since). Only the flows whose rate a solve changes are updated
  // (sim::MaxMinSystem::changed()), so an event costs what it changes, not the number of
  // flows in flight.
  struct Flow {
    sim::VariableId var;
    double remaining = 0.0;  // bytes left at `since`
    double rate = 0.0;       // B/s from `since` on
    sim::Time since;         // exact, so that the time elapsed since is too
    sim::Time latency;
    std::uint32_t owner = 0;
    std::uint32_t first_link = 0;  // into flow_links_
    std::uint32_t link_count = 0;
    std::uint32_t stamp = 0;       // finish entries with another stamp are stale
    bool alive = false;
  };
  // When a flow drains at its current rate, s; a min-heap with lazy deletion.
  struct Finish {
    double at = 0.0;
    std::uint32_t flow = 0;
    std::uint32_t stamp = 0;
  };
  static constexpr auto kFinishLater = [](const Finish& a, const Finish& b) { return a.at > b.at; };
  struct Running {
    const Schedule* schedule = nullptr;
    std::size_t phase = 0;
    std::int64_t rep = 0;
    std::int64_t outstanding = 0;
    sim::Time step_start;
    sim::HandlerId done;
    std::uint64_t arg = 0;
    bool active = false;
    bool alone = false;       // nothing else in flight when the current step started
    std::uint64_t mark = 0;   // steps_started_ when it started
  };

  void on_drain(sim::Engine& e, std::uint64_t);
  void on_arrival(sim::Engine& e, std::uint64_t owner);
  void on_step(sim::Engine& e, std::uint64_t owner);
  void start_step(std::uint32_t owner);
  void resolve_and_schedule();
  void push_finish(std::uint32_t slot);
  sim::ConstraintId constraint_for(fabric::LinkId l);

  sim::Engine& engine_;
  const fabric::Fabric& fabric_;
  NetworkConfig cfg_;
  sim::MaxMinSystem solver_;
  std::vector<std::uint32_t> link_constraint_;  // LinkId -> constraint index + 1 (0: none)
  std::vector<sim::ConstraintId> constraints_;
  std::vector<Flow> flows_;                  // slots; the dead ones are in free_flows_
  std::vector<std::uint32_t> free_flows_;
  std::size_t live_flows_ = 0;               // flows still sending
  std::vector<std::uint32_t> flow_of_var_;   // solver variable index -> slot
  std::vector<Finish> finishes_;             // min-heap on `at`, lazy
  std::vector<std::uint32_t> drained_;       // scratch of on_drain()
  // The links of the flows, each once with the queue pairs crossing it; cleared when none is left.
  std::vector<std::pair<fabric::LinkId, std::uint32_t>> flow_links_;
  std::vector<std::pair<fabric::LinkId, std::uint32_t>> merged_;  // scratch: a transfer's links
  std::vector<fabric::LinkId> reps_;                                // scratch: its constraints' links
  std::vector<std::size_t> path_ends_;                              // scratch: where each pair's path ends
  std::vector<std::uint32_t> link_flows_;   // flows on each link (UGAL's load)
  PendingLoad pending_;                     // UGAL's lookahead over the step being routed
  std::uint64_t steps_started_ = 0;
  std::vector<Running> running_;
  LinkLoad load_;
  sim::HandlerId drain_id_, arrival_id_, step_id_;
  sim::EventHandle next_drain_;
  std::vector<fabric::LinkId> scratch_;
  // The links and bytes of the last step started alone (Running::alone), in route order:
  // its repetitions add them again without re-routing (UGAL's choices depend on the load).
  std::vector<std::pair<fabric::LinkId, double>> alone_step_;
  /// A latency_along step's flows (kNoFlow: a transfer without bytes), which all take the
  /// mean of the step's latencies once the step is laid out (Phase::latency_along).
  std::vector<std::uint32_t> along_;
  static constexpr std::uint32_t kNoFlow = ~0U;
  std::uint64_t flows_started_ = 0;
  std::uint64_t solves_ = 0;
  double max_link_ratio_ = 0.0;
};

// kMaxFlowTransfers and kMaxRoutedPaths: collective.hpp (the planner sizes its rings by them).

/// A step with more paths to route than kMaxRoutedPaths, in either network model.
class PathLimitError : public sim::LimitError {
 public:
  using sim::LimitError::LimitError;
};

/// Throws PathLimitError when a phase of `s` would route more than kMaxRoutedPaths paths.
void check_paths(const Schedule& s, const NetworkConfig& cfg);

/// The largest number of transfers in one phase of `s`.
std::size_t most_transfers(const Schedule& s);

/// Time of `s` alone on the flow-level model (a fresh engine). Fills `load` when given.
/// Throws sim::LimitError when a phase holds more than kMaxFlowTransfers transfers.
sim::Time flow_time(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s, LinkLoad* load = nullptr,
                    double* max_link_ratio = nullptr);

/// The in-network reductions this fabric and configuration offer: NVLS when cfg.nvls and
/// the nodes have an NVLink switch (not a mesh), SHARP when cfg.sharp.
InNetwork in_network(const fabric::Fabric& f, const NetworkConfig& cfg);

/// The fastest algorithm for `op` by the analytical model ("auto"), among algorithms_for()
/// with in_network(f, cfg): it may be nvls or sharp, so plan it with the plan() overload
/// that takes in_network(f, cfg).
Algorithm choose_algorithm(const fabric::Fabric& f, const NetworkConfig& cfg, Op op,
                           const std::vector<std::int64_t>& ranks, sim::Bytes size);
/// The same, timing the candidates with `timer` (whose routes the next choice for the same
/// ranks at another size reuses).
Algorithm choose_algorithm(AnalyticalTimer& timer, Op op, const std::vector<std::int64_t>& ranks, sim::Bytes size);
/// The same for communicators that must all run one algorithm (the groups of one kind in a
/// training step, one schedule; one communicator per way of lying on the nodes): among the
/// candidates every one of them can plan, each communicator timed alone, as NCCL's tuner
/// times its own, the one whose slowest communicator is fastest.
Algorithm choose_algorithm(AnalyticalTimer& timer, Op op, const std::vector<const std::vector<std::int64_t>*>& communicators,
                           sim::Bytes size);

}  // namespace clustersim::network
