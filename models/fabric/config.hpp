// The fabric's configuration: which topology, its sizes and link parameters.
//
// Keys (see scenarios/REFERENCE.md):
//   topology: fat_tree | rail_clos | torus | dragonfly
//   fat_tree / rail_clos: radix, tiers (2 or 3; default: the fewest that fit),
//     oversubscription ("1:7" = uplink:downlink bandwidth at the top tier, or a list of
//     ratios per tier from the leaves up)
//   torus: dims ([8, 8, 8])
//   dragonfly: routers_per_group (a), hosts_per_router (p), global_links_per_router (h),
//     groups (g; default: the groups the nodes fill, at most a*h + 1; the nodes fill the first groups),
//     routing (minimal | valiant | ugal)
//   all: link_bandwidth (default: the node's NIC line rate), link_latency
//   fat_tree / rail_clos: path_selection (hash | destination: how equal-cost uplinks are picked)
//   fat_tree / rail_clos (hash) / dragonfly (valiant, ugal): ecmp_seed (salt of the flow hash
//     that picks ECMP uplinks and Valiant groups; 0, the default, is the unsalted hash)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

namespace clustersim::fabric {

enum class Topology { fat_tree, rail_clos, torus, dragonfly };

constexpr std::array<std::pair<Topology, std::string_view>, 4> enum_names(Topology) {
  return {{{Topology::fat_tree, "fat_tree"},
           {Topology::rail_clos, "rail_clos"},
           {Topology::torus, "torus"},
           {Topology::dragonfly, "dragonfly"}}};
}

/// Dragonfly routing policy (Kim et al., ISCA'08): minimal (local-global-local), Valiant
/// (through a random intermediate group), or UGAL (minimal unless Valiant's most loaded
/// link carries fewer flows than the minimal path's: UGAL-G on bottleneck shares).
enum class Routing { minimal, valiant, ugal };

constexpr std::array<std::pair<Routing, std::string_view>, 3> enum_names(Routing) {
  return {{{Routing::minimal, "minimal"}, {Routing::valiant, "valiant"}, {Routing::ugal, "ugal"}}};
}

/// How a Clos picks among its equal-cost uplinks: by a hash of each flow (ECMP, as
/// Ethernet and RoCE switches do; fabric.ecmp_seed salts it), or by the destination
/// endpoint (D-mod-k: uplink dst mod u1, then (dst / u1) mod u2 at the aggregation tier, as
/// InfiniBand subnet managers' fat-tree routing sets the forwarding tables: Zahavi et al.,
/// "Optimized InfiniBand fat-tree routing for shift all-to-all communication patterns",
/// CCPE 22(2), 2010). Flows to one destination share a path; a shift (a ring's hops) is
/// free of collisions, where hashing puts two of a leaf's flows on one uplink by chance.
enum class PathSelection { hash, destination };

constexpr std::array<std::pair<PathSelection, std::string_view>, 2> enum_names(PathSelection) {
  return {{{PathSelection::hash, "hash"}, {PathSelection::destination, "destination"}}};
}

/// Uplink to downlink bandwidth at one tier, written "up:down": "1:7" means the uplinks
/// carry 1/7 of what the downlinks can bring in (Meta's Llama 3 cluster at its
/// aggregation layer); "1:1" is full bisection.
struct Ratio {
  std::int64_t up = 1;
  std::int64_t down = 1;
  friend bool operator==(const Ratio&, const Ratio&) = default;
};

/// Oversubscription: one ratio for the top tier, or one per tier from the leaves up.
struct Oversubscription {
  std::optional<Ratio> top;
  std::vector<Ratio> per_tier;
  friend bool operator==(const Oversubscription&, const Oversubscription&) = default;
};

struct FabricConfig {
  Topology topology = Topology::fat_tree;
  std::int64_t radix = 0;
  std::int64_t tiers = 0;
  Oversubscription oversubscription;
  std::optional<sim::Bandwidth> link_bandwidth;
  sim::Time link_latency;
  std::vector<std::int64_t> dims;
  std::int64_t routers_per_group = 0;
  std::int64_t hosts_per_router = 0;
  std::int64_t global_links_per_router = 0;
  std::int64_t groups = 0;
  Routing routing = Routing::minimal;
  PathSelection path_selection = PathSelection::hash;
  std::int64_t ecmp_seed = 0;
  /// Not a scenario key: the nodes one rack holds (economics.nodes_per_rack, else the priced
  /// table's servers entry, else 1), set by the scenario loader. A torus cable, or a
  /// dragonfly access or local cable, between two racks is optical (a passive copper DAC
  /// reaches 2-3 m: models/fabric/pricing.yaml), one inside a rack copper; 0: every such
  /// cable copper. Dragonfly global cables and every Clos cable are optical whatever it is.
  std::int64_t nodes_per_rack = 0;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("topology", &FabricConfig::topology,
              "network topology; set over an extended scenario's (or with --set), it drops the earlier "
              "layers' keys of other topologies (radix under a torus)")
            .require(),
        field("radix", &FabricConfig::radix, "switch ports (fat_tree, rail_clos)").at_least(0).at_most(4096),
        field("tiers", &FabricConfig::tiers, "switch tiers, 2 or 3 (fat_tree, rail_clos); 0: the fewest that fit")
            .at_least(0)
            .at_most(3),
        field("oversubscription", &FabricConfig::oversubscription,
              "uplink:downlink bandwidth, \"1:7\" at the top tier or a list per tier from the leaves up"),
        field("link_bandwidth", &FabricConfig::link_bandwidth,
              "line rate of each switch-to-switch link, per direction (default: the node's NIC rate)"),
        field("link_latency", &FabricConfig::link_latency, "latency of one hop: cable plus switch").require(),
        field("dims", &FabricConfig::dims, "torus dimensions, e.g. [8, 8, 8] (torus)"),
        field("routers_per_group", &FabricConfig::routers_per_group, "a: routers in a group (dragonfly)")
            .at_least(0)
            .at_most(4096),
        field("hosts_per_router", &FabricConfig::hosts_per_router, "p: endpoints on each router (dragonfly)")
            .at_least(0)
            .at_most(4096),
        field("global_links_per_router", &FabricConfig::global_links_per_router,
              "h: global links on each router (dragonfly)")
            .at_least(0)
            .at_most(4096),
        field("groups", &FabricConfig::groups, "g: groups (dragonfly), at most a*h + 1; 0: the groups the nodes fill, their global ports spread over the group pairs")
            .at_least(0),
        field("routing", &FabricConfig::routing, "routing policy (dragonfly)"),
        field("path_selection", &FabricConfig::path_selection,
              "how a Clos picks among equal-cost uplinks (fat_tree, rail_clos): hash (per flow, ECMP as "
              "Ethernet/RoCE switches do) or destination (D-mod-k, as InfiniBand subnet managers route fat trees)"),
        field("ecmp_seed", &FabricConfig::ecmp_seed,
              "salt of the flow hash that picks each flow's ECMP uplinks (fat_tree, rail_clos with "
              "path_selection: hash) and Valiant "
              "group (dragonfly valiant, ugal); 0: the unsalted hash. Each seed is another draw of flow "
              "collisions on shared links: sweep it to see the spread of a collective or step time (or "
              "compare/plan --ecmp-seeds)")
            .at_least(0)
            .at_most(std::int64_t{1'000'000'000'000'000}),  // room for --ecmp-seeds' next seeds
    };
  }
};

}  // namespace clustersim::fabric

namespace clustersim::config {

template <>
struct Codec<fabric::Ratio> {
  static bool decode(const YAML::Node& n, fabric::Ratio& out, const Context& ctx);
  static Json encode(const fabric::Ratio& r) { return text(r); }
  static std::string type_name() { return "ratio \"up:down\" (e.g. \"1:7\")"; }
  static std::string text(const fabric::Ratio& r) { return fmt::format("{}:{}", r.up, r.down); }
};

template <>
struct Codec<fabric::Oversubscription> {
  static bool decode(const YAML::Node& n, fabric::Oversubscription& out, const Context& ctx);
  static Json encode(const fabric::Oversubscription& o);
  static std::string type_name() { return "ratio \"up:down\" for the top tier, or a list of ratios per tier"; }
};

}  // namespace clustersim::config
