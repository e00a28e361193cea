// bench_step: one training step of Llama 3 405B on 16,384 H100 (TP 8, PP 16, DP 128,
// interleaved with 8 virtual stages, ZeRO-1, sequence parallel) on a rail-optimized
// three-tier Clos with 1:7 oversubscription: the example scenario
// (scenarios/llama3-405b-16k.yaml).
//
// Cases (each prints one JSON line): step_analytical and step_flow, the wall time of
// workload::simulate_step on each network model (the scenario's fabric is built once,
// outside the timing), best of `repeats` runs, with the simulated step time.
// Targets (one core): flow under 2 s, analytical under 10 ms.
//
// Usage: bench_step [SCENARIO] [--repeats N] [--only analytical|flow]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "models/workload/step.hpp"
#include "tools/clustersim/report.hpp"

namespace {

using namespace clustersim;
using Clock = std::chrono::steady_clock;

}  // namespace

int main(int argc, char** argv) {
  std::string file = "scenarios/llama3-405b-16k.yaml";
  int repeats = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      file = argv[i];
    }
  }
  try {
    for (const char* model : {"analytical", "flow"}) {
      if (!only.empty() && only != model) continue;
      scenario::LoadOptions options;
      options.sets = {std::string("network.model=") + model};
      const scenario::LoadedScenario loaded = scenario::load_scenario(file, options);
      const scenario::ResolvedJob& job = loaded.jobs.at(0);
      const workload::StepInputs in = tools::step_inputs(loaded, job);
      double best = 1e300;
      workload::StepResult r;
      for (int k = 0; k < repeats; ++k) {
        const auto t0 = Clock::now();
        r = workload::simulate_step(in);
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
      }
      fmt::print("{{\"case\": \"step_{}\", \"gpus\": {}, \"wall_s\": {:.6f}, \"step_time_s\": {:.6f}, \"mfu\": {:.4f}, "
                 "\"events\": {}, \"target_s\": {}}}\n",
                 model, job.config.gpus, best, r.step_time_s, r.mfu, r.events,
                 std::string(model) == "flow" ? 2.0 : 0.01);
    }
  } catch (const config::InputError& e) {
    fmt::print(stderr, "{}", e.diagnostics().format());
    return 2;
  }
  return 0;
}
