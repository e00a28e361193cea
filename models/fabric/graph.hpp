// Boost.Graph views of a Fabric: routing around failures, and the oracles that check the
// closed forms (shortest paths, max-flow across a cut).
//
// The fabric keeps its own flat link table; these functions build a Boost graph from it
// when they need one (compressed sparse row for breadth-first search, an adjacency list
// with residual capacities for push-relabel max-flow). They are for degraded fabrics,
// metrics on small instances and tests, never for the per-flow hot path.
#pragma once

#include <cstdint>
#include <vector>

#include "models/fabric/fabric.hpp"

namespace clustersim::fabric {

/// Shortest route (fewest links) from `src` to `dst` over links that have not failed, by
/// breadth-first search. GPUs are never transit vertices (a GPU forwards nothing except to
/// itself). Appends the links to `out`; false if `dst` is unreachable. O(V + E).
bool shortest_route(const Fabric& f, VertexId src, VertexId dst, std::vector<LinkId>& out);

/// Fewest switch-to-switch links from switch `src` to every vertex, moving only between
/// switches (leaf/spine/core/router), over links that have not failed; -1: unreachable.
std::vector<std::int64_t> switch_distances(const Fabric& f, VertexId src);

/// Maximum flow in bytes/s from endpoints `from` to endpoints `to` over the fabric (their
/// NICs' access links and the switches' links, at their line rates; failed links left out),
/// by push-relabel: the capacity of the cheapest cut between them. The tests' oracle for the
/// bisection bandwidth's closed forms, and the dragonfly's bisection itself. O(V^2 sqrt(E))
/// in the worst case, V the switches: ~0.1 s for a dragonfly of 2,048 routers.
double max_flow(const Fabric& f, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to);

}  // namespace clustersim::fabric
