// bench_sweep: a 1,000-point sweep on the analytical network (Llama 3 8B on 64 H100 of a
// rail-optimized Clos, tests/scenarios/sweep_small.yaml), the scale target: 1,000
// points in under 10 s, at most 1 ms of simulator time per point after start-up.
//
// The grid: cluster.nodes 8..80 (10) x five parallelism layouts (tp, pp, dp) x micro_batch
// 1..8 (4) x global_batch 128..2048 (5). Some points are error rows (a micro-batch count
// that does not divide, a job that does not fit): they are timed like the others.
//
// Cases (each prints one JSON line):
//   point_cost   per point, sequentially on one thread: load_scenario (YAML, catalog,
//                fabric build) and compute_run (the simulator), mean milliseconds;
//   sweep_jobs   the whole `clustersim sweep` path (files, resume scan, threads) for each
//                thread count: wall seconds, points per second, milliseconds per point.
// Usage: bench_sweep [SCENARIO] [--quick] [--jobs 1,2,4]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/sweep.hpp"

namespace {

using namespace clustersim;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

tools::SweepSpec grid(const std::string& file, bool quick) {
  tools::SweepSpec spec;
  spec.scenario = file;
  spec.sets = {"network.model=analytical"};
  const auto param = [&](const std::string& text) {
    tools::SweepParam p;
    std::string why;
    if (!tools::parse_sweep_param(text, p, why)) throw std::runtime_error(why);
    spec.params.push_back(std::move(p));
  };
  param(quick ? "cluster.nodes=8:16:+8" : "cluster.nodes=8:80:+8");
  param("workload.jobs[0].parallelism={tp: 1, pp: 1, dp: 64},{tp: 2, pp: 1, dp: 32},{tp: 2, pp: 2, dp: 16},"
        "{tp: 4, pp: 2, dp: 8},{tp: 8, pp: 2, dp: 4}");
  param("workload.jobs[0].micro_batch=1:8:x2");
  param("workload.jobs[0].global_batch=128:2048:x2");
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file = "tests/scenarios/sweep_small.yaml";
  bool quick = false;
  std::vector<int> jobs_list{1, 2};
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (hw > 2) jobs_list.push_back(hw);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
      jobs_list.clear();
      std::stringstream in(argv[++i]);
      for (std::string item; std::getline(in, item, ',');) jobs_list.push_back(std::max(1, std::atoi(item.c_str())));
    } else {
      file = argv[i];
    }
  }
  if (quick) jobs_list = {1, 2};
  try {
    const tools::SweepSpec spec = grid(file, quick);
    const std::int64_t points = spec.points();

    // Per point, on one thread: how start-up (loading) and simulation divide the time.
    const std::int64_t sample = std::min<std::int64_t>(points, quick ? 20 : 200);
    double load_s = 0.0;
    double compute_s = 0.0;
    std::int64_t ok = 0;
    for (std::int64_t i = 0; i < sample; ++i) {
      const auto t0 = Clock::now();
      try {
        const scenario::LoadedScenario loaded = scenario::load_scenario(spec.scenario, spec.options_of(i));
        const auto t1 = Clock::now();
        load_s += std::chrono::duration<double>(t1 - t0).count();
        const tools::RunResult r = tools::compute_run(loaded);
        compute_s += since(t1);
        ok += r.jobs.empty() ? 0 : 1;
      } catch (const config::InputError&) {
        load_s += since(t0);  // an error row costs its loading only
      }
    }
    fmt::print("{{\"case\": \"point_cost\", \"points\": {}, \"ok\": {}, \"load_ms\": {:.3f}, \"compute_ms\": {:.3f}, "
               "\"compute_ms_per_ok_point\": {:.3f}, \"target_compute_ms\": 1.0}}\n",
               sample, ok, 1e3 * load_s / static_cast<double>(sample), 1e3 * compute_s / static_cast<double>(sample),
               ok ? 1e3 * compute_s / static_cast<double>(ok) : 0.0);

    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / fmt::format("bench_sweep_{}", ::getpid());
    for (int jobs : jobs_list) {
      fs::remove_all(dir);
      tools::SweepOptions options;
      options.jobs = jobs;
      options.out_dir = dir.string();
      options.progress = false;
      std::ostringstream log;
      const auto t0 = Clock::now();
      const tools::SweepSummary s = tools::run_sweep(spec, options, log);
      const double wall = since(t0);
      fmt::print("{{\"case\": \"sweep_jobs\", \"jobs\": {}, \"points\": {}, \"errors\": {}, \"wall_s\": {:.3f}, "
                 "\"points_per_s\": {:.1f}, \"ms_per_point\": {:.3f}, \"target_wall_s_per_1000\": 10.0}}\n",
                 jobs, s.points, s.errors, wall, static_cast<double>(s.points) / wall,
                 1e3 * wall / static_cast<double>(s.points));
    }
    fs::remove_all(dir);
  } catch (const config::InputError& e) {
    fmt::print(stderr, "{}", e.diagnostics().format());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_sweep: {}\n", e.what());
    return 2;
  }
  return 0;
}
