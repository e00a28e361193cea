// bench_scenario: one scenario end to end, as `clustersim run` computes it (load and check,
// build the fabric, simulate each job's step, the long run with failures and its
// replications, the result document), with its wall time and the process's peak resident
// memory.
//
// Prints one JSON line: case, gpus, wall_s (best of `repeats`), peak_rss_bytes (getrusage
// ru_maxrss: the whole process, start-up included) and the targets.
// Issue target (scenarios/gpu-100k-what-if.yaml, the default): under 60 s and under 8 GB.
//
// Usage: bench_scenario [SCENARIO] [--repeats N] [--set KEY=VALUE]...
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "tools/clustersim/report.hpp"

int main(int argc, char** argv) {
  using namespace clustersim;
  using Clock = std::chrono::steady_clock;
  std::string file = "scenarios/gpu-100k-what-if.yaml";
  int repeats = 1;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      sets.emplace_back(argv[++i]);
    } else {
      file = argv[i];
    }
  }
  try {
    double best = 1e300;
    std::int64_t gpus = 0;
    std::size_t bytes = 0;
    for (int k = 0; k < repeats; ++k) {
      const auto t0 = Clock::now();
      scenario::LoadOptions options;
      options.sets = sets;
      const scenario::LoadedScenario loaded = scenario::load_scenario(file, options);
      const tools::RunResult result = tools::compute_run(loaded);
      bytes = tools::result_document(loaded, result).dump(2).size();
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
      gpus = loaded.config.cluster.nodes * loaded.node.spec.gpus;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    fmt::print("{{\"case\": \"scenario\", \"file\": \"{}\", \"gpus\": {}, \"wall_s\": {:.3f}, \"peak_rss_bytes\": {}, "
               "\"result_bytes\": {}, \"target_wall_s\": 60, \"target_rss_bytes\": 8000000000}}\n",
               file, gpus, best, static_cast<long long>(usage.ru_maxrss) * 1024, bytes);
  } catch (const config::InputError& e) {
    fmt::print(stderr, "{}", e.diagnostics().format());
    return 2;
  }
  return 0;
}
