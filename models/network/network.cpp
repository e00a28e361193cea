#include "models/network/network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "sim/check.hpp"

namespace clustersim::network {

double link_capacity(const fabric::Link& link, const NetworkConfig& cfg) {
  const double eff = link.kind == fabric::LinkKind::nvlink ? cfg.scaleup_efficiency : cfg.scaleout_efficiency;
  return link.bandwidth.value() * eff;
}

double size_factor(const std::vector<SizeFactor>& table, double bytes) {
  if (table.empty()) return 1.0;
  if (bytes <= table.front().size.value()) return table.front().factor;
  if (bytes >= table.back().size.value()) return table.back().factor;
  std::size_t i = 1;
  while (table[i].size.value() < bytes) ++i;
  const SizeFactor& a = table[i - 1];
  const SizeFactor& b = table[i];
  const double x = std::log2(bytes / a.size.value()) / std::log2(b.size.value() / a.size.value());
  return a.factor + x * (b.factor - a.factor);
}

std::size_t first_unsorted(const std::vector<SizeFactor>& table) {
  for (std::size_t i = 1; i < table.size(); ++i) {
    if (!(table[i - 1].size.value() < table[i].size.value())) return i;
  }
  return 0;
}

LevelFactors size_factors(const std::vector<SizeFactor>& scaleup, const std::vector<SizeFactor>& scaleout,
                          const Schedule& s) {
  if (s.size <= 0.0 || s.op == Op::send_recv || s.op == Op::all_to_all) return {};
  return {size_factor(scaleup, s.size), size_factor(scaleout, s.size)};
}

namespace {

// Host and access links are merged (see constraint_link()) on healthy fabrics where GPU g
// owns NIC g, so that host link host_base + 2g + d pairs with access link access_base + 2g + d.
bool merges_host_links(const fabric::Fabric& f) {
  return f.link_failed.empty() && f.nics_per_node == f.gpus_per_node && f.gpus_per_node > 0;
}

}  // namespace

fabric::LinkId constraint_link(const fabric::Fabric& f, fabric::LinkId l) {
  if (!merges_host_links(f) || l.value < f.host_base) return l;
  const std::uint32_t offset = l.value - f.host_base;
  if (offset >= 2 * static_cast<std::uint64_t>(f.gpus())) return l;
  return fabric::LinkId{f.access_base + offset};
}

double constraint_capacity(const fabric::Fabric& f, const NetworkConfig& cfg, fabric::LinkId rep) {
  double capacity = link_capacity(f.links[rep.value], cfg);
  if (merges_host_links(f) && rep.value >= f.access_base &&
      rep.value - f.access_base < 2 * static_cast<std::uint64_t>(f.gpus())) {
    const fabric::LinkId host{f.host_base + (rep.value - f.access_base)};
    capacity = std::min(capacity, link_capacity(f.links[host.value], cfg));
  }
  return capacity;
}

double LinkLoad::utilisation(const fabric::Fabric& f, const NetworkConfig& cfg, fabric::LinkId l,
                             sim::Time duration) const {
  if (duration <= sim::Time::zero() || bytes.empty()) return 0.0;
  return bytes[l.value] / (link_capacity(f.links[l.value], cfg) * duration.seconds());
}

std::vector<std::pair<fabric::LinkId, double>> hottest_links(const fabric::Fabric& f, const NetworkConfig& cfg,
                                                             const LinkLoad& load, sim::Time duration,
                                                             std::size_t count) {
  std::vector<std::pair<fabric::LinkId, double>> all;
  for (std::uint32_t i = 0; i < load.bytes.size(); ++i) {
    if (load.bytes[i] > 0) all.emplace_back(fabric::LinkId{i}, load.utilisation(f, cfg, fabric::LinkId{i}, duration));
  }
  const auto busier = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  const std::size_t k = std::min(count, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), busier);
  all.resize(k);
  return all;
}

namespace {

using Path = std::span<const fabric::LinkId>;

sim::Time path_latency(const fabric::Fabric& f, Path path) {
  sim::Time t = sim::Time::zero();
  for (fabric::LinkId l : path) t += f.links[l.value].latency;
  return t;
}

// The links of transfer t. A hop into or out of a switch (in-network reduction) crosses
// only the links between the GPU and that switch: its NVLink for the scale-up switch, its
// host and access links for the fabric's aggregation tree. Appended to `out`.
void route_append(const fabric::Fabric& f, const Transfer& t, std::uint64_t flow, std::vector<fabric::LinkId>& out,
                  fabric::LoadView load = {}) {
  const std::size_t start = out.size();
  const auto nvlink = [&](std::int64_t gpu) {
    CLUSTERSIM_CHECK(f.has_nvlink && !f.scaleup_mesh, "an NVLS transfer on a node without an NVLink switch");
    return fabric::LinkId{f.nvlink_base + 2 * static_cast<std::uint32_t>(gpu)};
  };
  const auto host = [&](std::int64_t gpu) { return fabric::LinkId{f.host_base + 2 * static_cast<std::uint32_t>(gpu)}; };
  switch (t.hop) {
    case Hop::gpu:
      CLUSTERSIM_CHECK(f.route(t.src, t.dst, flow, out, load), "a collective's transfer has no route on the fabric");
      return;
    case Hop::scaleup_in: out.push_back(nvlink(t.src)); break;
    case Hop::scaleup_out: out.push_back(fabric::LinkId{nvlink(t.dst).value + 1}); break;
    case Hop::fabric_in:
      out.push_back(host(t.src));
      out.push_back(f.access_up(f.endpoint_of_gpu(t.src)));
      break;
    case Hop::fabric_out:
      out.push_back(fabric::LinkId{f.access_up(f.endpoint_of_gpu(t.dst)).value + 1});
      out.push_back(fabric::LinkId{host(t.dst).value + 1});
      break;
  }
  for (std::size_t i = start; i < out.size(); ++i) {
    CLUSTERSIM_CHECK(!f.failed(out[i]), "an in-network reduction crosses a failed link");
  }
}

// The rate bound of transfer t in bytes/s (+inf for none): in-network reduction runs at the
// switch's reduction rate, a share of the line rate of the GPU's link into it.
double rate_bound(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t, Path path) {
  switch (t.hop) {
    case Hop::gpu: return std::numeric_limits<double>::infinity();
    case Hop::scaleup_in:
    case Hop::scaleup_out: return f.links[path.front().value].bandwidth.value() * cfg.nvls_efficiency;
    case Hop::fabric_in:
    case Hop::fabric_out: {
      double line = std::numeric_limits<double>::infinity();
      for (fabric::LinkId l : path) line = std::min(line, f.links[l.value].bandwidth.value());
      return line * cfg.sharp_efficiency;
    }
  }
  return std::numeric_limits<double>::infinity();
}

// The flows transfer t is spread over (network.qps_per_connection): its queue pairs, each
// hashed to its own path, when it crosses the fabric between two nodes; else one.
std::uint64_t flows_of(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t) {
  if (cfg.qps_per_connection <= 1 || t.hop != Hop::gpu || f.gpus_per_node <= 0) return 1;
  return t.src / f.gpus_per_node == t.dst / f.gpus_per_node ? 1 : static_cast<std::uint64_t>(cfg.qps_per_connection);
}

// A transfer's queue pairs, routed one by one into `paths` (back to back) against the load
// of the other transfers only: a transfer's own pairs are no load to each other (UGAL would
// send all but the first Valiant on an idle network). Each of its links once in `merged`,
// with the number of its pairs crossing it; a transfer of one pair keeps its path's order.
// `ends`: where each path ends in `paths`. Returns its slowest path's latency (Valiant's
// paths differ in length).
sim::Time route_pairs(const fabric::Fabric& f, const Transfer& t, std::uint64_t first_flow, std::uint64_t pairs,
                      fabric::LoadView load, std::vector<fabric::LinkId>& paths, std::vector<std::size_t>& ends,
                      std::vector<std::pair<fabric::LinkId, std::uint32_t>>& merged) {
  paths.clear();
  ends.clear();
  merged.clear();
  sim::Time slowest = sim::Time::zero();
  for (std::uint64_t q = 0; q < pairs; ++q) {
    const std::size_t from = paths.size();
    route_append(f, t, first_flow + q, paths, load);
    ends.push_back(paths.size());
    slowest = std::max(slowest, path_latency(f, Path(paths.data() + from, paths.size() - from)));
  }
  for (fabric::LinkId l : paths) merged.emplace_back(l, 1);
  if (pairs == 1) return slowest;
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) { return a.first.value < b.first.value; });
  std::size_t out = 0;
  for (std::size_t k = 0; k < merged.size(); ++k) {
    if (out > 0 && merged[out - 1].first == merged[k].first) {
      ++merged[out - 1].second;
    } else {
      merged[out++] = merged[k];
    }
  }
  merged.resize(out);
  return slowest;
}

}  // namespace

// UGAL's lookahead over a phase: the load of its transfers not yet routed, on their minimal
// routes. Routed one at a time against the transfers before them alone, the first transfers
// of an all-to-all saw idle global links on Valiant's detours and took them, and the later
// ones found the links their minimal routes needed taken twice over (dragonfly-1k's uniform
// all-to-all: 1.4x minimal routing's time). A real UGAL sees every source's demand in its
// queues at once. begin() adds every transfer's minimal routes, take() removes one's before
// it is routed, end() clears what is left (rounding). Only where routes read the load.
void PendingLoad::begin(const fabric::Fabric& f, const NetworkConfig& cfg, const Phase& phase, bool by_share) {
  end();  // what a phase left when a route threw
  active_ = f.load_aware();
  if (!active_) return;
  if (pending_.size() != f.links.size()) pending_.assign(f.links.size(), 0.0);
  by_share_ = by_share;
  for (std::size_t i = 0; i < phase.transfers.size(); ++i) add(f, cfg, phase.transfers[i], i, 1.0);
}

void PendingLoad::take(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t, std::size_t index) {
  if (active_) add(f, cfg, t, index, -1.0);
}

void PendingLoad::end() {
  for (fabric::LinkId l : touched_) pending_[l.value] = 0.0;
  touched_.clear();
  active_ = false;
}

void PendingLoad::add(const fabric::Fabric& f, const NetworkConfig& cfg, const Transfer& t, std::size_t index,
                      double sign) {
  const std::uint64_t flows = flows_of(f, cfg, t);
  route_pairs(f, t, index * flows, flows, fabric::LoadView{}, paths_, ends_, merged_);
  const double share = by_share_ ? 1.0 / static_cast<double>(flows) : 1.0;
  for (const auto& [l, pairs] : merged_) {
    if (sign > 0.0 && pending_[l.value] == 0.0) touched_.push_back(l);  // each link once
    pending_[l.value] += sign * share * static_cast<double>(pairs);
  }
}

namespace {

// UGAL's load: the routed transfers' count plus the phase's pending minimal routes.
template <class Count>
struct RoutedAndPending {
  const std::vector<Count>* routed;
  const PendingLoad* pending;
};
template <class Count>
double routed_and_pending(const void* context, fabric::LinkId l) {
  const auto* c = static_cast<const RoutedAndPending<Count>*>(context);
  return static_cast<double>((*c->routed)[l.value]) + c->pending->at(l);
}

}  // namespace

AnalyticalRoutes::AnalyticalRoutes(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s)
    : call_overhead_(cfg.call_overhead.seconds()),
      fabric_links_(f.links.size()),
      scaleup_factors_(cfg.scaleup_size_factors),
      scaleout_factors_(cfg.scaleout_size_factors) {
  std::vector<double> count(f.links.size(), 0.0);
  PendingLoad pending;
  build(f, cfg, s, count, pending);
}

AnalyticalRoutes::AnalyticalRoutes(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s,
                                   RouteScratch& scratch)
    : call_overhead_(cfg.call_overhead.seconds()),
      fabric_links_(f.links.size()),
      scaleup_factors_(cfg.scaleup_size_factors),
      scaleout_factors_(cfg.scaleout_size_factors) {
  if (scratch.count_.size() != f.links.size()) scratch.count_.assign(f.links.size(), 0);
  build(f, cfg, s, scratch.count_, scratch.pending_);
}

void AnalyticalRoutes::build(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s,
                             std::vector<double>& count, PendingLoad& pending) {
  std::size_t transfers = 0;
  for (const Phase& phase : s.phases) transfers += phase.transfers.size();
  phase_first_.reserve(s.phases.size() + 1);
  routes_.reserve(transfers);
  links_.reserve(transfers * 6);  // a Clos route across pods: 8 links; inside a leaf: 4
  weights_.reserve(transfers * 6);
  const double step_latency = cfg.step_latency.seconds();
  check_paths(s, cfg);
  std::vector<fabric::LinkId> paths;                                 // a transfer's pairs' paths
  std::vector<std::size_t> ends;                                     // where each ends
  std::vector<std::pair<fabric::LinkId, std::uint32_t>> merged;      // its links, pairs on each
  std::size_t phase_links = 0;
  // Counts are cleared after each phase; a route that throws clears the phase's too.
  struct Clear {
    std::vector<double>& count;
    const std::vector<fabric::LinkId>& links;
    const std::size_t& from;
    ~Clear() {
      for (std::size_t k = from; k < links.size(); ++k) count[links[k].value] = 0.0;
    }
  } const clear{count, links_, phase_links};
  const RoutedAndPending<double> seen{&count, &pending};
  for (const Phase& phase : s.phases) {
    const std::size_t first = routes_.size();
    phase_links = links_.size();
    phase_first_.push_back(first);
    pending.begin(f, cfg, phase, true);
    for (std::size_t i = 0; i < phase.transfers.size(); ++i) {
      const Transfer& t = phase.transfers[i];
      const std::size_t start = links_.size();
      // Each of its queue pairs on its own path with an equal share of its bytes; a link
      // counts the transfers on it by their share (one for a transfer of one pair).
      const std::uint64_t flows = flows_of(f, cfg, t);
      const double share = 1.0 / static_cast<double>(flows);
      pending.take(f, cfg, t, i);
      const sim::Time latency = route_pairs(f, t, i * flows, flows,
                                            fabric::LoadView{&routed_and_pending<double>, &seen}, paths, ends, merged);
      CLUSTERSIM_CHECK(links_.size() + merged.size() < std::numeric_limits<std::uint32_t>::max(),
                       "too many links in one schedule");
      for (const auto& [l, pairs] : merged) {
        const double weight = share * static_cast<double>(pairs);
        links_.push_back(l);
        weights_.push_back(weight);
        count[l.value] += weight;
      }
      Route r;
      r.latency = latency;
      r.first_link = static_cast<std::uint32_t>(start);
      r.link_count = static_cast<std::uint32_t>(links_.size() - start);
      r.src = t.src;
      r.dst = t.dst;
      r.hop = t.hop;
      r.feeds_next = t.feeds_next;
      routes_.push_back(r);
    }
    pending.end();
    // Rates once every transfer of the phase is on its links.
    double fed = 0.0;  // the path latency of a transfer that feeds this one (a relay), s
    for (std::size_t i = first; i < routes_.size(); ++i) {
      Route& r = routes_[i];
      const Transfer& t = phase.transfers[i - first];
      const Path path(links_.data() + r.first_link, r.link_count);
      constexpr double kNone = std::numeric_limits<double>::infinity();
      r.bound = path.empty() ? kNone : rate_bound(f, cfg, t, path);
      r.scaleup = kNone;
      r.scaleout = kNone;
      for (fabric::LinkId l : path) {
        const fabric::Link& link = f.links[l.value];
        double& level = link.kind == fabric::LinkKind::nvlink ? r.scaleup : r.scaleout;
        level = std::min(level, link_capacity(link, cfg) / count[l.value]);
      }
      const sim::Time latency = t.hop == Hop::fabric_in     ? cfg.sharp_latency
                                : t.hop == Hop::scaleup_in ? cfg.nvls_latency
                                                           : r.latency;
      r.fixed = step_latency + fed + latency.seconds();
      fed = t.feeds_next ? latency.seconds() : 0.0;
    }
    for (std::size_t k = phase_links; k < links_.size(); ++k) count[links_[k].value] = 0;
  }
  phase_links = links_.size();
  phase_first_.push_back(routes_.size());
}

void AnalyticalRoutes::check_counts(const Schedule& s) const {
  CLUSTERSIM_CHECK(s.phases.size() + 1 == phase_first_.size(), "a schedule of another shape than its routes");
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    CLUSTERSIM_CHECK(s.phases[p].transfers.size() == phase_first_[p + 1] - phase_first_[p],
                     "a schedule of another shape than its routes");
  }
}

bool AnalyticalRoutes::matches(const Schedule& s) const {
  if (s.phases.size() + 1 != phase_first_.size()) return false;
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const Phase& phase = s.phases[p];
    if (phase.transfers.size() != phase_first_[p + 1] - phase_first_[p]) return false;
    const Route* r = routes_.data() + phase_first_[p];
    for (const Transfer& t : phase.transfers) {
      if (t.src != r->src || t.dst != r->dst || t.hop != r->hop || t.feeds_next != r->feeds_next) return false;
      ++r;
    }
  }
  return true;
}

sim::Time AnalyticalRoutes::time(const Schedule& s) const {
  check_counts(s);
  const LevelFactors k = size_factors(scaleup_factors_, scaleout_factors_, s);
  double total = call_overhead_;
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const Phase& phase = s.phases[p];
    const Route* r = routes_.data() + phase_first_[p];
    double step = 0.0;    // a step that pays its latency
    double stream = 0.0;  // a streamed one (Phase::streamed)
    double latency = 0.0;  // the weighted sum of the hops' (Phase::latency_along)
    double hops = 0.0;     // their weights (Transfer::latency_weight)
    double largest = 0.0;  // the largest latency (Phase::pipelined)
    for (const Transfer& t : phase.transfers) {
      const double rate = std::min({r->bound, k.scaleup * r->scaleup, k.scaleout * r->scaleout});
      const double transfer = r->link_count == 0 ? 0.0 : t.bytes / rate;
      step = std::max(step, phase.latency_along || phase.pipelined ? transfer : r->fixed + transfer);
      largest = std::max(largest, r->fixed);
      stream = std::max(stream, transfer);
      // A relay's first leg is in its second's latency (fed).
      if (!t.feeds_next) {
        latency += r->fixed * t.latency_weight;
        hops += t.latency_weight;
      }
      ++r;
    }
    if (phase.latency_along && hops > 0.0) step += latency / hops;
    if (phase.pipelined) step += largest;
    total += step * static_cast<double>(phase.repeat - phase.streamed) + stream * static_cast<double>(phase.streamed);
  }
  return sim::Time::from_seconds(total, "a collective");
}

void AnalyticalRoutes::add_load(const Schedule& s, LinkLoad& load) const {
  check_counts(s);
  if (load.bytes.empty()) load.bytes.assign(fabric_links_, 0.0);
  CLUSTERSIM_CHECK(load.bytes.size() == fabric_links_, "a link load of another fabric");
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const Phase& phase = s.phases[p];
    const Route* r = routes_.data() + phase_first_[p];
    for (const Transfer& t : phase.transfers) {
      for (std::uint32_t k = 0; k < r->link_count; ++k) {
        load.bytes[links_[r->first_link + k].value] +=
            t.bytes * weights_[r->first_link + k] * static_cast<double>(phase.repeat);
      }
      ++r;
    }
  }
}

sim::Time analytical_time(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s, LinkLoad* load) {
  const AnalyticalRoutes routes(f, cfg, s);
  if (load) {
    load->bytes.assign(f.links.size(), 0.0);
    routes.add_load(s, *load);
  }
  return routes.time(s);
}

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// Hash of a schedule's shape: what AnalyticalRoutes::matches() compares.
std::uint64_t shape_hash(const Schedule& s) {
  std::uint64_t h = s.phases.size();
  for (const Phase& phase : s.phases) {
    h = mix(h, phase.transfers.size());
    for (const Transfer& t : phase.transfers) {
      h = mix(mix(mix(h, static_cast<std::uint64_t>(t.src)), static_cast<std::uint64_t>(t.dst)),
              static_cast<std::uint64_t>(t.hop) * 2 + (t.feeds_next ? 1 : 0));
    }
  }
  return h;
}

}  // namespace

AnalyticalTimer::AnalyticalTimer(const fabric::Fabric& f, const NetworkConfig& cfg) : fabric_(f), cfg_(cfg) {}

sim::Time AnalyticalTimer::time(const Schedule& s, LinkLoad* load) {
  const std::uint64_t h = shape_hash(s);
  const AnalyticalRoutes* found = nullptr;
  for (const auto& [hash, routes] : routes_) {
    if (hash == h && routes.matches(s)) {
      found = &routes;
      break;
    }
  }
  if (!found) found = &routes_.emplace_back(h, AnalyticalRoutes(fabric_, cfg_, s, scratch_)).second;
  if (load) {
    load->bytes.assign(fabric_.links.size(), 0.0);
    found->add_load(s, *load);
  }
  return found->time(s);
}

FlowNetwork::FlowNetwork(sim::Engine& engine, const fabric::Fabric& fabric, const NetworkConfig& cfg)
    : engine_(engine), fabric_(fabric), cfg_(cfg), link_constraint_(fabric.links.size(), 0),
      link_flows_(fabric.links.size(), 0) {
  load_.bytes.assign(fabric.links.size(), 0.0);
  drain_id_ = engine_.add_handler<&FlowNetwork::on_drain>(*this);
  arrival_id_ = engine_.add_handler<&FlowNetwork::on_arrival>(*this);
  step_id_ = engine_.add_handler<&FlowNetwork::on_step>(*this);
}

sim::ConstraintId FlowNetwork::constraint_for(fabric::LinkId l) {
  const fabric::LinkId rep = constraint_link(fabric_, l);
  std::uint32_t& slot = link_constraint_[rep.value];
  if (slot == 0) {
    constraints_.push_back(solver_.add_constraint(constraint_capacity(fabric_, cfg_, rep)));
    slot = static_cast<std::uint32_t>(constraints_.size());
  }
  return constraints_[slot - 1];
}

void FlowNetwork::start(const Schedule& s, sim::HandlerId done, std::uint64_t arg) {
  const auto owner = static_cast<std::uint32_t>(running_.size());
  running_.push_back(Running{&s, 0, 0, 0, engine_.now(), done, arg, true, false, 0});
  ++steps_started_;  // a newcomer invalidates any step in progress as a template
  engine_.schedule_after(cfg_.call_overhead, step_id_, owner);
}

void FlowNetwork::on_step(sim::Engine&, std::uint64_t owner) { start_step(static_cast<std::uint32_t>(owner)); }

void FlowNetwork::start_step(std::uint32_t owner) {
  Running& r = running_[owner];
  if (r.phase >= r.schedule->phases.size()) {
    r.active = false;
    engine_.schedule_after(sim::Time::zero(), r.done, r.arg);
    return;
  }
  const Phase& phase = r.schedule->phases[r.phase];
  r.step_start = engine_.now();
  // The step may stand for its repetitions only if no other traffic shares the network for
  // its whole duration: nothing else in flight now, and no step of another collective
  // starting before it ends (steps_started_ counts them all).
  r.alone = live_flows_ == 0 &&
            std::count_if(running_.begin(), running_.end(), [](const Running& x) { return x.active; }) == 1;
  r.mark = ++steps_started_;
  alone_step_.clear();
  if (live_flows_ == 0) {  // start afresh: no slot, path or finish entry is in use
    flows_.clear();
    free_flows_.clear();
    finishes_.clear();
    flow_links_.clear();
  }
  r.outstanding = static_cast<std::int64_t>(phase.transfers.size());
  // A transfer uses 1 / factor of a link's capacity per byte/s (size factors, config.hpp).
  const LevelFactors k = size_factors(cfg_.scaleup_size_factors, cfg_.scaleout_size_factors, *r.schedule);
  sim::Time fed = sim::Time::zero();  // the path latency of a transfer that feeds this one (a relay)
  sim::Time along_latency = sim::Time::zero();  // the sum of the hops' latencies
  sim::Time largest = sim::Time::zero();        // the largest latency (Phase::pipelined)
  std::int64_t along_hops = 0;
  double along_weighted_ns = 0.0;  // weighted by Transfer::latency_weight
  double along_weight = 0.0;
  bool weighted = false;
  along_.clear();
  pending_.begin(fabric_, cfg_, phase, false);
  const RoutedAndPending<std::uint32_t> seen{&link_flows_, &pending_};
  for (std::size_t i = 0; i < phase.transfers.size(); ++i) {
    const Transfer& t = phase.transfers[i];
    // One max-min variable per transfer: its queue pairs (network.qps_per_connection) carry
    // equal shares, each on its own path, so it uses a link with the share of its pairs there.
    const std::uint64_t flows = flows_of(fabric_, cfg_, t);
    const double share = 1.0 / static_cast<double>(flows);
    pending_.take(fabric_, cfg_, t, i);
    const sim::Time slowest = route_pairs(fabric_, t, i * flows, flows,
                                          fabric::LoadView{&routed_and_pending<std::uint32_t>, &seen}, scratch_,
                                          path_ends_, merged_);
    // As the analytical model: a pass up SHARP's aggregation tree and back costs
    // NetworkConfig::sharp_latency, one through an NVLS switch NetworkConfig::nvls_latency.
    const sim::Time path = t.hop == Hop::fabric_in     ? cfg_.sharp_latency
                           : t.hop == Hop::scaleup_in ? cfg_.nvls_latency
                                                      : slowest;
    // A streamed step's latency hides behind the chunks in flight (Phase::streamed).
    const sim::Time latency =
        r.rep >= phase.repeat - phase.streamed ? sim::Time::zero() : cfg_.step_latency + fed + path;
    fed = t.feeds_next ? path : sim::Time::zero();
    largest = std::max(largest, latency);
    for (const auto& [l, pairs] : merged_) load_.bytes[l.value] += t.bytes * share * static_cast<double>(pairs);
    if (r.alone) {
      for (const auto& [l, pairs] : merged_) alone_step_.emplace_back(l, t.bytes * share * static_cast<double>(pairs));
    }
    if (!t.feeds_next) {  // a relay's first leg is in its second's latency (fed)
      along_latency += latency;
      ++along_hops;
      along_weighted_ns += static_cast<double>(latency.ns()) * t.latency_weight;
      along_weight += t.latency_weight;
      weighted = weighted || t.latency_weight != 1.0;
    }
    if (scratch_.empty() || t.bytes <= 0.0) {
      if (phase.latency_along || phase.pipelined) {
        along_.push_back(kNoFlow);
      } else {
        engine_.schedule_after(latency, arrival_id_, owner);
      }
      continue;
    }
    std::uint32_t slot = 0;
    if (free_flows_.empty()) {
      slot = static_cast<std::uint32_t>(flows_.size());
      flows_.emplace_back();
    } else {
      slot = free_flows_.back();
      free_flows_.pop_back();
    }
    Flow& flow = flows_[slot];
    ++flow.stamp;  // the entries of the slot's former flow stay stale
    flow.var = solver_.add_variable(1.0, rate_bound(fabric_, cfg_, t, scratch_));
    if (flow.var.index >= flow_of_var_.size()) flow_of_var_.resize(flow.var.index + 1);
    flow_of_var_[flow.var.index] = slot;
    flow.first_link = static_cast<std::uint32_t>(flow_links_.size());
    flow.link_count = static_cast<std::uint32_t>(merged_.size());
    for (const auto& entry : merged_) {
      link_flows_[entry.first.value] += entry.second;
      flow_links_.push_back(entry);
    }
    // Each path's constraints once (merged links, constraint_link(), are consecutive on a
    // route: one use, not two); then one use per constraint with the count of its pairs
    // there (a transfer of one pair: its path's constraints in order, one each).
    reps_.clear();
    std::size_t from = 0;
    for (const std::size_t end : path_ends_) {
      fabric::LinkId previous{~0U};
      for (std::size_t q = from; q < end; ++q) {
        const fabric::LinkId rep = constraint_link(fabric_, scratch_[q]);
        if (rep != previous) reps_.push_back(rep);
        previous = rep;
      }
      from = end;
    }
    if (flows > 1) {
      std::sort(reps_.begin(), reps_.end(), [](fabric::LinkId a, fabric::LinkId b) { return a.value < b.value; });
    }
    for (std::size_t q = 0; q < reps_.size();) {
      std::size_t same = q;
      while (same < reps_.size() && reps_[same] == reps_[q]) ++same;
      const bool scaleup = fabric_.links[reps_[q].value].kind == fabric::LinkKind::nvlink;
      solver_.expand(flow.var, constraint_for(reps_[q]),
                     static_cast<double>(same - q) * share / (scaleup ? k.scaleup : k.scaleout));
      q = same;
    }
    flow.remaining = t.bytes;
    flow.rate = 0.0;  // until the solve below
    flow.since = engine_.now();
    flow.latency = latency;
    flow.owner = owner;
    flow.alive = true;
    if (phase.latency_along || phase.pipelined) along_.push_back(slot);
    ++live_flows_;
    ++flows_started_;
  }
  pending_.end();
  if ((phase.latency_along && along_hops > 0) || phase.pipelined) {
    // The step's latency follows the ring: the mean of its hops', for each transfer
    // (weighted, where the phase weighs its transfers: Transfer::latency_weight); a
    // pipeline's is its largest leg's.
    const sim::Time shared = phase.pipelined ? largest
                             : weighted && along_weight > 0.0
                                 ? sim::Time::from_ns(std::llround(along_weighted_ns / along_weight))
                                 : sim::Time::from_ns((along_latency.ns() + along_hops / 2) / along_hops);
    for (const std::uint32_t slot : along_) {
      if (slot == kNoFlow) {
        engine_.schedule_after(shared, arrival_id_, owner);
      } else {
        flows_[slot].latency = shared;
      }
    }
  }
  resolve_and_schedule();
}

void FlowNetwork::push_finish(std::uint32_t slot) {
  const Flow& f = flows_[slot];
  finishes_.push_back(Finish{f.since.seconds() + std::max(0.0, f.remaining) / f.rate, slot, f.stamp});
  std::push_heap(finishes_.begin(), finishes_.end(), kFinishLater);
  // A stale entry leaves only when it reaches the top; one whose flow was sped up sits below
  // the new one until the clock passes it. Flows ending one by one on a shared link leave
  // n^2/2 of them: past twice the flows in flight, keep only the live entries (O(n)).
  if (finishes_.size() > 2 * live_flows_ + 1024) {
    std::erase_if(finishes_, [this](const Finish& x) { return !flows_[x.flow].alive || x.stamp != flows_[x.flow].stamp; });
    std::make_heap(finishes_.begin(), finishes_.end(), kFinishLater);
  }
}

void FlowNetwork::resolve_and_schedule() {
  if (next_drain_.seq != 0) engine_.cancel(next_drain_);
  next_drain_ = {};
  if (live_flows_ == 0) return;
  solver_.solve();
  ++solves_;
  // Only the flows whose rate moved: their bytes left are brought up to now at the old rate
  // and their finish is entered again at the new one. The others' entries stand.
  for (const sim::VariableId v : solver_.changed()) {
    const std::uint32_t slot = flow_of_var_[v.index];
    Flow& f = flows_[slot];
    const double rate = solver_.value(v);
    CLUSTERSIM_CHECK(rate > 0 && std::isfinite(rate), "a flow got no rate");
    if (rate == f.rate) continue;
    f.remaining -= f.rate * (engine_.now() - f.since).seconds();
    f.since = engine_.now();
    f.rate = rate;
    ++f.stamp;
    push_finish(slot);
  }
  // A constraint the solve did not open kept its usage.
  for (const sim::ConstraintId c : solver_.opened()) {
    max_link_ratio_ = std::max(max_link_ratio_, solver_.usage(c) / solver_.capacity(c));
  }
  while (finishes_.front().stamp != flows_[finishes_.front().flow].stamp || !flows_[finishes_.front().flow].alive) {
    std::pop_heap(finishes_.begin(), finishes_.end(), kFinishLater);
    finishes_.pop_back();
  }
  const Flow& first = flows_[finishes_.front().flow];
  const double soonest = std::max(0.0, first.remaining - first.rate * (engine_.now() - first.since).seconds()) / first.rate;
  if (!(soonest < 9.2e9)) {
    throw sim::TimeRangeError(fmt::format(
        "a flow's transfer would take {:.4g} s, past the clock's range (292 years): its links are too slow for it", soonest));
  }
  // Round up to the next nanosecond so that the flow has drained when the event fires.
  const auto ns = static_cast<std::int64_t>(std::ceil(soonest * 1e9));
  next_drain_ = engine_.schedule_after(sim::Time::from_ns(std::max<std::int64_t>(ns, 1)), drain_id_, 0);
}

void FlowNetwork::on_drain(sim::Engine& e, std::uint64_t) {
  next_drain_ = {};
  // A flow has drained when what is left would take under a nanosecond at its rate (1e-6
  // bytes absorbs the rounding of its bytes left), or its finish is due within a nanosecond
  // (the event was rounded up to one; the slack grows with `now`, whose rounding in seconds
  // does). Flows are taken in the order of their finish while the first one qualifies: one
  // due later drains at its own event.
  const double now = e.now().seconds();
  const double due = now + 1e-9 + 1e-15 * now;
  drained_.clear();
  while (!finishes_.empty()) {
    const Finish top = finishes_.front();
    const Flow& f = flows_[top.flow];
    const bool stale = !f.alive || top.stamp != f.stamp;
    if (!stale && top.at > due && f.remaining - f.rate * (e.now() - f.since).seconds() > f.rate * 1e-9 + 1e-6) break;
    std::pop_heap(finishes_.begin(), finishes_.end(), kFinishLater);
    finishes_.pop_back();
    if (!stale) drained_.push_back(top.flow);
  }
  for (const std::uint32_t slot : drained_) {
    Flow& f = flows_[slot];
    solver_.remove_variable(f.var);
    for (std::uint32_t k = 0; k < f.link_count; ++k) {
      const auto& [link, pairs] = flow_links_[f.first_link + k];
      link_flows_[link.value] -= pairs;
    }
    e.schedule_after(f.latency, arrival_id_, f.owner);
    f.alive = false;
    free_flows_.push_back(slot);
    --live_flows_;
  }
  resolve_and_schedule();
}

void FlowNetwork::on_arrival(sim::Engine& e, std::uint64_t owner_arg) {
  const auto owner = static_cast<std::uint32_t>(owner_arg);
  Running& r = running_[owner];
  if (--r.outstanding > 0) return;
  const Phase& phase = r.schedule->phases[r.phase];
  const sim::Time step = e.now() - r.step_start;
  const bool alone = r.alone && r.mark == steps_started_ && live_flows_ == 0;
  // The repeats run in two segments, those that pay their latency and the streamed ones.
  const std::int64_t paid = phase.repeat - phase.streamed;
  const std::int64_t end = r.rep < paid ? paid : phase.repeat;
  if ((r.rep == 0 || r.rep == paid) && end - r.rep > 1 && alone) {
    // Alone on an idle network: the segment's other repetitions are the same step again, on
    // the same routes (alone_step_ holds this step's, as no other step started since).
    const std::int64_t more = end - r.rep - 1;
    for (const auto& [l, bytes] : alone_step_) load_.bytes[l.value] += bytes * static_cast<double>(more);
    r.rep = end;
    if (r.rep >= phase.repeat) {
      r.rep = 0;
      ++r.phase;
    }
    e.schedule_after(step * more, step_id_, owner);
    return;
  }
  if (++r.rep >= phase.repeat) {
    r.rep = 0;
    ++r.phase;
  }
  start_step(owner);
}

void check_paths(const Schedule& s, const NetworkConfig& cfg) {
  const std::size_t most = most_transfers(s);
  const auto pairs = static_cast<std::size_t>(std::max<std::int64_t>(1, cfg.qps_per_connection));
  if (pairs > 1 && most * pairs > kMaxRoutedPaths) {
    throw PathLimitError(fmt::format("its {} {} puts {} transfers of {} queue pairs each on the fabric at once, {} "
                                      "paths to route; clustersim routes at most {} in one step (lower "
                                      "network.qps_per_connection)",
                                      config::enum_name(s.algorithm), config::enum_name(s.op), most, pairs,
                                      most * pairs, kMaxRoutedPaths));
  }
}

std::size_t most_transfers(const Schedule& s) {
  std::size_t most = 0;
  for (const Phase& p : s.phases) most = std::max(most, p.transfers.size());
  return most;
}

sim::Time flow_time(const fabric::Fabric& f, const NetworkConfig& cfg, const Schedule& s, LinkLoad* load,
                    double* max_link_ratio) {
  if (const std::size_t most = most_transfers(s); most > kMaxFlowTransfers) {
    throw sim::LimitError(fmt::format("its {} {} puts {} transfers on the fabric at once; the flow model runs each as a "
                                      "flow and holds at most {}",
                                      config::enum_name(s.algorithm), config::enum_name(s.op), most, kMaxFlowTransfers));
  }
  check_paths(s, cfg);
  sim::Engine engine;
  FlowNetwork net(engine, f, cfg);
  struct Done {
    void on_done(sim::Engine& e, std::uint64_t) { at = e.now(); }
    sim::Time at;
  } done;
  const sim::HandlerId id = engine.add_handler<&Done::on_done>(done);
  net.start(s, id, 0);
  engine.run();
  if (load) *load = net.load();
  if (max_link_ratio) *max_link_ratio = net.max_link_ratio();
  return done.at;
}

InNetwork in_network(const fabric::Fabric& f, const NetworkConfig& cfg) {
  return InNetwork{cfg.nvls && f.has_nvlink && !f.scaleup_mesh, cfg.sharp, f.scaleup_mesh,
                   std::max<std::int64_t>(1, cfg.qps_per_connection), cfg.model == Model::flow};
}

Algorithm choose_algorithm(const fabric::Fabric& f, const NetworkConfig& cfg, Op op,
                           const std::vector<std::int64_t>& ranks, sim::Bytes size) {
  AnalyticalTimer timer(f, cfg);
  return choose_algorithm(timer, op, ranks, size);
}

Algorithm choose_algorithm(AnalyticalTimer& timer, Op op, const std::vector<std::int64_t>& ranks, sim::Bytes size) {
  return choose_algorithm(timer, op, std::vector<const std::vector<std::int64_t>*>{&ranks}, size);
}

Algorithm choose_algorithm(AnalyticalTimer& timer, Op op, const std::vector<const std::vector<std::int64_t>*>& communicators,
                           sim::Bytes size) {
  CLUSTERSIM_CHECK(!communicators.empty(), "an algorithm is chosen for at least one communicator");
  const fabric::Fabric& f = timer.fabric();
  const NetworkConfig& cfg = timer.config();
  const InNetwork in = in_network(f, cfg);
  // NCCL's tuner chooses among ring, tree, CollNet (SHARP) and NVLS: recursive halving-
  // doubling is not one of its algorithms (it is MPI's), so auto, which stands for NCCL,
  // never picks it; --algo halving_doubling still runs it.
  // Nor is the hierarchical all-reduce (reduce-scatter, all-reduce across nodes, all-gather,
  // one after the other): NCCL's tree on whole nodes is its pipelined counterpart.
  std::vector<Algorithm> candidates = algorithms_for(op, *communicators.front(), f.gpus_per_node, in);
  std::erase(candidates, Algorithm::halving_doubling);
  if (op == Op::all_reduce) std::erase(candidates, Algorithm::hierarchical);
  // When none can plan (e.g. direct all-to-all beyond its rank limit), the first candidate
  // is returned and plan() explains why it cannot run.
  Algorithm best = candidates.empty() ? Algorithm::ring : candidates.front();
  sim::Time best_time = sim::Time::max();
  Schedule s;
  std::string why;
  for (Algorithm a : candidates) {
    // A candidate whose time is past the clock's range loses to any that is not; when every
    // one is, the first is returned, and timing it again reports the range error.
    sim::Time slowest = sim::Time::zero();
    bool runs = true;
    for (const std::vector<std::int64_t>* ranks : communicators) {
      if (!plan(op, a, *ranks, size, f.gpus_per_node, in, s, why)) {
        runs = false;
        break;
      }
      try {
        slowest = std::max(slowest, timer.time(s));
      } catch (const sim::TimeRangeError&) {
        runs = false;
        break;
      }
    }
    if (runs && slowest < best_time) {
      best_time = slowest;
      best = a;
    }
  }
  return best;
}

}  // namespace clustersim::network
