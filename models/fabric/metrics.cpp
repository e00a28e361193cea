#include "models/fabric/metrics.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <cmath>
#include <functional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace clustersim::fabric {

const std::pair<const std::string, SwitchPrice>* cheapest_switch(const PricingTable& t, std::int64_t ports,
                                                                 sim::Bandwidth rate, bool sharp) {
  const std::pair<const std::string, SwitchPrice>* best = nullptr;
  for (const auto& entry : t.switches) {
    const SwitchPrice& s = entry.second;
    if (s.ports < ports || s.port_bandwidth < rate || (sharp && !s.sharp)) continue;
    if (!best || s.price < best->second.price) best = &entry;
  }
  return best;
}

const std::pair<const std::string, PartPrice>* cheapest_part(const std::map<std::string, PartPrice>& parts,
                                                             sim::Bandwidth rate, std::string_view prefix) {
  const std::pair<const std::string, PartPrice>* best = nullptr;
  for (const auto& entry : parts) {
    if (!prefix.empty() && entry.first.compare(0, prefix.size(), prefix) != 0) continue;
    if (entry.second.bandwidth < rate) continue;
    if (!best || entry.second.bandwidth < best->second.bandwidth ||
        (entry.second.bandwidth == best->second.bandwidth && entry.second.price < best->second.price)) {
      best = &entry;
    }
  }
  return best;
}

namespace {

double sq(double x) { return x * x; }

struct Hops {
  std::int64_t diameter = 0;
  double total = 0.0;  // sum over ordered pairs of distinct endpoints
};

std::vector<std::int64_t> leaf_occupancy(const Fabric& f, const ClosLayout& c) {
  std::vector<std::int64_t> n(static_cast<std::size_t>(c.leaves), 0);
  for (std::int64_t node = 0; node < f.nodes; ++node) {
    for (std::int64_t j = 0; j < f.nics_per_node; ++j) ++n[static_cast<std::size_t>(c.leaf_of(node, j, f.nics_per_node))];
  }
  return n;
}

Hops clos_hops(const Fabric& f, const ClosLayout& c) {
  const std::vector<std::int64_t> n = leaf_occupancy(f, c);
  const auto E = static_cast<double>(f.endpoints());
  double s_leaf = 0.0;
  std::vector<double> pod(static_cast<std::size_t>(c.pods), 0.0);
  std::int64_t occupied_leaves = 0;
  for (std::size_t l = 0; l < n.size(); ++l) {
    s_leaf += sq(static_cast<double>(n[l]));
    if (n[l] > 0) ++occupied_leaves;
    pod[c.tiers == 3 ? l / static_cast<std::size_t>(c.d2) : 0] += static_cast<double>(n[l]);
  }
  double s_pod = 0.0;
  std::int64_t occupied_pods = 0;
  for (double p : pod) {
    s_pod += sq(p);
    if (p > 0) ++occupied_pods;
  }
  Hops h;
  // Pairs on one leaf: 0 hops; same pod, other leaf: 2 (leaf-agg-leaf); other pod: 4.
  h.total = 2.0 * (s_pod - s_leaf) + (c.tiers == 3 ? 4.0 * (sq(E) - s_pod) : 0.0);
  h.diameter = occupied_pods > 1 ? 4 : occupied_leaves > 1 ? 2 : 0;
  return h;
}

std::int64_t ring(std::int64_t x, std::int64_t y, std::int64_t k) {
  const std::int64_t d = ((y - x) % k + k) % k;
  return std::min(d, k - d);
}

Hops torus_hops(const Fabric& f, const TorusLayout& t) {
  Hops h;
  const auto C = static_cast<double>(f.nics_per_node);
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    const std::int64_t k = t.dims[d];
    const auto K = static_cast<std::size_t>(k);
    std::vector<double> hist(K, 0.0);
    for (std::int64_t node = 0; node < f.nodes; ++node) hist[static_cast<std::size_t>((node / t.strides[d]) % k)] += C;
    // sum over x, y of hist[x] hist[y] ring(x, y) in O(k): y = x + o for the k offsets o in
    // [-floor((k-1)/2), floor(k/2)], whose ring distance is |o|, with prefix sums P (of
    // hist) and Q (of j hist[j]) over three periods (a 1-D torus may be millions long).
    std::vector<double> P(3 * K + 1, 0.0);
    std::vector<double> Q(3 * K + 1, 0.0);
    for (std::size_t j = 0; j < 3 * K; ++j) {
      P[j + 1] = P[j] + hist[j % K];
      Q[j + 1] = Q[j] + static_cast<double>(j) * hist[j % K];
    }
    const std::size_t right = K / 2;
    const std::size_t left = (K - 1) / 2;
    std::vector<std::int64_t> occupied;
    for (std::size_t x = 0; x < K; ++x) {
      if (hist[x] == 0) continue;
      occupied.push_back(static_cast<std::int64_t>(x));
      const std::size_t c = x + K;  // x in the middle period
      const auto cd = static_cast<double>(c);
      const double up = (Q[c + right + 1] - Q[c + 1]) - cd * (P[c + right + 1] - P[c + 1]);
      const double down = cd * (P[c] - P[c - left]) - (Q[c] - Q[c - left]);
      h.total += hist[x] * (up + down);
    }
    // The farthest occupied coordinate from x is the nearest one to its antipode.
    std::int64_t max_d = 0;
    for (const std::int64_t x : occupied) {
      const std::int64_t target = (x + k / 2) % k;
      const auto at = std::lower_bound(occupied.begin(), occupied.end(), target);
      for (const auto it : {at, at == occupied.begin() ? occupied.end() - 1 : at - 1}) {
        max_d = std::max(max_d, ring(x, it == occupied.end() ? occupied.front() : *it, k));
      }
    }
    h.diameter += max_d;  // exact when the occupied vertices form a product set (a full torus)
  }
  return h;
}

Hops dragonfly_hops(const Fabric& f, const DragonflyLayout& d) {
  const auto w = [&](std::int64_t group, std::int64_t r) {
    const std::int64_t first = (group * d.a + r) * d.p;
    return static_cast<double>(std::clamp<std::int64_t>(f.endpoints() - first, 0, d.p));
  };
  std::vector<double> W(static_cast<std::size_t>(d.g), 0.0);
  Hops h;
  for (std::int64_t G = 0; G < d.g; ++G) {
    double s = 0.0;
    std::int64_t occupied = 0;
    for (std::int64_t r = 0; r < d.a; ++r) {
      W[static_cast<std::size_t>(G)] += w(G, r);
      s += sq(w(G, r));
      if (w(G, r) > 0) ++occupied;
    }
    h.total += sq(W[static_cast<std::size_t>(G)]) - s;  // same group, other router: 1 hop
    if (occupied > 1) h.diameter = std::max<std::int64_t>(h.diameter, 1);
  }
  for (std::int64_t gs = 0; gs < d.g; ++gs) {
    const double ws = W[static_cast<std::size_t>(gs)];
    if (ws == 0) continue;
    for (std::int64_t gd = 0; gd < d.g; ++gd) {
      const double wd = W[static_cast<std::size_t>(gd)];
      if (gd == gs || wd == 0) continue;
      const std::int64_t m = ((gd - gs - 1) % d.g + d.g) % d.g;
      const auto exit_of = [&](std::int64_t k) { return (k * (d.g - 1) + m) / d.h; };
      const auto arrival_of = [&](std::int64_t k) { return (k * (d.g - 1) + (d.g - 2 - m)) / d.h; };
      if (d.links_per_pair == 1) {
        // Minimal route: local hop unless already on the exit router, global hop, local hop
        // unless the link lands on the destination router.
        const std::int64_t exit = exit_of(0);
        const std::int64_t arrival = arrival_of(0);
        h.total += ws * wd + (ws - w(gs, exit)) * wd + ws * (wd - w(gd, arrival));
        h.diameter = std::max<std::int64_t>(h.diameter, 1 + (ws > w(gs, exit) ? 1 : 0) + (wd > w(gd, arrival) ? 1 : 0));
        continue;
      }
      // Several links per pair: the copy depends on the router pair, O(a^2) per group pair.
      for (std::int64_t rs = 0; rs < d.a; ++rs) {
        if (w(gs, rs) == 0) continue;
        for (std::int64_t rd = 0; rd < d.a; ++rd) {
          if (w(gd, rd) == 0) continue;
          const std::int64_t k = dragonfly_copy(d, gs * d.a + rs, gd * d.a + rd);
          const std::int64_t hops = 1 + (rs != exit_of(k) ? 1 : 0) + (rd != arrival_of(k) ? 1 : 0);
          h.total += w(gs, rs) * w(gd, rd) * static_cast<double>(hops);
          h.diameter = std::max(h.diameter, hops);
        }
      }
    }
  }
  return h;
}

// E endpoints filled in order into `blocks` blocks of `size` (the last possibly partial):
// the block boundary k in [1, blocks) whose first k blocks hold closest to E / 2 endpoints
// (the first of equals). Precondition: blocks >= 2.
std::int64_t half_split(std::int64_t E, std::int64_t blocks, std::int64_t size) {
  std::int64_t split = 1;
  double best_gap = -1;
  for (std::int64_t k = 1, acc = 0; k < blocks; ++k) {
    acc += std::clamp<std::int64_t>(E - (k - 1) * size, 0, size);
    const double gap = std::fabs(static_cast<double>(acc) - static_cast<double>(E) / 2);
    if (best_gap < 0 || gap < best_gap) {
      best_gap = gap;
      split = k;
    }
  }
  return split;
}

// A dragonfly whose endpoints all sit in group 0: its occupied routers split at the router
// boundary closest to E / 2 (side A below it), or, on a single router (a crossbar), its
// endpoints in halves: floor(E / 2) b_acc. The rest of the fabric, X (the group's routers
// without endpoints and every other group), is kept whole on one side; the s group-0 routers
// on the other side, O, cut their local links to the a - s routers left with X and their
// used global ports, h_r = clamp(L (g - 1) - r h, 0, h), all of which lead out of the group:
//   cost(O) = b s (a - s) + b sum_{r in O} h_r + b_acc (endpoints on the side they are cut from).
// Each router's share is additive apart from s (a - s), so for each s the cheapest O takes
// the routers that add the least; the minimum over s and X's side is O(a log a).
double dragonfly_one_group(const Fabric& f, const DragonflyLayout& d, double b_acc, std::vector<int>& side) {
  const double b = f.link_bandwidth.value();
  const std::int64_t E = f.endpoints();
  const std::int64_t routers = (E + d.p - 1) / d.p;
  if (routers < 2) {
    for (std::int64_t e = E / 2; e < E; ++e) side[static_cast<std::size_t>(e)] = 1;
    return static_cast<double>(E / 2) * b_acc;
  }
  const auto count = [&](std::int64_t r) { return std::clamp<std::int64_t>(E - r * d.p, 0, d.p); };
  const std::int64_t split = half_split(E, routers, d.p);
  for (std::int64_t e = 0; e < E; ++e) side[static_cast<std::size_t>(e)] = e / d.p < split ? 0 : 1;
  const std::int64_t used = d.links_per_pair * (d.g - 1);
  double best = -1;
  for (const int o_side : {0, 1}) {  // the side O is on; X is on the other
    double base = 0.0;                // every occupied router with X
    std::vector<double> extra;        // what moving router r to O adds
    for (std::int64_t r = 0; r < routers; ++r) {
      const double access = static_cast<double>(count(r)) * b_acc;
      const bool on_o_side = (r < split ? 0 : 1) == o_side;
      const double with_x = on_o_side ? access : 0.0;
      const double in_o = static_cast<double>(std::clamp<std::int64_t>(used - r * d.h, 0, d.h)) * b + (on_o_side ? 0.0 : access);
      base += with_x;
      extra.push_back(in_o - with_x);
    }
    std::sort(extra.begin(), extra.end());
    double cost = base;
    for (std::int64_t s = 0; s <= routers; ++s) {
      if (s > 0) cost += extra[static_cast<std::size_t>(s - 1)];
      const double total = cost + static_cast<double>(s * (d.a - s)) * b;
      if (best < 0 || total < best) best = total;
    }
  }
  return best;
}

// The dragonfly's natural bisection. The nodes fill groups 0 .. G_occ - 1, G_occ =
// ceil(E / (a p)), the last one possibly partly; the groups beyond hold no endpoint but are
// built and cabled like the others. The cut splits the occupied groups at the group boundary
// closest to E / 2 (side A below it, side B above). Every pair of groups shares L =
// links_per_pair global cables of bandwidth b, so a partition of the g groups into S and T
// crosses L b |S| |T| one way; a group of side A put in T (or of B in S) adds its endpoints'
// access links instead, n_G b_acc. The capacity is the minimum of
//   cost(S) = L b s (g - s) + b_acc (sum of n_G over A groups in T and B groups in S),  s = |S|,
// over all group partitions; for a given s the cheapest S takes the fullest A groups, then
// empty groups (free), then the emptiest B groups, so the minimum over s = 0 .. g is O(g log g).
// s = 0 and s = g are the endpoints' own links (E_A b_acc, E_B b_acc); s = n_A with no empty
// group is Kim et al.'s n_A n_B L b. Empty groups sit on the cheaper side: with G_occ = g
// the figure is the full machine's, and with empty groups it is n_A n_B L b + min(n_A, n_B)
// e L b, the empty groups relaying between the halves (Valiant and UGAL route through them;
// minimal routes do not, so minimal routing reaches only the n_A n_B L b of direct links).
// One occupied group: its occupied routers are split instead (dragonfly_one_group).
// Cuts through a group's routers are not considered, so the figure can exceed the max-flow
// between the halves where such a cut is cheaper. Against push-relabel max-flow over every
// fill of every dragonfly with a <= 4, p <= 3, h <= 3 and every g, it differed only where
// h > a / 2 (a router's global links outnumber half its local ones) or where the switch
// links are slower than the NICs (b < b_acc: a lone, partly filled router's fabric links
// then cost less than its access links); the tests check the balanced shape (a >= 2h, a >= 2p)
// with b >= b_acc, for every fill (tests/models/test_fabric.cpp).
double dragonfly_bisection(const Fabric& f, const DragonflyLayout& d, double b_acc, std::vector<int>& side) {
  const double b = f.link_bandwidth.value();
  const std::int64_t E = f.endpoints();
  const std::int64_t per_group = d.a * d.p;
  const std::int64_t occupied = (E + per_group - 1) / per_group;
  const auto count = [&](std::int64_t G) { return std::clamp<std::int64_t>(E - G * per_group, 0, per_group); };
  if (occupied < 2) return dragonfly_one_group(f, d, b_acc, side);
  const std::int64_t split = half_split(E, occupied, per_group);  // the group boundary
  for (std::int64_t e = 0; e < E; ++e) side[static_cast<std::size_t>(e)] = e / per_group < split ? 0 : 1;
  std::vector<double> in_a;  // endpoints of each A group, fullest first
  std::vector<double> in_b;  // endpoints of each B group, emptiest first
  for (std::int64_t G = 0; G < occupied; ++G) (G < split ? in_a : in_b).push_back(static_cast<double>(count(G)));
  std::sort(in_a.begin(), in_a.end(), std::greater<>());
  std::sort(in_b.begin(), in_b.end());
  const auto n_a = static_cast<std::int64_t>(in_a.size());
  const std::int64_t empty = d.g - occupied;
  // penalty(s): endpoints whose access links the cut crosses when S holds s groups.
  double left_out = 0.0;  // A groups outside S when s = 0
  for (double n : in_a) left_out += n;
  double best = -1;
  double taken = 0.0;  // B groups inside S
  for (std::int64_t s = 0; s <= d.g; ++s) {
    if (s > 0 && s <= n_a) left_out -= in_a[static_cast<std::size_t>(s - 1)];
    if (s > n_a + empty) taken += in_b[static_cast<std::size_t>(s - n_a - empty - 1)];
    const double cost = static_cast<double>(d.links_per_pair * s * (d.g - s)) * b + (left_out + taken) * b_acc;
    if (best < 0 || cost < best) best = cost;
  }
  return best;
}

// Endpoints per side and the one-way capacity of the natural bisection's cut.
/// Max-flow from s to t on a small dense network (capacities c[i][j]), by shortest
/// augmenting paths (Edmonds-Karp): O(V E^2), for the few dozen nodes of a split pod.
double max_flow_small(std::vector<std::vector<double>> c, std::size_t s, std::size_t t) {
  const std::size_t n = c.size();
  double flow = 0.0;
  std::vector<std::size_t> parent(n);
  for (;;) {
    std::fill(parent.begin(), parent.end(), n);
    parent[s] = s;
    std::vector<std::size_t> queue{s};
    for (std::size_t head = 0; head < queue.size() && parent[t] == n; ++head) {
      const std::size_t x = queue[head];
      for (std::size_t y = 0; y < n; ++y) {
        if (parent[y] == n && c[x][y] > 0.0) {
          parent[y] = x;
          queue.push_back(y);
        }
      }
    }
    if (parent[t] == n) return flow;
    double push = std::numeric_limits<double>::infinity();
    for (std::size_t y = t; y != s; y = parent[y]) push = std::min(push, c[parent[y]][y]);
    for (std::size_t y = t; y != s; y = parent[y]) {
      c[parent[y]][y] -= push;
      c[y][parent[y]] += push;
    }
    flow += push;
  }
}

/// A balanced cut of a full torus: side A takes `m` routers as q whole slices of one
/// dimension and, recursively, part of the next slice (a sub-torus of the other dimensions).
/// `levels` lists (dimension, q) from the outside in; `cables` counts the torus cables the
/// cut crosses (a 2-wide dimension joins its two slices by two cables per position). Of the
/// dimension orders, the one crossing the fewest cables. On an even dimension the best is
/// its middle (2 N / k cables); where every slab is unbalanced (all dimensions odd: 3x3x3)
/// the half takes part of a slice, which a cut along slice boundaries alone could not
/// (it reported a 9/18 split of 27 routers as the bisection, 2/3 of the balanced one's
/// injection).
struct TorusCut {
  std::int64_t cables = 0;
  std::vector<std::pair<std::size_t, std::int64_t>> levels;
};

TorusCut balanced_torus_cut(const std::vector<std::int64_t>& dims, std::vector<bool>& used, std::int64_t m) {
  TorusCut best{-1, {}};
  if (m == 0) return TorusCut{0, {}};
  std::int64_t size = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!used[d]) size *= dims[d];
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t k = dims[d];
    if (used[d] || k < 2) continue;
    const std::int64_t slice = size / k;
    const std::int64_t q = m / slice;
    const std::int64_t r = m % slice;
    // Each slice is whole A (below q), the partial one (q: r routers in A) or whole B; the
    // cables between slices i and i+1 (mod k) that change sides.
    const auto in_a = [&](std::int64_t i) { return i < q ? slice : i == q ? r : 0; };
    std::int64_t cables = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t a = in_a(i), b = in_a((i + 1) % k);
      // Positions whose routers differ in side: a partial slice's A positions meet whole
      // slices only (the recursion keeps one partial slice), so the counts subtract.
      cables += a == b ? 0 : a > b ? a - b : b - a;
    }
    TorusCut inner{0, {}};
    if (r > 0) {
      used[d] = true;
      inner = balanced_torus_cut(dims, used, r);
      used[d] = false;
    }
    cables += inner.cables;
    if (best.cables < 0 || cables < best.cables) {
      best.cables = cables;
      best.levels = {{d, q}};
      best.levels.insert(best.levels.end(), inner.levels.begin(), inner.levels.end());
    }
  }
  return best;
}

double bisection(const Fabric& f, std::vector<std::int64_t>* side_a, std::vector<std::int64_t>* side_b) {
  const double b_acc = f.links[f.access_base].bandwidth.value();
  std::vector<int> side(static_cast<std::size_t>(f.endpoints()), 0);
  double cap = 0.0;
  std::visit(
      [&](const auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ClosLayout>) {
          const double b = f.link_bandwidth.value();
          const std::vector<std::int64_t> n = leaf_occupancy(f, l);
          // Units to split: pods (3 tiers, several pods), else leaves, else the one leaf's ports.
          const bool by_pod = l.tiers == 3 && l.pods > 1;
          const std::int64_t units = by_pod ? l.pods : l.leaves;
          std::vector<double> cap_of(static_cast<std::size_t>(units), 0.0);
          std::vector<std::int64_t> count(static_cast<std::size_t>(units), 0);
          for (std::int64_t leaf = 0; leaf < l.leaves; ++leaf) {
            const std::size_t u = static_cast<std::size_t>(by_pod ? leaf / l.d2 : leaf);
            const double up = std::min(static_cast<double>(n[static_cast<std::size_t>(leaf)]) * b_acc,
                                       static_cast<double>(l.u1) * b);
            cap_of[u] += up;
            count[u] += n[static_cast<std::size_t>(leaf)];
          }
          if (by_pod) {
            for (double& c : cap_of) c = std::min(c, static_cast<double>(l.u1 * l.u2) * b);
          }
          const auto unit_of = [&](std::int64_t e) {
            const std::int64_t leaf = l.leaf_of(e / f.nics_per_node, e % f.nics_per_node, f.nics_per_node);
            return by_pod ? leaf / l.d2 : leaf;
          };
          if (units == 1) {
            // One leaf: it is non-blocking; split its endpoints in half.
            for (std::int64_t e = f.endpoints() / 2; e < f.endpoints(); ++e) side[static_cast<std::size_t>(e)] = 1;
            cap = static_cast<double>(f.endpoints() / 2) * b_acc;
            return;
          }
          // Side A: the first E/2 endpoints in unit order, whole units and m endpoints of unit
          // u (the one the half falls in; m = 0 when it falls on a boundary). The cut's
          // capacity is the max-flow from A to B through the spine (or core) as one switch:
          // the whole units on each side inject or take their uplink capacity (cap_of), and
          // unit u's A part sends to its B part inside the unit and to the other units through
          // its uplinks. On 2 tiers unit u is one leaf; on 3 tiers a pod, its leaves each with
          // their uplinks to the pod's aggregation layer (one switch) and that layer's to the
          // core. The flow is solved on that small network (max_flow_small). Before, the cut
          // fell on the unit boundary nearest to half: a non-blocking Clos of 3 leaves read
          // 2/3 of its E/2 b_acc.
          const std::int64_t half = f.endpoints() / 2;
          std::int64_t u = 0;
          std::int64_t before = 0;
          while (u + 1 < units && before + count[static_cast<std::size_t>(u)] <= half) {
            before += count[static_cast<std::size_t>(u)];
            ++u;
          }
          const std::int64_t m = half - before;
          double a = 0.0;
          double bb = 0.0;
          for (std::int64_t v = 0; v < units; ++v) {
            if (v != u) (v < u ? a : bb) += cap_of[static_cast<std::size_t>(v)];
          }
          std::int64_t taken = 0;
          std::vector<std::int64_t> in_a(static_cast<std::size_t>(l.leaves), 0);  // unit u's A endpoints per leaf
          for (std::int64_t e = 0; e < f.endpoints(); ++e) {
            const std::int64_t v = unit_of(e);
            const bool to_a = v < u || (v == u && taken++ < m);
            side[static_cast<std::size_t>(e)] = to_a ? 0 : 1;
            if (v == u && to_a) {
              ++in_a[static_cast<std::size_t>(l.leaf_of(e / f.nics_per_node, e % f.nics_per_node, f.nics_per_node))];
            }
          }
          // Nodes: 0 source, 1 sink, 2 core, 3 unit u's aggregation layer (3 tiers), then its leaves.
          const std::int64_t first_leaf = by_pod ? u * l.d2 : u;
          const std::int64_t last_leaf = by_pod ? std::min(l.leaves, (u + 1) * l.d2) : u + 1;
          const auto nodes = static_cast<std::size_t>(4 + last_leaf - first_leaf);
          std::vector<std::vector<double>> c(nodes, std::vector<double>(nodes, 0.0));
          c[0][2] = a;
          c[2][1] = bb;
          if (by_pod) c[2][3] = c[3][2] = static_cast<double>(l.u1 * l.u2) * b;
          for (std::int64_t leaf = first_leaf; leaf < last_leaf; ++leaf) {
            const auto x = static_cast<std::size_t>(4 + leaf - first_leaf);
            const auto na = static_cast<double>(in_a[static_cast<std::size_t>(leaf)]);
            const double nb = static_cast<double>(n[static_cast<std::size_t>(leaf)]) - na;
            c[0][x] = na * b_acc;
            c[x][1] = nb * b_acc;
            const std::size_t above = by_pod ? 3 : 2;
            c[x][above] = c[above][x] = static_cast<double>(l.u1) * b;
          }
          cap = max_flow_small(c, 0, 1);
        } else if constexpr (std::is_same_v<L, TorusLayout>) {
          const double b = f.link_bandwidth.value();
          // A dimension d cut in two arcs, [0, t) and [t, k): the cut crosses 2 cables per row
          // of d (one at t, one at the wrap), 2 routers / k in all. Per dimension, t is the
          // slice boundary nearest to half the nodes; of the dimensions, those whose halves are
          // the most even, and of those the cheapest cut: for a torus the nodes fill only
          // partly, where the middle of the largest dimension could leave a half empty (the
          // bisection read 0). A full torus takes balanced_torus_cut's halves instead.
          const double per_node = std::min(static_cast<double>(f.nics_per_node) * b_acc,
                                           2.0 * static_cast<double>(l.dims.size()) * b);
          if (f.nodes == l.routers) {
            // A full torus: the balanced cut above; each half injects at most per_node a node.
            std::vector<bool> used(l.dims.size(), false);
            const TorusCut c = balanced_torus_cut(l.dims, used, f.nodes / 2);
            cap = std::min(static_cast<double>(f.nodes / 2) * per_node, static_cast<double>(c.cables) * b);
            for (std::int64_t e = 0; e < f.endpoints(); ++e) {
              const std::int64_t r = e / f.nics_per_node;
              int s = 1;
              for (const auto& [d, q] : c.levels) {
                const std::int64_t x = (r / l.strides[d]) % l.dims[d];
                if (x != q) {
                  s = x < q ? 0 : 1;
                  break;
                }
              }
              side[static_cast<std::size_t>(e)] = s;
            }
            return;
          }
          std::int64_t best_gap = -1;
          std::size_t best_d = 0;
          std::int64_t best_t = 0;
          for (std::size_t d = 0; d < l.dims.size(); ++d) {
            const std::int64_t k = l.dims[d];
            std::vector<std::int64_t> per_slice(static_cast<std::size_t>(k), 0);
            for (std::int64_t node = 0; node < f.nodes; ++node) ++per_slice[static_cast<std::size_t>((node / l.strides[d]) % k)];
            std::int64_t below = 0;
            for (std::int64_t x = 1; x < k; ++x) {
              below += per_slice[static_cast<std::size_t>(x - 1)];
              const std::int64_t gap = std::abs(2 * below - f.nodes);
              const auto cut = [&](std::int64_t kk, std::int64_t bel) {
                return std::min({static_cast<double>(bel) * per_node, static_cast<double>(f.nodes - bel) * per_node,
                                 2.0 * static_cast<double>(l.routers / kk) * b});
              };
              const bool better = best_gap < 0 || gap < best_gap ||
                                  (gap == best_gap && cut(k, below) < cap) ||
                                  (gap == best_gap && cut(k, below) == cap && d == best_d &&
                                   std::abs(x - k / 2) < std::abs(best_t - k / 2));
              if (better) {
                best_gap = gap;
                best_d = d;
                best_t = x;
                cap = cut(k, below);
              }
            }
          }
          const std::int64_t k = l.dims[best_d];
          for (std::int64_t e = 0; e < f.endpoints(); ++e) {
            const std::int64_t x = ((e / f.nics_per_node) / l.strides[best_d]) % k;
            side[static_cast<std::size_t>(e)] = x < best_t ? 0 : 1;
          }
          // On a torus the nodes fill only partly, a half's traffic must first leave the
          // routers it occupies: their cables to any other router bound it too (8 nodes of 8
          // NICs on an 8x8 torus, split 4 and 4 along a row: 10 cables leave a half, where the
          // plane cut crosses 16). The reported figure is the least of these cuts; it equals
          // the max-flow on full tori and on the partial ones tested.
          const auto side_of = [&](std::int64_t router) {
            return ((router / l.strides[best_d]) % k) < best_t ? 0 : 1;
          };
          std::array<std::int64_t, 2> leaving{0, 0};
          for (std::int64_t r = 0; r < f.nodes && r < l.routers; ++r) {
            const int sr = side_of(r);
            for (std::size_t d = 0; d < l.dims.size(); ++d) {
              const std::int64_t kd = l.dims[d];
              if (kd < 2) continue;
              const std::int64_t x = (r / l.strides[d]) % kd;
              for (const std::int64_t step : {std::int64_t{1}, kd - 1}) {  // + and - (two cables when kd = 2)
                const std::int64_t nb = r + (((x + step) % kd) - x) * l.strides[d];
                if (nb >= f.nodes || side_of(nb) != sr) ++leaving[static_cast<std::size_t>(sr)];
              }
            }
          }
          cap = std::min({cap, static_cast<double>(leaving[0]) * b, static_cast<double>(leaving[1]) * b});
        } else {
          cap = dragonfly_bisection(f, l, b_acc, side);
        }
      },
      f.layout);
  for (std::int64_t e = 0; e < f.endpoints(); ++e) {
    if (side[static_cast<std::size_t>(e)] == 0 && side_a) side_a->push_back(e);
    if (side[static_cast<std::size_t>(e)] == 1 && side_b) side_b->push_back(e);
  }
  return cap;
}

std::int64_t switch_ports(const Fabric& f) {
  return std::visit(
      [&](const auto& l) -> std::int64_t {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ClosLayout>) return l.radix;
        if constexpr (std::is_same_v<L, TorusLayout>) return 2 * static_cast<std::int64_t>(l.dims.size()) + f.nics_per_node;
        if constexpr (std::is_same_v<L, DragonflyLayout>) return l.p + l.a - 1 + l.h;
      },
      f.layout);
}

}  // namespace

void bisection_halves(const Fabric& f, std::vector<std::int64_t>& a, std::vector<std::int64_t>& b) {
  bisection(f, &a, &b);
}

FabricMetrics measure(const Fabric& f, const PricingTable& prices, bool sharp) {
  FabricMetrics m;
  m.endpoints = f.endpoints();
  m.gpus = f.gpus();
  m.nodes = f.nodes;
  m.switches = f.switch_count();
  m.switches_by_tier = f.tiers;
  m.sizing = f.sizing_note;

  // Cables by kind and medium (each cable is two directed links: count one direction).
  struct Group {
    std::int64_t cables = 0;
    Medium medium = Medium::internal;
    sim::Bandwidth rate;
  };
  std::map<std::tuple<int, int, double>, Group> groups;  // (kind, medium, rate) -> cables
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (l.src == l.dst || l.reverse.value < i) continue;  // dark port, or the other direction
    ++m.links[name(l.kind)];
    if (l.medium == Medium::optical) m.optics += 2;
    Group& g = groups[{static_cast<int>(l.kind), static_cast<int>(l.medium), l.bandwidth.value()}];
    ++g.cables;
    g.medium = l.medium;
    g.rate = l.bandwidth;
  }

  const Hops h = std::visit(
      [&](const auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ClosLayout>) return clos_hops(f, l);
        if constexpr (std::is_same_v<L, TorusLayout>) return torus_hops(f, l);
        if constexpr (std::is_same_v<L, DragonflyLayout>) return dragonfly_hops(f, l);
      },
      f.layout);
  m.diameter_hops = h.diameter;
  const auto E = static_cast<double>(f.endpoints());
  m.average_hops = E > 1 ? h.total / (E * (E - 1)) : 0.0;
  m.bisection_bandwidth = sim::Bandwidth::of(bisection(f, nullptr, nullptr));

  // Capex and power.
  bool priced = true;
  const auto add_line = [&](std::string part, std::string model, std::int64_t count, sim::Money unit_price,
                            sim::Power unit_power) {
    const auto n = static_cast<double>(count);
    for (CostLine& line : m.costs) {
      if (line.part == part && line.model == model) {
        line.count += count;
        line.capex += unit_price * n;
        line.power += unit_power * n;
        return;
      }
    }
    m.costs.push_back(CostLine{std::move(part), std::move(model), count, unit_price * n, unit_power * n});
  };
  // One switch class for the fabric, whose ports carry both the switch links and the NICs'
  // access links (a leaf's down ports run at the NIC rate: 800G NICs under 400G switch links
  // need 800G leaf ports). Spines and cores could be of the slower class; they are priced
  // with the leaves.
  const sim::Bandwidth switch_rate = std::max(f.link_bandwidth, f.links[f.access_base].bandwidth);
  // SHARP reduces in the switches: only an InfiniBand class (NVIDIA Quantum) does.
  if (const auto* s = cheapest_switch(prices, switch_ports(f), switch_rate, sharp)) {
    add_line("switches", s->first, m.switches, s->second.price, s->second.power);
  } else {
    priced = false;
    m.unpriced.push_back(fmt::format("no priced switch{} has {} ports at {}", sharp ? " with SHARP (sharp: true)" : "",
                                     switch_ports(f), sim::human(switch_rate)));
  }
  const sim::Bandwidth nic_rate = f.links[f.access_base].bandwidth;
  if (const auto* n = cheapest_part(prices.nics, nic_rate)) {
    add_line("nics", n->first, f.endpoints(), n->second.price, n->second.power);
  } else {
    priced = false;
    m.unpriced.push_back(fmt::format("no priced NIC runs at {}", sim::human(nic_rate)));
  }
  for (const auto& [key, g] : groups) {
    if (g.medium == Medium::internal) continue;
    const bool optical = g.medium == Medium::optical;
    if (const auto* c = cheapest_part(prices.cables, g.rate, optical ? "fiber" : "dac")) {
      add_line("cables", c->first, g.cables, c->second.price, c->second.power);
    } else {
      priced = false;
      m.unpriced.push_back(fmt::format("no priced {} cable at {}", optical ? "fibre" : "copper", sim::human(g.rate)));
    }
    if (!optical) continue;
    if (const auto* t = cheapest_part(prices.transceivers, g.rate)) {
      add_line("transceivers", t->first, 2 * g.cables, t->second.price, t->second.power);
    } else {
      priced = false;
      m.unpriced.push_back(fmt::format("no priced transceiver at {}", sim::human(g.rate)));
    }
  }
  if (priced) {
    sim::Money capex;
    sim::Power power;
    for (const CostLine& line : m.costs) {
      capex += line.capex;
      power += line.power;
    }
    m.capex = capex;
    m.power = power;
  }
  return m;
}

config::Json to_json(const FabricMetrics& m) {
  config::Json j;
  j["sizing"] = m.sizing;
  j["endpoints"] = m.endpoints;
  j["gpus"] = m.gpus;
  j["nodes"] = m.nodes;
  config::Json tiers = config::Json::object();
  for (const TierCount& t : m.switches_by_tier) tiers[t.tier] = t.switches;
  j["switches"] = {{"total", m.switches}, {"by_tier", tiers}};
  config::Json links = config::Json::object();
  for (const auto& [kind, n] : m.links) links[kind] = n;
  j["links"] = links;
  j["optics"] = m.optics;
  j["diameter_hops"] = m.diameter_hops;
  j["average_hops"] = m.average_hops;
  j["bisection_bandwidth_Bps"] = m.bisection_bandwidth.value();  // one way, B/s (as sweep and compare name it)
  j["bisection_bandwidth"] = m.bisection_bandwidth.value();      // the same, kept for scripts
  j["capex_usd"] = m.capex ? config::Json(m.capex->value()) : config::Json(nullptr);
  j["power_w"] = m.power ? config::Json(m.power->value()) : config::Json(nullptr);
  config::Json costs = config::Json::array();
  for (const CostLine& c : m.costs) {
    costs.push_back({{"part", c.part}, {"model", c.model}, {"count", c.count}, {"capex_usd", c.capex.value()},
                     {"power_w", c.power.value()}});
  }
  j["costs"] = costs;
  j["unpriced"] = m.unpriced;
  return j;
}

std::string to_dot(const Fabric& f) {
  std::string out = "graph fabric {\n  node [shape=ellipse, fontsize=10];\n";
  // Switches labelled as the other reports name them (leaf#0, its rank among the leaves),
  // not by their vertex id among all vertices (leaf 272).
  const std::vector<std::string> labels = vertex_labels(f);
  for (std::size_t v = 0; v < f.vertex_kind.size(); ++v) {
    const VertexKind k = f.vertex_kind[v];
    if (k == VertexKind::gpu || k == VertexKind::nic || k == VertexKind::scaleup) continue;
    out += fmt::format("  v{} [label=\"{}\"];\n", v, labels[v]);
  }
  for (std::int64_t n = 0; n < f.nodes; ++n) out += fmt::format("  n{} [shape=box, label=\"node {}\"];\n", n, n);
  // One edge per pair of ends, labelled with the number of parallel cables.
  std::map<std::pair<std::string, std::string>, std::pair<int, bool>> edges;  // -> (cables, access)
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (l.src == l.dst || l.reverse.value < i) continue;
    if (l.kind == LinkKind::nvlink || l.kind == LinkKind::host) continue;
    if (l.kind == LinkKind::access) {
      const std::int64_t node = (l.src.value - f.nic_base) / static_cast<std::uint32_t>(f.nics_per_node);
      auto& e = edges[{fmt::format("n{}", node), fmt::format("v{}", l.dst.value)}];
      ++e.first;
      e.second = true;
      continue;
    }
    ++edges[{fmt::format("v{}", l.src.value), fmt::format("v{}", l.dst.value)}].first;
  }
  for (const auto& [ends, e] : edges) {
    std::string attrs = e.second ? "color=gray" : "";
    if (e.first > 1) attrs += fmt::format("{}label=\"x{}\"", attrs.empty() ? "" : ", ", e.first);
    out += fmt::format("  {} -- {}{};\n", ends.first, ends.second, attrs.empty() ? "" : " [" + attrs + "]");
  }
  out += "}\n";
  return out;
}

}  // namespace clustersim::fabric
