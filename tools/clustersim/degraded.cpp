#include "tools/clustersim/degraded.hpp"

#include <algorithm>
#include <map>

#include "models/fabric/graph.hpp"
#include "models/workload/step.hpp"
#include "sim/check.hpp"
#include "tools/clustersim/report.hpp"

namespace clustersim::tools {

namespace {

bool is_leaf(fabric::VertexKind k) { return k == fabric::VertexKind::leaf; }

bool switch_to_switch(fabric::LinkKind k) {
  using fabric::LinkKind;
  return k == LinkKind::leaf_spine || k == LinkKind::spine_core || k == LinkKind::local || k == LinkKind::global ||
         k == LinkKind::torus;
}

// Whether every switch the job's endpoints plug into still reaches the first one.
bool job_connected(const fabric::Fabric& f, const scenario::ResolvedJob& job) {
  const std::int64_t first_endpoint = f.endpoint_of_gpu(job.first_gpu);
  const std::vector<std::int64_t> dist = fabric::switch_distances(f, f.attachment(first_endpoint));
  for (std::int64_t g = job.first_gpu; g < job.first_gpu + job.config.gpus; g += f.gpus_per_node) {
    const std::int64_t node_first = f.endpoint_of_gpu(g);
    for (std::int64_t e = node_first; e < node_first + f.nics_per_node; ++e) {
      if (dist[f.attachment(e).value] < 0) return false;
    }
  }
  return true;
}

// Evenly spread picks among `count` elements: the middles of `samples` equal slices.
std::vector<std::int64_t> picks(std::int64_t count, int samples) {
  std::vector<std::int64_t> out;
  const std::int64_t k = std::min<std::int64_t>(count, samples);
  for (std::int64_t i = 0; i < k; ++i) out.push_back((2 * i + 1) * count / (2 * k));
  return out;
}

}  // namespace

std::optional<reliability::FabricScope> fabric_scope(const fabric::Fabric& f) {
  using Kind = reliability::FabricScope::Kind;
  reliability::FabricScope scope;
  scope.nics_per_node = f.nics_per_node;
  scope.nodes = f.nodes;
  std::uint32_t base = 0;  // the first switch's vertex: switch unit = vertex - base
  if (const auto* c = std::get_if<fabric::ClosLayout>(&f.layout)) {
    scope.kind = Kind::clos;
    scope.rail = c->rail;
    scope.rails = c->rails;
    scope.tiers = c->tiers;
    scope.leaf_down = c->d1;
    scope.leaves = c->leaves;
    if (c->tiers == 3) {
      scope.leaves_per_pod = c->d2;
      scope.aggs_per_pod = c->u1;
      scope.aggs = c->pods * c->u1;
    }
    scope.tops = c->top_switches;
    base = c->leaf_base;
  } else if (const auto* t = std::get_if<fabric::TorusLayout>(&f.layout)) {
    scope.kind = Kind::torus;
    scope.dims = t->dims;
    scope.routers = t->routers;
    base = t->router_base;
  } else if (const auto* d = std::get_if<fabric::DragonflyLayout>(&f.layout)) {
    if (d->routing != fabric::Routing::minimal) return std::nullopt;  // Valiant, UGAL: any group
    scope.kind = Kind::dragonfly;
    scope.routers_per_group = d->a;
    scope.hosts_per_router = d->p;
    scope.routers = d->a * d->g;
    base = d->router_base;
    for (std::int64_t n = 0; n < f.nodes; ++n) {
      scope.node_routers.emplace_back(f.attachment(n * f.nics_per_node).value - base,
                                      f.attachment((n + 1) * f.nics_per_node - 1).value - base);
    }
  } else {
    return std::nullopt;
  }
  CLUSTERSIM_CHECK(scope.switches() == f.switch_count(), "switch units are the fabric's switches");
  // The cable units, by their ends: a NIC's node, or switch units.
  const auto unit_of = [&](fabric::VertexId v) { return static_cast<std::int64_t>(v.value) - base; };
  for (const fabric::LinkId id : fabric::failure_cables(f)) {
    const fabric::Link& l = f.links[id.value];
    reliability::FabricScope::Cable cable;
    if (l.kind == fabric::LinkKind::access) {
      const fabric::VertexId nic = f.vertex_kind[l.src.value] == fabric::VertexKind::nic ? l.src : l.dst;
      const auto endpoint = static_cast<std::int64_t>(nic.value - f.nic_base);
      cable = {true, endpoint / f.nics_per_node, unit_of(nic == l.src ? l.dst : l.src), endpoint};
    } else {
      const std::int64_t a = unit_of(l.src), b = unit_of(l.dst);
      CLUSTERSIM_CHECK(a >= 0 && b >= 0 && a < scope.switches() && b < scope.switches() && a != b,
                       "a cable between boxes joins two switches");
      cable = {false, std::min(a, b), std::max(a, b)};
    }
    scope.cables.push_back(cable);
  }
  return scope;
}

std::vector<DegradedClass> degraded_steps(const scenario::LoadedScenario& loaded, const scenario::ResolvedJob& job,
                                          double healthy_step_s, int samples) {
  std::vector<DegradedClass> out;
  if (!loaded.fabric) return out;
  const fabric::Fabric& base = *loaded.fabric;

  // Switch units are the fabric's switches in vertex order; link units its cables
  // (fabric::failure_cables): the numbering the long-run model draws from. Only the
  // switches and cables the job crosses can slow it: the samples come from those.
  const std::optional<reliability::FabricScope> scope = fabric_scope(base);
  std::vector<std::int64_t> job_nodes;
  for (std::int64_t n = job.first_gpu / base.gpus_per_node;
       n < (job.first_gpu + job.config.gpus + base.gpus_per_node - 1) / base.gpus_per_node; ++n) {
    job_nodes.push_back(n);
  }
  const std::vector<bool> crossed_switch = scope ? scope->crossed_switch_flags(job_nodes) : std::vector<bool>{};
  const std::vector<bool> crossed_cable = scope ? scope->crossed_cable_flags(job_nodes, crossed_switch) : std::vector<bool>{};
  std::map<fabric::VertexKind, std::vector<fabric::VertexId>> by_kind, crossed;
  std::int64_t unit = 0;
  std::map<fabric::VertexKind, std::int64_t> first_unit;
  for (std::uint32_t v = 0; v < base.vertex_kind.size(); ++v) {
    const fabric::VertexKind k = base.vertex_kind[v];
    if (k == fabric::VertexKind::gpu || k == fabric::VertexKind::nic || k == fabric::VertexKind::scaleup) continue;
    if (!first_unit.count(k)) first_unit[k] = unit;
    by_kind[k].push_back(fabric::VertexId{v});
    if (!scope || crossed_switch[static_cast<std::size_t>(unit)]) crossed[k].push_back(fabric::VertexId{v});
    ++unit;
  }
  // Cables by kind, in unit order; and those the job crosses.
  std::map<fabric::LinkKind, std::vector<fabric::LinkId>> cables, crossed_cables;
  std::int64_t cable_unit = 0;
  for (const fabric::LinkId l : fabric::failure_cables(base)) {
    const fabric::LinkKind k = base.links[l.value].kind;
    cables[k].push_back(l);
    if (!scope || crossed_cable[static_cast<std::size_t>(cable_unit)]) crossed_cables[k].push_back(l);
    ++cable_unit;
  }

  const auto run = [&](const auto& fail) {
    fabric::Fabric f = base;
    fail(f);
    if (!job_connected(f, job)) return -1.0;
    workload::StepInputs in = step_inputs(loaded, job);
    in.fabric = &f;
    return workload::simulate_step(in).step_time_s;
  };
  // `elements`: those of the class's `count` units the samples come from.
  const auto add = [&](DegradedClass c, const auto& elements, const auto& fail_one) {
    const auto n = static_cast<std::int64_t>(elements.size());
    double sum = 0.0;
    for (std::int64_t i : picks(n, samples)) {
      const double t = run([&](fabric::Fabric& f) { fail_one(f, elements[static_cast<std::size_t>(i)]); });
      if (t <= 0.0) return;  // cuts the job off: not a rerouting class
      sum += t;
    }
    c.step_time_s = sum / static_cast<double>(std::min<std::int64_t>(n, samples));
    // Never above 1: losing an element cannot speed the job up. A rerouted step can come out
    // a little faster than the healthy one when the detour happens to spread its flows
    // better than the healthy routes' ECMP draw (one draw of a random variable, see
    // fabric.hpp); that luck is not the element's, and factors of concurrent failures
    // multiply (hundreds of cables at 1.01 each read as a job 67 times as fast).
    c.factor = std::min(1.0, healthy_step_s / c.step_time_s);
    out.push_back(std::move(c));
  };
  for (const auto& [kind, vertices] : by_kind) {
    if (is_leaf(kind)) continue;  // a leaf the job crosses holds its NICs
    // The class spans every switch of its kind (the units the long run draws from); the
    // factor is the mean over the ones the job's nominal nodes cross, or over all of them
    // when it crosses none (the job, re-placed, may). Torus and dragonfly routers: over
    // those that do not hold the job's NICs, the transit routers (the long run restarts the
    // job when one of its own fails).
    auto elements = crossed.count(kind) ? crossed[kind] : vertices;
    if (kind == fabric::VertexKind::router && scope) {
      const std::vector<bool> endpoints = scope->endpoint_flags(job_nodes);
      const auto own = [&](fabric::VertexId v) {
        return endpoints[static_cast<std::size_t>(first_unit[kind] + static_cast<std::int64_t>(v.value - vertices.front().value))];
      };
      std::erase_if(elements, own);
      if (elements.empty()) {
        elements = vertices;
        std::erase_if(elements, own);
      }
      if (elements.empty()) continue;  // every router holds the job's NICs
    } else if (kind == fabric::VertexKind::router) {
      continue;  // no scope: which routers are the job's own is not known
    }
    add(DegradedClass{fabric::name(kind), true, first_unit[kind], static_cast<std::int64_t>(vertices.size())}, elements,
        [](fabric::Fabric& f, fabric::VertexId v) { f.fail_vertex(v); });
  }
  std::int64_t link_unit = 0;
  for (const auto& [kind, list] : cables) {
    if (switch_to_switch(kind)) {
      const auto it = crossed_cables.find(kind);
      add(DegradedClass{std::string(fabric::name(kind)) + " link", false, link_unit, static_cast<std::int64_t>(list.size())},
          it != crossed_cables.end() ? it->second : list, [](fabric::Fabric& f, fabric::LinkId l) { f.fail_link(l); });
    }
    link_unit += static_cast<std::int64_t>(list.size());
  }
  return out;
}

}  // namespace clustersim::tools
