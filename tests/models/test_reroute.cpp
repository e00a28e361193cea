// Network elements the fabric routes around (effect reroute): jobs slow down instead of
// restarting, by their degradation factor, for as long as the element is down.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/reliability/longrun.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::reliability;

namespace {

constexpr double kDay = 86400.0;

/// One 8-node job on a cluster of 4 switches whose failures (each every 4 days on average,
/// then down for a fixed 12 h) reroute; switches 2 and 3 are a class the job keeps `factor` of its
/// throughput without; switches 0 and 1 (its leaves) are in no class.
LongRunResult run(double factor, Effect effect, bool leaves_in_class = false) {
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
  JobProfile p{"job", 0, 8, 64, 8, 1e6, std::nullopt, 1e9};
  p.degradations.push_back({"spine", true, 2, 2, factor});
  if (leaves_in_class) p.degradations.push_back({"leaf", true, 0, 2, factor});
  in.jobs.push_back(p);
  in.horizon_s = 400 * kDay;
  in.replications = 4;
  in.seed = 11;
  return simulate_long_run(in);
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
