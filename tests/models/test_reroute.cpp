// Network elements the fabric routes around (effect reroute): jobs slow down instead of
// restarting, by their degradation factor, for as long as the element is down.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <string>

#include "models/reliability/longrun.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::reliability;

namespace {

constexpr double kDay = 86400.0;

/// One 8-node job on a cluster of 4 switches whose failures (each every 4 days on average,
/// then down for a fixed 12 h) reroute; switches 2 and 3 are a class the job keeps `factor` of its
/// throughput without; switches 0 and 1 (its leaves) are in no class.
LongRunResult run(double factor, Effect effect, bool leaves_in_class = false, double checkpoint_bytes = 1e9) {
  FailuresConfig failures;
  ComponentConfig sw;
  sw.rate = FailureRate{0.25, Per::switch_};  // 4 switches: one failure a day
  sw.effect = effect;
  sw.hardware = true;
  failures.components["switch"] = sw;
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(0.5 * kDay), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 8;
  in.gpus_per_node = 8;
  in.switches = 4;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
  JobProfile p{"job", 0, 8, 64, 8, 1e6, std::nullopt, checkpoint_bytes};
  p.degradations.push_back({"spine", true, 2, 2, factor});
  if (leaves_in_class) p.degradations.push_back({"leaf", true, 0, 2, factor});
  in.jobs.push_back(p);
  in.horizon_s = 400 * kDay;
  in.replications = 4;
  in.seed = 11;
  return simulate_long_run(in);
}

/// Two 2-node jobs, each under its own leaf of a 2-tier Clos of 2 leaves and 1 spine (4
/// one-NIC nodes; 6 cables: a NIC's to its leaf, 4, and a leaf's to the spine, 2), with
/// hardware failures of `component` at 0.1 per unit-day over 400 days, each replaced in a
/// fixed `replace_s` (the nodes behind it are cut off meanwhile, with the scope); and the
/// fabric's scope, which the caller sets on the inputs or not.
struct TwoJobs {
  FailuresConfig failures;
  LongRunInputs in;
  FabricScope scope;
};

TwoJobs two_jobs(const std::string& component, Per per, double replace_s = 600.0) {
  TwoJobs t;
  ComponentConfig c;
  c.rate = FailureRate{0.1, per};
  c.hardware = true;
  t.failures.components[component] = c;
  t.failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(replace_s), 1.0};
  t.in.failures = &t.failures;
  t.in.nodes = 4;
  t.in.gpus_per_node = 8;
  t.in.switches = 3;
  t.in.links = 6;
  t.in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  t.in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
  t.in.jobs.push_back(JobProfile{"a", 0, 2, 16, 2, 1e6, std::nullopt, 1e9});
  t.in.jobs.push_back(JobProfile{"b", 2, 2, 16, 2, 1e6, std::nullopt, 1e9});
  t.in.horizon_s = 400 * kDay;
  t.in.replications = 4;
  t.in.seed = 5;
  t.scope.nics_per_node = 1;
  t.scope.leaf_down = 2;
  t.scope.leaves = 2;
  t.scope.tops = 1;
  t.scope.nodes = 4;
  t.scope.cables = {{true, 0, 0, 0}, {true, 1, 0, 1}, {true, 2, 1, 2}, {true, 3, 1, 3}, {false, 0, 2}, {false, 1, 2}};
  return t;
}

}  // namespace

TEST_CASE("reroute: an element every job routes around never interrupts; it costs (1 - factor) while down") {
  const LongRunResult r = run(0.5, Effect::reroute, true);
  CHECK(r.jobs[0].interruptions.mean == 0.0);
  // Each switch fails every 4 days on average while up and is down 12 h: down a share
  // p = 0.5 / 4.5 of the time, independently of the others. With K of the 4 down the job
  // keeps 0.5^K, so it loses E[1 - 0.5^K] = 1 - (1 - p / 2)^4 = 20.4% of its GPU-hours.
  const double p = 0.5 / 4.5;
  CHECK(r.failures_by_cause.at("switch").mean == Rel(4.0 * 400.0 / 4.5).epsilon(0.1));
  const double gpu_hours = 64.0 * 400.0 * 24.0;
  const double lost = r.jobs[0].lost_gpu_hours.at("switch").mean;
  CHECK(lost / gpu_hours == Rel(1.0 - std::pow(1.0 - p / 2.0, 4.0)).epsilon(0.1));
  // ETTR is what the job trains over the wall time: about 1 - lost / all GPU-hours.
  CHECK(r.jobs[0].ettr.mean == Rel(1.0 - lost / gpu_hours).epsilon(0.03));
}

TEST_CASE("reroute: a degraded job's blocked writes are checkpoint time only; its GPU-hours add up") {
  // A 2-hour write (7.2e15 B at 1 TB/s) after every hour of training: two thirds of the
  // running time writes. Degraded, the job loses (1 - factor) of the throughput it trains
  // with, not of its writing seconds as well (they are checkpoint GPU-hours whole): the parts
  // summed to 114% of the job's GPU-hours. Within 0.1%, not exactly: a change of throughput
  // counts the work of the cycle under way at the new rate (set_degrade(), an error of at
  // most an interval times the change; 0.011% here).
  const LongRunResult r = run(0.5, Effect::reroute, true, 7.2e15);
  const JobSummary& j = r.jobs[0];
  const double lost = total_lost_gpu_hours(j);
  const double gpu_hours = 64.0 * 400.0 * 24.0;
  CHECK(j.lost_gpu_hours.at("switch").mean > 0.0);
  CHECK(j.checkpoint_gpu_hours.mean > 0.5 * gpu_hours);
  CHECK(j.ettr.mean * gpu_hours + lost + j.checkpoint_gpu_hours.mean == Rel(gpu_hours).epsilon(1e-3));
}

TEST_CASE("reroute: a factor of 1 costs nothing; elements in no class restart the job") {
  const LongRunResult free = run(1.0, Effect::reroute);
  const LongRunResult restart = run(1.0, Effect::restart);
  // Half of the failures hit the job's leaves (no class): those restart it, the rest do not.
  CHECK(free.jobs[0].interruptions.mean == Rel(0.5 * restart.jobs[0].interruptions.mean).epsilon(0.2));
  CHECK(restart.failures_by_cause.at("switch").mean == Rel(4.0 * 400.0 / 4.5).epsilon(0.1));
  CHECK(free.jobs[0].ettr.mean > restart.jobs[0].ettr.mean);
}

TEST_CASE("reroute is for switches and links") {
  FailuresConfig f;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.001, Per::gpu};
  gpu.effect = Effect::reroute;
  f.components["gpu"] = gpu;
  const auto problems = check_failures(f);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "components.gpu.effect");
}

TEST_CASE("Clos scope: a switch reaches the jobs whose traffic can cross it") {
  // 3 tiers, not rail-optimized: 16 nodes of 2 NICs, 4 endpoints (2 nodes) per leaf, 8
  // leaves in 4 pods of 2, 2 aggregation switches per pod, 4 core switches. Units: leaves
  // 0-7, aggregation switches 8-15 (pod p: 8 + 2p, 9 + 2p), cores 16-19.
  FabricScope c;
  c.tiers = 3;
  c.nics_per_node = 2;
  c.leaf_down = 4;
  c.leaves = 8;
  c.leaves_per_pod = 2;
  c.aggs_per_pod = 2;
  c.aggs = 8;
  c.tops = 4;
  c.nodes = 16;
  const std::vector<std::int64_t> one_leaf{0, 1}, one_pod{0, 1, 2, 3}, two_pods{2, 3, 4, 5}, spare{0, 16};
  CHECK(c.crosses(one_leaf, 0));
  CHECK_FALSE(c.crosses(one_leaf, 1));
  CHECK_FALSE(c.crosses(one_leaf, 8));   // its traffic turns at its leaf
  CHECK_FALSE(c.crosses(one_leaf, 16));
  CHECK(c.crossed(one_leaf) == 1);
  CHECK(c.crosses(one_pod, 1));
  CHECK(c.crosses(one_pod, 9));          // its pod's aggregation switches
  CHECK_FALSE(c.crosses(one_pod, 10));   // not another pod's
  CHECK_FALSE(c.crosses(one_pod, 19));   // nor the cores
  CHECK(c.crossed(one_pod) == 2 + 2);
  CHECK(c.crosses(two_pods, 11));
  CHECK_FALSE(c.crosses(two_pods, 12));
  CHECK(c.crosses(two_pods, 17));
  CHECK(c.crossed(two_pods) == 2 + 4 + 4);
  CHECK(c.crosses(spare, 13));           // a node of unknown place: every switch
  CHECK(c.crossed(spare) == 20);

  // 2 tiers, rail-optimized: 8 nodes of 2 NICs, 4 nodes per leaf group, one leaf per rail
  // and group (units 0-3: group 0 rails 0-1, group 1 rails 0-1), 2 spines (4-5).
  FabricScope r;
  r.rail = true;
  r.nics_per_node = 2;
  r.leaf_down = 4;
  r.leaves = 4;
  r.tops = 2;
  r.nodes = 8;
  const std::vector<std::int64_t> group0{0, 1, 2, 3}, both{3, 4}, alone{5};
  CHECK(r.crosses(group0, 1));
  CHECK_FALSE(r.crosses(group0, 2));
  CHECK(r.crosses(group0, 4));           // NIC i to NIC j of another node goes up to a spine
  CHECK(r.crossed(group0) == 2 + 2);
  CHECK(r.crossed_leaves(group0) == 2);
  CHECK(r.crosses(both, 2));
  CHECK(r.crosses(both, 5));
  CHECK(r.crossed(both) == 6);
  CHECK(r.crosses(alone, 3));
  CHECK_FALSE(r.crosses(alone, 5));      // one node: its NICs talk to other jobs only
  CHECK(r.crossed(alone) == 2);
}

TEST_CASE("switch failures restart only the jobs that cross the switch, and count in their MTBF") {
  // Two 2-node jobs under their own leaf of a 2-tier Clos (2 leaves, 1 spine): neither
  // crosses the spine or the other's leaf. Without the layout, every switch failure
  // restarts both.
  TwoJobs t = two_jobs("switch", Per::switch_);
  LongRunInputs& in = t.in;
  const LongRunResult all = simulate_long_run(in);
  in.scope = t.scope;
  const LongRunResult scoped = simulate_long_run(in);
  const double failures_seen = scoped.failures_by_cause.at("switch").mean;
  CHECK(failures_seen == Rel(3 * 0.1 * 400).epsilon(0.1));
  for (std::size_t j = 0; j < 2; ++j) {
    CHECK(all.jobs[j].interruptions.mean == Rel(all.failures_by_cause.at("switch").mean).epsilon(0.02));
    // One switch of three is the job's leaf.
    CHECK(scoped.jobs[j].interruptions.mean == Rel(failures_seen / 3.0).epsilon(0.15));
    CHECK(scoped.jobs[j].mtbf_s == Rel(3.0 * all.jobs[j].mtbf_s));
    CHECK(scoped.jobs[j].ettr.mean > all.jobs[j].ettr.mean);
  }
}

TEST_CASE("cable failures restart only the jobs that cross the cable, and count in their MTBF") {
  // The two jobs of two_jobs(): a job crosses only its own nodes' 2 access cables. Without
  // the layout, every cable failure restarts both.
  TwoJobs t = two_jobs("cable", Per::link);
  LongRunInputs& in = t.in;
  const LongRunResult all = simulate_long_run(in);
  const FabricScope& c = t.scope;
  CHECK(c.crossed_cables({0, 1}) == 2);
  CHECK(c.crosses_cable({0, 1}, 1));
  CHECK_FALSE(c.crosses_cable({0, 1}, 2));
  CHECK_FALSE(c.crosses_cable({0, 1}, 4));  // its traffic turns at its leaf
  // A job across both leaves crosses both uplinks; one with a spare node (4), which may be
  // anywhere, every cable between switches but no other node's NIC cable.
  CHECK(c.crossed_cables({1, 2}) == 2 + 2);
  CHECK(c.crosses_cable({1, 2}, 5));
  CHECK_FALSE(c.crosses_cable({1, 2}, 0));
  CHECK(c.crossed_cables({0, 4}) == 1 + 2);
  CHECK_FALSE(c.crosses_cable({0, 4}, 1));
  in.scope = c;
  const LongRunResult scoped = simulate_long_run(in);
  const double failures_seen = scoped.failures_by_cause.at("cable").mean;
  CHECK(failures_seen == Rel(6 * 0.1 * 400).epsilon(0.1));
  for (std::size_t j = 0; j < 2; ++j) {
    CHECK(all.jobs[j].interruptions.mean == Rel(all.failures_by_cause.at("cable").mean).epsilon(0.02));
    // Two cables of six are the job's.
    CHECK(scoped.jobs[j].interruptions.mean == Rel(failures_seen / 3.0).epsilon(0.15));
    CHECK(scoped.jobs[j].mtbf_s == Rel(3.0 * all.jobs[j].mtbf_s));
    CHECK(scoped.jobs[j].ettr.mean > all.jobs[j].ettr.mean);
  }
}

TEST_CASE("a leaf that is down cuts off the nodes behind it: their job waits for it, or takes spares") {
  // two_jobs()'s leaves fail 0.1 a day while up and are replaced in a fixed 2 days: each is
  // down a share p = 2 / (10 + 2) of the time. Job a (nodes 0 and 1, under leaf 0) cannot
  // run while leaf 0 is down: without spares it waits for the replacement, so it loses at
  // least that share of its time; with two hot spares (outside the fabric) it takes them and
  // loses only its restarts.
  const auto run = [](std::int64_t spares) {
    TwoJobs t = two_jobs("switch", Per::switch_, 2 * kDay);
    t.in.scope = t.scope;
    t.in.scheduler.spare_nodes = spares;
    return simulate_long_run(t.in);
  };
  const LongRunResult waits = run(0);
  const LongRunResult spares = run(2);
  const double p = 2.0 / 12.0;
  CHECK(waits.jobs[0].ettr.mean < 1.0 - 0.9 * p);
  CHECK(waits.jobs[0].lost_gpu_hours.at("switch").mean >= 0.9 * p * 16.0 * 400.0 * 24.0);
  CHECK(spares.jobs[0].ettr.mean > 0.97);
  // The cut-off nodes rejoin when the leaf is back: in the first replication each leaf-0
  // failure cuts off both of job a's nodes (not job b's) and reconnects them, and job a
  // restarts on them.
  std::int64_t cut = 0, reconnected = 0, restarts = 0;
  for (const TimelineEvent& e : waits.timeline) {
    if (e.kind == "cut_off") {
      CHECK(e.job == e.node / 2);  // job a on nodes 0 and 1, job b on 2 and 3
      if (e.job == 0) ++cut;
    }
    if (e.kind == "reconnected" && e.node < 2) ++reconnected;
    if (e.kind == "restart" && e.job == 0) ++restarts;
  }
  CHECK(cut > 10);
  CHECK(cut % 2 == 0);
  CHECK(reconnected >= cut - 2);  // the last may still be down at the horizon
  CHECK(restarts >= cut / 2 - 1);
}

TEST_CASE("a node is cut off when a NIC is (drain) or every one is (keep): a rail-optimized leaf holds one NIC of each") {
  // 4 nodes of 2 NICs under 4 leaves of 2 ports and a spine; leaves fail 0.1 a day while up
  // and are replaced in 2 days. On a plain Clos a leaf holds both NICs of one node, so every
  // leaf failure cuts a node off, whatever scheduler.nic_loss. Rail-optimized, a leaf holds
  // rail i of two nodes. Drained, both are cut off at each leaf failure (unless the other
  // leaf of the group is down already, 2 days in 12): about 2 x 10/12 cut-offs a failure.
  // Kept, they are cut off only while both leaves of their group are down at once, so about
  // a third as many cut-offs as on the plain Clos (two nodes at a time, 2 days in 12), but some.
  const auto cut_offs = [](bool rail, NicLoss loss) {
    FailuresConfig failures;
    ComponentConfig c;
    c.rate = FailureRate{0.1, Per::switch_};
    c.hardware = true;
    failures.components["switch"] = c;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(2 * kDay), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 4;
    in.gpus_per_node = 8;
    in.switches = 5;
    in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
    in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
    in.jobs.push_back(JobProfile{"a", 0, 2, 16, 2, 1e6, std::nullopt, 1e9});
    in.jobs.push_back(JobProfile{"b", 2, 2, 16, 2, 1e6, std::nullopt, 1e9});
    in.horizon_s = 2000 * kDay;
    in.replications = 1;
    in.seed = 3;
    in.scheduler.nic_loss = loss;
    FabricScope scope;
    scope.rail = rail;
    scope.nics_per_node = 2;
    scope.leaf_down = 2;
    scope.leaves = 4;
    scope.tops = 1;
    scope.nodes = 4;
    in.scope = scope;
    const LongRunResult r = simulate_long_run(in);
    std::int64_t cut = 0, leaf_failures = 0;
    for (const TimelineEvent& e : r.timeline) cut += e.kind == "cut_off";
    leaf_failures = static_cast<std::int64_t>(r.failures_by_cause.at("switch").mean * 4.0 / 5.0);
    return std::pair{cut, leaf_failures};
  };
  const auto [plain, plain_failures] = cut_offs(false, NicLoss::keep);
  const auto [rail, rail_failures] = cut_offs(true, NicLoss::keep);
  CHECK(plain == Rel(static_cast<double>(plain_failures)).epsilon(0.15));  // one node per leaf failure
  CHECK(rail > 0);
  CHECK(rail < plain / 2);
  // Each rail leaf failure finds the node's other leaf down with probability about 2/12, and
  // cuts off the two nodes of its group then.
  CHECK(static_cast<double>(rail) == Rel(2.0 * static_cast<double>(rail_failures) * 2.0 / 12.0).epsilon(0.35));

  const auto [plain_drained, plain_drained_failures] = cut_offs(false, NicLoss::drain);
  const auto [rail_drained, rail_drained_failures] = cut_offs(true, NicLoss::drain);
  CHECK(plain_drained == Rel(static_cast<double>(plain_drained_failures)).epsilon(0.15));
  CHECK(static_cast<double>(rail_drained) ==
        Rel(2.0 * static_cast<double>(rail_drained_failures) * 10.0 / 12.0).epsilon(0.2));
  CHECK(rail_drained > 3 * rail);
}

TEST_CASE("a starting job's contiguous range is made of the fabric's nodes, never through a hot spare") {
  // 4 fabric nodes (0-3) and 1 hot spare (physical node 4). Job a holds node 1; job b, 3
  // nodes, finds 0, 2, 3 free among the fabric's and 2, 3, 4 contiguous through the spare.
  // It starts fragmented on 0, 2, 3 and leaves the spare to the failures it is kept for.
  FailuresConfig none;
  LongRunInputs in;
  in.failures = &none;
  in.nodes = 4;
  in.gpus_per_node = 8;
  in.scheduler.spare_nodes = 1;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
  in.jobs.push_back(JobProfile{"a", 1, 1, 8, 1, 1e6, std::nullopt, 1e9});
  JobProfile b{"b", 0, 3, 24, 3, 1e6, std::nullopt, 1e9};
  b.submit_s = 60.0;
  in.jobs.push_back(b);
  in.horizon_s = kDay;
  in.replications = 1;
  const LongRunResult r = simulate_long_run(in);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[1].started_share == 1.0);
  CHECK(r.jobs[1].fragmented_starts.mean == 1.0);
}
