// bench_reliability: the long horizon at scale. The scenarios/llama3-405b-54d.yaml study:
// 16,384 H100 (2,048 nodes + 32 hot spares, 896 switches) for 54 days with the published
// Llama 3 failure rates, heavy-tailed per-GPU rates, Young/Daly checkpoints; the training
// step is simulated once (not timed), then `replications` independent 54-day runs.
// Prints one JSON line: wall time of the replications, per replication, events.
// Target (one core): at least 100 replications in under 10 s.
// Without spares (--set scheduler.spare_nodes=0) every failure stops the job until its node
// is repaired: its 2,048 nodes' clocks stop and restart at each. They stop in place (the
// armed units only; models/reliability/longrun.cpp, pause_in_place): `clustersim run` of
// 100 replications took 8.8 s before (every one of the 131,000 GPU and node units stopped
// and restarted), 0.8 s after (2-core VM), the same results to rounding; this benchmark,
// on one core, 1.4 s (0.85-0.87 s with the 32 spares).
//
// Usage: bench_reliability [SCENARIO] [--replications N] [--set KEY=VALUE ...]
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "models/config/diagnostics.hpp"
#include "models/fabric/metrics.hpp"
#include "models/reliability/longrun.hpp"
#include "models/scenario/scenario.hpp"
#include "models/workload/step.hpp"
#include "tools/clustersim/report.hpp"

int main(int argc, char** argv) {
  using namespace clustersim;
  std::string file = "scenarios/llama3-405b-54d.yaml";
  std::int64_t replications = 100;
  scenario::LoadOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--replications") == 0 && i + 1 < argc) {
      replications = std::max<std::int64_t>(1, std::atoll(argv[++i]));
    } else if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      options.sets.emplace_back(argv[++i]);
    } else {
      file = argv[i];
    }
  }
  try {
    const scenario::LoadedScenario loaded = scenario::load_scenario(file, options);
    const scenario::Scenario& sc = loaded.config;
    if (!sc.failures || loaded.jobs.empty() || !loaded.fabric) {
      fmt::print(stderr, "{}: needs failures, a fabric and a job\n", file);
      return 2;
    }
    const workload::StepResult step = workload::simulate_step(tools::step_inputs(loaded, loaded.jobs.front()));
    const std::optional<fabric::FabricMetrics> metrics = fabric::measure(*loaded.fabric, loaded.pricing, loaded.config.network.sharp);
    reliability::LongRunInputs in = tools::long_run_inputs(loaded, {step}, metrics);
    in.replications = replications;
    const auto t0 = std::chrono::steady_clock::now();
    const reliability::LongRunResult r = reliability::simulate_long_run(in);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{{\"case\": \"long_run\", \"gpus\": {}, \"horizon_d\": {:.1f}, \"replications\": {}, \"wall_s\": {:.4f}, "
               "\"per_replication_ms\": {:.3f}, \"events\": {}, \"ettr\": {:.4f}, \"interruptions\": {:.1f}, "
               "\"target_s\": 10}}\n",
               in.jobs[0].gpus, in.horizon_s / 86400.0, replications, wall, 1e3 * wall / static_cast<double>(replications),
               r.events, r.jobs[0].ettr.mean, r.jobs[0].interruptions.mean);
  } catch (const config::InputError& e) {
    fmt::print(stderr, "{}", e.diagnostics().format());
    return 2;
  }
  return 0;
}
