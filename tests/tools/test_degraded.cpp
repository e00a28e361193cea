// A job's step on a fabric with one element down: classes, factors and the cut-off case.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "tools/clustersim/degraded.hpp"
#include "tools/clustersim/report.hpp"

using namespace clustersim;

namespace {

/// 16 nodes on a 2-tier Clos of radix-16 switches with the given taper (uplinks:downlinks);
/// the job on all 128 GPUs (tp 2, pp 2, dp 32), its rings crossing leaves.
scenario::LoadedScenario load(const std::string& oversubscription) {
  scenario::LoadOptions o;
  o.sets = {"cluster.nodes=16",
            "fabric={topology: fat_tree, radix: 16, tiers: 2, oversubscription: \"" + oversubscription + "\"}",
            "workload.jobs[0].gpus=128", "workload.jobs[0].parallelism.dp=32", "workload.jobs[0].parallelism.tp=2",
            "workload.jobs[0].parallelism.pp=2"};
  return scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml", o);
}

/// A fabric (a scenario `fabric:` value) and a node count.
struct Shape {
  const char* fabric;
  std::int64_t nodes;
  /// The node: 2 GPUs and 2 NICs unless given.
  const char* node = "{gpu: h100-sxm, gpus: 2, nics: 2, nic_bandwidth: 400Gbps}";
};

/// A node of 3 trays of 2 NICs (catalog `rails`), as GB200 NVL72's 18 trays of 4: with 4
/// trays per leaf group, a node's trays straddle two groups.
constexpr const char* kTrays = "{gpu: h100-sxm, gpus: 6, nics: 6, rails: 2, nic_bandwidth: 400Gbps}";

/// The shape's cluster of nodes with 2 GPUs and 2 NICs, so that small radixes make several
/// leaves and pods.
scenario::LoadedScenario load_shape(const Shape& shape) {
  scenario::LoadOptions o;
  o.sets = {"cluster.nodes=" + std::to_string(shape.nodes),
            std::string("cluster.node=") + shape.node,
            std::string("fabric=") + shape.fabric};
  return scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
}

/// The vertex of the fabric's first switch: switch unit = vertex - this.
std::uint32_t first_switch(const fabric::Fabric& f) {
  if (const auto* clos = std::get_if<fabric::ClosLayout>(&f.layout)) return clos->leaf_base;
  if (const auto* torus = std::get_if<fabric::TorusLayout>(&f.layout)) return torus->router_base;
  return std::get<fabric::DragonflyLayout>(f.layout).router_base;
}

/// What a job on nodes first .. first + count - 1 crosses, by its scope and by its routes.
struct Crossing {
  std::int64_t switches = 0;  ///< crossed by the scope
  std::int64_t cables = 0;
};

/// Routes every ordered pair of the job's NICs on other nodes (`flows` ECMP draws each) and
/// checks that every switch and cable met counts as crossed; that crossed() and
/// crossed_cables() count what crosses() and crosses_cable() say unit by unit; and that
/// crossed_switch_flags() says the same. `base`: the first switch's vertex.
Crossing check_routes_crossed(const fabric::Fabric& f, const reliability::FabricScope& scope, std::uint32_t base,
                              std::int64_t first, std::int64_t count, std::uint64_t flows) {
  std::vector<std::int64_t> nodes;
  for (std::int64_t n = first; n < first + count; ++n) nodes.push_back(n);
  std::set<std::int64_t> met;
  std::set<std::uint32_t> met_cables;
  std::vector<fabric::LinkId> path;
  for (std::int64_t a = first * f.nics_per_node; a < (first + count) * f.nics_per_node; ++a) {
    for (std::int64_t b = first * f.nics_per_node; b < (first + count) * f.nics_per_node; ++b) {
      if (a / f.nics_per_node == b / f.nics_per_node) continue;  // inside a node: NVLink
      for (std::uint64_t flow = 0; flow < flows; ++flow) {
        path.clear();
        f.route_endpoints(a, b, flow, path);
        for (const fabric::LinkId l : path) {
          met_cables.insert(std::min(l.value, f.links[l.value].reverse.value));
          const std::uint32_t v = f.links[l.value].dst.value;
          if (f.vertex_kind[v] != fabric::VertexKind::nic) {
            REQUIRE(v >= base);
            REQUIRE(v < base + f.switch_count());
            met.insert(static_cast<std::int64_t>(v - base));
          }
        }
      }
    }
  }
  Crossing out;
  const std::vector<bool> flags = scope.crossed_switch_flags(nodes);
  REQUIRE(static_cast<std::int64_t>(flags.size()) == f.switch_count());
  for (std::int64_t u = 0; u < f.switch_count(); ++u) {
    CAPTURE(u);
    const bool crossed = scope.crosses(nodes, u);
    out.switches += crossed;
    CHECK(flags[static_cast<std::size_t>(u)] == crossed);
    if (met.count(u)) CHECK(crossed);
  }
  CHECK(scope.crossed(nodes) == out.switches);
  CHECK(out.switches >= static_cast<std::int64_t>(met.size()));
  const std::vector<fabric::LinkId> units = fabric::failure_cables(f);
  REQUIRE(scope.cables.size() == units.size());
  for (std::size_t u = 0; u < units.size(); ++u) {
    CAPTURE(u);
    const bool crossed = scope.crosses_cable(nodes, static_cast<std::int64_t>(u));
    out.cables += crossed;
    if (met_cables.count(units[u].value)) CHECK(crossed);
  }
  CHECK(scope.crossed_cables(nodes) == out.cables);
  CHECK(out.cables >= static_cast<std::int64_t>(met_cables.size()));
  return out;
}

}  // namespace

TEST_CASE("degraded fabric: losing a spine slows a job whose data-parallel rings cross the spines") {
  // 16 nodes on a 2-tier Clos of radix-16 switches with a 1:3 taper: 11 leaves of 12 ports
  // down and 4 up, to 4 spines. The job's rings cross leaves.
  const auto s = load("1:3");
  const auto& job = s.jobs.at(0);
  const double healthy = workload::simulate_step(tools::step_inputs(s, job)).step_time_s;
  const auto classes = tools::degraded_steps(s, job, healthy);
  std::vector<std::string> names;
  for (const auto& c : classes) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"spine", "leaf_spine link"});
  for (const auto& c : classes) {
    CAPTURE(c.name);
    CHECK(c.count > 0);
    CHECK(c.step_time_s >= healthy * (1.0 - 1e-9));  // never faster than the intact fabric
    CHECK(c.factor > 0.0);
    CHECK(c.factor <= 1.0 + 1e-9);
  }
  // A spine carries a quarter of the leaves' uplinks: the job keeps less than all of its
  // throughput without it, and a single cable costs less than a whole spine.
  CHECK(classes[0].factor < 1.0);
  CHECK(classes[1].factor >= classes[0].factor);
  // Units: switches are numbered leaves first, then spines.
  CHECK(classes[0].is_switch);
  CHECK(classes[0].first == s.fabric->tiers.at(0).switches);
  MESSAGE("spine factor ", classes[0].factor, ", leaf_spine link factor ", classes[1].factor);
  CHECK(classes[0].count == 4);
}

TEST_CASE("degraded fabric: with one spine, losing it cuts the leaves apart: no rerouting class") {
  const auto s = load("1:15");
  const auto& job = s.jobs.at(0);
  const double healthy = workload::simulate_step(tools::step_inputs(s, job)).step_time_s;
  // One uplink per leaf to the one spine: neither the spine nor a leaf's cable to it can be
  // routed around.
  CHECK(tools::degraded_steps(s, job, healthy).empty());
}

TEST_CASE("Clos scope: every switch on a route between a job's NICs is one the job crosses") {
  // For plain and rail-optimized Clos fabrics of 2 and 3 tiers (partial pods, parallel
  // links), and jobs on node ranges of every shape: route every ordered pair of the job's
  // NICs (all rails, several ECMP draws) and check that each switch met counts as crossed,
  // and that crossed() counts at least as many switches as the routes meet.
  for (const Shape& shape : {Shape{"{topology: fat_tree, radix: 8, tiers: 2, link_latency: 700ns}", 8},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 2, link_latency: 700ns}", 8},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 2, link_latency: 700ns}", 5, kTrays},
                             Shape{"{topology: fat_tree, radix: 8, tiers: 3, link_latency: 700ns}", 30},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 3, link_latency: 700ns}", 30},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 3, link_latency: 700ns}", 15, kTrays},
                             Shape{"{topology: rail_clos, radix: 16, tiers: 3, oversubscription: \"1:3\", "
                                   "link_latency: 700ns}", 36}}) {
    const std::string name = shape.fabric;
    CAPTURE(name);
    const auto s = load_shape(shape);
    const fabric::Fabric& f = *s.fabric;
    const auto scope = tools::fabric_scope(f);
    REQUIRE(scope.has_value());
    const std::uint32_t base = first_switch(f);
    const auto cables = static_cast<std::int64_t>(fabric::failure_cables(f).size());
    for (const auto& [first, count] : {std::pair<std::int64_t, std::int64_t>{0, 2}, {1, 3}, {3, 6}, {0, shape.nodes},
                                       {shape.nodes - 5, 5}, {2, 1}}) {
      if (first + count > shape.nodes) continue;
      CAPTURE(first);
      CAPTURE(count);
      const Crossing c = check_routes_crossed(f, *scope, base, first, count, 4);
      // A job short of the whole cluster leaves some cables alone.
      if (count < shape.nodes) CHECK(c.cables < cables);
    }
  }
}

TEST_CASE("torus and dragonfly scope: every router and cable on a route between a job's NICs is crossed") {
  // Dimension-order routing on tori (even and odd rings, a partial last plane) and minimal
  // routing on dragonflies (one link per group pair, parallel links, dark ports): route
  // every ordered pair of a job's NICs and check that each router and cable met counts as
  // crossed; crossed() and crossed_cables() count what crosses() and crosses_cable() say.
  for (const Shape& shape : {Shape{"{topology: torus, dims: [4, 4, 2], link_latency: 100ns}", 32},
                             Shape{"{topology: torus, dims: [5, 3, 3], link_latency: 100ns}", 40},
                             Shape{"{topology: torus, dims: [8, 8], link_latency: 100ns}", 64},
                             Shape{"{topology: dragonfly, routers_per_group: 4, hosts_per_router: 2, "
                                   "global_links_per_router: 2, link_latency: 100ns}", 36},
                             Shape{"{topology: dragonfly, routers_per_group: 4, hosts_per_router: 1, "
                                   "global_links_per_router: 2, groups: 4, link_latency: 100ns}", 8}}) {
    const std::string name = shape.fabric;
    CAPTURE(name);
    const auto s = load_shape(shape);
    const fabric::Fabric& f = *s.fabric;
    const auto scope = tools::fabric_scope(f);
    REQUIRE(scope.has_value());
    const std::uint32_t base = first_switch(f);
    const std::vector<fabric::LinkId> units = fabric::failure_cables(f);
    for (const auto& [first, count] : {std::pair<std::int64_t, std::int64_t>{0, 2}, {1, 3}, {3, 6}, {0, 8}, {0, 16},
                                       {5, 11}, {0, shape.nodes}, {shape.nodes - 5, 5}}) {
      if (first + count > shape.nodes) continue;
      CAPTURE(first);
      CAPTURE(count);
      const Crossing c = check_routes_crossed(f, *scope, base, first, count, 1);
      // A job short of the whole fabric leaves some routers and cables alone.
      if (count <= shape.nodes / 4) {
        CHECK(c.switches < f.switch_count());
        CHECK(c.cables < static_cast<std::int64_t>(units.size()));
      }
    }
    // A spare node (outside the fabric) may be anywhere: every router and every cable between
    // routers, but of the NICs' cables only those of its fabric node (node 0).
    CHECK(scope->crossed({0, shape.nodes}) == f.switch_count());
    CHECK(scope->crossed_cables({0, shape.nodes}) ==
          static_cast<std::int64_t>(units.size()) - f.endpoints() + f.nics_per_node);
  }
}

TEST_CASE("fabric scope: a switch or a NIC's cable holds the NICs that plug into it in the fabric") {
  // nic_switch() and nics_behind() must say what the fabric's access cables join.
  for (const Shape& shape : {Shape{"{topology: fat_tree, radix: 8, tiers: 2, link_latency: 700ns}", 8},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 2, link_latency: 700ns}", 8},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 2, link_latency: 700ns}", 5, kTrays},
                             Shape{"{topology: fat_tree, radix: 8, tiers: 3, link_latency: 700ns}", 30},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 3, link_latency: 700ns}", 30},
                             Shape{"{topology: rail_clos, radix: 8, tiers: 3, link_latency: 700ns}", 15, kTrays},
                             Shape{"{topology: fat_tree, radix: 6, tiers: 2, link_latency: 700ns}", 5},
                             Shape{"{topology: torus, dims: [5, 3, 3], link_latency: 100ns}", 40},
                             Shape{"{topology: dragonfly, routers_per_group: 4, hosts_per_router: 2, "
                                   "global_links_per_router: 2, link_latency: 100ns}", 36},
                             Shape{"{topology: dragonfly, routers_per_group: 4, hosts_per_router: 1, "
                                   "global_links_per_router: 2, groups: 4, link_latency: 100ns}", 8}}) {
    const std::string name = shape.fabric;
    CAPTURE(name);
    const auto s = load_shape(shape);
    const fabric::Fabric& f = *s.fabric;
    const auto scope = tools::fabric_scope(f);
    REQUIRE(scope.has_value());
    const std::uint32_t base = first_switch(f);
    std::map<std::int64_t, std::vector<std::int64_t>> held;  // switch unit -> its NICs, by the fabric
    for (std::int64_t e = 0; e < f.endpoints(); ++e) {
      const std::int64_t unit = f.attachment(e).value - base;
      CHECK(scope->nic_switch(e) == unit);
      held[unit].push_back(e);
    }
    for (std::int64_t u = 0; u < f.switch_count(); ++u) {
      CAPTURE(u);
      CHECK(scope->nics_behind(true, u) == held[u]);
    }
    for (std::size_t u = 0; u < scope->cables.size(); ++u) {
      const auto& c = scope->cables[u];
      CAPTURE(u);
      if (c.access) {
        CHECK(c.nic / f.nics_per_node == c.a);
        CHECK(f.attachment(c.nic).value - base == c.b);
      }
      CHECK(scope->nics_behind(false, static_cast<std::int64_t>(u)) ==
            (c.access ? std::vector<std::int64_t>{c.nic} : std::vector<std::int64_t>{}));
    }
  }
}

TEST_CASE("fabric scope: a job on one plane of a torus crosses that plane alone; non-minimal dragonfly routing has none") {
  scenario::LoadOptions o;
  o.sets = {"cluster.nodes=32", "cluster.node={gpu: h100-sxm, gpus: 2, nics: 2, nic_bandwidth: 400Gbps}",
            "fabric={topology: torus, dims: [4, 4, 2], link_latency: 100ns}"};
  const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
  const auto scope = tools::fabric_scope(*s.fabric);
  REQUIRE(scope.has_value());
  std::vector<std::int64_t> plane;  // z = 0: routers 0 .. 15
  for (std::int64_t n = 0; n < 16; ++n) plane.push_back(n);
  CHECK(scope->crossed(plane) == 16);
  for (std::int64_t u = 0; u < 32; ++u) CHECK(scope->crosses(plane, u) == (u < 16));
  // Its 32 NIC cables and the plane's 4 x 4 torus links in x and in y.
  CHECK(scope->crossed_cables(plane) == 32 + 16 + 16);
  // Nodes 0 and 2 of a ring of 4: a tie, both ways round: the whole x ring of y = 0, z = 0.
  CHECK(scope->crossed({0, 2}) == 4);
  // Nodes 0 and 1: the short way only.
  CHECK(scope->crossed({0, 1}) == 2);
  o.sets.back() = "fabric={topology: dragonfly, routers_per_group: 4, hosts_per_router: 2, global_links_per_router: 2, "
                  "routing: ugal, link_latency: 100ns}";
  const auto ugal = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
  CHECK_FALSE(tools::fabric_scope(*ugal.fabric).has_value());
}

TEST_CASE("degraded fabric: a job inside one pod is sampled on its pod's switches; cores leave it whole") {
  // 3 tiers of radix-8 switches, nodes of 2 GPUs and 2 NICs: 2 nodes per leaf, 4 leaves and
  // 4 aggregation switches per pod, 4 pods. The job (4 nodes, data-parallel rings across
  // 2 leaves of pod 0) crosses pod 0's aggregation switches and no core.
  scenario::LoadOptions o;
  o.sets = {"cluster.nodes=32", "cluster.node={gpu: h100-sxm, gpus: 2, nics: 2, nic_bandwidth: 400Gbps}",
            "fabric={topology: fat_tree, radix: 8, tiers: 3, link_latency: 700ns}", "workload.jobs[0].gpus=8",
            "workload.jobs[0].parallelism={tp: 2, pp: 1, dp: 4, zero: 1}", "workload.jobs[0].global_batch=64"};
  const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml", o);
  const auto& job = s.jobs.at(0);
  const double healthy = workload::simulate_step(tools::step_inputs(s, job)).step_time_s;
  std::map<std::string, tools::DegradedClass> by_name;
  for (const auto& c : tools::degraded_steps(s, job, healthy)) by_name[c.name] = c;
  REQUIRE(by_name.count("spine") == 1);
  REQUIRE(by_name.count("core") == 1);
  // Every aggregation switch sampled is one of pod 0's: each takes a quarter of the
  // leaves' uplinks there, so each slows the rings. (Sampled over all 16, 3 of 4 samples
  // would have been in other pods, and cost nothing.)
  CHECK(by_name["spine"].count == 16);
  CHECK(by_name["spine"].factor < 1.0);
  const auto& layout = std::get<fabric::ClosLayout>(s.fabric->layout);
  double lo = 1e300, hi = 0.0;
  for (std::uint32_t a = 0; a < 4; ++a) {  // pod 0's aggregation switches, one at a time
    fabric::Fabric f = *s.fabric;
    f.fail_vertex(fabric::VertexId{layout.agg_base + a});
    workload::StepInputs in = tools::step_inputs(s, job);
    in.fabric = &f;
    const double t = workload::simulate_step(in).step_time_s;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  CHECK(hi > healthy);
  CHECK(by_name["spine"].step_time_s >= lo * (1.0 - 1e-12));
  CHECK(by_name["spine"].step_time_s <= hi * (1.0 + 1e-12));
  // No core carries its traffic: the cores' class is sampled over all of them (none
  // crossed) and costs nothing; the long run never sends it their failures anyway.
  CHECK(by_name["core"].factor == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("rerouting: factors never above 1; each copy of a job its own classes; torus routers reroute") {
  // A 3-tier rail Clos of radix 16 where some rerouted steps come out faster than the healthy
  // one (the detour spreads the flows better than the healthy ECMP draw): the factors stay at
  // most 1, or concurrent failures would multiply into a job faster than healthy.
  {
    scenario::LoadOptions o;
    o.sets = {"cluster.nodes=24", "fabric={topology: rail_clos, radix: 16, tiers: 3, link_latency: 700ns}",
              "network.model=analytical", "workload.jobs[0].gpus=192", "workload.jobs[0].parallelism.dp=24",
              "workload.jobs[0].parallelism.tp=8", "workload.jobs[0].parallelism.pp=1",
              "workload.jobs[0].global_batch=192"};
    const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml", o);
    const auto& job = s.jobs.at(0);
    const double healthy = workload::simulate_step(tools::step_inputs(s, job)).step_time_s;
    const auto classes = tools::degraded_steps(s, job, healthy);
    REQUIRE_FALSE(classes.empty());
    bool faster = false;
    for (const auto& c : classes) {
      CAPTURE(c.name);
      CHECK(c.factor <= 1.0);
      faster = faster || c.step_time_s < healthy;
    }
    CHECK(faster);  // the case the cap is for (if a model change removes it, find another shape)
  }
  // Two copies of a 4-node job on 8 one-NIC nodes under radix-8 leaves at 1:7 (7 nodes
  // each, one uplink) and one spine (a leaf with one up port can reach only one): copy 0
  // (nodes 0-3) sits under one leaf, and the spine does not reach it; copy 1 (nodes 4-7)
  // spans both leaves, and losing the spine cuts it off: no class.
  {
    scenario::LoadOptions o;
    o.sets = {"cluster.nodes=8", "cluster.node={gpu: h100-sxm, gpus: 1, nics: 1, nic_bandwidth: 400Gbps}",
              "fabric={topology: fat_tree, radix: 8, tiers: 2, oversubscription: \"1:7\", link_latency: 700ns}",
              "network.model=analytical",
              "workload.jobs=[{name: a, count: 2, model: {name: tiny, layers: 8, hidden: 1024, heads: 8, "
              "ffn_hidden: 4096, vocab: 32000, seq_len: 2048}, gpus: 4, parallelism: {dp: 4}, global_batch: 16}]",
              "failures={components: {switch: {rate: 0.5/switch-day, effect: reroute}}}", "simulation.horizon=10d"};
    const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
    REQUIRE(s.jobs.size() == 2);
    REQUIRE(s.fabric->tiers.at(1).switches == 1);
    std::vector<workload::StepResult> steps;
    for (const auto& j : s.jobs) steps.push_back(workload::simulate_step(tools::step_inputs(s, j)));
    const auto in = tools::long_run_inputs(s, steps, fabric::measure(*s.fabric, s.pricing));
    REQUIRE(in.jobs.size() == 2);
    const auto spine_class = [](const reliability::JobProfile& p) {
      return std::any_of(p.degradations.begin(), p.degradations.end(),
                         [](const reliability::Degradation& d) { return d.is_switch; });
    };
    CHECK(spine_class(in.jobs[0]));
    CHECK_FALSE(spine_class(in.jobs[1]));
  }
  // A torus job: its routers' failure restarts it, a transit router's reroutes it.
  {
    scenario::LoadOptions o;
    o.sets = {"cluster.nodes=16", "cluster.node={gpu: h100-sxm, gpus: 1, nics: 1, nic_bandwidth: 400Gbps}",
              "fabric={topology: torus, dims: [4, 4], link_latency: 100ns}", "network.model=analytical",
              "workload.jobs=[{name: a, model: {name: tiny, layers: 8, hidden: 1024, heads: 8, ffn_hidden: 4096, "
              "vocab: 32000, seq_len: 2048}, gpus: 5, parallelism: {dp: 5}, global_batch: 20}]"};
    const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
    const auto& job = s.jobs.at(0);
    const double healthy = workload::simulate_step(tools::step_inputs(s, job)).step_time_s;
    const auto classes = tools::degraded_steps(s, job, healthy);
    const auto router = std::find_if(classes.begin(), classes.end(), [](const auto& c) { return c.name == "router"; });
    REQUIRE(router != classes.end());
    CHECK(router->is_switch);
    CHECK(router->count == 16);
    const auto scope = tools::fabric_scope(*s.fabric);
    REQUIRE(scope.has_value());
    const std::vector<std::int64_t> nodes{0, 1, 2, 3, 4};
    for (std::int64_t u = 0; u < 16; ++u) CHECK(scope->holds_endpoint(nodes, u) == (u < 5));
    CHECK_FALSE(scope->holds_endpoint({0, 16}, 15));  // a spare holds no router
  }
}

TEST_CASE("long run on a torus with rerouting routers: the job's own routers restart it, transit routers do not") {
  // A 5-node job on a 4 x 4 torus of one-NIC nodes: its routers are 0-4; its routes pass 3
  // more (its hull), which reroute. At 1 failure per router-day, only its own 5 routers
  // interrupt it: MTBF 86,400 / 5 s, about 5 x 10 interruptions in 10 days.
  scenario::LoadOptions o;
  o.sets = {"cluster.nodes=16", "cluster.node={gpu: h100-sxm, gpus: 1, nics: 1, nic_bandwidth: 400Gbps}",
            "fabric={topology: torus, dims: [4, 4], link_latency: 100ns}", "network.model=analytical",
            "workload.jobs=[{name: a, model: {name: tiny, layers: 8, hidden: 1024, heads: 8, ffn_hidden: 4096, "
            "vocab: 32000, seq_len: 2048}, gpus: 5, parallelism: {dp: 5}, global_batch: 20}]",
            "failures={components: {switch: {rate: 1/switch-day, effect: reroute, hardware: false}}, "
            "repair: {detect: 1min, restart: 1min}}",
            "simulation={horizon: 10d, replications: 20, seed: 5}"};
  const auto s = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
  std::vector<workload::StepResult> steps{workload::simulate_step(tools::step_inputs(s, s.jobs.at(0)))};
  const auto in = tools::long_run_inputs(s, steps, fabric::measure(*s.fabric, s.pricing));
  REQUIRE(in.scope.has_value());
  const reliability::LongRunResult r = reliability::simulate_long_run(in);
  REQUIRE(r.jobs.size() == 1);
  CHECK(r.jobs[0].mtbf_s == doctest::Approx(86400.0 / 5.0));
  CHECK(r.jobs[0].interruptions.mean == doctest::Approx(50.0).epsilon(0.15));
  // The routers failed about 16 x 10 times in all: most of them did not stop the job.
  CHECK(r.failures_by_cause.at("switch").mean > 2.0 * r.jobs[0].interruptions.mean);
}

TEST_CASE("rerouting classes of a copy equal those of the same job as its own entry") {
  // A copy shares its entry's first copy's step; its factors must still compare its own
  // healthy and degraded steps (both on its nodes), as a separate entry's do.
  const auto load = [](const std::string& jobs) {
    scenario::LoadOptions o;
    o.sets = {"cluster.nodes=32", "cluster.node={gpu: h100-sxm, gpus: 1, nics: 1, nic_bandwidth: 400Gbps}",
              "fabric={topology: fat_tree, radix: 8, tiers: 3, link_latency: 700ns}", "network.model=analytical",
              "workload.jobs=" + jobs, "failures={components: {switch: {rate: 0.5/switch-day, effect: reroute}}}",
              "simulation.horizon=10d"};
    return scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/base.yaml", o);
  };
  const std::string job = "model: {name: tiny, layers: 8, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 32000, "
                          "seq_len: 2048}, gpus: 12, parallelism: {dp: 12}, global_batch: 48}";
  const auto copies = load("[{name: a, count: 2, " + job + "]");
  const auto separate = load("[{name: a-0, " + job + ", {name: a-1, " + job + "]");
  const auto inputs = [](const scenario::LoadedScenario& s) {
    std::vector<workload::StepResult> steps;
    for (const auto& j : s.jobs) steps.push_back(workload::simulate_step(tools::step_inputs(s, j)));
    if (s.jobs.size() == 2 && s.jobs[1].copy == 1) steps[1] = steps[0];  // as compute_run shares a copy's step
    return tools::long_run_inputs(s, steps, fabric::measure(*s.fabric, s.pricing));
  };
  const auto a = inputs(copies);
  const auto b = inputs(separate);
  REQUIRE(a.jobs.size() == 2);
  REQUIRE(b.jobs.size() == 2);
  REQUIRE(a.jobs[1].degradations.size() == b.jobs[1].degradations.size());
  REQUIRE_FALSE(a.jobs[1].degradations.empty());
  for (std::size_t k = 0; k < a.jobs[1].degradations.size(); ++k) {
    CAPTURE(a.jobs[1].degradations[k].name);
    CHECK(a.jobs[1].degradations[k].factor == doctest::Approx(b.jobs[1].degradations[k].factor));
  }
}
