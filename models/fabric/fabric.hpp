// The fabric: every GPU, NIC and switch of the cluster and every link between them, with
// closed-form routing for the regular topologies.
//
// Vertices: GPUs, NICs, each node's scale-up switch (NVSwitch: full bandwidth among the
// node's GPUs), and the fabric's switches (leaf/spine/core, torus or dragonfly routers).
// Links are directed: every cable is two links, one per direction, each with its own line
// rate, so that the network model can treat each direction as its own resource.
//
//   node n, GPU i --nvlink-- scale-up switch of n          (node.scaleup_bandwidth)
//   node n, GPU i --host---- NIC i*C/G of n                 (node.nic_bandwidth; PCIe path)
//   NIC           --access-- the switch/router it plugs in  (node.nic_bandwidth)
//   switch        --leaf_spine / spine_core / local / global / torus-- switch  (link_bandwidth)
//
// Topologies (built by build_fabric, sized from the node count and the switch radix):
// - fat_tree: a folded Clos of radix-k switches, 2 or 3 tiers. A leaf has d1 down and u1
//   up ports (d1 + u1 = k, u1:d1 = the tier's oversubscription). 2 tiers: u1/m spines, each
//   joined to every leaf by m parallel links. 3 tiers: pods of d2 leaves and u1 aggregation
//   switches (agg j of a pod joins every leaf of the pod); agg j of every pod joins core
//   plane j, u2/m core switches with m parallel links each. With 1:1 ratios this is the
//   k-ary fat tree of Al-Fares et al. (SIGCOMM'08): k^2/2 endpoints in 2 tiers, k^3/4 in 3.
//   Only the uplinks traffic needs are cabled: u1 (u2) is ceil(used down ports x up / down)
//   of the tier's fullest switch, 0 where traffic never goes up (one leaf; one pod), so a
//   cluster smaller than a leaf group is not priced with the spines of a full one. The
//   ratio is of bandwidths: a leaf's down ports run at the NICs' rate and its uplinks at
//   link_bandwidth, so u1 is scaled by NIC rate / link rate (800G links over 400G NICs:
//   half as many), and a ratio the up ports cannot carry is an error.
// - rail_clos: the same Clos, but leaf ("rail switch") r of group g takes NIC r of each of
//   the group's d1 nodes (NVIDIA's rail-optimized DGX SuperPOD design). A node whose NICs
//   sit on several trays (the catalog's `rails`: GB200 NVL72's 18 compute trays of 4 NICs)
//   counts as that many rail units: NIC i of tray t is on rail i mod R, and a rail leaf takes
//   that rail of d1 trays (NVIDIA's NVL72 reference designs connect the trays rail by rail).
// - torus: one router per vertex of an n-dimensional torus with wraparound; node n sits on
//   vertex n (coordinates with the first dimension fastest) and all its NICs plug into it.
// - dragonfly (Kim et al., ISCA'08): g groups of a routers, all-to-all local links inside a
//   group, p endpoints and h global links per router. Global port q = r*h + j of group G
//   (router r, link j) goes to group G + 1 + (q mod (g-1)) (mod g), landing on that group's
//   port (g - 2 - q mod (g-1)) + (g-1)*floor(q / (g-1)): the "consecutive" arrangement. With
//   g = a*h + 1 every pair of groups has exactly one link; with fewer groups, pairs get
//   floor(a*h/(g-1)) parallel links and leftover ports stay dark.
//
// Routing: up-down on Clos, the uplinks picked by fabric.path_selection: hash (ECMP: a
// deterministic hash h of the flow id and its endpoints, uplink j = h mod u1 at the leaf,
// k = (h >> 32) mod u2 at the aggregation switch) or destination (D-mod-k on the
// destination's place q = leaf x d1 + port: j = q mod u1, k = (q / u1) mod u2),
// dimension order on the torus (shortest direction; a tie at k/2 goes either way by a
// bit of the flow hash, so that both directions and both cables of a 2-wide dimension
// carry ties), minimal,
// Valiant or UGAL on the dragonfly (when a pair of groups has L > 1 global links, a minimal
// route between routers r1 and r2 takes a copy of fewest router hops: a route that can save
// a local hop does (one leaving on r1's own link, or landing on r2), where the copy
// (r1 + r2) mod L alone made routes of a partly filled dragonfly up to two local hops
// longer. Among the tied copies the pair of hosts picks, round robin from (r1 + r2) mod L
// on (global router ids): the flows of a router pair spread evenly over the parallel links
// that join the same two routers (taking the first tied copy put all of a pair's flows on one,
// and an all-to-all between two groups of a 2-group dragonfly ran 3.3x slower than its 32
// global links allow). Hop counts are a function of the pair: dragonfly_copy()). All closed form: O(hops) array lookups. When links have
// failed, routes that cross them are recomputed by breadth-first search on the surviving
// graph (models/fabric/graph.hpp), or reported unreachable.
//
// ECMP seed: the hash h = flow_hash(flow, src, dst, seed) is splitmix64's finaliser of
// flow * phi ^ src << 32 ^ dst * c1 ^ mix(seed), where mix is the same finaliser, so that
// mix(0) = 0 and seed 0 is the unsalted hash. Like a switch's hash seed, each seed is an
// independent draw of which flows collide on an uplink; the busiest link of a collective
// (the slowest ring of a data-parallel all-reduce) is the maximum over those collisions,
// so one seed is one sample of a random variable, not the fabric's expected time.
//
// Size limits: at most 2^22 GPUs (4,194,304) and 2^27 directed links, checked before
// anything is allocated (ids are 32-bit).
//
// LIMITATIONS: one node type per cluster; all switch-to-switch links share one line rate
// and latency; no adaptive routing on the Clos (ECMP only); UGAL compares each path's most loaded link
// in flows (UGAL-G: global knowledge, no queues or backpressure), one flow at a time in
// the schedule's order, against one random intermediate group; the load a flow sees is
// that of the flows routed before it plus the minimal routes of its phase's flows still to
// route (the network model's lookahead: the demand a real UGAL's queues would show; seeing
// only the flows before it, an all-to-all over all 1,056 GPUs of dragonfly-1k took 1.4x
// minimal routing's time, early flows going Valiant on links the later ones needed); it is
// blind to size, so a small collective whose flows share a global link pays Valiant's
// latency (real UGAL sees no queue and stays minimal);
// ECMP hashes each flow to one path (no flowlet or packet spraying; a connection may be
// several flows, network.qps_per_connection), with one seed for the whole fabric rather
// than one per switch.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/fabric/config.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

namespace clustersim::fabric {

struct VertexId {
  std::uint32_t value = 0;
  friend auto operator<=>(VertexId, VertexId) = default;
};

struct LinkId {
  std::uint32_t value = 0;
  friend auto operator<=>(LinkId, LinkId) = default;
};

enum class VertexKind : std::uint8_t { gpu, nic, scaleup, leaf, spine, core, router };
enum class LinkKind : std::uint8_t { nvlink, host, access, leaf_spine, spine_core, local, global, torus };
/// What carries a link: inside a node (board traces, NVLink cartridges), a copper cable, or
/// fibre with a transceiver at each end.
enum class Medium : std::uint8_t { internal, copper, optical };

const char* name(VertexKind k);
const char* name(LinkKind k);
const char* name(Medium m);

struct Link {
  VertexId src;
  VertexId dst;
  LinkId reverse;  ///< the other direction of the same cable
  LinkKind kind;
  Medium medium;
  sim::Bandwidth bandwidth;  ///< line rate, this direction
  sim::Time latency;
};

/// Closed-form structure of a (rail-optimized) folded Clos.
struct ClosLayout {
  bool rail = false;
  std::int64_t rails = 1;  ///< rail_clos: NICs per rail unit (a node's, or a tray's), R
  std::int64_t tiers = 2;
  std::int64_t radix = 0;
  std::int64_t d1 = 0, u1 = 0;  ///< leaf down ports / uplinks cabled (at most its up ports)
  std::int64_t d2 = 0, u2 = 0;  ///< aggregation down ports / uplinks cabled (3 tiers)
  std::int64_t leaves = 0;
  std::int64_t pods = 1;              ///< 3 tiers; 1 in 2 tiers
  std::int64_t top_switches = 0;      ///< spines (2 tiers) or cores (3 tiers)
  std::int64_t top_per_plane = 0;     ///< 3 tiers: cores per plane (planes = u1)
  std::int64_t parallel = 1;          ///< m: parallel links between a switch and one above it
  std::uint32_t leaf_base = 0, agg_base = 0, top_base = 0;  ///< first vertex of each tier
  std::uint32_t leaf_up_base = 0;  ///< link of leaf l, uplink k: leaf_up_base + 2 (l u1 + k)
  std::uint32_t agg_up_base = 0;   ///< link of agg a, uplink k: agg_up_base + 2 (a u2 + k)

  [[nodiscard]] std::int64_t leaf_of(std::int64_t node, std::int64_t nic, std::int64_t nics_per_node) const;
};

struct TorusLayout {
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> strides;
  std::int64_t routers = 0;
  std::uint32_t router_base = 0;
  std::uint32_t link_base = 0;  ///< link router r -> its + neighbour in dim d: link_base + 2 (r D + d)
};

struct DragonflyLayout {
  std::int64_t a = 0, p = 0, h = 0, g = 0;
  std::int64_t links_per_pair = 1;  ///< L = floor(a h / (g - 1))
  Routing routing = Routing::minimal;
  std::uint32_t router_base = 0;
  std::uint32_t local_base = 0;   ///< link r1 -> r2 (r1 < r2) of group G: local_base + 2 (G a(a-1)/2 + tri(r1, r2))
  std::uint32_t global_base = 0;  ///< link leaving group G by port q: global_base + G a h + q (reverse stored)
};

/// How the switches are counted and named per tier: {"leaf": 128, "spine": 128, "core": 64}.
struct TierCount {
  std::string tier;
  std::int64_t switches = 0;
};

/// Supplies the current load of a link (for UGAL): any non-negative measure, e.g. the
/// number of flows on it. Null: no load information (UGAL routes minimally).
struct LoadView {
  double (*load)(const void* context, LinkId link) = nullptr;
  const void* context = nullptr;
};

class Fabric {
 public:
  // Vertex and link tables: data-oriented, indexed by VertexId / LinkId.
  std::vector<VertexKind> vertex_kind;
  std::vector<Link> links;
  std::vector<bool> link_failed;  ///< empty until a link fails

  std::int64_t nodes = 0;
  sim::Bandwidth link_bandwidth;  ///< switch-to-switch line rate
  std::int64_t gpus_per_node = 0;
  std::int64_t nics_per_node = 0;
  /// rail_clos: the NICs of a rail unit (catalog `rails`; a node's NICs when it has no trays).
  std::int64_t rails = 0;
  Topology topology = Topology::fat_tree;
  std::variant<ClosLayout, TorusLayout, DragonflyLayout> layout;
  std::vector<TierCount> tiers;  ///< switch counts by tier, in order
  std::string sizing_note;        ///< how the builder sized the fabric, for people
  std::uint64_t ecmp_seed = 0;    ///< salt of every flow_hash (fabric.ecmp_seed); 0: unsalted
  bool route_by_destination = false;  ///< Clos uplinks by destination (fabric.path_selection)

  // Index arithmetic for the node-level parts.
  std::uint32_t gpu_base = 0, nic_base = 0, scaleup_base = 0;
  std::uint32_t nvlink_base = 0, host_base = 0, access_base = 0;
  bool has_nvlink = false;
  /// Infinity-Fabric-style scale-up: a full mesh of direct GPU-to-GPU links, each with
  /// scaleup_bandwidth / (g - 1), instead of a switch (link GPU i -> j, i < j, of node n:
  /// nvlink_base + 2 (n g(g-1)/2 + tri(i, j)); the j -> i direction is the next id).
  bool scaleup_mesh = false;

  [[nodiscard]] std::int64_t gpus() const { return nodes * gpus_per_node; }
  [[nodiscard]] std::int64_t endpoints() const { return nodes * nics_per_node; }
  [[nodiscard]] VertexId gpu(std::int64_t global_gpu) const { return {gpu_base + static_cast<std::uint32_t>(global_gpu)}; }
  [[nodiscard]] VertexId nic(std::int64_t endpoint) const { return {nic_base + static_cast<std::uint32_t>(endpoint)}; }
  /// The NIC a GPU sends through: NIC i*C/G of its node.
  [[nodiscard]] std::int64_t endpoint_of_gpu(std::int64_t global_gpu) const;
  /// The switch (leaf or router) an endpoint plugs into.
  [[nodiscard]] VertexId attachment(std::int64_t endpoint) const { return links[access_up(endpoint).value].dst; }
  [[nodiscard]] LinkId access_up(std::int64_t endpoint) const {
    return {access_base + 2 * static_cast<std::uint32_t>(endpoint)};
  }
  [[nodiscard]] std::int64_t switch_count() const;
  /// Whether two flows between the same pair of endpoints may take different paths (the
  /// flow id picks among them): a Clos hashed over two uplinks or more somewhere, a torus
  /// with two nodes half way round an even dimension (a tie), a dragonfly under Valiant or UGAL with
  /// four groups or more (with three, the intermediate group is the one left). A
  /// connection's queue pairs spread only where this holds.
  [[nodiscard]] bool flows_spread() const;
  /// Whether fabric.ecmp_seed changes some route: flows_spread(), but not on a torus (its
  /// ties are unsalted).
  [[nodiscard]] bool seed_matters() const;
  /// Whether routes depend on the load (a dragonfly under UGAL): route() then reads its LoadView.
  [[nodiscard]] bool load_aware() const {
    const auto* d = std::get_if<DragonflyLayout>(&layout);
    return d != nullptr && d->routing == Routing::ugal && d->g > 2;  // two groups: no detour to take
  }

  /// Appends to `out` the links from GPU `src` to GPU `dst` (global GPU indices): NVLink
  /// inside a node, else GPU -> NIC -> fabric -> NIC -> GPU. `flow` seeds ECMP and Valiant
  /// choices: the same flow always takes the same path. Returns false (and leaves `out` as
  /// it was) when a failed link makes the destination unreachable. O(hops) on a healthy
  /// fabric; a BFS over the fabric when the closed-form route crosses a failed link.
  bool route(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::vector<LinkId>& out,
             LoadView load = {}) const;

  /// The fabric part only: from endpoint (NIC) `src` to endpoint `dst`, closed form,
  /// ignoring failures.
  void route_endpoints(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::vector<LinkId>& out,
                       LoadView load = {}) const;

  /// Switch-to-switch hops between the switches two endpoints plug into, on the route the
  /// routing policy takes (minimal on the dragonfly).
  [[nodiscard]] std::int64_t switch_hops(std::int64_t src_endpoint, std::int64_t dst_endpoint) const;

  void fail_link(LinkId link);  ///< fails both directions of its cable
  void fail_vertex(VertexId v);  ///< fails every cable of a switch (or NIC, GPU)
  [[nodiscard]] bool failed(LinkId link) const { return !link_failed.empty() && link_failed[link.value]; }
};

/// The copy (0 .. L - 1) of the global links between the groups of routers R1 and R2
/// (global router ids) that a minimal route between them takes (see the header): one of
/// fewest router hops, the (spread mod their count)-th of those from (R1 + R2) mod L on.
/// The hops do not depend on `spread`.
std::int64_t dragonfly_copy(const DragonflyLayout& d, std::int64_t R1, std::int64_t R2, std::uint64_t spread = 0);

/// "leaf#3": a vertex by its kind and its rank among the vertices of that kind (gpu#3: the
/// cluster's GPU 3; nic#8: the first NIC of node 1 with 8 each; scaleup#1: node 1's switch),
/// not by its id among all vertices. O(vertices).
std::string vertex_label(const Fabric& f, VertexId v);
/// Every vertex's vertex_label(), in one pass (O(vertices)), for reports that name many.
std::vector<std::string> vertex_labels(const Fabric& f);

/// "leaf_spine leaf#1040 -> spine#1200 (link 70400)": a link's kind, its two ends and its id
/// (parallel cables share their ends), for reports.
std::string describe_link(const Fabric& f, LinkId l);
/// The same with the labels of vertex_labels(f): O(1) per link.
std::string describe_link(const Fabric& f, LinkId l, const std::vector<std::string>& labels);

/// The cables that fail as units (failure components `per: link`), in the order the long run
/// numbers them: by kind (LinkKind order), then by id, one per cable (its lower-id
/// direction). Dark ports and the links inside a node (NVLink, GPU to NIC: Medium::internal,
/// which fail with the node) are not cables.
std::vector<LinkId> failure_cables(const Fabric& f);

/// A problem with the fabric's configuration, at a key path of the scenario.
struct FabricError {
  std::string path;  ///< e.g. "fabric.radix"
  std::string message;
  std::string hint = {};
};

/// Builds the fabric for `nodes` nodes of type `node`. On a configuration that cannot be
/// built (a radix too small for the nodes, a missing key for the topology), returns no
/// fabric and fills `errors`.
std::optional<Fabric> build_fabric(const FabricConfig& config, const cluster::ResolvedNode& node, std::int64_t nodes,
                                   std::vector<FabricError>& errors);

/// 64-bit mix of a flow id and two endpoints, salted by `seed`, for ECMP (splitmix64's
/// finaliser). Seed 0 is the unsalted hash.
std::uint64_t flow_hash(std::uint64_t flow, std::int64_t src, std::int64_t dst, std::uint64_t seed = 0);

}  // namespace clustersim::fabric
