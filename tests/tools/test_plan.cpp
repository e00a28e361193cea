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
}
