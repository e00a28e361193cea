// A job's step on a fabric with one element down: classes, factors and the cut-off case.
#include <doctest/doctest.h>

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
  for (const auto& c : tools::degraded_steps(s, job, healthy)) CHECK(c.name != "spine");
}
