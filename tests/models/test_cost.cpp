// The cost and monitoring models (models/cost/): each equation on a tiny cluster with
// numbers worked by hand, the node price's order of precedence, the built-in priced table,
// and the monitoring section's relation checks.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/cost/cost.hpp"
#include "models/cost/monitoring.hpp"
#include "models/scenario/scenario.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::cost;

namespace {

fabric::PricingTable table_with(bool server, bool gpu, bool host) {
  fabric::PricingTable t;
  if (server) t.servers["box"] = fabric::ServerPrice{sim::Money::of(100'000), true, 2, "2024", "", ""};
  if (gpu) t.gpus["chip"] = fabric::ItemPrice{sim::Money::of(20'000), "2024", "", ""};
  if (host) t.host_per_gpu = fabric::ItemPrice{sim::Money::of(5'000), "2024", "", ""};
  return t;
}

// A fabric of one switch (10,000 USD, 50 W), 8 NICs (1,000 USD, 20 W each) and 4 optical
// transceivers (500 USD, 8 W each).
fabric::FabricMetrics tiny_fabric() {
  fabric::FabricMetrics m;
  m.switches = 1;
  m.costs = {{"switches", "sw", 1, sim::Money::of(10'000), sim::Power::of(50)},
             {"nics", "nic", 8, sim::Money::of(8'000), sim::Power::of(160)},
             {"transceivers", "osfp", 4, sim::Money::of(2'000), sim::Power::of(32)}};
  m.capex = sim::Money::of(20'000);
  m.power = sim::Power::of(242);
  return m;
}

// 2 nodes x 4 GPUs of 500 W, 1,000 W of host each; PUE 1.5, 0.1 USD/kWh, a 2-year life,
// idle fractions 0.1 (GPU) and 0.5 (host), half busy.
CostInputs tiny(const fabric::FabricMetrics* fab) {
  CostInputs in;
  in.nodes = 2;
  in.gpus_per_node = 4;
  in.gpu_tdp = sim::Power::of(500);
  in.host_power = sim::Power::of(1000);
  in.economics.pue = 1.5;
  in.economics.energy_price = sim::EnergyPrice::of(0.1);
  in.economics.life = sim::Time::from_ns(2 * 31'557'600'000'000'000LL);
  in.economics.gpu_idle_fraction = 0.1;
  in.economics.host_idle_fraction = 0.5;
  in.node = price_node("box", "chip", 4, table_with(true, true, true), in.economics);
  in.fabric = fab;
  in.utilization = 0.5;
  return in;
}

}  // namespace

TEST_CASE("node price: economics.node_price, then the server entry, then GPUs plus host parts") {
  EconomicsConfig e;
  // The server entry: its price and rack count.
  NodePricing p = price_node("box", "chip", 4, table_with(true, true, true), e);
  REQUIRE(p.node_price);
  CHECK(p.node_price->value() == 100'000);
  CHECK(p.nodes_per_rack == 2);
  CHECK(p.gpu_price->value() == 20'000);
  // No server entry: 4 GPUs x (20,000 + 5,000 of host parts) = 100,000.
  p = price_node("other", "chip", 4, table_with(true, true, true), e);
  REQUIRE(p.node_price);
  CHECK(p.node_price->value() == 4 * (20'000 + 5'000));
  CHECK(p.nodes_per_rack == 1);
  // The scenario's price wins over the table; its rack count too.
  e.node_price = sim::Money::of(42'000);
  e.nodes_per_rack = 3;
  p = price_node("box", "chip", 4, table_with(true, true, true), e);
  CHECK(p.node_price->value() == 42'000);
  CHECK(p.nodes_per_rack == 3);
  CHECK(p.basis == "economics.node_price");
  // Nothing to price from.
  p = price_node("other", "unknown", 4, table_with(true, true, false), EconomicsConfig{});
  CHECK_FALSE(p.node_price);
  CHECK(p.unpriced.find("no price for node type 'other'") != std::string::npos);
}

TEST_CASE("capex, power, opex, depreciation and $/GPU-hour of a tiny cluster, by hand") {
  const fabric::FabricMetrics fab = tiny_fabric();
  const CostResult r = compute_cost(tiny(&fab));
  // Capex: GPUs 8 x 20,000 = 160,000; hosts 2 x (100,000 - 4 x 20,000) = 40,000; the NICs
  // come with the servers (not bought twice); switch 10,000 + transceivers 2,000.
  REQUIRE(r.capex);
  CHECK(r.capex->value() == Rel(212'000));
  double gpus = 0, hosts = 0, nics = 0;
  for (const CapexLine& l : r.capex_lines) {
    if (l.category == "gpus") gpus += l.capex.value();
    if (l.category == "hosts") hosts += l.capex.value();
    if (l.category == "nics") nics += l.capex.value();
  }
  CHECK(gpus == Rel(160'000));
  CHECK(hosts == Rel(40'000));
  CHECK(nics == 0);
  // Power at u = 0.5: GPUs 8 x 500 x (0.1 + 0.9 x 0.5) = 2,200 W; hosts 2 x 1,000 x (0.5 +
  // 0.5 x 0.5) = 1,500 W; network 50 + 32 = 82 W (the NICs are in the host power); IT 3,782
  // W; facility 1.5 x 3,782 = 5,673 W.
  CHECK(r.average.gpus.value() == Rel(2200));
  CHECK(r.average.hosts.value() == Rel(1500));
  CHECK(r.average.network.value() == Rel(82));
  CHECK(r.average.it.value() == Rel(3782));
  CHECK(r.average.facility.value() == Rel(5673));
  // Peak: 4,000 + 2,000 + 82 = 6,082 W IT, 9,123 W facility.
  CHECK(r.peak.it.value() == Rel(6082));
  CHECK(r.peak.facility.value() == Rel(9123));
  // Energy: 5,673 W x 8,766 h = 49,729.718 kWh a year; opex x 0.1 USD/kWh = 4,972.9718 USD.
  CHECK(r.energy_per_year_kwh == Rel(49'729.718));
  CHECK(r.opex_per_year.value() == Rel(4'972.9718));
  // Straight line over 2 years: 106,000 USD a year; cost per year 110,972.9718 USD;
  // $/GPU-hour = 110,972.9718 / (8 x 8,766) = 1.58244...
  CHECK(r.life_years == Rel(2.0));
  REQUIRE(r.depreciation_per_year);
  CHECK(r.depreciation_per_year->value() == Rel(106'000));
  CHECK(r.cost_per_year->value() == Rel(110'972.9718));
  REQUIRE(r.usd_per_gpu_hour);
  CHECK(*r.usd_per_gpu_hour == Rel(110'972.9718 / (8 * 8766.0)));
  // TCO = 212,000 + 2 x 4,972.9718 = 221,945.9436 USD.
  CHECK(r.tco->value() == Rel(221'945.9436));
  // Racks: 2 nodes per rack, 1 rack; 2 x (4 x 500 + 1,000) = 6,000 W per rack at peak.
  CHECK(r.racks == 1);
  CHECK(r.rack_power.value() == Rel(6000));
}

TEST_CASE("servers without their NICs buy the fabric's NIC line; other capex is one line") {
  const fabric::FabricMetrics fab = tiny_fabric();
  CostInputs in = tiny(&fab);
  in.node.includes_nics = false;
  in.economics.other_capex = sim::Money::of(1'000);
  const CostResult r = compute_cost(in);
  // 212,000 + 8 NICs at 1,000 + 1,000 other.
  CHECK(r.capex->value() == Rel(221'000));
  // The NICs' power still is not added: the host power holds it.
  CHECK(r.average.network.value() == Rel(82));
  // A node without a host power has nothing to hold it: 82 + 8 x 20 = 242 W of network, and
  // a rack of the 2 nodes draws their GPUs and 4 NICs each: 2 x (4 x 500 + 4 x 20) = 4,160 W.
  in.host_power = sim::Power::of(0);
  CHECK(compute_cost(in).average.network.value() == Rel(242));
  CHECK(compute_cost(in).rack_power.value() == Rel(4160));
}

TEST_CASE("an unpriced node or fabric leaves capex and $/GPU-hour absent, and says why") {
  const fabric::FabricMetrics fab = tiny_fabric();
  CostInputs in = tiny(&fab);
  in.node = price_node("other", "unknown", 4, table_with(false, false, false), in.economics);
  CostResult r = compute_cost(in);
  CHECK_FALSE(r.capex);
  CHECK_FALSE(r.usd_per_gpu_hour);
  CHECK_FALSE(r.tco);
  REQUIRE_FALSE(r.unpriced.empty());
  CHECK(r.unpriced.front().find("economics.node_price") != std::string::npos);
  // Power and energy do not need prices.
  CHECK(r.opex_per_year.value() == Rel(4'972.9718));

  fabric::FabricMetrics unpriced = tiny_fabric();
  unpriced.capex.reset();
  unpriced.unpriced = {"no priced switch has 300 ports at 400Gbps"};
  r = compute_cost(tiny(&unpriced));
  CHECK_FALSE(r.capex);
  CHECK(r.unpriced.back() == "network: no priced switch has 300 ports at 400Gbps");
}

TEST_CASE("fleet utilisation: GPU-weighted busy shares, idle GPUs outside jobs, full load without jobs") {
  // (4 x 0.5 + 2 x 1.0) / 8 = 0.5
  CHECK(fleet_utilization({{4, 0.5}, {2, 1.0}}, 8) == Rel(0.5));
  CHECK(fleet_utilization({}, 8) == 1.0);
  // Shares are clamped to [0, 1].
  CHECK(fleet_utilization({{8, 1.5}}, 8) == 1.0);
}

TEST_CASE("hot spares: bought like nodes (their own capex line) with their share of the fabric, idle power, racks; "
          "$/GPU-hour over serving GPUs") {
  const fabric::FabricMetrics fab = tiny_fabric();
  CostInputs in = tiny(&fab);
  in.spare_nodes = 3;
  const CostResult r = compute_cost(in);
  // Capex: 212,000 + 3 spares x 100,000 + their fabric share, 3 / 2 nodes x the 12,000 of
  // network bought (switch and transceivers; the NICs come with the servers) = 530,000.
  REQUIRE(r.capex);
  CHECK(r.capex->value() == Rel(530'000));
  double spares = 0, network = 0;
  std::int64_t count = 0;
  for (const CapexLine& l : r.capex_lines) {
    if (l.category == "spares") spares += l.capex.value(), count += l.count;
    if (l.category == "spares_network") network += l.capex.value();
  }
  CHECK(spares == Rel(300'000));
  CHECK(network == Rel(18'000));
  CHECK(count == 3);
  // Idle power: 3 x (4 x 500 x 0.1 + 1,000 x 0.5) = 2,100 W, at any load; IT 3,782 + 2,100.
  CHECK(r.average.spares.value() == Rel(2100));
  CHECK(r.peak.spares.value() == Rel(2100));
  CHECK(r.average.it.value() == Rel(5882));
  CHECK(r.peak.it.value() == Rel(8182));
  // $/GPU-hour: (530,000 / 2 + 1.5 x 5,882 W x 8,766 h x 0.1 USD/kWh) / (8 x 8,766), the
  // spares carried by the 8 serving GPUs.
  REQUIRE(r.usd_per_gpu_hour);
  CHECK(*r.usd_per_gpu_hour == Rel((265'000 + 1.5 * 5882 * 8766 / 1000 * 0.1) / (8 * 8766.0)));
  // Racks: 5 nodes, 2 per rack: 3 racks.
  CHECK(r.racks == 3);
  CHECK(r.gpus == 8);
}

TEST_CASE("busy share under a schedule: the schedule's utilisation x the GPU-time-weighted compute shares") {
  // U 0.6; jobs spanning 100 and 300 GPU-s, busy 0.5 and 0.9: 0.6 x (50 + 270) / 400 = 0.48.
  CHECK(scheduled_utilization(0.6, {{100, 0.5}, {300, 0.9}}) == Rel(0.48));
  // A job that never starts weighs nothing.
  CHECK(scheduled_utilization(0.6, {{0, 0.1}, {300, 0.9}}) == Rel(0.54));
  // Never above the schedule's utilisation, whatever the queue's total GPU demand.
  CHECK(scheduled_utilization(0.58, {{1e9, 1.0}, {1e9, 1.0}}) == Rel(0.58));
  CHECK(scheduled_utilization(0.6, {}) == 0.0);
}

TEST_CASE("training cost: the job's own GPUs and hosts at its busy share, its share of the network, depreciation per GPU-hour") {
  const fabric::FabricMetrics fab = tiny_fabric();
  const CostInputs in = tiny(&fab);
  const CostResult c = compute_cost(in);
  // 4 of the 8 GPUs (one node), busy 90%, for 10 h: 40 GPU-hours; 1e9 tokens. IT power:
  // GPUs 4 x 500 x (0.1 + 0.9 x 0.9) = 1,820 W, host 1,000 x (0.5 + 0.5 x 0.9) = 950 W, half
  // the network's 82 W (switch and optics; the NICs are in the node) = 41 W: 2,811 W, x PUE
  // 1.5 for 10 h = 42.165 kWh.
  const TrainingCost t = training_cost(in, c, 4, 0.9, 36'000.0, 1e9);
  CHECK(t.gpu_hours == Rel(40));
  CHECK(t.busy_share == Rel(0.9));
  CHECK(t.energy_kwh == Rel(42.165));
  // Capex 212,000 over 2 years: 106,000 USD/year over 8 GPUs x 8,766 h; plus the energy.
  REQUIRE(t.cost_usd);
  CHECK(*t.cost_usd == Rel(40 * 106'000 / (8 * 8766.0) + 42.165 * 0.1));
  CHECK(*t.usd_per_million_tokens == Rel(*t.cost_usd / 1000.0));
}

TEST_CASE("training cost: idle GPUs beside a job do not make it cheaper") {
  // The same job on 2 nodes and on 4 (no fabric, so nothing is shared): the fleet's busy
  // share halves and with it its average $/GPU-hour, but the job's energy and cost stay.
  CostInputs two = tiny(nullptr);
  CostInputs four = tiny(nullptr);
  four.nodes = 4;
  four.utilization = 0.25;
  const CostResult c2 = compute_cost(two);
  const CostResult c4 = compute_cost(four);
  REQUIRE(c2.usd_per_gpu_hour);
  REQUIRE(c4.usd_per_gpu_hour);
  CHECK(*c4.usd_per_gpu_hour < *c2.usd_per_gpu_hour);
  const TrainingCost t2 = training_cost(two, c2, 8, 0.5, 36'000.0, 1e9);
  const TrainingCost t4 = training_cost(four, c4, 8, 0.5, 36'000.0, 1e9);
  CHECK(t4.energy_kwh == Rel(t2.energy_kwh));
  REQUIRE(t2.cost_usd);
  REQUIRE(t4.cost_usd);
  CHECK(*t4.cost_usd == Rel(*t2.cost_usd));
}

TEST_CASE("monitoring: series, ingest, storage per day and at retention with rollups, by hand") {
  MonitoringConfig m;
  m.metrics_per_gpu = 10;
  m.metrics_per_node = 100;
  m.metrics_per_switch = 50;
  m.interval = sim::Time::from_ns(10'000'000'000LL);
  m.bytes_per_sample = sim::Bytes::of(16);
  m.compression = 4;
  constexpr std::int64_t kDay = 86'400'000'000'000LL;
  m.rollups = {Rollup{sim::Time::from_ns(kDay), sim::Time::from_ns(300'000'000'000LL), 5},
               Rollup{sim::Time::from_ns(7 * kDay), sim::Time::from_ns(3'600'000'000'000LL), 5}};
  m.retention = sim::Time::from_ns(30 * kDay);
  REQUIRE(check_monitoring(m).empty());
  const MonitoringLoad l = monitoring_load(8, 2, 1, m);
  // S = 8 x 10 + 2 x 100 + 1 x 50 = 330 series; 33 samples/s; 528 B/s before compression.
  CHECK(l.series == 330);
  CHECK(l.samples_per_s == Rel(33));
  CHECK(l.ingest_bytes_per_s == Rel(528));
  // Per day: 330 x 8,640 samples x 16 B / 4 = 11,404,800 B.
  CHECK(l.stored_bytes_per_day == Rel(11'404'800));
  // Raw for 1 d: 11,404,800 B; 5 min (5 values a point) for 6 d: 330 x 1,728 x 5 x 4 B =
  // 11,404,800 B; 1 h for 23 d: 330 x 552 x 5 x 4 B = 3,643,200 B; total 26,452,800 B.
  REQUIRE(l.levels.size() == 3);
  CHECK(l.levels[0].bytes == Rel(11'404'800));
  CHECK(l.levels[1].bytes == Rel(11'404'800));
  CHECK(l.levels[2].bytes == Rel(3'643'200));
  CHECK(l.stored_bytes_at_retention == Rel(26'452'800));
  // A retention of 3 days ends inside the first rollup: raw 1 d + 5 min for 2 d.
  m.retention = sim::Time::from_ns(3 * kDay);
  const MonitoringLoad s = monitoring_load(8, 2, 1, m);
  REQUIRE(s.levels.size() == 2);
  CHECK(s.stored_bytes_at_retention == Rel(11'404'800 + 2 * 11'404'800 / 6.0));
}

TEST_CASE("monitoring checks: rollups by increasing age, each coarser than what it replaces") {
  MonitoringConfig m;
  constexpr std::int64_t kHour = 3'600'000'000'000LL;
  m.rollups = {Rollup{sim::Time::from_ns(10 * kHour), sim::Time::from_ns(kHour), 5},
               Rollup{sim::Time::from_ns(5 * kHour), sim::Time::from_ns(kHour / 2), 5}};
  const auto problems = check_monitoring(m);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].path == "rollups[1].after");
  CHECK(problems[1].path == "rollups[1].interval");
  // A rollup with no `after` (0) is caught too.
  m.rollups = {Rollup{}};
  const auto missing = check_monitoring(m);
  REQUIRE(missing.size() == 2);
  CHECK(missing[0].path == "rollups[0].after");
}

TEST_CASE("the built-in priced table prices every catalog node type, and the defaults load") {
  const scenario::LoadedScenario s = scenario::load_default_scenario(scenario::LoadOptions{});
  for (const auto& [name, node] : s.catalog.nodes) {
    INFO(name);
    const NodePricing p = price_node(name, node.gpu.name, node.gpus, s.pricing, s.config.economics);
    CHECK(p.node_price.has_value());
  }
  // The h100 server's GPU share is below its price (the GPU/host split is meaningful).
  const auto& h100 = s.pricing.servers.at("dgx-h100");
  CHECK(s.pricing.gpus.at("h100-sxm").price.value() * 8 < h100.price.value());
  // Defaults: PUE 1.3, 0.08 USD/kWh, 4 years (1,461 days).
  CHECK(s.config.economics.pue == 1.3);
  CHECK(s.config.economics.energy_price.value() == Rel(0.08));
  CHECK(s.config.economics.life.seconds() == Rel(1461.0 * 86400.0));
  CHECK(check_monitoring(s.config.monitoring).empty());
}

TEST_CASE("monitoring: a rollup from the retention on is refused; the default rollups adapt to the sampling") {
  constexpr std::int64_t kHour = 3'600'000'000'000LL;
  MonitoringConfig m;
  m.retention = sim::Time::from_ns(24 * kHour);
  m.rollups = {Rollup{sim::Time::from_ns(48 * kHour), sim::Time::from_ns(kHour), 5}};
  const auto past = check_monitoring(m);
  REQUIRE(past.size() == 1);
  CHECK(past[0].path == "rollups[0].after");
  // The defaults, not written: a 10min sampling keeps only the 1h rollup (5min is finer), a
  // 1d retention neither (both start later); a written list is kept as written.
  const auto loaded = [](std::vector<std::string> sets) {
    return scenario::load_default_scenario(scenario::LoadOptions{std::move(sets), std::nullopt}).config.monitoring;
  };
  const MonitoringConfig coarse = loaded({"monitoring.interval=10min"});
  REQUIRE(coarse.rollups.size() == 1);
  CHECK(coarse.rollups[0].interval.seconds() == Rel(3600.0));
  CHECK(loaded({"monitoring.retention=1d"}).rollups.empty());
  CHECK(loaded({}).rollups.size() == 2);
  CHECK_THROWS_AS(loaded({"monitoring.interval=10min", "monitoring.rollups[0].after=40h",
                          "monitoring.rollups[0].interval=5min"}),
                  config::InputError);
}
