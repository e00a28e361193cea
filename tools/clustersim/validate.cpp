#include "tools/clustersim/validate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "tools/clustersim/report.hpp"

namespace clustersim::tools {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string_view> kMetrics{"tflops_per_gpu", "megatron_tflops_per_gpu", "mfu", "tokens_per_s",
                                             "step_time_s"};

/// "failures:CAUSE" (or failures:total): failures of that cause over the scenario's horizon,
/// cluster-wide, mean over replications.
bool is_failure_metric(std::string_view m) { return m.substr(0, 9) == "failures:" || m == "interruptions"; }

ValidationCases load_cases(const std::string& file) {
  config::LoadState state;
  ValidationCases out;
  std::ifstream in(file);
  if (!in) {
    state.diagnostics.add(config::Location{file, 0, 0}, "", "cannot read the validation cases file",
                          "run from the source tree, or pass --cases FILE");
    throw config::InputError(std::move(state.diagnostics));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    state.diagnostics.add(config::Location{file, e.mark.line + 1, e.mark.column + 1}, "",
                          fmt::format("YAML syntax error: {}", e.msg));
    throw config::InputError(std::move(state.diagnostics));
  }
  config::Codec<ValidationCases>::decode(root, out, config::Context(state, file));
  if (state.diagnostics.ok()) config::check_required(out, "", state);
  for (std::size_t i = 0; i < out.cases.size(); ++i) {
    const auto& c = out.cases[i];
    if (std::find(kMetrics.begin(), kMetrics.end(), c.metric) == kMetrics.end() && !is_failure_metric(c.metric)) {
      const std::string path = fmt::format("cases[{}].metric", i);
      state.diagnostics.add(state.where(path), path, fmt::format("unknown metric '{}'", c.metric),
                            "one of tflops_per_gpu, megatron_tflops_per_gpu, mfu, tokens_per_s, step_time_s, failures:CAUSE, "
                            "interruptions");
    }
  }
  if (!state.diagnostics.ok()) throw config::InputError(std::move(state.diagnostics));
  return out;
}

/// FLOPs per step as Narayanan et al. (SC'21, section 5.1) count them, with activation
/// recomputation: 96 B s l h^2 (1 + s / 6h + V / 16 l h).
double megatron_flops(const scenario::ResolvedJob& job) {
  const auto B = static_cast<double>(job.config.global_batch);
  const auto s = static_cast<double>(workload::sequence_length(job.config, job.model));
  const auto l = static_cast<double>(job.model.layers);
  const auto h = static_cast<double>(job.model.hidden);
  const auto V = static_cast<double>(job.model.vocab);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

}  // namespace

bool within_band(const CaseResult& r) {
  return std::fabs(r.predicted - r.spec.published) <= 2.0 * std::sqrt(r.spec.published);
}

std::vector<CaseResult> run_validation(const std::string& cases_file) {
  const ValidationCases cases = load_cases(cases_file);
  const fs::path dir = fs::path(cases_file).parent_path();
  std::vector<CaseResult> out;
  // Cases that share a scenario run it once.
  std::map<std::string, std::pair<scenario::LoadedScenario, RunResult>> runs;
  for (const ValidationCase& c : cases.cases) {
    const std::string file = (dir / c.scenario).lexically_normal().string();
    auto it = runs.find(file);
    if (it == runs.end()) {
      scenario::LoadOptions options;
      options.check_memory = false;
      scenario::LoadedScenario loaded = scenario::load_scenario(file, options);
      if (loaded.jobs.size() != 1) {
        config::Diagnostics d;
        d.add(config::Location{file, 0, 0}, "workload.jobs",
              fmt::format("a validation case needs exactly one job, found {}", loaded.jobs.size()));
        throw config::InputError(std::move(d));
      }
      RunResult run = compute_run(loaded, false);
      it = runs.emplace(file, std::pair{std::move(loaded), std::move(run)}).first;
    }
    const scenario::LoadedScenario& loaded = it->second.first;
    const RunResult& run = it->second.second;
    const workload::StepResult& step = run.jobs.front();
    const scenario::ResolvedJob& job = loaded.jobs.front();
    CaseResult r;
    r.spec = c;
    r.step_time_s = step.step_time_s;
    r.mfu = step.mfu;
    r.memory_bytes = step.memory.total;
    r.hbm_bytes = loaded.node.gpu.hbm_capacity.value();
    if (is_failure_metric(c.metric)) {
      r.failures = true;
      if (!run.reliability || !loaded.config.failures) {
        config::Diagnostics d;
        d.add(config::Location{file, 0, 0}, "failures", fmt::format("case {}: metric {} needs a failures section",
                                                                     c.name, c.metric));
        throw config::InputError(std::move(d));
      }
      if (c.metric == "interruptions") {
        r.predicted = run.reliability->jobs.front().interruptions.mean;
      } else {
        const std::string cause = c.metric.substr(9);
        if (cause != "total" && loaded.config.failures->components.count(cause) == 0) {
          config::Diagnostics d;
          d.add(config::Location{cases_file, 0, 0}, "cases",
                fmt::format("case {}: the scenario has no failure component '{}'", c.name, cause));
          throw config::InputError(std::move(d));
        }
        for (const auto& [k, e] : run.reliability->failures_by_cause) {
          if (cause == "total" || k == cause) r.predicted += e.mean;
        }
      }
    } else if (c.metric == "tflops_per_gpu") {
      r.predicted = step.tflops_per_gpu;
    } else if (c.metric == "megatron_tflops_per_gpu") {
      r.predicted = megatron_flops(job) / (step.step_time_s * static_cast<double>(job.config.gpus)) / 1e12;
    } else if (c.metric == "mfu") {
      r.predicted = step.mfu;
    } else if (c.metric == "tokens_per_s") {
      r.predicted = step.tokens_per_s;
    } else {
      r.predicted = step.step_time_s;
    }
    r.error = r.predicted / c.published - 1.0;
    out.push_back(std::move(r));
  }
  return out;
}

double median_abs_error(const std::vector<CaseResult>& results) {
  std::vector<double> e;
  for (const auto& r : results) {
    if (!r.failures) e.push_back(std::fabs(r.error));
  }
  if (e.empty()) return 0.0;
  std::sort(e.begin(), e.end());
  const std::size_t n = e.size();
  return n % 2 == 1 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
}

std::string validation_table(const std::vector<CaseResult>& results) {
  std::string out = "Training throughput\n";
  out += fmt::format("{:<32}{:<26}{:>11}{:>11}{:>9}{:>11}{:>8}  {}\n", "case", "metric", "published",
                     "predicted", "error", "step (s)", "MFU", "memory per GPU");
  std::size_t throughput = 0;
  for (const CaseResult& r : results) {
    if (r.failures) continue;
    ++throughput;
    const bool fits = r.memory_bytes <= r.hbm_bytes;
    out += fmt::format("{:<32}{:<26}{:>11.4g}{:>11.4g}{:>8.1f}%{:>11.3f}{:>7.1f}%  {:.1f} GB{}\n", r.spec.name,
                       r.spec.metric, r.spec.published, r.predicted, 100.0 * r.error, r.step_time_s, 100.0 * r.mfu,
                       r.memory_bytes / 1e9, fits ? "" : fmt::format(" (> {:.0f} GB HBM)", r.hbm_bytes / 1e9));
  }
  out += fmt::format("\nmedian absolute error {:.1f}% over {} cases (target: at most 10%)\n",
                     100.0 * median_abs_error(results), throughput);
  bool header = false;
  for (const CaseResult& r : results) {
    if (!r.failures) continue;
    if (!header) {
      out += fmt::format("\nFailures (mean over replications; Poisson band: published +- 2 sqrt(published))\n");
      out += fmt::format("{:<32}{:<26}{:>11}{:>11}{:>9}  {}\n", "case", "metric", "published", "predicted", "error",
                         "within band");
      header = true;
    }
    out += fmt::format("{:<32}{:<26}{:>11.4g}{:>11.4g}{:>8.1f}%  {}\n", r.spec.name, r.spec.metric, r.spec.published,
                       r.predicted, 100.0 * r.error, within_band(r) ? "yes" : "NO");
  }
  out += "sources and assumptions: validation/cases.yaml\n";
  return out;
}

config::Json validation_json(const std::vector<CaseResult>& results) {
  config::Json cases = config::Json::array();
  for (const CaseResult& r : results) {
    cases.push_back({{"name", r.spec.name},
                     {"scenario", r.spec.scenario},
                     {"metric", r.spec.metric},
                     {"published", r.spec.published},
                     {"predicted", r.predicted},
                     {"error", r.error},
                     {"step_time_s", r.step_time_s},
                     {"mfu", r.mfu},
                     {"memory_per_gpu_bytes", r.memory_bytes},
                     {"fits_in_hbm", r.memory_bytes <= r.hbm_bytes},
                     {"within_poisson_band", r.failures ? config::Json(within_band(r)) : config::Json(nullptr)},
                     {"source", r.spec.source}});
  }
  return {{"cases", std::move(cases)}, {"median_abs_error", median_abs_error(results)}};
}

}  // namespace clustersim::tools
