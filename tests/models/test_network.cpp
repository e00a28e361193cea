// The network model: alpha-beta equations, max-min sharing, agreement of the analytical and
// flow levels, oversubscription, conservation of bytes, capacity.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "models/network/network.hpp"

using namespace clustersim;
using namespace clustersim::network;
using fabric::FabricConfig;
using clustersim::test::Rel;
using fabric::Topology;

namespace {

cluster::ResolvedNode node(std::int64_t gpus, std::int64_t nics) {
  cluster::ResolvedNode n;
  n.spec.gpus = gpus;
  n.spec.nics = nics;
  n.spec.nic_bandwidth = sim::Bandwidth::of(50e9);
  n.spec.scaleup = hardware::ScaleUp::nvswitch;
  n.spec.scaleup_latency = sim::Time::from_ns(600);
  n.scaleup_bandwidth = sim::Bandwidth::of(450e9);
  return n;
}

fabric::Fabric build(const FabricConfig& cfg, std::int64_t nodes, std::int64_t gpus, std::int64_t nics) {
  std::vector<fabric::FabricError> errors;
  auto f = fabric::build_fabric(cfg, node(gpus, nics), nodes, errors);
  INFO((errors.empty() ? std::string() : errors.front().message));
  REQUIRE(f.has_value());
  return std::move(*f);
}

FabricConfig clos(std::int64_t radix, std::int64_t tiers, fabric::Ratio top = {}) {
  FabricConfig c;
  c.topology = Topology::fat_tree;
  c.radix = radix;
  c.tiers = tiers;
  c.oversubscription.top = top;
  c.link_latency = sim::Time::from_ns(700);
  return c;
}

// A dragonfly of a routers per group, p hosts and h global links per router, 100 ns links.
FabricConfig dragonfly(std::int64_t a, std::int64_t p, std::int64_t h, fabric::Routing routing) {
  FabricConfig c;
  c.topology = Topology::dragonfly;
  c.routers_per_group = a;
  c.hosts_per_router = p;
  c.global_links_per_router = h;
  c.routing = routing;
  c.link_latency = sim::Time::from_ns(100);
  return c;
}

// No fixed costs: times are the links' alone.
NetworkConfig bare() {
  NetworkConfig c;
  c.call_overhead = sim::Time::zero();
  c.step_latency = sim::Time::zero();
  return c;
}

Schedule planned(Op op, Algorithm a, const std::vector<std::int64_t>& ranks, double bytes, std::int64_t g) {
  Schedule s;
  std::string why;
  INFO(why);
  REQUIRE(plan(op, a, ranks, sim::Bytes::of(bytes), g, s, why));
  return s;
}

// Starts every schedule at time 0 on one flow-level network; returns when each finished (s).
std::vector<double> run_together(const fabric::Fabric& f, const NetworkConfig& cfg,
                                 const std::vector<const Schedule*>& schedules, double* max_ratio = nullptr) {
  sim::Engine engine;
  FlowNetwork net(engine, f, cfg);
  struct Done {
    void on(sim::Engine& e, std::uint64_t which) { at[which] = e.now().seconds(); }
    std::vector<double> at;
  } done;
  done.at.assign(schedules.size(), 0.0);
  const sim::HandlerId id = engine.add_handler<&Done::on>(done);
  for (std::size_t i = 0; i < schedules.size(); ++i) net.start(*schedules[i], id, i);
  engine.run();
  if (max_ratio) *max_ratio = net.max_link_ratio();
  return done.at;
}

// Bytes each GPU sends and receives over a whole schedule, repeats included.
std::pair<std::map<std::int64_t, double>, std::map<std::int64_t, double>> bytes_by_rank(const Schedule& s) {
  std::map<std::int64_t, double> sent;
  std::map<std::int64_t, double> received;
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) {
      sent[t.src] += t.bytes * static_cast<double>(p.repeat);
      received[t.dst] += t.bytes * static_cast<double>(p.repeat);
    }
  }
  return {sent, received};
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

TEST_CASE("one transfer over NVLink: latency + size / (line rate x efficiency)") {
  const fabric::Fabric f = build(clos(4, 2), 2, 8, 1);
  const NetworkConfig cfg = bare();
  // GPU 0 -> GPU 1 of the same node: the node's 600 ns GPU-to-GPU latency (two NVLink links
  // of 300 ns, through the switch), 450 GB/s x 0.93.
  const Schedule s = planned(Op::send_recv, Algorithm::direct, {0, 1}, 1e9, 8);
  const double expected = 600e-9 + 1e9 / (450e9 * 0.93);
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected).epsilon(0).margin(1e-9));  // sim::Time: 1 ns
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected).epsilon(1e-6));
}

TEST_CASE("send/recv on n ranks: every rank sends S to the next at once, as nccl-tests' sendrecv_perf") {
  const fabric::Fabric f = build(clos(4, 2), 2, 8, 1);
  const NetworkConfig cfg = bare();
  const Schedule s = planned(Op::send_recv, Algorithm::direct, iota(8), 1e9, 8);
  REQUIRE(s.phases.size() == 1);
  REQUIRE(s.phases[0].transfers.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(s.phases[0].transfers[i].src == static_cast<std::int64_t>(i));
    CHECK(s.phases[0].transfers[i].dst == static_cast<std::int64_t>((i + 1) % 8));
  }
  // Each GPU sends 1 GB on its NVLink and receives 1 GB on it (full duplex): the time of
  // one transfer.
  const double expected = 600e-9 + 1e9 / (450e9 * 0.93);
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected).epsilon(0).margin(1e-9));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected).epsilon(1e-6));
  // A pair sends one way only.
  CHECK(planned(Op::send_recv, Algorithm::direct, {3, 11}, 1e9, 8).phases[0].transfers.size() == 1);
}

TEST_CASE("two transfers into one GPU share its link: half each") {
  const fabric::Fabric f = build(clos(4, 2), 1, 8, 1);
  const NetworkConfig cfg = bare();
  Schedule s;
  s.phases.push_back(Phase{{{0, 2, 1e9}, {1, 2, 1e9}}, 1});
  // Both cross the NVSwitch -> GPU 2 link: 2 x 1 GB at 418.5 GB/s.
  const double expected = 600e-9 + 2e9 / (450e9 * 0.93);
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected).epsilon(0).margin(1e-9));  // sim::Time: 1 ns
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected).epsilon(1e-6));
}

TEST_CASE("ring all-reduce behind one non-blocking switch: 2(n-1)/n S/B + 2(n-1) alpha") {
  // 8 single-GPU nodes on one radix-16 leaf: every transfer is GPU -> NIC -> leaf -> NIC -> GPU.
  const fabric::Fabric f = build(clos(16, 2), 8, 1, 1);
  const NetworkConfig cfg = bare();
  const double S = 256e6;
  const double n = 8;
  const double B = 50e9 * 0.94;
  const double alpha = 2 * 700e-9;  // two access links; host links have no latency
  const Schedule s = planned(Op::all_reduce, Algorithm::ring, iota(8), S, 1);
  const double expected = 2 * (n - 1) / n * S / B + 2 * (n - 1) * alpha;
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected).epsilon(1e-6));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected).epsilon(1e-3));
}

TEST_CASE("analytical and flow levels agree within 1% without contention, on every topology") {
  FabricConfig torus;
  torus.topology = Topology::torus;
  torus.dims = {4, 2};
  torus.link_latency = sim::Time::from_ns(100);
  FabricConfig dragonfly;
  dragonfly.topology = Topology::dragonfly;
  dragonfly.routers_per_group = 2;
  dragonfly.hosts_per_router = 4;
  dragonfly.global_links_per_router = 2;
  dragonfly.link_latency = sim::Time::from_ns(100);
  FabricConfig rail = clos(16, 2);
  rail.topology = Topology::rail_clos;
  const std::vector<std::pair<const char*, FabricConfig>> fabrics{
      {"fat tree", clos(16, 3)}, {"rail clos", rail}, {"torus", torus}, {"dragonfly", dragonfly}};
  for (const auto& [label, cfg] : fabrics) {
    CAPTURE(label);
    const fabric::Fabric f = build(cfg, 8, 4, 4);
    NetworkConfig net;  // with the default overheads
    for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical}) {
      CAPTURE(static_cast<int>(a));
      const Schedule s = planned(Op::all_reduce, a, iota(32), 64e6, 4);
      const double an = analytical_time(f, net, s).seconds();
      const double fl = flow_time(f, net, s).seconds();
      CHECK(fl == Rel(an).epsilon(0.01));
    }
  }
}

TEST_CASE("an oversubscribed 2:1 Clos slows a ring across leaves by the ratio, not one inside a leaf") {
  // Radix 3 at 1:2: each leaf has 2 endpoints and 1 uplink.
  const fabric::Fabric f = build(clos(3, 2, fabric::Ratio{1, 2}), 4, 1, 1);
  const NetworkConfig cfg = bare();
  const double S = 100e6;
  // Inside a leaf: ranks 0 and 1 share leaf 0.
  const Schedule inside = planned(Op::all_gather, Algorithm::ring, {0, 1}, S, 1);
  // Across leaves, alternating: 0 (leaf 0), 2 (leaf 1), 1 (leaf 0), 3 (leaf 1): every step
  // sends both of a leaf's endpoints up its one uplink.
  const Schedule across = planned(Op::all_gather, Algorithm::ring, {0, 2, 1, 3}, S, 1);
  const double B = 50e9 * 0.94;
  // all-gather ring: (n-1) steps of S/n.
  CHECK(flow_time(f, cfg, inside).seconds() == Rel(S / 2 / B + 2 * 700e-9).epsilon(1e-3));
  const double step_across = flow_time(f, cfg, across).seconds() / 3;
  const double step_alone = S / 4 / B;
  CHECK(step_across == Rel(2 * step_alone + 4 * 700e-9).epsilon(1e-3));
  CHECK(analytical_time(f, cfg, across).seconds() == Rel(3 * (2 * step_alone + 4 * 700e-9)).epsilon(1e-6));
}

TEST_CASE("every collective: each rank sends and receives what its algorithm prescribes, bytes conserved") {
  const std::vector<std::int64_t> ranks = iota(16);
  const double S = 64e6;
  struct Case {
    Op op;
    Algorithm a;
    double per_rank;  // bytes each rank sends (= receives)
  };
  const double n = 16;
  const Case cases[] = {
      // Rings on whole nodes: with PXN the hop out of a node (1 of the g = 4 hops a ring
      // makes per node) is relayed over NVLink first, so each GPU also sends and receives
      // one relayed copy per step: (g + 1) / g of the ring's bytes.
      {Op::all_reduce, Algorithm::ring, 2 * (n - 1) / n * S * 5 / 4},
      {Op::all_reduce, Algorithm::halving_doubling, 2 * (n - 1) / n * S},
      {Op::reduce_scatter, Algorithm::ring, (n - 1) / n * S * 5 / 4},
      {Op::all_gather, Algorithm::halving_doubling, (n - 1) / n * S},
      {Op::all_to_all, Algorithm::direct, (n - 1) / n * S},
      // 4 nodes of 4: (g-1) x nodes x S/n inside the node + (nodes-1) x g x S/n across.
      {Op::all_to_all, Algorithm::hierarchical, 3 * 4 * S / n + 3 * 4 * S / n},
      // Reduce-scatter and all-gather inside the node, (g-1)/g S each, and the ring
      // all-reduce of S/g across the 4 nodes, 2 (4-1)/4 S/g.
      {Op::all_reduce, Algorithm::hierarchical, 2 * 3 * S / 4 + 2 * 3 * (S / 4) / 4},
  };
  for (const Case& c : cases) {
    CAPTURE(static_cast<int>(c.op));
    CAPTURE(static_cast<int>(c.a));
    const Schedule s = planned(c.op, c.a, ranks, S, 4);
    const auto [sent, received] = bytes_by_rank(s);
    for (std::int64_t r : ranks) {
      CHECK(sent.at(r) == Rel(c.per_rank));
      CHECK(received.at(r) == Rel(c.per_rank));
    }
  }
  // NCCL's tree all-reduce on 4 nodes of 4: every GPU sends 2S inside its node (the chain
  // every byte climbs and comes back down);
  // across nodes NCCL's trees 0 -> 2 -> {1, 3} and 3 -> 1 -> {2, 0} make nodes 1 and 2 send
  // (and receive) 4 x S/2g per GPU, nodes 0 and 3 2 x S/2g.
  {
    const Schedule s = planned(Op::all_reduce, Algorithm::tree, ranks, S, 4);
    const auto [sent, received] = bytes_by_rank(s);
    const double units[] = {2, 4, 4, 2};
    for (std::int64_t r : ranks) {
      CAPTURE(r);
      const double expected = 2 * S + units[r / 4] * S / 8;
      CHECK(sent.at(r) == Rel(expected));
      CHECK(received.at(r) == Rel(expected));
    }
  }
  // The double binary tree over 16 nodes of one rank (a DP group under TP): no chain, one
  // rail carrying S; C = ceil((S/2) / 512 KiB) = 62 chunks per tree, depth d = 4; reduce up
  // and broadcast down pipelined together, 2d + C - 1 = 69 steps; each of the 2 x (n-1)
  // tree edges carries S/2 each way in all: 2 x 2(n-1) x S/2 bytes.
  const Schedule tree = planned(Op::all_reduce, Algorithm::tree, ranks, S, 1);
  REQUIRE(tree.phases.size() == 1);
  CHECK(tree.phases[0].repeat == 69);
  CHECK(tree.phases[0].streamed == 61);
  CHECK(tree.bytes_sent() == Rel(2 * 2 * (n - 1) * (S / 2)));
  // Broadcast: on one rank per node (one ring), every ring edge but the one into the root
  // carries S once. On 4 nodes of 4, 4 rings each carry S/4 from the root, their hops
  // between nodes relayed onto their rail (PXN): every rank but the root receives at least
  // S, and the relays at most double the bytes.
  const Schedule line = planned(Op::broadcast, Algorithm::ring, {0, 4, 8, 12}, S, 4);
  CHECK(line.bytes_sent() == Rel(3 * S));
  const Schedule bcast = planned(Op::broadcast, Algorithm::ring, ranks, S, 4);
  const auto [sent, received] = bytes_by_rank(bcast);
  for (std::int64_t r = 1; r < 16; ++r) CHECK(received.at(r) >= S * (1 - 1e-12));
  CHECK(bcast.bytes_sent() <= 2 * (n - 1) * S);
}

TEST_CASE("the tree all-reduce is NCCL's double binary tree: each rank inner in one tree at most, few edges between nodes") {
  // 64 ranks, one per node (a DP group under TP). The phase lists tree 0's 63 edges, each
  // child -> parent (reduce) then parent -> child (broadcast), then tree 1's. NCCL's in-order
  // trees join positions 2^k apart: 11 of each tree's 63 edges would leave a node of 8
  // consecutive ranks (positions 4 -> 8, 20 -> 24, ..., 16 -> 32, ...); a heap-ordered tree
  // (parent (i-1)/2) had 56 of 63 crossing, and over 16,384 GPUs its traffic filled the core.
  const std::int64_t n = 64;
  const Schedule tree = planned(Op::all_reduce, Algorithm::tree, iota(n), 64e6, 1);
  REQUIRE(tree.phases.size() == 1);
  const std::vector<Transfer>& both = tree.phases[0].transfers;
  REQUIRE(both.size() == static_cast<std::size_t>(4 * (n - 1)));
  std::vector<Transfer> up;
  for (std::size_t i = 0; i < both.size(); i += 2) {
    // Every edge carries the broadcast back down.
    CHECK(both[i + 1].src == both[i].dst);
    CHECK(both[i + 1].dst == both[i].src);
    CHECK(both[i + 1].bytes == both[i].bytes);
    up.push_back(both[i]);
  }
  std::vector<int> inner(static_cast<std::size_t>(n), 0);
  for (int t = 0; t < 2; ++t) {
    std::vector<bool> has_child(static_cast<std::size_t>(n), false);
    std::vector<int> parents(static_cast<std::size_t>(n), 0);
    int crossing = 0;
    for (std::size_t i = static_cast<std::size_t>(t * (n - 1)); i < static_cast<std::size_t>((t + 1) * (n - 1)); ++i) {
      has_child[static_cast<std::size_t>(up[i].dst)] = true;
      ++parents[static_cast<std::size_t>(up[i].src)];
      if (up[i].src / 8 != up[i].dst / 8) ++crossing;
    }
    CAPTURE(t);
    CHECK(crossing == 11);
    // A tree: one root without a parent, every other rank with exactly one.
    CHECK(std::count(parents.begin(), parents.end(), 0) == 1);
    CHECK(std::count(parents.begin(), parents.end(), 1) == n - 1);
    for (std::int64_t r = 0; r < n; ++r) inner[static_cast<std::size_t>(r)] += has_child[static_cast<std::size_t>(r)] ? 1 : 0;
  }
  CHECK(*std::max_element(inner.begin(), inner.end()) == 1);
}

TEST_CASE("no link is ever above capacity in the flow model, even under contention") {
  const fabric::Fabric f = build(clos(8, 2, fabric::Ratio{1, 3}), 12, 4, 2);
  NetworkConfig cfg;
  const Schedule s = planned(Op::all_to_all, Algorithm::direct, iota(48), 48e6, 4);
  double ratio = 0.0;
  LinkLoad load;
  flow_time(f, cfg, s, &load, &ratio);
  CHECK(ratio > 0.99);  // something saturated
  CHECK(ratio <= 1.0 + 1e-9);
  double bytes = 0.0;
  for (double b : load.bytes) bytes += b;
  CHECK(bytes > 0.0);
}

TEST_CASE("the flow model's link loads stay within capacity under UGAL, whose routes depend on the load") {
  // A ring's repeated steps, alone on the network, are charged on the routes their first
  // step took: re-routing them on an idle network sent UGAL's bytes down minimal routes the
  // flows never used (128% of a global link's capacity reported on dragonfly-1k).
  const fabric::Fabric f = build(dragonfly(4, 2, 2, fabric::Routing::ugal), 16, 4, 4);
  const NetworkConfig cfg;
  const Schedule s = planned(Op::all_reduce, Algorithm::ring, iota(64), 1e9, 4);
  LinkLoad load;
  const double t = flow_time(f, cfg, s, &load).seconds();
  double most = 0.0;
  for (std::size_t l = 0; l < load.bytes.size(); ++l) {
    most = std::max(most, load.bytes[l] / (link_capacity(f.links[l], cfg) * t));
  }
  CAPTURE(most);
  CHECK(most > 0.5);
  CHECK(most <= 1.0 + 1e-6);
}

TEST_CASE("UGAL is never materially slower than the better of minimal and Valiant routing") {
  // 9 groups of 4 routers, 2 hosts and 2 global links per router: one global link between
  // each pair of groups. An all-to-all between two groups is adversarial for minimal
  // routing (every flow on the one link between them), a ring across the groups less so.
  const auto fabric_with = [](fabric::Routing routing) { return build(dragonfly(4, 2, 2, routing), 36, 2, 2); };
  const NetworkConfig cfg;
  const std::vector<std::pair<Op, std::int64_t>> cases{{Op::all_to_all, 16}, {Op::all_to_all, 72}, {Op::all_reduce, 72}};
  for (const auto& [op, n] : cases) {
    CAPTURE(n);
    const Schedule s =
        planned(op, op == Op::all_to_all ? Algorithm::direct : Algorithm::ring, iota(n), 1e9, 2);
    const double minimal = analytical_time(fabric_with(fabric::Routing::minimal), cfg, s).seconds();
    const double valiant = analytical_time(fabric_with(fabric::Routing::valiant), cfg, s).seconds();
    const double ugal = analytical_time(fabric_with(fabric::Routing::ugal), cfg, s).seconds();
    CAPTURE(minimal);
    CAPTURE(valiant);
    CAPTURE(ugal);
    // Seeing its phase's demand (network::PendingLoad), UGAL matches the better policy on
    // each: Valiant between two groups (the adversarial case), minimal on the uniform
    // all-to-all (1.4x minimal's time when each flow saw only the flows before it).
    CHECK(ugal <= 1.05 * std::min(minimal, valiant));
  }
}

TEST_CASE("tree on whole nodes is NCCL's tree; hierarchical its three stages in turn; on partial nodes NCCL's tree on fewer rails") {
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  const NetworkConfig cfg;
  const Schedule tree = planned(Op::all_reduce, Algorithm::tree, iota(16), 8e9, 8);
  const Schedule hier = planned(Op::all_reduce, Algorithm::hierarchical, iota(16), 8e9, 8);
  CHECK(tree.algorithm == Algorithm::tree);
  REQUIRE(tree.phases.size() == 1);  // chain and trees, pipelined together
  REQUIRE(hier.phases.size() == 3);  // reduce-scatter, across, all-gather
  CHECK(hier.phases[0].repeat == 7);
  CHECK(hier.phases[1].repeat == 2);
  CHECK(hier.phases[2].repeat == 7);
  // Its stages do not overlap: slower than NCCL's pipelined tree, so auto takes the tree.
  CHECK(analytical_time(f, cfg, tree) < analytical_time(f, cfg, hier));
  CHECK(choose_algorithm(f, cfg, Op::all_reduce, iota(16), sim::Bytes::of(8e9)) == Algorithm::tree);
  // The tree over 16 ranks' positions had sent each node's share through one NIC: slower
  // than the ring by far; NCCL's tree is not.
  const Schedule ring = planned(Op::all_reduce, Algorithm::ring, iota(16), 8e9, 8);
  CHECK(analytical_time(f, cfg, tree) < analytical_time(f, cfg, ring));
  // 12 ranks, a node and a half: NCCL's tree on 4 rails, the fewest ranks a node holds
  // (rail i on each node's i-th rank), chains of 8 and 4. Across the 2 nodes only GPUs 0-3
  // and 8-11 send, each S/4 in all (S/8 per tree, up and down).
  const Schedule partial = planned(Op::all_reduce, Algorithm::tree, iota(12), 8e9, 8);
  REQUIRE(partial.phases.size() == 1);
  std::map<std::int64_t, double> across;
  for (const Transfer& t : partial.phases[0].transfers) {
    if (t.src / 8 != t.dst / 8) across[t.src] += t.bytes * static_cast<double>(partial.phases[0].repeat);
  }
  REQUIRE(across.size() == 8);
  for (const auto& [gpu, bytes] : across) {
    CAPTURE(gpu);
    CHECK((gpu % 8) < 4);
    CHECK(bytes == Rel(8e9 / 4));
  }
  // A last node short of one GPU costs the tree a rail, as it costs the ring: 8/7 of the
  // time at most on 31 GPUs of 32 (it fell back to a tree over the ranks, each
  // node-crossing edge on one GPU's NIC: 8 to 18 times slower on 15 to 127 GPUs). More
  // GPUs on a node never make it slower where no two rails hash onto one uplink (a rail-optimised
  // Clos: each rail its own leaf; on the Clos above, 7 rails on 8 uplinks may collide
  // where 6 did not, as ECMP does).
  const double whole = analytical_time(f, cfg, planned(Op::all_reduce, Algorithm::tree, iota(32), 8e9, 8)).seconds();
  const double short_one = analytical_time(f, cfg, planned(Op::all_reduce, Algorithm::tree, iota(31), 8e9, 8)).seconds();
  const double ring_short = analytical_time(f, cfg, planned(Op::all_reduce, Algorithm::ring, iota(31), 8e9, 8)).seconds();
  CHECK(short_one <= whole * 8 / 7 * (1 + 1e-9));
  CHECK(short_one >= whole);
  CHECK(short_one <= ring_short * 1.1);
  FabricConfig rails = clos(16, 2);
  rails.topology = Topology::rail_clos;
  const fabric::Fabric r = build(rails, 4, 8, 8);
  double previous = 0.0;
  for (std::int64_t n = 25; n <= 32; ++n) {  // the fourth node fills up: 1 to 8 rails
    CAPTURE(n);
    const double t = analytical_time(r, cfg, planned(Op::all_reduce, Algorithm::tree, iota(n), 8e9, 8)).seconds();
    if (n > 25) CHECK(t <= previous * (1 + 1e-9));
    previous = t;
  }
}

TEST_CASE("bus bandwidth factors are nccl-tests'") {
  CHECK(bus_factor(Op::all_reduce, 8) == Rel(2.0 * 7 / 8));
  CHECK(bus_factor(Op::all_gather, 8) == Rel(7.0 / 8));
  CHECK(bus_factor(Op::reduce_scatter, 4) == Rel(3.0 / 4));
  CHECK(bus_factor(Op::broadcast, 8) == 1.0);
}

TEST_CASE("auto picks the fastest algorithm; unsupported algorithms are refused with a reason") {
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  NetworkConfig cfg;
  const auto ranks = iota(32);
  const Algorithm large = choose_algorithm(f, cfg, Op::all_reduce, ranks, sim::Bytes::of(1e9));
  Schedule s;
  std::string why;
  sim::Time best = sim::Time::max();
  for (Algorithm a : algorithms_for(Op::all_reduce, ranks, 8)) {
    if (a == Algorithm::halving_doubling) continue;  // not NCCL's: auto never takes it (below)
    REQUIRE(plan(Op::all_reduce, a, ranks, sim::Bytes::of(1e9), 8, s, why));
    best = std::min(best, analytical_time(f, cfg, s));
  }
  REQUIRE(plan(Op::all_reduce, large, ranks, sim::Bytes::of(1e9), 8, s, why));
  CHECK(analytical_time(f, cfg, s) == best);
  CHECK_FALSE(plan(Op::all_reduce, Algorithm::halving_doubling, iota(12), sim::Bytes::of(1e6), 8, s, why));
  CHECK(why == "halving_doubling cannot run all_reduce on 12 ranks (it needs a power-of-two number of ranks); it can run ring, tree");
  // A 4 KiB all-reduce on 32 ranks is latency-bound: halving-doubling's 10 steps beat every
  // NCCL algorithm, yet auto, which stands for NCCL's tuner, does not take it.
  const sim::Bytes small = sim::Bytes::of(4096);
  const Algorithm picked = choose_algorithm(f, cfg, Op::all_reduce, ranks, small);
  CHECK(picked != Algorithm::halving_doubling);
  REQUIRE(plan(Op::all_reduce, picked, ranks, small, 8, s, why));
  const sim::Time auto_time = analytical_time(f, cfg, s);
  REQUIRE(plan(Op::all_reduce, Algorithm::halving_doubling, ranks, small, 8, s, why));
  CHECK(analytical_time(f, cfg, s) < auto_time);
}

TEST_CASE("halving-doubling halves with the nearest partners first: the big halves stay inside the node") {
  // 32 ranks in node order on 4 nodes of 8: the reduce-scatter's steps pair ranks 1, 2, 4, 8
  // and 16 apart with S/2, S/4, ..., S/32 (MPICH's Rabenseifner all-reduce), so only S/16 +
  // S/32 cross the NICs; the all-gather mirrors it. Far partners first sent S/2 + S/4 over
  // them, 3.8x slower on 4 DGX-like nodes.
  const double S = 1 << 30;
  const Schedule s = planned(Op::all_reduce, Algorithm::halving_doubling, iota(32), S, 8);
  REQUIRE(s.phases.size() == 10);
  for (std::size_t k = 0; k < 5; ++k) {
    const std::int64_t dist = std::int64_t{1} << k;
    for (const Transfer& t : s.phases[k].transfers) {
      CHECK(t.dst == (t.src ^ dist));
      CHECK(t.bytes == Rel(S / static_cast<double>(2 * dist)));
    }
    for (const Transfer& t : s.phases[9 - k].transfers) {  // the all-gather mirrors it
      CHECK(t.dst == (t.src ^ dist));
      CHECK(t.bytes == Rel(S / static_cast<double>(2 * dist)));
    }
  }
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  NetworkConfig cfg;
  std::string why;
  Schedule hd;
  Schedule ring;
  REQUIRE(plan(Op::all_reduce, Algorithm::halving_doubling, iota(32), sim::Bytes::of(S), 8, hd, why));
  REQUIRE(plan(Op::all_reduce, Algorithm::ring, iota(32), sim::Bytes::of(S), 8, ring, why));
  // Across nodes each GPU moves (1/16 + 1/32) S each way, so it is within twice the ring's time
  // (1.6x here); far partners first moved (1/2 + 1/4) S over the NICs, 6x the ring's.
  CHECK(analytical_time(f, cfg, hd).seconds() < 2.0 * analytical_time(f, cfg, ring).seconds());
}

TEST_CASE("send/recv: a send to another node's other rail is relayed onto the receiver's rail (PXN)") {
  // A ring of sends over two 8-GPU nodes: GPU 7 sends to GPU 8 (node 1, local 0) by way of
  // GPU 0, whose NIC is on rail 0, and GPU 15 to GPU 0 by way of GPU 8. On a rail Clos the
  // ring then runs at a NIC's rate; crossing rails it went up to the spines.
  const std::vector<std::int64_t> ranks = iota(16);
  const Schedule s = planned(Op::send_recv, Algorithm::direct, ranks, 1e9, 8);
  REQUIRE(s.phases.size() == 1);
  int relays = 0;
  for (const Transfer& t : s.phases[0].transfers) {
    if (t.feeds_next) ++relays;
    if (t.src / 8 != t.dst / 8) CHECK(t.src % 8 == t.dst % 8);
  }
  CHECK(relays == 2);
  CHECK(s.phases[0].transfers.size() == 18);
  FabricConfig rail = clos(16, 2, fabric::Ratio{1, 3});
  rail.topology = Topology::rail_clos;
  const fabric::Fabric f = build(rail, 2, 8, 8);
  const NetworkConfig cfg = bare();
  const double nic = 50e9 * cfg.scaleout_efficiency;
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(1e9 / nic).epsilon(0.01));
  // A pair has no relay in its communicator: it crosses rails.
  const Schedule pair = planned(Op::send_recv, Algorithm::direct, {7, 8}, 1e9, 8);
  REQUIRE(pair.phases[0].transfers.size() == 1);
  CHECK(pair.phases[0].transfers[0].src == 7);
}

TEST_CASE("a ring over the same GPUs of every node: one channel per GPU, every hop between nodes on its rail") {
  // GPUs 0 and 4 of four 8-GPU nodes: a data-parallel group under tp 4. Two rings, each
  // leaving every node by a different GPU's NIC; a hop that would change rails is relayed
  // over NVLink to the sender node's GPU on the receiver's rail (PXN).
  const std::vector<std::int64_t> ranks = {0, 4, 8, 12, 16, 20, 24, 28};
  const double S = 64e6;
  const double n = 8;
  const Schedule s = planned(Op::all_reduce, Algorithm::ring, ranks, S, 8);
  REQUIRE(s.phases.size() == 1);
  CHECK(s.phases[0].repeat == 14);
  int between_nodes = 0;
  for (const Transfer& t : s.phases[0].transfers) {
    CHECK(t.bytes == Rel(S / n / 2));
    if (t.src / 8 == t.dst / 8) continue;
    ++between_nodes;
    CHECK(t.src % 8 == t.dst % 8);
  }
  CHECK(between_nodes == 2 * 4);  // two rings, four node boundaries each
  // Each NIC carries one ring: on a rail Clos (no cross-rail traffic) the ring takes
  // 14 steps of S/16 over a NIC, as fast as both NICs of the node allow. Its latency follows
  // the ring (Phase::latency_along): of its 8 hops, 4 inside a node (600 ns over NVLink) and
  // 4 between nodes, each relayed: 600 ns over NVLink to the relay, then two 700 ns links
  // (NIC to rail leaf to NIC), one after the other; per step the mean, 1300 ns.
  FabricConfig rail = clos(16, 2);
  rail.topology = Topology::rail_clos;
  const fabric::Fabric f = build(rail, 4, 8, 8);
  const NetworkConfig cfg = bare();
  const double nic = 50e9 * cfg.scaleout_efficiency;
  const double t = analytical_time(f, cfg, s).seconds();
  const double hop = (4 * 600e-9 + 4 * (600e-9 + 2 * 700e-9)) / 8;
  CHECK(t == Rel(14 * (S / n / 2 / nic + hop)).epsilon(1e-3));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(t).epsilon(0.01));
  // 16 bytes: latency alone, where the relays' NVLink legs are 23% of a step; the flow model
  // charges them too.
  const Schedule tiny = planned(Op::all_reduce, Algorithm::ring, ranks, 16, 8);
  const double t_tiny = analytical_time(f, cfg, tiny).seconds();
  CHECK(t_tiny == Rel(14 * hop).epsilon(1e-3));
  CHECK(flow_time(f, cfg, tiny).seconds() == Rel(t_tiny).epsilon(1e-3));
  // Not the same GPUs on every node, but two on each: still two rings. Ring 0 (0 4 | 8 13)
  // relays its two hops between nodes onto the receiver's rail through members (GPUs 0 and
  // 8); ring 1 (4 0 | 13 8) cannot (GPUs 5 and 12 are not members) and crosses rails:
  // 4 + 2 + 4 transfers.
  const Schedule uneven = planned(Op::all_reduce, Algorithm::ring, {0, 4, 8, 13}, S, 8);
  CHECK(uneven.phases[0].transfers.size() == 4 + 2 + 4);
  std::int64_t cross_rail = 0;
  for (const Transfer& x : uneven.phases[0].transfers) cross_rail += x.src / 8 != x.dst / 8 && x.src % 8 != x.dst % 8;
  CHECK(cross_rail == 2);
  // One rank on a node: one ring in the communicator's order.
  CHECK(planned(Op::all_reduce, Algorithm::ring, {0, 4, 8}, S, 8).phases[0].transfers.size() == 3);
}

TEST_CASE("a ring over nodes that hold different numbers of GPUs runs one channel per GPU of the emptiest") {
  // 63 GPUs: 7 whole nodes of 8 and one of 7. NCCL's channels still spread over the NICs:
  // 7 rings, each carrying S/7 and entering every node at its c-th GPU, so that 7 NICs of
  // each node carry one ring each: 2(n-1) steps of S/(7n) at a NIC's rate, and of the mean
  // latency of a ring's 63 hops: 55 inside a node (600 ns) and 8 relayed between nodes (600
  // ns over NVLink, then two 700 ns links). A broadcast
  // uses the same 7 rings: about 7 NICs' worth of bandwidth, not one.
  FabricConfig rail = clos(64, 2);
  rail.topology = Topology::rail_clos;
  const fabric::Fabric f = build(rail, 8, 8, 8);
  const NetworkConfig cfg = bare();
  const double nic = 50e9 * cfg.scaleout_efficiency;
  const double S = 1073741824.0;
  const double n = 63;
  const Schedule s = planned(Op::all_reduce, Algorithm::ring, iota(63), S, 8);
  REQUIRE(s.phases.size() == 1);
  std::int64_t between = 0;
  for (const Transfer& x : s.phases[0].transfers) {
    CHECK(x.bytes == Rel(S / n / 7));
    if (x.src / 8 == x.dst / 8) continue;
    ++between;
    CHECK(x.src % 8 == x.dst % 8);  // on its rail
  }
  CHECK(between == 7 * 8);  // 7 rings, 8 node boundaries each
  const double t = analytical_time(f, cfg, s).seconds();
  const double hop = (55 * 600e-9 + 8 * (600e-9 + 2 * 700e-9)) / 63;
  CHECK(t == Rel(2 * (n - 1) * (S / n / 7 / nic + hop)).epsilon(1e-3));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(t).epsilon(0.01));
  const Schedule b = planned(Op::broadcast, Algorithm::ring, iota(63), S, 8);
  const double tb = analytical_time(f, cfg, b).seconds();
  CHECK(S / tb > 6.5 * nic);
  CHECK(S / tb < 7 * nic);
}

TEST_CASE("two data-parallel rings on an oversubscribed Clos slow each other down; apart they do not") {
  // Radix 4 at 1:1 would be non-blocking; at 1:3 each leaf has 3 endpoints and 1 uplink.
  const fabric::Fabric f = build(clos(4, 2, fabric::Ratio{1, 3}), 6, 1, 1);
  const NetworkConfig cfg = bare();
  // Ring A: ranks 0 (leaf 0) and 3 (leaf 1); ring B: ranks 1 (leaf 0) and 4 (leaf 1). Both
  // cross leaf 0's single uplink in both directions.
  const Schedule a = planned(Op::all_gather, Algorithm::ring, {0, 3}, 100e6, 1);
  const Schedule b = planned(Op::all_gather, Algorithm::ring, {1, 4}, 100e6, 1);
  const double alone = flow_time(f, cfg, a).seconds();
  double max_ratio = 0.0;
  const std::vector<double> done = run_together(f, cfg, {&a, &b}, &max_ratio);
  // Sharing the uplink halves each ring's rate: twice the bandwidth time (latency aside).
  const double latency = 2 * 700e-9 + 2 * 700e-9;
  CHECK(done[0] - latency == Rel(2 * (alone - latency)).epsilon(1e-3));
  CHECK(done[1] == Rel(done[0]).epsilon(1e-6));
  CHECK(max_ratio <= 1.0 + 1e-9);
}

TEST_CASE("a repeated step slowed by other traffic is not reused as the template of the others") {
  // Radix 3 at 1:2: leaves of 2 endpoints and 1 uplink. A 2-rank ring across the uplink
  // (2 steps of S/2) and, at the same time, a shorter send/recv over the same uplink.
  const fabric::Fabric f = build(clos(3, 2, fabric::Ratio{1, 2}), 4, 1, 1);
  const NetworkConfig cfg = bare();
  const Schedule ring = planned(Op::all_reduce, Algorithm::ring, {0, 2}, 200e6, 1);
  const Schedule burst = planned(Op::send_recv, Algorithm::direct, {1, 3}, 25e6, 1);
  const std::vector<double> done = run_together(f, cfg, {&ring, &burst});
  const double B = 50e9 * 0.94;
  const double lat = 4 * 700e-9;
  // Step 1: 100 MB shares the uplink with 25 MB until the burst drains (after 2 x 25 MB at
  // B/2 each), then runs alone: (25e6 x 2 + 75e6) / B. Step 2 runs alone: 100e6 / B.
  const double step1 = (2 * 25e6 + 75e6) / B + lat;
  const double step2 = 100e6 / B + lat;
  CHECK(done[0] == Rel(step1 + step2).epsilon(1e-4));
}

TEST_CASE("hierarchical all-to-all delivers every rank's data and sends fewer network messages") {
  const auto ranks = iota(32);
  const Schedule direct = planned(Op::all_to_all, Algorithm::direct, ranks, 32e6, 8);
  const Schedule hier = planned(Op::all_to_all, Algorithm::hierarchical, ranks, 32e6, 8);
  std::size_t direct_network = 0;
  std::size_t hier_network = 0;
  for (const Transfer& t : direct.phases[0].transfers) direct_network += t.src / 8 != t.dst / 8 ? 1 : 0;
  for (const Phase& p : hier.phases) {
    for (const Transfer& t : p.transfers) hier_network += t.src / 8 != t.dst / 8 ? 1 : 0;
  }
  // Direct: 32 x 24 messages leave their node; hierarchical: 32 x 3 (one per other node).
  CHECK(direct_network == 32 * 24);
  CHECK(hier_network == 32 * 3);
  // Both move the same bytes across the network: 32 ranks x 24 peers x S/32.
  double direct_bytes = 0.0;
  double hier_bytes = 0.0;
  for (const Transfer& t : direct.phases[0].transfers) direct_bytes += t.src / 8 != t.dst / 8 ? t.bytes : 0.0;
  for (const Phase& p : hier.phases) {
    for (const Transfer& t : p.transfers) hier_bytes += t.src / 8 != t.dst / 8 ? t.bytes : 0.0;
  }
  CHECK(hier_bytes == Rel(direct_bytes));
  // The NVLink leg and the network leg overlap (NCCL's PXN relay forwards chunk by chunk):
  // on 2 nodes of 8 at 1 GiB, each GPU sends 7 x 2 S/16 over NVLink and 8 S/16 through its
  // NIC; the time is the slower leg's (the NIC's) plus microseconds of latency, not the sum.
  // (Both nodes under one leaf: ECMP over spines would add its own collisions.)
  const fabric::Fabric f = build(clos(32, 2), 2, 8, 8);
  const NetworkConfig cfg = bare();
  const double S = 1073741824.0;
  const Schedule two = planned(Op::all_to_all, Algorithm::hierarchical, iota(16), S, 8);
  const double nic = 8 * S / 16 / (50e9 * cfg.scaleout_efficiency);
  const double nvlink = 7 * 2 * S / 16 / (450e9 * cfg.scaleup_efficiency);
  REQUIRE(nic > 2 * nvlink);
  CHECK(analytical_time(f, cfg, two).seconds() == Rel(nic).epsilon(1e-3));
  CHECK(flow_time(f, cfg, two).seconds() == Rel(nic).epsilon(1e-3));
}

// --- In-network reduction -----------------------------------------------------------------

namespace {

// Bytes each GPU sends and receives in `s` (hops into a switch are received by the switch,
// hops out of one are sent by it), and bytes into and out of the switches.
struct Traffic {
  std::map<std::int64_t, double> sent, received;
  double into_switch = 0.0, out_of_switch = 0.0;
};

Traffic traffic(const Schedule& s) {
  Traffic t;
  for (const Phase& p : s.phases) {
    for (const Transfer& x : p.transfers) {
      const double b = x.bytes * static_cast<double>(p.repeat);
      if (x.sent_by_gpu()) t.sent[x.src] += b;
      if (x.received_by_gpu()) t.received[x.dst] += b;
      if (!x.received_by_gpu()) t.into_switch += b;
      if (!x.sent_by_gpu()) t.out_of_switch += b;
    }
  }
  return t;
}

Schedule planned_in(Algorithm a, const std::vector<std::int64_t>& ranks, double bytes, std::int64_t g,
                    InNetwork in) {
  Schedule s;
  std::string why;
  const bool ok = plan(Op::all_reduce, a, ranks, sim::Bytes::of(bytes), g, in, s, why);
  INFO(why);
  REQUIRE(ok);
  return s;
}

}  // namespace

TEST_CASE("in-network reduction is off by default and offered only where it can run") {
  const NetworkConfig defaults;
  CHECK_FALSE(defaults.nvls);
  CHECK_FALSE(defaults.sharp);
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  CHECK_FALSE(in_network(f, defaults).nvls);
  for (Algorithm a : algorithms_for(Op::all_reduce, iota(8), 8)) CHECK((a != Algorithm::nvls && a != Algorithm::sharp));
  // NVLS needs every rank in one NVSwitch domain; SHARP whole nodes, more than one.
  const InNetwork both{true, true};
  const auto has = [](const std::vector<Algorithm>& v, Algorithm a) { return std::find(v.begin(), v.end(), a) != v.end(); };
  CHECK(has(algorithms_for(Op::all_reduce, iota(8), 8, both), Algorithm::nvls));
  CHECK_FALSE(has(algorithms_for(Op::all_reduce, iota(8), 8, both), Algorithm::sharp));
  CHECK_FALSE(has(algorithms_for(Op::all_reduce, iota(16), 8, both), Algorithm::nvls));
  CHECK(has(algorithms_for(Op::all_reduce, iota(16), 8, both), Algorithm::sharp));
  // On nodes of one GPU every rank is a whole node; a DP group under TP holds one GPU of
  // each node: SHARP takes both (it needed whole nodes), but not ranks spread unevenly.
  CHECK(has(algorithms_for(Op::all_reduce, iota(4), 1, both), Algorithm::sharp));
  CHECK_FALSE(has(algorithms_for(Op::all_reduce, iota(4), 1, InNetwork{}), Algorithm::sharp));
  const std::vector<std::int64_t> dp{3, 11, 19, 27};
  CHECK(has(algorithms_for(Op::all_reduce, dp, 8, both), Algorithm::sharp));
  CHECK_FALSE(has(algorithms_for(Op::all_reduce, {0, 1, 8}, 8, both), Algorithm::sharp));
  {
    // Each rank its node's only one: no NVLink stage, its whole S into the aggregation tree.
    Schedule dp_sharp;
    std::string reason;
    REQUIRE(plan(Op::all_reduce, Algorithm::sharp, dp, sim::Bytes::of(1e9), 8, both, dp_sharp, reason));
    REQUIRE(dp_sharp.phases.size() == 1);
    double into_tree = 0.0;
    for (const Transfer& t : dp_sharp.phases[0].transfers) {
      CHECK((t.src / 8 != t.dst / 8 || t.hop != Hop::gpu));  // nothing between GPUs of a node
      if (t.hop == Hop::fabric_in) into_tree += t.bytes;
    }
    CHECK(into_tree == Rel(4e9));
  }
  CHECK_FALSE(has(algorithms_for(Op::all_gather, iota(8), 8, both), Algorithm::nvls));
  Schedule s;
  std::string why;
  CHECK_FALSE(plan(Op::all_reduce, Algorithm::nvls, iota(8), sim::Bytes::of(1e6), 8, s, why));
  // On an Infinity-Fabric mesh there is no switch to reduce in.
  FabricConfig mesh_cfg = clos(16, 2);
  cluster::ResolvedNode mi = node(8, 8);
  mi.spec.scaleup = hardware::ScaleUp::infinity_fabric;
  std::vector<fabric::FabricError> errors;
  const auto mesh = fabric::build_fabric(mesh_cfg, mi, 2, errors);
  REQUIRE(mesh.has_value());
  NetworkConfig on;
  on.nvls = true;
  CHECK_FALSE(in_network(*mesh, on).nvls);
  CHECK(in_network(f, on).nvls);
}

TEST_CASE("in-network reduction conserves bytes: each GPU sends and receives what its algorithm prescribes") {
  const double S = 64e6;
  // NVLS on 8 GPUs: each sends S into the switch and receives the reduced S from it.
  const Traffic nvls = traffic(planned_in(Algorithm::nvls, iota(8), S, 8, {true, false}));
  for (std::int64_t r = 0; r < 8; ++r) {
    CHECK(nvls.sent.at(r) == Rel(S));
    CHECK(nvls.received.at(r) == Rel(S));
  }
  CHECK(nvls.into_switch == Rel(8 * S));
  CHECK(nvls.out_of_switch == Rel(8 * S));
  // SHARP on 4 nodes of 8: each GPU sends 2S/g to each of its g-1 node peers and S/g into
  // the tree, and receives as much: (g-1) 2S/g + S/g = (2g-1)/g S = 15/8 S.
  const Traffic sharp = traffic(planned_in(Algorithm::sharp, iota(32), S, 8, {false, true}));
  for (std::int64_t r = 0; r < 32; ++r) {
    CHECK(sharp.sent.at(r) == Rel(15.0 / 8 * S));
    CHECK(sharp.received.at(r) == Rel(15.0 / 8 * S));
  }
  CHECK(sharp.into_switch == Rel(sharp.out_of_switch));
  CHECK(sharp.into_switch == Rel(32 * S / 8));
}

TEST_CASE("NVLS all-reduce on one 8-GPU NVSwitch node: S / (B x e_nvls), busbw above the ring's") {
  const fabric::Fabric f = build(clos(16, 2), 2, 8, 8);
  NetworkConfig cfg = bare();
  cfg.nvls = true;
  const double S = 1073741824.0;
  const double B = 450e9;  // NVLink per direction
  const double e = cfg.nvls_efficiency;
  const double lat = cfg.nvls_latency.seconds();  // the pass through the switch: 25 us
  REQUIRE(lat > f.links[f.nvlink_base].latency.seconds());
  const Schedule nvls = planned_in(Algorithm::nvls, iota(8), S, 8, in_network(f, cfg));
  // time = the switch's latency + S / (B x e_nvls): every GPU's link into the switch and
  // out of it carries one transfer of S, bounded by the switch's reduction rate.
  const double expected = lat + S / (B * e);
  CHECK(analytical_time(f, cfg, nvls).seconds() == Rel(expected).epsilon(0).margin(1e-9));  // sim::Time: 1 ns
  CHECK(flow_time(f, cfg, nvls).seconds() == Rel(expected).epsilon(1e-6));
  // busbw = 2(n-1)/n S / time ~ 2 x 7/8 x 450 x 0.61 = 480 GB/s (NVIDIA's H100 figure);
  // the ring's is ~ B x scaleup_efficiency = 418.5 GB/s.
  const double nvls_busbw = S / analytical_time(f, cfg, nvls).seconds() * bus_factor(Op::all_reduce, 8);
  const Schedule ring = planned(Op::all_reduce, Algorithm::ring, iota(8), S, 8);
  const double ring_busbw = S / analytical_time(f, cfg, ring).seconds() * bus_factor(Op::all_reduce, 8);
  CHECK(nvls_busbw == Rel(480e9).epsilon(0.01));
  CHECK(ring_busbw == Rel(B * cfg.scaleup_efficiency).epsilon(0.01));
  CHECK(nvls_busbw > ring_busbw);
  // auto takes NVLS when enabled and faster, never when disabled.
  CHECK(choose_algorithm(f, cfg, Op::all_reduce, iota(8), sim::Bytes::of(S)) == Algorithm::nvls);
  CHECK(choose_algorithm(f, bare(), Op::all_reduce, iota(8), sim::Bytes::of(S)) != Algorithm::nvls);
  // Small all-reduces pay NVLS's 25 us and take the ring (0.6 us per NVLink step), as NCCL
  // does; with the latency at 0 NVLS would win at every size.
  NetworkConfig with_overheads;
  with_overheads.nvls = true;
  CHECK(choose_algorithm(f, with_overheads, Op::all_reduce, iota(8), sim::Bytes::of(1024)) != Algorithm::nvls);
  with_overheads.nvls_latency = sim::Time::zero();
  CHECK(choose_algorithm(f, with_overheads, Op::all_reduce, iota(8), sim::Bytes::of(1024)) == Algorithm::nvls);
}

TEST_CASE("SHARP all-reduce on 4 nodes: the slower of NVLink and the SHARP stream sets the time") {
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  NetworkConfig cfg = bare();
  cfg.sharp = true;
  const double S = 1073741824.0;
  const double g = 8;
  const double nvlink = 450e9 * cfg.scaleup_efficiency;
  // NVLink: each GPU's link carries g-1 transfers of 2S/g each way: 2(g-1)/g S / B_nvlink.
  // SHARP: each NIC carries one stream of S/g each way at min(B_nic e_out, B_nic e_sharp).
  // time = max of the two plus the pass up the aggregation tree and back (sharp_latency,
  // 31 us), which every chunk pays after its NVLink legs, whichever leg is the slowest
  // (Phase::pipelined: timing each leg with its own latency hid it behind the NVLink-bound
  // legs here, 4.490 ms for 4.521), plus the call overhead (inside the 1e-3).
  const auto expected = [&](const NetworkConfig& c) {
    return std::max(2 * (g - 1) / g * S / nvlink, S / g / (50e9 * std::min(c.scaleout_efficiency, c.sharp_efficiency))) +
           c.sharp_latency.seconds();
  };
  const Schedule s = planned_in(Algorithm::sharp, iota(32), S, 8, in_network(f, cfg));
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected(cfg)).epsilon(1e-3));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected(cfg)).epsilon(1e-3));
  // NVLink-bound here: busbw = 2(n-1)/n x S / time = 1.9375 x 418.5 / 1.75 = 463 GB/s,
  // above the ring's ~ 8 NICs x 47 GB/s = 376 GB/s; auto takes it.
  const Schedule ring = planned(Op::all_reduce, Algorithm::ring, iota(32), S, 8);
  CHECK(analytical_time(f, cfg, s) < analytical_time(f, cfg, ring));
  CHECK(choose_algorithm(f, cfg, Op::all_reduce, iota(32), sim::Bytes::of(S)) == Algorithm::sharp);
  // The pass up the tree costs sharp_latency, whatever the path (it had cost the path's
  // microsecond: a 1 KiB SHARP all-reduce beat one inside a node).
  const Schedule small = planned_in(Algorithm::sharp, iota(32), 1024.0, 8, in_network(f, cfg));
  NetworkConfig slow = cfg;
  slow.sharp_latency = sim::Time::from_ns(131'000);
  CHECK(analytical_time(f, slow, small).seconds() - analytical_time(f, cfg, small).seconds() == Rel(100e-6).epsilon(1e-6));
  CHECK(flow_time(f, slow, small).seconds() - flow_time(f, cfg, small).seconds() == Rel(100e-6).epsilon(1e-4));
  CHECK(analytical_time(f, cfg, small).seconds() > cfg.call_overhead.seconds() + 31e-6);
  // A slow reduction engine makes the SHARP stream the bottleneck.
  cfg.sharp_efficiency = 0.3;
  CHECK(analytical_time(f, cfg, s).seconds() == Rel(expected(cfg)).epsilon(1e-3));
  CHECK(flow_time(f, cfg, s).seconds() == Rel(expected(cfg)).epsilon(1e-3));
}

TEST_CASE("NCCL's tree inside a node: a chain whose inner GPUs send 2S and whose ends send S") {
  const double S = 1e9;
  for (const std::int64_t g : {2, 4, 8}) {
    CAPTURE(g);
    const Schedule s = planned(Op::all_reduce, Algorithm::tree, iota(2 * g), S, g);
    std::map<std::int64_t, double> inside;  // bytes each GPU sends to GPUs of its node
    for (const Phase& p : s.phases) {
      for (const Transfer& t : p.transfers) {
        if (t.src / g == t.dst / g) inside[t.src] += t.bytes * static_cast<double>(p.repeat);
      }
    }
    for (std::int64_t r = 0; r < 2 * g; ++r) CHECK(inside[r] == Rel(g > 2 ? 2 * S : S));
  }
}

TEST_CASE("NCCL's tree on whole nodes pipelines its stages: the slower of NVLink and the NICs sets the time") {
  // Without latencies the R steps of the one pipelined phase sum to the bytes over the rates:
  //   time = max(2S / B_nvlink, NIC bytes per GPU / B_nic per GPU)
  // not the sequential reduce-scatter + inter-node stage + all-gather. Through its NIC a
  // GPU sends, in units of S/2g (each tree edge carries S/2g each way): on 2 nodes, 1 up in
  // one tree and 1 down in the other = S/g; on 4 nodes NCCL's trees are 0 -> 2 -> {1, 3}
  // and, mirrored, 3 -> 1 -> {2, 0}: node 2 sends 1 up and 2 down in the first and 1 up in
  // the second, 4 units = 2 S/g (node 1 too; nodes 0 and 3 send 2).
  const double S = 1073741824.0;
  const double g = 8;
  struct Case {
    std::int64_t nodes;
    std::int64_t nics;
    double nic_bytes;  // per GPU
    std::int64_t steps;
  };
  for (const Case& k : {Case{2, 8, S / g, 2 * 7 + 2 * 1 + 128 - 1}, Case{2, 1, S / g, 2 * 7 + 2 * 1 + 128 - 1},
                        Case{4, 1, 2 * S / g, 2 * 7 + 2 * 2 + 128 - 1}}) {
    CAPTURE(k.nodes);
    CAPTURE(k.nics);
    cluster::ResolvedNode n = node(8, k.nics);
    n.spec.scaleup_latency = sim::Time::zero();
    FabricConfig c = clos(64, 2);  // every NIC on one leaf: no ECMP collision on uplinks
    c.link_latency = sim::Time::zero();
    std::vector<fabric::FabricError> errors;
    const auto f = fabric::build_fabric(c, n, k.nodes, errors);
    INFO((errors.empty() ? std::string() : errors.front().message));
    REQUIRE(f.has_value());
    const NetworkConfig cfg = bare();
    const double nvlink = 450e9 * cfg.scaleup_efficiency;
    const double nic_per_gpu = 50e9 * cfg.scaleout_efficiency * static_cast<double>(k.nics) / g;
    const double stage_nvlink = 2 * S / nvlink;
    const double stage_nic = k.nic_bytes / nic_per_gpu;
    const Schedule s = planned(Op::all_reduce, Algorithm::tree, iota(8 * k.nodes), S, 8);
    REQUIRE(s.phases.size() == 1);
    CHECK(s.steps() == k.steps);  // C = 128 chunks of 512 KiB in a tree's S/2g; depth 1 or 2
    CHECK(analytical_time(f.value(), cfg, s).seconds() == Rel(std::max(stage_nvlink, stage_nic)).epsilon(1e-6));
    // The flow level rounds each step to the nanosecond.
    CHECK(flow_time(f.value(), cfg, s).seconds() ==
          Rel(std::max(stage_nvlink, stage_nic)).epsilon(0).margin(1e-9 * static_cast<double>(k.steps)));
    CHECK((k.nics == 8 ? stage_nvlink > stage_nic : stage_nic > stage_nvlink));
  }
}

TEST_CASE("hierarchical all-reduce runs its three stages in turn: their times add up") {
  // Without latencies: a ring reduce-scatter inside the node, (g-1)/g S over NVLink; a ring
  // all-reduce of S/g across the nodes on each rail, 2 (N-1)/N S/g through the NICs; and
  // the all-gather, (g-1)/g S again:
  //   time = 2 (g-1)/g S / B_nvlink + 2 (N-1)/N (S/g) / B_nic per GPU
  const double S = 1073741824.0;
  const double g = 8;
  for (const auto& [nodes, nics] : {std::pair<std::int64_t, std::int64_t>{2, 8}, {2, 1}, {4, 1}}) {
    CAPTURE(nodes);
    CAPTURE(nics);
    cluster::ResolvedNode n = node(8, nics);
    n.spec.scaleup_latency = sim::Time::zero();
    FabricConfig c = clos(64, 2);
    c.link_latency = sim::Time::zero();
    std::vector<fabric::FabricError> errors;
    const auto f = fabric::build_fabric(c, n, nodes, errors);
    REQUIRE(f.has_value());
    const NetworkConfig cfg = bare();
    const double nvlink = 450e9 * cfg.scaleup_efficiency;
    const double nic_per_gpu = 50e9 * cfg.scaleout_efficiency * static_cast<double>(nics) / g;
    const auto N = static_cast<double>(nodes);
    const double expected = 2 * (g - 1) / g * S / nvlink + 2 * (N - 1) / N * (S / g) / nic_per_gpu;
    const Schedule s = planned(Op::all_reduce, Algorithm::hierarchical, iota(8 * nodes), S, 8);
    CHECK(analytical_time(f.value(), cfg, s).seconds() == Rel(expected).epsilon(1e-6));
    CHECK(flow_time(f.value(), cfg, s).seconds() == Rel(expected).epsilon(0).margin(1e-9 * static_cast<double>(s.steps())));
  }
}

TEST_CASE("routes built at one size time every size of the same collective exactly as analytical_time") {
  // Rates (min over the path of c_l / n_l, the rate bound) and latencies do not depend on
  // bytes, so routes of S1 give time(S2) = overhead + sum repeat x max_t (fixed_t + b_t / rate_t)
  // bit for bit, also under contention (1:3 Clos) and UGAL's load-dependent choices.
  const FabricConfig ugal = dragonfly(2, 2, 2, fabric::Routing::ugal);
  const std::vector<std::pair<const char*, FabricConfig>> fabrics{{"clos 1:3", clos(8, 2, fabric::Ratio{1, 3})},
                                                                  {"dragonfly ugal", ugal}};
  for (const auto& [label, fc] : fabrics) {
    CAPTURE(label);
    const fabric::Fabric f = build(fc, 10, 2, 2);
    const NetworkConfig cfg;  // with the default overheads
    AnalyticalTimer timer(f, cfg);
    // (A tree's pipelining depends on the size: its shape changes, and matches() says so.)
    for (const auto& [op, a] : {std::pair{Op::all_reduce, Algorithm::ring}, std::pair{Op::all_to_all, Algorithm::direct}}) {
      CAPTURE(static_cast<int>(a));
      const Schedule small = planned(op, a, iota(20), 1e3, 2);
      const AnalyticalRoutes routes(f, cfg, small);
      for (double bytes : {1e3, 7.5e6, 3e9}) {
        const Schedule s = planned(op, a, iota(20), bytes, 2);
        REQUIRE(routes.matches(s));
        LinkLoad expected_load;
        const sim::Time expected = analytical_time(f, cfg, s, &expected_load);
        CHECK(routes.time(s) == expected);
        CHECK(timer.time(s) == expected);
        LinkLoad load;
        routes.add_load(s, load);
        CHECK(load.bytes == expected_load.bytes);
      }
    }
    CHECK(timer.shapes() == 2);  // one routing per collective, every size after the first reused
    // Another shape: other ranks, or another algorithm on the same ranks.
    const AnalyticalRoutes ring(f, cfg, planned(Op::all_reduce, Algorithm::ring, iota(20), 1e6, 2));
    std::vector<std::int64_t> shifted = iota(20);
    std::rotate(shifted.begin(), shifted.begin() + 1, shifted.end());
    CHECK_FALSE(ring.matches(planned(Op::all_reduce, Algorithm::ring, shifted, 1e6, 2)));
    CHECK_FALSE(ring.matches(planned(Op::all_reduce, Algorithm::tree, iota(20), 1e6, 2)));
    const Schedule other = planned(Op::all_reduce, Algorithm::ring, shifted, 1e6, 2);
    CHECK(timer.time(other) == analytical_time(f, cfg, other));
    CHECK(timer.shapes() == 3);
  }
}

TEST_CASE("choosing with a timer picks what choosing without one does, and reuses routes across sizes") {
  const fabric::Fabric f = build(clos(16, 2), 4, 8, 8);
  const NetworkConfig cfg;
  AnalyticalTimer timer(f, cfg);
  for (double bytes : {1e3, 1e6, 1e9}) {
    CAPTURE(bytes);
    CHECK(choose_algorithm(timer, Op::all_reduce, iota(32), sim::Bytes::of(bytes)) ==
          choose_algorithm(f, cfg, Op::all_reduce, iota(32), sim::Bytes::of(bytes)));
  }
  // Sizes whose schedules have one shape share its routes (the ring's, at least).
  CHECK(timer.shapes() < 3 * algorithms_for(Op::all_reduce, iota(32), 8, in_network(f, cfg)).size());
}

TEST_CASE("ECMP collisions: the data-parallel rings' time on an oversubscribed Clos is one draw per seed") {
  // Radix 8 at 1:3: leaves of 6 endpoints and 2 uplinks; 24 one-GPU nodes fill 4 leaves.
  // Six rings of 4 ranks, one rank per leaf (ring r: r, 6+r, 12+r, 18+r), run together as
  // the step model runs a data-parallel group: every ring step sends 6 flows up each leaf's
  // 2 uplinks. Balanced, 3 share an uplink; the hash decides how many do.
  const NetworkConfig cfg = bare();
  constexpr double S = 96e6;
  constexpr std::int64_t kRanks = 4;
  Schedule merged;
  for (std::int64_t r = 0; r < 6; ++r) {
    const Schedule ring = planned(Op::all_reduce, Algorithm::ring, {r, 6 + r, 12 + r, 18 + r}, S, 1);
    if (r == 0) {
      merged = ring;
      continue;
    }
    REQUIRE(ring.phases.size() == merged.phases.size());
    for (std::size_t p = 0; p < ring.phases.size(); ++p) {
      for (const Transfer& t : ring.phases[p].transfers) merged.phases[p].transfers.push_back(t);
    }
  }
  REQUIRE(merged.phases.size() == 1);
  const Phase& phase = merged.phases[0];
  REQUIRE(phase.transfers.size() == 24);
  CHECK(phase.repeat == 2 * (kRanks - 1));
  const double chunk = S / kRanks;
  const double B = 50e9 * 0.94;  // every link: the NIC rate x scale-out efficiency
  std::map<std::int64_t, double> time_by_busiest;
  for (std::int64_t seed = 0; seed < 8; ++seed) {
    CAPTURE(seed);
    FabricConfig fc = clos(8, 2, fabric::Ratio{1, 3});
    fc.ecmp_seed = seed;
    const fabric::Fabric f = build(fc, 24, 1, 1);
    // The busiest link, counted from the routes themselves (flow id = index in the phase).
    std::map<std::uint32_t, std::int64_t> flows_on;
    std::vector<fabric::LinkId> path;
    for (std::size_t i = 0; i < phase.transfers.size(); ++i) {
      path.clear();
      REQUIRE(f.route(phase.transfers[i].src, phase.transfers[i].dst, i, path));
      for (fabric::LinkId l : path) ++flows_on[l.value];
    }
    std::int64_t busiest = 0;
    for (const auto& [link, n] : flows_on) busiest = std::max(busiest, n);
    CHECK(busiest >= 3);  // 6 flows over 2 uplinks
    CHECK(busiest <= 6);
    // Each ring step lasts while the busiest link's flows share it: busiest x chunk / B,
    // plus the route's latency (4 hops of 700 ns; host links have none).
    const double expected = static_cast<double>(phase.repeat) * (static_cast<double>(busiest) * chunk / B + 4 * 700e-9);
    const double analytical = analytical_time(f, cfg, merged).seconds();
    CHECK(analytical == Rel(expected).epsilon(0).margin(1e-9));  // sim::Time: 1 ns
    CHECK(flow_time(f, cfg, merged).seconds() == Rel(analytical).epsilon(1e-6));
    // Same seed, same collisions: a time is a function of the busiest link's flow count.
    const auto [it, fresh] = time_by_busiest.emplace(busiest, analytical);
    if (!fresh) CHECK(analytical == Rel(it->second).epsilon(0).margin(1e-9));
  }
  // The spread users see across seeds: at least two collision counts among eight seeds.
  CHECK(time_by_busiest.size() >= 2);
}

TEST_CASE("queue pairs per connection: a transfer's flows hashed apart, the busiest link's share sets the step") {
  // The ECMP case above with network.qps_per_connection = q: transfer i's flows are
  // i q .. i q + q - 1, each with 1/q of its bytes on its own hashed path. A link carrying m
  // of them counts m/q; the step lasts (its heaviest link's count) x chunk / B.
  Schedule merged;
  for (std::int64_t r = 0; r < 6; ++r) {
    const Schedule ring = planned(Op::all_reduce, Algorithm::ring, {r, 6 + r, 12 + r, 18 + r}, 96e6, 1);
    if (r == 0) {
      merged = ring;
      continue;
    }
    for (std::size_t p = 0; p < ring.phases.size(); ++p) {
      for (const Transfer& t : ring.phases[p].transfers) merged.phases[p].transfers.push_back(t);
    }
  }
  REQUIRE(merged.phases.size() == 1);
  const Phase& phase = merged.phases[0];
  const double chunk = 96e6 / 4;
  const double B = 50e9 * 0.94;
  const fabric::Fabric f = build(clos(8, 2, fabric::Ratio{1, 3}), 24, 1, 1);
  const auto heaviest = [&](std::uint64_t q) {
    std::map<std::uint32_t, double> weight;
    std::vector<fabric::LinkId> path;
    for (std::size_t i = 0; i < phase.transfers.size(); ++i) {
      for (std::uint64_t j = 0; j < q; ++j) {
        path.clear();
        REQUIRE(f.route(phase.transfers[i].src, phase.transfers[i].dst, i * q + j, path));
        for (fabric::LinkId l : path) weight[l.value] += 1.0 / static_cast<double>(q);
      }
    }
    double w = 0.0;
    for (const auto& [link, x] : weight) w = std::max(w, x);
    return w;
  };
  std::map<std::uint64_t, double> times;
  for (const std::uint64_t q : {1ULL, 2ULL, 4ULL, 64ULL}) {
    CAPTURE(q);
    NetworkConfig cfg = bare();
    cfg.qps_per_connection = static_cast<std::int64_t>(q);
    const double w = heaviest(q);
    CHECK(w >= 3.0 - 1e-9);  // 6 flows' worth over a leaf's 2 uplinks
    const double expected = static_cast<double>(phase.repeat) * (w * chunk / B + 4 * 700e-9);
    LinkLoad load;
    const double analytical = analytical_time(f, cfg, merged, &load).seconds();
    CHECK(analytical == Rel(expected).epsilon(0).margin(1e-9));
    CHECK(flow_time(f, cfg, merged).seconds() == Rel(analytical).epsilon(1e-6));
    // Bytes are conserved whatever the split: every transfer's bytes on each of its hops.
    double total = 0.0;
    for (const double b : load.bytes) total += b;
    CHECK(total == Rel(static_cast<double>(phase.transfers.size()) * chunk * static_cast<double>(phase.repeat) * 6));
    times[q] = analytical;
  }
  // With many queue pairs the uplinks even out: within 10% of the balanced 3.
  CHECK(heaviest(64) < 3.3);
  CHECK(times[64] < times[1]);
  // A transfer inside a node is not split: one 8-GPU node's ring takes the same time.
  const fabric::Fabric one = build(clos(16, 2), 1, 8, 8);
  const Schedule inside = planned(Op::all_reduce, Algorithm::ring, iota(8), 1e9, 8);
  NetworkConfig many = bare();
  many.qps_per_connection = 16;
  CHECK(analytical_time(one, many, inside).seconds() == analytical_time(one, bare(), inside).seconds());
  // A transfer's own queue pairs are no load to each other: alone on a UGAL dragonfly, every
  // one stays minimal, as one pair does (counted as load, all but the first went Valiant).
  const fabric::Fabric df = build(dragonfly(4, 2, 2, fabric::Routing::ugal), 36, 2, 2);
  const Schedule pair = planned(Op::send_recv, Algorithm::direct, {0, 70}, 1e6, 2);
  CHECK(analytical_time(df, many, pair).seconds() == Rel(analytical_time(df, bare(), pair).seconds()));
  CHECK(flow_time(df, many, pair).seconds() == Rel(flow_time(df, bare(), pair).seconds()));
  // Past kMaxRoutedPaths (2^25) a step is refused, not routed for minutes: 2^18 transfers
  // of 256 queue pairs; at 128, exactly the limit, it is routed.
  Schedule wide;
  wide.phases.resize(1);
  wide.phases[0].transfers.resize(std::size_t{1} << 18);
  NetworkConfig most = bare();
  most.qps_per_connection = 256;
  CHECK_THROWS_AS(check_paths(wide, most), PathLimitError);
  most.qps_per_connection = 128;
  CHECK_NOTHROW(check_paths(wide, most));
}

TEST_CASE("size factors: linear in log2(size) between points, constant beyond, 1 without a table") {
  const auto at = [](double bytes) { return sim::Bytes::of(bytes); };
  CHECK(size_factor({}, 1e6) == 1.0);
  const std::vector<SizeFactor> t{{at(1 << 20), 0.2}, {at(1 << 24), 0.6}, {at(1 << 26), 1.0}};
  CHECK(first_unsorted(t) == 0);
  CHECK(size_factor(t, 8) == Rel(0.2));
  CHECK(size_factor(t, 1 << 20) == Rel(0.2));
  CHECK(size_factor(t, 1 << 22) == Rel(0.4));  // half way from 2^20 to 2^24 in log2
  CHECK(size_factor(t, 1 << 25) == Rel(0.8));
  CHECK(size_factor(t, 1e12) == Rel(1.0));
  const std::vector<SizeFactor> unsorted{{at(1 << 20), 0.2}, {at(1 << 24), 0.6}, {at(1 << 24), 1.0}};
  CHECK(first_unsorted(unsorted) == 2);
}

TEST_CASE("a size factor scales its level's links only, the same in the analytical and the flow model") {
  // 4 nodes of 4 GPUs on a fat tree; the ring crosses nodes, so NICs (50 GB/s x 0.94) are
  // the bottleneck: a scale-out factor of 0.25 makes the bandwidth term 4 times longer.
  const fabric::Fabric f = build(clos(16, 2), 4, 4, 4);
  const NetworkConfig plain = bare();
  const double S = 64e6;
  const Schedule across = planned(Op::all_reduce, Algorithm::ring, iota(16), S, 4);
  const Schedule inside = planned(Op::all_reduce, Algorithm::ring, iota(4), S, 4);
  const auto with = [&](double up, double out) {
    NetworkConfig c = plain;
    c.scaleup_size_factors = {{sim::Bytes::of(S), up}};
    c.scaleout_size_factors = {{sim::Bytes::of(S), out}};
    return c;
  };
  // t(k) = L + B / k while the NICs stay the bottleneck: t(1/4) - t(1) = 3 B = 3 (t(1/2) - t(1)).
  const double base = analytical_time(f, plain, across).seconds();
  const NetworkConfig slow_out = with(1.0, 0.25);
  const double slowed = analytical_time(f, slow_out, across).seconds();
  const double half = analytical_time(f, with(1.0, 0.5), across).seconds();
  CHECK(half - base > 0.5 * base);  // the bandwidth term dominates
  CHECK(slowed - base == Rel(3 * (half - base)).epsilon(1e-6));
  CHECK(flow_time(f, slow_out, across).seconds() == Rel(slowed).epsilon(0.01));
  // A ring inside one node runs on NVLink only: the scale-out factor does not touch it, the
  // scale-up one does.
  CHECK(analytical_time(f, slow_out, inside).seconds() == analytical_time(f, plain, inside).seconds());
  const NetworkConfig slow_up = with(0.5, 1.0);
  CHECK(analytical_time(f, slow_up, inside).seconds() > 1.9 * analytical_time(f, plain, inside).seconds());
  CHECK(flow_time(f, slow_up, inside).seconds() == Rel(analytical_time(f, slow_up, inside).seconds()).epsilon(0.01));
  // A table applies at the schedule's own size: the same ring at 1/64 of S, below a table
  // that reaches 1 from S on, takes its lower factor.
  NetworkConfig ramp = plain;
  ramp.scaleout_size_factors = {{sim::Bytes::of(S / 64), 0.5}, {sim::Bytes::of(S), 1.0}};
  const Schedule small = planned(Op::all_reduce, Algorithm::ring, iota(16), S / 64, 4);
  CHECK(analytical_time(f, ramp, across).seconds() == analytical_time(f, plain, across).seconds());
  CHECK(analytical_time(f, ramp, small).seconds() > analytical_time(f, plain, small).seconds());
}

TEST_CASE("two collectives at different size factors share a link by their coefficients in the flow model") {
  // As in the oversubscribed case above: rings A and B both cross leaf 0's single uplink.
  // B's size runs at factor 1/2: per byte/s it takes twice the uplink's capacity, so max-min
  // gives both the same rate r with r + 2r = c: A at c/3 instead of c/2.
  const fabric::Fabric f = build(clos(4, 2, fabric::Ratio{1, 3}), 6, 1, 1);
  NetworkConfig cfg = bare();
  const double small = 50e6;
  const double large = 100e6;
  cfg.scaleout_size_factors = {{sim::Bytes::of(small), 0.5}, {sim::Bytes::of(large), 1.0}};
  const Schedule a = planned(Op::all_gather, Algorithm::ring, {0, 3}, large, 1);
  const Schedule b = planned(Op::all_gather, Algorithm::ring, {1, 4}, small, 1);
  const std::vector<double> done = run_together(f, cfg, {&a, &b});
  const double c = 50e9 * 0.94;
  const double latency = 2 * 700e-9 + 2 * 700e-9;
  // B sends 25 MB at c/3; meanwhile A sends 25 MB at c/3 too, then its other 25 MB at c.
  const double b_end = 25e6 / (c / 3);
  CHECK(done[1] - latency == Rel(b_end).epsilon(1e-3));
  CHECK(done[0] - latency == Rel(b_end + 25e6 / c).epsilon(1e-3));
}

TEST_CASE("size factors leave send/recv, all-to-all and schedules without a size alone") {
  const fabric::Fabric f = build(clos(16, 2), 4, 4, 4);
  NetworkConfig slow = bare();
  slow.scaleup_size_factors = {{sim::Bytes::of(1.0), 0.25}};
  slow.scaleout_size_factors = {{sim::Bytes::of(1.0), 0.25}};
  const NetworkConfig plain = bare();
  // NCCL runs these point to point, outside the tuner the factors stand for.
  for (const auto& [op, a] : {std::pair{Op::send_recv, Algorithm::direct}, std::pair{Op::all_to_all, Algorithm::direct}}) {
    const Schedule s = planned(op, a, op == Op::send_recv ? std::vector<std::int64_t>{0, 5} : iota(16), 64e6, 4);
    CHECK(analytical_time(f, slow, s).seconds() == analytical_time(f, plain, s).seconds());
    CHECK(flow_time(f, slow, s).seconds() == flow_time(f, plain, s).seconds());
  }
  Schedule by_hand;
  by_hand.phases.push_back(Phase{{{0, 5, 1e9}}, 1});
  CHECK(analytical_time(f, slow, by_hand).seconds() == analytical_time(f, plain, by_hand).seconds());
  const Schedule gather = planned(Op::all_gather, Algorithm::ring, iota(16), 64e6, 4);
  CHECK(analytical_time(f, slow, gather).seconds() > 2 * analytical_time(f, plain, gather).seconds());
}

TEST_CASE("pipelined schedules pay the latency of their pipeline's fill, not of every chunk") {
  // One node of 8 GPUs behind NVSwitch: alpha = the step latency (2 us) + the GPU-to-GPU
  // latency (600 ns, over two NVLink links). A broadcast on 2 ranks moves what a send/recv moves, in the same time.
  // On 8 ranks its n-1 = 7 fill steps pay alpha and its C-1 streamed chunks do not:
  // 7 alpha + S/B (one node's 8 rings, turned to start at the root, share the ring's links).
  // A tree all-reduce inside one node is NCCL's chain of its GPUs: its fill, 2(g-1) = 14
  // steps up and down the chain, pays alpha: a step latency adds 14 of it (a binary tree's
  // 2d = 6 had been charged, which NCCL does not build inside a node).
  const fabric::Fabric f = build(clos(64, 2), 1, 8, 8);
  NetworkConfig cfg = bare();
  cfg.step_latency = sim::Time::from_ns(2000);
  const double alpha = 2e-6 + 600e-9;
  const double B = 450e9 * cfg.scaleup_efficiency;
  const double S = 1073741824.0;
  const auto time_of = [&](const Schedule& s) { return analytical_time(f, cfg, s).seconds(); };
  const Schedule send = planned(Op::send_recv, Algorithm::direct, {0, 1}, S, 8);
  const Schedule two = planned(Op::broadcast, Algorithm::ring, {0, 1}, S, 8);
  CHECK(time_of(send) == Rel(alpha + S / B));
  CHECK(time_of(two) == Rel(time_of(send)));
  const Schedule eight = planned(Op::broadcast, Algorithm::ring, iota(8), S, 8);
  CHECK(eight.steps() == 8 - 2 + 256);  // 8 rings (channels) of S/8: C = 256 chunks of 512 KiB
  CHECK(time_of(eight) == Rel(7 * alpha + S / B));
  CHECK(flow_time(f, cfg, eight).seconds() == Rel(time_of(eight)).epsilon(1e-4));
  const Schedule tree = planned(Op::all_reduce, Algorithm::tree, iota(8), S, 8);
  REQUIRE(tree.phases.size() == 1);
  CHECK(tree.phases[0].streamed == 128 - 1);  // S/2g = 64 MiB in chunks of 512 KiB
  CHECK(tree.phases[0].repeat - tree.phases[0].streamed == 14);
  CHECK(time_of(tree) - analytical_time(f, bare(), tree).seconds() == Rel(14 * 2e-6));
  // The flow level rounds each step to the nanosecond.
  CHECK(flow_time(f, cfg, tree).seconds() ==
        Rel(time_of(tree)).epsilon(0).margin(1e-9 * static_cast<double>(tree.steps())));
}

namespace {

/// `nodes` nodes of 8 GPUs joined pairwise (an Infinity-Fabric mesh, as MI300X's) on a
/// two-tier Clos of the given radix.
fabric::Fabric mesh_nodes(std::int64_t nodes, std::int64_t radix = 16) {
  cluster::ResolvedNode mi = node(8, 8);
  mi.spec.scaleup = hardware::ScaleUp::infinity_fabric;
  std::vector<fabric::FabricError> errors;
  auto f = fabric::build_fabric(clos(radix, 2), mi, nodes, errors);
  REQUIRE(f.has_value());
  return std::move(*f);
}

/// The rate of one of `f`'s scale-up links at `cfg`'s efficiency (they are all alike).
double scaleup_link_rate(const fabric::Fabric& f, const NetworkConfig& cfg) {
  for (const fabric::Link& l : f.links) {
    if (l.kind == fabric::LinkKind::nvlink) return l.bandwidth.value() * cfg.scaleup_efficiency;
  }
  FAIL("no scale-up link");
  return 0.0;
}

}  // namespace

TEST_CASE("rings on a full mesh (Infinity Fabric) take different links: all 7 of a GPU's, in one node or across nodes") {
  // 8 GPUs joined pairwise, 450 GB/s of scale-up each spread over 7 links. Rings that differ
  // only by their start would all take the links i -> i+1. Inside one node the rings are 7
  // arc-disjoint Hamiltonian cycles: every one of the 56 directed links carries one ring, so
  // each GPU sends on its 7 links at once (strides coprime with 8, as before, took 4 of 7).
  const fabric::Fabric mesh = mesh_nodes(2);
  const NetworkConfig cfg = bare();
  const InNetwork in = in_network(mesh, cfg);
  CHECK(in.mesh);
  const double S = 1073741824.0;
  Schedule s;
  std::string why;
  REQUIRE(plan(Op::all_reduce, Algorithm::ring, iota(8), sim::Bytes::of(S), 8, in, s, why));
  std::map<std::pair<std::int64_t, std::int64_t>, int> links;
  for (const Transfer& t : s.phases[0].transfers) ++links[{t.src, t.dst}];
  CHECK(links.size() == 56);
  for (const auto& [link, rings] : links) CHECK(rings == 1);
  // Each ring carries S/7 in 2 x 7 steps of S/(7 x 8), each step on its own links, plus the
  // hop's 600 ns.
  const double link = scaleup_link_rate(mesh, cfg);
  const double expected = 2 * 7 * (S / 56 / link + 600e-9);
  CHECK(analytical_time(mesh, cfg, s).seconds() == Rel(expected).epsilon(1e-6));
  CHECK(flow_time(mesh, cfg, s).seconds() == Rel(expected).epsilon(1e-4));
  // Over two whole nodes, 56 rings: one per cycle and entry GPU, each going round its
  // cycle in both nodes and crossing on the entry GPU's rail (the cycle's closing link
  // relays to it, PXN). So every one of the 2 x 56 links inside the nodes carries 8 rings'
  // S/(16 x 56) a step, and every NIC 7 (one per cycle): the strides coprime with 8 used
  // before put 2 rings on each of 32 links and left 24 idle.
  // (Both nodes under one leaf: ECMP over spines would add its own collisions.)
  const fabric::Fabric leaf = mesh_nodes(2, 32);
  Schedule two;
  REQUIRE(plan(Op::all_reduce, Algorithm::ring, iota(16), sim::Bytes::of(S), 8, in_network(leaf, cfg), two, why));
  const double b = S / 16 / 56;
  std::map<std::pair<std::int64_t, std::int64_t>, double> inside;
  std::map<std::int64_t, double> nic_out;
  for (const Transfer& t : two.phases[0].transfers) {
    CHECK(t.bytes == Rel(b));
    if (t.src / 8 == t.dst / 8) {
      inside[{t.src, t.dst}] += t.bytes;
    } else {
      CHECK(t.src % 8 == t.dst % 8);  // on its rail
      nic_out[t.src] += t.bytes;
    }
  }
  CHECK(inside.size() == 2 * 56);
  for (const auto& [pair, bytes] : inside) CHECK(bytes == Rel(8 * b));
  CHECK(nic_out.size() == 16);
  for (const auto& [gpu, bytes] : nic_out) CHECK(bytes == Rel(7 * b));
  double nic = 0.0;
  for (const auto& l : leaf.links) {
    if (l.kind == fabric::LinkKind::access) nic = l.bandwidth.value() * cfg.scaleout_efficiency;
  }
  REQUIRE(nic > 0.0);
  // 2 x 15 steps, each as long as its busiest link (plus latencies of a few microseconds).
  const double busiest = std::max(8 * b / link, 7 * b / nic);
  const double two_time = analytical_time(leaf, cfg, two).seconds();
  CHECK(two_time >= 30 * busiest);
  CHECK(two_time <= 30 * (busiest + 5e-6));
  CHECK(flow_time(leaf, cfg, two).seconds() == Rel(two_time).epsilon(1e-4));
  // Hierarchical all-reduce on two nodes: each node's stages on its 7 rings, every link of
  // the node once, S/(8 x 7) a step on each.
  Schedule hier;
  REQUIRE(plan(Op::all_reduce, Algorithm::hierarchical, iota(16), sim::Bytes::of(S), 8, in, hier, why));
  std::map<std::pair<std::int64_t, std::int64_t>, int> node_links;
  for (const Transfer& t : hier.phases[0].transfers) {
    ++node_links[{t.src, t.dst}];
    CHECK(t.bytes == Rel(S / 56));
  }
  CHECK(node_links.size() == 2 * 56);
  for (const auto& [pair, rings] : node_links) CHECK(rings == 1);
  // Without the mesh flag (a switch), the 8 rings of one node are rotations of one order.
  Schedule rotated;
  REQUIRE(plan(Op::all_reduce, Algorithm::ring, iota(8), sim::Bytes::of(S), 8, InNetwork{}, rotated, why));
  std::set<std::pair<std::int64_t, std::int64_t>> same;
  for (const Transfer& t : rotated.phases[0].transfers) same.insert({t.src, t.dst});
  CHECK(same.size() == 8);
}

TEST_CASE("NCCL's tree inside a full-mesh node: the chain's two directions on their own links, S each") {
  // The chain's reduction goes to the GPU before and its broadcast to the GPU after: on a
  // mesh each is a link of its own, S bytes each, so a 1 GiB all-reduce takes S / B_link
  // (plus microseconds of latency); both directions on the link to the next GPU took 2S.
  const fabric::Fabric mesh = mesh_nodes(1);
  const NetworkConfig cfg = bare();
  const double S = 1073741824.0;
  Schedule s;
  std::string why;
  REQUIRE(plan(Op::all_reduce, Algorithm::tree, iota(8), sim::Bytes::of(S), 8, in_network(mesh, cfg), s, why));
  std::map<std::pair<std::int64_t, std::int64_t>, double> bytes;  // per ordered pair of GPUs
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) bytes[{t.src, t.dst}] += t.bytes * static_cast<double>(p.repeat);
  }
  for (const auto& [pair, b] : bytes) CHECK(b == Rel(S));
  const double link = scaleup_link_rate(mesh, cfg);
  CHECK(analytical_time(mesh, cfg, s).seconds() == Rel(S / link).epsilon(2e-3));
  CHECK(flow_time(mesh, cfg, s).seconds() == Rel(S / link).epsilon(2e-3));
}

TEST_CASE("mesh rings: m - 1 arc-disjoint Hamiltonian cycles where they exist, fewer on 4 and 6") {
  for (int m = 3; m <= 16; ++m) {
    CAPTURE(m);
    const std::vector<std::vector<int>> rings = mesh_rings(m);
    // Tillson: K*_m splits into m - 1 Hamiltonian cycles for every m but 4 and 6.
    CHECK(static_cast<int>(rings.size()) == (m == 4 || m == 6 ? m - 2 : m - 1));
    std::set<std::pair<int, int>> arcs;
    for (const auto& ring : rings) {
      REQUIRE(static_cast<int>(ring.size()) == m);
      CHECK(std::set<int>(ring.begin(), ring.end()).size() == static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) arcs.insert({ring[static_cast<std::size_t>(i)], ring[static_cast<std::size_t>((i + 1) % m)]});
    }
    CHECK(arcs.size() == rings.size() * static_cast<std::size_t>(m));  // no arc twice
  }
}
