#include "models/reliability/longrun.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "sim/check.hpp"
#include "sim/engine.hpp"
#include "sim/random.hpp"
#include "sim/stats.hpp"

namespace clustersim::reliability {

double pareto_alpha(const Heterogeneity& h) {
  if (h.kind == HeterogeneityKind::none) return 0.0;
  if (h.shape > 0.0) return h.shape;
  return 1.0 / (1.0 - std::log(h.failure_share) / std::log(h.top_fraction));
}

double total_lost_gpu_hours(const JobSummary& s) {
  double lost = 0.0;
  for (const auto& [cause, e] : s.lost_gpu_hours) lost += e.mean;
  return lost;
}

double mean_queue_wait_s(const LongRunResult& r) {
  double waits = 0.0;
  std::int64_t waited = 0;
  for (const JobSummary& s : r.jobs) {
    if (!std::isfinite(s.queue_wait_s.mean)) continue;
    waits += s.queue_wait_s.mean;
    ++waited;
  }
  return waited > 0 ? waits / static_cast<double>(waited) : std::numeric_limits<double>::quiet_NaN();
}

std::int64_t jobs_never_started(const LongRunResult& r) {
  return std::count_if(r.jobs.begin(), r.jobs.end(), [](const JobSummary& s) { return s.started_share == 0.0; });
}

double daly_interval(double delta, double mtbf) {
  if (delta >= 2.0 * mtbf) return mtbf;
  const double x = delta / (2.0 * mtbf);
  return std::sqrt(2.0 * delta * mtbf) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
}

double expected_renewals(Distribution law, double shape, double t, double burned_in) {
  if (!(t > 0.0)) return 0.0;
  if (law == Distribution::exponential) return t;
  const auto life_cdf = [&](double x) {  // the law of mean 1
    if (x <= 0.0) return 0.0;
    if (law == Distribution::weibull) {
      const double scale = 1.0 / std::tgamma(1.0 + 1.0 / shape);
      return -std::expm1(-std::pow(x / scale, shape));
    }
    const double mu = -0.5 * shape * shape;  // lognormal of mean 1
    return 0.5 * std::erfc(-(std::log(x) - mu) / (shape * std::sqrt(2.0)));
  };
  // A life that survived its burn-in b: P(X - b <= x | X > b) = (F(b + x) - F(b)) / (1 - F(b)).
  const double b = std::max(0.0, burned_in);
  const double survived = 1.0 - life_cdf(b);
  if (!(survived > 0.0)) return 0.0;  // no part survives its burn-in
  const auto cdf = [&](double x) { return x <= 0.0 ? 0.0 : (life_cdf(b + x) - life_cdf(b)) / survived; };
  // Far out M(t) grows at one failure a mean life (Cox 1962, section 4.5: M(t) - t / mu
  // settles): past 20 mean lives the grid is solved to 20 and the rest added at 1 / mu (a
  // grid of t / 2000 steps there let a life's whole law fall inside a step: 36% low at 4,000
  // lives). mu, the burned-in life's mean: (1 - int_0^b (1 - F)) / (1 - F(b)).
  constexpr double kSettled = 20.0;
  if (t > kSettled) {
    double lived = 0.0;  // int_0^b (1 - F(u)) du, trapezoids
    constexpr int kMeanSteps = 4000;
    for (int i = 0; i < kMeanSteps && b > 0.0; ++i) {
      const double u0 = b * i / kMeanSteps, u1 = b * (i + 1) / kMeanSteps;
      lived += 0.5 * (2.0 - life_cdf(u0) - life_cdf(u1)) * (u1 - u0);
    }
    const double mean = (1.0 - lived) / survived;
    return expected_renewals(law, shape, kSettled, b) + (t - kSettled) / mean;
  }
  constexpr int kSteps = 2000;
  const double h = t / kSteps;
  std::vector<double> F(kSteps + 1), M(kSteps + 1, 0.0);
  for (int i = 0; i <= kSteps; ++i) F[static_cast<std::size_t>(i)] = cdf(h * i);
  // M_i = F_i + sum_{j=1..i} (F_j - F_{j-1}) (M_{i-j} + M_{i-j+1}) / 2, the j = 1 term holding
  // M_i itself (Xie 1989).
  for (int i = 1; i <= kSteps; ++i) {
    const auto at = [](int k) { return static_cast<std::size_t>(k); };
    double sum = F[at(i)];
    for (int j = 2; j <= i; ++j) sum += (F[at(j)] - F[at(j - 1)]) * 0.5 * (M[at(i - j)] + M[at(i - j + 1)]);
    const double d1 = F[at(1)] - F[at(0)];
    M[at(i)] = (sum + 0.5 * d1 * M[at(i - 1)]) / (1.0 - 0.5 * d1);
  }
  return M[kSteps];
}

namespace {
constexpr double kMaxPerDay = 1000.0;  ///< failures per unit and day, at most
constexpr double kDay = 86400.0;
constexpr double kMaxLognormalSigma = 5.0;
constexpr double kMinWeibullShape = 0.2;
constexpr std::int64_t kMaxRetired = 100'000;  ///< or 10 fleets, replacements per replication
}  // namespace

// --- Which switches and cables a job's traffic can cross (FabricScope) ---------------------

namespace {

/// What a job's nodes touch: its leaves (as [lo, hi] ranges, one per node), its pods
/// (sorted, unique), and whether its traffic leaves its leaves (see FabricScope). `unknown`
/// when a node has no place in the fabric.
struct Footprint {
  bool unknown = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> leaves;
  std::vector<std::int64_t> pods;
  bool leaves_leaves = false;
};

/// NICs per rail unit: a node's, or one of its trays' (FabricScope::rails).
std::int64_t rail_width(const FabricScope& c) { return c.rails > 0 ? c.rails : c.nics_per_node; }

/// Node n's leaves, as ClosLayout::leaf_of numbers them: a rail-optimized Clos puts NIC i of
/// a leaf group's rail units (nodes, or trays of R NICs) on that group's rail-i leaf; the
/// node's units span one group or two neighbours, all R rails of each. Otherwise the
/// endpoints fill the leaves in order.
std::pair<std::int64_t, std::int64_t> leaves_of(const FabricScope& c, std::int64_t n) {
  if (c.rail) {
    const std::int64_t R = rail_width(c);
    const std::int64_t units = c.nics_per_node / R;
    return {(n * units / c.leaf_down) * R, ((n * units + units - 1) / c.leaf_down) * R + R - 1};
  }
  return {n * c.nics_per_node / c.leaf_down, (n * c.nics_per_node + c.nics_per_node - 1) / c.leaf_down};
}

Footprint footprint(const FabricScope& c, const std::vector<std::int64_t>& nodes) {
  Footprint f;
  std::int64_t node0 = -1, group0 = -1;
  for (const std::int64_t n : nodes) {
    if (n < 0) continue;
    if (n >= c.nodes) {
      f.unknown = true;
      return f;
    }
    const auto [lo, hi] = leaves_of(c, n);
    f.leaves.emplace_back(lo, hi);
    if (c.tiers == 3) {
      for (std::int64_t p = lo / c.leaves_per_pod; p <= hi / c.leaves_per_pod; ++p) f.pods.push_back(p);
    }
    // A rail-optimized job of two nodes or more may send from NIC i to NIC j (a direct
    // all-to-all), up through the switches above the leaves; otherwise only a job on more
    // than one leaf leaves them.
    if (node0 < 0) node0 = n;
    if (group0 < 0) group0 = lo;
    f.leaves_leaves = f.leaves_leaves || (c.rail ? n != node0 : lo != group0 || hi != group0);
  }
  std::sort(f.pods.begin(), f.pods.end());
  f.pods.erase(std::unique(f.pods.begin(), f.pods.end()), f.pods.end());
  return f;
}

bool clos_crosses(const FabricScope& c, const std::vector<std::int64_t>& job_nodes, std::int64_t unit) {
  // One pass over the job's nodes, without allocating: a failure asks this of every job.
  bool in_pod = false;         // a leaf of the aggregation switch's pod
  bool leaves_leaves = false;  // its traffic goes above its leaves (see footprint())
  bool many_pods = false;
  std::int64_t node0 = -1, leaf0 = -1, pod0 = -1;
  const std::int64_t pod = unit >= c.leaves && unit < c.leaves + c.aggs ? (unit - c.leaves) / c.aggs_per_pod : -1;
  for (const std::int64_t n : job_nodes) {
    if (n < 0) continue;
    if (n >= c.nodes) return true;  // no known place: any switch may carry its traffic
    const auto [lo, hi] = leaves_of(c, n);
    if (unit < c.leaves) {
      if (lo <= unit && unit <= hi) return true;
      continue;
    }
    if (node0 < 0) node0 = n;
    if (leaf0 < 0) leaf0 = lo;
    leaves_leaves = leaves_leaves || (c.rail ? n != node0 : lo != leaf0 || hi != leaf0);
    if (c.tiers == 3) {
      const std::int64_t p_lo = lo / c.leaves_per_pod, p_hi = hi / c.leaves_per_pod;
      if (pod0 < 0) pod0 = p_lo;
      many_pods = many_pods || p_lo != pod0 || p_hi != pod0;
      in_pod = in_pod || (p_lo <= pod && pod <= p_hi);
    }
  }
  if (unit < c.leaves || !leaves_leaves) return false;  // its traffic turns at its leaves
  if (pod >= 0) return in_pod;
  return c.tiers == 2 || many_pods;
}

/// How many distinct leaves a footprint holds.
std::int64_t distinct_leaves(const Footprint& f) {
  std::vector<std::int64_t> touched;
  for (const auto& [lo, hi] : f.leaves) {
    for (std::int64_t l = lo; l <= hi; ++l) touched.push_back(l);
  }
  std::sort(touched.begin(), touched.end());
  return std::unique(touched.begin(), touched.end()) - touched.begin();
}

std::int64_t clos_crossed(const FabricScope& c, const Footprint& f) {
  std::int64_t n = distinct_leaves(f);
  if (!f.leaves_leaves) return n;
  n += c.aggs_per_pod * static_cast<std::int64_t>(f.pods.size());
  if (c.tiers == 2 || f.pods.size() > 1) n += c.tops;
  return n;
}

/// Torus: per dimension, the coordinates a job's routes can take (see FabricScope), and
/// whether a node has no known place.
struct TorusHull {
  bool unknown = false;
  std::vector<std::vector<bool>> in;  ///< [dimension][coordinate]

  [[nodiscard]] bool holds(const FabricScope& c, std::int64_t router) const {
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      const std::int64_t k = c.dims[d];
      if (!in[d][static_cast<std::size_t>(router % k)]) return false;
      router /= k;
    }
    return true;
  }
};

TorusHull torus_hull(const FabricScope& c, const std::vector<std::int64_t>& job_nodes) {
  TorusHull h;
  for (const std::int64_t k : c.dims) h.in.emplace_back(static_cast<std::size_t>(k), false);
  for (const std::int64_t n : job_nodes) {
    if (n < 0) continue;
    if (n >= c.nodes) {
      h.unknown = true;
      return h;
    }
    std::int64_t r = n;  // node n sits on router n
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      h.in[d][static_cast<std::size_t>(r % c.dims[d])] = true;
      r /= c.dims[d];
    }
  }
  // Fill the gaps between consecutive coordinates (round the ring) of at most half the
  // ring: the shortest way between those two (a tie at k/2 goes either way: each way is a
  // run of such gaps). A longer gap is never the shortest way between any two.
  for (std::size_t d = 0; d < c.dims.size(); ++d) {
    const std::int64_t k = c.dims[d];
    std::vector<std::int64_t> at;
    for (std::int64_t x = 0; x < k; ++x) {
      if (h.in[d][static_cast<std::size_t>(x)]) at.push_back(x);
    }
    if (at.size() < 2) continue;
    for (std::size_t i = 0; i < at.size(); ++i) {
      const std::int64_t from = at[i];
      const std::int64_t to = i + 1 < at.size() ? at[i + 1] : at[0] + k;
      if (2 * (to - from) > k) continue;
      for (std::int64_t x = from + 1; x < to; ++x) h.in[d][static_cast<std::size_t>(x % k)] = true;
    }
  }
  return h;
}

/// Dragonfly: the groups a job's NICs are on, and whether they span more than one.
struct DragonflyReach {
  bool unknown = false;
  bool many_groups = false;
  std::int64_t group0 = -1;
};

DragonflyReach dragonfly_reach(const FabricScope& c, const std::vector<std::int64_t>& job_nodes) {
  DragonflyReach r;
  for (const std::int64_t n : job_nodes) {
    if (n < 0) continue;
    if (n >= c.nodes) {
      r.unknown = true;
      return r;
    }
    const auto [lo, hi] = c.node_routers[static_cast<std::size_t>(n)];
    if (r.group0 < 0) r.group0 = lo / c.routers_per_group;
    r.many_groups = r.many_groups || lo / c.routers_per_group != r.group0 || hi / c.routers_per_group != r.group0;
  }
  return r;
}

/// Whether a dragonfly job with reach `r` crosses router `unit`: any router of its groups
/// when it spans several, else the routers holding its NICs.
bool dragonfly_crosses(const FabricScope& c, const DragonflyReach& r, const std::vector<std::int64_t>& job_nodes,
                       std::int64_t unit) {
  if (r.unknown) return true;
  const std::int64_t group = unit / c.routers_per_group;
  for (const std::int64_t n : job_nodes) {
    if (n < 0) continue;
    const auto [lo, hi] = c.node_routers[static_cast<std::size_t>(n)];
    if (r.many_groups ? lo / c.routers_per_group <= group && group <= hi / c.routers_per_group : lo <= unit && unit <= hi) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::int64_t FabricScope::switches() const {
  switch (kind) {
    case Kind::clos: return leaves + aggs + tops;
    case Kind::torus:
    case Kind::dragonfly: break;
  }
  return routers;
}

bool FabricScope::crosses(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const {
  switch (kind) {
    case Kind::clos: return clos_crosses(*this, job_nodes, unit);
    case Kind::torus: {
      const TorusHull h = torus_hull(*this, job_nodes);
      return h.unknown || h.holds(*this, unit);
    }
    case Kind::dragonfly: return dragonfly_crosses(*this, dragonfly_reach(*this, job_nodes), job_nodes, unit);
  }
  return true;
}

bool FabricScope::holds_endpoint(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const {
  return std::any_of(job_nodes.begin(), job_nodes.end(), [&](std::int64_t n) {
    if (n < 0 || n >= nodes) return false;
    switch (kind) {
      case Kind::clos: {
        const auto [lo, hi] = leaves_of(*this, n);
        return unit < leaves && lo <= unit && unit <= hi;
      }
      case Kind::torus: return unit == n;
      case Kind::dragonfly: {
        const auto [lo, hi] = node_routers[static_cast<std::size_t>(n)];
        return lo <= unit && unit <= hi;
      }
    }
    return false;
  });
}

std::vector<bool> FabricScope::endpoint_flags(const std::vector<std::int64_t>& job_nodes) const {
  std::vector<bool> out(static_cast<std::size_t>(switches()), false);
  for (const std::int64_t n : job_nodes) {
    if (n < 0 || n >= nodes) continue;
    std::pair<std::int64_t, std::int64_t> range{n, n};  // torus: router n
    if (kind == Kind::clos) range = leaves_of(*this, n);
    if (kind == Kind::dragonfly) range = node_routers[static_cast<std::size_t>(n)];
    for (std::int64_t u = range.first; u <= range.second; ++u) out[static_cast<std::size_t>(u)] = true;
  }
  return out;
}

std::int64_t FabricScope::nic_switch(std::int64_t endpoint) const {
  const std::int64_t n = endpoint / nics_per_node;
  switch (kind) {
    case Kind::clos: {  // as leaves_of(): rail i of the rail unit's leaf group, else in order
      const std::int64_t R = rail_width(*this);
      return rail ? endpoint / R / leaf_down * R + endpoint % R : endpoint / leaf_down;
    }
    case Kind::torus: return n;
    case Kind::dragonfly: return endpoint / hosts_per_router;
  }
  return 0;
}

std::vector<std::int64_t> FabricScope::nics_behind(bool is_switch, std::int64_t unit) const {
  if (!is_switch) {
    const Cable& c = cables[static_cast<std::size_t>(unit)];
    return c.access ? std::vector<std::int64_t>{c.nic} : std::vector<std::int64_t>{};
  }
  std::vector<std::int64_t> out;
  const std::int64_t endpoints = nodes * nics_per_node;
  const auto range = [&](std::int64_t first, std::int64_t count, std::int64_t stride) {
    for (std::int64_t i = 0; i < count && first + i * stride < endpoints; ++i) out.push_back(first + i * stride);
  };
  switch (kind) {
    case Kind::clos:
      if (unit >= leaves) break;
      if (rail) {  // rail (unit mod R) of the leaf group's rail units
        const std::int64_t R = rail_width(*this);
        range((unit / R * leaf_down) * R + unit % R, leaf_down, R);
      } else {
        range(unit * leaf_down, leaf_down, 1);
      }
      break;
    case Kind::torus:
      if (unit < nodes) range(unit * nics_per_node, nics_per_node, 1);
      break;
    case Kind::dragonfly: range(unit * hosts_per_router, hosts_per_router, 1); break;
  }
  return out;
}

std::int64_t FabricScope::crossed_leaves(const std::vector<std::int64_t>& job_nodes) const {
  const Footprint f = footprint(*this, job_nodes);
  return f.unknown ? leaves : distinct_leaves(f);
}

std::int64_t FabricScope::crossed(const std::vector<std::int64_t>& job_nodes) const {
  if (kind == Kind::clos) {
    const Footprint f = footprint(*this, job_nodes);
    return f.unknown ? switches() : clos_crossed(*this, f);
  }
  const std::vector<bool> flags = crossed_switch_flags(job_nodes);
  return std::count(flags.begin(), flags.end(), true);
}

bool FabricScope::crosses_cable(const std::vector<std::int64_t>& job_nodes, std::int64_t unit) const {
  const Cable& c = cables[static_cast<std::size_t>(unit)];
  if (c.access) return std::find(job_nodes.begin(), job_nodes.end(), c.a) != job_nodes.end();
  if (kind == Kind::torus) {
    const TorusHull h = torus_hull(*this, job_nodes);
    return h.unknown || (h.holds(*this, c.a) && h.holds(*this, c.b));
  }
  return crosses(job_nodes, c.a) && crosses(job_nodes, c.b);
}

std::vector<bool> FabricScope::crossed_switch_flags(const std::vector<std::int64_t>& job_nodes) const {
  std::vector<bool> out(static_cast<std::size_t>(switches()), false);
  const auto mark = [&](std::int64_t u) { out[static_cast<std::size_t>(u)] = true; };
  switch (kind) {
    case Kind::clos: {
      const Footprint f = footprint(*this, job_nodes);
      if (f.unknown) return std::vector<bool>(out.size(), true);
      for (const auto& [lo, hi] : f.leaves) {
        for (std::int64_t l = lo; l <= hi; ++l) mark(l);
      }
      if (!f.leaves_leaves) return out;
      for (const std::int64_t p : f.pods) {
        for (std::int64_t a = 0; a < aggs_per_pod; ++a) mark(leaves + p * aggs_per_pod + a);
      }
      if (tiers == 2 || f.pods.size() > 1) {
        for (std::int64_t t = 0; t < tops; ++t) mark(leaves + aggs + t);
      }
      return out;
    }
    case Kind::torus: {
      const TorusHull h = torus_hull(*this, job_nodes);
      for (std::int64_t u = 0; u < switches(); ++u) out[static_cast<std::size_t>(u)] = h.unknown || h.holds(*this, u);
      return out;
    }
    case Kind::dragonfly: break;
  }
  const DragonflyReach r = dragonfly_reach(*this, job_nodes);
  if (r.unknown) return std::vector<bool>(out.size(), true);
  for (const std::int64_t n : job_nodes) {
    if (n < 0) continue;
    const auto [lo, hi] = node_routers[static_cast<std::size_t>(n)];
    if (!r.many_groups) {
      for (std::int64_t u = lo; u <= hi; ++u) mark(u);
      continue;
    }
    for (std::int64_t g = lo / routers_per_group; g <= hi / routers_per_group; ++g) {
      if (out[static_cast<std::size_t>(g * routers_per_group)]) continue;  // the group is in already
      for (std::int64_t u = g * routers_per_group; u < (g + 1) * routers_per_group; ++u) mark(u);
    }
  }
  return out;
}

std::vector<bool> FabricScope::crossed_cable_flags(const std::vector<std::int64_t>& job_nodes,
                                                    const std::vector<bool>& sw) const {
  std::vector<bool> on(static_cast<std::size_t>(nodes), false);
  for (const std::int64_t n : job_nodes) {
    if (n >= 0 && n < nodes) on[static_cast<std::size_t>(n)] = true;
  }
  std::vector<bool> out(cables.size(), false);
  for (std::size_t u = 0; u < cables.size(); ++u) {
    const Cable& c = cables[u];
    out[u] = c.access ? on[static_cast<std::size_t>(c.a)] : sw[static_cast<std::size_t>(c.a)] && sw[static_cast<std::size_t>(c.b)];
  }
  return out;
}

std::int64_t FabricScope::crossed_cables(const std::vector<std::int64_t>& job_nodes) const {
  const std::vector<bool> flags = crossed_cable_flags(job_nodes, crossed_switch_flags(job_nodes));
  return std::count(flags.begin(), flags.end(), true);
}

std::vector<ConfigProblem> check_failures(const FailuresConfig& f) {
  std::vector<ConfigProblem> out;
  for (const auto& [name, c] : f.components) {
    const std::string path = "components." + name;
    if (c.rate.has_value() == c.mtbf.has_value()) {
      out.push_back({path, "give either rate or mtbf", "rate: 0.0002/gpu-day, or mtbf: 5000d"});
      continue;
    }
    if (c.mtbf && c.mtbf->seconds() <= 0.0) out.push_back({path + ".mtbf", "must be positive", ""});
    // Above 1000 failures per unit and day (one every 86.4 s; real components fail about
    // 10^-4 times a day, a job's software about once), the run spends its time and memory on
    // failures alone: a fleet of 2,048 nodes at one a second each made 2,048 events per
    // simulated second, and a burn-in kept every failure it caught (GBs). At a rate of
    // 10^30 simulated time stood still. No component fails so often.
    const double mtbf_s = kDay / kMaxPerDay;
    if (c.rate && c.rate->per_day > kMaxPerDay) {
      out.push_back({path + ".rate",
                     fmt::format("{} failures per unit and day is more than the {:g} clustersim simulates (one every "
                                 "{:g} s)",
                                 c.rate->per_day, kMaxPerDay, mtbf_s),
                     "rates are per unit: 0.0002/gpu-day is about one failure per GPU in 14 years"});
    }
    if (c.mtbf && c.mtbf->seconds() > 0.0 && c.mtbf->seconds() < mtbf_s) {
      out.push_back({path + ".mtbf",
                     fmt::format("{} between failures of one unit is below the shortest mtbf clustersim accepts, "
                                 "{:g} s (1000 failures a day)",
                                 sim::format_time(*c.mtbf), mtbf_s),
                     "mtbf is per unit, such as 5000d"});
    }
    // Laws so skewed that most draws fall below a nanosecond (lognormal median = mean x
    // e^(-sigma^2/2): 1e-87 of the mean at sigma 20; a Weibull of shape 0.05 has its mean at
    // 2.4e18 times its scale) make failures repeat at one instant without end.
    if (c.distribution == Distribution::lognormal && c.shape > kMaxLognormalSigma) {
      out.push_back({path + ".shape",
                     fmt::format("a lognormal sigma of {:g} puts the median time to failure at e^-{:g} of the mean",
                                 c.shape, 0.5 * c.shape * c.shape),
                     fmt::format("at most {:g}, a median {:.1e} of the mean; published fits are 1-3",
                                 kMaxLognormalSigma, std::exp(-0.5 * kMaxLognormalSigma * kMaxLognormalSigma))});
    }
    if (c.distribution == Distribution::weibull && c.shape < kMinWeibullShape) {
      out.push_back({path + ".shape",
                     fmt::format("a Weibull shape of {:g} puts the mean at {:.2g} times the scale: most failures "
                                 "would come at once",
                                 c.shape, std::tgamma(1.0 + 1.0 / c.shape)),
                     fmt::format("at least {:g}; HPC failure data fit 0.7-0.8, Schroeder and Gibson",
                                 kMinWeibullShape)});
    }
    const std::optional<Per> by_name = default_per(name);
    if (c.rate && c.per && *c.per != c.rate->per) {
      out.push_back({path + ".per",
                     fmt::format("'{}' contradicts the rate's unit /{}-day", config::enum_name(*c.per),
                                 config::enum_name(c.rate->per)),
                     "drop per: the rate's unit says it"});
    }
    if (!c.rate && !c.per && !by_name) {
      out.push_back({path, fmt::format("'{}' is not a known component class, so its unit is unknown", name),
                     "add per: gpu, node, switch, link or job"});
    }
    const Per per = unit_of(name, c);
    if (c.effect == Effect::reroute && per != Per::switch_ && per != Per::link) {
      out.push_back({path + ".effect",
                     fmt::format("reroute is for network elements (per: switch or link), not per {}",
                                 config::enum_name(per)),
                     "effect: restart"});
    }
  }
  const Heterogeneity& h = f.heterogeneity;
  if (h.kind == HeterogeneityKind::power_law) {
    if (h.shape > 0.0) {
      if (h.shape <= 1.0) out.push_back({"heterogeneity.shape", "a Pareto shape must exceed 1 for a finite mean", "a shape such as shape: 1.2"});
    } else if (h.top_fraction == 0.0 && h.failure_share == 0.0) {
      out.push_back({"heterogeneity", "power_law needs shape, or top_fraction p and failure_share y with 0 < p < y < 1",
                     "shape: 1.2, or top_fraction: 0.01, failure_share: 0.5"});
    } else if (!(h.top_fraction > 0.0 && h.top_fraction < 1.0)) {
      // The key at fault, with the values given (a --set one is located on the command line).
      out.push_back({"heterogeneity.top_fraction",
                     fmt::format("power_law needs shape, or top_fraction p and failure_share y with 0 < p < y < 1 "
                                 "(top_fraction {}, failure_share {})",
                                 h.top_fraction, h.failure_share),
                     "a share such as top_fraction: 0.01"});
    } else if (!(h.failure_share > h.top_fraction && h.failure_share < 1.0)) {
      out.push_back({"heterogeneity.failure_share",
                     fmt::format("failure_share y must be above top_fraction p and below 1, 0 < p < y < 1 (the top p "
                                 "of GPUs carry y of the failures; top_fraction {}, failure_share {})",
                                 h.top_fraction, h.failure_share),
                     fmt::format("failure_share: {:g}", std::min(0.5 * (1.0 + h.top_fraction), std::max(0.5, 2.0 * h.top_fraction)))});
    }
  }
  return out;
}

namespace {

constexpr std::int64_t kInPool = -1;
constexpr std::int64_t kInRepair = -2;
constexpr std::int64_t kRetired = -3;
constexpr std::int64_t kInBurnIn = -4;
constexpr std::int64_t kFenced = -5;  ///< cut off by network elements that are down (scheduler.nic_loss)

/// One component class, resolved.
struct Klass {
  std::string name;
  Per per = Per::gpu;
  double mean_s = 0.0;  ///< mean time between failures of one unit
  Distribution law = Distribution::exponential;
  double shape = 1.0;
  bool hardware = true;
  bool planned = false;
  bool restarts = true;
  bool reroutes = false;  ///< a network element the fabric routes around
  bool heterogeneous = false;
  /// A switch or cable that stays down (replaced, or routed around until restarted): the
  /// nodes whose NICs it holds are cut off meanwhile (see fence()).
  bool fences = false;
};

std::vector<Klass> resolve_classes(const FailuresConfig& f) {
  std::vector<Klass> out;
  for (const auto& [name, c] : f.components) {
    Klass k;
    k.name = name;
    k.per = unit_of(name, c);
    k.mean_s = c.rate ? (c.rate->per_day > 0.0 ? kDay / c.rate->per_day : std::numeric_limits<double>::infinity())
                      : c.mtbf->seconds();
    k.law = c.distribution;
    k.shape = c.shape;
    k.hardware = c.hardware.value_or(default_hardware(name));
    k.planned = c.planned;
    k.restarts = c.effect == Effect::restart;
    k.reroutes = c.effect == Effect::reroute;
    k.heterogeneous = k.per == Per::gpu && f.heterogeneity.kind == HeterogeneityKind::power_law;
    k.fences = (k.per == Per::switch_ || k.per == Per::link) && (k.reroutes || (k.restarts && k.hardware));
    out.push_back(std::move(k));
  }
  return out;
}

double draw_law(Distribution law, double mean, double shape, sim::RandomStream& r) {
  switch (law) {
    case Distribution::exponential: return r.exponential(mean);
    case Distribution::weibull: return r.weibull(shape, mean / std::tgamma(1.0 + 1.0 / shape));
    case Distribution::lognormal: return r.lognormal(std::log(mean) - 0.5 * shape * shape, shape);
  }
  return mean;
}

/// The time to the first failure of a unit long in service: the residual of a life of the
/// renewal process in equilibrium, whose law is the stationary excess law F_e(t) =
/// (1/MEAN) int_0^t (1 - F(u)) du. It is U x L~, with U uniform on (0, 1) and L~ the
/// length-biased life (density x f(x) / MEAN) (Cox, Renewal Theory, 1962, section 5.2; Ross,
/// Stochastic Processes, 2nd ed., section 3.5): for a Weibull(shape k, scale s) L~ = s Y^(1/k)
/// with Y ~ Gamma(1 + 1/k); for a lognormal(mu, sigma) L~ is lognormal(mu + sigma^2, sigma).
/// An exponential life is memoryless: its residual is the life itself, drawn as before.
double draw_residual(Distribution law, double mean, double shape, sim::RandomStream& r) {
  switch (law) {
    case Distribution::exponential: return r.exponential(mean);
    case Distribution::weibull: {
      const double scale = mean / std::tgamma(1.0 + 1.0 / shape);
      const double biased = scale * std::pow(r.gamma(1.0 + 1.0 / shape, 1.0), 1.0 / shape);
      return r.uniform01() * biased;
    }
    case Distribution::lognormal: {
      const double mu = std::log(mean) - 0.5 * shape * shape;
      return r.uniform01() * r.lognormal(mu + shape * shape, shape);
    }
  }
  return mean;
}

double draw_duration(const DurationLaw& d, sim::RandomStream& r) {
  const double mean = d.mean.seconds();
  switch (d.kind) {
    case DurationLaw::Kind::fixed: return mean;
    case DurationLaw::Kind::exponential: return r.exponential(mean);
    case DurationLaw::Kind::lognormal: return draw_law(Distribution::lognormal, mean, d.shape, r);
    case DurationLaw::Kind::weibull: return draw_law(Distribution::weibull, mean, d.shape, r);
  }
  return mean;
}

struct Node {
  std::vector<double> mult;  ///< per GPU rate multiplier
  std::vector<double> failure_times;
  double repair_from = 0.0;  ///< when its repair under way started (its failure known)
  std::uint32_t gen = 0;
  std::int64_t job = kInPool;  ///< serving this job, or kInPool / kInRepair / kRetired / kInBurnIn / kFenced
  std::vector<std::int32_t> nic_down;  ///< per NIC, the network elements down that hold it (empty: none yet)
  bool cut = false;                    ///< cut off (scheduler.nic_loss): no multi-node job may use it
  std::int64_t home_job = -1;          ///< the job it last entered the service of: the one it returns to
  double burn_in_start = 0.0;
  std::vector<std::pair<double, std::size_t>> caught;  ///< failures caught in the burn-in under way: time, class
  bool paused = false;  ///< its job waits for nodes: its units' clocks are stopped (remaining_ holds what they had left)
  /// Paused in place (pause_job), since this time; NaN: not so. Its units' clocks stopped
  /// then without being looked at: what each had left is due - stopped_since (due as
  /// below), made explicit (stop_units) only if the node leaves service before it resumes.
  double stopped_since = std::numeric_limits<double>::quiet_NaN();
  /// Added to a unit's stored due time (due_) to give the time it fails: the time the node
  /// has spent paused in place since the unit's clock last started.
  double offset = 0.0;
  /// The units armed with a failure event (class, unit), some perhaps fired or re-armed
  /// since: a pause in place cancels these rather than looking at every unit of the node.
  std::vector<std::pair<std::size_t, std::int64_t>> armed;
  std::size_t armed_compact_at = 32;  ///< armed's size past which its stale entries are dropped
};

struct JobState {
  JobProfile p;
  double tau = 0.0, delta = 0.0, write = 0.0, read = 0.0, mtbf = 0.0;
  double tau_asked = std::numeric_limits<double>::quiet_NaN();  ///< before an async write raised tau
  double write_alone = 0.0, delta_alone = 0.0;  ///< on the storage alone (delta: blocking part)
  double work = std::numeric_limits<double>::infinity();  ///< seconds of training needed
  double committed = 0.0;
  double rate = 1.0;  ///< share of full throughput (below 1 while shrunk or degraded)
  double degrade = 1.0;  ///< product of the factors of the network elements down that it routes around
  /// Elements down that the job routes around: (class, unit) -> its factor.
  std::map<std::pair<std::size_t, std::int64_t>, double> degraded_by;
  /// Kept with degraded_by, for when it holds many (kExactDegraded): the product of its
  /// factors, and per class the sum of their losses 1 - f.
  double degraded_product = 1.0;
  std::vector<double> degraded_loss;
  bool queued = false, started = false, running = false, finished = false, waiting = false;
  bool restarting = false;          ///< between begin_restart and on_restarted
  std::uint32_t restart_gen = 0;    ///< bumped when a failure aborts a restart in progress
  /// The job's own units (software): their generation, bumped when it waits for nodes (their
  /// pending failures go stale), and per class the due time of the next failure (NaN: none)
  /// or, while it waits, the time that was left.
  std::uint32_t unit_gen = 0;
  std::vector<double> unit_due, unit_left;
  double run_start = 0.0, down_since = 0.0;
  double known_at = 0.0;  ///< when its last stop's cause is known (an unplanned one's detected and diagnosed)
  double start_time = 0.0;  ///< first start
  double done_at = std::numeric_limits<double>::infinity();  ///< the pending finish event's time
  std::string down_cause;
  std::string missing_by;  ///< the cause of the last node it lost (empty_slot)
  std::string shrunk_by;   ///< while shrunk: the cause that left it short of replicas
  std::vector<std::int64_t> slots;  ///< physical node per slot, -1 when missing
  std::vector<std::int64_t> home;   ///< physical node per slot at the job's start
  std::vector<std::int64_t> empty;  ///< the slots missing a node, increasing (missing of them)
  /// Nodes that joined it while it was down before its restart began (enter_service): their
  /// clocks start with the restart (begin_restart).
  std::vector<std::int64_t> held;
  std::int64_t missing = 0;
  sim::EventHandle done_event;
  std::int64_t interruptions = 0;
  std::int64_t fragmented_starts = 0;
  std::map<std::string, std::int64_t> by_cause;
  std::map<std::string, double> lost_gpu_hours;
  double finished_at = 0.0;
  // Integrals over running time (from `acc_since`), for utilisation and storage figures.
  double acc_since = 0.0;
  double running_s = 0.0, busy_gpu_s = 0.0, blocking_s_integral = 0.0, slowdown_integral = 0.0;
  double checkpoint_gpu_s = 0.0;  ///< GPU-seconds of running time spent blocked writing checkpoints
};

/// Failure-free wall time for a job running from its last commit to finish its work:
/// remaining compute r = (work - committed) / rate in cycles of tau + delta, the last one
/// with its own checkpoint.
double failure_free_duration(const JobState& j) {
  if (!std::isfinite(j.work)) return std::numeric_limits<double>::infinity();
  const double remaining = std::max(0.0, j.work - j.committed) / j.rate;
  if (!std::isfinite(j.tau)) return remaining + j.delta;
  const double cycles = std::max(1.0, std::ceil(remaining / j.tau));
  return (cycles - 1.0) * (j.tau + j.delta) + (remaining - (cycles - 1.0) * j.tau) + j.delta;
}

/// Checkpoint times and interval of a job (the same in every replication).
/// `renewals`: expected failures per unit over a run, by (class name, run): shared by the jobs
/// (each takes 2,000^2 / 2 steps to solve).
void plan_checkpoints(JobState& j, const LongRunInputs& in, const std::vector<Klass>& classes,
                      std::map<std::tuple<std::string, double, double>, double>& renewals) {
  const CheckpointConfig& c = in.checkpoint;
  const double size = j.p.checkpoint_bytes;
  j.write = size / c.write_bandwidth.value();
  j.read = size / c.read_bandwidth.value_or(c.write_bandwidth).value();
  j.delta = c.async ? size / static_cast<double>(std::max<std::int64_t>(1, j.p.gpus)) / c.snapshot_bandwidth.value()
                    : j.write;
  double rate = 0.0;  // unplanned interruptions per second
  std::vector<std::int64_t> nominal(static_cast<std::size_t>(j.p.nodes));
  std::iota(nominal.begin(), nominal.end(), j.p.first_node);
  // An element the fabric routes around restarts the job when it is in none of the job's
  // degradation classes (it cuts the job off: a leaf or router holding its NICs, an access
  // cable) and reaches it (an element the job crosses).
  const auto cutting = [&](bool is_switch) {
    const std::int64_t total = is_switch ? in.switches : in.links;
    const std::vector<bool> reaches = !in.scope ? std::vector<bool>{}
                                      : is_switch ? in.scope->crossed_switch_flags(nominal)
                                                  : in.scope->crossed_cable_flags(nominal, in.scope->crossed_switch_flags(nominal));
    const std::vector<bool> own = in.scope && is_switch ? in.scope->endpoint_flags(nominal) : std::vector<bool>{};
    std::int64_t n = 0;
    for (std::int64_t u = 0; u < total; ++u) {
      const bool in_class = std::any_of(j.p.degradations.begin(), j.p.degradations.end(), [&](const Degradation& d) {
        return d.is_switch == is_switch && u >= d.first && u < d.first + d.count;
      });
      if (in_class && !(is_switch && in.scope && own[static_cast<std::size_t>(u)])) continue;
      if (in.scope && !reaches[static_cast<std::size_t>(u)]) continue;
      ++n;
    }
    return static_cast<double>(n);
  };
  // A new fleet (failures.fleet_age: new) of a law that is not memoryless fails at another
  // rate than its mean's over the job's run: a Weibull of shape below 1 early and often. Its
  // units count with the failures they are expected to have over that run, each part
  // replaced new (expected_renewals), and so do a job's own units, new with the job whatever
  // the fleet's age. (The Young/Daly interval took the in-service rate: 3 times too long for a
  // new fleet of shape 0.5 over 54 days.) The run: from the job's submission (a wait in the
  // queue is not known here) to the horizon, or to the end of its failure-free training when
  // that comes first (it spread a 30-day horizon's failures over a job of 3 days).
  // LIMITATION: the mean unit's, not each heterogeneous GPU's (a power law's spread makes a
  // shape below 1 fail somewhat less than this says).
  const double start_s = j.p.submit_s;
  const double training_s =
      j.p.train_tokens ? *j.p.train_tokens / j.p.tokens_per_s : std::numeric_limits<double>::infinity();
  const double run_s = in.horizon_s > 0.0 ? std::min(in.horizon_s - start_s, training_s) : training_s;
  const bool known_run = std::isfinite(run_s) && run_s > 0.0;
  const bool new_fleet = in.failures->fleet_age == FleetAge::new_ && known_run;
  const double burn_in_s = in.scheduler.burn_in.seconds();
  const auto per_unit_rate = [&](const Klass& k) {
    // A job's own units (software) start new with the job, whatever the fleet's age.
    const bool from_new = new_fleet || (k.per == Per::job && known_run);
    if (!from_new || k.law == Distribution::exponential) return 1.0 / k.mean_s;
    const auto [it, added] = renewals.try_emplace({k.name, start_s, run_s}, 0.0);
    if (added) {
      const double m = k.mean_s;
      if (k.per == Per::gpu || k.per == Per::node) {
        // They age only while they serve, from their burn-in (every life in service starts
        // burned in: the fleet's, and each part back from repair).
        it->second = expected_renewals(k.law, k.shape, run_s / m, burn_in_s / m);
      } else if (k.per == Per::job) {
        it->second = expected_renewals(k.law, k.shape, run_s / m);
      } else {  // switches and cables age from the start, the job's run a window of their life
        it->second = expected_renewals(k.law, k.shape, (start_s + run_s) / m) - expected_renewals(k.law, k.shape, start_s / m);
      }
    }
    return it->second / run_s;
  };
  for (const Klass& k : classes) {
    if (k.planned || !std::isfinite(k.mean_s)) continue;
    const bool reroute_cuts = k.reroutes && (k.per == Per::switch_ || k.per == Per::link) && j.p.nodes > 1;
    if (!k.restarts && !reroute_cuts) continue;
    double units = 0.0;
    switch (k.per) {
      case Per::gpu: units = static_cast<double>(j.p.gpus); break;
      case Per::node: units = static_cast<double>(j.p.nodes); break;
      case Per::switch_:
        if (reroute_cuts) {
          units = cutting(true);
        } else if (j.p.nodes > 1) {
          units = static_cast<double>(in.scope ? in.scope->crossed(nominal) : in.switches);
        }
        break;
      case Per::link:
        if (reroute_cuts) {
          units = cutting(false);
        } else if (j.p.nodes > 1) {
          units = static_cast<double>(in.scope ? in.scope->crossed_cables(nominal) : in.links);
        }
        break;
      case Per::job: units = 1.0; break;
    }
    rate += units * per_unit_rate(k);
  }
  j.mtbf = rate > 0.0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
  if (!c.interval.automatic) {
    j.tau = c.interval.every.seconds();
  } else if (std::isfinite(j.mtbf)) {
    j.tau = daly_interval(j.delta, j.mtbf);
    if (j.delta == 0.0) j.tau = 1.0;  // free checkpoints: as often as one likes (every step, below)
  } else {
    j.tau = std::numeric_limits<double>::infinity();
  }
  // A trainer saves between steps (Megatron-LM's --save-interval counts iterations): the
  // interval is a whole number of steps, at least one. (Half a step asked for wrote twice a
  // step: more time blocked than the steps between the writes could hold.)
  const double asked = j.tau;
  const double step = std::isfinite(j.p.step_s) ? j.p.step_s : 0.0;
  if (step > 0.0 && std::isfinite(j.tau)) j.tau = std::max(1.0, std::round(j.tau / step)) * step;
  // Asynchronous writes do not overlap: the next snapshot waits for the previous write (and
  // for the end of the step under way when it ends). What was asked is reported beside it.
  if (c.async && j.write - j.delta > j.tau) {
    j.tau_asked = asked;
    j.tau = step > 0.0 ? std::ceil((j.write - j.delta) / step) * step : j.write - j.delta;
  }
  if (j.p.train_tokens) j.work = *j.p.train_tokens / j.p.tokens_per_s;
  j.write_alone = j.write;
  j.delta_alone = j.delta;
}

struct Replication {
  std::vector<JobState> jobs;
  std::map<std::string, std::int64_t> failures_by_cause;
  std::map<std::string, std::int64_t> burn_in_failures;
  std::int64_t burn_in_failures_installed = 0;
  std::int64_t burn_ins = 0;
  double burn_in_node_s = 0.0;
  std::vector<std::int64_t> gpu_failures;
  std::int64_t retired = 0;
  double top1_rate_share = 0.0;
  double elapsed = 0.0;
  std::uint64_t events = 0;
  std::uint64_t events_scheduled = 0;
  std::vector<TimelineEvent> timeline;
  std::uint64_t timeline_dropped = 0;
};

class Model {
 public:
  Model(const LongRunInputs& in, const std::vector<Klass>& classes, std::vector<JobState> jobs,
        std::uint64_t replication, bool record)
      : in_(in),
        classes_(classes),
        record_(record),
        gpn_(in.gpus_per_node),
        hetero_(sim::make_stream(in.seed, "failures.heterogeneity", replication)),
        repair_rng_(sim::make_stream(in.seed, "failures.repair", replication)),
        stop_rng_(sim::make_stream(in.seed, "failures.repair.stop", replication)),
        alpha_(pareto_alpha(in.failures->heterogeneity)),
        burn_in_(in.scheduler.burn_in.seconds()) {
    r_.jobs = std::move(jobs);
    for (const Klass& k : classes_) streams_.push_back(sim::make_stream(in.seed, "failures." + k.name, replication));
    fail_id_ = engine_.add_handler<&Model::on_failure>(*this);
    element_back_id_ = engine_.add_handler<&Model::on_element_back>(*this);
    repaired_id_ = engine_.add_handler<&Model::on_node_repaired>(*this);
    ready_id_ = engine_.add_handler<&Model::on_ready>(*this);
    restarted_id_ = engine_.add_handler<&Model::on_restarted>(*this);
    done_id_ = engine_.add_handler<&Model::on_done>(*this);
    submit_id_ = engine_.add_handler<&Model::on_submit>(*this);
    burned_in_id_ = engine_.add_handler<&Model::on_burned_in>(*this);
    for (std::size_t n = 0; n < in.node_blocks.size(); ++n) {
      if (n == 0 || in.node_blocks[n].first != in.node_blocks[n - 1].first) {
        block_starts_.push_back(static_cast<std::int64_t>(n));
      }
    }
  }

  /// Called between slices of the run with the share of the horizon simulated.
  void on_progress(std::function<void(double)> f) { progress_ = std::move(f); }

  Replication run(double end) {
    end_ = end;
    remaining_.assign(classes_.size(), {});
    due_.assign(classes_.size(), {});
    armed_.assign(classes_.size(), {});
    const std::int64_t physical = in_.nodes + in_.scheduler.spare_nodes;
    // Room for the installed fleet at once: grown node by node, the records were copied
    // and their pages faulted in again at every doubling, in every replication.
    const auto fleet = static_cast<std::size_t>(physical);
    nodes_.reserve(fleet);
    r_.gpu_failures.reserve(fleet * static_cast<std::size_t>(gpn_));
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const std::size_t units = classes_[c].per == Per::gpu ? fleet * static_cast<std::size_t>(gpn_) : fleet;
      remaining_[c].reserve(units);
      due_[c].reserve(units);
      armed_[c].reserve(units);
    }
    for (std::int64_t n = 0; n < physical; ++n) new_node();
    // The installed GPUs' multipliers are scaled to average exactly 1, so that the fleet
    // fails at the configured rate whatever the draw (a Pareto sample mean with shape near 1
    // is usually well below the distribution's mean); replacements keep the raw draw.
    // The GPUs in service then fail less than that once spares run: a failed node, repaired
    // with its multiplier, joins the back of the pool, whose idle nodes do not fail, so the
    // flakiest nodes spend part of the run there (llama3-405b-54d.yaml, 32 spares: ~372
    // interruptions against the configured 419; ~412 with every GPU alike). Real fleets
    // select the same way: rates fitted to a fleet's observed counts are of the nodes in
    // service (longrun.hpp says more).
    if (alpha_ > 0.0) {
      double sum = 0.0;
      for (const Node& n : nodes_) sum += std::accumulate(n.mult.begin(), n.mult.end(), 0.0);
      const double mean = sum / static_cast<double>(physical * gpn_);
      for (Node& n : nodes_) {
        for (double& m : n.mult) m /= mean;
      }
      for (const Node& n : nodes_) check_multipliers(n);
    }
    // A fleet in service: each installed GPU and node unit starts with the residual of a life
    // (draw_residual). Exponential lives are left to be drawn when they enter service, as a
    // new unit's (the same law), so that their draws keep their order.
    if (in_.failures->fleet_age == FleetAge::in_service) {
      for (std::size_t c = 0; c < classes_.size(); ++c) {
        const Klass& k = classes_[c];
        if ((k.per != Per::gpu && k.per != Per::node) || k.law == Distribution::exponential ||
            !std::isfinite(k.mean_s)) {
          continue;
        }
        for (std::size_t u = 0; u < remaining_[c].size(); ++u) {
          const auto unit = static_cast<std::int64_t>(u);
          const Node& node = nodes_[k.per == Per::gpu ? u / static_cast<std::size_t>(gpn_) : u];
          remaining_[c][u] = draw_residual(k.law, k.mean_s, k.shape, streams_[c]) / unit_mult(c, node, unit);
        }
      }
    }
    {  // The share of the fleet's failure rate carried by its top 1% of GPUs (expected).
      std::vector<double> m;
      for (const Node& n : nodes_) m.insert(m.end(), n.mult.begin(), n.mult.end());
      const auto top = static_cast<std::ptrdiff_t>(std::ceil(0.01 * static_cast<double>(m.size())));
      if (top > 0) {
        std::partial_sort(m.begin(), m.begin() + top, m.end(), std::greater<>());
        r_.top1_rate_share = std::accumulate(m.begin(), m.begin() + top, 0.0) / std::accumulate(m.begin(), m.end(), 0.0);
      }
    }
    // The installed fleet burns in before the horizon starts: it ages, and what fails is caught.
    if (burn_in_ > 0.0) {
      for (std::int64_t n = 0; n < physical; ++n) {
        Node& node = nodes_[static_cast<std::size_t>(n)];
        burn_in_units(n, -burn_in_);
        r_.burn_in_failures_installed += static_cast<std::int64_t>(node.caught.size());
        for (const auto& [t, c] : node.caught) ++r_.burn_in_failures[classes_[c].name];
        node.caught.clear();
      }
    }
    for (std::int64_t n = 0; n < physical; ++n) pool_.push_back(n);
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const Klass& k = classes_[c];
      std::int64_t units = 0;
      if (k.per == Per::switch_) units = in_.switches;
      if (k.per == Per::link) units = in_.links;
      const bool in_service = in_.failures->fleet_age == FleetAge::in_service;
      for (std::int64_t u = 0; u < units; ++u) schedule_unit(c, u, 0, 1.0, 0.0, in_service);
    }
    for (std::size_t j = 0; j < r_.jobs.size(); ++j) {
      const double at = r_.jobs[j].p.submit_s;
      if (at <= 0.0) {
        submit(static_cast<std::int64_t>(j));
      } else if (at < end_) {
        engine_.schedule_at(sim::Time::from_seconds(at), submit_id_, static_cast<std::uint64_t>(j));
      }
    }
    schedule_queue();
    update_storage();
    unfinished_ = static_cast<std::int64_t>(std::count_if(r_.jobs.begin(), r_.jobs.end(),
                                                           [](const JobState& j) { return std::isfinite(j.work); }));
    // In slices of simulated time, to report progress between them: processing the events
    // up to each slice's end in turn is processing them up to the end at once.
    constexpr int kSlices = 64;
    for (int k = 1; k <= kSlices; ++k) {
      engine_.run_until(sim::Time::from_seconds(k == kSlices ? end_ : end_ * k / kSlices));
      const bool done = engine_.stopped();  // every job trained before the horizon
      if (progress_) progress_(done ? 1.0 : static_cast<double>(k) / kSlices);
      if (done) break;
    }
    r_.elapsed = (unfinished_ == 0 && in_.horizon_s <= 0.0) ? last_done_ : end_;
    for (JobState& j : r_.jobs) {
      account(j, r_.elapsed);
      // A job still down at the end has lost its GPUs since it went down.
      if (j.started && !j.running && !j.finished) {
        j.lost_gpu_hours[j.down_cause] += (r_.elapsed - j.down_since) * static_cast<double>(j.p.gpus) / 3600.0;
      }
    }
    // Burn-ins under way at the end: their time and what they caught so far.
    for (Node& node : nodes_) {
      if (node.job != kInBurnIn) continue;
      r_.burn_in_node_s += std::max(0.0, r_.elapsed - node.burn_in_start);
      for (const auto& [t, c] : node.caught) {
        if (t < r_.elapsed) ++r_.burn_in_failures[classes_[c].name];
      }
    }
    r_.events = engine_.events_processed();
    r_.events_scheduled = engine_.events_scheduled();
    return std::move(r_);
  }

 private:
  // Event arguments: failure = class (8 bits) | generation (24 bits) | unit index (32 bits).
  static std::uint64_t pack(std::size_t c, std::uint32_t gen, std::int64_t index) {
    return (static_cast<std::uint64_t>(c) << 56) | (static_cast<std::uint64_t>(gen & 0xFFFFFFu) << 32) |
           static_cast<std::uint64_t>(index);
  }

  void record(std::string kind, const std::string& cause, std::int64_t job, std::int64_t node, std::int64_t gpu,
              std::int64_t element = -1) {
    if (!record_) return;
    if (r_.timeline.size() >= kMaxTimeline) {
      ++r_.timeline_dropped;
      return;
    }
    r_.timeline.push_back({engine_.now().seconds(), std::move(kind), cause, job, node, gpu, element});
  }

  // A GPU's failure rate is its class's rate times its Pareto multiplier: the cap on
  // configured rates (check_failures: 1000 failures per unit and day) holds for that product
  // too, or a heavy tail on a high rate makes one GPU fail every few seconds.
  void check_multipliers(const Node& n) const {
    const double most = *std::max_element(n.mult.begin(), n.mult.end());
    for (const Klass& k : classes_) {
      if (!k.heterogeneous || !std::isfinite(k.mean_s)) continue;
      const double per_day = kDay / k.mean_s * most;
      if (per_day > kMaxPerDay) {
        throw sim::LimitError(fmt::format(
            "a GPU drew a Pareto rate multiplier of {:.4g} (heterogeneity shape {:.4g}), which puts its '{}' failures "
            "at {:.4g} a day, more than the {:g} per unit and day clustersim simulates",
            most, alpha_, k.name, per_day, kMaxPerDay));
      }
    }
  }

  std::int64_t new_node() {
    Node n;
    n.mult.assign(static_cast<std::size_t>(gpn_), 1.0);
    if (alpha_ > 0.0) {
      const double xm = (alpha_ - 1.0) / alpha_;  // scale for mean 1
      for (double& m : n.mult) m = hetero_.pareto(alpha_, xm);
    }
    nodes_.push_back(std::move(n));
    r_.gpu_failures.resize(nodes_.size() * static_cast<std::size_t>(gpn_), 0);
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const std::size_t units = classes_[c].per == Per::gpu ? nodes_.size() * static_cast<std::size_t>(gpn_)
                                : classes_[c].per == Per::node ? nodes_.size()
                                                               : 0;
      remaining_[c].resize(units, kFresh);
      due_[c].resize(units, 0.0);
      armed_[c].resize(units);
    }
    return static_cast<std::int64_t>(nodes_.size()) - 1;
  }

  /// Schedules `id` `seconds` from now, unless that is past the end of the run (by more than a
  /// second, so that the events that do run are exactly those scheduled before): such an event
  /// never runs, and its time may be past the clock's range (a heavy-tailed repair drawn at
  /// 10^10 s), which is no error of the scenario.
  void after(double seconds, sim::HandlerId id, std::uint64_t arg) {
    if (seconds > end_ - engine_.now().seconds() + 1.0) return;
    engine_.schedule_after(sim::Time::from_seconds(seconds), id, arg);
  }
  void after(sim::Time delay, sim::HandlerId id, std::uint64_t arg) {
    if (delay.seconds() > end_ - engine_.now().seconds() + 1.0) return;
    engine_.schedule_after(delay, id, arg);
  }

  /// Schedules the next failure of a switch, link or job unit: a new life from `from`, or
  /// (`in_service`, an installed unit at the start) the residual of one.
  void schedule_unit(std::size_t c, std::int64_t index, std::uint32_t gen, double mult, double from,
                     bool in_service = false) {
    const Klass& k = classes_[c];
    if (!std::isfinite(k.mean_s)) return;
    const double life = in_service ? draw_residual(k.law, k.mean_s, k.shape, streams_[c])
                                   : draw_law(k.law, k.mean_s, k.shape, streams_[c]);
    const double t = from + life / mult;
    if (k.per == Per::job) {  // the job's own units stop while it waits for nodes (pause_job)
      JobState& j = r_.jobs[static_cast<std::size_t>(index)];
      if (j.unit_due.size() < classes_.size()) j.unit_due.resize(classes_.size(), kFresh);
      j.unit_due[c] = t;
      gen = j.unit_gen & 0xFFFFFFu;
    }
    if (t < end_) engine_.schedule_at(sim::Time::from_seconds(t), fail_id_, pack(c, gen, index));
  }

  [[nodiscard]] double unit_mult(std::size_t c, const Node& node, std::int64_t unit) const {
    return classes_[c].heterogeneous ? node.mult[static_cast<std::size_t>(unit % gpn_)] : 1.0;
  }

  /// Node n takes slot `slot` of job `job`. A node joining a job that is down (a spare
  /// taking a failed node's place while the failure is detected and diagnosed, or while the
  /// job writes its last checkpoint) runs nothing until the restart begins: its clocks start
  /// then (begin_restart), as a waiting job's do on resume (resume_job). Started at once, a
  /// spare failed before the job it replaced a node of had even noticed the failure: 3 of 18
  /// failures on a 4-node cluster hit idle spares that way, and a 90 s MTBF took every node,
  /// spares included, before the first detection.
  void enter_service(std::int64_t n, std::int64_t job, std::int64_t slot) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    node.job = job;
    node.home_job = job;
    JobState& j = r_.jobs[static_cast<std::size_t>(job)];
    j.slots[static_cast<std::size_t>(slot)] = n;
    if (j.waiting) {  // runs nothing: the node joins it with its clocks stopped (resume_job starts them)
      node.paused = true;
      return;
    }
    if (j.started && !j.running && !j.restarting) {
      node.paused = true;
      j.held.push_back(n);
      return;
    }
    start_units(n, engine_.now().seconds());
  }

  /// Starts (or resumes) the clocks of node n's GPU and node units.
  void start_units(std::int64_t n, double now) {
    const Node& node = nodes_[static_cast<std::size_t>(n)];
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const Klass& k = classes_[c];
      if (k.per == Per::gpu) {
        for (std::int64_t g = 0; g < gpn_; ++g) {
          resume_unit(c, n * gpn_ + g, node.gen, k.heterogeneous ? node.mult[static_cast<std::size_t>(g)] : 1.0, now);
        }
      } else if (k.per == Per::node) {
        resume_unit(c, n, node.gen, 1.0, now);
      }
    }
  }

  /// Stops the clocks of node n's GPU and node units with the time they have left; their
  /// pending failures are cancelled (and go stale with the generation the caller bumps).
  /// Left in the queue, a long-lived unit's stopped failure stayed there until its time:
  /// a job paused and resumed at every failure of a storm piled up GBs of them.
  void stop_units(std::int64_t n, double now) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const Per per = classes_[c].per;
      if (per != Per::gpu && per != Per::node) continue;
      const std::int64_t first = per == Per::gpu ? n * gpn_ : n;
      const std::int64_t count = per == Per::gpu ? gpn_ : 1;
      for (std::int64_t u = first; u < first + count; ++u) {
        double& left = remaining_[c][static_cast<std::size_t>(u)];
        if (!std::isnan(left)) left = std::max(0.0, due_[c][static_cast<std::size_t>(u)] + node.offset - now);
        sim::EventHandle& armed = armed_[c][static_cast<std::size_t>(u)];
        if (armed.seq != 0) engine_.cancel(armed);
        armed = {};
      }
    }
    node.armed.clear();
    node.offset = 0.0;
    node.stopped_since = std::numeric_limits<double>::quiet_NaN();
  }

  /// A job waiting for nodes (no spare for a failed one) runs nothing: its nodes' GPU and
  /// node units and its own (software) units stop with the time they had left, as a spare's
  /// do, until it restarts (resume_job). Before, they kept failing while it waited: with few
  /// spares, failures piled up on a job that was not running and its ETTR read far too low.
  /// The nodes stop in place: only their armed units are looked at (pause_in_place); a
  /// job of 2,048 nodes without spares spent most of a long run stopping and restarting the
  /// clocks of its 131,000 GPU and node units, of which a handful fail within the run.
  void pause_job(JobState& j) {
    const double now = engine_.now().seconds();
    for (const std::int64_t n : j.slots) {
      if (n < 0) continue;
      Node& node = nodes_[static_cast<std::size_t>(n)];
      if (node.paused || node.job < 0) continue;
      pause_in_place(node, now);
      ++node.gen;
      node.paused = true;
    }
    if (j.unit_due.size() < classes_.size()) j.unit_due.resize(classes_.size(), kFresh);
    if (j.unit_left.size() < classes_.size()) j.unit_left.resize(classes_.size(), kFresh);
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].per != Per::job || std::isnan(j.unit_due[c])) continue;
      j.unit_left[c] = std::max(0.0, j.unit_due[c] - now);
      j.unit_due[c] = kFresh;
    }
    ++j.unit_gen;
  }

  /// Stops node's units where they stand: their pending failures are cancelled (kept in
  /// node.armed, to be armed again), and every unit's due time moves with the time the node
  /// stays paused (node.offset, on resume_in_place). Each unit's operating time left is what
  /// stop_units() would have made explicit, unit by unit.
  void pause_in_place(Node& node, double now) {
    std::vector<std::pair<std::size_t, std::int64_t>> kept;
    for (const auto& [c, u] : node.armed) {
      sim::EventHandle& armed = armed_[c][static_cast<std::size_t>(u)];
      // A unit listed twice (armed again after a failure) or whose event fired is skipped.
      if (armed.seq != 0 && engine_.cancel(armed)) kept.emplace_back(c, u);
      armed = {};
    }
    node.armed = std::move(kept);
    node.stopped_since = now;
  }

  /// Restarts the clocks pause_in_place stopped: every due time moves by the pause, and the
  /// units that were armed are armed again (any other unit was due past the end of the run,
  /// and is later still).
  void resume_in_place(Node& node, double now) {
    node.offset += now - node.stopped_since;
    node.stopped_since = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::pair<std::size_t, std::int64_t>> pending = std::move(node.armed);
    node.armed.clear();
    for (const auto& [c, u] : pending) {
      // Never before now: a failure due in the instant of the pause comes back a rounding
      // below the resume (the explicit stop clamped what was left at 0 the same way).
      const double due = std::max(now, due_[c][static_cast<std::size_t>(u)] + node.offset);
      if (due >= end_) continue;
      armed_[c][static_cast<std::size_t>(u)] = engine_.schedule_at(sim::Time::from_seconds(due), fail_id_, pack(c, node.gen, u));
      node.armed.emplace_back(c, u);
    }
  }

  /// Restarts the clocks pause_job stopped.
  void resume_job(JobState& j) {
    const double now = engine_.now().seconds();
    for (const std::int64_t n : j.slots) {
      if (n < 0) continue;
      Node& node = nodes_[static_cast<std::size_t>(n)];
      if (!node.paused) continue;
      node.paused = false;
      // Paused in place, or joined the job while it waited (enter_service: its clocks were
      // stopped when it left its former service).
      if (!std::isnan(node.stopped_since)) {
        resume_in_place(node, now);
      } else {
        start_units(n, now);
      }
    }
    // Its own (software) clocks start with its restart (begin_restart: start_own_units).
  }

  /// A job that goes down runs no software until its restart begins (detection, diagnosis
  /// and any wait for nodes): its own (per-job) failure clocks stop with the time they had
  /// left, and the class that failed, `failed` (an index into classes_), draws its next life
  /// now, to run from the restart's start (a failure during the relaunch aborts it, as a
  /// node's does). Before, that life started at the failure: the failures it brought during
  /// detection joined the one being handled, so a Weibull of shape 0.5 (its hazard highest
  /// just after a restart) gave 3.3 interruptions per running day of the 4 configured.
  void stop_own_units(JobState& j, std::size_t failed) {
    const double now = engine_.now().seconds();
    if (j.unit_due.size() < classes_.size()) j.unit_due.resize(classes_.size(), kFresh);
    if (j.unit_left.size() < classes_.size()) j.unit_left.resize(classes_.size(), kFresh);
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].per != Per::job) continue;
      if (c == failed) {
        const Klass& k = classes_[c];
        j.unit_left[c] = std::isfinite(k.mean_s) ? draw_law(k.law, k.mean_s, k.shape, streams_[c]) : kFresh;
      } else if (!std::isnan(j.unit_due[c])) {
        j.unit_left[c] = std::max(0.0, j.unit_due[c] - now);
      }
      j.unit_due[c] = kFresh;
    }
    ++j.unit_gen;
  }

  /// Restarts the clocks stop_own_units (or pause_job) stopped, as the job's restart begins.
  void start_own_units(JobState& j, std::int64_t index) {
    const double now = engine_.now().seconds();
    for (std::size_t c = 0; c < j.unit_left.size(); ++c) {
      if (std::isnan(j.unit_left[c])) continue;
      const double t = now + j.unit_left[c];
      j.unit_due[c] = t;
      j.unit_left[c] = kFresh;
      if (t < end_) engine_.schedule_at(sim::Time::from_seconds(t), fail_id_, pack(c, j.unit_gen & 0xFFFFFFu, index));
    }
  }

  /// Starts (or resumes) the clock of a GPU or node unit entering service: a unit keeps the
  /// operating time it had left when its node left service; a fresh one draws a new life.
  void resume_unit(std::size_t c, std::int64_t u, std::uint32_t gen, double mult, double now) {
    const Klass& k = classes_[c];
    if (!std::isfinite(k.mean_s)) return;
    double& left = remaining_[c][static_cast<std::size_t>(u)];
    if (std::isnan(left)) left = draw_law(k.law, k.mean_s, k.shape, streams_[c]) / mult;
    const double due = now + left;
    Node& node = nodes_[static_cast<std::size_t>(classes_[c].per == Per::gpu ? u / gpn_ : u)];
    due_[c][static_cast<std::size_t>(u)] = due - node.offset;
    armed_[c][static_cast<std::size_t>(u)] =
        due < end_ ? engine_.schedule_at(sim::Time::from_seconds(due), fail_id_, pack(c, gen, u)) : sim::EventHandle{};
    if (due < end_) {
      node.armed.emplace_back(c, u);
      // A node that never pauses nor leaves service (failures that do not stop it) would
      // list every arming: past a bound the entries whose event is gone or listed twice go.
      if (node.armed.size() > node.armed_compact_at) {
        std::erase_if(node.armed, [&](const auto& e) { return armed_[e.first][static_cast<std::size_t>(e.second)].seq == 0; });
        std::sort(node.armed.begin(), node.armed.end());
        node.armed.erase(std::unique(node.armed.begin(), node.armed.end()), node.armed.end());
        node.armed_compact_at = std::max<std::size_t>(32, 2 * node.armed.size());
      }
    }
  }

  /// Takes a node out of service: its units' clocks stop with the time they had left.
  void leave_service(std::int64_t n, std::int64_t state) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    // A paused node's clocks stopped already: with what they had left, or in place (made
    // explicit now, as of when they stopped).
    if (node.job >= 0 && !node.paused) stop_units(n, engine_.now().seconds());
    if (node.job >= 0 && node.paused && !std::isnan(node.stopped_since)) stop_units(n, node.stopped_since);
    ++node.gen;
    node.paused = false;
    node.job = state;
  }

  /// Runs node n's GPU and node units (unplanned classes) through a burn-in of b seconds
  /// from `start`: each unit's operating time left shrinks by b; a unit whose life ends
  /// inside it is caught (noted in node.caught with its time) and draws a fresh life.
  void burn_in_units(std::int64_t n, double start) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    node.caught.clear();
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const Klass& k = classes_[c];
      if ((k.per != Per::gpu && k.per != Per::node) || k.planned || !std::isfinite(k.mean_s)) continue;
      const std::int64_t first = k.per == Per::gpu ? n * gpn_ : n;
      const std::int64_t count = k.per == Per::gpu ? gpn_ : 1;
      for (std::int64_t u = first; u < first + count; ++u) {
        const double mult = unit_mult(c, node, u);
        double& left = remaining_[c][static_cast<std::size_t>(u)];
        if (std::isnan(left)) left = draw_law(k.law, k.mean_s, k.shape, streams_[c]) / mult;
        double at = 0.0;  // into the burn-in
        while (at + left < burn_in_) {
          at += left;
          node.caught.emplace_back(start + at, c);
          left = draw_law(k.law, k.mean_s, k.shape, streams_[c]) / mult;
        }
        left -= burn_in_ - at;
      }
    }
  }

  /// A node entering the fleet (repaired or new) goes to burn-in, or straight to the spares.
  void node_available(std::int64_t n) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    if (burn_in_ > 0.0) {
      const double now = engine_.now().seconds();
      node.job = kInBurnIn;
      node.burn_in_start = now;
      ++r_.burn_ins;
      burn_in_units(n, now);
      record("burn_in", "", -1, n, -1);
      after(burn_in_, burned_in_id_, static_cast<std::uint64_t>(n));
      return;
    }
    to_pool(n);
    nodes_returned();
  }

  /// A free node joins the pool, unless a network element that is down cuts it off.
  void to_pool(std::int64_t n) {
    Node& node = nodes_[static_cast<std::size_t>(n)];
    if (node.cut) {
      node.job = kFenced;
      return;
    }
    node.job = kInPool;
    pool_.push_back(n);
  }

  /// Network element `index` of class k went down (delta +1) or is back (-1). While it is
  /// down, the NICs it holds (FabricScope::nics_behind) are cut off, and a node with a NIC
  /// cut off (scheduler.nic_loss drain; with keep, every NIC) serves no multi-node job: a
  /// free one leaves the pool; one serving a multi-node job leaves it (interrupted by the
  /// failure already), which takes a spare as for a failed node or waits; a single-node job
  /// keeps its node, whose work needs no fabric. With keep, a node with a NIC left keeps
  /// serving (NCCL sends its GPUs' traffic through the NICs it has: slower, which is not
  /// modelled). A node rejoins the pool when it is no longer cut off.
  void fence(const Klass& k, std::int64_t index, int delta) {
    if (!k.fences || !in_.scope) return;
    const std::int64_t nics = in_.scope->nics_per_node;
    bool returned = false;
    std::vector<std::int64_t> cut;
    for (const std::int64_t e : in_.scope->nics_behind(k.per == Per::switch_, index)) {
      const std::int64_t n = e / nics;
      Node& node = nodes_[static_cast<std::size_t>(n)];
      if (node.nic_down.empty()) node.nic_down.assign(static_cast<std::size_t>(nics), 0);
      std::int32_t& down = node.nic_down[static_cast<std::size_t>(e % nics)];
      down += delta;
      CLUSTERSIM_CHECK(down >= 0, "a NIC is cut off by the elements that are down");
      const auto down_now = [](std::int32_t d) { return d > 0; };
      const bool cut_off = in_.scheduler.nic_loss == NicLoss::drain
                                ? std::any_of(node.nic_down.begin(), node.nic_down.end(), down_now)
                                : std::all_of(node.nic_down.begin(), node.nic_down.end(), down_now);
      if (cut_off == node.cut) continue;
      node.cut = cut_off;
      // One record per change, whatever the node is doing (serving, free, in repair).
      record(cut_off ? "cut_off" : "reconnected", k.name, node.job >= 0 ? node.job : -1, n, -1, index);
      if (cut_off) {
        if (node.job == kInPool) {
          pool_.erase(std::find(pool_.begin(), pool_.end(), n));
          node.job = kFenced;
        } else if (node.job >= 0 && r_.jobs[static_cast<std::size_t>(node.job)].p.nodes > 1) {
          cut.push_back(n);  // after the pool has lost every node behind the element
        }
      } else if (node.job == kFenced) {
        node.job = kInPool;
        pool_.push_back(n);
        returned = true;
      }
    }
    for (const std::int64_t n : cut) {
      Node& node = nodes_[static_cast<std::size_t>(n)];
      const std::int64_t job = node.job;
      JobState& j = r_.jobs[static_cast<std::size_t>(job)];
      interrupt(job, k);  // if it ran on, degraded
      const auto slot = std::find(j.slots.begin(), j.slots.end(), n);
      CLUSTERSIM_CHECK(slot != j.slots.end(), "a serving node has a slot");
      empty_slot(j, slot, k.name);
      missing_.insert(static_cast<std::size_t>(job));
      leave_service(n, kFenced);
      fill_from_pool(job);
    }
    if (!cut.empty()) update_storage();
    if (returned) nodes_returned();
  }

  void on_burned_in(sim::Engine&, std::uint64_t arg) {
    const auto n = static_cast<std::int64_t>(arg);
    Node& node = nodes_[static_cast<std::size_t>(n)];
    r_.burn_in_node_s += burn_in_;
    for (const auto& [t, c] : node.caught) ++r_.burn_in_failures[classes_[c].name];
    node.caught.clear();
    record("burned_in", "", -1, n, -1);
    to_pool(n);
    nodes_returned();
  }

  /// Nodes joined the free pool: jobs missing nodes first, then the queue.
  void nodes_returned() {
    serve_waiting();
    schedule_queue();
    update_storage();
  }

  void schedule_done(JobState& j, std::int64_t index) {
    if (!std::isfinite(j.work)) return;
    j.done_at = std::max(j.run_start + failure_free_duration(j), engine_.now().seconds());
    // A finish past the end of the run never happens in it (and may lie beyond the engine's
    // clock: 292 years).
    j.done_event = j.done_at < end_ ? engine_.schedule_at(sim::Time::from_seconds(j.done_at), done_id_,
                                                          static_cast<std::uint64_t>(index))
                                    : sim::EventHandle{};
  }

  /// Completed checkpoint cycles of a running job at `now`.
  double committed_cycles(const JobState& j, double now) const {
    if (!std::isfinite(j.tau)) return 0.0;
    const double cycle = j.tau + j.delta;
    double k = std::floor((now - j.run_start) / cycle);
    // An asynchronous checkpoint counts once its background write has finished.
    if (in_.checkpoint.async && k >= 1.0 && now < j.run_start + k * cycle + j.write) k -= 1.0;
    return k;
  }

  /// Time job j has spent blocked writing checkpoints from its (re)start to `t`: its cycles
  /// of tau training then delta writing, counted as they happen (a mean share delta /
  /// (tau + delta) of every running second charged writes that never took place: a horizon
  /// shorter than the interval saw checkpoint hours and no checkpoint).
  static double blocked_since_start(const JobState& j, double t) {
    const double cycle = j.tau + j.delta;
    const double x = std::max(0.0, t - j.run_start);
    const double k = std::floor(x / cycle);
    return k * j.delta + std::clamp(x - k * cycle - j.tau, 0.0, j.delta);
  }

  /// Charges the throughput job j loses running degraded for `training` seconds (its
  /// training, not its blocked writes) to the elements down, by their own losses.
  void charge_degraded(JobState& j, double training) const {
    if (!(j.degrade < 1.0)) return;
    const double lost = training * j.rate / j.degrade * (1.0 - j.degrade) * static_cast<double>(j.p.gpus) / 3600.0;
    if (j.degraded_by.size() > kExactDegraded) {  // by class, from the running sums
      double weights = 0.0;
      for (const double w : j.degraded_loss) weights += w;
      for (std::size_t c = 0; c < j.degraded_loss.size() && weights > 0.0; ++c) {
        if (j.degraded_loss[c] > 0.0) j.lost_gpu_hours[classes_[c].name] += lost * j.degraded_loss[c] / weights;
      }
      return;
    }
    double weights = 0.0;
    for (const auto& [key, f] : j.degraded_by) weights += 1.0 - f;
    for (const auto& [key, f] : j.degraded_by) {
      if (weights > 0.0) j.lost_gpu_hours[classes_[key.first].name] += lost * (1.0 - f) / weights;
    }
  }

  /// Up to this many elements down, a job's degradation is summed afresh at each event;
  /// past it, from running sums (degraded_product, degraded_loss): every event of a fabric
  /// with thousands of cables down walked them all, three times (a run at 1 failure per
  /// link-day took 39 s, at 10 some 19 minutes).
  static constexpr std::size_t kExactDegraded = 32;

  /// Job j routes around element (c, index), which costs it factor f of its throughput.
  void add_degraded(JobState& j, std::size_t c, std::int64_t index, double f) {
    if (j.degraded_loss.size() < classes_.size()) j.degraded_loss.resize(classes_.size(), 0.0);
    const auto [it, fresh] = j.degraded_by.try_emplace({c, index}, f);
    if (!fresh) {  // down again before it was back: its new factor replaces the old
      j.degraded_product /= it->second;
      j.degraded_loss[c] -= 1.0 - it->second;
      it->second = f;
    }
    j.degraded_product *= f;
    j.degraded_loss[c] += 1.0 - f;
  }

  /// Element (c, index) is back; false if job j did not route around it.
  bool remove_degraded(JobState& j, std::size_t c, std::int64_t index) {
    const auto it = j.degraded_by.find({c, index});
    if (it == j.degraded_by.end()) return false;
    j.degraded_product /= it->second;
    j.degraded_loss[c] -= 1.0 - it->second;
    j.degraded_by.erase(it);
    if (j.degraded_by.empty()) {  // no drift left behind
      j.degraded_product = 1.0;
      std::fill(j.degraded_loss.begin(), j.degraded_loss.end(), 0.0);
    }
    return true;
  }

  /// Adds the running time since the last call to job j's integrals.
  void account(JobState& j, double now) const {
    if (j.running && now > j.acc_since) {
      const double dt = now - j.acc_since;
      j.running_s += dt;
      j.busy_gpu_s += dt * j.rate * static_cast<double>(j.p.gpus);
      j.blocking_s_integral += dt * j.delta;
      j.slowdown_integral += dt * (j.write_alone > 0.0 ? j.write / j.write_alone : 1.0);
      // Running shrunk, on share < 1 of its replicas, loses the missing ones' (1 - share) of
      // the full throughput, charged to the cause of the last node it lost.
      const double share = j.degrade > 0.0 ? j.rate / j.degrade : 1.0;
      // Running time goes in cycles of tau training and delta blocked writing, on the
      // replicas it runs.
      double blocked = 0.0;
      if (std::isfinite(j.tau) && j.tau + j.delta > 0.0) {
        blocked = blocked_since_start(j, now) - blocked_since_start(j, j.acc_since);
        j.checkpoint_gpu_s += blocked * std::min(1.0, share) * static_cast<double>(j.p.gpus);
      }
      if (share < 1.0) {
        j.lost_gpu_hours[j.shrunk_by.empty() ? std::string("shrink") : j.shrunk_by] += dt * (1.0 - share) * static_cast<double>(j.p.gpus) / 3600.0;
      }
      // Running degraded loses (1 - degrade) of the throughput it has while it trains (its
      // blocked writes are checkpoint time whole: charging them too counted a degraded job's
      // writing seconds 1 + share (1 - degrade) times), shared among the elements down by
      // their own losses.
      charge_degraded(j, dt - blocked);
    }
    j.acc_since = now;
  }

  /// Changes a running job's checkpoint write time from now on, in closed form: the cycles
  /// completed so far are committed, the cycle in progress continues (a write under way
  /// finishes its remaining bytes at the new speed). The place where a change of the job's
  /// throughput (rate) would go too.
  void rebase(JobState& j, std::int64_t index, double write) {
    const double now = engine_.now().seconds();
    account(j, now);
    const double delta = in_.checkpoint.async ? j.delta : write;
    if (std::isfinite(j.tau)) {
      const double cycle = j.tau + j.delta;
      const double k = std::floor((now - j.run_start) / cycle);
      const double phase = now - j.run_start - k * cycle;
      // An asynchronous cycle whose background write still runs is not committed yet: it
      // stays in the new phase (committed_cycles), to be committed when its write ends.
      const double committed = committed_cycles(j, now);
      const double keep = (k - committed) * cycle;
      j.committed = std::min(j.work, j.committed + committed * j.tau * j.rate);
      if (phase < j.tau || j.delta <= 0.0) {
        j.run_start = now - phase - keep;
      } else {
        const double done = (phase - j.tau) / j.delta;  // share of the blocking part behind
        j.run_start = now + (1.0 - done) * delta - (j.tau + delta) - keep;
      }
    }
    j.write = write;
    j.delta = delta;
    engine_.cancel(j.done_event);
    j.done_event = {};
    schedule_done(j, index);
  }

  /// The storage mean field over the running jobs (see the header): solves
  /// w_j = w0_j (1 + sum_{k != j} d_k) and rebases the jobs whose write time changed.
  void update_storage() {
    writers_.clear();
    for (const std::size_t i : running_) {
      const JobState& j = r_.jobs[i];
      if (j.running && std::isfinite(j.tau) && j.write_alone > 0.0) writers_.push_back(i);
    }
    const auto duty = [&](const JobState& j, double w) {
      const double delta = in_.checkpoint.async ? j.delta_alone : w;
      return std::min(1.0, w / (j.tau + delta));
    };
    w_.resize(writers_.size());
    for (std::size_t a = 0; a < writers_.size(); ++a) w_[a] = r_.jobs[writers_[a]].write_alone;
    if (writers_.size() > 1) {
      for (int iter = 0; iter < 10'000; ++iter) {
        double total = 0.0;
        for (std::size_t a = 0; a < writers_.size(); ++a) total += duty(r_.jobs[writers_[a]], w_[a]);
        double change = 0.0;
        for (std::size_t a = 0; a < writers_.size(); ++a) {
          const JobState& j = r_.jobs[writers_[a]];
          const double next = j.write_alone * (1.0 + total - duty(j, w_[a]));
          change = std::max(change, std::abs(next - w_[a]) / w_[a]);
          w_[a] = next;
        }
        if (change < 1e-13) break;
      }
    }
    for (std::size_t a = 0; a < writers_.size(); ++a) {
      JobState& j = r_.jobs[writers_[a]];
      if (std::abs(w_[a] - j.write) > 1e-12 * j.write_alone) rebase(j, static_cast<std::int64_t>(writers_[a]), w_[a]);
    }
  }

  /// Job j runs at `degrade` of its throughput from now (network elements down or back).
  /// The work of the checkpoint cycle in progress is counted at the new rate: an error of
  /// at most one checkpoint interval times the change.
  void set_degrade(std::int64_t index, double degrade) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    if (degrade == j.degrade) return;
    const double now = engine_.now().seconds();
    if (!j.running) {  // takes effect at the restart (can_restart sets the rate)
      j.degrade = degrade;
      return;
    }
    account(j, now);
    const double k = committed_cycles(j, now);
    if (std::isfinite(j.tau)) {
      j.committed = std::min(j.work, j.committed + k * j.tau * j.rate);
      j.run_start += k * (j.tau + j.delta);
    }
    j.rate = j.rate / j.degrade * degrade;
    j.degrade = degrade;
    if (std::isfinite(j.work)) {
      engine_.cancel(j.done_event);
      j.done_event = {};
      schedule_done(j, index);
    }
  }

  void update_degrade(std::int64_t index) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    if (j.degraded_by.size() > kExactDegraded) {
      set_degrade(index, j.degraded_product);
      return;
    }
    double d = 1.0;
    for (const auto& [key, f] : j.degraded_by) d *= f;
    j.degraded_product = d;  // afresh, its drift dropped
    set_degrade(index, d);
  }

  /// Whether job j's traffic can cross unit `index` of network class k (on a Clos fabric, a
  /// switch or a cable only serves some jobs; any element of another fabric serves all).
  [[nodiscard]] bool crosses(const JobState& j, const Klass& k, std::int64_t index) const {
    if (!in_.scope) return true;
    if (k.per == Per::switch_) return in_.scope->crosses(j.slots, index);
    if (k.per == Per::link) return in_.scope->crosses_cable(j.slots, index);
    return true;
  }

  /// The degradation of job j for unit `index` of network class k, if the fabric routes
  /// around it (0: it cuts the job off).
  [[nodiscard]] double degradation(const JobState& j, const Klass& k, std::int64_t index) const {
    // A router the job's own NICs plug into cuts it off, whatever its class says (a torus or
    // dragonfly router class is sampled among the routers the job's traffic passes through).
    if (k.per == Per::switch_ && in_.scope && in_.scope->holds_endpoint(j.slots, index)) return 0.0;
    for (const Degradation& d : j.p.degradations) {
      if (d.is_switch == (k.per == Per::switch_) && index >= d.first && index < d.first + d.count) return d.factor;
    }
    return 0.0;
  }

  /// Where a running job stands when it stops: what it trained since its last committed
  /// checkpoint (s), and how far a blocking write under way is (s; -1 when none).
  struct Stop {
    double trained = 0.0;
    double since = 0.0;  // seconds since its last committed checkpoint, writes included
    double in_write = -1.0;
  };

  /// Accounts running job j up to `now` and commits its completed checkpoints; what it
  /// trained since the last one is for the caller to lose or commit.
  Stop halt(JobState& j, double now) {
    account(j, now);
    const double k_done = committed_cycles(j, now);
    const double cycle = std::isfinite(j.tau) ? j.tau + j.delta : 0.0;
    Stop s;
    s.since = now - j.run_start - k_done * cycle;
    // What the job trained since its last committed checkpoint: `since` less its blocking
    // writes (one under way; with asynchronous checkpoints, the snapshot of the cycle whose
    // background write had not finished), which account() has charged as checkpoint time
    // already (charging them as lost work too had put ETTR, lost and checkpoint GPU-hours
    // at 107% of the horizon's when writes took longer than the interval).
    s.trained = s.since;
    if (std::isfinite(j.tau) && cycle > 0.0) {
      const double whole = std::floor(s.since / cycle);
      const double rest = s.since - whole * cycle;
      s.trained = whole * j.tau + std::min(rest, j.tau);
      if (rest > j.tau && !in_.checkpoint.async) s.in_write = rest - j.tau;
    }
    j.committed = std::min(j.work, j.committed + k_done * (std::isfinite(j.tau) ? j.tau : 0.0) * j.rate);
    return s;
  }

  /// An announced stop: the job writes a last checkpoint and stops, losing no work: all it
  /// trained since its last committed checkpoint is committed (with asynchronous checkpoints
  /// that can be a whole interval more, whose background write was under way). Its nodes
  /// wait for that write, returned: the rest of a blocking write under way, else a whole
  /// write (asynchronous too: the copy must reach storage before the nodes go; it replaces a
  /// background write still under way, which is not waited for as well). Nothing has to be
  /// detected or diagnosed: the stop is known.
  double checkpoint_and_stop(JobState& j, const Stop& s) {
    j.committed = std::min(j.work, j.committed + s.trained * j.rate);
    if (s.in_write >= 0.0) return std::max(0.0, j.delta - s.in_write);
    return s.since > 0.0 ? j.write : 0.0;
  }

  /// Whether running job j, shrunk, has more whole replicas now and growing back onto them
  /// saves more time than its stop costs (a write, the mean restart and a read): the time
  /// it has left to run (to its failure-free finish or the horizon) shrinks by the share it
  /// gains. A job near its end, or regaining 1 of many replicas for a short while, stays.
  bool regrow_pays(JobState& j) {
    if (!(j.degrade > 0.0)) return false;
    const double share = j.rate / j.degrade;
    const double whole = whole_replicas(j);
    if (!(whole > share * (1.0 + 1e-9))) return false;
    const double left = std::min(j.done_at, end_) - engine_.now().seconds();
    const double cost = j.write + (in_.failures ? in_.failures->repair.restart.mean.seconds() : 0.0) + j.read;
    return left * (1.0 - share / whole) > cost;
  }

  /// A shrunk job (scheduler.shrink) running on fewer replicas than its nodes now allow
  /// grows back: it checkpoints and stops as for maintenance (no work lost), then restarts
  /// (restart + checkpoint read) on every whole replica, as an elastic launcher re-forms its
  /// group when nodes join, when that pays (regrow_pays()). A failure during its last write
  /// joins the stop, as during maintenance's. The stop is not an interruption (no failure
  /// caused it); its downtime (the write, the restart, the read) counts in lost_gpu_hours
  /// under the cause of the shrink. Without it the job
  /// only grew at its next failure, when, without spares, another node was in repair: it
  /// stayed shrunk to the end (4 of 4 replicas lost one for good, ETTR 77% against 94% for
  /// waiting for the repair).
  void regrow(std::int64_t index) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    const double now = engine_.now().seconds();
    const Stop stop = halt(j, now);
    const double final_write = checkpoint_and_stop(j, stop);
    engine_.cancel(j.done_event);
    j.done_event = {};
    j.done_at = std::numeric_limits<double>::infinity();
    set_running(j, index, false);
    stop_own_units(j, classes_.size());  // paused while down, none redrawn
    j.down_since = now;
    j.known_at = now;
    j.down_cause = j.shrunk_by.empty() ? std::string("shrink") : j.shrunk_by;
    record("regrow", j.down_cause, index, -1, -1);
    after(final_write, ready_id_, static_cast<std::uint64_t>(index));
  }

  void interrupt(std::int64_t index, const Klass& k) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    if (j.finished) return;
    if (!j.running) {
      // Down already. Before its restart begins (detection, diagnosis, waiting for nodes) the
      // failure joins the one being handled. During the restart (relaunch, checkpoint read)
      // it aborts it: the job is interrupted again and goes through detection and restart
      // once more. Ignored, failures in the restart cost nothing: at 98,304 GPUs 117 of 633
      // failures fell in restarts, ~1.2 days of a 15-day run.
      if (j.restarting && !k.planned) {
        ++j.restart_gen;
        j.restarting = false;
        // The downtime so far is the first cause's; what follows is this one's.
        const double now = engine_.now().seconds();
        j.lost_gpu_hours[j.down_cause] += (now - j.down_since) * static_cast<double>(j.p.gpus) / 3600.0;
        go_down(j, index, k, now);
      }
      return;
    }
    const double now = engine_.now().seconds();
    const Stop stop = halt(j, now);
    double lost = stop.trained;
    // Announced (maintenance): the job writes a last checkpoint and stops, losing no work
    // (checkpoint_and_stop()). (A failure during that write joins the stop, as one during
    // detection joins a failure.)
    double final_write = 0.0;
    if (k.planned) {
      final_write = checkpoint_and_stop(j, stop);
      lost = 0.0;
    }
    // The work lost is what the job trained since its last checkpoint, at its rate: the rest
    // of that time (1 - rate, shrunk or degraded) is charged as it runs (account()).
    j.lost_gpu_hours[k.name] += lost * j.rate * static_cast<double>(j.p.gpus) / 3600.0;
    engine_.cancel(j.done_event);
    j.done_event = {};
    j.done_at = std::numeric_limits<double>::infinity();
    set_running(j, index, false);
    go_down(j, index, k, now, final_write);
  }

  /// Counts an interruption of job `index` by `k` at `now` and starts its detection and
  /// diagnosis (the restart follows, on_ready). An announced stop (k.planned) is neither
  /// detected nor diagnosed: it waits `final_write` s for its last checkpoint instead.
  void go_down(JobState& j, std::int64_t index, const Klass& k, double now, double final_write = 0.0) {
    CLUSTERSIM_CHECK(&k >= classes_.data() && &k < classes_.data() + classes_.size(), "a class of the model");
    stop_own_units(j, static_cast<std::size_t>(&k - classes_.data()));
    j.down_since = now;
    j.down_cause = k.name;
    ++j.interruptions;
    ++j.by_cause[k.name];
    record("interruption", k.name, index, -1, -1);
    if (k.planned) {
      j.known_at = now;
      after(final_write, ready_id_, static_cast<std::uint64_t>(index));
      return;
    }
    const RepairConfig& rc = in_.failures->repair;
    const double detect = draw_duration(rc.detect, stop_rng_);  // drawn in this order, one statement each
    const double diagnose = draw_duration(rc.diagnose, stop_rng_);
    j.known_at = now + detect + diagnose;
    after(detect + diagnose, ready_id_, static_cast<std::uint64_t>(index));
  }

  /// Sets j.running and keeps running_ in step.
  void set_running(JobState& j, std::int64_t index, bool running) {
    j.running = running;
    if (running) {
      running_.insert(static_cast<std::size_t>(index));
    } else {
      running_.erase(static_cast<std::size_t>(index));
    }
  }

  /// Gives job `index` free nodes for its missing slots: each slot's home node (where the
  /// job started) if it is free, else (unless `home_only`) the node free the longest.
  void fill_from_pool(std::int64_t index, bool home_only = false) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    // Over the empty slots only (a scan of every slot at every failure cost a 2,048-node job
    // a third of its long run).
    for (std::size_t k = 0; k < j.empty.size() && !pool_.empty();) {
      const std::int64_t s = j.empty[k];
      const std::int64_t h = j.home[static_cast<std::size_t>(s)];
      // Its home node, unless another job has served on it since (that job's home now).
      const auto home = h >= 0 && nodes_[static_cast<std::size_t>(h)].home_job == index
                            ? std::find(pool_.begin(), pool_.end(), h)
                            : pool_.end();
      if (home == pool_.end()) {
        ++k;
        continue;
      }
      pool_.erase(home);
      enter_service(h, index, s);
      j.empty.erase(j.empty.begin() + static_cast<std::ptrdiff_t>(k));
      --j.missing;
    }
    if (!home_only) {
      while (!j.empty.empty() && !pool_.empty()) {
        const std::int64_t n = pool_.front();
        pool_.erase(pool_.begin());
        enter_service(n, index, j.empty.front());
        j.empty.erase(j.empty.begin());
        --j.missing;
      }
    }
    if (j.missing == 0) missing_.erase(static_cast<std::size_t>(index));
  }

  /// Slot `slot` of job j lost its node.
  void empty_slot(JobState& j, std::vector<std::int64_t>::iterator slot, const std::string& cause) {
    *slot = -1;
    ++j.missing;
    j.missing_by = cause;
    const auto s = static_cast<std::int64_t>(slot - j.slots.begin());
    j.empty.insert(std::lower_bound(j.empty.begin(), j.empty.end(), s), s);
  }

  void begin_restart(JobState& j, std::int64_t index) {
    if (j.waiting) resume_job(j);
    // The nodes that joined it while it was down (enter_service), unless resume_job started
    // them or they left it since.
    for (const std::int64_t n : j.held) {
      Node& node = nodes_[static_cast<std::size_t>(n)];
      if (node.job != index || !node.paused || !std::isnan(node.stopped_since)) continue;
      node.paused = false;
      start_units(n, engine_.now().seconds());
    }
    j.held.clear();
    start_own_units(j, index);  // the relaunched software may fail again (and abort the restart)
    j.waiting = false;
    j.restarting = true;
    after(draw_duration(in_.failures->repair.restart, stop_rng_) + j.read, restarted_id_,
          static_cast<std::uint64_t>(index) | static_cast<std::uint64_t>(j.restart_gen) << 32);
  }

  // ---- the queue ---------------------------------------------------------------------

  void submit(std::int64_t index) {
    r_.jobs[static_cast<std::size_t>(index)].queued = true;
    queue_.push_back(index);
  }

  void on_submit(sim::Engine&, std::uint64_t arg) {
    submit(static_cast<std::int64_t>(arg));
    schedule_queue();
    update_storage();
  }

  /// Free nodes the queue may use: those beyond the hot spares.
  [[nodiscard]] std::int64_t queue_nodes() const {
    return static_cast<std::int64_t>(pool_.size()) - in_.scheduler.spare_nodes;
  }

  /// When a started job is expected to free its nodes, failure-free.
  [[nodiscard]] double expected_end(const JobState& j, double now) const {
    if (j.running) return j.done_at;
    return now + in_.failures->repair.restart.mean.seconds() + j.read + failure_free_duration(j);
  }

  /// Starts what the policy allows (see the header); call update_storage() after.
  void schedule_queue() {
    if (queue_.empty()) return;
    std::int64_t free = queue_nodes();
    while (!queue_.empty() && r_.jobs[static_cast<std::size_t>(queue_.front())].p.nodes <= free) {
      free -= r_.jobs[static_cast<std::size_t>(queue_.front())].p.nodes;
      start_job(queue_.front());
      queue_.pop_front();
    }
    if (queue_.size() < 2 || in_.scheduler.policy != QueuePolicy::backfill) return;
    // EASY: the head's reservation (shadow time) and the nodes it leaves over (extra).
    const double now = engine_.now().seconds();
    const std::int64_t need = r_.jobs[static_cast<std::size_t>(queue_.front())].p.nodes;
    ends_.clear();
    for (const std::size_t i : active_) {
      const JobState& j = r_.jobs[i];
      const auto held = static_cast<std::int64_t>(std::count_if(j.slots.begin(), j.slots.end(),
                                                                [](std::int64_t n) { return n >= 0; }));
      // A job missing nodes takes its own back from repair: they free with it.
      ends_.emplace_back(expected_end(j, now), held + j.missing);
    }
    // A node in repair comes back the mean replace time after its repair started (once its
    // failure was known: a scheduler knows the repair is under way, not when it ends); one
    // whose job waits for it goes back to that job (counted above). Without them a head job that needs the node had no reservation, and
    // any later job could start before it, however long (EASY's guarantee broken).
    const double back_after = in_.failures ? in_.failures->repair.replace.mean.seconds() : 0.0;
    for (const Node& node : nodes_) {
      if (node.job != kInRepair || node.failure_times.empty()) continue;
      const bool to_its_job = node.home_job >= 0 && active_.count(static_cast<std::size_t>(node.home_job)) > 0 &&
                              r_.jobs[static_cast<std::size_t>(node.home_job)].missing > 0;
      if (!to_its_job) ends_.emplace_back(std::max(now, node.repair_from + back_after), 1);
    }
    std::sort(ends_.begin(), ends_.end());
    double shadow = std::numeric_limits<double>::infinity();
    std::int64_t extra = std::numeric_limits<std::int64_t>::max();  // the head never fits: nothing to delay
    std::int64_t freed = free;
    for (const auto& [at, held] : ends_) {
      if (!std::isfinite(at)) break;
      freed += held;
      if (freed >= need) {
        shadow = at;
        extra = freed - need;
        break;
      }
    }
    for (std::size_t q = 1; q < queue_.size() && free > 0;) {  // every job needs a node
      const std::int64_t index = queue_[q];
      const JobState& j = r_.jobs[static_cast<std::size_t>(index)];
      const bool ends_before = now + failure_free_duration(j) <= shadow;
      if (j.p.nodes <= free && (ends_before || j.p.nodes <= extra)) {
        if (!ends_before) extra -= j.p.nodes;
        free -= j.p.nodes;
        start_job(index);
        queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(q));
      } else {
        ++q;
      }
    }
  }

  /// The nodes a starting job takes (see Placement in the header), removed from the pool.
  std::vector<std::int64_t> place(JobState& j) {
    const std::int64_t n = j.p.nodes;
    free_.assign(nodes_.size(), 0);
    for (std::int64_t p : pool_) free_[static_cast<std::size_t>(p)] = 1;
    const auto all_free = [&](std::int64_t s) {
      for (std::int64_t i = s; i < s + n; ++i) {
        if (i >= static_cast<std::int64_t>(free_.size()) || !free_[static_cast<std::size_t>(i)]) return false;
      }
      return true;
    };
    std::int64_t start = -1;
    if (j.p.first_node >= 0 && all_free(j.p.first_node)) start = j.p.first_node;
    if (start < 0) {
      const std::int64_t b = in_.block_nodes;
      const auto& blocks = in_.node_blocks;
      // Blocks the range [s, s + n) touches beyond the fewest n nodes can (for one n, the
      // order is the same as of the blocks touched).
      const auto extra_blocks = [&](std::int64_t s) -> std::int64_t {
        if (!blocks.empty() && s + n <= static_cast<std::int64_t>(blocks.size())) {
          return blocks[static_cast<std::size_t>(s + n - 1)].second - blocks[static_cast<std::size_t>(s)].first + 1;
        }
        return b > 0 ? ((s + n - 1) / b - s / b + 1) - (n + b - 1) / b : 0;
      };
      std::tuple<std::int64_t, std::int64_t, std::int64_t> best{std::numeric_limits<std::int64_t>::max(), 0, 0};
      const auto consider = [&](std::int64_t s, std::int64_t run) {
        const std::tuple<std::int64_t, std::int64_t, std::int64_t> score{extra_blocks(s), run, s};
        if (start < 0 || score < best) {
          best = score;
          start = s;
        }
      };
      // Only the fabric's nodes make a contiguous range: a spare or a replacement (ids from
      // in_.nodes on) has no place in it, so a range through one is not contiguous on the
      // fabric, and a job holding one counts as crossing every switch (FabricScope).
      const auto size = std::min(static_cast<std::int64_t>(free_.size()), in_.nodes);
      for (std::int64_t a = 0; a < size;) {
        if (!free_[static_cast<std::size_t>(a)]) {
          ++a;
          continue;
        }
        std::int64_t e = a;
        while (e < size && free_[static_cast<std::size_t>(e)]) ++e;
        const std::int64_t run = e - a;
        if (run >= n) {
          consider(a, run);
          consider(e - n, run);
          if (!block_starts_.empty()) {
            // The nodes that begin a block (their first block is not the node before's).
            for (auto it = std::lower_bound(block_starts_.begin(), block_starts_.end(), a);
                 it != block_starts_.end() && *it + n <= e; ++it) {
              consider(*it, run);
            }
          } else if (b > 0) {
            for (std::int64_t s = (a + b - 1) / b * b; s + n <= e; s += b) consider(s, run);
          }
        }
        a = e;
      }
    }
    std::vector<std::int64_t> taken;
    if (start >= 0) {
      for (std::int64_t i = start; i < start + n; ++i) taken.push_back(i);
    } else {  // fragmented: the lowest-numbered free nodes
      ++j.fragmented_starts;
      for (std::size_t i = 0; i < free_.size() && static_cast<std::int64_t>(taken.size()) < n; ++i) {
        if (free_[i]) taken.push_back(static_cast<std::int64_t>(i));
      }
    }
    for (std::int64_t t : taken) free_[static_cast<std::size_t>(t)] = 2;
    pool_.erase(std::remove_if(pool_.begin(), pool_.end(), [&](std::int64_t p) { return free_[static_cast<std::size_t>(p)] == 2; }),
                pool_.end());
    return taken;
  }

  void start_job(std::int64_t index) {
    JobState& j = r_.jobs[static_cast<std::size_t>(index)];
    const double now = engine_.now().seconds();
    const std::vector<std::int64_t> nodes = place(j);
    CLUSTERSIM_CHECK(static_cast<std::int64_t>(nodes.size()) == j.p.nodes, "a started job has all its nodes");
    j.queued = false;
    j.started = true;
    j.start_time = now;
    j.slots.assign(static_cast<std::size_t>(j.p.nodes), -1);
    j.empty.clear();
    set_running(j, index, true);  // before its nodes enter service: they run it from now
    for (std::int64_t s = 0; s < j.p.nodes; ++s) enter_service(nodes[static_cast<std::size_t>(s)], index, s);
    j.home = nodes;
    active_.insert(static_cast<std::size_t>(index));
    j.rate = j.degrade;
    j.run_start = now;
    j.acc_since = now;
    record("start", "", index, nodes.front(), -1);
    schedule_done(j, index);
    // The job's own failure processes (software) run from its start.
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].per == Per::job) schedule_unit(c, index, 0, 1.0, now);
    }
  }

  // ---- failures and repairs ----------------------------------------------------------

  void on_failure(sim::Engine&, std::uint64_t arg) {
    const auto c = static_cast<std::size_t>(arg >> 56);
    const auto gen = static_cast<std::uint32_t>((arg >> 32) & 0xFFFFFFu);
    const auto index = static_cast<std::int64_t>(arg & 0xFFFFFFFFu);
    const Klass& k = classes_[c];
    const double now = engine_.now().seconds();
    if (k.per == Per::gpu || k.per == Per::node) {
      const std::int64_t n = k.per == Per::gpu ? index / gpn_ : index;
      Node& node = nodes_[static_cast<std::size_t>(n)];
      if ((node.gen & 0xFFFFFFu) != gen || node.job < 0) return;  // the node left service since
      const std::int64_t job = node.job;
      ++r_.failures_by_cause[k.name];
      if (k.per == Per::gpu) ++r_.gpu_failures[static_cast<std::size_t>(index)];
      record("failure", k.name, job, n, k.per == Per::gpu ? index : -1);
      // The failed unit starts a new life: at once if it keeps running, after its repair if not.
      remaining_[c][static_cast<std::size_t>(index)] = kFresh;
      const double mult = unit_mult(c, node, index);
      if (!k.restarts) {
        resume_unit(c, index, gen, mult, now);
        return;
      }
      if (k.hardware) {
        // Only the failures the retirement window can still count, and the last (the repair's
        // start): a node that failed without end grew the list without end (50 MB/s under a
        // failure storm).
        const double keep_from = in_.scheduler.retire_after > 0 ? now - in_.scheduler.retire_window.seconds() : now;
        std::erase_if(node.failure_times, [&](double t) { return t < keep_from; });
        node.failure_times.push_back(now);
        JobState& j = r_.jobs[static_cast<std::size_t>(job)];
        const auto slot = std::find(j.slots.begin(), j.slots.end(), n);
        CLUSTERSIM_CHECK(slot != j.slots.end(), "a serving node has a slot");
        empty_slot(j, slot, k.name);
        missing_.insert(static_cast<std::size_t>(job));
        leave_service(n, kInRepair);
      } else {
        resume_unit(c, index, gen, mult, now);
      }
      interrupt(job, k);
      // A spare takes the node's place once the job is down: its clocks wait for the
      // restart (enter_service).
      if (k.hardware) fill_from_pool(job);
      // The node's repair starts once the failure is known: detected (the job stopped) and
      // diagnosed (the node named), or at once if the job was down already and its stop's
      // cause is known (waiting for nodes, or stopping for maintenance or to grow back:
      // the failure joins that stop, as one during detection joins a failure). Repairs that
      // started at the failure hid the detection and diagnosis inside the repair time: a job
      // without a spare waited max(detect + diagnose, replace) rather than their sum. (A switch or cable the
      // fabric reports down at once; its repair starts at the failure.)
      if (k.hardware) {
        const JobState& j = r_.jobs[static_cast<std::size_t>(job)];
        const double from = std::max(now, j.known_at);
        nodes_[static_cast<std::size_t>(n)].repair_from = from;
        after(from - now + draw_duration(in_.failures->repair.replace, repair_rng_), repaired_id_,
              static_cast<std::uint64_t>(n));
      }
      update_storage();
      return;
    }
    if (k.per == Per::job && r_.jobs[static_cast<std::size_t>(index)].finished) return;  // the job is gone
    // Stale: the job has waited for nodes since (pause_job), its clock stopped.
    if (k.per == Per::job && gen != (r_.jobs[static_cast<std::size_t>(index)].unit_gen & 0xFFFFFFu)) return;
    ++r_.failures_by_cause[k.name];
    record("failure", k.name, k.per == Per::job ? index : -1, -1, -1,
           k.per == Per::switch_ || k.per == Per::link ? index : -1);
    if (k.restarts) {
      if (k.per == Per::job) {
        interrupt(index, k);
      } else {
        for (std::size_t j = 0; j < r_.jobs.size(); ++j) {
          if (r_.jobs[j].p.nodes > 1 && crosses(r_.jobs[j], k, index)) interrupt(static_cast<std::int64_t>(j), k);
        }
      }
      update_storage();
    }
    if (k.reroutes) {
      // Jobs the fabric can route around the element run degraded until it is back; it
      // cuts the others off (an edge switch: a leaf, a router), and they restart.
      for (std::size_t j = 0; j < r_.jobs.size(); ++j) {
        JobState& job = r_.jobs[j];
        if (job.p.nodes <= 1 || job.finished || !job.started || !crosses(job, k, index)) continue;
        const double f = degradation(job, k, index);
        if (f <= 0.0) {
          interrupt(static_cast<std::int64_t>(j), k);
          continue;
        }
        account(job, now);
        add_degraded(job, c, index, f);
        update_degrade(static_cast<std::int64_t>(j));
      }
      // Down until replaced (hardware) or restarted.
      double down = 0.0;
      if (k.hardware) {
        down = draw_duration(in_.failures->repair.replace, repair_rng_);
      } else {  // drawn in this order, one statement each (an operand order is the compiler's)
        down = draw_duration(in_.failures->repair.detect, stop_rng_);
        down += draw_duration(in_.failures->repair.diagnose, stop_rng_);
        down += draw_duration(in_.failures->repair.restart, stop_rng_);
      }
      fence(k, index, +1);
      after(down, element_back_id_, (static_cast<std::uint64_t>(c) << 32) | static_cast<std::uint64_t>(index));
      return;
    }
    if (k.hardware && k.per != Per::job) {
      fence(k, index, +1);
      after(draw_duration(in_.failures->repair.replace, repair_rng_), element_back_id_,
            (static_cast<std::uint64_t>(c) << 32) | static_cast<std::uint64_t>(index));
    } else if (k.per != Per::job || !k.restarts || gen == (r_.jobs[static_cast<std::size_t>(index)].unit_gen & 0xFFFFFFu)) {
      // A new life from now, but for a job's own failure that took it down (go_down drew its
      // next life, to run from the restart): one that joined a stop under way (an announced
      // stop's restart) must not end the job's clock.
      schedule_unit(c, index, 0, 1.0, now);
    }
  }

  void on_element_back(sim::Engine&, std::uint64_t arg) {
    const auto c = static_cast<std::size_t>(arg >> 32);
    const auto index = static_cast<std::int64_t>(arg & 0xFFFFFFFFu);
    record("back", classes_[c].name, -1, -1, -1, index);
    fence(classes_[c], index, -1);
    if (classes_[c].reroutes) {
      for (std::size_t j = 0; j < r_.jobs.size(); ++j) {
        JobState& job = r_.jobs[j];
        if (job.degraded_by.count({c, index}) == 0) continue;
        account(job, engine_.now().seconds());
        remove_degraded(job, c, index);
        update_degrade(static_cast<std::int64_t>(j));
      }
    }
    schedule_unit(c, index, 0, 1.0, engine_.now().seconds());
  }

  void on_node_repaired(sim::Engine&, std::uint64_t arg) {
    const auto n = static_cast<std::int64_t>(arg);
    Node& node = nodes_[static_cast<std::size_t>(n)];
    const double now = engine_.now().seconds();
    const SchedulerConfig& sc = in_.scheduler;
    std::int64_t back = n;
    if (sc.retire_after > 0) {
      // "retire_after failures within retire_window": the window ends at the failure that
      // sent the node to repair, not at the repair's end (a window shorter than the repair
      // would otherwise never retire anything).
      const double window = sc.retire_window.seconds();
      const double latest = node.failure_times.empty() ? now : node.failure_times.back();
      const auto recent = std::count_if(node.failure_times.begin(), node.failure_times.end(),
                                        [&](double t) { return t >= latest - window; });
      if (recent >= sc.retire_after) {
        node.job = kRetired;
        // Each retired node is replaced by a new one, whose record is kept: failure rates that
        // retire the fleet many times over grew memory without end.
        if (++r_.retired > std::max<std::int64_t>(kMaxRetired, 10 * in_.nodes)) {
          throw sim::LimitError(fmt::format(
              "more than {} nodes retired in one replication (retire_after {} failures in {}): the failure rates "
              "replace the fleet of {} nodes many times over",
              std::max<std::int64_t>(kMaxRetired, 10 * in_.nodes), sc.retire_after, sim::format_time(sc.retire_window),
              in_.nodes));
        }
        record("retired", "", -1, n, -1);
        back = new_node();
        if (alpha_ > 0.0) check_multipliers(nodes_[static_cast<std::size_t>(back)]);  // its raw draw
      }
    }
    if (back == n) record("repaired", "", -1, n, -1);
    node_available(back);
  }

  /// Gives pool nodes to the jobs missing some, in job order, and restarts those that can.
  void serve_waiting() {
    if (missing_.empty()) return;
    // A snapshot: serving a job takes it out of missing_ (no job starts missing nodes here).
    // Each job first gets back its own nodes (so that a node that returns goes to the job it
    // left, not to another that would straddle the fabric), then any.
    const std::vector<std::size_t> missing(missing_.begin(), missing_.end());
    for (const std::size_t j : missing) {
      if (r_.jobs[j].missing > 0 && !r_.jobs[j].finished) fill_from_pool(static_cast<std::int64_t>(j), true);
    }
    for (const std::size_t j : missing) {
      JobState& job = r_.jobs[j];
      if (job.finished) continue;
      if (job.missing > 0) fill_from_pool(static_cast<std::int64_t>(j));
      if (job.waiting && can_restart(job)) {
        begin_restart(job, static_cast<std::int64_t>(j));
      } else if (job.running && in_.scheduler.shrink && regrow_pays(job)) {
        regrow(static_cast<std::int64_t>(j));  // shrunk, and a replica is whole again
      }
    }
  }

  /// Share of the job's data-parallel replicas whose nodes are all present.
  [[nodiscard]] double whole_replicas(const JobState& j) const {
    const std::int64_t dp = std::max<std::int64_t>(1, j.p.dp);
    if (j.p.nodes <= 0 || j.p.gpus % dp != 0 || j.p.gpus % j.p.nodes != 0) return j.missing == 0 ? 1.0 : 0.0;
    // Replica r holds GPUs r G/dp .. (r + 1) G/dp - 1, on the nodes those fall on: several
    // replicas share a node when one is smaller than a node (dp > nodes; before, a job
    // with such replicas never shrank), and a replica may span several.
    const std::int64_t gpn = j.p.gpus / j.p.nodes;
    const std::int64_t per = j.p.gpus / dp;
    std::int64_t whole = 0;
    for (std::int64_t r = 0; r < dp; ++r) {
      bool ok = true;
      for (std::int64_t s = r * per / gpn; s <= ((r + 1) * per - 1) / gpn; ++s) {
        ok = ok && j.slots[static_cast<std::size_t>(s)] >= 0;
      }
      whole += ok ? 1 : 0;
    }
    return static_cast<double>(whole) / static_cast<double>(dp);
  }

  /// Whether the job can restart now: all its nodes, or (shrinking) at least one replica.
  bool can_restart(JobState& j) {
    if (j.missing == 0) {
      j.rate = j.degrade;
      return true;
    }
    if (!in_.scheduler.shrink) return false;
    const double share = whole_replicas(j);
    if (share <= 0.0) return false;
    j.rate = share * j.degrade;
    j.shrunk_by = j.missing_by;  // what took its nodes, not what last stopped it
    return true;
  }

  void on_ready(sim::Engine&, std::uint64_t arg) {
    JobState& j = r_.jobs[arg];
    if (j.finished || j.running) return;
    if (!can_restart(j)) {
      j.waiting = true;
      pause_job(j);
      return;
    }
    begin_restart(j, static_cast<std::int64_t>(arg));
  }

  void on_restarted(sim::Engine&, std::uint64_t packed) {
    const std::uint64_t arg = packed & 0xFFFFFFFFu;
    JobState& j = r_.jobs[arg];
    if (static_cast<std::uint32_t>(packed >> 32) != j.restart_gen) return;  // aborted by a failure
    j.restarting = false;
    if (j.finished || j.running) return;
    if (!can_restart(j)) {  // a node failed during the restart
      j.waiting = true;
      pause_job(j);
      return;
    }
    const double now = engine_.now().seconds();
    j.lost_gpu_hours[j.down_cause] += (now - j.down_since) * static_cast<double>(j.p.gpus) / 3600.0;
    set_running(j, static_cast<std::int64_t>(arg), true);
    j.run_start = now;
    j.acc_since = now;
    j.write = j.write_alone;
    j.delta = j.delta_alone;
    record("restart", j.down_cause, static_cast<std::int64_t>(arg), -1, -1);
    schedule_done(j, static_cast<std::int64_t>(arg));
    update_storage();
  }

  /// The final checkpoint write of a job that finished at `done` which account() has not
  /// charged (s): training ends part way through a cycle and the last write follows it
  /// (failure_free_duration()), where account() charges writes at the cycles' ends only.
  /// Left out, time to train exceeded training, checkpoint and lost time by one write.
  static double final_write_left(const JobState& j, double done) {
    if (!(j.delta > 0.0)) return 0.0;
    if (!std::isfinite(j.tau)) return j.delta;
    const double cycle = j.tau + j.delta;
    const double x = std::max(0.0, done - j.run_start);
    const double rest = x - std::floor(x / cycle) * cycle;
    if (rest <= 1e-9 * cycle) return 0.0;  // ended with a whole cycle, its write charged
    return j.delta - std::clamp(rest - j.tau, 0.0, j.delta);
  }

  void on_done(sim::Engine& e, std::uint64_t arg) {
    JobState& j = r_.jobs[arg];
    account(j, e.now().seconds());
    const double share = j.degrade > 0.0 ? std::min(1.0, j.rate / j.degrade) : 1.0;
    const double final_write = final_write_left(j, e.now().seconds());
    j.checkpoint_gpu_s += final_write * share * static_cast<double>(j.p.gpus);
    charge_degraded(j, -final_write);  // account() took it for training
    j.finished = true;
    set_running(j, static_cast<std::int64_t>(arg), false);
    active_.erase(arg);
    missing_.erase(arg);
    j.committed = j.work;
    j.finished_at = e.now().seconds();
    last_done_ = std::max(last_done_, j.finished_at);
    record("finished", "", static_cast<std::int64_t>(arg), -1, -1);
    for (std::int64_t n : j.slots) {
      if (n < 0) continue;
      leave_service(n, kInPool);
      to_pool(n);  // a finished job's nodes are free: spares for the others, or for the queue
    }
    nodes_returned();
    if (--unfinished_ == 0 && in_.horizon_s <= 0.0) e.stop();
  }

 public:
  /// Training time that counts for job j at the end of the run: what it finished, what its
  /// checkpoints saved, and the training since its last checkpoint at the share a checkpoint
  /// (or the end of training) is expected to save before a failure takes it back:
  /// exp(-T / M), T the time until that save and M the job's MTBF (failures as a Poisson
  /// process at the job's rate, as the checkpoint interval assumes). A job no failure reaches
  /// keeps all of it; one whose interval outlasts its MTBF many times over keeps none (a
  /// 30-day interval under a 3-hour MTBF: counting every stretch between failures made it 19%
  /// productive, with a time to train projected from work no checkpoint would save); and one
  /// that barely fails keeps nearly all (counting none charged a long interval the training
  /// of the last one before the horizon, on a job that never failed: 98.3% for 12 h in 30 d).
  [[nodiscard]] double useful(const JobState& j, double end) const {
    if (j.finished) return j.work;
    if (!j.running) return j.committed;
    const Tail t = tail(j, end);
    return std::min(j.work, t.saved + t.counted);
  }
  /// The training since the last checkpoint at `end` that a failure is expected to take back
  /// after it, the share useful() does not count (seconds of training): lost, though past
  /// the horizon, so that training, lost and checkpoint time add up to the job's.
  [[nodiscard]] double unsaved_expected_lost(const JobState& j, double end) const {
    if (j.finished || !j.running) return 0.0;
    const Tail t = tail(j, end);
    return t.training - t.counted;
  }
  /// The checkpoint time the running cycle at `end` still owes, at the share useful() counts
  /// of its training: delta x (training since the last checkpoint) / tau while it trains, the
  /// rest of the write once the write has begun (the part written is in the elapsed time
  /// already); 0 when the job is not running or never checkpoints.
  [[nodiscard]] double checkpoint_owed_s(const JobState& j, double end) const {
    if (j.finished || !j.running || !std::isfinite(j.tau)) return 0.0;
    const double k = committed_cycles(j, end);
    const double cycle = j.tau + j.delta;
    double since = std::max(0.0, end - j.run_start - k * cycle);
    if (since > cycle) since -= cycle;  // asynchronous: the cycle after the one whose write runs
    since = std::min(since, cycle);
    return (since <= j.tau ? j.delta * since / j.tau : cycle - since) * tail(j, end).kept;
  }

 private:
  /// A running job at `end`: the work its checkpoints saved, its training since (both in
  /// seconds of training), the part of that training expected to be saved (`counted`), and
  /// the share expected saved of the cycle under way.
  struct Tail {
    double saved = 0.0;
    double training = 0.0;
    double counted = 0.0;
    double kept = 1.0;
  };
  [[nodiscard]] Tail tail(const JobState& j, double end) const {
    const double k = committed_cycles(j, end);
    const bool checkpoints = std::isfinite(j.tau);
    const double cycle = checkpoints ? j.tau + j.delta : 0.0;
    const double since = std::max(0.0, end - j.run_start - k * cycle);
    Tail t;
    t.saved = std::min(j.work, j.committed + k * (checkpoints ? j.tau : 0.0) * j.rate);
    // The training not saved yet, each part with the time until it is: the cycle under way,
    // saved at the end of its write (an asynchronous one's background write); with
    // asynchronous writes, also the cycle before it, whose background write still runs.
    struct Part {
      double training;
      double until;
    };
    std::array<Part, 2> parts{};
    std::size_t n = 0;
    double left = std::max(0.0, j.work - t.saved);
    const auto add = [&](double trained_s, double until) {
      const double x = std::clamp(trained_s * j.rate, 0.0, left);
      left -= x;
      parts[n++] = Part{x, std::max(0.0, until)};
    };
    double in_cycle = since;
    if (!checkpoints) {
      add(since, std::numeric_limits<double>::infinity());
    } else if (since <= cycle) {
      add(std::min(since, j.tau), cycle + (in_.checkpoint.async ? j.write : 0.0) - since);
    } else {
      add(j.tau, cycle + j.write - since);
      in_cycle = since - cycle;
      add(std::min(in_cycle, j.tau), 2.0 * cycle + j.write - since);
    }
    // Training now, the job may finish before the save, which saves everything; writing, it
    // trains again only after the write, so the save comes first.
    const bool training_now = !checkpoints || in_cycle <= j.tau;
    const double finish =
        training_now && j.rate > 0.0 ? left / j.rate : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      const double kept = !std::isfinite(j.mtbf) ? 1.0
                          : j.mtbf > 0.0         ? std::exp(-std::min(parts[i].until, finish) / j.mtbf)
                                                 : 0.0;
      t.training += parts[i].training;
      t.counted += parts[i].training * kept;
      t.kept = kept;
    }
    return t;
  }

  const LongRunInputs& in_;
  const std::vector<Klass>& classes_;
  bool record_;
  std::int64_t gpn_;
  sim::Engine engine_;
  std::vector<sim::RandomStream> streams_;
  // stop_rng_ draws the detection, diagnosis and restart times (fixed ones draw nothing):
  // its own stream, so that laws there leave the repairs' draws as they were.
  sim::RandomStream hetero_, repair_rng_, stop_rng_;
  double alpha_;
  double burn_in_;
  double end_ = 0.0;
  std::function<void(double)> progress_;
  double last_done_ = 0.0;
  std::int64_t unfinished_ = 0;
  // Jobs by state, in job order, so that an event visits only the jobs it concerns (a scan of
  // every job at every event made a queue of 20,000 jobs take minutes).
  std::set<std::size_t> running_;  ///< running: training or writing a checkpoint
  std::set<std::size_t> active_;   ///< started, not finished
  std::set<std::size_t> missing_;  ///< unfinished and missing nodes

  std::vector<Node> nodes_;
  std::vector<std::int64_t> pool_;   ///< free healthy nodes, in the order they became free
  std::deque<std::int64_t> queue_;  ///< submitted jobs not started, in queue order
  // Scratch space, reused.
  std::vector<char> free_;
  std::vector<std::int64_t> block_starts_;  ///< nodes whose first block the node before lacks (node_blocks)
  std::vector<std::pair<double, std::int64_t>> ends_;
  std::vector<std::size_t> writers_;
  std::vector<double> w_;
  static constexpr double kFresh = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> remaining_;  ///< per class and unit: operating time left (NaN: draw)
  std::vector<std::vector<double>> due_;        ///< per class and unit in service: failure time
  std::vector<std::vector<sim::EventHandle>> armed_;  ///< per class and unit: its pending failure
  Replication r_;
  sim::HandlerId fail_id_, element_back_id_, repaired_id_, ready_id_, restarted_id_, done_id_, submit_id_,
      burned_in_id_;
};

Estimate estimate(const sim::Welford& w) {
  return {w.mean(), w.count() > 1 ? w.ci95_half_width() : std::numeric_limits<double>::quiet_NaN()};
}

/// The same for whole counts, the mean as their sum over n (the running mean's rounding set a
/// total of 1/20 apart from an equal cause's, summarize()).
Estimate count_estimate(const sim::Welford& w) {
  Estimate e = estimate(w);
  const auto n = static_cast<double>(w.count());
  if (w.count() > 0) e.mean = std::round(w.mean() * n) / n;
  return e;
}

}  // namespace

LongRunResult simulate_long_run(const LongRunInputs& in) {
  CLUSTERSIM_CHECK(in.failures != nullptr && in.replications >= 1, "a long run needs failures and replications");
  CLUSTERSIM_CHECK(!in.scope || ((in.links == 0 || static_cast<std::int64_t>(in.scope->cables.size()) == in.links) &&
                                    (in.switches == 0 || in.scope->switches() == in.switches)),
                   "a fabric scope describes every switch and cable unit");
  const std::vector<Klass> classes = resolve_classes(*in.failures);
  std::vector<JobState> jobs;
  double ideal = 0.0, last_submit = 0.0;
  std::map<std::tuple<std::string, double, double>, double> renewals;
  for (const JobProfile& p : in.jobs) {
    JobState j;
    j.p = p;
    plan_checkpoints(j, in, classes, renewals);
    if (std::isfinite(j.work)) ideal += j.work;
    last_submit = std::max(last_submit, p.submit_s);
    jobs.push_back(std::move(j));
  }
  // Without a horizon, run until every job has trained its tokens (a stop at 100 times the
  // failure-free time of the jobs one after another, and at 100 years, guards against a
  // cluster that never gets there; jobs unfinished then are reported as such).
  const double end =
      in.horizon_s > 0.0 ? in.horizon_s : std::min(std::max(last_submit + 100.0 * ideal, kDay), kLongestRun_s);

  LongRunResult out;
  out.heterogeneity_alpha = pareto_alpha(in.failures->heterogeneity);
  const std::size_t J = jobs.size();
  std::vector<sim::Welford> interruptions(J), ettr(J), goodput(J), ttt(J), wait(J), start(J), finish(J),
      fragmented(J), blocking(J), slowdown(J), checkpoint_hours(J);
  std::vector<std::vector<double>> ettr_reps(J);
  std::vector<std::int64_t> finished(J, 0), started(J, 0);
  // Replications unfinished at the horizon, (elapsed, useful) from the job's start; and the
  // sums of both over every started replication (the pooled ETTR the rest is projected at).
  std::vector<std::vector<std::pair<double, double>>> unfinished(J);
  std::vector<double> pooled_elapsed(J, 0.0), pooled_useful(J, 0.0);
  std::vector<std::vector<std::map<std::string, double>>> causes(J), lost(J);
  std::vector<std::map<std::string, double>> failures, caught;
  sim::Welford top1, top1_rate, retired, utilisation, busy, available, burn_ins, burn_in_hours, caught_installed;
  sim::Welford run_length;  // each replication's elapsed time: the horizon, or until every job has trained
  const double cluster_gpus = static_cast<double>(in.nodes * in.gpus_per_node);
  for (std::int64_t rep = 0; rep < in.replications; ++rep) {
    Model model(in, classes, jobs, static_cast<std::uint64_t>(rep), rep == 0);
    if (in.progress) {
      const double reps = static_cast<double>(in.replications);
      model.on_progress([&in, rep, reps](double share) { in.progress((static_cast<double>(rep) + share) / reps); });
    }
    Replication r = model.run(end);
    out.events += r.events;
    out.events_scheduled += r.events_scheduled;
    double busy_gpu_s = 0.0;
    for (std::size_t j = 0; j < J; ++j) {
      const JobState& s = r.jobs[j];
      busy_gpu_s += s.busy_gpu_s;
      interruptions[j].add(static_cast<double>(s.interruptions));
      std::map<std::string, double> c, l;
      for (const auto& [k, v] : s.by_cause) c[k] = static_cast<double>(v);
      for (const auto& [k, v] : s.lost_gpu_hours) l[k] = v;
      if (const double unsaved = model.unsaved_expected_lost(s, r.elapsed); unsaved > 0.0) {
        l[std::string(kUnsavedAtHorizon)] += unsaved * static_cast<double>(s.p.gpus) / 3600.0;
      }
      causes[j].push_back(std::move(c));
      lost[j].push_back(std::move(l));
      checkpoint_hours[j].add(s.checkpoint_gpu_s / 3600.0);
      ettr_reps[j].push_back(std::numeric_limits<double>::quiet_NaN());  // set below if it started
      if (!s.started) continue;  // still queued at the end: no training figures
      ++started[j];
      wait[j].add(s.start_time - s.p.submit_s);
      start[j].add(s.start_time);
      fragmented[j].add(static_cast<double>(s.fragmented_starts));
      if (s.running_s > 0.0) {
        blocking[j].add(s.blocking_s_integral / s.running_s);
        slowdown[j].add(s.slowdown_integral / s.running_s);
      }
      // ETTR, goodput and time to train count from the job's first start.
      const double elapsed = (s.finished ? s.finished_at : r.elapsed) - s.start_time;
      const double useful = model.useful(s, r.elapsed);
      const double this_ettr = elapsed > 0.0 ? useful / elapsed : 0.0;
      ettr[j].add(this_ettr);
      ettr_reps[j].back() = this_ettr;
      goodput[j].add(elapsed > 0.0 ? useful * s.p.tokens_per_s / elapsed : 0.0);
      // Time to train: a finished replication's own; an unfinished one's time so far plus
      // its remaining work at the ETTR pooled over the replications (below). Its own ETTR
      // alone (elapsed x work / useful) made the mean that of 1 / ETTR, which the replications
      // that a short horizon caught in a long repair blew up (29 days where 5 / ETTR is 10).
      if (std::isfinite(s.work)) {
        // The projection runs at the steady pace, checkpoints included. The training since
        // the last checkpoint counts at the share a checkpoint is expected to save (useful()),
        // and owes as much of one, delta per tau, in the pace and in the time so far (a
        // horizon shorter than the interval saw none, and projected the rest without them).
        const double owed = s.finished ? 0.0 : model.checkpoint_owed_s(s, r.elapsed);
        pooled_elapsed[j] += elapsed + owed;
        pooled_useful[j] += useful;
        if (s.finished) {
          ttt[j].add(s.finished_at - s.start_time);
        } else {
          unfinished[j].emplace_back(elapsed + owed, useful);
        }
      }
      if (s.finished) finish[j].add(s.finished_at);
      finished[j] += s.finished ? 1 : 0;
    }
    run_length.add(r.elapsed);
    const double available_gpu_s = cluster_gpus * r.elapsed;
    utilisation.add(available_gpu_s > 0.0 ? busy_gpu_s / available_gpu_s : 0.0);
    busy.add(busy_gpu_s / 3600.0);
    available.add(available_gpu_s / 3600.0);
    burn_ins.add(static_cast<double>(r.burn_ins));
    burn_in_hours.add(r.burn_in_node_s / 3600.0);
    caught_installed.add(static_cast<double>(r.burn_in_failures_installed));
    std::map<std::string, double> b;
    for (const auto& [k, v] : r.burn_in_failures) b[k] = static_cast<double>(v);
    caught.push_back(std::move(b));
    std::map<std::string, double> f;
    for (const auto& [k, v] : r.failures_by_cause) f[k] = static_cast<double>(v);
    failures.push_back(std::move(f));
    retired.add(static_cast<double>(r.retired));
    top1_rate.add(r.top1_rate_share);
    std::vector<std::int64_t> counts = r.gpu_failures;
    const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}));
    if (total > 0.0 && !counts.empty()) {
      const auto top = static_cast<std::ptrdiff_t>(std::ceil(0.01 * static_cast<double>(counts.size())));
      std::partial_sort(counts.begin(), counts.begin() + top, counts.end(), std::greater<>());
      top1.add(static_cast<double>(std::accumulate(counts.begin(), counts.begin() + top, std::int64_t{0})) / total);
    }
    if (rep == 0) {
      out.timeline = std::move(r.timeline);
      out.timeline_dropped = r.timeline_dropped;
      out.gpu_failures = std::move(r.gpu_failures);
    }
  }
  // Per-cause figures: a cause absent from a replication counts as zero there.
  const auto summarize = [&](const std::vector<std::map<std::string, double>>& reps) {
    std::map<std::string, Estimate> m;
    std::map<std::string, sim::Welford> w;
    std::map<std::string, double> sums;
    for (const auto& rep : reps) {
      for (const auto& [k, v] : rep) w[k];
    }
    for (const auto& rep : reps) {
      for (auto& [k, acc] : w) {
        const auto it = rep.find(k);
        acc.add(it == rep.end() ? 0.0 : it->second);
        sums[k] += it == rep.end() ? 0.0 : it->second;
      }
    }
    // The mean as sum / n: counts are summed exactly, so equal counts give equal means (the
    // running mean's rounding read 1/20 as 0.05000000000000001 for one cause and
    // 0.049999999999999996 for another, printed 0.1 and 0.0).
    for (const auto& [k, acc] : w) {
      m[k] = estimate(acc);
      m[k].mean = sums[k] / static_cast<double>(acc.count());
    }
    return m;
  };
  std::vector<double> remaining(J, 0.0);  // mean projected remaining time over the projections
  std::vector<bool> past_clock(J, false);
  for (std::size_t j = 0; j < J; ++j) {
    // Projected where the horizon ended first; none while the replications made under a
    // millionth of the work each on average (before, the sum over them was compared with
    // one job's work, which let 5 replications project 134,000 years).
    const double counted = static_cast<double>(ttt[j].count() + unfinished[j].size());
    if (counted > 0.0 && pooled_useful[j] > 1e-6 * jobs[j].work * counted && pooled_elapsed[j] > 0.0) {
      const double rate = pooled_useful[j] / pooled_elapsed[j];
      for (const auto& [elapsed, useful] : unfinished[j]) {
        ttt[j].add(elapsed + (jobs[j].work - useful) / rate);
        remaining[j] += (jobs[j].work - useful) / rate;
      }
    }
    if (ttt[j].count() > 0) remaining[j] /= static_cast<double>(ttt[j].count());
    // A projection past the clock's range (292 years) says only that the job never trains.
    if (ttt[j].count() > 0 && ttt[j].mean() > sim::Time::max().seconds()) {
      past_clock[j] = true;
      ttt[j] = sim::Welford{};
      remaining[j] = 0.0;
    }
  }
  for (std::size_t j = 0; j < J; ++j) {
    JobSummary s;
    s.name = jobs[j].p.name;
    s.interruptions = count_estimate(interruptions[j]);
    s.by_cause = summarize(causes[j]);
    s.ettr = estimate(ettr[j]);
    s.goodput_tokens_per_s = estimate(goodput[j]);
    s.time_to_train_s = ttt[j].count() > 0 ? estimate(ttt[j])
                                           : Estimate{std::numeric_limits<double>::quiet_NaN(),
                                                      std::numeric_limits<double>::quiet_NaN()};
    // The projected remainder is as uncertain as the pooled ETTR it runs at: its relative
    // 95% interval, added in quadrature to the spread of the replications' progress.
    if (remaining[j] > 0.0 && std::isfinite(s.ettr.ci95) && s.ettr.mean > 0.0) {
      const double rate_part = remaining[j] * s.ettr.ci95 / s.ettr.mean;
      s.time_to_train_s.ci95 = std::isfinite(s.time_to_train_s.ci95)
                                   ? std::hypot(s.time_to_train_s.ci95, rate_part)
                                   : s.time_to_train_s.ci95;
    }
    s.projection_past_clock = past_clock[j];
    s.finished_share = static_cast<double>(finished[j]) / static_cast<double>(in.replications);
    s.lost_gpu_hours = summarize(lost[j]);
    s.checkpoint_gpu_hours = estimate(checkpoint_hours[j]);
    s.ettr_by_replication = std::move(ettr_reps[j]);
    s.checkpoint_interval_s = jobs[j].tau;
    s.checkpoint_interval_asked_s = jobs[j].tau_asked;
    s.checkpoint_write_s = jobs[j].delta;
    s.mtbf_s = jobs[j].mtbf;
    s.started_share = static_cast<double>(started[j]) / static_cast<double>(in.replications);
    s.queue_wait_s = estimate(wait[j]);  // NaN where it never started
    s.start_s = estimate(start[j]);
    s.end_s = estimate(finish[j]);
    s.fragmented_starts = estimate(fragmented[j]);
    s.checkpoint_blocking_s = estimate(blocking[j]);
    s.storage_slowdown = estimate(slowdown[j]);
    out.jobs.push_back(std::move(s));
  }
  out.utilisation = estimate(utilisation);
  out.elapsed_s = run_length.mean();
  out.busy_gpu_hours = estimate(busy);
  out.available_gpu_hours = estimate(available);
  out.burn_ins = count_estimate(burn_ins);
  out.burn_in_node_hours = estimate(burn_in_hours);
  out.burn_in_failures = summarize(caught);
  out.burn_in_failures_installed = count_estimate(caught_installed);
  out.failures_by_cause = summarize(failures);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.top1_failure_share = top1.count() > 0 ? estimate(top1) : Estimate{nan, nan};
  out.top1_rate_share = estimate(top1_rate);
  out.retired_nodes = estimate(retired);
  return out;
}

}  // namespace clustersim::reliability
