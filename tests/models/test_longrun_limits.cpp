// The long run's own limits: a run without a horizon whose jobs would take centuries.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <optional>

#include "models/reliability/longrun.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::reliability;

TEST_CASE("without a horizon, a run whose jobs need centuries stops at 100 years, unfinished") {
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.0001, Per::gpu};
  failures.components["gpu"] = gpu;
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 2;
  in.gpus_per_node = 8;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  // 1e6 tokens/s for 1e17 tokens: 1e11 s, 3,200 years.
  in.jobs.push_back({"forever", 0, 2, 16, 2, 1e6, 1e17, 1e9});
  const LongRunResult r = simulate_long_run(in);
  CHECK(r.jobs[0].finished_share == 0.0);
  CHECK(r.elapsed_s == Rel(100.0 * 365.25 * 86400.0));
  CHECK(r.jobs[0].ettr.mean > 0.9);
}
