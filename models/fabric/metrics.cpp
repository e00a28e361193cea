#include "models/fabric/metrics.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "models/fabric/graph.hpp"

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
  // Routers with endpoints in a group: a prefix of its routers (the nodes fill in order).
  const auto occupied_routers = [&](std::int64_t group) {
    return std::clamp<std::int64_t>((f.endpoints() - group * d.a * d.p + d.p - 1) / d.p, 0, d.a);
  };
  std::vector<std::int64_t> exits, arrivals;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
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
      // Several links per pair: a router pair takes the copy with the fewest local hops
      // (dragonfly_copy), 3 - best hops, best = max over the copies of (rs leaves by it) +
      // (rd is where it lands): 2 where a copy joins rs and rd, 1 where one leaves rs or
      // lands on rd, else 0. Summed by sets, O(L log L) a group pair (a loop over the router
      // pairs, O(a^2 L), took half of a 98,304-endpoint dragonfly's `topology`):
      //   sum of w_rs w_rd best = W(exits) W_d + W_s W(arrivals) - W(exits) W(arrivals) + W(pairs).
      exits.clear();
      arrivals.clear();
      pairs.clear();
      for (std::int64_t k = 0; k < d.links_per_pair; ++k) {
        exits.push_back(exit_of(k));
        arrivals.push_back(arrival_of(k));
        pairs.emplace_back(exit_of(k), arrival_of(k));
      }
      for (auto* v : {&exits, &arrivals}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
      }
      std::sort(pairs.begin(), pairs.end());
      pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
      double w_exits = 0.0, w_arrivals = 0.0, w_pairs = 0.0;
      std::int64_t n_exits = 0, n_arrivals = 0, n_pairs = 0;  // those with endpoints
      for (const std::int64_t r : exits) {
        w_exits += w(gs, r);
        n_exits += w(gs, r) > 0 ? 1 : 0;
      }
      for (const std::int64_t r : arrivals) {
        w_arrivals += w(gd, r);
        n_arrivals += w(gd, r) > 0 ? 1 : 0;
      }
      for (const auto& [rs, rd] : pairs) {
        w_pairs += w(gs, rs) * w(gd, rd);
        n_pairs += w(gs, rs) > 0 && w(gd, rd) > 0 ? 1 : 0;
      }
      h.total += 3.0 * ws * wd - (w_exits * wd + ws * w_arrivals - w_exits * w_arrivals + w_pairs);
      // The farthest pair: best 0 where a router with endpoints leaves by no copy and one
      // receives by none; else 2 where every such pair is a copy's, else 1.
      const std::int64_t n_s = occupied_routers(gs), n_d = occupied_routers(gd);
      const std::int64_t least_best = n_s > n_exits && n_d > n_arrivals ? 0 : n_pairs == n_s * n_d ? 2 : 1;
      h.diameter = std::max<std::int64_t>(h.diameter, 3 - least_best);
    }
  }
  return h;
}

// The dragonfly's bisection: a balanced cut (halves of floor(E / 2) and ceil(E / 2)
// endpoints) found by local search over the routers' sides. A cut puts each router on a
// side and its endpoints with it, but for those moved to balance the halves, each of which
// crosses by its access link:
//   cost(sides) = sum of the router links from side A to side B + b_acc |moved|.
// An exact minimum bisection is NP-hard in general. The search starts from three cuts (and
// four pseudo-random ones):
//   - the groups in fill order, halved where the endpoints are (the group the half falls in
//     splits its routers; a cut at the group boundary is not balanced with an odd number of
//     full groups: 3 groups gave 8 of 24 endpoints against 16, reported as the bisection);
//   - the same at the group boundary nearest the half, its imbalance moved endpoints (Kim et
//     al.'s n_A n_B L b between the halves' groups for an even number of full groups);
//   - every group's first routers on side A (where a router's global links outnumber half
//     its local ones, h > a / 2, cutting each group's local links costs less than the global
//     ones: 2 groups of 4 routers with h = 4, 8 links against 16),
// and refines each by Fiduccia-Mattheyses passes: a pass moves routers one at a time, each
// once, the one that lowers the cost most (or raises it least) first, until 4 a + 16 moves
// bring no new best, and keeps the best prefix of its moves; passes repeat while they gain. The reported figure is the max-flow between the
// best cut's halves (fabric/graph.hpp), at most its cost. It is never below the minimum
// bisection, every figure being a balanced cut's, and equals it against exhaustive search
// over every router partition on every fill of ten small shapes, balanced and not, odd
// group counts among them (tests/models/test_fabric.cpp); elsewhere it can be a link or so
// above (a=3, p=3, h=3, 8 groups, 48 endpoints: 13 links for 12; a few partial fills of
// larger shapes; switch links slower than the NICs where h > a / 2). Cost: O(R (a + deg) log R) a pass for R
// routers of degree deg, plus one max-flow: ~0.2 s for 64 groups of 32 routers (32,768
// endpoints), ~0.4 s for 192 (98,304).
double dragonfly_bisection(const Fabric& f, const DragonflyLayout& d, double b_acc, std::vector<int>& side) {
  const std::int64_t E = f.endpoints();
  const auto R = static_cast<std::size_t>(d.a * d.g);
  std::vector<std::int64_t> hosted(R, 0);  // endpoints on each router
  for (std::int64_t e = 0; e < E; ++e) ++hosted[static_cast<std::size_t>(e / d.p)];
  // Router links, both directions of a cable, as (neighbour, capacity out, capacity in).
  struct Adj {
    std::uint32_t to;
    double out, in;
  };
  std::vector<std::vector<Adj>> adj(R);
  for (std::uint32_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (l.src == l.dst || f.failed(LinkId{i}) || f.vertex_kind[l.src.value] != VertexKind::router ||
        f.vertex_kind[l.dst.value] != VertexKind::router) {
      continue;
    }
    const std::uint32_t u = l.src.value - d.router_base, v = l.dst.value - d.router_base;
    adj[u].push_back({v, l.bandwidth.value(), 0.0});
    adj[v].push_back({u, 0.0, l.bandwidth.value()});
  }
  const std::int64_t lo = E / 2, hi = (E + 1) / 2;
  const auto penalty = [&](std::int64_t on_a) {
    return b_acc * static_cast<double>(std::min(std::abs(on_a - lo), std::abs(on_a - hi)));
  };
  // What r's links add to the cut on side s (0: A) against the current sides.
  const auto links_cost = [&](const std::vector<char>& sides, std::size_t r, char s) {
    double c = 0.0;
    for (const Adj& x : adj[r]) {
      if (sides[x.to] != s) c += s == 0 ? x.out : x.in;
    }
    return c;
  };
  const auto cost_of = [&](const std::vector<char>& sides, std::int64_t& on_a) {
    double cut = 0.0;
    on_a = 0;
    for (std::size_t r = 0; r < R; ++r) {
      if (sides[r] == 0) {
        on_a += hosted[r];
        cut += links_cost(sides, r, 0);
      }
    }
    return cut + penalty(on_a);
  };
  // Fiduccia-Mattheyses passes from `sides`, in place; returns the cost. A move's cost is
  // its links' change (delta) plus the penalty's, which depends only on the router's side
  // and endpoint count: the unlocked routers sit in one ordered set per (side, endpoints),
  // so the best move is the best of the sets' first entries. A pass stops after `patience`
  // moves without a new best (moving a whole group across takes a of them).
  const auto classes = static_cast<std::size_t>(2 * (d.p + 1));
  const auto class_of = [&](const std::vector<char>& sides, std::size_t r) {
    return static_cast<std::size_t>(sides[r]) * static_cast<std::size_t>(d.p + 1) + static_cast<std::size_t>(hosted[r]);
  };
  const std::size_t patience = static_cast<std::size_t>(4 * d.a + 16);
  const auto refine = [&](std::vector<char>& sides) {
    std::int64_t on_a = 0;
    double cost = cost_of(sides, on_a);
    std::vector<double> delta(R);  // change of the links' cut if r moves
    std::vector<char> locked(R);
    std::vector<std::set<std::pair<double, std::uint32_t>>> open(classes);
    std::vector<std::size_t> moves;
    const auto delta_of = [&](std::size_t r) {
      return links_cost(sides, r, static_cast<char>(1 - sides[r])) - links_cost(sides, r, sides[r]);
    };
    for (;;) {
      for (auto& set : open) set.clear();
      for (std::size_t r = 0; r < R; ++r) {
        delta[r] = delta_of(r);
        open[class_of(sides, r)].emplace(delta[r], static_cast<std::uint32_t>(r));
      }
      std::fill(locked.begin(), locked.end(), 0);
      moves.clear();
      double now = cost, best = cost;
      std::int64_t now_a = on_a;
      std::size_t best_len = 0;
      while (moves.size() < R && moves.size() - best_len < patience) {
        std::size_t pick = R;
        double pick_cost = 0.0;
        for (std::size_t c = 0; c < classes; ++c) {
          if (open[c].empty()) continue;
          const auto [dl, r] = *open[c].begin();
          const std::int64_t a = now_a + (sides[r] == 0 ? -hosted[r] : hosted[r]);
          const double cand = now - penalty(now_a) + dl + penalty(a);
          if (pick == R || cand < pick_cost || (cand == pick_cost && r < pick)) {
            pick = r;
            pick_cost = cand;
          }
        }
        // Move it; its unlocked neighbours' deltas change by what their link to it adds or saves.
        open[class_of(sides, pick)].erase({delta[pick], static_cast<std::uint32_t>(pick)});
        const char from = sides[pick];
        now_a += from == 0 ? -hosted[pick] : hosted[pick];
        sides[pick] = static_cast<char>(1 - from);
        locked[pick] = 1;
        now = pick_cost;
        moves.push_back(pick);
        for (const Adj& x : adj[pick]) {
          if (locked[x.to]) continue;
          // The link from x.to's side: to pick (x.in) counts on side A when pick is on B,
          // from pick (x.out) on side B when pick is on A; delta is moved minus staying.
          const char n = sides[x.to];
          const auto contribution = [&](char pick_side) {
            const double stay = pick_side != n ? (n == 0 ? x.in : x.out) : 0.0;
            const double moved = pick_side != 1 - n ? (n == 0 ? x.out : x.in) : 0.0;
            return moved - stay;
          };
          auto& set = open[class_of(sides, x.to)];
          set.erase({delta[x.to], x.to});
          delta[x.to] += contribution(sides[pick]) - contribution(from);
          set.emplace(delta[x.to], x.to);
        }
        if (now < best - 1e-9 * std::max(1.0, best)) {
          best = now;
          best_len = moves.size();
        }
      }
      for (std::size_t k = moves.size(); k > best_len; --k) sides[moves[k - 1]] = static_cast<char>(1 - sides[moves[k - 1]]);
      if (best_len == 0) return cost;
      cost = cost_of(sides, on_a);
    }
  };
  // The starting cuts, as router sides.
  const std::int64_t per_group = d.a * d.p;
  const std::int64_t occupied = (E + per_group - 1) / per_group;
  std::vector<std::vector<char>> starts;
  {
    std::vector<char> fill(R, 1);
    for (std::int64_t e = 0; e < lo; ++e) fill[static_cast<std::size_t>(e / d.p)] = 0;
    starts.push_back(std::move(fill));
    std::vector<char> groups(R, 1);  // the occupied groups' boundary nearest the half
    std::int64_t split = 0, best_gap = -1;
    for (std::int64_t k = 0; k <= occupied; ++k) {
      const std::int64_t gap = std::abs(std::min(k * per_group, E) - lo);
      if (best_gap < 0 || gap < best_gap) {
        best_gap = gap;
        split = k;
      }
    }
    for (std::int64_t r = 0; r < split * d.a; ++r) groups[static_cast<std::size_t>(r)] = 0;
    starts.push_back(std::move(groups));
    std::vector<char> across(R, 1);  // each group's first routers
    for (std::size_t r = 0; r < R; ++r) across[r] = static_cast<std::int64_t>(r) % d.a < d.a / 2 ? 0 : 1;
    starts.push_back(std::move(across));
    // And four pseudo-random ones, from a fixed seed (the figure is the same on every run):
    // from the three above alone the search missed the minimum on 3 fills of small shapes
    // (4,4,4 on 52 endpoints: 22 links for 20). Marsaglia's xorshift64.
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 4; ++k) {
      std::vector<char> sides(R);
      for (std::size_t r = 0; r < R; ++r) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sides[r] = static_cast<char>(x & 1);
      }
      starts.push_back(std::move(sides));
    }
  }
  double best = -1;
  std::vector<char> chosen;
  for (std::vector<char>& sides : starts) {
    const double c = refine(sides);
    if (best < 0 || c < best) {
      best = c;
      chosen = sides;
    }
  }
  // The halves: each endpoint on its router's side, then the surplus moved from the fuller
  // side (its last endpoints) to the other.
  std::int64_t on_a = 0;
  for (std::int64_t e = 0; e < E; ++e) {
    side[static_cast<std::size_t>(e)] = chosen[static_cast<std::size_t>(e / d.p)];
    on_a += chosen[static_cast<std::size_t>(e / d.p)] == 0 ? 1 : 0;
  }
  for (std::int64_t e = E - 1; e >= 0 && on_a > hi; --e) {
    if (side[static_cast<std::size_t>(e)] == 0) {
      side[static_cast<std::size_t>(e)] = 1;
      --on_a;
    }
  }
  for (std::int64_t e = E - 1; e >= 0 && on_a < lo; --e) {
    if (side[static_cast<std::size_t>(e)] == 1) {
      side[static_cast<std::size_t>(e)] = 0;
      ++on_a;
    }
  }
  std::vector<std::int64_t> a, b;
  for (std::int64_t e = 0; e < E; ++e) (side[static_cast<std::size_t>(e)] == 0 ? a : b).push_back(e);
  return a.empty() || b.empty() ? 0.0 : max_flow(f, a, b);
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
