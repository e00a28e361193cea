// Benchmark of the max-min solver (sim/maxmin.hpp) on a fat-tree-shaped workload.
//
// Workload: a three-tier fat tree of 16,384 endpoints, modelled only as constraints (one
// per link direction) and variables (one per flow), as the fabric model will feed them:
//   - leaves of 32 ports: 16 endpoints and `leaf_up` uplinks (8 by default: 2:1 taper);
//   - pods of 16 leaves and `leaf_up` spines; leaf uplink u goes to spine u of its pod;
//   - each spine has `spine_up` uplinks (8 by default); uplink k of spine u of every pod
//     goes to core (u, k), so a core links the spine u of all pods.
// Default sizes: 1,024 leaves, 64 pods, 512 spines; directed links 2 * (16,384 endpoint
// + 8,192 leaf-spine + 4,096 spine-core) = 57,344 constraints, all 50e9 (B/s, 400 Gb/s).
// A flow goes from a random endpoint to another, on an ECMP path picked at random:
//   other pod: endpoint up, leaf up u, spine up k, core down k, spine down u, endpoint down
//              (6 constraints); same pod: 4; same leaf: 2.
// 100,000 flows of weight 1; 10% carry a rate bound drawn in [1e9, 20e9] (an
// application-limited flow). Everything is drawn from splitmix64 with a fixed seed.
//
// Cases, one JSON line each:
//   build           adding the constraints, variables and incidences
//   full_solve      solve_all() on the loaded system (best and mean of a few runs)
//   remove_resolve  remove one random flow, then solve() (incremental); timed together.
//                   Also how many variables the solve revisited, how many constraints it
//                   opened, and how many of those it replayed in full (see maxmin.hpp)
//   add_resolve     add one random flow, then solve(); keeps the load steady
//   check           incremental state against a fresh solve_all() of a copy, capacities
//
// Usage: bench_maxmin [flows=100000] [leaf_up=8] [spine_up=8] [updates=2000]
//                     [tolerance=1e-12] [seed=1]
#include "sim/maxmin.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using clustersim::sim::ConstraintId;
using clustersim::sim::MaxMinSystem;
using clustersim::sim::VariableId;

namespace {

struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

struct Params {
  std::uint32_t flows = 100'000;
  std::uint32_t leaf_up = 8;
  std::uint32_t spine_up = 8;
  std::uint32_t updates = 2'000;
  double tolerance = 1e-12;
  std::uint64_t seed = 1;
};

constexpr std::uint32_t kEndpoints = 16'384;
constexpr std::uint32_t kEndpointsPerLeaf = 16;
constexpr std::uint32_t kLeavesPerPod = 16;
constexpr double kLinkRate = 50e9;

// Index arithmetic of the directed links; each family is a contiguous block of
// constraints, up direction first.
struct FatTree {
  std::uint32_t leaf_up;
  std::uint32_t spine_up;
  std::uint32_t leaves = kEndpoints / kEndpointsPerLeaf;
  std::uint32_t pods = leaves / kLeavesPerPod;
  std::vector<ConstraintId> endpoint_up, endpoint_down;  // [endpoint]
  std::vector<ConstraintId> leaf_uplink, leaf_downlink;  // [leaf * leaf_up + u]
  std::vector<ConstraintId> spine_uplink, spine_downlink;  // [(pod * leaf_up + u) * spine_up + k]

  FatTree(MaxMinSystem& sys, std::uint32_t lu, std::uint32_t su) : leaf_up(lu), spine_up(su) {
    auto make = [&sys](std::vector<ConstraintId>& v, std::uint32_t n) {
      v.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i) v.push_back(sys.add_constraint(kLinkRate));
    };
    make(endpoint_up, kEndpoints);
    make(endpoint_down, kEndpoints);
    make(leaf_uplink, leaves * leaf_up);
    make(leaf_downlink, leaves * leaf_up);
    make(spine_uplink, pods * leaf_up * spine_up);
    make(spine_downlink, pods * leaf_up * spine_up);
  }

  // The constraints of a flow from `src` to `dst` through spine plane u and core uplink k.
  std::uint32_t route(std::uint32_t src, std::uint32_t dst, std::uint32_t u, std::uint32_t k,
                      ConstraintId* out) const {
    const std::uint32_t ls = src / kEndpointsPerLeaf, ld = dst / kEndpointsPerLeaf;
    const std::uint32_t ps = ls / kLeavesPerPod, pd = ld / kLeavesPerPod;
    std::uint32_t n = 0;
    out[n++] = endpoint_up[src];
    if (ls != ld) {
      out[n++] = leaf_uplink[ls * leaf_up + u];
      if (ps != pd) {
        out[n++] = spine_uplink[(ps * leaf_up + u) * spine_up + k];
        out[n++] = spine_downlink[(pd * leaf_up + u) * spine_up + k];
      }
      out[n++] = leaf_downlink[ld * leaf_up + u];
    }
    out[n++] = endpoint_down[dst];
    return n;
  }

  std::size_t constraints() const {
    return endpoint_up.size() * 2 + leaf_uplink.size() * 2 + spine_uplink.size() * 2;
  }
};

struct Workload {
  MaxMinSystem sys;
  FatTree tree;
  SplitMix64 rng;
  std::vector<VariableId> flows;
  std::size_t incidences = 0;

  Workload(const Params& p) : sys(p.tolerance), tree(sys, p.leaf_up, p.spine_up), rng{p.seed} {}

  void add_flow() {
    const std::uint32_t src = rng.below(kEndpoints);
    std::uint32_t dst = rng.below(kEndpoints - 1);
    if (dst >= src) ++dst;
    const std::uint32_t u = rng.below(tree.leaf_up);
    const std::uint32_t k = rng.below(tree.spine_up);
    const double bound = rng.uniform() < 0.1 ? 1e9 + 19e9 * rng.uniform() : MaxMinSystem::kInfinity;
    const VariableId v = sys.add_variable(1.0, bound);
    ConstraintId path[6];
    const std::uint32_t n = tree.route(src, dst, u, k, path);
    for (std::uint32_t i = 0; i < n; ++i) sys.expand(v, path[i]);
    incidences += n;
    flows.push_back(v);
  }
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Summary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

Summary summarize(std::vector<double> xs) {
  Summary s;
  if (xs.empty()) return s;
  double sum = 0;
  for (const double x : xs) sum += x;
  std::sort(xs.begin(), xs.end());
  s.mean = sum / static_cast<double>(xs.size());
  s.p50 = xs[xs.size() / 2];
  s.p99 = xs[std::min(xs.size() - 1, xs.size() * 99 / 100)];
  s.max = xs.back();
  return s;
}

bool parse(int argc, char** argv, Params& p) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* eq = std::strchr(arg, '=');
    if (eq == nullptr) return false;
    const std::string key(arg, static_cast<std::size_t>(eq - arg));
    const char* val = eq + 1;
    if (key == "flows") p.flows = static_cast<std::uint32_t>(std::strtoul(val, nullptr, 10));
    else if (key == "leaf_up") p.leaf_up = static_cast<std::uint32_t>(std::strtoul(val, nullptr, 10));
    else if (key == "spine_up") p.spine_up = static_cast<std::uint32_t>(std::strtoul(val, nullptr, 10));
    else if (key == "updates") p.updates = static_cast<std::uint32_t>(std::strtoul(val, nullptr, 10));
    else if (key == "tolerance") p.tolerance = std::strtod(val, nullptr);
    else if (key == "seed") p.seed = std::strtoull(val, nullptr, 10);
    else return false;
  }
  return p.leaf_up >= 1 && p.leaf_up <= 16 && p.spine_up >= 1 && p.spine_up <= 16 && p.flows >= 1;
}

void print_update_case(const char* name, const std::vector<double>& times,
                       const std::vector<double>& vars, const std::vector<double>& cons,
                       const std::vector<double>& replayed) {
  const Summary t = summarize(times);
  const Summary v = summarize(vars);
  const Summary c = summarize(cons);
  const Summary r = summarize(replayed);
  std::printf(
      "{\"case\":\"%s\",\"updates\":%zu,\"mean_microseconds\":%.3f,\"p50_microseconds\":%.3f,"
      "\"p99_microseconds\":%.3f,\"max_microseconds\":%.3f,\"mean_variables_revisited\":%.1f,"
      "\"p99_variables_revisited\":%.0f,\"max_variables_revisited\":%.0f,"
      "\"mean_constraints_opened\":%.1f,\"mean_constraints_replayed\":%.1f}\n",
      name, times.size(), t.mean * 1e6, t.p50 * 1e6, t.p99 * 1e6, t.max * 1e6, v.mean, v.p99, v.max,
      c.mean, r.mean);
}

}  // namespace

int main(int argc, char** argv) {
  Params p;
  if (!parse(argc, argv, p)) {
    std::fprintf(stderr,
                 "usage: bench_maxmin [flows=N] [leaf_up=1..16] [spine_up=1..16] [updates=N] "
                 "[tolerance=X] [seed=N]\n");
    return 2;
  }

  auto t0 = Clock::now();
  Workload w(p);
  for (std::uint32_t i = 0; i < p.flows; ++i) w.add_flow();
  const double build = seconds_since(t0);
  std::printf(
      "{\"case\":\"build\",\"endpoints\":%u,\"constraints\":%zu,\"variables\":%zu,\"incidences\":%zu,"
      "\"leaf_up\":%u,\"spine_up\":%u,\"change_tolerance\":%g,\"seconds\":%.6f}\n",
      kEndpoints, w.tree.constraints(), w.flows.size(), w.incidences, p.leaf_up, p.spine_up,
      p.tolerance, build);

  // The first solve() starts from an empty state: everything is new, so it is a full one.
  t0 = Clock::now();
  w.sys.solve();
  const double first = seconds_since(t0);
  std::size_t saturated = 0;
  for (const auto* family : {&w.tree.endpoint_up, &w.tree.endpoint_down, &w.tree.leaf_uplink,
                             &w.tree.leaf_downlink, &w.tree.spine_uplink, &w.tree.spine_downlink}) {
    for (const ConstraintId c : *family) saturated += w.sys.saturated(c) ? 1u : 0u;
  }
  std::vector<double> full;
  for (int r = 0; r < 5; ++r) {
    t0 = Clock::now();
    w.sys.solve_all();
    full.push_back(seconds_since(t0));
  }
  const Summary fs = summarize(full);
  std::printf(
      "{\"case\":\"full_solve\",\"constraints\":%zu,\"variables\":%zu,\"incidences\":%zu,"
      "\"saturated_constraints\":%zu,\"first_solve_seconds\":%.6f,\"best_seconds\":%.6f,"
      "\"mean_seconds\":%.6f,\"runs\":%zu}\n",
      w.tree.constraints(), w.flows.size(), w.incidences, saturated, first,
      *std::min_element(full.begin(), full.end()), fs.mean, full.size());

  std::vector<double> remove_t, remove_v, remove_c, remove_r, add_t, add_v, add_c, add_r;
  for (std::uint32_t i = 0; i < p.updates; ++i) {
    const std::uint32_t pick = w.rng.below(static_cast<std::uint32_t>(w.flows.size()));
    const VariableId victim = w.flows[pick];
    w.flows[pick] = w.flows.back();
    w.flows.pop_back();
    t0 = Clock::now();
    w.sys.remove_variable(victim);
    w.sys.solve();
    remove_t.push_back(seconds_since(t0));
    remove_v.push_back(static_cast<double>(w.sys.last_solve().variables));
    remove_c.push_back(static_cast<double>(w.sys.last_solve().constraints));
    remove_r.push_back(static_cast<double>(w.sys.last_solve().replayed));

    t0 = Clock::now();
    w.add_flow();
    w.sys.solve();
    add_t.push_back(seconds_since(t0));
    add_v.push_back(static_cast<double>(w.sys.last_solve().variables));
    add_c.push_back(static_cast<double>(w.sys.last_solve().constraints));
    add_r.push_back(static_cast<double>(w.sys.last_solve().replayed));
  }
  print_update_case("remove_resolve", remove_t, remove_v, remove_c, remove_r);
  print_update_case("add_resolve", add_t, add_v, add_c, add_r);

  // The incremental state against a from-scratch solve of a copy; capacities.
  MaxMinSystem fresh = w.sys;
  fresh.solve_all();
  double worst_diff = 0.0;
  for (const VariableId v : w.flows) {
    const double a = w.sys.value(v), b = fresh.value(v);
    if (a != b) worst_diff = std::max(worst_diff, std::fabs(a - b) / std::max(std::fabs(a), std::fabs(b)));
  }
  double worst_over = -1.0;
  for (const auto* family : {&w.tree.endpoint_up, &w.tree.endpoint_down, &w.tree.leaf_uplink,
                             &w.tree.leaf_downlink, &w.tree.spine_uplink, &w.tree.spine_downlink}) {
    for (const ConstraintId c : *family) worst_over = std::max(worst_over, w.sys.usage(c) / kLinkRate - 1.0);
  }
  std::printf(
      "{\"case\":\"check\",\"max_relative_difference_incremental_vs_full\":%.3g,"
      "\"max_relative_usage_above_capacity\":%.3g}\n",
      worst_diff, worst_over);
  return 0;
}
