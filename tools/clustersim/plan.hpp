// `clustersim plan SCENARIO --deadline 90d [--budget 40MUSD] [--capex-budget 500MUSD]`: the cheapest ways to train
// the scenario's first job (its model, batch and train_tokens) by a deadline.
//
// Search space (every combination; each is a point):
//   nodes       --nodes (a list, or a range a:b:x2 as in `sweep`), default the scenario's
//               cluster.nodes x {1/4, 1/2, 1, 2, 4} (whole nodes, at least one);
//   topology    --topologies, default the scenario's and, for a Clos (fat_tree, rail_clos),
//               the other Clos with the same radix, tiers and oversubscription (a torus or
//               dragonfly is sized by its own keys: name it with --topologies, and set them);
//   tp          powers of two up to the node's GPUs (the scale-up domain), at most 64;
//   pp          powers of two up to the model's layers + 2, at most 64; on a node whose GPUs
//               are not a power of two, also its GPUs' odd factor times powers of two
//               (72 GPUs: 9, 18, 36), which dp would hold otherwise, dividing no batch;
//   dp          the rest: the job takes every GPU of the cluster, dp = GPUs / (tp cp pp);
//               cp, ep, micro_batch and global_batch stay the scenario's; virtual_stages
//               stays the scenario's where the interleaved schedule allows it, else 1.
// Each point is the scenario with those keys set (after the command's own --set), the
// analytical network model (network.model=analytical) and, when the scenario has failures,
// --replications replications of the failure model; it is loaded (a job that does not fit
// in HBM, a parallelism that does not divide, a fabric that cannot be built are infeasible
// points, with the reason) and run as `clustersim run` would (compute_run), on --jobs
// threads. The points share nothing, so the result does not depend on the thread count.
//
// Per point: time to train (s; with the failure model's ETTR when the scenario has
// failures) and total cost (USD: the training run's GPU-hours at the cluster's cost per
// GPU-hour, models/cost/cost.hpp), with step time, MFU, ETTR, capex, cost per GPU-hour,
// cost per million tokens and peak facility power. A feasible point meets the deadline when
// its time to train is at most --deadline and is within budget when its total cost is at
// most --budget (the run's cost: GPU-hours at the cost per GPU-hour) and its capex at most
// --capex-budget (the purchase: GPUs, hosts, spares, switches, cables, optics). The Pareto front is the set of feasible points that no other feasible
// point beats on both time and cost (ties kept), among those within the capex budget (the
// hardware that can be bought; the deadline and --budget only mark points); the answer is the cheapest point that meets
// the deadline and the budget. When there is none, the table names the cheapest point that
// meets the deadline when the budget rules them all out, else the fastest feasible point (and
// with a budget the cheapest one too), and
// when no point is feasible, the most common reasons (or plan.csv's, when --out wrote it).
//
// Files (--out DIR): plan.csv, one row per point in search order, columns
//   point,nodes,gpus,topology,tp,cp,pp,dp,ep,virtual_stages,status,step_time_s,mfu,ettr,
//   time_to_train_s,total_cost_usd,usd_per_million_tokens,capex_usd,usd_per_gpu_hour,
//   peak_facility_power_w,meets_deadline,within_budget,pareto,best,reason
// (empty cells where a value does not apply, true/false flags), and plan.json (the same
// points and the search space, the deadline and the budget). tools/plot.py reads plan.csv.
//
// LIMITATIONS: the job always takes the whole cluster (no spare capacity for other jobs);
// the analytical network (the flow model's contention is not seen); the first job only
// (the scenario's other jobs are left out of every point, and said so);
// the cost of a plan is its GPU-hours at the cluster's amortised $/GPU-hour, not the
// purchase of the cluster (capex is a column).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::tools {

struct PlanArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
  sim::Time deadline;
  std::optional<sim::Money> budget;
  std::optional<sim::Money> capex_budget;  ///< the purchase: capex_usd at most this
  std::string nodes;                    ///< "" (default), "a,b,c" or "a:b:x2"
  std::vector<std::string> topologies;  ///< empty: the default
  std::int64_t replications = 5;        ///< of the failure model, per point (unless given: the scenario's when > 1)
  bool replications_given = false;      ///< --replications written: refused without failures
  int jobs = 0;                         ///< threads; 0: the hardware's
  /// Flow-hash draws per point whose routes are hashed: the point takes the run of median
  /// step time (run_ecmp_draws), so that one draw's collisions do not order the designs.
  std::int64_t ecmp_seeds = 1;
};

struct PlanPoint {
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::string topology;
  std::int64_t tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, virtual_stages = 1;
  bool feasible = false;
  std::string reason;  ///< why not feasible
  double step_time_s = 0.0;
  std::optional<std::int64_t> ecmp_seed;  ///< the median draw's fabric.ecmp_seed (PlanArgs::ecmp_seeds > 1, hashed routes)
  double mfu = 0.0;
  std::optional<double> ettr;
  double time_to_train_s = 0.0;
  std::optional<double> total_cost_usd;
  std::vector<std::string> unpriced;  ///< why total_cost_usd is absent (models/cost/cost.hpp)
  std::optional<double> usd_per_million_tokens;
  std::optional<double> capex_usd;
  std::optional<double> usd_per_gpu_hour;
  double peak_facility_power_w = 0.0;
  bool meets_deadline = false;
  bool within_budget = false;
  bool within_capex_budget = true;  ///< --capex-budget: hardware over it is no candidate at all
  bool pareto = false;
};

struct Plan {
  std::string scenario;  ///< name, for titles
  std::string job;       ///< the planned job's name
  std::string model;
  double train_tokens = 0.0;
  double deadline_s = 0.0;
  std::optional<double> budget_usd;
  std::optional<double> capex_budget_usd;
  std::vector<std::int64_t> node_counts;
  std::vector<std::string> topologies;
  std::vector<std::int64_t> tps;
  std::vector<std::int64_t> pps;
  std::int64_t replications = 0;  ///< 0: the scenario has no failures
  std::int64_t ecmp_seeds = 1;    ///< PlanArgs::ecmp_seeds
  std::int64_t sweep_points = 0;  ///< points of the scenario's sweep block (not applied by plan)
  /// The scenario's first error when it does not hold as written (what the search sets, a
  /// job larger than its cluster say), said with the table; empty when it holds.
  std::string base_problem;
  std::vector<PlanPoint> points;  ///< in search order
  std::optional<std::size_t> best;  ///< cheapest meeting the deadline and the budget
  double wall_s = 0.0;
};

/// Builds the search space from the scenario, runs every point, marks the front and the
/// best. Throws config::InputError when the scenario is invalid or has no job with
/// train_tokens, an option is malformed, or nothing can be priced: the node type has no
/// price (before any point is run; economics.node_price sets one), or no feasible point
/// has a total cost (a part of every design's network is not in the priced table).
Plan plan(const PlanArgs& args);
/// What is wrong with --nodes' text (its grammar, its counts), or "" (an empty text is the default).
std::string node_counts_problem(const std::string& text);

/// Marks `pareto` on the feasible points with a cost within the capex budget that no other
/// such point beats on both time and cost; exposed for tests. O(n log n).
void mark_pareto(std::vector<PlanPoint>& points);

/// The table; `files_written`: --out wrote plan.csv (an all-infeasible plan points to its
/// reasons there, else prints the most common ones).
std::string plan_table(const Plan& p, bool files_written = false);
/// Why no point is chosen ("No plan meets the deadline; the fastest takes ..."), a line or a
/// few; empty when one is. `files_written`: plan.csv holds the points' reasons.
std::string no_plan_text(const Plan& p, bool files_written);
std::string plan_csv(const Plan& p);
config::Json plan_json(const Plan& p);

}  // namespace clustersim::tools
