#include "models/fabric/fabric.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "models/fabric/graph.hpp"
#include "sim/check.hpp"

namespace clustersim::fabric {

const char* name(VertexKind k) {
  switch (k) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::nic: return "nic";
    case VertexKind::scaleup: return "scaleup";
    case VertexKind::leaf: return "leaf";
    case VertexKind::spine: return "spine";
    case VertexKind::core: return "core";
    case VertexKind::router: return "router";
  }
  return "?";
}

const char* name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::host: return "host";
    case LinkKind::access: return "access";
    case LinkKind::leaf_spine: return "leaf_spine";
    case LinkKind::spine_core: return "spine_core";
    case LinkKind::local: return "local";
    case LinkKind::global: return "global";
    case LinkKind::torus: return "torus";
  }
  return "?";
}

const char* name(Medium m) {
  switch (m) {
    case Medium::internal: return "internal";
    case Medium::copper: return "copper";
    case Medium::optical: return "optical";
  }
  return "?";
}

namespace {

// splitmix64's finaliser (Steele, Lea and Flood, OOPSLA'14); finalise(0) = 0.
std::uint64_t finalise(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t flow_hash(std::uint64_t flow, std::int64_t src, std::int64_t dst, std::uint64_t seed) {
  // The seed enters mixed, so that seeds 1, 2, 3... differ in many bits; finalise(0) = 0
  // keeps seed 0 the unsalted hash.
  return finalise(flow * 0x9e3779b97f4a7c15ULL ^ (static_cast<std::uint64_t>(src) << 32) ^
                  static_cast<std::uint64_t>(dst) * 0xbf58476d1ce4e5b9ULL ^ finalise(seed));
}

std::int64_t ClosLayout::leaf_of(std::int64_t node, std::int64_t nic, std::int64_t nics_per_node) const {
  // Rail unit u = endpoint / R (a node, or a tray of R NICs), on rail endpoint mod R.
  const std::int64_t endpoint = node * nics_per_node + nic;
  if (rail) return (endpoint / rails / d1) * rails + endpoint % rails;
  return endpoint / d1;
}

std::int64_t Fabric::endpoint_of_gpu(std::int64_t global_gpu) const {
  const std::int64_t node = global_gpu / gpus_per_node;
  const std::int64_t i = global_gpu % gpus_per_node;
  return node * nics_per_node + i * nics_per_node / gpus_per_node;
}

bool Fabric::flows_spread() const {
  if (const auto* c = std::get_if<ClosLayout>(&layout)) {
    return !route_by_destination && (c->u1 > 1 || c->u2 > 1);
  }
  if (const auto* t = std::get_if<TorusLayout>(&layout)) {
    // A tie: two nodes k/2 apart in an even dimension. Node i sits on router i, so router
    // 0 and router (k/2) x stride are such a pair whenever the nodes reach the latter, and
    // no pair is when they do not (one of the two would have a coordinate of k/2 or more).
    for (std::size_t d = 0; d < t->dims.size(); ++d) {
      if (t->dims[d] % 2 == 0 && t->dims[d] / 2 * t->strides[d] < nodes) return true;
    }
    return false;
  }
  // Valiant's intermediate group is drawn among the groups other than the two ends: with
  // three groups there is one to draw.
  const auto& d = std::get<DragonflyLayout>(layout);
  return d.routing != Routing::minimal && d.g > 3;
}

bool Fabric::seed_matters() const { return flows_spread() && !std::holds_alternative<TorusLayout>(layout); }

std::int64_t Fabric::switch_count() const {
  std::int64_t n = 0;
  for (const TierCount& t : tiers) n += t.switches;
  return n;
}

void Fabric::fail_link(LinkId link) {
  if (link_failed.empty()) link_failed.assign(links.size(), false);
  link_failed[link.value] = true;
  link_failed[links[link.value].reverse.value] = true;
}

std::vector<LinkId> failure_cables(const Fabric& f) {
  std::vector<LinkId> out;
  for (std::uint32_t l = 0; l < f.links.size(); ++l) {
    const Link& link = f.links[l];
    if (link.src == link.dst || link.reverse.value < l || link.medium == Medium::internal) continue;
    out.push_back(LinkId{l});
  }
  std::stable_sort(out.begin(), out.end(), [&](LinkId a, LinkId b) { return f.links[a.value].kind < f.links[b.value].kind; });
  return out;
}

// By its rank, not its id: node 0's NVSwitch of a 4-node cluster read scaleup#64.
std::string vertex_label(const Fabric& f, VertexId v) {
  const VertexKind kind = f.vertex_kind[v.value];
  const auto rank = std::count(f.vertex_kind.begin(), f.vertex_kind.begin() + v.value, kind);
  return fmt::format("{}#{}", name(kind), rank);
}

std::vector<std::string> vertex_labels(const Fabric& f) {
  std::vector<std::string> out(f.vertex_kind.size());
  std::array<std::int64_t, 256> rank{};
  for (std::size_t v = 0; v < f.vertex_kind.size(); ++v) {
    const VertexKind kind = f.vertex_kind[v];
    out[v] = fmt::format("{}#{}", name(kind), rank[static_cast<std::size_t>(kind)]++);
  }
  return out;
}

namespace {
// Parallel cables between two switches share their ends: the link's own id tells them apart.
std::string link_text(const Fabric& f, LinkId l, const std::string& src, const std::string& dst) {
  return fmt::format("{} {} -> {} (link {})", name(f.links[l.value].kind), src, dst, l.value);
}
}  // namespace

std::string describe_link(const Fabric& f, LinkId l) {
  const Link& link = f.links[l.value];
  return link_text(f, l, vertex_label(f, link.src), vertex_label(f, link.dst));
}

std::string describe_link(const Fabric& f, LinkId l, const std::vector<std::string>& labels) {
  const Link& link = f.links[l.value];
  return link_text(f, l, labels[link.src.value], labels[link.dst.value]);
}

void Fabric::fail_vertex(VertexId v) {
  for (std::uint32_t i = 0; i < links.size(); ++i) {
    if (links[i].src == v || links[i].dst == v) fail_link(LinkId{i});
  }
}

namespace {

std::int64_t tri_index(std::int64_t a, std::int64_t r1, std::int64_t r2) {
  // Position of the pair (r1 < r2) in the row-major upper triangle of an a x a matrix.
  return r1 * (2 * a - r1 - 1) / 2 + (r2 - r1 - 1);
}

using u32 = std::uint32_t;

u32 to_u32(std::int64_t v) { return static_cast<u32>(v); }

/// Builds vertices and links in a fixed order so that link ids are arithmetic.
class Builder {
 public:
  explicit Builder(Fabric& f) : f_(f) {}

  u32 add_vertices(VertexKind kind, std::int64_t count) {
    const auto first = to_u32(static_cast<std::int64_t>(f_.vertex_kind.size()));
    f_.vertex_kind.insert(f_.vertex_kind.end(), static_cast<std::size_t>(count), kind);
    return first;
  }

  /// Adds the cable a <-> b as links (a->b, b->a) with ids (x, x+1); returns x.
  u32 add_cable(u32 a, u32 b, LinkKind kind, Medium medium, sim::Bandwidth bw, sim::Time latency) {
    const auto id = to_u32(static_cast<std::int64_t>(f_.links.size()));
    f_.links.push_back(Link{{a}, {b}, {id + 1}, kind, medium, bw, latency});
    f_.links.push_back(Link{{b}, {a}, {id}, kind, medium, bw, latency});
    return id;
  }

  /// Adds a directed link whose reverse is set later.
  u32 add_link(u32 a, u32 b, LinkKind kind, Medium medium, sim::Bandwidth bw, sim::Time latency) {
    const auto id = to_u32(static_cast<std::int64_t>(f_.links.size()));
    f_.links.push_back(Link{{a}, {b}, {id}, kind, medium, bw, latency});
    return id;
  }

 private:
  Fabric& f_;
};

/// How a tier's switches are cabled to the tier above: `up` uplinks each, to `above`
/// switches with `parallel` links to each (up = above x parallel).
struct UpCabling {
  std::int64_t up = 0;
  std::int64_t above = 0;
  std::int64_t parallel = 1;
};

/// The fewest switches above for `below` switches that each need `needed` uplinks of their
/// `ports` up ports: `above` switches of radix k, each joined to every switch below by m
/// parallel links (below x m <= k), with up = above x m in [needed, ports]. At least
/// `min_above` switches above when there are that many up ports: two for a 2-tier Clos's
/// spines (one would be a single point of failure that cuts every leaf off from the others;
/// planners buy two), one for each plane of a 3-tier Clos's cores (the planes, two or more,
/// are the redundancy: two cores per plane left half of each core's ports dark where two
/// pods fill one). With up = ports this is the largest m dividing the ports; with fewer
/// needed, a prime count (11 uplinks) is rounded up to what the switches above take (12 over
/// 2 spines), not spread one link to each of 11.
UpCabling cable_up(std::int64_t needed, std::int64_t ports, std::int64_t below, std::int64_t k, std::int64_t min_above) {
  if (needed <= 0) return {};
  needed = std::max(needed, std::min<std::int64_t>(2, ports));
  const std::int64_t m_max = std::min(ports, k / below);
  for (std::int64_t above = std::max<std::int64_t>({(needed + m_max - 1) / m_max, std::min(min_above, ports), 1});
       above <= ports; ++above) {
    const std::int64_t m = (needed + above - 1) / above;
    if (above * m <= ports && m <= m_max) return {above * m, above, m};
  }
  return {ports, ports, 1};  // m_max >= 1 (the tier fits), so the loop returns before
}

struct Split {
  std::int64_t down = 0;
  std::int64_t up = 0;
};

// Down and up ports of a radix-k switch for an up:down ratio; false if not whole ports.
bool split_ports(std::int64_t k, Ratio r, Split& out) {
  // In lowest terms: 2:6 is 1:3 (3 up and 9 down ports of 12), not parts of 8.
  const std::int64_t g = std::gcd(r.up, r.down);
  if (g > 1) r = Ratio{r.up / g, r.down / g};
  const std::int64_t parts = r.up + r.down;
  if (k % parts != 0) return false;
  out.up = k / parts * r.up;
  out.down = k / parts * r.down;
  return out.up >= 1 && out.down >= 1;
}

Ratio tier_ratio(const Oversubscription& o, std::int64_t tier, std::int64_t tiers) {
  if (!o.per_tier.empty()) return o.per_tier[static_cast<std::size_t>(tier)];
  if (o.top && tier == tiers - 2) return *o.top;
  return Ratio{};
}

bool build_clos(const FabricConfig& cfg, Fabric& f, Builder& b, sim::Bandwidth bw, sim::Bandwidth nic,
                std::vector<FabricError>& errors) {
  const std::int64_t k = cfg.radix;
  if (k < 2) {
    errors.push_back({"fabric.radix", fmt::format("{} needs a switch radix of at least 2, got {}",
                                                  config::enum_name(cfg.topology), k), "add e.g. 'radix: 64'"});
    return false;
  }
  if (!cfg.dims.empty() || cfg.routers_per_group || cfg.hosts_per_router || cfg.global_links_per_router || cfg.groups) {
    errors.push_back({"fabric.topology", fmt::format("{} takes radix, tiers and oversubscription; dims and the "
                                                     "dragonfly keys do not apply", config::enum_name(cfg.topology))});
    return false;
  }
  ClosLayout c;
  c.rail = cfg.topology == Topology::rail_clos;
  c.radix = k;
  const std::int64_t E = f.endpoints();
  // Rail units (nodes, or their trays) of R NICs each: a rail leaf takes one rail of d1 units.
  const std::int64_t R = f.rails > 0 ? f.rails : f.nics_per_node;
  c.rails = R;
  const std::int64_t units = R > 0 ? E / R : 0;

  // Tiers: as given, else the fewest that hold the endpoints.
  std::int64_t tiers = cfg.tiers;
  const auto fits_at = [&](std::int64_t radix, std::int64_t t, std::string& why) {
    Split s1;
    if (!split_ports(radix, tier_ratio(cfg.oversubscription, 0, t), s1)) {
      why = fmt::format("radix {} cannot be split into whole down and up ports at {}", radix,
                        config::Codec<Ratio>::text(tier_ratio(cfg.oversubscription, 0, t)));
      return false;
    }
    const std::int64_t leaves = c.rail ? (units + s1.down - 1) / s1.down * R : (E + s1.down - 1) / s1.down;
    if (t == 2) {
      if (leaves * 1 > radix) {
        // Rail leaves come in groups of R (one per rail): a spine's ports take floor(radix / R) groups.
        const std::int64_t held = c.rail ? radix / R * R : radix;
        why = fmt::format("2 tiers of radix {} hold {} leaves of {} endpoints ({} endpoints{}); this cluster needs {} "
                          "leaves for its {} endpoints",
                          radix, held, s1.down, held * s1.down,
                          c.rail && held != radix ? fmt::format(", rail leaves {} at a time", R) : std::string(), leaves, E);
        return false;
      }
      return true;
    }
    Split s2;
    if (!split_ports(radix, tier_ratio(cfg.oversubscription, 1, t), s2)) {
      why = fmt::format("radix {} cannot be split into whole down and up ports at {}", radix,
                        config::Codec<Ratio>::text(tier_ratio(cfg.oversubscription, 1, t)));
      return false;
    }
    if (s2.down < s1.up) {
      why = fmt::format("a pod needs {} aggregation switches (one per leaf uplink) but they have only {} down ports",
                        s1.up, s2.down);
    }
    const std::int64_t pods = (leaves + s2.down - 1) / s2.down;
    if (pods > radix) {
      why = fmt::format("3 tiers of radix {} hold {} pods of {} leaves ({} endpoints); this cluster needs {} pods",
                        radix, radix, s2.down, radix * s2.down * s1.down, pods);
      return false;
    }
    return true;
  };
  const auto fits = [&](std::int64_t t, std::string& why) { return fits_at(k, t, why); };
  if (!cfg.oversubscription.per_tier.empty() && tiers == 0) {
    errors.push_back({"fabric.tiers", "a list of oversubscription ratios needs the tier count",
                      "add 'tiers: 2' or 'tiers: 3'"});
    return false;
  }
  std::string why;
  if (tiers == 0) {
    std::string why2;
    tiers = fits(2, why2) ? 2 : 3;
  }
  if (tiers < 2) {
    errors.push_back({"fabric.tiers", fmt::format("a Clos has 2 or 3 tiers, got {}", tiers)});
    return false;
  }
  if (!cfg.oversubscription.per_tier.empty() &&
      static_cast<std::int64_t>(cfg.oversubscription.per_tier.size()) != tiers - 1) {
    errors.push_back({"fabric.oversubscription",
                      fmt::format("{} tiers have {} level{} of uplinks, so the list needs {} ratio{}, got {}", tiers, tiers - 1,
                                  tiers == 2 ? "" : "s", tiers - 1, tiers == 2 ? "" : "s", cfg.oversubscription.per_tier.size())});
    return false;
  }
  if (!fits(tiers, why)) {
    if (why.find("cannot be split") != std::string::npos) {
      // A ratio whose parts do not divide the radix: name the nearest that do (1:d with
      // 1 + d dividing it), not a larger radix (128 fails 1:2 as 64 does).
      std::vector<std::int64_t> downs;
      for (std::int64_t parts = 2; parts <= k; ++parts) {
        if (k % parts == 0) downs.push_back(parts - 1);
      }
      Ratio asked = tier_ratio(cfg.oversubscription, 0, tiers);
      for (std::int64_t tier = 0; tier + 1 < tiers; ++tier) {
        Split unused;
        if (!split_ports(k, tier_ratio(cfg.oversubscription, tier, tiers), unused)) {
          asked = tier_ratio(cfg.oversubscription, tier, tiers);
          break;
        }
      }
      const double want = static_cast<double>(asked.down) / static_cast<double>(asked.up);
      std::stable_sort(downs.begin(), downs.end(), [&](std::int64_t x, std::int64_t y) {
        return std::abs(std::log(static_cast<double>(x) / want)) < std::abs(std::log(static_cast<double>(y) / want));
      });
      std::vector<std::string> near;
      for (std::size_t i = 0; i < std::min<std::size_t>(2, downs.size()); ++i) near.push_back(fmt::format("\"1:{}\"", downs[i]));
      // No ratio written (1:1 throughout): the radix is what does not split.
      if (cfg.oversubscription == Oversubscription{}) {
        errors.push_back({"fabric.radix", fmt::format("the fabric cannot be built: {}", why),
                          fmt::format("an even radix such as {}, or an oversubscription whose up + down divide {}: e.g. {}",
                                      k + 1, k, fmt::join(near, " or "))});
        return false;
      }
      errors.push_back({"fabric.oversubscription", fmt::format("the fabric cannot be built: {}", why),
                        fmt::format("up + down (in lowest terms) must divide the radix {}: e.g. {}", k,
                                    fmt::join(near, " or "))});
      return false;
    }
    // A hint that works: three tiers where they hold the cluster, else the smallest
    // power-of-two radix (switches come as 32, 64, 128 ... ports) that does.
    // Three tiers only where the ratios allow them (a list of ratios has one per tier).
    std::string hint;
    std::string unused;
    const bool three_possible = tiers == 2 && cfg.oversubscription.per_tier.empty();
    if (three_possible && fits_at(k, 3, unused)) {
      hint = "try 'tiers: 3' or a larger radix";
    } else {
      // Powers of two first, then any radix (one whose ports split the ratio: 96 at 1:2).
      const auto try_radix = [&](std::int64_t r) {
        if (fits_at(r, tiers, unused)) {
          hint = fmt::format("a radix of {} holds it in {} tiers", r, tiers);
        } else if (three_possible && fits_at(r, 3, unused)) {
          hint = fmt::format("'tiers: 3' with a radix of {} holds it", r);
        }
        return !hint.empty();
      };
      std::int64_t larger = 2;
      while (larger <= k) larger *= 2;
      for (; larger <= 8192 && !try_radix(larger); larger *= 2) {
      }
      for (std::int64_t r = k + 1; hint.empty() && r <= 8192 && !try_radix(r); ++r) {
      }
      if (hint.empty()) hint = "no Clos of radix up to 8192 holds it: fewer nodes or NICs per node";
    }
    errors.push_back({"fabric.radix", fmt::format("the fabric is too small for {} nodes x {} NICs: {}", f.nodes, f.nics_per_node, why),
                      hint});
    return false;
  }
  c.tiers = tiers;
  Split s1;
  split_ports(k, tier_ratio(cfg.oversubscription, 0, tiers), s1);
  c.d1 = s1.down;
  c.leaves = c.rail ? (units + c.d1 - 1) / c.d1 * R : (E + c.d1 - 1) / c.d1;
  // Uplinks as cabled: a tier's switches get the uplinks its fullest switch needs at the
  // tier's ratio, ceil(used down ports x up / down), not all their up ports. A rail group
  // of 16 nodes on 32-port leaves cables 16 uplinks per leaf, as a planner would buy it;
  // before, every leaf had all 32, and the quickstart's network was priced with 256
  // leaf-spine cables and 4 spines where 128 and 2 carry the same traffic. A tier whose
  // traffic never goes up (one leaf; one pod) gets no uplinks and no switches above.
  // Where switches of a tier differ (a last, partly used rail group or pod), all are cabled
  // like the fullest one: the layout stays regular, and a partial group has its room to grow.
  // The counts are then rounded up to what the switches above take (cable_up).
  // The ratio is one of bandwidths: a leaf's down ports carry its NICs' line rate and its
  // uplinks the fabric's link rate, so 800 Gb/s uplinks over 400 Gb/s NICs need half as many
  // at 1:1. (The uplinks had been counted as if every port ran at one rate: "1:1" over
  // faster NICs was blocking, and over slower NICs bought twice the uplinks it needed.)
  const auto cabled = [](std::int64_t used, std::int64_t up, std::int64_t down) { return (used * up + down - 1) / down; };
  const std::int64_t leaf_used = std::min(c.d1, c.rail ? units : E);
  const double leaf_rate = nic.value() / bw.value();  // a down port's rate in uplinks
  // A double until checked: links far slower than the NICs need more uplinks than an
  // integer holds.
  const double leaf_needs_exact =
      c.leaves == 1 ? 0.0
      : leaf_rate == 1.0
          ? static_cast<double>(cabled(leaf_used, s1.up, s1.down))
          // At least one (a leaf's traffic must leave it, however fast the link); the
          // rounding's slack is relative, so a ratio that is whole up to rounding stays whole.
          : std::max(1.0, std::ceil(static_cast<double>(leaf_used) * leaf_rate * static_cast<double>(s1.up) /
                                    static_cast<double>(s1.down) * (1.0 - 1e-12)));
  if (leaf_needs_exact > static_cast<double>(s1.up)) {
    const Ratio r = tier_ratio(cfg.oversubscription, 0, tiers);
    errors.push_back({"fabric.link_bandwidth",
                      fmt::format("at {} a leaf's {} ports down to NICs of {} need {} uplinks of {}, more than its {} "
                                  "up ports",
                                  config::Codec<Ratio>::text(r), leaf_used, sim::human(nic),
                                  leaf_needs_exact < 1e9 ? fmt::format("{:.0f}", leaf_needs_exact)
                                                         : fmt::format("{:.3g}", leaf_needs_exact),
                                  sim::human(bw), s1.up),
                      fmt::format("links at least as fast as the NICs (link_bandwidth: {}), or a ratio with fewer "
                                  "uplinks (oversubscription)",
                                  sim::human(nic))});
    return false;
  }
  const auto leaf_needs = static_cast<std::int64_t>(leaf_needs_exact);
  Split s2;  // aggregation ports (3 tiers)
  if (tiers == 3) {
    split_ports(k, tier_ratio(cfg.oversubscription, 1, tiers), s2);
    c.d2 = s2.down;
    c.pods = (c.leaves + c.d2 - 1) / c.d2;
    // A leaf's uplinks go one to each aggregation switch of its pod: no parallel links.
    c.u1 = leaf_needs == 0 ? 0 : std::max(leaf_needs, std::min<std::int64_t>(2, s1.up));
    const UpCabling top =
        cable_up(c.pods == 1 ? 0 : cabled(std::min(c.d2, c.leaves), s2.up, s2.down), s2.up, c.pods, k, 1);
    c.u2 = top.up;
    c.parallel = top.parallel;
    c.top_per_plane = top.above;
    c.top_switches = c.top_per_plane * c.u1;
  } else {
    const UpCabling top = cable_up(leaf_needs, s1.up, c.leaves, k, 2);
    c.u1 = top.up;
    c.parallel = top.parallel;
    c.top_switches = top.above;
  }

  // Vertices: leaves, then (3 tiers) u1 aggregation switches per pod, then the top tier.
  c.leaf_base = b.add_vertices(VertexKind::leaf, c.leaves);
  if (tiers == 3) c.agg_base = b.add_vertices(VertexKind::spine, c.pods * c.u1);
  c.top_base = b.add_vertices(tiers == 3 ? VertexKind::core : VertexKind::spine, c.top_switches);

  // Access links: NIC e plugs into its leaf.
  f.access_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  const std::int64_t C = f.nics_per_node;
  for (std::int64_t n = 0; n < f.nodes; ++n) {
    for (std::int64_t j = 0; j < C; ++j) {
      const u32 leaf = c.leaf_base + to_u32(c.leaf_of(n, j, C));
      b.add_cable(f.nic(n * C + j).value, leaf, LinkKind::access, Medium::optical, f.links[f.host_base].bandwidth,
                  cfg.link_latency);
    }
  }
  // Leaf uplinks: to spine k / m (2 tiers) or to aggregation switch k of the pod (3 tiers).
  c.leaf_up_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  for (std::int64_t l = 0; l < c.leaves; ++l) {
    for (std::int64_t up = 0; up < c.u1; ++up) {
      const u32 above = tiers == 2 ? c.top_base + to_u32(up / c.parallel)
                                   : c.agg_base + to_u32((l / c.d2) * c.u1 + up);
      b.add_cable(c.leaf_base + to_u32(l), above, LinkKind::leaf_spine, Medium::optical, bw, cfg.link_latency);
    }
  }
  if (tiers == 3) {
    // Aggregation switch j of pod P, uplink k: core k / m of plane j.
    c.agg_up_base = to_u32(static_cast<std::int64_t>(f.links.size()));
    for (std::int64_t a = 0; a < c.pods * c.u1; ++a) {
      const std::int64_t plane = a % c.u1;
      for (std::int64_t up = 0; up < c.u2; ++up) {
        const u32 core = c.top_base + to_u32(plane * c.top_per_plane + up / c.parallel);
        b.add_cable(c.agg_base + to_u32(a), core, LinkKind::spine_core, Medium::optical, bw, cfg.link_latency);
      }
    }
  }
  f.tiers = {{"leaf", c.leaves}};
  if (tiers == 3) f.tiers.push_back({"spine", c.pods * c.u1});
  f.tiers.push_back({tiers == 3 ? "core" : "spine", c.top_switches});
  // Ports of a tier, and how many of its up ports are cabled when not all.
  const auto ports = [](std::int64_t down, std::int64_t up, std::int64_t cabled_up) {
    return cabled_up == up ? fmt::format("{} down, {} up ports", down, up)
                           : fmt::format("{} down, {} up ports, {} cabled", down, up, cabled_up);
  };
  const std::string links = c.parallel == 1 ? "one link" : fmt::format("{} parallel links", c.parallel);
  f.sizing_note = fmt::format(
      "{} {}-tier Clos of radix-{} switches: {} lea{} ({}){}{}; {} endpoints of {} the design holds",
      c.rail ? "rail-optimized" : "folded", tiers, k, c.leaves, c.leaves == 1 ? "f" : "ves", ports(c.d1, s1.up, c.u1),
      tiers == 3 ? fmt::format(", {} pod{} of up to {} leaves with {} aggregation switches ({})", c.pods,
                               c.pods == 1 ? "" : "s", c.d2, c.pods * c.u1, ports(c.d2, s2.up, c.u2))
                 : std::string(),
      c.top_switches == 0
          ? fmt::format(", no {} switches (traffic never leaves the {})", tiers == 3 ? "core" : "spine",
                        tiers == 3 && c.u1 > 0 ? "pod" : "leaf")
          // A core switch joins one aggregation switch per pod, its plane's (it read "to each
          // switch below": 4 x 320 links on a 64-port switch).
          : tiers == 3
              ? fmt::format(", {} core switch{} in {} plane{}, each with {} to its plane's aggregation switch in "
                            "each pod",
                            c.top_switches, c.top_switches == 1 ? "" : "es", c.u1, c.u1 == 1 ? "" : "s", links)
              : fmt::format(", {} spine switch{} with {} to each leaf", c.top_switches,
                            c.top_switches == 1 ? "" : "es", links),
      E, tiers == 3 ? k * c.d2 * c.d1 : (c.rail ? k / R * R : k) * c.d1);
  f.layout = std::move(c);
  return true;
}

// Every dimension of at least 2 vertices; each one that is not, said at its own element.
bool torus_dims_ok(const std::vector<std::int64_t>& dims, std::vector<FabricError>& errors) {
  bool ok = true;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 2) continue;
    errors.push_back({fmt::format("fabric.dims[{}]", i),
                      fmt::format("every torus dimension needs at least 2 vertices, got {}", dims[i]),
                      "2 or more, or drop the dimension"});
    ok = false;
  }
  return ok;
}

bool build_torus(const FabricConfig& cfg, Fabric& f, Builder& b, sim::Bandwidth bw, std::vector<FabricError>& errors) {
  if (cfg.dims.empty()) {
    errors.push_back({"fabric.dims", "a torus needs its dimensions", "add e.g. 'dims: [8, 8, 8]'"});
    return false;
  }
  TorusLayout t;
  t.dims = cfg.dims;
  t.routers = 1;
  if (!torus_dims_ok(cfg.dims, errors)) return false;
  for (std::int64_t d : t.dims) {
    t.strides.push_back(t.routers);
    t.routers *= d;  // bounded by build_fabric's size check
  }
  if (t.routers < f.nodes) {
    errors.push_back({"fabric.dims", fmt::format("the torus has {} vertices for {} nodes", t.routers, f.nodes),
                      "enlarge dims so that their product is at least cluster.nodes"});
    return false;
  }
  t.router_base = b.add_vertices(VertexKind::router, t.routers);
  f.access_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  for (std::int64_t e = 0; e < f.endpoints(); ++e) {
    b.add_cable(f.nic(e).value, t.router_base + to_u32(e / f.nics_per_node), LinkKind::access, Medium::copper,
                f.links[f.host_base].bandwidth, cfg.link_latency);
  }
  const auto D = static_cast<std::int64_t>(t.dims.size());
  t.link_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  // Router r sits in the rack of node r (the routers past the nodes as if they had nodes).
  const std::int64_t per_rack = cfg.nodes_per_rack;
  for (std::int64_t r = 0; r < t.routers; ++r) {
    for (std::int64_t d = 0; d < D; ++d) {
      const std::int64_t x = (r / t.strides[static_cast<std::size_t>(d)]) % t.dims[static_cast<std::size_t>(d)];
      const std::int64_t next = r + ((x + 1) % t.dims[static_cast<std::size_t>(d)] - x) * t.strides[static_cast<std::size_t>(d)];
      const Medium medium = per_rack > 0 && r / per_rack != next / per_rack ? Medium::optical : Medium::copper;
      b.add_cable(t.router_base + to_u32(r), t.router_base + to_u32(next), LinkKind::torus, medium, bw,
                  cfg.link_latency);
    }
  }
  f.tiers = {{"router", t.routers}};
  std::string shape;
  for (std::size_t i = 0; i < t.dims.size(); ++i) shape += fmt::format("{}{}", i ? "x" : "", t.dims[i]);
  f.sizing_note = fmt::format("{} torus with wraparound: {} routers, {} occupied by nodes", shape, t.routers, f.nodes);
  f.layout = std::move(t);
  return true;
}

bool build_dragonfly(const FabricConfig& cfg, Fabric& f, Builder& b, sim::Bandwidth bw,
                     std::vector<FabricError>& errors) {
  DragonflyLayout d;
  d.a = cfg.routers_per_group;
  d.p = cfg.hosts_per_router;
  d.h = cfg.global_links_per_router;
  d.routing = cfg.routing;
  for (const auto& [value, key] : {std::pair{d.a, "routers_per_group"}, std::pair{d.p, "hosts_per_router"},
                                   std::pair{d.h, "global_links_per_router"}}) {
    if (value < 1) {
      errors.push_back({fmt::format("fabric.{}", key), fmt::format("a dragonfly needs {} of at least 1", key),
                        "e.g. routers_per_group: 8, hosts_per_router: 4, global_links_per_router: 4"});
    }
  }
  if (!errors.empty()) return false;
  const std::int64_t max_groups = d.a * d.h + 1;
  const std::int64_t per_group = d.a * d.p;
  const std::int64_t needed = (f.endpoints() + per_group - 1) / per_group;
  // A written group count beyond the maximum is its own error, whatever the cluster needs.
  if (cfg.groups > max_groups) {
    errors.push_back({"fabric.groups", fmt::format("a dragonfly with a={} and h={} has at most a*h+1 = {} groups, got {}",
                                                   d.a, d.h, max_groups, cfg.groups),
                      fmt::format("groups: {} at most; more groups need more global links per router", max_groups)});
  }
  if (needed > max_groups) {
    errors.push_back({"fabric.routers_per_group",
                      fmt::format("a dragonfly with a={} and h={} has at most a*h+1 = {} groups ({} endpoints); "
                                  "this cluster needs {} groups for {} endpoints",
                                  d.a, d.h, max_groups, max_groups * per_group, needed, f.endpoints()),
                      "raise routers_per_group, hosts_per_router or global_links_per_router"});
    return false;
  }
  // Default: the groups the nodes fill. Their global ports are spread over the fewer group
  // pairs as parallel links (below), as a dragonfly smaller than its maximum a*h + 1 groups
  // (Kim et al.) is cabled. Before, the default was the maximum, and 33 DGX nodes on a=8, h=4
  // were priced with all 264 routers of 33 groups where 9 groups carry them.
  d.g = cfg.groups ? cfg.groups : needed;
  if (d.g > max_groups) return false;  // said above
  if (d.g < needed) {
    errors.push_back({"fabric.groups", fmt::format("{} groups of {} endpoints hold {}, fewer than the cluster's {}", d.g,
                                                   per_group, d.g * per_group, f.endpoints())});
    return false;
  }
  // One group: its routers are all-to-all local links, its global ports dark; L = 1 keeps the
  // copy arithmetic defined (no route leaves the group).
  d.links_per_pair = d.g == 1 ? 1 : d.a * d.h / (d.g - 1);
  const std::int64_t routers = d.a * d.g;
  d.router_base = b.add_vertices(VertexKind::router, routers);
  // A router sits in the rack of the node of its first endpoint (endpoints are numbered node
  // by node; the routers past the nodes as if they had nodes).
  const std::int64_t per_rack = cfg.nodes_per_rack;
  const auto rack_of_router = [&](std::int64_t r) { return r * d.p / f.nics_per_node / per_rack; };
  const auto between_racks = [&](std::int64_t rack_a, std::int64_t rack_b) {
    return per_rack > 0 && rack_a != rack_b ? Medium::optical : Medium::copper;
  };
  f.access_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  for (std::int64_t e = 0; e < f.endpoints(); ++e) {
    const Medium medium = per_rack > 0 ? between_racks(e / f.nics_per_node / per_rack, rack_of_router(e / d.p))
                                       : Medium::copper;
    b.add_cable(f.nic(e).value, d.router_base + to_u32(e / d.p), LinkKind::access, medium,
                f.links[f.host_base].bandwidth, cfg.link_latency);
  }
  d.local_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  for (std::int64_t G = 0; G < d.g; ++G) {
    for (std::int64_t r1 = 0; r1 < d.a; ++r1) {
      for (std::int64_t r2 = r1 + 1; r2 < d.a; ++r2) {
        const Medium medium =
            per_rack > 0 ? between_racks(rack_of_router(G * d.a + r1), rack_of_router(G * d.a + r2)) : Medium::copper;
        b.add_cable(d.router_base + to_u32(G * d.a + r1), d.router_base + to_u32(G * d.a + r2), LinkKind::local,
                    medium, bw, cfg.link_latency);
      }
    }
  }
  // Global links, one directed link per (group, port); dark ports get a self-link placeholder
  // that no route uses, so that ids stay arithmetic. Reverse ids are filled in afterwards.
  d.global_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  const std::int64_t ports = d.a * d.h;
  const std::int64_t used = d.links_per_pair * (d.g - 1);
  for (std::int64_t G = 0; G < d.g; ++G) {
    for (std::int64_t q = 0; q < ports; ++q) {
      const u32 from = d.router_base + to_u32(G * d.a + q / d.h);
      if (q >= used) {
        b.add_link(from, from, LinkKind::global, Medium::optical, sim::Bandwidth::of(0), cfg.link_latency);
        continue;
      }
      const std::int64_t m = q % (d.g - 1);
      const std::int64_t copy = q / (d.g - 1);
      const std::int64_t H = (G + 1 + m) % d.g;
      const std::int64_t q2 = copy * (d.g - 1) + (d.g - 2 - m);
      b.add_link(from, d.router_base + to_u32(H * d.a + q2 / d.h), LinkKind::global, Medium::optical, bw,
                 cfg.link_latency);
    }
  }
  for (std::int64_t G = 0; G < d.g; ++G) {
    for (std::int64_t q = 0; q < used; ++q) {
      const std::int64_t m = q % (d.g - 1);
      const std::int64_t H = (G + 1 + m) % d.g;
      const std::int64_t q2 = (q / (d.g - 1)) * (d.g - 1) + (d.g - 2 - m);
      f.links[static_cast<std::size_t>(d.global_base + to_u32(G * ports + q))].reverse = {d.global_base + to_u32(H * ports + q2)};
    }
  }
  f.tiers = {{"router", routers}};
  f.sizing_note = fmt::format(
      "dragonfly of {} group{} x {} routers (p={} endpoints, h={} global links each; radix {}){}{}; the nodes fill {} of "
      "the groups",
      d.g, d.g == 1 ? "" : "s", d.a, d.p, d.h, d.p + d.a - 1 + d.h,
      d.g == 1 ? std::string("; one group, no global link")
               : fmt::format("; {} global link{} between each pair of groups", d.links_per_pair,
                             d.links_per_pair == 1 ? "" : "s"),
      used < ports ? fmt::format(", {} dark global port{} per group", ports - used, ports - used == 1 ? "" : "s") : std::string(), needed);
  f.layout = std::move(d);
  return true;
}

}  // namespace

std::optional<Fabric> build_fabric(const FabricConfig& cfg, const cluster::ResolvedNode& node, std::int64_t nodes,
                                   std::vector<FabricError>& errors) {
  if (node.spec.nics < 1) {
    errors.push_back({"cluster.node.nics", fmt::format("node type '{}' has no scale-out NICs to attach to a fabric",
                                                       node.name)});
    return std::nullopt;
  }
  const sim::Bandwidth bw = cfg.link_bandwidth.value_or(node.spec.nic_bandwidth);
  if (bw.value() <= 0.0) {
    errors.push_back({"fabric.link_bandwidth", "the fabric's links need a line rate above 0"});
    return std::nullopt;
  }
  // Sizes first, in 64-bit arithmetic, so that an impossible fabric is refused before any
  // allocation and no 32-bit id can overflow.
  constexpr std::int64_t kMaxGpus = cluster::kMaxGpus;
  // 2^27 directed links take about 4 GB with their graph (a dragonfly of 2^28 took 12.7 GB
  // and one of 2^30 ran out of memory); 4 million GPUs on a rail-optimized Clos need ~2^25.
  constexpr std::int64_t kMaxLinks = std::int64_t{1} << 27;
  const std::int64_t gpus = nodes * node.spec.gpus;
  if (gpus > kMaxGpus || nodes * node.spec.nics > kMaxGpus) {
    errors.push_back({"cluster.nodes", fmt::format("the fabric model holds at most {} GPUs and NICs; this cluster has "
                                                   "{} GPUs and {} NICs",
                                                   kMaxGpus, gpus, nodes * node.spec.nics)});
    return std::nullopt;
  }
  std::int64_t fabric_links = 0;  // switch-to-switch cables, estimated from the configuration
  if (cfg.topology == Topology::torus) {
    std::int64_t routers = 1;
    // (Checked again, with the others, once the fabric's sizes are known to fit.)
    if (!torus_dims_ok(cfg.dims, errors)) return std::nullopt;
    for (std::int64_t d : cfg.dims) {
      if (routers > kMaxGpus / d) {
        errors.push_back({"fabric.dims", fmt::format("the torus has more than {} vertices", kMaxGpus)});
        return std::nullopt;
      }
      routers *= d;
    }
    fabric_links = routers * static_cast<std::int64_t>(cfg.dims.size());
  } else if (cfg.topology == Topology::dragonfly) {
    const std::int64_t a = cfg.routers_per_group;
    const std::int64_t h = cfg.global_links_per_router;
    const std::int64_t g = cfg.groups ? cfg.groups : a * h + 1;  // a, h <= 4096 (field bounds): no overflow
    // Groups as written can be any count: more than a h + 1 is the builder's error, said
    // there with its remedy; beyond the limit it is said here, on the key, before a g overflows.
    if (cfg.groups > kMaxGpus) {
      errors.push_back({"fabric.groups",
                        fmt::format("{} groups is more than the {} supported (and than a h + 1 = {}, the most a "
                                    "dragonfly of a = {}, h = {} joins)",
                                    cfg.groups, kMaxGpus, a * h + 1, a, h),
                        fmt::format("groups: 0, the groups the nodes fill, or at most {}", a * h + 1)});
      return std::nullopt;
    }
    if (a * h > kMaxGpus || g > kMaxGpus || a * g > kMaxGpus) {
      errors.push_back({"fabric.routers_per_group",
                        fmt::format("the dragonfly has more routers or global links than supported: a = {}, h = {} and "
                                    "g = {} give {} global ports per group and {} routers; each must be at most {}",
                                    a, h, g, a * h, a * g, kMaxGpus),
                        "fewer routers per group or global links per router"});
      return std::nullopt;
    }
    fabric_links = g * (a * (a - 1) / 2 + a * h);
  } else {
    fabric_links = 2 * nodes * node.spec.nics;  // leaf and spine uplinks, at most one per endpoint each
  }
  const std::int64_t mesh = node.spec.gpus * (node.spec.gpus - 1) / 2;
  const std::int64_t links = 2 * (gpus + gpus + nodes * node.spec.nics + fabric_links) +
                             (node.spec.scaleup == hardware::ScaleUp::infinity_fabric ? 2 * nodes * mesh : 0);
  if (links > kMaxLinks) {
    const char* key = cfg.topology == Topology::dragonfly ? "fabric.global_links_per_router"
                      : cfg.topology == Topology::torus   ? "fabric.dims"
                                                          : "cluster.nodes";
    errors.push_back({key, fmt::format("the fabric would have about {} directed links; at most {} are supported "
                                       "(about 4 GB of memory)", links, kMaxLinks)});
    return std::nullopt;
  }
  if (node.spec.gpus > 1 && node.spec.scaleup != hardware::ScaleUp::none && node.scaleup_bandwidth.value() <= 0.0) {
    errors.push_back({"cluster.node.scaleup_bandwidth",
                      fmt::format("node type '{}' joins {} GPUs by {} but has no scale-up bandwidth", node.name,
                                  node.spec.gpus, config::enum_name(node.spec.scaleup)),
                      "set scaleup_bandwidth on the node or its GPU, or 'scaleup: none'"});
    return std::nullopt;
  }
  Fabric f;
  f.topology = cfg.topology;
  f.nodes = nodes;
  f.link_bandwidth = bw;
  f.gpus_per_node = node.spec.gpus;
  f.nics_per_node = node.spec.nics;
  f.rails = node.spec.rails > 0 ? node.spec.rails : node.spec.nics;
  f.ecmp_seed = static_cast<std::uint64_t>(cfg.ecmp_seed);
  f.route_by_destination = cfg.path_selection == PathSelection::destination;
  Builder b(f);
  f.gpu_base = b.add_vertices(VertexKind::gpu, f.gpus());
  f.nic_base = b.add_vertices(VertexKind::nic, f.endpoints());
  f.has_nvlink = node.spec.gpus > 1 && node.spec.scaleup != hardware::ScaleUp::none;
  f.scaleup_mesh = f.has_nvlink && node.spec.scaleup == hardware::ScaleUp::infinity_fabric;
  f.scaleup_base = f.has_nvlink && !f.scaleup_mesh ? b.add_vertices(VertexKind::scaleup, nodes) : 0;
  f.links.reserve(static_cast<std::size_t>(f.gpus() * 4 + f.endpoints() * 8));
  // Node-level links: GPU <-> scale-up switch (NVLink), GPU <-> its NIC (host path).
  f.nvlink_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  if (f.scaleup_mesh) {
    // Infinity Fabric: every pair of a node's GPUs has its own link, sharing the GPU's
    // scale-up bandwidth equally among its g - 1 peers.
    const std::int64_t G = f.gpus_per_node;
    const sim::Bandwidth per_peer = node.scaleup_bandwidth / static_cast<double>(G - 1);
    for (std::int64_t n = 0; n < nodes; ++n) {
      for (std::int64_t i = 0; i < G; ++i) {
        for (std::int64_t j = i + 1; j < G; ++j) {
          b.add_cable(f.gpu(n * G + i).value, f.gpu(n * G + j).value, LinkKind::nvlink, Medium::internal, per_peer,
                      node.spec.scaleup_latency);
        }
      }
    }
  } else if (f.has_nvlink) {
    // scaleup_latency is GPU to GPU, through the switch: half on each of the two links (to
    // the nanosecond). Each had carried all of it, so a GPU-to-GPU hop cost twice the
    // catalog's figure (1.2 us for the 0.6 us of NCCL's NVLink hop).
    const sim::Time half = sim::Time::from_ns((node.spec.scaleup_latency.ns() + 1) / 2);
    for (std::int64_t g = 0; g < f.gpus(); ++g) {
      b.add_cable(f.gpu(g).value, f.scaleup_base + to_u32(g / f.gpus_per_node), LinkKind::nvlink, Medium::internal,
                  node.scaleup_bandwidth, half);
    }
  }
  f.host_base = to_u32(static_cast<std::int64_t>(f.links.size()));
  for (std::int64_t g = 0; g < f.gpus(); ++g) {
    b.add_cable(f.gpu(g).value, f.nic(f.endpoint_of_gpu(g)).value, LinkKind::host, Medium::internal,
                node.spec.nic_bandwidth, sim::Time::zero());
  }
  bool ok = false;
  switch (cfg.topology) {
    case Topology::fat_tree:
    case Topology::rail_clos: ok = build_clos(cfg, f, b, bw, node.spec.nic_bandwidth, errors); break;
    case Topology::torus: ok = build_torus(cfg, f, b, bw, errors); break;
    case Topology::dragonfly: ok = build_dragonfly(cfg, f, b, bw, errors); break;
  }
  if (!ok) return std::nullopt;
  return f;
}

// ---------------------------------------------------------------------------------------
// Routing.

namespace {

LinkId rev(const Fabric& f, LinkId l) { return f.links[l.value].reverse; }

// The down direction of a cable named by its up link: add_cable() puts the two directions
// side by side, so this is arithmetic, not a load from the (large) link table. Clos and torus
// routes use it for every link; all their links are cables.
LinkId down(LinkId up) { return LinkId{up.value + 1}; }

void route_clos(const Fabric& f, const ClosLayout& c, std::int64_t src, std::int64_t dst, std::uint64_t flow,
                std::vector<LinkId>& out) {
  const std::int64_t C = f.nics_per_node;
  const std::int64_t l1 = c.leaf_of(src / C, src % C, C);
  const std::int64_t l2 = c.leaf_of(dst / C, dst % C, C);
  out.push_back(f.access_up(src));
  if (l1 != l2) {
    // Hash: each flow its own draw of uplink j and, across pods, of core uplink k.
    // Destination (D-mod-k): the destination's place in the leaves' order, q = its leaf x d1
    // + its port on that leaf (the endpoint's index on a fat tree; on a rail leaf its node's
    // place in the rail group), gives j = q mod u1 and k = (q / u1) mod u2.
    std::int64_t j = 0;
    std::int64_t k = 0;
    if (f.route_by_destination) {
      const std::int64_t q = l2 * c.d1 + (c.rail ? (dst / c.rails) % c.d1 : dst % c.d1);
      j = q % c.u1;
      if (c.u2 > 0) k = (q / c.u1) % c.u2;
    } else {
      const std::uint64_t h = flow_hash(flow, src, dst, f.ecmp_seed);
      j = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(c.u1));
      if (c.u2 > 0) k = static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(c.u2));
    }
    const auto leaf_up = [&](std::int64_t leaf, std::int64_t up) {
      return LinkId{c.leaf_up_base + 2 * to_u32(leaf * c.u1 + up)};
    };
    if (c.tiers == 2 || l1 / c.d2 == l2 / c.d2) {
      // Up to spine (or aggregation switch) j / m by parallel link j % m, and down the same way.
      out.push_back(leaf_up(l1, j));
      out.push_back(down(leaf_up(l2, j)));
    } else {
      const auto agg_up = [&](std::int64_t pod, std::int64_t plane) {
        return LinkId{c.agg_up_base + 2 * to_u32((pod * c.u1 + plane) * c.u2 + k)};
      };
      out.push_back(leaf_up(l1, j));
      out.push_back(agg_up(l1 / c.d2, j));
      out.push_back(down(agg_up(l2 / c.d2, j)));
      out.push_back(down(leaf_up(l2, j)));
    }
  }
  out.push_back(down(f.access_up(dst)));
}

std::int64_t clos_hops(const ClosLayout& c, std::int64_t l1, std::int64_t l2) {
  if (l1 == l2) return 0;
  if (c.tiers == 2 || l1 / c.d2 == l2 / c.d2) return 2;
  return 4;
}

void route_torus(const Fabric& f, const TorusLayout& t, std::int64_t src, std::int64_t dst, std::uint64_t flow,
                 std::vector<LinkId>& out) {
  const std::int64_t r1 = src / f.nics_per_node;
  const std::int64_t r2 = dst / f.nics_per_node;
  // A tie (k even, the destination k/2 away) goes either way round the ring, by a bit of the
  // flow's hash per dimension, as ECMP would: always the + way had loaded the + links with
  // every tie, and a dimension of 2, whose two cables join the same pair, used one of them
  // each way. Unsalted: fabric.ecmp_seed is a Clos or dragonfly key (a torus refuses it).
  const std::uint64_t h = flow_hash(flow, src, dst, 0);
  out.push_back(f.access_up(src));
  std::int64_t cur = r1;
  const auto D = static_cast<std::int64_t>(t.dims.size());
  for (std::int64_t d = 0; d < D; ++d) {
    const std::int64_t k = t.dims[static_cast<std::size_t>(d)];
    const std::int64_t stride = t.strides[static_cast<std::size_t>(d)];
    const std::int64_t x1 = (cur / stride) % k;
    const std::int64_t x2 = (r2 / stride) % k;
    const std::int64_t delta = ((x2 - x1) % k + k) % k;
    if (delta == 0) continue;
    const bool plus = 2 * delta < k || (2 * delta == k && ((h >> (d % 64)) & 1U) == 0);
    const std::int64_t steps = plus ? delta : k - delta;
    std::int64_t x = x1;
    for (std::int64_t s = 0; s < steps; ++s) {
      if (plus) {
        out.push_back(LinkId{t.link_base + 2 * to_u32(cur * D + d)});
        const std::int64_t nx = (x + 1) % k;
        cur += (nx - x) * stride;
        x = nx;
      } else {
        const std::int64_t px = (x - 1 + k) % k;
        const std::int64_t prev = cur + (px - x) * stride;
        out.push_back(down(LinkId{t.link_base + 2 * to_u32(prev * D + d)}));
        cur = prev;
        x = px;
      }
    }
  }
  out.push_back(down(f.access_up(dst)));
}

std::int64_t ring_distance(std::int64_t a, std::int64_t b, std::int64_t k) {
  const std::int64_t d = ((b - a) % k + k) % k;
  return std::min(d, k - d);
}

struct DragonflyHop {
  std::int64_t port;     ///< global port q in the source group
  std::int64_t exit;     ///< router (within its group) owning the port
  std::int64_t arrival;  ///< router (within the destination group) where the link lands
};

// The global link from group gs to group gd, copy `copy` of links_per_pair.
DragonflyHop dragonfly_global(const DragonflyLayout& d, std::int64_t gs, std::int64_t gd, std::int64_t copy) {
  const std::int64_t m = ((gd - gs - 1) % d.g + d.g) % d.g;
  const std::int64_t q = copy * (d.g - 1) + m;
  const std::int64_t q2 = copy * (d.g - 1) + (d.g - 2 - m);
  return {q, q / d.h, q2 / d.h};
}

LinkId dragonfly_local(const DragonflyLayout& d, std::int64_t group, std::int64_t r1, std::int64_t r2) {
  const std::int64_t lo = std::min(r1, r2);
  const std::int64_t hi = std::max(r1, r2);
  const LinkId up{d.local_base + 2 * to_u32(group * (d.a * (d.a - 1) / 2) + tri_index(d.a, lo, hi))};
  return r1 < r2 ? up : LinkId{up.value + 1};
}

}  // namespace

std::int64_t dragonfly_copy(const DragonflyLayout& d, std::int64_t R1, std::int64_t R2, std::uint64_t spread) {
  const std::int64_t L = d.links_per_pair;
  const std::int64_t start = (R1 + R2) % L;
  const std::int64_t gs = R1 / d.a, rs = R1 % d.a, gd = R2 / d.a, rd = R2 % d.a;
  if (L == 1 || gs == gd) return start;
  const auto local_hops = [&](std::int64_t c) {
    const DragonflyHop hop = dragonfly_global(d, gs, gd, c);
    return (rs != hop.exit ? 1 : 0) + (rd != hop.arrival ? 1 : 0);
  };
  int best_local = 3;
  std::uint64_t ties = 0;
  for (std::int64_t c = 0; c < L; ++c) {
    const int local = local_hops(c);
    if (local < best_local) {
      best_local = local;
      ties = 0;
    }
    ties += local == best_local ? 1u : 0u;
  }
  // The (spread mod ties)-th of the tied copies from `start` on.
  std::uint64_t skip = spread % ties;
  for (std::int64_t i = 0;; ++i) {
    const std::int64_t c = (start + i) % L;
    if (local_hops(c) != best_local) continue;
    if (skip == 0) return c;
    --skip;
  }
}

namespace {

// Appends (when `out` is given) the minimal route between routers (group, index) over global
// link copy `copy`, and returns its router hops.
std::int64_t dragonfly_minimal(const DragonflyLayout& d, std::int64_t gs, std::int64_t rs, std::int64_t gd,
                               std::int64_t rd, std::int64_t copy, std::vector<LinkId>* out) {
  if (gs == gd) {
    if (rs == rd) return 0;
    if (out) out->push_back(dragonfly_local(d, gs, rs, rd));
    return 1;
  }
  const DragonflyHop hop = dragonfly_global(d, gs, gd, copy);
  std::int64_t hops = 1;
  if (rs != hop.exit) {
    if (out) out->push_back(dragonfly_local(d, gs, rs, hop.exit));
    ++hops;
  }
  if (out) out->push_back(LinkId{d.global_base + to_u32(gs * d.a * d.h + hop.port)});
  if (hop.arrival != rd) {
    if (out) out->push_back(dragonfly_local(d, gd, hop.arrival, rd));
    ++hops;
  }
  return hops;
}

// Valiant: minimally to intermediate group gi (copy (R1 + gi) mod L), then minimally from
// the router the link lands on. Returns the router hops.
std::int64_t dragonfly_valiant(const DragonflyLayout& d, std::int64_t R1, std::int64_t R2, std::int64_t gi,
                               std::uint64_t spread, std::vector<LinkId>* out) {
  const std::int64_t gs = R1 / d.a, rs = R1 % d.a, gd = R2 / d.a, rd = R2 % d.a;
  const std::int64_t copy = (R1 + gi) % d.links_per_pair;
  const DragonflyHop first = dragonfly_global(d, gs, gi, copy);
  const std::int64_t X = gi * d.a + first.arrival;
  return dragonfly_minimal(d, gs, rs, gi, first.arrival, copy, out) +
         dragonfly_minimal(d, gi, first.arrival, gd, rd, dragonfly_copy(d, X, R2, spread), out);
}

void route_dragonfly(const Fabric& f, const DragonflyLayout& d, std::int64_t src, std::int64_t dst, std::uint64_t flow,
                     std::vector<LinkId>& out, LoadView load) {
  const std::int64_t R1 = src / d.p;
  const std::int64_t R2 = dst / d.p;
  const std::int64_t gs = R1 / d.a, rs = R1 % d.a, gd = R2 / d.a, rd = R2 % d.a;
  const std::uint64_t h = flow_hash(flow, src, dst, f.ecmp_seed);
  // Among a router pair's tied global links (dragonfly_copy): round robin over the pairs of
  // their hosts, as a dragonfly's adaptive routing balances parallel minimal paths. A hash
  // (as ECMP) left 4 flows on 1 of 2 links where 2 each fit (and no seed to draw again).
  const auto spread = static_cast<std::uint64_t>((src % d.p) * d.p + dst % d.p);
  out.push_back(f.access_up(src));
  bool valiant = d.routing == Routing::valiant && gs != gd && d.g > 2;
  // Intermediate group: uniformly among the groups other than source and destination.
  std::int64_t gi = static_cast<std::int64_t>((h >> 20) % static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.g - 2)));
  for (std::int64_t skip : {std::min(gs, gd), std::max(gs, gd)}) {
    if (gi >= skip) ++gi;
  }
  if (d.routing == Routing::ugal && gs != gd && d.g > 2 && load.load) {
    // UGAL (Kim et al., ISCA'08), with global knowledge (UGAL-G) of the load in flows:
    // Valiant when its path's most loaded link carries fewer flows than the minimal path's.
    // Kim et al. weigh each path's queue by its hop count, which estimates a packet's delay;
    // a bandwidth-bound transfer's time is its bytes over its bottleneck share, where hops
    // do not count, and hop weighting kept 1.9x Valiant's time on an all-to-all between two
    // groups. Weighing the first link only (UGAL-L, whose local queue would see a congested
    // global link through backpressure, which a static count of flows has not) sent most
    // flows of a group onto its one global link to the other: 4.9x Valiant's time.
    thread_local std::vector<LinkId> minimal_links;
    thread_local std::vector<LinkId> valiant_links;
    minimal_links.clear();
    valiant_links.clear();
    dragonfly_minimal(d, gs, rs, gd, rd, dragonfly_copy(d, R1, R2, spread), &minimal_links);
    dragonfly_valiant(d, R1, R2, gi, spread, &valiant_links);
    const auto most = [&](const std::vector<LinkId>& links) {
      double m = 0.0;
      for (LinkId l : links) m = std::max(m, load.load(load.context, l));
      return m;
    };
    valiant = most(valiant_links) < most(minimal_links);
  }
  if (valiant) {
    dragonfly_valiant(d, R1, R2, gi, spread, &out);
  } else {
    dragonfly_minimal(d, gs, rs, gd, rd, dragonfly_copy(d, R1, R2, spread), &out);
  }
  out.push_back(rev(f, f.access_up(dst)));
}

}  // namespace

void Fabric::route_endpoints(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::vector<LinkId>& out,
                             LoadView load) const {
  if (src == dst) return;
  std::visit(
      [&](const auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ClosLayout>) route_clos(*this, l, src, dst, flow, out);
        if constexpr (std::is_same_v<L, TorusLayout>) route_torus(*this, l, src, dst, flow, out);
        if constexpr (std::is_same_v<L, DragonflyLayout>) route_dragonfly(*this, l, src, dst, flow, out, load);
      },
      layout);
}

bool Fabric::route(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::vector<LinkId>& out,
                   LoadView load) const {
  if (src == dst) return true;
  const std::size_t start = out.size();
  const std::int64_t n1 = src / gpus_per_node;
  const std::int64_t n2 = dst / gpus_per_node;
  if (n1 == n2 && scaleup_mesh) {
    const std::int64_t i = std::min(src, dst) % gpus_per_node;
    const std::int64_t j = std::max(src, dst) % gpus_per_node;
    const std::int64_t pairs = gpus_per_node * (gpus_per_node - 1) / 2;
    const auto id = nvlink_base + 2 * static_cast<std::uint32_t>(n1 * pairs + tri_index(gpus_per_node, i, j));
    out.push_back(LinkId{src < dst ? id : id + 1});
  } else if (n1 == n2 && has_nvlink) {
    out.push_back(LinkId{nvlink_base + 2 * static_cast<std::uint32_t>(src)});
    out.push_back(LinkId{nvlink_base + 2 * static_cast<std::uint32_t>(dst) + 1});
  } else {
    const std::int64_t e1 = endpoint_of_gpu(src);
    const std::int64_t e2 = endpoint_of_gpu(dst);
    out.push_back(LinkId{host_base + 2 * static_cast<std::uint32_t>(src)});
    route_endpoints(e1, e2, flow, out, load);
    out.push_back(LinkId{host_base + 2 * static_cast<std::uint32_t>(dst) + 1});
  }
  if (link_failed.empty()) return true;
  bool blocked = false;
  for (std::size_t i = start; i < out.size(); ++i) blocked = blocked || failed(out[i]);
  if (!blocked) return true;
  out.resize(start);
  return shortest_route(*this, gpu(src), gpu(dst), out);
}

std::int64_t Fabric::switch_hops(std::int64_t src, std::int64_t dst) const {
  return std::visit(
      [&](const auto& l) -> std::int64_t {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ClosLayout>) {
          const std::int64_t C = nics_per_node;
          return clos_hops(l, l.leaf_of(src / C, src % C, C), l.leaf_of(dst / C, dst % C, C));
        } else if constexpr (std::is_same_v<L, TorusLayout>) {
          std::int64_t hops = 0;
          const std::int64_t r1 = src / nics_per_node;
          const std::int64_t r2 = dst / nics_per_node;
          for (std::size_t d = 0; d < l.dims.size(); ++d) {
            hops += ring_distance((r1 / l.strides[d]) % l.dims[d], (r2 / l.strides[d]) % l.dims[d], l.dims[d]);
          }
          return hops;
        } else {
          const std::int64_t R1 = src / l.p;
          const std::int64_t R2 = dst / l.p;
          return dragonfly_minimal(l, R1 / l.a, R1 % l.a, R2 / l.a, R2 % l.a, dragonfly_copy(l, R1, R2), nullptr);
        }
      },
      layout);
}

}  // namespace clustersim::fabric
