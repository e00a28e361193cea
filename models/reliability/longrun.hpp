// The long horizon: failures, repairs, spares and checkpoint/restart of training jobs over
// days to months, in closed form between events.
//
// Each failure process is one unit (a GPU, a node, a switch, a cable, a job) with times
// between failures drawn from its component's law with the configured mean, divided by
// the unit's rate multiplier (per-GPU heterogeneity). Installed units start in service
// (failures.fleet_age: in_service, the default): the first failure comes after the residual
// of a life (the stationary excess law), so the fleet fails at the configured rate from the
// start whatever the law; with fleet_age new they start at age 0 (infant mortality shows).
// A replaced part, a job's software, a retired node's replacement start new. GPU and node units fail only while
// their node serves a job, and not while that job waits for a node (no spare for a failed
// one): its nodes' units and its own (software) stop with the time they have left, as a
// spare's do, and go on when it restarts; a spare taking a failed node's place runs nothing
// before the restart begins (its clocks start then, not while the failure is being detected);
// switches and cables always fail. A job's own
// units run on its running time: they stop from its interruption until its restart begins
// (detection, diagnosis, any wait), the failed one with a new life drawn to run from there,
// so a rate per job-day is per day the job runs (or restarts), whatever the law. Failures are engine events; nothing
// happens between them, so a job's progress is advanced in closed form: running since s
// with checkpoint interval tau and blocking checkpoint time delta, at time t it has
// committed floor((t - s) / (tau + delta)) tau more seconds of training and would lose the
// rest (tau a whole number of the job's steps: a trainer saves between steps). A 54-day run of a 16,384-GPU job is a few hundred events per replication; a queue
// adds a few events per job (submit, start, finish).
//
// A failure that stops a job (effect restart): the work since the last completed
// checkpoint is lost (none for a planned one; a write under way is lost too, but counted as
// checkpoint time, the time it took), the job is down for detect + diagnose +
// restart + checkpoint read (each a fixed time or a law, failures.repair), and longer if a failed node (hardware) has no hot spare to replace it:
// (a failure during the restart and read aborts it: one more interruption, detection and
// restart again; one during detection or diagnosis joins the failure being handled)
// the job then waits until a node comes back from repair (replace time, which starts once
// the failure is detected and diagnosed). Repaired nodes
// return to the spare pool (with scheduler.shrink, a job with no spare restarts instead with
// the data-parallel replicas whose nodes are all there, at that share of its throughput, and
// grows back once a replica is whole again, when the time it saves exceeds the stop: it
// checkpoints, stops and restarts on them, losing no work, with no interruption counted);
// a node with retire_after failures within retire_window is retired instead and a new one
// (fresh rate multipliers) arrives after the replace time.
//
// Heterogeneity (power_law): each GPU's rate multiplier is Pareto(alpha) scaled to mean 1,
// x_m = (alpha - 1) / alpha; the installed fleet's multipliers are then divided by their
// sample mean, so that the fleet fails at the configured rate (with alpha near 1 a sample
// mean is usually well below 1, which would silently lower every rate). The top fraction p of a Pareto population holds a share
// p^(1 - 1/alpha) of the total, so "the top p cause share y" gives
// alpha = 1 / (1 - ln y / ln p) (p = 1%, y = 50%: alpha = 1.177). That share is the infinite
// population's: a fleet of n GPUs cannot hold the tail beyond its largest draws, and its top
// 1% carries less (about 42% at n = 131,072; the run reports the share it drew). A repaired
// node keeps its GPUs' multipliers (a repair mends the failure, not what makes a node fail
// more than others: retire_after is for those), and while it waits in the spare pool its
// units do not age (see above), so a fleet with spares fails somewhat below the configured
// rate (Llama 3's 54 days, llama3-405b-54d.yaml with its 32 spares: ~365 interruptions
// against the 419 the rates come from; ~398 with every GPU alike, the rest the job's
// downtime, when its own units stop and failures join the stop under way). The more spares,
// the further below: a repaired node joins the back of the pool (first in, first out), so a
// large pool keeps the failure-prone nodes, which come back most often, out of service
// longest (there, 400 spares: ~358 interruptions). The job's
// mtbf_s and checkpoint.interval auto read the configured rates, not that lower one. A new
// fleet (fleet_age new) of a law that is not memoryless counts each unit with the failures it
// expects over the job's run instead (expected_renewals: GPU and node units from their
// burn-in, every life in service having survived one; switches and cables over the window of
// their life the job runs in), the run being from the job's submission to the horizon or to
// the end of its failure-free training, whichever comes first: M(t)/t
// times the in-service rate, t the run in mean lives (a Weibull of shape 0.5 with a mean life
// of 3,300 days, new over 54 days: 11 times). A job's own units (per: job) start new with
// the job whatever the fleet's age, and count so too.
//
// Checkpoint interval auto: Daly's higher-order optimum (J. T. Daly, "A higher order
// estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006, eq. 37)
//     tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta  (delta < 2M)
//     tau = M                                                                         (delta >= 2M)
// from the job's expected MTBF M under the configured rates (unplanned failures that restart
// it) and the blocking checkpoint time delta. Where delta << M it is Young's and Daly's
// first-order sqrt(2 delta M) - delta; where the write is long against the MTBF, the first
// order undershoots (it was clamped to tau >= delta: 95 min where the simulated best was
// about 150 and this gives 130, for a 95-min write and a 3.1 h MTBF).
//
// ETTR (effective training time ratio) = training time that counts / elapsed wall time.
// At the horizon, the training since the last checkpoint is neither saved nor lost yet: it
// counts at the share a checkpoint (or the end of training) is expected to save before a
// failure takes it back, exp(-T / M), T the time to that save and M the job's MTBF (all of
// it for a job no failure reaches, none where the interval outlasts the MTBF many times
// over; with asynchronous writes, the cycle whose background write still runs and the one
// after it, each at its own T). Goodput = trained tokens / elapsed time; lost GPU-hours =
// GPUs x (lost work + downtime), by the cause of the interruption, and under
// `unsaved_at_horizon` the rest of that training, which a failure is expected to take back
// after the horizon; checkpoint GPU-hours = GPUs x the time blocked in the writes that took
// place, whether or not a failure then cut them short. Training, lost and checkpoint
// GPU-hours add up to the job's GPU-hours, however long the writes (within the error of a
// change of throughput mid-cycle, set_degrade(), for a job degraded by a rerouted element).
//
// The scheduler. Jobs enter a queue at their submit time (scenario order among jobs
// submitted together) and start when enough nodes are free: `fifo` starts them strictly in
// queue order; `backfill` is EASY backfilling (Lifka, "The ANL/IBM SP scheduling system",
// JSSPP 1995; Mu'alem and Feitelson, IEEE TPDS 2001): when the head job does not fit, it gets
// a reservation at the earliest time enough nodes free up, counted from the running jobs'
// failure-free end times (a down job's from a restart now; with the nodes it waits for from
// repair) and the other nodes in repair, back after the mean replace time; a later job may start at once if
// it fits in the free nodes and either ends (failure-free) before that reservation or uses
// only nodes the head job will not need then. A failure can still delay a job past its
// estimate and so the head job past its reservation, as a user's wall-time estimate can. A
// finished job frees its nodes; a hardware failure takes a replacement from the free nodes
// first (the running jobs come first), and the queue may use free nodes only beyond
// `spare_nodes`, the hot spares kept for replacements. A job's first start costs nothing
// (the restart time is paid on restarts).
//
// Placement: physical nodes are numbered in fabric order (the cluster's nodes, then the
// spares, then nodes bought to replace retired ones); a pod or group of the fabric
// (`block_nodes`: the nodes whose NICs meet below the top switch tier) is a contiguous range.
// A job missing nodes takes back its own (those it started on) when they are free, before
// any other free node, so that a node back from repair or reconnection returns to the job
// it left. A starting job takes its nominal range (first_node .. + nodes: where its step time was
// simulated) when it is free; else the free contiguous range of the fabric's nodes (a spare
// or a replacement has no place in it) that spans the fewest pods beyond the least it must
// (a job of at most a pod inside one pod: its pipeline and data-parallel groups stay under
// the pod's switches), then the tightest fit, then the lowest start; else, fragmented, the
// lowest-numbered free nodes (the fabric's first, then spares). TP stays inside a node
// (the job's rank order). The job's step time is the one simulated on its nominal range
// and is not recomputed: on a regular fabric (Clos, dragonfly) a contiguous range of the
// same shape costs the same; a range straddling more pods, or a fragmented one, would be
// slower than modelled (`fragmented_starts` counts those).
//
// Utilisation = busy GPU-hours / available GPU-hours, where a GPU is busy while a job runs
// on it (training or checkpointing, not while down or waiting; a shrunk job counts the
// GPUs of its whole replicas) and available = the cluster's GPUs (spares apart) x the
// elapsed time. Per job: queue wait = first start - submit; ETTR, goodput and time to train
// count from the job's first start.
//
// Shared storage: every job writes its checkpoints to the same storage of
// `write_bandwidth` B. A job writing alone takes w0 = S / B. Writes of different jobs are
// not synchronised, so the model takes the mean field: job k writes a share
// d_k = w_k / (tau_k + delta_k) of its running time (its write duty cycle, at most 1), and
// while job j writes, on average sum_{k != j} d_k other running jobs write too; with the
// bandwidth shared equally among writers (processor sharing)
//     w_j = w0_j (1 + sum_{k running, k != j} d_k),
// a fixed point (each w_k depends on the others' through d_k) found by iterating from the
// alone times (the iteration increases monotonically and is bounded by d_k <= 1). It is
// solved again whenever the set of running jobs changes; a job whose write time changes is
// rebased at that instant (committed cycles kept, the cycle in progress continued, the
// rest of a write at the new speed). The interval tau is planned once from the write time
// alone. Checkpoint reads at restart use read_bandwidth alone.
//
// Burn-in (scheduler.burn_in b): every node entering the fleet is exercised for b before it
// serves jobs or joins the spares: the installed fleet before the horizon starts (it costs
// no time inside it), a node bought to replace a retired one, and a node back from repair
// (its replaced part is new). Its GPU and node units age by b (their operating clocks run);
// a unit that fails during burn-in is caught there (replaced, a fresh life drawn; the
// repair is taken to fit inside b; the failure neither interrupts a job nor counts towards
// retirement). Under a Weibull law with shape < 1 (infant mortality) the hazard falls with
// age, so aged units fail less in service; under the exponential law burn-in changes
// nothing but the time it takes. An installed fleet in service (fleet_age in_service) is
// past its infant mortality: burning it in catches only its residual failures; burn-in is
// for a new fleet (fleet_age new) and for the nodes that enter it later. Planned (maintenance) clocks do not run in burn-in.
//
// Network elements with effect reroute (per switch or link): each multi-node job that the
// element reaches (see below) keeps the
// share of its throughput its Degradation class for that unit gives (the step simulated on
// the fabric without the element), from the failure until the element is back (replace time
// for hardware, detect + diagnose + restart otherwise); concurrent ones multiply. An element of no
// class (a leaf, an access cable), and a router of a class that holds the job's NICs
// (FabricScope::holds_endpoint), restarts the job. The throughput
// lost while running degraded counts in lost_gpu_hours under the element's class.
//
// Cut-off nodes: while a switch or cable that holds NICs is down (a Clos leaf, a torus or
// dragonfly router, a NIC's cable; a hardware failure until it is replaced, one with effect
// reroute until it is back), those NICs (FabricScope::nics_behind) are cut off. A node with
// a NIC cut off (scheduler.nic_loss drain, the default: its health check fails) or with every
// NIC cut off (keep; on a plain Clos, behind its leaf; on a torus, its router) serves no
// multi-node job: a free one leaves the pool, and a multi-node job on one loses it as to a
// node failure (it takes a hot spare, or waits, or with shrink restarts on its whole
// replicas); a single-node job keeps its node, whose work needs no fabric. The node rejoins
// the pool when it is cut off no more. With keep, a node with a NIC left (a rail-optimized
// leaf holds one NIC of each node under it) keeps serving at full speed: NCCL sends its
// other GPUs' traffic through the NICs it has, slower, which is not modelled. Without a
// scope nothing is cut off.
//
// Which jobs a switch or a cable reaches (LongRunInputs::scope): only the running
// multi-node jobs whose traffic can cross it, judged from the nodes they run on
// (FabricScope). On a Clos: a leaf, the jobs with a NIC on it; an aggregation switch, those
// whose traffic leaves their leaves, with a node in its pod; a top switch, those whose
// traffic leaves their leaves (2 tiers) or their pod (3 tiers); on a rail-optimized Clos
// every job of two nodes or more leaves its leaves, since a direct all-to-all goes from NIC
// i to NIC j. On a torus (dimension order), the routers inside the job's per-dimension
// hull; on a dragonfly with minimal routing, the routers holding its NICs, or every router
// of its groups when it spans several. A NIC's cable reaches the job on that node; a cable
// between switches, the jobs that cross both. A job's MTBF counts the switches and cables
// its nominal range crosses (with reroute, also those of no class whose failure cuts it
// off: its leaves or routers and its NICs' cables). A dragonfly with Valiant or UGAL
// routing has no scope: every multi-node job. Cables are the fabric's cables between boxes
// (fabric::failure_cables): NVLink and GPU-to-NIC links fail with their node.
//
// LIMITATIONS: the scope is conservative (a job counts every element its routes could take:
// a job with a spare or a replacement node, whose place in the fabric is not modelled,
// crosses every switch and every cable between switches (a NIC's cable, only its own
// node's); on a Clos a job is taken to use every aggregation switch of its pods
// and every top switch once its traffic leaves its leaves or pod (ECMP spreads it), whether
// or not its collectives send across rails; on a torus every router of its hull, a box
// that holds routes it may not take; on a dragonfly every router of its groups), and a
// dragonfly with Valiant or UGAL routing has none (every multi-node job); with reroute a
// job's factor is the mean over up to 3 elements of the class that it crosses (routers:
// that it passes through without holding its NICs), computed on its nominal nodes (copies
// of a job at the same offset in their pod or group share them) and kept when it is
// re-placed; idle spares do not fail or age, nor does a spare that replaces a failed node
// before the restart begins, but a job's other nodes do while it is down (a failure there
// joins the stop), and a node that fills a slot of a job running shrunk serves (and may
// fail) from then on, though the job only uses it once it grows back;
// a shrunk job's throughput is taken in proportion
// to its replicas (the global batch spread over fewer replicas, each as fast); the jobs'
// step time is that of their nominal placement on the healthy cluster (see Placement); the
// storage model is a mean field (jobs whose
// checkpoints are phase-locked, same interval started together, would collide every time,
// up to n times slower; an asynchronous job rebased while a background write is pending
// counts that checkpoint as written, and one whose contended write outlasts its interval is
// not slowed further, its writes overlapping); an asynchronous job whose background write
// outlasts the interval asked for snapshots at the raised interval (the write's time) all
// along, the first snapshot after a restart too, when nothing is being written: where that
// write outlasts the MTBF (a 10 h write, a 5 h MTBF) it saves less than blocking writes at
// the interval asked for would; the scheduler has no priorities, preemption or
// reservations beyond EASY's one.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/reliability/config.hpp"

namespace clustersim::reliability {

/// How a job fares while one network element of a class is down and the fabric routes
/// around it: units first .. first + count - 1 of the switches (is_switch) or of the links,
/// numbered as LongRunInputs counts them; the job keeps `factor` of its throughput
/// (healthy / degraded step time, tools/clustersim/degraded.hpp). A unit of no class cuts
/// the job off.
struct Degradation {
  std::string name;
  bool is_switch = true;
  std::int64_t first = 0;
  std::int64_t count = 0;
  double factor = 1.0;
};

/// The longest run without a horizon (100 years): jobs unfinished then are reported so.
inline constexpr double kLongestRun_s = 100.0 * 365.25 * 86400.0;

struct JobProfile {
  std::string name;
  std::int64_t first_node = 0;  ///< nominal placement: first_node .. first_node + nodes - 1 (see Placement)
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::int64_t dp = 1;  ///< data-parallel replicas, each on gpus / dp consecutive GPUs (for shrinking)
  double tokens_per_s = 0.0;               ///< healthy throughput
  std::optional<double> train_tokens;      ///< none: train until the horizon
  double checkpoint_bytes = 0.0;
  double submit_s = 0.0;                   ///< enters the queue
  std::vector<Degradation> degradations{};  ///< for components with effect reroute
  double step_s = 0.0;  ///< one healthy step: checkpoints fall between steps (0: anywhere)
};

/// Which network elements a job's traffic can cross, judged from the nodes it runs on
/// (physical ids; -1: none), so that a switch or cable failure stops only the jobs it
/// reaches. A job with a node of unknown place (a spare or a replacement: physical node >=
/// nodes) counts as crossing every switch and every cable between switches (but no other
/// node's NIC cable, and it holds no endpoint). Switch units are numbered in the fabric's vertex
/// order; cable units as fabric::failure_cables lists them (`cables`).
///
/// Clos: a leaf reaches the jobs with a NIC on it; an aggregation switch, the jobs with a
/// node in its pod whose traffic leaves their leaves; a top switch, those whose traffic
/// leaves their leaves (2 tiers) or their pod (3 tiers). Traffic leaves a job's leaves when
/// it has more than one leaf, or, on a rail-optimized Clos, more than one node (a direct
/// all-to-all sends from NIC i to NIC j, through the switches above). Units: the leaves, the
/// aggregation switches (3 tiers, pod by pod), then the top tier.
///
/// Torus (dimension-order routing, the shortest way round each ring): a route between two
/// of the job's routers moves along one dimension at a time, through coordinates that lie,
/// in every dimension, on the shortest arc between two of the job's coordinates there. So
/// the job crosses the routers whose every coordinate is in its "hull" for that dimension:
/// its coordinates there plus the gaps between consecutive ones (round the ring) of at most
/// half the ring (a longer gap is never the shortest way). Units: routers in vertex order,
/// the first dimension fastest.
///
/// Dragonfly (minimal routing only: Valiant and UGAL may take any group): a job inside one
/// group crosses the routers holding its NICs (local links join every pair directly); a
/// job over several groups, every router of its groups (the hop to the router owning the
/// global link). Units: routers, group by group.
///
/// A cable reaches the job on the node of its NIC (an access cable), or the jobs that cross
/// both its ends.
struct FabricScope {
  enum class Kind : std::uint8_t { clos, torus, dragonfly };
  Kind kind = Kind::clos;
  std::int64_t nodes = 0;  ///< the fabric's nodes: physical nodes 0 .. nodes - 1
  std::int64_t nics_per_node = 1;
  // Clos.
  bool rail = false;
  std::int64_t rails = 0;  ///< NICs per rail unit (a node's or a tray's); 0: nics_per_node
  std::int64_t tiers = 2;
  std::int64_t leaf_down = 1;       ///< endpoints per leaf (d1)
  std::int64_t leaves = 0;
  std::int64_t leaves_per_pod = 0;  ///< 3 tiers (d2)
  std::int64_t aggs_per_pod = 0;    ///< 3 tiers (u1)
  std::int64_t aggs = 0;            ///< 3 tiers
  std::int64_t tops = 0;
  std::int64_t routers = 0;  ///< torus and dragonfly: the switch units
  // Torus: the ring sizes; node n's NICs on router n.
  std::vector<std::int64_t> dims;
  // Dragonfly: routers per group (a), endpoints per router (p: NIC e on router e / p); node
  // n's NICs on routers node_routers[n].first .. .second.
  std::int64_t routers_per_group = 0;
  std::int64_t hosts_per_router = 1;
  std::vector<std::pair<std::int64_t, std::int64_t>> node_routers;

  /// The cable units (fabric::failure_cables, in that order): an access cable joins NIC
  /// `nic` (an endpoint) of node `a` to switch unit `b`; any other joins switch units a < b.
  struct Cable {
    bool access = false;
    std::int64_t a = 0;
    std::int64_t b = 0;
    std::int64_t nic = -1;
  };
  std::vector<Cable> cables;

  /// The switch units.
  [[nodiscard]] std::int64_t switches() const;
  /// Whether the traffic of a job on `job_nodes` can cross switch unit `unit`, and how many
  /// switch units it can cross.
  [[nodiscard]] bool crosses(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const;
  [[nodiscard]] std::int64_t crossed(const std::vector<std::int64_t>& job_nodes) const;
  /// Clos: of which leaves.
  [[nodiscard]] std::int64_t crossed_leaves(const std::vector<std::int64_t>& job_nodes) const;
  /// Whether switch unit `unit` holds a NIC of one of the job's nodes (a leaf or router it
  /// plugs into): its failure cuts the job off, whatever routes around it. A node of unknown
  /// place holds none.
  [[nodiscard]] bool holds_endpoint(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const;
  /// The same for every switch unit, in one pass over the job's nodes.
  [[nodiscard]] std::vector<bool> endpoint_flags(const std::vector<std::int64_t>& job_nodes) const;
  /// The switch unit NIC `endpoint` (node x nics_per_node + i, a fabric node's) plugs into.
  [[nodiscard]] std::int64_t nic_switch(std::int64_t endpoint) const;
  /// The NICs (endpoints, increasing) that a switch unit (`is_switch`) or a cable unit holds:
  /// while it is down they are cut off from the fabric. A Clos leaf's, a torus or dragonfly
  /// router's, a NIC's cable's; none for any other element.
  [[nodiscard]] std::vector<std::int64_t> nics_behind(bool is_switch, std::int64_t unit) const;
  /// Whether the job's traffic can cross cable unit `unit`, and how many cable units. A
  /// node of unknown place crosses every cable between switches, but no NIC's cable but its
  /// own (a spare's is not a unit).
  [[nodiscard]] bool crosses_cable(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const;
  [[nodiscard]] std::int64_t crossed_cables(const std::vector<std::int64_t>& job_nodes) const;
  /// Per switch unit, and per cable unit, whether the job crosses it: what crosses() and
  /// crosses_cable() say, in one pass, O(units + job nodes), for loops over every unit.
  [[nodiscard]] std::vector<bool> crossed_switch_flags(const std::vector<std::int64_t>& job_nodes) const;
  /// `switch_flags`: crossed_switch_flags(job_nodes), which the caller often has already.
  [[nodiscard]] std::vector<bool> crossed_cable_flags(const std::vector<std::int64_t>& job_nodes,
                                                      const std::vector<bool>& switch_flags) const;
};

struct LongRunInputs {
  const FailuresConfig* failures = nullptr;
  SchedulerConfig scheduler;
  CheckpointConfig checkpoint;
  std::int64_t nodes = 0;  ///< in the cluster (spares are extra)
  std::int64_t gpus_per_node = 0;
  std::int64_t switches = 0;
  std::int64_t links = 0;  ///< cables between boxes (fabric::failure_cables), the link units
  std::int64_t block_nodes = 0;  ///< nodes per pod or group, for placement (0: none)
  /// Per fabric node, the first and last block (pod or group below the top tier) its NICs
  /// are in, non-decreasing with the node: what placement counts where a block boundary
  /// falls inside a node (GB200 NVL72's trays: a pod of 14.2 racks). Empty: blocks of
  /// block_nodes whole nodes.
  std::vector<std::pair<std::int64_t, std::int64_t>> node_blocks;
  /// The fabric's layout: switch and cable failures stop only the jobs that cross the
  /// element, and a job's MTBF counts only those. None (no fabric, or a dragonfly with
  /// non-minimal routing): a switch or cable failure stops every job of more than one node.
  std::optional<FabricScope> scope;
  std::vector<JobProfile> jobs;
  double horizon_s = 0.0;  ///< 0: until every job has trained its tokens
  std::int64_t replications = 1;
  std::uint64_t seed = 1;
  /// Called now and then with the share of the run done (replications, and simulated time
  /// within one), from 0 to 1; for a progress display. Results do not depend on it.
  std::function<void(double done)> progress;
};

/// Mean and 95% confidence half-width over replications (NaN half-width for one).
struct Estimate {
  double mean = 0.0;
  double ci95 = 0.0;
};

struct JobSummary {
  std::string name;
  Estimate interruptions;
  std::map<std::string, Estimate> by_cause;
  Estimate ettr;
  /// Each replication's ETTR, in order (NaN where the job did not start): replication r of
  /// two designs run on one seed draws the same failure streams, so their difference is
  /// estimated from the pairs (tools/clustersim compare) more tightly than from two intervals.
  std::vector<double> ettr_by_replication;
  Estimate goodput_tokens_per_s;
  Estimate time_to_train_s;  ///< a finished replication's own; an unfinished one's time so far plus
                             ///< its remaining work (beyond what counts in its ETTR) at the ETTR
                             ///< pooled over the replications (its interval counts that ETTR's);
                             ///< NaN: no tokens, or no progress that counts (under a millionth of the
                             ///< work per replication), or a projection past the clock's range
                             ///< (292 years: projection_past_clock)
  bool projection_past_clock = false;  ///< the projection was dropped: over 292 years
  double finished_share = 0.0;
  /// By the cause of the interruption, and kUnsavedAtHorizon: the training since the last
  /// checkpoint at the horizon that a failure is expected to take back after it.
  std::map<std::string, Estimate> lost_gpu_hours;
  /// GPU-hours the job's GPUs spent blocked writing checkpoints (not in lost_gpu_hours): the
  /// blocking part (delta) of each cycle of tau + delta, counted as the writes take place
  /// (a write a failure or the horizon cut counts for the part done).
  Estimate checkpoint_gpu_hours;
  double checkpoint_interval_s = 0.0;
  /// The interval asked for (fixed, or Young/Daly's) when an asynchronous write took longer
  /// and raised it (the next snapshot waits for the last write); NaN when not raised.
  double checkpoint_interval_asked_s = std::numeric_limits<double>::quiet_NaN();
  double checkpoint_write_s = 0.0;  ///< blocking time of one checkpoint, writing alone
  double mtbf_s = 0.0;              ///< expected, from the rates
  // The queue (replications where the job started, or finished, within the horizon; NaN: none).
  double started_share = 0.0;
  Estimate queue_wait_s;  ///< first start - submit
  Estimate start_s;       ///< first start
  Estimate end_s;         ///< finished
  Estimate fragmented_starts;  ///< starts on nodes that are not one contiguous range
  // Shared storage, averaged over the job's running time.
  Estimate checkpoint_blocking_s;  ///< blocking time of one checkpoint, contention included
  Estimate storage_slowdown;       ///< checkpoint write time / write time alone (>= 1)
};

struct TimelineEvent {
  double time_s = 0.0;
  std::string kind;   ///< failure, interruption, restart, repaired, retired, finished, start, burn_in, burned_in,
                      ///< regrow (a shrunk job stops to grow back),
                      ///< cut_off (a node behind a switch or cable that is down), reconnected,
                      ///< back (a switch or cable down until replaced or restarted returns)
  std::string cause;  ///< component class
  std::int64_t job = -1;
  std::int64_t node = -1;  ///< physical node id
  std::int64_t gpu = -1;   ///< physical GPU id (node x gpus_per_node + index)
  /// A switch or cable failure's unit (per switch: the fabric's switches in vertex order;
  /// per link: fabric::failure_cables' order) on its failure, its back, and the cut_off and
  /// reconnected of the nodes behind it; -1 for anything else.
  std::int64_t element = -1;
};

/// The most events the timeline keeps (about 100 MB): failure rates far above any component's
/// made it grow without bound (16 million events in 20 simulated days) until memory ran out.
inline constexpr std::size_t kMaxTimeline = 1'000'000;

struct LongRunResult {
  std::vector<JobSummary> jobs;
  std::map<std::string, Estimate> failures_by_cause;  ///< every failure, cluster-wide
  Estimate top1_failure_share;  ///< share of GPU failures on the 1% of GPUs that failed most (NaN: none failed)
  Estimate top1_rate_share;     ///< share of the fleet's GPU failure rate on its top 1% (expected)
  Estimate retired_nodes;
  Estimate utilisation;          ///< busy GPU-hours / available GPU-hours (see the header)
  Estimate busy_gpu_hours;
  Estimate available_gpu_hours;  ///< the cluster's GPUs (spares apart) x elapsed time
  Estimate burn_ins;             ///< burn-ins started within the horizon (repaired and new nodes)
  Estimate burn_in_node_hours;   ///< node-hours spent in burn-in within the horizon
  std::map<std::string, Estimate> burn_in_failures;  ///< caught in burn-in (the installed fleet's included)
  Estimate burn_in_failures_installed;               ///< caught by the installed fleet's burn-in, before t = 0
  double elapsed_s = 0.0;       ///< mean over the replications (each ends at the horizon, or when every job has trained)
  std::vector<TimelineEvent> timeline;     ///< replication 0, its first kMaxTimeline events
  std::uint64_t timeline_dropped = 0;      ///< replication 0's events beyond kMaxTimeline, not kept
  std::vector<std::int64_t> gpu_failures;  ///< replication 0, per physical GPU
  std::uint64_t events = 0;                ///< engine events processed, all replications
  std::uint64_t events_scheduled = 0;      ///< engine events scheduled (cancelled ones included)
  double heterogeneity_alpha = 0.0;  ///< 0: none
};

/// A problem with the failure configuration: key path below `failures` and a message.
struct ConfigProblem {
  std::string path;
  std::string message;
  std::string hint;
};
std::vector<ConfigProblem> check_failures(const FailuresConfig& f);

/// Daly's higher-order optimum checkpoint interval (see the header comment) for a blocking
/// write of `delta` seconds and an MTBF of `mtbf` seconds (both > 0).
double daly_interval(double delta, double mtbf);

/// The renewal function M(t) of a unit new at 0 whose lives follow `law` (its `shape`) with
/// mean 1: the expected failures in (0, t], each failed part replaced by a new one. M(t) = t
/// for an exponential law; a Weibull of shape below 1 fails early (M(t) > t while t is small).
/// Solved on a grid from the renewal equation M(t) = F(t) + int_0^t M(t - x) dF(x) (Xie's
/// Riemann-Stieltjes method, M. Xie, "On the solution of renewal-type integral equations",
/// Communications in Statistics B 18(1), 1989), 2,000 steps up to 20 mean lives and M(20) +
/// (t - 20) past them (M(t) - t has settled): within 1e-2 relative (1e-3 for t up to 40 in
/// the tests).
/// `burned_in` (mean lives): every life has survived a burn-in of that age first, its failures
/// counted from there (a life of the law conditioned on X > burned_in, less burned_in).
double expected_renewals(Distribution law, double shape, double t, double burned_in = 0.0);

/// The Pareto shape of the heterogeneity (0 when none).
double pareto_alpha(const Heterogeneity& h);

/// Runs `replications` independent replications.
LongRunResult simulate_long_run(const LongRunInputs& in);

/// A job's lost GPU-hours over every cause (the sum of their means: the mean of the sum).
double total_lost_gpu_hours(const JobSummary& s);

/// The key of JobSummary::lost_gpu_hours for the training since the last checkpoint at the
/// horizon that ETTR does not count (a failure is expected to take it back).
inline constexpr std::string_view kUnsavedAtHorizon = "unsaved_at_horizon";
/// The mean queue wait of the jobs that started in some replication (NaN when none did).
double mean_queue_wait_s(const LongRunResult& r);
/// The jobs that started in no replication (queued to the horizon): what the mean queue
/// wait leaves out.
std::int64_t jobs_never_started(const LongRunResult& r);

}  // namespace clustersim::reliability
