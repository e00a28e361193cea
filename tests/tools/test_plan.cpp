// The plan's Pareto front: the feasible, priced points that no other beats on both time to
// train and total cost.
#include <doctest/doctest.h>

#include "tools/clustersim/plan.hpp"

using namespace clustersim::tools;

namespace {

PlanPoint point(double time_s, double cost, bool feasible = true) {
  PlanPoint p;
  p.feasible = feasible;
  p.time_to_train_s = time_s;
  p.total_cost_usd = cost;
  return p;
}

}  // namespace

TEST_CASE("Pareto front: faster or cheaper than every other point, ties kept, infeasible ones out") {
  std::vector<PlanPoint> pts{
      point(10, 100),  // 0: fastest
      point(20, 50),   // 1: slower, cheaper: on the front
      point(20, 60),   // 2: same time as 1, dearer: dominated
      point(30, 50),   // 3: same cost as 1, slower: dominated
      point(40, 10),   // 4: slowest, cheapest: on the front
      point(15, 120),  // 5: slower and dearer than 0: dominated
      point(20, 50),   // 6: equal to 1: kept with it
      point(5, 1, false),  // 7: infeasible: never on the front
  };
  mark_pareto(pts);
  const bool expected[] = {true, true, false, false, true, false, true, false};
  for (std::size_t i = 0; i < pts.size(); ++i) {
    CAPTURE(i);
    CHECK(pts[i].pareto == expected[i]);
  }
  // A point without a cost (unpriced) is not ranked.
  std::vector<PlanPoint> unpriced{point(1, 1)};
  unpriced[0].total_cost_usd.reset();
  mark_pareto(unpriced);
  CHECK_FALSE(unpriced[0].pareto);
  // Hardware over the capex budget is no candidate: the point it dominated takes its place.
  std::vector<PlanPoint> capped{point(10, 100), point(20, 150)};
  mark_pareto(capped);
  CHECK_FALSE(capped[1].pareto);
  capped[0].within_capex_budget = false;
  mark_pareto(capped);
  CHECK_FALSE(capped[0].pareto);
  CHECK(capped[1].pareto);
}

TEST_CASE("No plan: the budget names the cheapest point meeting the deadline, else the fastest") {
  Plan p;
  p.deadline_s = 100;
  p.budget_usd = 1.0;
  p.points = {point(10, 300), point(50, 200), point(200, 5)};  // the first two meet the deadline, over budget
  for (PlanPoint& pt : p.points) pt.meets_deadline = pt.time_to_train_s <= p.deadline_s;
  p.points[1].nodes = 7;
  std::string t = plan_table(p);
  CHECK(t.find("the cheapest meeting the deadline (7 nodes") != std::string::npos);
  CHECK(t.find("has total cost 200USD against 1USD") != std::string::npos);
  CHECK(t.find("the fastest") == std::string::npos);
  // A capex budget: the same point, named with its capex.
  p.points[1].capex_usd = 3000.0;
  p.capex_budget_usd = 2000.0;
  t = plan_table(p);
  CHECK(t.find("has total cost 200USD against 1USD, capex 3kUSD against 2kUSD") != std::string::npos);
  p.capex_budget_usd.reset();
  // No point meets the deadline: the fastest is named, and with a budget the cheapest too.
  for (PlanPoint& pt : p.points) pt.meets_deadline = false;
  t = plan_table(p);
  CHECK(t.find("the fastest takes") != std::string::npos);
  CHECK(t.find("the cheapest costs 5USD") != std::string::npos);
  p.budget_usd.reset();
  t = plan_table(p);
  CHECK(t.find("the fastest takes") != std::string::npos);
  CHECK(t.find("the cheapest costs") == std::string::npos);
}

TEST_CASE("No feasible point: the most common reasons, or plan.csv's when --out wrote it") {
  Plan p;
  p.deadline_s = 100;
  p.points = {point(1, 1, false), point(1, 1, false), point(1, 1, false)};
  p.points[0].reason = "does not fit in HBM";
  p.points[1].reason = "fabric cannot be built";
  p.points[2].reason = "fabric cannot be built";
  const std::string here = plan_table(p);
  CHECK(here.find("plan.csv") == std::string::npos);
  const auto fabric = here.find("2 of 3 points: fabric cannot be built");
  const auto hbm = here.find("1 of 3 points: does not fit in HBM");
  REQUIRE(fabric != std::string::npos);
  REQUIRE(hbm != std::string::npos);
  CHECK(fabric < hbm);  // the most common first
  CHECK(plan_table(p, true).find("see plan.csv for the reasons") != std::string::npos);
}

TEST_CASE("plan --ecmp-seeds: each hashed point takes its median draw's step") {
  // Llama 3 405B on 2,048 hashed Clos nodes: seeds 0 to 4 give two step times (one draw
  // puts 6 flows on the busiest link, the others 5); the median is the faster one, where
  // seed 0 alone gave the slower.
  PlanArgs args;
  args.scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-16k.yaml";
  args.deadline = clustersim::sim::Time::from_ns(90LL * 86400 * 1'000'000'000);
  args.nodes = "2048";
  args.topologies = {"rail_clos"};
  const Plan one = plan(args);
  args.ecmp_seeds = 5;
  const Plan five = plan(args);
  REQUIRE(one.points.size() == five.points.size());
  std::size_t hashed = 0;
  for (std::size_t i = 0; i < five.points.size(); ++i) {
    if (!five.points[i].feasible) continue;
    REQUIRE(five.points[i].ecmp_seed);
    CHECK(*five.points[i].ecmp_seed >= 0);
    CHECK(*five.points[i].ecmp_seed < 5);
    CHECK(!one.points[i].ecmp_seed);
    ++hashed;
  }
  CHECK(hashed > 0);
  // The point Meta ran (tp 8, pp 16): seed 0 is its slow draw, the median a faster one.
  const auto meta = [](const Plan& p) {
    for (const PlanPoint& pt : p.points) {
      if (pt.feasible && pt.tp == 8 && pt.pp == 16) return pt;
    }
    FAIL("no tp 8 pp 16 point");
    return PlanPoint{};
  };
  CHECK(meta(five).step_time_s < meta(one).step_time_s);
}
