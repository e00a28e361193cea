#include "tools/clustersim/validate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "models/config/diagnostics.hpp"
#include "models/network/network.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/units.hpp"
#include "tools/clustersim/collective.hpp"
#include "tools/clustersim/report.hpp"

namespace clustersim::tools {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCollectiveMetric = "busbw_GBps";

const std::vector<std::string_view> kMetrics{"tflops_per_gpu", "megatron_tflops_per_gpu", "mfu", "tokens_per_s",
                                             "step_time_s"};

/// "failures:CAUSE" (or failures:total): failures of that cause over the scenario's horizon,
/// cluster-wide, mean over replications.
bool is_failure_metric(std::string_view m) { return m.substr(0, 9) == "failures:" || m == "interruptions"; }

/// "8GiB", "512MiB": the largest binary unit that divides the size, as nccl-tests' sizes
/// are usually given; else the size as sim::format_bytes prints it.
std::string binary_size(sim::Bytes b) {
  constexpr std::pair<double, const char*> kUnits[] = {{1125899906842624.0, "PiB"}, {1099511627776.0, "TiB"},
                                                       {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}};
  for (const auto& [factor, name] : kUnits) {
    const double k = b.value() / factor;
    if (k >= 1.0 && k == std::floor(k)) return fmt::format("{:.0f}{}", k, name);
  }
  return sim::format_bytes(b);
}

/// A decoded cases file and where each of its values was written (for later diagnostics).
struct LoadedCases {
  ValidationCases cases;
  config::LoadState state;
};

/// Decodes the cases file and checks its values; the problems found are left in
/// state.diagnostics. A file that cannot be read or is not YAML throws at once.
LoadedCases load_cases(const std::string& file) {
  config::LoadState state;
  ValidationCases out;
  std::string text, why;
  if (!config::read_input_file(file, text, why)) {
    state.diagnostics.add(config::Location{file, 0, 0}, "", "cannot read the validation cases file: " + why,
                          "run from the source tree, or pass --cases FILE");
    throw config::InputError(std::move(state.diagnostics), true);
  }
  if (!config::check_aliases(text, file, state)) throw config::InputError(std::move(state.diagnostics), true);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    state.diagnostics.add(config::Location{file, e.mark.line + 1, config::character_column(text, e.mark.line, e.mark.column)}, "",
                          config::yaml_error_text(e));
    throw config::InputError(std::move(state.diagnostics), true);
  }
  if (!config::reject_tags(root, config::Context(state, file)) || !config::reject_runaway_quotes(root, text, file, state)) {
    throw config::InputError(std::move(state.diagnostics), true);
  }
  config::Codec<ValidationCases>::decode(root, out, config::Context(state, file));
  // The missing keys too, with the values in error (they were said only after their fix), but
  // for an entry with an error of its own (a misspelt `sourc` is the missing source).
  {
    config::LoadState probe = state;
    probe.diagnostics = config::Diagnostics{};
    config::check_required(out, "", probe);
    const std::vector<config::Diagnostic> decoded = state.diagnostics.items();
    for (const config::Diagnostic& m : probe.diagnostics.items()) {
      const std::size_t close = m.path.find(']');
      const std::string entry = close == std::string::npos ? m.path : m.path.substr(0, close + 1);
      const bool covered = std::any_of(decoded.begin(), decoded.end(), [&](const config::Diagnostic& d) {
        return d.path.empty() || d.path == entry || config::key_inside(entry, d.path) || config::key_inside(d.path, entry);
      });
      if (!covered) state.diagnostics.add(m.where, m.path, m.message, m.hint);
    }
  }
  for (std::size_t i = 0; i < out.cases.size(); ++i) {
    const auto& c = out.cases[i];
    // The error is predicted / published - 1: a published 0 made it inf%, a negative one
    // a meaningless figure.
    const std::string published = fmt::format("cases[{}].published", i);
    // Above 1e-300: a subnormal published value made the error overflow to inf%.
    if (state.assigned.count(published) && !(c.published > 1e-300)) {
      state.diagnostics.add(state.where(published), published,
                            fmt::format("must be a measured value above 0, got {}", c.published));
    } else if (state.assigned.count(published) && c.metric == "mfu" && c.published > 1.0) {
      // MFU is a share of the peak (the simulator's too): a percentage compared with it read -99%.
      state.diagnostics.add(state.where(published), published,
                            fmt::format("an MFU is a fraction of the peak, at most 1, got {}", c.published),
                            fmt::format("published: {:g}, if {:g} was a percentage", c.published / 100.0, c.published));
    }
    if (const std::string path = fmt::format("cases[{}].metric", i);
        state.assigned.count(path) && std::find(kMetrics.begin(), kMetrics.end(), c.metric) == kMetrics.end() &&
        !is_failure_metric(c.metric)) {
      state.diagnostics.add(state.where(path), path, fmt::format("unknown metric '{}'", c.metric),
                            "one of tflops_per_gpu, megatron_tflops_per_gpu, mfu, tokens_per_s, step_time_s, failures:CAUSE, "
                            "interruptions");
    }
  }
  // Every case names where its figure is published: a blank source is none.
  const auto blank = [](const std::string& words) {
    return std::all_of(words.begin(), words.end(), [](unsigned char ch) { return std::isspace(ch) != 0; });
  };
  for (const auto& [list, count] : {std::pair{"cases", out.cases.size()}, std::pair{"collectives", out.collectives.size()}}) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::string path = fmt::format("{}[{}].source", list, i);
      const std::string& source = std::string_view(list) == "cases" ? out.cases[i].source : out.collectives[i].source;
      if (state.assigned.count(path) && blank(source)) {
        state.diagnostics.add(state.where(path), path, "is blank: a case names where its figure is published",
                              "the paper, table and row, or the page, e.g. \"Narayanan et al., SC'21, Table 1, GPT 1.7B\"");
      }
    }
  }
  // Values that decoded (those that did not are reported already).
  for (std::size_t i = 0; i < out.collectives.size(); ++i) {
    const CollectiveCase& c = out.collectives[i];
    const std::string metric = fmt::format("collectives[{}].metric", i);
    if (state.assigned.count(metric) && c.metric != kCollectiveMetric) {
      state.diagnostics.add(state.where(metric), metric, fmt::format("unknown metric '{}' for a collective case", c.metric),
                            fmt::format("{}: nccl-tests' bus bandwidth, GB/s", kCollectiveMetric));
    }
    const std::string size = fmt::format("collectives[{}].size", i);
    if (state.assigned.count(size) && c.size > sim::Bytes::of(kMaxCollectiveBytes)) {
      state.diagnostics.add(state.where(size), size,
                            fmt::format("must be at most {}, got {}", binary_size(sim::Bytes::of(kMaxCollectiveBytes)),
                                        binary_size(c.size)));
    }
    const std::string published = fmt::format("collectives[{}].published", i);
    if (state.assigned.count(published) && !(c.published > 1e-300)) {
      state.diagnostics.add(state.where(published), published,
                            fmt::format("must be a bus bandwidth above 0 GB/s, got {}", c.published));
    }
  }
  return {std::move(out), std::move(state)};
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

/// Where a case's scenario file is: relative to the cases file.
std::string scenario_path(const std::string& cases_file, const std::string& scenario) {
  return (fs::path(cases_file).parent_path() / scenario).lexically_normal().string();
}

/// Whether the case at `at` ("cases[3]") decoded whole: nothing reported under it, and each of
/// `keys` given. Only such a case is checked against its scenario.
bool decoded_whole(const config::LoadState& state, const std::string& at, std::initializer_list<std::string_view> keys) {
  for (const config::Diagnostic& d : state.diagnostics.items()) {
    if (d.path == at || d.path.starts_with(at + ".")) return false;
  }
  return std::all_of(keys.begin(), keys.end(),
                     [&](std::string_view k) { return state.assigned.count(fmt::format("{}.{}", at, k)) > 0; });
}

/// One list of the cases file ("cases" or "collectives"), its scenarios loaded: each
/// distinct file once, in the order the list first names them. A scenario file that is not
/// there is reported where the case names it; a problem of a scenario that does not load, at
/// the scenario's own file, line, column and key, prefixed with the case that names it
/// ("case NAME (CASES:LINE:COLUMN)", and how many more name it). `check(loaded, report)`
/// adds a scenario's own further checks (`report(path, message)`, at the scenario file);
/// `check_case(i, loaded)` checks case i against its loaded scenario. `more` is set when a
/// scenario did not load: the checks of the cases naming it wait for its fix
/// (config::InputError::more_checks()).
template <class Case, class ScenarioCheck, class CaseCheck>
std::map<std::string, scenario::LoadedScenario> load_scenarios(const std::string& cases_file,
                                                               const std::vector<Case>& cases, std::string_view list,
                                                               const config::LoadState& state,
                                                               const scenario::LoadOptions& options,
                                                               config::Diagnostics& problems, bool& more,
                                                               ScenarioCheck check, CaseCheck check_case) {
  std::map<std::string, std::size_t> naming;  // cases naming each file
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (state.assigned.count(fmt::format("{}[{}].scenario", list, i))) ++naming[scenario_path(cases_file, cases[i].scenario)];
  }
  std::map<std::string, std::optional<scenario::LoadedScenario>> tried;  // nullopt: did not load
  std::set<std::string> missing;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", list, i);
    if (!state.assigned.count(at + ".scenario")) {  // reported by the cases file's decoding
      more = true;
      continue;
    }
    const std::string file = scenario_path(cases_file, cases[i].scenario);
    const config::Location named = state.where(at + ".scenario");
    std::error_code ec;
    if (missing.count(file) || !fs::is_regular_file(file, ec)) {  // each case naming it is told
      missing.insert(file);
      problems.add(named, at + ".scenario", fmt::format("no scenario file {}", file),
                   "scenario paths are relative to the cases file");
      more = true;
      continue;
    }
    auto it = tried.find(file);
    if (it == tried.end()) {
      it = tried.emplace(file, std::nullopt).first;
      const std::size_t others = naming[file] - 1;
      const std::string label =
          fmt::format("case {} ({}:{}:{}{})", cases[i].name.empty() ? at : cases[i].name, named.file, named.line,
                      named.column, others == 0 ? "" : fmt::format(", and {} more case{}", others, others == 1 ? "" : "s"));
      const auto report = [&](const config::Location& where, const std::string& path, const std::string& message,
                              const std::string& hint) {
        problems.add(where, path, fmt::format("{}: {}", label, message), hint);
      };
      try {
        scenario::LoadedScenario loaded = scenario::load_scenario(file, options);
        bool ok = true;
        check(loaded, [&](const std::string& path, const std::string& message) {
          report(config::Location{file, 0, 0}, path, message, "");
          ok = false;
        });
        if (ok) it->second = std::move(loaded);
      } catch (const config::InputError& e) {
        for (const config::Diagnostic& d : e.diagnostics().items()) report(d.where, d.path, d.message, d.hint);
        more = true;
      }
    }
    if (it->second) check_case(i, *it->second);
  }
  std::map<std::string, scenario::LoadedScenario> out;
  for (auto& [file, loaded] : tried) {
    if (loaded) out.emplace(file, std::move(*loaded));
  }
  return out;
}

}  // namespace

bool within_band(const CaseResult& r) {
  return std::fabs(r.predicted - r.spec.published) <= 2.0 * std::sqrt(r.spec.published);
}

LoadedValidation load_validation(const std::string& cases_file, bool gated) {
  LoadedCases decoded = load_cases(cases_file);
  LoadedValidation v{cases_file, std::move(decoded.cases), std::move(decoded.state), {}, {}};
  const config::LoadState& state = v.state;
  config::Diagnostics problems = state.diagnostics;
  const auto report = [&](const std::string& path, std::string message, std::string hint) {
    problems.add(state.where(path), path, std::move(message), std::move(hint));
  };
  if (problems.ok()) {
    const bool throughput = std::any_of(v.cases.cases.begin(), v.cases.cases.end(),
                                        [](const ValidationCase& c) { return !is_failure_metric(c.metric); });
    if (v.cases.cases.empty() && v.cases.collectives.empty()) {
      config::Location at = state.where("cases");
      if (at.file.empty()) at = config::Location{cases_file, 1, 1};  // an empty file: nothing was written
      problems.add(at, "cases", "the file holds no case",
             "list published runs under cases: and published collective bandwidths under collectives:, as "
             "validation/cases.yaml does");
    } else if (gated && !throughput) {
      report("cases", "--fail-above judges the median error of the training throughput cases, and this file has none",
             "add a case with a throughput metric, or leave --fail-above out");
    }
  }

  // Names: one per case of each kind (the report and its JSON tell the cases apart by name; a
  // case listed twice also counted twice in the median).
  {
    const auto unique_names = [&](const auto& list, const char* kind) {
      std::map<std::string, std::string> seen;  // name -> where it was first given
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = fmt::format("{}[{}]", kind, i);
        if (list[i].name.empty()) continue;
        const auto [it, fresh] = seen.emplace(list[i].name, at);
        if (fresh) continue;
        problems.add(state.where(at + ".name"), at + ".name",
                     fmt::format("'{}' names {} already: the report and its JSON tell the cases apart by name",
                                 list[i].name, it->second),
                     "give each case its own name");
      }
    };
    unique_names(v.cases.cases, "cases");
    unique_names(v.cases.collectives, "collectives");
  }

  // A case in error, or a scenario that did not load: the checks of the case against its
  // scenario wait for the fix (said by the error count); so do the file's own above (no
  // case, a gate without throughput cases) when its decoding failed.
  bool more = !state.diagnostics.ok() &&
              ((v.cases.cases.empty() && v.cases.collectives.empty()) || gated);

  // Training cases: one job each; a failure metric needs the failures, and the component, it counts.
  scenario::LoadOptions training;
  training.check_memory = false;
  const auto one_job = [](const scenario::LoadedScenario& loaded, const auto& bad) {
    if (loaded.jobs.size() != 1) {
      bad("workload.jobs", fmt::format("a validation case needs exactly one job, found {}", loaded.jobs.size()));
    }
  };
  const auto failures = [&](std::size_t i, const scenario::LoadedScenario& loaded) {
    const ValidationCase& c = v.cases.cases[i];
    const std::string at = fmt::format("cases[{}]", i);
    if (!is_failure_metric(c.metric)) return;
    if (!decoded_whole(state, at, {"metric"})) {
      more = true;
      return;
    }
    if (!loaded.config.failures) {
      report(at + ".metric", fmt::format("metric {} needs a failures section; {} has none", c.metric, loaded.file),
             "add one to the scenario, or compare a throughput metric");
      return;
    }
    const auto& components = loaded.config.failures->components;
    const std::string cause = c.metric == "interruptions" ? "total" : c.metric.substr(9);
    if (cause != "total" && components.count(cause) == 0) {
      std::vector<std::string> names;
      for (const auto& [name, component] : components) names.push_back("failures:" + name);
      names.emplace_back("failures:total");
      report(at + ".metric", fmt::format("{} has no failure component '{}'", loaded.file, cause),
             fmt::format("one of {}", fmt::join(names, ", ")));
    }
  };
  v.training = load_scenarios(cases_file, v.cases.cases, "cases", state, training, problems, more, one_job, failures);

  // Collective cases: a fabric with at least the case's ranks, an algorithm that can run the
  // collective on them (auto picks one that can).
  const auto no_check = [](const scenario::LoadedScenario&, const auto&) {};
  const auto runnable = [&](std::size_t i, const scenario::LoadedScenario& loaded) {
    const CollectiveCase& c = v.cases.collectives[i];
    const std::string at = fmt::format("collectives[{}]", i);
    if (!decoded_whole(state, at, {"op", "gpus", "size"})) {
      more = true;
      return;
    }
    if (!loaded.fabric) {
      report(at + ".scenario", fmt::format("{} has no fabric section; a collective needs one", loaded.file),
             "add one, e.g. fabric: {topology: fat_tree, radix: 64, link_latency: 700ns}");
      return;
    }
    const fabric::Fabric& fab = *loaded.fabric;
    if (c.gpus > fab.gpus()) {
      report(at + ".gpus",
             fmt::format("{} ranks, but the scenario's cluster has {} GPUs ({} node{} of {})", c.gpus, fab.gpus(),
                         loaded.config.cluster.nodes, loaded.config.cluster.nodes == 1 ? "" : "s", loaded.node.label()),
             fmt::format("choose 2 to {}, or more nodes in {}", fab.gpus(), loaded.file));
      return;
    }
    // Whole floats, as nccl-tests times them (and `collective` rounds to): a published size
    // is one, and 1 B of all-reduce is none (it was timed as nothing and reported -100%).
    const double unit = float_unit(c.op, c.gpus);
    if (std::fmod(c.size.value(), unit) != 0.0) {
      report(at + ".size",
             fmt::format("{:.0f} B is not a whole number of floats for {} on {} ranks (steps of {:.0f} B{})",
                         c.size.value(), config::enum_name(c.op), c.gpus, unit, unit > 4.0 ? ", 4 B per rank" : ""),
             fmt::format("the size nccl-tests printed, a multiple of {:.0f} B", unit));
      return;
    }
    if (c.algo == network::Algorithm::automatic) return;
    network::NetworkConfig cfg = loaded.config.network;
    cfg.model = c.model;
    network::Schedule schedule;
    std::string why;
    if (!network::plan(c.op, c.algo, first_ranks(c.gpus), c.size, fab.gpus_per_node, network::in_network(fab, cfg),
                       schedule, why)) {
      report(at + ".algo", why, "algo: auto picks the fastest that can run");
    }
  };
  v.collectives =
      load_scenarios(cases_file, v.cases.collectives, "collectives", state, {}, problems, more, no_check, runnable);

  if (!problems.ok()) throw config::InputError(std::move(problems), more);
  return v;
}

std::vector<CaseResult> run_validation(const std::string& cases_file) { return run_validation(load_validation(cases_file)); }

std::vector<CaseResult> run_validation(const LoadedValidation& v) {
  std::vector<CaseResult> out;
  // Cases that share a scenario run it once.
  std::map<std::string, RunResult> runs;
  for (const ValidationCase& c : v.cases.cases) {
    const std::string file = scenario_path(v.file, c.scenario);
    const scenario::LoadedScenario& loaded = v.training.at(file);
    auto it = runs.find(file);
    if (it == runs.end()) it = runs.emplace(file, compute_run(loaded, false)).first;
    const RunResult& run = it->second;
    const workload::StepResult& step = run.jobs.front();
    const scenario::ResolvedJob& job = loaded.jobs.front();
    CaseResult r;
    r.spec = c;
    r.step_time_s = step.step_time_s;
    r.mfu = step.mfu;
    r.memory_bytes = step.memory.total;
    r.hbm_bytes = loaded.node.gpu.hbm_capacity.value();
    if (is_failure_metric(c.metric)) {
      // load_validation checked the scenario has failures (so the long-run model ran) and the cause.
      r.failures = true;
      if (c.metric == "interruptions") {
        r.predicted = run.reliability->jobs.front().interruptions.mean;
      } else {
        const std::string cause = c.metric.substr(9);
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

std::vector<CollectiveResult> run_collective_validation(const std::string& cases_file) {
  return run_collective_validation(load_validation(cases_file));
}

std::vector<CollectiveResult> run_collective_validation(const LoadedValidation& v) {
  std::vector<CollectiveResult> out;
  config::Diagnostics problems;
  const auto& cases = v.cases.collectives;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CollectiveCase& c = cases[i];
    const scenario::LoadedScenario& loaded = v.collectives.at(scenario_path(v.file, c.scenario));
    const fabric::Fabric& fab = *loaded.fabric;  // load_validation checked it is there, with c.gpus GPUs
    network::NetworkConfig cfg = loaded.config.network;
    cfg.model = c.model;
    CollectiveTiming timing;
    std::string why;
    if (!time_collective(fab, cfg, c.op, first_ranks(c.gpus), c.size, c.algo, timing, why)) {
      // load_validation planned a named algorithm already; auto picks one that can run.
      const std::string path = fmt::format("collectives[{}].algo", i);
      problems.add(v.state.where(path), path, why, "algo: auto picks the fastest that can run");
      continue;
    }
    CollectiveResult r;
    r.spec = c;
    r.node = loaded.node.name;
    r.nodes = (c.gpus + fab.gpus_per_node - 1) / fab.gpus_per_node;
    r.algorithm = timing.algorithm;
    r.time_s = timing.time.seconds();
    r.algbw_GBps = timing.algbw_GBps;
    r.predicted = timing.busbw_GBps;
    r.error = r.predicted / c.published - 1.0;
    out.push_back(std::move(r));
  }
  if (!problems.ok()) throw config::InputError(std::move(problems));
  return out;
}

namespace {

double median(std::vector<double> e) {
  if (e.empty()) return 0.0;
  std::sort(e.begin(), e.end());
  const std::size_t n = e.size();
  return n % 2 == 1 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
}

}  // namespace

double median_abs_error(const std::vector<CaseResult>& results) {
  std::vector<double> e;
  for (const auto& r : results) {
    if (!r.failures) e.push_back(std::fabs(r.error));
  }
  return median(std::move(e));
}

double median_abs_error(const std::vector<CollectiveResult>& results) {
  std::vector<double> e;
  for (const auto& r : results) {
    if (!r.spec.in_sample) e.push_back(std::fabs(r.error));
  }
  return median(std::move(e));
}

int digits_apart(double percent, double limit) {
  int digits = 1;
  while (percent > limit && digits < 6 &&
         std::round(percent * std::pow(10, digits)) <= std::round(limit * std::pow(10, digits))) {
    ++digits;
  }
  return digits;
}

std::string validation_table(const std::vector<CaseResult>& results, const std::vector<CollectiveResult>& collectives,
                             const std::string& cases_file, double fail_above) {
  // A percentage in the table's width: one decimal, or three digits with an exponent past a
  // million (a published value of 1e-300 printed 300 digits).
  const auto pct = [](double fraction) {
    const double v = 100.0 * fraction;
    return std::fabs(v) < 1e6 ? fmt::format("{:.1f}%", v) : fmt::format("{:.3g}%", v);
  };
  std::string out;
  std::size_t throughput = 0;
  for (const CaseResult& r : results) {
    if (r.failures) continue;
    if (throughput++ == 0) {
      out += "Training throughput\n";
      out += fmt::format("{:<32}{:<26}{:>11}{:>11}{:>9}{:>11}{:>8}  {}\n", "case", "metric", "published",
                         "predicted", "error", "step (s)", "MFU", "memory per GPU");
    }
    const bool fits = r.memory_bytes <= r.hbm_bytes;
    // From 10,000 whole and grouped (299,008 tokens/s read 2.99e+05).
    out += fmt::format("{:<32}{:<26}{:>11}{:>11} {:>8}{:>11.3f}{:>7.1f}%  {:.1f} GB{}\n", r.spec.name,
                       r.spec.metric, readable(r.spec.published), readable(r.predicted), pct(r.error), r.step_time_s, 100.0 * r.mfu,
                       r.memory_bytes / 1e9, fits ? "" : fmt::format(" (> {:.0f} GB HBM)", r.hbm_bytes / 1e9));
  }
  if (throughput > 0) {
    // The gate in force when there is one (validate --fail-above), else the project's target;
    // compared as cmd_validate() compares, on the unrounded percentage.
    const double median = 100.0 * median_abs_error(results);
    const double limit = fail_above >= 0.0 ? fail_above : 10.0;
    // Enough digits that an exceeded limit does not print as the median (9.44% against 9.4%).
    const int digits = digits_apart(median, limit);
    const std::string shown = digits == 1 ? pct(median / 100.0) : fmt::format("{:.{}f}%", median, digits);
    out += fmt::format("\nmedian absolute error {} over {} case{} ({} {:g}%: {})\n", shown, throughput,
                       throughput == 1 ? "" : "s", fail_above >= 0.0 ? "--fail-above" : "target: at most", limit,
                       median > limit ? "exceeded" : "met");
  }
  bool header = false;
  for (const CaseResult& r : results) {
    if (!r.failures) continue;
    if (!header) {
      out += fmt::format("{}Failures (mean over replications; Poisson band: published +- 2 sqrt(published))\n",
                         out.empty() ? "" : "\n");
      out += fmt::format("{:<32}{:<26}{:>11}{:>11}{:>9}  {}\n", "case", "metric", "published", "predicted", "error",
                         "within band");
      header = true;
    }
    out += fmt::format("{:<32}{:<26}{:>11.4g}{:>11.4g} {:>8}  {}\n", r.spec.name, r.spec.metric, r.spec.published,
                       r.predicted, pct(r.error), within_band(r) ? "yes" : "NO");
  }
  if (!collectives.empty()) {
    out += fmt::format("{}Collective bus bandwidth ({}: nccl-tests' busbw in GB/s; ranks: the first N GPUs in node "
                       "order)\n",
                       out.empty() ? "" : "\n", kCollectiveMetric);
    out += fmt::format("{:<32}{:<16}{:>5}{:>6}{:>9}  {:<24}{:<12}{:>10}{:>11}{:>9}{:>11}\n", "case", "op", "GPUs",
                       "nodes", "size", "algo", "model", "published", "predicted", "error", "time (ms)");
    for (const CollectiveResult& r : collectives) {
      out += fmt::format("{:<32}{:<16}{:>5}{:>6}{:>9}  {:<24}{:<12}{:>10.4g}{:>11.4g} {:>8}{:>11.3f}{}\n",
                         r.spec.name, config::enum_name(r.spec.op), r.spec.gpus, r.nodes, binary_size(r.spec.size),
                         r.spec.algo == network::Algorithm::automatic
                             ? fmt::format("auto: {}", config::enum_name(r.algorithm))
                             : std::string(config::enum_name(r.algorithm)),
                         config::enum_name(r.spec.model), r.spec.published, r.predicted, pct(r.error),
                         1e3 * r.time_s, r.spec.in_sample ? "  in sample" : "");
    }
    const auto fitted = static_cast<std::size_t>(std::count_if(
        collectives.begin(), collectives.end(), [](const CollectiveResult& r) { return r.spec.in_sample; }));
    const std::size_t predicted = collectives.size() - fitted;
    const std::string left_out =
        fitted == 0 ? ""
                    : fmt::format("; {} in sample, a calibration fitted on it, left out", fitted);
    if (predicted > 0) {
      out += fmt::format("\nmedian absolute error {} over {} collective case{} (reported on its own: not part of "
                         "the training median or --fail-above{})\n",
                         pct(median_abs_error(collectives)), predicted, predicted == 1 ? "" : "s", left_out);
    } else {
      out += fmt::format("\nno collective case out of sample (every one checks a calibration fitted on it)\n");
    }
  }
  out += fmt::format("sources and assumptions: {}\n", cases_file);
  return out;
}

config::Json validation_json(const std::vector<CaseResult>& results, const std::vector<CollectiveResult>& collectives) {
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
  config::Json coll = config::Json::array();
  for (const CollectiveResult& r : collectives) {
    coll.push_back({{"name", r.spec.name},
                    {"scenario", r.spec.scenario},
                    {"metric", r.spec.metric},
                    {"op", config::enum_name(r.spec.op)},
                    {"gpus", r.spec.gpus},
                    {"nodes", r.nodes},
                    {"node", r.node},
                    {"size_bytes", r.spec.size.value()},
                    {"algo", config::enum_name(r.spec.algo)},
                    {"algorithm_run", config::enum_name(r.algorithm)},
                    {"model", config::enum_name(r.spec.model)},
                    {"published", r.spec.published},
                    {"predicted", r.predicted},
                    {"error", r.error},
                    {"time_s", r.time_s},
                    {"algbw_GBps", r.algbw_GBps},
                    {"in_sample", r.spec.in_sample},
                    {"source", r.spec.source}});
  }
  const bool throughput = std::any_of(results.begin(), results.end(), [](const CaseResult& r) { return !r.failures; });
  return {{"cases", std::move(cases)},
          {"median_abs_error", throughput ? config::Json(median_abs_error(results)) : config::Json(nullptr)},
          {"collectives",
           {{"metric", kCollectiveMetric},
            {"cases", std::move(coll)},
            {"median_abs_error",
             std::all_of(collectives.begin(), collectives.end(),
                         [](const CollectiveResult& r) { return r.spec.in_sample; })
                 ? config::Json(nullptr)
                 : config::Json(median_abs_error(collectives))}}}};
}

}  // namespace clustersim::tools
