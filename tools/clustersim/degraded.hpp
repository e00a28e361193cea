// A job's step time while one network element is down and the fabric routes around it.
//
// The long-horizon model (models/reliability/longrun.hpp) needs, for each failure class a
// fabric can route around, how fast each job trains until the element is repaired. For a
// switch above the leaves (a spine or aggregation switch, a core switch) and for a
// switch-to-switch cable (leaf-spine, spine-core, torus, dragonfly local and global), the
// job's step is simulated again on a copy of the fabric with that element failed: routes
// that crossed it are recomputed around it (Fabric::route's breadth-first search), so the
// collectives that used it share the surviving links. The factor is healthy step time /
// degraded step time, the share of its throughput the job keeps.
//
// Which element fails matters (a core switch that the job's rings cross, or one they do
// not); the factor is the mean over `samples` elements of the class spread evenly over it.
// Leaves are not a rerouting class: a leaf the job crosses holds its NICs, and its failure
// cuts them off (the job restarts). Torus and dragonfly routers are: the class is sampled
// among the routers the job's traffic passes through without holding its NICs (with a
// fabric scope, fabric_scope()); the long run restarts the job when one of its own routers
// fails (FabricScope::holds_endpoint). A step is never faster than the healthy one: the
// factor is capped at 1 (a detour can spread flows better than the healthy ECMP draw).
//
// LIMITATIONS: one element down at a time (concurrent degradations multiply their
// factors in the long run, an approximation); the step is simulated on the scenario's
// network model, once per class and job (per copy of a job entry, but copies at the same
// offset in their pod or group share one set: tools/clustersim/report.cpp).
#pragma once

#include <string>
#include <vector>

#include "models/reliability/longrun.hpp"
#include "models/scenario/scenario.hpp"

namespace clustersim::tools {

struct DegradedClass {
  std::string name;  ///< "spine", "core", "leaf_spine link", ...
  bool is_switch = true;
  std::int64_t first = 0;   ///< switch units (index among the fabric's switches) or links (cable index)
  std::int64_t count = 0;
  double factor = 1.0;      ///< healthy / degraded step time, mean over the samples
  double step_time_s = 0.0; ///< degraded, mean over the samples
};

/// Which switches and cables a job on given nodes can cross (the long-run model's
/// FabricScope), for a Clos, a torus or a dragonfly with minimal routing; none for a
/// dragonfly with Valiant or UGAL routing (a route may take any group).
std::optional<reliability::FabricScope> fabric_scope(const fabric::Fabric& f);

/// The rerouting classes of the scenario's fabric for `job`, each with the job's degraded
/// step time. `healthy_step_s` is the job's step time on the intact fabric. The samples are
/// taken among the class's switches or cables the job crosses (FabricScope, its
/// nominal nodes), the only ones whose failure reaches it there; among all of the class's
/// when it crosses none (a job may be re-placed).
std::vector<DegradedClass> degraded_steps(const scenario::LoadedScenario& loaded, const scenario::ResolvedJob& job,
                                          double healthy_step_s, int samples = 3);

}  // namespace clustersim::tools
