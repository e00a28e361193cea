// What a fabric is and what it costs: counts, hop metrics, bisection bandwidth, capex and
// power.
//
// Definitions:
// - hops: switch-to-switch links between the switches (leaves, routers) two endpoints plug
//   into, on the route the routing policy takes (minimal on the dragonfly). diameter_hops is
//   the largest over endpoint pairs, average_hops the mean over ordered pairs of distinct
//   endpoints (uniform traffic; endpoints on the same switch count 0). Both exact, from
//   closed forms: O(leaves) on a Clos, O(sum of dims^2) on a torus, O(groups^2) on a dragonfly.
// - bisection_bandwidth: the capacity, in bytes/s one way, of the cut between the two halves
//   of the endpoints split at the topology's natural boundary, counting the endpoints' own
//   links. On a Clos the first half of the endpoints in leaf (or pod) order against the
//   rest, the leaf or pod the half falls in split between them (an odd number of leaves or
//   pods; the cut's max-flow is solved on the split unit's leaves, its aggregation layer and
//   the core as one switch each: metrics.cpp); on a torus two arcs of the largest dimension, cut at the slice
//   boundary nearest to half the nodes. Exact for those cuts (checked against push-relabel
//   max-flow on small instances in the tests), not the minimum over all cuts. A torus that
//   the nodes fill only partly can have unequal halves (by up to a slice of its largest
//   dimension). On a dragonfly, whose natural halves (whole groups) are unbalanced with an
//   odd number of groups and not the cheapest where h > a/2, halves of floor and ceil E/2
//   endpoints found by local search over the routers' sides (dragonfly_bisection in
//   metrics.cpp), the figure the max-flow between them: a balanced cut's, so never below the
//   minimum bisection, and equal to it against exhaustive search on every fill of the small
//   shapes in the tests; its empty groups are built and cabled, so they relay between the
//   halves (Valiant and UGAL routes cross them, minimal routes do not).
// - capex and power: switches priced by the cheapest class with enough ports at the link
//   rate (one that reduces in the network, InfiniBand SHARP, where network.sharp is on), one NIC per endpoint, a transceiver at each end of an optical link and a cable per
//   link (fibre or copper). Scale-up (NVLink) hardware is part of the node, not the fabric.
//   Which links are optical is the build's (fabric.cpp): every Clos cable (leaves are not
//   taken to sit in the nodes' racks; a rail leaf serves many racks) and every dragonfly
//   global one; a torus or dragonfly router sits in its first node's rack, so its cables to
//   other racks are optical and those inside the rack copper (FabricConfig::nodes_per_rack,
//   the cost model's rack packing).
//
// LIMITATIONS: capex covers the scale-out network only (no racks, PDUs, cable trays or
// labour); prices are list/street prices of one date (see models/fabric/pricing.yaml). It
// counts every switch the fabric builds: a dragonfly's empty groups too. The dragonfly's
// bisection is a local search's: it can exceed the minimum, by a link or so where the
// search was checked against exhaustive search beyond the tests' shapes (e.g. a=3, p=3,
// h=3, 8 groups, 48 endpoints: 13 links for 12; switch links slower than the NICs where
// h > a/2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/config/decode.hpp"
#include "models/fabric/fabric.hpp"
#include "models/fabric/pricing.hpp"

namespace clustersim::fabric {

struct CostLine {
  std::string part;   ///< "switches", "nics", "transceivers", "cables"
  std::string model;  ///< the priced class, e.g. "ib-ndr-64x400g"
  std::int64_t count = 0;
  sim::Money capex;
  sim::Power power;
};

struct FabricMetrics {
  std::int64_t endpoints = 0;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;
  std::int64_t switches = 0;
  std::vector<TierCount> switches_by_tier;
  std::map<std::string, std::int64_t> links;  ///< cables by kind
  std::int64_t optics = 0;                    ///< transceivers: two per optical cable
  std::int64_t diameter_hops = 0;
  double average_hops = 0.0;
  sim::Bandwidth bisection_bandwidth;
  std::vector<CostLine> costs;
  std::optional<sim::Money> capex;  ///< absent when a part has no priced class
  std::optional<sim::Power> power;
  std::vector<std::string> unpriced;  ///< parts without a priced class, for people
  std::string sizing;
};

/// `sharp`: the fabric reduces in its switches (network.sharp), so it is priced with a
/// switch class that can (SwitchPrice::sharp).
FabricMetrics measure(const Fabric& f, const PricingTable& prices, bool sharp = false);

/// The endpoints on each side of the natural bisection (see above).
void bisection_halves(const Fabric& f, std::vector<std::int64_t>& a, std::vector<std::int64_t>& b);

/// JSON with SI values and units in keys where they are not plain counts.
config::Json to_json(const FabricMetrics& m);

/// Graphviz text of the fabric's switches and their cables (and the nodes, as one box each).
std::string to_dot(const Fabric& f);

}  // namespace clustersim::fabric
