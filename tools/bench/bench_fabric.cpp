// bench_fabric: builds 131,072-GPU fabrics and times route lookups.
//
// Cases (16,384 DGX H100-like nodes: 8 GPUs, 8 NICs of 400 Gb/s each; 131,072 endpoints):
//   clos       3-tier fat tree of 128-port switches (k^3/4 = 524,288 endpoints possible)
//   rail_clos  3-tier rail-optimized Clos of 128-port switches
//   dragonfly  a=32 routers per group, p=16 hosts, h=16 global links: 256 groups of 512
//   torus      32x32x16 torus, one node per vertex
// For each it prints one JSON line:
//   {"case":..., "gpus":..., "vertices":..., "links":..., "build_seconds":..., "peak_rss_bytes":...,
//    "metrics_seconds":..., "route_ns":..., "routes":...}
// Each case runs in a child process (fork), so peak_rss_bytes is that case's alone.
// route_ns is the mean time of Fabric::route between random GPU pairs (closed form, healthy
// fabric), including the GPU->NIC and NIC->GPU hops. Targets: build under 5 s and 2 GB, a
// route lookup under 1 us.
//
// Usage: bench_fabric [--quick]   (--quick: 1/16 of the nodes, fewer routes; a smoke test)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "models/fabric/fabric.hpp"
#include "models/fabric/metrics.hpp"
#include "sim/random.hpp"

namespace {

using namespace clustersim;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

cluster::ResolvedNode dgx_like() {
  cluster::ResolvedNode n;
  n.name = "dgx-h100";
  n.spec.gpus = 8;
  n.spec.nics = 8;
  n.spec.nic_bandwidth = sim::Bandwidth::of(50e9);
  n.spec.scaleup = hardware::ScaleUp::nvswitch;
  n.scaleup_bandwidth = sim::Bandwidth::of(450e9);
  return n;
}

fabric::FabricConfig config_for(const char* name) {
  fabric::FabricConfig c;
  c.link_latency = sim::Time::from_ns(700);
  if (std::strcmp(name, "clos") == 0 || std::strcmp(name, "rail_clos") == 0) {
    c.topology = std::strcmp(name, "clos") == 0 ? fabric::Topology::fat_tree : fabric::Topology::rail_clos;
    c.radix = 128;
    c.tiers = 3;
  } else if (std::strcmp(name, "dragonfly") == 0) {
    c.topology = fabric::Topology::dragonfly;
    c.routers_per_group = 32;
    c.hosts_per_router = 16;
    c.global_links_per_router = 16;
    c.groups = 256;  // of at most a*h + 1 = 513: 131,072 endpoints exactly
  } else {
    c.topology = fabric::Topology::torus;
    c.dims = {32, 32, 16};
  }
  return c;
}

void run_case(const char* name, std::int64_t nodes, int routes) {
  const auto t0 = Clock::now();
  std::vector<fabric::FabricError> errors;
  fabric::FabricConfig cfg = config_for(name);
  if (cfg.topology == fabric::Topology::torus && nodes < 16384) cfg.dims = {16, 8, 8};
  std::optional<fabric::Fabric> f = fabric::build_fabric(cfg, dgx_like(), nodes, errors);
  const double build = since(t0);
  if (!f) {
    std::fprintf(stderr, "%s: %s\n", name, errors.front().message.c_str());
    std::exit(1);
  }
  const auto t1 = Clock::now();
  const fabric::FabricMetrics m = fabric::measure(*f, fabric::PricingTable{});
  const double metrics = since(t1);

  sim::RandomStream rng = sim::make_stream(1, "bench_fabric");
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs(static_cast<std::size_t>(routes));
  for (auto& p : pairs) {
    p.first = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(f->gpus())));
    p.second = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(f->gpus())));
  }
  std::vector<fabric::LinkId> path;
  path.reserve(16);
  std::size_t total_links = 0;
  const auto t2 = Clock::now();
  std::uint64_t flow = 0;
  for (const auto& [a, b] : pairs) {
    path.clear();
    f->route(a, b, flow++, path);
    total_links += path.size();
  }
  const double route_s = since(t2);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print(
      R"({{"case":"{}","gpus":{},"vertices":{},"links":{},"switches":{},"build_seconds":{:.3f},"peak_rss_bytes":{},)"
      R"("metrics_seconds":{:.3f},"route_ns":{:.1f},"routes":{},"mean_links_per_route":{:.2f},"diameter_hops":{}}})"
      "\n",
      name, f->gpus(), f->vertex_kind.size(), f->links.size(), f->switch_count(), build,
      static_cast<long long>(usage.ru_maxrss) * 1024, metrics, route_s / routes * 1e9, routes,
      static_cast<double>(total_links) / routes, m.diameter_hops);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::int64_t nodes = quick ? 1024 : 16384;
  const int routes = quick ? 20'000 : 2'000'000;
  int failures = 0;
  for (const char* name : {"clos", "rail_clos", "dragonfly", "torus"}) {
    const pid_t pid = fork();
    if (pid == 0) {
      run_case(name, nodes, routes);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}
