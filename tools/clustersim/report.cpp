#include "tools/clustersim/report.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <functional>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <numeric>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/cluster/cluster.hpp"
#include "models/config/diagnostics.hpp"
#include "sim/check.hpp"
#include "sim/time.hpp"
#include "tools/clustersim/degraded.hpp"
#include "tools/clustersim/version.hpp"

namespace clustersim::tools {

workload::StepInputs step_inputs(const scenario::LoadedScenario& loaded, const scenario::ResolvedJob& job, bool trace,
                                 bool links) {
  workload::StepInputs in;
  in.job = &job.config;
  in.model = &job.model;
  in.profile = &job.profile;
  in.fabric = &*loaded.fabric;
  in.network = &loaded.config.network;
  in.first_gpu = job.first_gpu;
  in.want_trace = trace;
  in.want_links = links;
  return in;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// "mean +- half-width" of a 95% interval; where the interval would pass a bound of the
/// quantity (an ETTR below 0% or above 100%: few replications, a wide t interval), the
/// interval itself, clipped: "76.86 (95% interval 0.00-100.00)".
std::string plus_minus(double mean, double ci95, int digits, double lo, double hi, std::string_view unit = "") {
  if (!std::isfinite(ci95)) return fmt::format("{:.{}f}{}", mean, digits, unit);
  if (mean - ci95 < lo || mean + ci95 > hi) {
    return fmt::format("{:.{}f}{} (95% interval {:.{}f}-{:.{}f}{})", mean, digits, unit, std::max(lo, mean - ci95),
                       digits, std::min(hi, mean + ci95), digits, unit);
  }
  return fmt::format("{:.{}f} +- {:.{}f}{}", mean, digits, ci95, digits, unit);
}

/// Nodes per pod or group, for placement: how many nodes, counted from node 0, reach node
/// 0 (NIC 0 to NIC 0) below the fabric's top tier (in fewer switch hops than its diameter);
/// every node on a one-tier fabric; 0 on a torus, which has no such blocks.
std::int64_t block_nodes(const fabric::Fabric& f, std::int64_t diameter) {
  if (f.topology == fabric::Topology::torus || f.nics_per_node <= 0) return 0;
  for (std::int64_t n = 1; n < f.nodes; ++n) {
    if (f.switch_hops(0, n * f.nics_per_node) >= diameter) return n;
  }
  return f.nodes;
}

/// Per node, the first and last block (as block_nodes counts them: a pod on a Clos of
/// several pods, else a leaf, or a rail group of leaves; a dragonfly's group) its NICs are
/// in. Empty on a torus.
std::vector<std::pair<std::int64_t, std::int64_t>> node_blocks(const fabric::Fabric& f) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  const std::int64_t C = f.nics_per_node;
  if (C <= 0) return out;
  std::function<std::int64_t(std::int64_t)> block;
  if (const auto* c = std::get_if<fabric::ClosLayout>(&f.layout)) {
    block = [c, C](std::int64_t e) {
      const std::int64_t leaf = c->leaf_of(e / C, e % C, C);
      if (c->tiers == 3 && c->pods > 1) return leaf / c->d2;
      return c->rail ? leaf / c->rails : leaf;
    };
  } else if (const auto* d = std::get_if<fabric::DragonflyLayout>(&f.layout)) {
    block = [d](std::int64_t e) { return e / d->p / d->a; };
  } else {
    return out;
  }
  out.reserve(static_cast<std::size_t>(f.nodes));
  for (std::int64_t n = 0; n < f.nodes; ++n) out.emplace_back(block(n * C), block(n * C + C - 1));
  return out;
}

}  // namespace

reliability::LongRunInputs long_run_inputs(const scenario::LoadedScenario& loaded,
                                           const std::vector<workload::StepResult>& steps,
                                           const std::optional<fabric::FabricMetrics>& fabric) {
  const scenario::Scenario& sc = loaded.config;
  static const reliability::FailuresConfig kNoFailures{};  // a queue without failures
  reliability::LongRunInputs in;
  in.failures = sc.failures ? &*sc.failures : &kNoFailures;
  in.scheduler = sc.scheduler;
  in.checkpoint = sc.checkpoint;
  in.nodes = sc.cluster.nodes;
  in.gpus_per_node = loaded.node.spec.gpus;
  if (fabric) {
    in.switches = fabric->switches;
    if (loaded.fabric) in.links = static_cast<std::int64_t>(fabric::failure_cables(*loaded.fabric).size());
    if (loaded.fabric) in.block_nodes = block_nodes(*loaded.fabric, fabric->diameter_hops);
    if (loaded.fabric) in.node_blocks = node_blocks(*loaded.fabric);
    if (loaded.fabric) in.scope = fabric_scope(*loaded.fabric);
  }
  const bool reroutes =
      loaded.fabric && sc.failures &&
      std::any_of(sc.failures->components.begin(), sc.failures->components.end(),
                  [](const auto& c) { return c.second.effect == reliability::Effect::reroute; });
  // Rerouting classes by (job entry, offset of the first node in its pod or group): copies
  // of an entry at the same offset cross the same shape of fabric and fare alike.
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<reliability::Degradation>> classes_by_shape;
  for (std::size_t i = 0; i < loaded.jobs.size(); ++i) {
    const scenario::ResolvedJob& job = loaded.jobs[i];
    reliability::JobProfile p;
    p.name = job.config.name;
    p.first_node = job.first_gpu / in.gpus_per_node;
    p.nodes = (job.first_gpu + job.config.gpus + in.gpus_per_node - 1) / in.gpus_per_node - p.first_node;
    p.gpus = job.config.gpus;
    p.dp = job.config.parallelism.order.back() == workload::Axis::dp ? job.config.parallelism.dp : 1;
    p.tokens_per_s = steps[i].tokens_per_s;
    p.step_s = steps[i].step_time_s;
    if (job.config.train_tokens) p.train_tokens = workload::tokens_in_whole_steps(job.config.train_tokens->value(), steps[i]);
    p.checkpoint_bytes = scenario::checkpoint_bytes(loaded, job);
    p.submit_s = job.config.submit.seconds();
    if (reroutes && p.nodes > 1) {
      // Each copy of a job entry on its own nodes: an element one copy routes around may
      // cut another off (a copy across two leaves under one spine). Copies share the first
      // copy's step (compute_run), so a later copy's healthy step is simulated on its own
      // nodes here, for a factor between two steps on the same nodes. On a fabric without
      // pods or groups (a torus) every copy is its own shape.
      const std::pair<std::size_t, std::int64_t> shape{
          job.entry, in.block_nodes > 0 ? p.first_node % in.block_nodes : p.first_node};
      const auto known = classes_by_shape.find(shape);
      if (known != classes_by_shape.end()) {
        p.degradations = known->second;
      } else {
        const double healthy =
            job.copy > 0 ? workload::simulate_step(step_inputs(loaded, job)).step_time_s : steps[i].step_time_s;
        for (const DegradedClass& c : degraded_steps(loaded, job, healthy)) {
          p.degradations.push_back({c.name, c.is_switch, c.first, c.count, c.factor});
        }
        classes_by_shape.emplace(shape, p.degradations);
      }
    }
    in.jobs.push_back(std::move(p));
  }
  in.horizon_s = sc.simulation.horizon ? sc.simulation.horizon->seconds() : 0.0;
  in.replications = sc.simulation.replications;
  in.seed = sc.simulation.seed;
  return in;
}

namespace {
/// A duration past the clock's range or a size past a limit (sim::LimitError), found while
/// running: the input's fault, reported like a load error (exit 2) where it can be placed.
config::InputError located_input_error(config::Location where, std::string path, std::string message,
                                          std::string hint) {
  config::Diagnostics d;
  d.add(std::move(where), std::move(path), std::move(message), std::move(hint));
  return config::InputError(std::move(d));
}

constexpr std::string_view kStepHint =
    "look for very small rates (bandwidths, peak FLOP rates) or very long latencies (network.step_latency, "
    "network.call_overhead)";
constexpr std::string_view kLongRunHint =
    "look for very long durations (failures.repair, checkpoint, scheduler, a job's submit time) or a training step "
    "that is itself very long";

}  // namespace

TerminalProgress::TerminalProgress(std::string what)
    : what_(std::move(what)), enabled_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_) {}

TerminalProgress::~TerminalProgress() { erase(); }

void TerminalProgress::erase() {
  if (shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  shown_ = false;
}

void TerminalProgress::operator()(double done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || std::chrono::duration<double>(now - last_).count() < 0.2) return;
  last_ = now;
  const double left = done > 0.0 ? elapsed * (1.0 - done) / done : 0.0;
  const std::string line =
      fmt::format("{}: {:5.1f}%, {:.0f} s elapsed, about {:.0f} s left", what_, 100.0 * done, elapsed, left);
  width_ = std::max(width_, line.size());
  std::fprintf(stderr, "\r%-*s", static_cast<int>(width_), line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

RunResult compute_run(const scenario::LoadedScenario& loaded, bool trace, bool progress, bool links) {
  RunResult r;
  r.inventory = cluster::make_inventory(loaded.node, loaded.config.cluster.nodes);
  if (loaded.fabric) r.fabric = fabric::measure(*loaded.fabric, loaded.pricing, loaded.config.network.sharp);
  for (const scenario::ResolvedJob& job : loaded.jobs) {
    if (job.copy > 0) {  // the copies of a `count` job share the first copy's step
      r.jobs.push_back(r.jobs.back());
      continue;
    }
    try {
      r.jobs.push_back(workload::simulate_step(step_inputs(loaded, job, trace, links)));
    } catch (const sim::TimeRangeError& e) {
      throw located_input_error(job.where, fmt::format("workload.jobs[{}]", job.entry),
                                   fmt::format("job '{}': its training step cannot be simulated: {}", job.config.name, e.what()),
                                   std::string(kStepHint));
    } catch (const sim::LimitError& e) {
      throw located_input_error(job.where, fmt::format("workload.jobs[{}]", job.entry),
                                   fmt::format("job '{}': its training step cannot be simulated: {}", job.config.name, e.what()),
                                   "network.model: analytical times every collective in closed form");
    }
    r.info.events_processed += r.jobs.back().events;
    r.info.events_scheduled += r.jobs.back().events_scheduled;
  }
  if (scenario::long_run(loaded)) {
    try {
      reliability::LongRunInputs in = long_run_inputs(loaded, r.jobs, r.fabric);
      TerminalProgress shown(fmt::format("long run ({} replication{})", in.replications, in.replications == 1 ? "" : "s"));
      if (progress) in.progress = [&shown](double done) { shown(done); };
      r.reliability = reliability::simulate_long_run(in);
    } catch (const sim::TimeRangeError& e) {
      throw located_input_error(config::Location{loaded.file, 0, 0}, "",
                                   fmt::format("the long run (failures, queue) cannot be simulated: {}", e.what()),
                                   std::string(kLongRunHint));
    } catch (const sim::LimitError& e) {
      // The heavy tail is a cause only where the scenario has one.
      const bool tail = loaded.config.failures &&
                        loaded.config.failures->heterogeneity.kind == reliability::HeterogeneityKind::power_law;
      throw located_input_error(config::Location{loaded.file, 0, 0}, "",
                                   fmt::format("the long run (failures, queue) cannot be simulated: {}", e.what()),
                                   fmt::format("failure rates per unit near published ones (about 0.0002/gpu-day){}",
                                               tail ? ", a larger scheduler.retire_after, or a larger "
                                                      "failures.heterogeneity.shape (a lighter tail)"
                                                    : ", or a larger scheduler.retire_after"));
    }
    r.info.events_processed += r.reliability->events;
    r.info.events_scheduled += r.reliability->events_scheduled;
  }
  add_economics(loaded, r);
  return r;
}

bool routes_hashed(const scenario::LoadedScenario& loaded) {
  return loaded.config.fabric && loaded.fabric && loaded.fabric->seed_matters();
}

EcmpDraws run_ecmp_draws(const scenario::LoadedScenario& loaded, std::int64_t draws) {
  EcmpDraws out;
  const auto step = [](const RunResult& r) { return r.jobs.empty() ? 0.0 : r.jobs[0].step_time_s; };
  if (draws <= 1 || !routes_hashed(loaded)) {
    out.run = compute_run(loaded);
    if (!out.run.jobs.empty()) out.steps = std::pair{step(out.run), step(out.run)};
    return out;
  }
  std::vector<std::pair<std::int64_t, RunResult>> runs;
  for (std::int64_t k = 0; k < draws; ++k) {
    scenario::LoadedScenario draw = loaded;
    const std::int64_t seed = loaded.config.fabric->ecmp_seed + k;
    draw.config.fabric->ecmp_seed = seed;
    draw.fabric->ecmp_seed = static_cast<std::uint64_t>(seed);
    runs.emplace_back(seed, compute_run(draw));
  }
  // By step time, seeds in order among equal ones.
  std::stable_sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) { return step(a.second) < step(b.second); });
  if (!runs.front().second.jobs.empty()) out.steps = std::pair{step(runs.front().second), step(runs.back().second)};
  // The median step; of the draws that tie with it, the first seed (the scenario's own when
  // every draw ties: a design whose hashing collides alike on every draw).
  std::size_t m = (runs.size() - 1) / 2;
  while (m > 0 && step(runs[m - 1].second) == step(runs[m].second)) --m;
  auto& median = runs[m];
  out.seed = median.first;
  out.run = std::move(median.second);
  return out;
}

/// Job i's GPUs are busy for the compute and optimizer share of its step; the rest idle.
double compute_share(const RunResult& r, std::size_t i) {
  const workload::StepResult& st = r.jobs[i];
  return st.step_time_s > 0 ? (st.breakdown.compute + st.breakdown.contention + st.breakdown.optimizer) / st.step_time_s
                            : 0.0;
}

cost::CostInputs cost_inputs(const scenario::LoadedScenario& loaded, const RunResult& r) {
  const scenario::Scenario& sc = loaded.config;
  cost::CostInputs in;
  in.nodes = sc.cluster.nodes;
  in.spare_nodes = sc.scheduler.spare_nodes;
  in.gpus_per_node = loaded.node.spec.gpus;
  in.gpu_tdp = loaded.node.gpu.tdp;
  in.host_power = loaded.node.spec.host_power;
  in.node = cost::price_node(loaded.node.name, loaded.node.gpu_name, in.gpus_per_node, loaded.pricing, sc.economics);
  in.fabric = r.fabric ? &*r.fabric : nullptr;
  in.economics = sc.economics;
  if (sc.economics.utilization) {
    in.utilization = *sc.economics.utilization;
    in.utilization_basis = "economics.utilization";
  } else if (r.jobs.empty()) {
    in.utilization = 1.0;
    in.utilization_basis = "full load: the scenario has no job";
  } else {
    const reliability::LongRunResult* lr = r.reliability ? &*r.reliability : nullptr;
    if (lr && std::isfinite(lr->utilisation.mean) && lr->jobs.size() == r.jobs.size()) {
      // Under the schedule, each job weighs by the GPU-time it spans (cost.hpp).
      std::vector<std::pair<double, double>> jobs;
      for (std::size_t i = 0; i < r.jobs.size(); ++i) {
        const reliability::JobSummary& j = lr->jobs[i];
        const double end = std::isfinite(j.end_s.mean) ? j.end_s.mean : lr->elapsed_s;
        const double span = std::isfinite(j.start_s.mean) ? std::max(0.0, end - j.start_s.mean) : 0.0;
        jobs.emplace_back(static_cast<double>(loaded.jobs[i].config.gpus) * span, compute_share(r, i));
      }
      in.utilization = cost::scheduled_utilization(lr->utilisation.mean, jobs);
      in.utilization_basis = fmt::format(
          "the schedule's utilisation {:.1f}% x the jobs' compute share of their steps (compute, compute slowed and optimizer), weighted by GPU-time",
          100.0 * lr->utilisation.mean);
    } else {
      std::vector<std::pair<std::int64_t, double>> jobs;
      for (std::size_t i = 0; i < r.jobs.size(); ++i) jobs.emplace_back(loaded.jobs[i].config.gpus, compute_share(r, i));
      in.utilization = cost::fleet_utilization(jobs, in.nodes * in.gpus_per_node);
      in.utilization_basis = "the jobs' compute share of their steps: compute, compute slowed and optimizer; GPUs in no job idle";
    }
  }
  return in;
}

double time_to_train_s(const scenario::LoadedScenario& loaded, const RunResult& r, std::size_t job) {
  const auto& cfg = loaded.jobs[job].config;
  if (!cfg.train_tokens) return std::nan("");
  if (r.reliability && job < r.reliability->jobs.size()) return r.reliability->jobs[job].time_to_train_s.mean;
  return workload::ideal_time_to_train_s(cfg, r.jobs[job]);
}

void add_economics(const scenario::LoadedScenario& loaded, RunResult& r) {
  const cost::CostInputs inputs = cost_inputs(loaded, r);
  r.cost = cost::compute_cost(inputs);
  r.training.clear();
  for (std::size_t i = 0; i < loaded.jobs.size() && i < r.jobs.size(); ++i) {
    const double t = time_to_train_s(loaded, r, i);
    if (!std::isfinite(t)) {
      r.training.emplace_back();
      continue;
    }
    // With failures the time to train holds downtime: the GPUs are busy the step's compute
    // share of the time the training counts (ETTR), idle the rest (the rework of lost
    // steps counted idle too: a slight underestimate).
    double busy = compute_share(r, i);
    if (r.reliability && i < r.reliability->jobs.size() && std::isfinite(r.reliability->jobs[i].ettr.mean)) {
      busy *= std::clamp(r.reliability->jobs[i].ettr.mean, 0.0, 1.0);
    }
    r.training.emplace_back(cost::training_cost(inputs, r.cost, loaded.jobs[i].config.gpus, busy, t,
                                                loaded.jobs[i].config.train_tokens->value()));
  }
  // Hot spares are monitored as the nodes they stand in for; node metrics come from each
  // host (an NVL72 rack's 18 compute trays run 18 node exporters).
  const std::int64_t spares = loaded.config.scheduler.spare_nodes;
  r.monitoring = cost::monitoring_load(r.inventory.gpus + spares * loaded.node.spec.gpus,
                                       (r.inventory.nodes + spares) * loaded.node.spec.hosts,
                                       r.fabric ? r.fabric->switches : 0, loaded.config.monitoring);
}


namespace {

/// A duration in the table: days from a day up, hours from an hour, then minutes and
/// seconds (a 1 s horizon read "0.0 hours", a billion tokens "time to train 0.0 days").
std::string duration_text(double seconds) {
  if (seconds >= 86400.0) return fmt::format("{:.1f} days", seconds / 86400.0);
  if (seconds >= 3600.0) return fmt::format("{:.1f} hours", seconds / 3600.0);
  if (seconds >= 60.0) return fmt::format("{:.1f} min", seconds / 60.0);
  return fmt::format("{:.3g} s", seconds);
}

}  // namespace

std::string timeline_csv(const scenario::LoadedScenario& loaded, const reliability::LongRunResult& r) {
  std::string out = "time_s,time_d,kind,cause,job,node,gpu,element\n";
  // A switch or cable unit by the fabric's names (as the collective report's hot links):
  // the switches in vertex order from the first, the cables as failure_cables lists them.
  std::vector<std::string> switches, cables;
  const auto element = [&](const reliability::TimelineEvent& e) -> std::string {
    if (e.element < 0 || !loaded.fabric || !loaded.config.failures) return {};
    const auto c = loaded.config.failures->components.find(e.cause);
    if (c == loaded.config.failures->components.end()) return {};
    const fabric::Fabric& f = *loaded.fabric;
    const bool is_switch = reliability::unit_of(c->first, c->second) == reliability::Per::switch_;
    // Every vertex's label in one pass (vertex_label() counts from the first vertex: per
    // cable, a 65,536-GPU fabric's names took 15 s).
    if ((is_switch ? switches : cables).empty()) {
      const std::vector<std::string> labels = fabric::vertex_labels(f);
      if (is_switch) {
        using K = fabric::VertexKind;
        for (std::size_t v = 0; v < labels.size(); ++v) {
          const K kind = f.vertex_kind[v];
          if (kind == K::leaf || kind == K::spine || kind == K::core || kind == K::router) switches.push_back(labels[v]);
        }
      } else {
        for (const fabric::LinkId l : fabric::failure_cables(f)) cables.push_back(fabric::describe_link(f, l, labels));
      }
    }
    const std::vector<std::string>& names = is_switch ? switches : cables;
    return static_cast<std::size_t>(e.element) < names.size() ? names[static_cast<std::size_t>(e.element)] : std::string();
  };
  for (const auto& e : r.timeline) {
    const std::string job = e.job >= 0 && static_cast<std::size_t>(e.job) < loaded.jobs.size()
                                ? loaded.jobs[static_cast<std::size_t>(e.job)].config.name
                                : std::string();
    // Causes and job names are the scenario's words, which may hold a comma.
    out += fmt::format("{:.3f},{:.6f},{},{},{},{},{},{}\n", e.time_s, e.time_s / 86400.0, e.kind, csv_quote(e.cause),
                       csv_quote(job), e.node >= 0 ? fmt::format("{}", e.node) : std::string(),
                       e.gpu >= 0 ? fmt::format("{}", e.gpu) : std::string(), csv_quote(element(e)));
  }
  return out;
}

std::string gpu_failures_csv(const reliability::LongRunResult& r, std::int64_t gpus_per_node) {
  std::string out = "gpu,node,local,failures\n";
  for (std::size_t g = 0; g < r.gpu_failures.size(); ++g) {
    const auto id = static_cast<std::int64_t>(g);
    out += fmt::format("{},{},{},{}\n", id, id / gpus_per_node, id % gpus_per_node, r.gpu_failures[g]);
  }
  return out;
}

namespace {

/// nccl-tests' bus bandwidth of one group's call (GB/s; network::bus_factor); 0 when it has
/// none (no time, a group of one).
double busbw_GBps(const workload::CommTiming& c) {
  return c.time_s > 0.0 && c.group_size > 1 ? c.bytes / c.time_s * network::bus_factor(c.op, c.group_size) / 1e9 : 0.0;
}

std::string_view group_name(workload::Group g) {
  switch (g) {
    case workload::Group::tp: return "tp";
    case workload::Group::cp: return "cp";
    case workload::Group::ep: return "ep";
    case workload::Group::pp: return "pp";
    case workload::Group::dp: return "dp";
    case workload::Group::edp: return "edp";
  }
  return "?";
}

}  // namespace

namespace {

/// A mean, or null when it is not a number (a figure with no replication to average).
config::Json number(double v) { return std::isfinite(v) ? config::Json(v) : config::Json(nullptr); }

void add_reliability(config::Json& j, const reliability::JobSummary& s, double job_submit_s) {
  config::Json by_cause = config::Json::object();
  for (const auto& [k, e] : s.by_cause) by_cause[k] = e.mean;
  config::Json lost = config::Json::object();
  double lost_total = 0.0;
  for (const auto& [k, e] : s.lost_gpu_hours) {
    lost[k] = e.mean;
    lost_total += e.mean;
  }
  if (j.contains("time_to_train_s")) j["time_to_train_ideal_s"] = j["time_to_train_s"];
  j["interruptions"] = {{"total", s.interruptions.mean}, {"by_cause", std::move(by_cause)}};
  j["ettr"] = number(s.ettr.mean);
  j["goodput"] = number(s.goodput_tokens_per_s.mean);
  j["goodput_tokens_per_s"] = j["goodput"];  // the same, its unit in its key
  j["time_to_train_s"] = number(s.time_to_train_s.mean);
  // Why it is null: no projection past the clock's 292 years (else: under a millionth done).
  if (s.projection_past_clock) j["time_to_train_past_clock"] = true;
  j["finished_share"] = s.finished_share;
  j["lost_gpu_hours"] = std::move(lost);
  j["lost_gpu_hours_total"] = lost_total;
  j["checkpoint_gpu_hours"] = number(s.checkpoint_gpu_hours.mean);
  j["checkpoint_interval_s"] = number(s.checkpoint_interval_s);
  // Only when an asynchronous write raised the interval asked for.
  if (std::isfinite(s.checkpoint_interval_asked_s)) j["checkpoint_interval_asked_s"] = s.checkpoint_interval_asked_s;
  j["checkpoint_blocking_s"] = std::isfinite(s.checkpoint_blocking_s.mean) ? s.checkpoint_blocking_s.mean
                                                                           : s.checkpoint_write_s;
  j["checkpoint_blocking_alone_s"] = s.checkpoint_write_s;
  j["storage_slowdown"] = number(s.storage_slowdown.mean);
  j["mtbf_s"] = number(s.mtbf_s);
  j["submit_s"] = job_submit_s;
  j["started_share"] = s.started_share;
  j["queue_wait_s"] = number(s.queue_wait_s.mean);
  j["start_s"] = number(s.start_s.mean);
  j["end_s"] = number(s.end_s.mean);
  j["fragmented_starts"] = number(s.fragmented_starts.mean);
  j["ci95"] = {{"interruptions", number(s.interruptions.ci95)},
               {"ettr", number(s.ettr.ci95)},
               {"goodput", number(s.goodput_tokens_per_s.ci95)},
               {"time_to_train_s", number(s.time_to_train_s.ci95)},
               {"queue_wait_s", number(s.queue_wait_s.ci95)},
               {"start_s", number(s.start_s.ci95)},
               {"end_s", number(s.end_s.ci95)},
               {"storage_slowdown", number(s.storage_slowdown.ci95)}};
}

}  // namespace

namespace {

/// The datatype whose dense peak is MFU's denominator: the job's precision, except fp8 on a
/// GPU without FP8, whose fp8 work runs as bf16 (compute::peak_flops).
compute::Dtype mfu_peak_precision(const scenario::ResolvedJob& job) {
  const compute::Dtype d = job.config.precision;
  return d == compute::Dtype::fp8 && !job.profile.peak_flops.fp8 ? compute::Dtype::bf16 : d;
}

std::string mfu_peak_text(const scenario::ResolvedJob& job, const scenario::LoadedScenario& loaded) {
  const compute::Dtype peak = mfu_peak_precision(job);
  if (peak == job.config.precision) return fmt::format("{} dense peak", config::enum_name(peak));
  return fmt::format("{} dense peak: the {} has no FP8, and runs fp8 work as {}", config::enum_name(peak),
                     loaded.node.gpu_name, config::enum_name(peak));
}

}  // namespace

config::Json job_json(const scenario::ResolvedJob& job, const workload::StepResult& step) {
  const workload::Breakdown& b = step.breakdown;
  const workload::MemoryBreakdown& m = step.memory;
  config::Json j;
  j["name"] = job.config.name;
  j["model"] = job.model_name;
  j["gpus"] = job.config.gpus;
  j["first_gpu"] = job.first_gpu;
  j["micro_batches"] = step.micro_batches;
  j["step_time_s"] = step.step_time_s;
  j["tokens_per_step"] = step.tokens_per_step;
  j["tokens_per_s"] = step.tokens_per_s;
  j["tflops_per_gpu"] = step.tflops_per_gpu;
  j["mfu"] = step.mfu;
  j["hfu"] = step.hfu;
  j["peak_precision"] = config::enum_name(mfu_peak_precision(job));
  j["model_flops_per_step"] = step.model_flops_per_step;
  j["hardware_flops_per_step"] = step.hardware_flops_per_step;
  j["memory_per_gpu_bytes"] = m.total;
  j["memory"] = {{"stage", m.stage},
                 {"weights_bytes", m.weights},
                 {"gradients_bytes", m.gradients},
                 {"optimizer_bytes", m.optimizer},
                 {"activations_bytes", m.activations}};
  j["breakdown"] = {{"compute_s", b.compute}, {"tp_s", b.tp},         {"cp_s", b.cp},
                    {"ep_s", b.ep},           {"pp_s", b.pp},         {"dp_s", b.dp},
                    {"bubble_s", b.bubble},   {"optimizer_s", b.optimizer}, {"contention_s", b.contention}};
  j["critical_stage"] = step.critical_stage;
  j["busiest_stage"] = step.busiest_stage;
  config::Json stages = config::Json::array();
  for (std::size_t s = 0; s < step.stage_breakdowns.size(); ++s) {
    const workload::Breakdown& x = step.stage_breakdowns[s];
    stages.push_back({{"stage", s},          {"compute_s", x.compute}, {"tp_s", x.tp},
                      {"cp_s", x.cp},        {"ep_s", x.ep},           {"pp_s", x.pp},
                      {"dp_s", x.dp},        {"bubble_s", x.bubble},   {"optimizer_s", x.optimizer},
                      {"contention_s", x.contention}});
  }
  j["stages"] = std::move(stages);
  if (job.config.train_tokens) j["time_to_train_s"] = workload::ideal_time_to_train_s(job.config, step);
  config::Json comm = config::Json::array();
  for (const workload::CommTiming& c : step.comm) {
    comm.push_back({{"group", group_name(c.group)},
                    {"op", config::enum_name(c.op)},
                    {"algo", config::enum_name(c.algorithm)},
                    {"size_bytes", c.bytes},
                    {"group_size", c.group_size},
                    {"groups", c.groups},
                    {"time_s", c.time_s}});
    // nccl-tests' bus bandwidth of one group's call (network::bus_factor), and the link the
    // call, every group of its kind at once, loads most.
    if (const double busbw = busbw_GBps(c); busbw > 0.0) comm.back()["busbw_GBps"] = busbw;
    // A copy of a `count` job shares the first copy's step, whose link lies on the first
    // copy's GPUs: null for the others, as where the call loads no link (every entry has
    // the same keys: a copy's lacked them).
    const bool named = !c.busiest_link.empty() && job.copy == 0;
    comm.back()["busiest_link"] = named ? config::Json(c.busiest_link) : config::Json();
    comm.back()["busiest_link_utilisation"] = named ? config::Json(c.busiest_utilisation) : config::Json();
  }
  j["collectives"] = std::move(comm);
  return j;
}

config::Json trace_json(const scenario::LoadedScenario& loaded, const RunResult& result) {
  config::Json events = config::Json::array();
  // Where jobs queue, the scheduler places them: a step is timed on first_gpu.. (results.json's
  // placement), which the label says rather than naming the GPUs it ran on.
  const bool queued = result.reliability && scenario::jobs_queue(loaded);
  for (std::size_t ji = 0; ji < result.jobs.size(); ++ji) {
    const auto& job = loaded.jobs[ji];
    const auto& step = result.jobs[ji];
    const auto pid_of = [&](std::int64_t lane) { return static_cast<std::int64_t>(ji) * 100000 + lane; };
    // A copy of a `count` job shares the step of the entry's first copy (the jobs before it),
    // timed on that copy's GPUs: the same ranks of its own range.
    const std::int64_t shift = job.first_gpu - loaded.jobs[ji - static_cast<std::size_t>(job.copy)].first_gpu;
    for (std::int64_t s = 0; s < job.config.parallelism.pp; ++s) {
      std::int64_t gpu = 0;
      for (const auto& span : step.trace) {
        if (span.lane == s) {
          gpu = span.gpu + shift;
          break;
        }
      }
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid_of(s)},
                        {"args", {{"name", fmt::format("{}: stage {} ({}GPU {})", job.config.name, s,
                                                       queued ? "timed on " : "", gpu)}}}});
      events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid_of(s)}, {"args", {{"sort_index", pid_of(s)}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_of(s)}, {"tid", 0}, {"args", {{"name", "compute"}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_of(s)}, {"tid", 1},
                        {"args", {{"name", "data-parallel communication"}}}});
      if (std::any_of(step.trace.begin(), step.trace.end(), [&](const auto& span) { return span.category == "dp_pass"; })) {
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_of(s)}, {"tid", 2},
                          {"args", {{"name", "data-parallel communication in passes (ZeRO)"}}}});
      }
    }
    for (const auto& span : step.trace) {
      config::Json event{{"ph", "X"},
                         {"name", span.name},
                         {"cat", span.category},
                         {"pid", pid_of(span.lane)},
                         {"tid", span.category == "dp" ? 1 : span.category == "dp_pass" ? 2 : 0},
                         {"ts", span.start_s * 1e6},
                         {"dur", (span.end_s - span.start_s) * 1e6}};
      if (!span.args.empty()) {
        config::Json args = config::Json::object();
        for (const auto& [key, value] : span.args) args[key] = value;
        event["args"] = std::move(args);
      }
      events.push_back(std::move(event));
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"},
          {"otherData", {{"scenario", loaded.file}, {"note", "one training step; times in microseconds"}}}};
}

namespace {

/// The calibration the scenario runs on: the profile it names, else the GPU type's built-in
/// one, else (a GPU type without one) the network model's generic defaults.
std::string calibration_name(const scenario::LoadedScenario& loaded) {
  if (loaded.calibration) return loaded.config.calibration;
  return calibration::builtin_network(loaded.node.gpu_name) ? "built-in" : "generic";
}

}  // namespace

std::string calibration_summary(const scenario::LoadedScenario& loaded) {
  const network::NetworkConfig& n = loaded.config.network;
  const std::string which =
      loaded.calibration ? fmt::format("{} ({})", loaded.config.calibration, loaded.calibration->kind)
      : calibration::builtin_network(loaded.node.gpu_name)
          ? fmt::format("built-in for {}", loaded.node.gpu_name)
          : fmt::format("generic network defaults (no built-in calibration for {})", loaded.node.gpu_name);
  const std::string overrides =
      loaded.calibration_overrides.empty()
          ? std::string()
          : fmt::format(", with {} set by the scenario", fmt::join(loaded.calibration_overrides, ", "));
  // A profile's compute keys replace the built-in compute profile's: said, as they move the
  // step times (its MFU changed with only the collectives' figures in this row).
  std::string compute;
  if (loaded.calibration && loaded.calibration->compute && !loaded.calibration->compute_keys.empty()) {
    const std::vector<std::string>& keys = loaded.calibration->compute_keys;
    const std::size_t shown = keys.size() <= 4 ? keys.size() : 3;
    compute = fmt::format("; compute from the profile: {}{} (the rest built-in)",
                          fmt::join(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                          shown < keys.size() ? fmt::format(" and {} more", keys.size() - shown) : std::string());
  }
  return fmt::format("{}{}: collectives reach {:.1f}% of the scale-up and {:.1f}% of the scale-out line rate, {} per call{}",
                     which, overrides, 100.0 * n.scaleup_efficiency, 100.0 * n.scaleout_efficiency,
                     sim::human(n.call_overhead), compute);
}

config::Json result_document(const scenario::LoadedScenario& loaded, const RunResult& result) {
  const RunInfo& info = result.info;
  config::Json doc;
  doc["clustersim"] = {{"version", kVersion}, {"git_commit", kGitCommit}};
  doc["scenario_file"] = loaded.file;
  doc["seed"] = loaded.config.simulation.seed;
  doc["scenario"] = config::to_json(loaded.config);
  doc["inventory"] = cluster::to_json(result.inventory);
  // The values in force are under scenario.network; this says where they come from.
  doc["calibration"] = {{"profile", calibration_name(loaded)},
                        {"kind", loaded.calibration ? loaded.calibration->kind : calibration_name(loaded)},
                        {"scaleup_efficiency", loaded.config.network.scaleup_efficiency},
                        {"scaleout_efficiency", loaded.config.network.scaleout_efficiency},
                        {"call_overhead_s", loaded.config.network.call_overhead.seconds()},
                        {"overrides", loaded.calibration_overrides}};
  if (result.fabric) doc["fabric"] = fabric::to_json(*result.fabric);
  config::Json jobs = config::Json::array();
  // In a queue the scheduler places each job when it starts (failures.csv's start rows):
  // first_gpu is then where its step was timed, which another job may hold meanwhile (it read
  // as the placement). "fixed": the job runs on first_gpu.. (a hot spare may stand in for a
  // failed node of it).
  const bool queued = result.reliability && scenario::jobs_queue(loaded);
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    config::Json j = job_json(loaded.jobs[i], result.jobs[i]);
    j["placement"] = queued ? "scheduler" : "fixed";
    if (result.reliability) add_reliability(j, result.reliability->jobs[i], loaded.jobs[i].config.submit.seconds());
    jobs.push_back(std::move(j));
  }
  doc["jobs"] = std::move(jobs);
  if (result.reliability) {
    const auto& rel = *result.reliability;
    config::Json causes = config::Json::object();
    for (const auto& [k, e] : rel.failures_by_cause) causes[k] = e.mean;
    doc["failures"] = {{"replications", loaded.config.simulation.replications},
                       {"elapsed_s", rel.elapsed_s},
                       {"by_cause", std::move(causes)},
                       {"top1_failure_share", number(rel.top1_failure_share.mean)},
                       {"top1_rate_share", number(rel.top1_rate_share.mean)},
                       {"retired_nodes", rel.retired_nodes.mean},
                       {"heterogeneity_alpha", rel.heterogeneity_alpha},
                       // failures.csv (replication 0) keeps its first reliability::kMaxTimeline events
                       {"timeline_events", rel.timeline.size()},
                       {"timeline_events_dropped", rel.timeline_dropped}};
    config::Json caught = config::Json::object();
    for (const auto& [k, e] : rel.burn_in_failures) caught[k] = e.mean;
    doc["failures"]["burn_in"] = {{"duration_s", loaded.config.scheduler.burn_in.seconds()},
                                  {"burn_ins", rel.burn_ins.mean},
                                  {"node_hours", rel.burn_in_node_hours.mean},
                                  {"caught_by_cause", std::move(caught)},
                                  {"caught_installed", rel.burn_in_failures_installed.mean}};
    doc["schedule"] = {{"policy", config::enum_name(loaded.config.scheduler.policy)},
                       {"utilisation", rel.utilisation.mean},
                       {"busy_gpu_hours", rel.busy_gpu_hours.mean},
                       {"available_gpu_hours", rel.available_gpu_hours.mean},
                       {"ci95", {{"utilisation", number(rel.utilisation.ci95)}}}};
  }
  config::Json cost = cost::to_json(result.cost);
  config::Json training = config::Json::array();
  for (std::size_t i = 0; i < result.training.size(); ++i) {
    if (!result.training[i]) continue;
    config::Json t = cost::to_json(*result.training[i]);
    t["job"] = loaded.jobs[i].config.name;
    training.push_back(std::move(t));
  }
  cost["training"] = std::move(training);
  doc["cost"] = std::move(cost);
  doc["monitoring"] = cost::to_json(result.monitoring);
  doc["run_info"] = {{"wall_time_s", info.wall_time_s},
                     {"events_processed", info.events_processed},
                     {"events_scheduled", info.events_scheduled}};
  return doc;
}

namespace {

/// A table row of the run's report: the label in a column of 22, the value after it, and a
/// space between them whatever the label's length (a job's name ran into its cost).
std::string labelled_row(std::string_view label, std::string_view value) {
  return fmt::format("  {:<22}{}{}\n", label, label.size() >= 22 ? " " : "", value);
}

}  // namespace

std::string grouped(double v) {
  std::string digits = fmt::format("{:.0f}", v);
  std::string out;
  const std::size_t start = !digits.empty() && digits[0] == '-' ? 1 : 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string readable(double v) { return std::fabs(v) >= 1e4 ? grouped(v) : fmt::format("{:.4g}", v); }

namespace {

/// GPU-hours: whole and grouped from 10 up, three significant digits below, in fixed point
/// down to 0.001 (a one-step job's 0.0022 GPU-hours read "0 GPU-hours" beside its cost).
std::string gpu_hours_text(double v) {
  if (std::fabs(v) >= 10.0 || v == 0.0) return grouped(v);
  if (std::fabs(v) < 0.001) return "under 0.001";
  return fmt::format("{:.3g}", v);
}

std::string days_or_hours(double s) {
  return s >= 2 * 86400.0 ? fmt::format("{:.4g} d", s / 86400.0) : fmt::format("{:.4g} h", s / 3600.0);
}

/// The Cost and power and Monitoring blocks of the table.
std::string cost_table(const scenario::LoadedScenario& loaded, const RunResult& result) {
  const cost::CostResult& c = result.cost;
  const cost::EconomicsConfig& e = loaded.config.economics;
  std::string out;
  const auto row = [&](std::string_view label, const std::string& value) { out += labelled_row(label, value); };
  out += fmt::format("\nCost and power (PUE {:.3g}, energy {}, straight-line depreciation over {:.3g} year{}; "
                     "prices: models/fabric/pricing.yaml)\n",
                     e.pue, sim::human(e.energy_price), c.life_years, c.life_years == 1.0 ? "" : "s");
  std::map<std::string, double> by_category;
  std::vector<std::string> order;
  for (const cost::CapexLine& l : c.capex_lines) {
    if (!by_category.count(l.category)) order.push_back(l.category);
    by_category[l.category] += l.capex.value();
  }
  std::vector<std::string> parts;
  for (const std::string& k : order) parts.push_back(fmt::format("{} {}", k, sim::human(sim::Money::of(by_category[k]))));
  row("capex", c.capex ? fmt::format("{} ({})", sim::human(*c.capex), fmt::join(parts, ", "))
                       : fmt::format("not priced ({} priced: {})", parts.empty() ? "nothing" : "only",
                                     parts.empty() ? std::string("-") : fmt::format("{}", fmt::join(parts, ", "))));
  for (const std::string& u : c.unpriced) row("", "not priced: " + u);
  if (!c.node_price_basis.empty()) row("node price", c.node_price_basis);
  row("GPU busy share", fmt::format("{:.1f}% ({})", 100.0 * c.utilization, c.utilization_basis));
  row("power at that load", fmt::format("facility {} = PUE x IT {} (GPUs {}, hosts {}, {}network {})",
                                        sim::human(c.average.facility), sim::human(c.average.it),
                                        sim::human(c.average.gpus), sim::human(c.average.hosts),
                                        c.spare_nodes > 0 ? fmt::format("{} idle spare node{} {}, ", c.spare_nodes, c.spare_nodes == 1 ? "" : "s",
                                                                        sim::human(c.average.spares))
                                                          : std::string(),
                                        sim::human(c.average.network)));
  row("peak facility power", fmt::format("{} (IT {} with every GPU at its TDP)", sim::human(c.peak.facility),
                                         sim::human(c.peak.it)));
  row("rack power density", fmt::format("{} per rack ({} node{} per rack at peak; {} rack{})", sim::human(c.rack_power),
                                        c.nodes_per_rack, c.nodes_per_rack == 1 ? "" : "s", c.racks,
                                        c.racks == 1 ? "" : "s"));
  // GWh, or TWh from what {:.4g} rounds to 10,000 GWh (6.094e+04 GWh read badly).
  const double gwh = c.energy_per_year_kwh / 1e6;
  row("energy opex", fmt::format("{}/year ({})", sim::human(c.opex_per_year),
                                 gwh < 9999.5 ? fmt::format("{:.4g} GWh/year", gwh) : fmt::format("{:.4g} TWh/year", gwh / 1e3)));
  if (c.depreciation_per_year) {
    row("depreciation", fmt::format("{}/year", sim::human(*c.depreciation_per_year)));
    row("cost per GPU-hour", fmt::format("{:.3f} USD/GPU-h (depreciation + energy, over {} GPUs)", *c.usd_per_gpu_hour,
                                         grouped(static_cast<double>(c.gpus))));
    row("TCO over the life", fmt::format("{} (capex + {:.3g} year{} of energy)", sim::human(*c.tco), c.life_years,
                                         c.life_years == 1.0 ? "" : "s"));
  }
  // Once, not per job: it walks the jobs (100,000 jobs took 116 s to print).
  const std::string_view run_label = result.reliability ? scenario::long_run_label(loaded) : std::string_view();
  for (std::size_t i = 0; i < result.training.size(); ++i) {
    if (!result.training[i]) continue;
    const cost::TrainingCost& t = *result.training[i];
    const auto& job = loaded.jobs[i].config;
    row(fmt::format("training {}", job.name),
        t.cost_usd ? fmt::format("{} for {} GPU-hours over {}{} ({:.4g} USD per million tokens; {} MWh)",
                                 sim::human(sim::Money::of(*t.cost_usd)), gpu_hours_text(t.gpu_hours),
                                 days_or_hours(t.time_to_train_s),
                                 !run_label.empty() && run_label != "over the horizon" ? fmt::format(" {}", run_label)
                                                                                       : "",
                                 t.usd_per_million_tokens.value_or(std::nan("")), readable(t.energy_kwh / 1000.0))
                   : fmt::format("{} GPU-hours over {} (cost not priced; {} MWh)", gpu_hours_text(t.gpu_hours),
                                 days_or_hours(t.time_to_train_s), readable(t.energy_kwh / 1000.0)));
  }

  const cost::MonitoringLoad& m = result.monitoring;
  const cost::MonitoringConfig& mc = loaded.config.monitoring;
  const std::int64_t hosts = loaded.node.spec.hosts;
  out += fmt::format("\nMonitoring ({} metrics per GPU, {} per host{}, {} per switch, every {})\n", mc.metrics_per_gpu,
                     mc.metrics_per_node, hosts == 1 ? "" : fmt::format(" ({} hosts per node)", hosts),
                     mc.metrics_per_switch, sim::human(mc.interval));
  row("series", fmt::format("{} (GPUs {}, hosts {}, switches {})", grouped(static_cast<double>(m.series)),
                            grouped(static_cast<double>(m.series_gpus)), grouped(static_cast<double>(m.series_nodes)),
                            grouped(static_cast<double>(m.series_switches))));
  row("ingest", fmt::format("{} samples/s, {} before compression", readable(m.samples_per_s),  // 0.48/s read "0"
                            sim::human(sim::Bandwidth::of(m.ingest_bytes_per_s))));
  row("storage per day", fmt::format("{} at the raw resolution (compression {:.3g}:1)",
                                     sim::human(sim::Bytes::of(m.stored_bytes_per_day)), mc.compression));
  std::vector<std::string> levels;
  for (const cost::MonitoringLevel& l : m.levels) {
    levels.push_back(fmt::format("{} to {}", sim::human(sim::Time::from_seconds(l.interval_s)), days_or_hours(l.to_s)));
  }
  row("storage at retention", fmt::format("{} for {} ({})", sim::human(sim::Bytes::of(m.stored_bytes_at_retention)),
                                          days_or_hours(m.retention_s), fmt::join(levels, ", ")));
  return out;
}

}  // namespace

namespace {

/// Burn-in, utilisation and the per-job queue figures, with units.
std::string schedule_table(const scenario::LoadedScenario& loaded, const reliability::LongRunResult& rel) {
  std::string out;
  const double burn_in = loaded.config.scheduler.burn_in.seconds();
  if (burn_in > 0.0) {
    std::vector<std::string> caught;
    for (const auto& [k, e] : rel.burn_in_failures) caught.push_back(fmt::format("{} {:.1f}", k, e.mean));
    out += fmt::format("\nBurn-in of {:.4g} h per node: {:.1f} failures caught ({}), {:.1f} of them by the installed "
                       "fleet before the start; {:.1f} burn-ins of repaired or new nodes took {:.0f} node-hours\n",
                       burn_in / 3600.0, std::accumulate(rel.burn_in_failures.begin(), rel.burn_in_failures.end(), 0.0,
                                                         [](double a, const auto& kv) { return a + kv.second.mean; }),
                       caught.empty() ? std::string("none") : fmt::format("{}", fmt::join(caught, ", ")),
                       rel.burn_in_failures_installed.mean, rel.burn_ins.mean, rel.burn_in_node_hours.mean);
  }
  const auto hours = [](const reliability::Estimate& e) {
    return std::isfinite(e.mean) ? fmt::format("{:.2f}", e.mean / 3600.0) : std::string("-");
  };
  out += fmt::format("\nSchedule ({} policy): utilisation {} of the cluster's GPU-hours ({} busy of {})\n",
                     config::enum_name(loaded.config.scheduler.policy),
                     plus_minus(100.0 * rel.utilisation.mean, 100.0 * rel.utilisation.ci95, 2, 0.0, 100.0, "%"),
                     gpu_hours_text(rel.busy_gpu_hours.mean), gpu_hours_text(rel.available_gpu_hours.mean));
  // The job column as wide as the longest name (a long one pushed its row out of line).
  std::size_t width = 24;
  for (const reliability::JobSummary& s : rel.jobs) width = std::max(width, s.name.size() + 2);
  out += fmt::format("  {:<{}}{:>7}{:>12}{:>12}{:>12}{:>12}{:>9}\n", "job", width, "GPUs", "submit (h)", "wait (h)",
                     "start (h)", "end (h)", "ETTR");
  for (std::size_t i = 0; i < rel.jobs.size() && i < loaded.jobs.size(); ++i) {
    const reliability::JobSummary& s = rel.jobs[i];
    out += fmt::format("  {:<{}}{:>7}{:>12.2f}{:>12}{:>12}{:>12}{:>9}\n", s.name, width, loaded.jobs[i].config.gpus,
                       loaded.jobs[i].config.submit.seconds() / 3600.0, hours(s.queue_wait_s), hours(s.start_s),
                       hours(s.end_s), std::isfinite(s.ettr.mean) ? fmt::format("{:.3f}", s.ettr.mean) : std::string("-"));
  }
  out += "  (means over replications; end: where the job finished within the horizon; ETTR from the job's start)\n";
  return out;
}

}  // namespace

std::string result_table(const scenario::LoadedScenario& loaded, const RunResult& result) {
  const cluster::Inventory& inv = result.inventory;
  const RunInfo& info = result.info;
  const auto per_gpu = [&](auto total) { return sim::human(total / static_cast<double>(inv.gpus)); };
  std::string out;
  const auto row = [&](std::string_view label, const std::string& value) { out += labelled_row(label, value); };
  const std::string& name = loaded.config.name.empty() ? loaded.file : loaded.config.name;
  out += fmt::format("clustersim {} | {} | seed {}\n", kVersion, name, loaded.config.simulation.seed);
  if (!loaded.config.description.empty()) {
    // Inherited, it may describe the base's cluster ("16 DGX H100 nodes" under nodes: 4).
    out += loaded.description_from.empty()
               ? fmt::format("{}\n", loaded.config.description)
               : fmt::format("{} (the description of {}, which it extends)\n", loaded.config.description,
                             loaded.description_from);
  }
  // The description is the file's text: say what the command line changed since.
  if (!loaded.sets.empty()) out += fmt::format("with --set {}\n", fmt::join(loaded.sets, ", --set "));
  out += "\nCluster inventory\n";
  row("node type", fmt::format("{} ({} x {})", inv.node_type, inv.gpus_per_node, inv.gpu_type));
  row("nodes", fmt::format("{}", inv.nodes));
  row("GPUs", fmt::format("{}", inv.gpus));
  row("scale-out NICs", inv.nics == 0 ? std::string("none")
                                      : fmt::format("{} x {:.4g}Gbps", inv.nics, loaded.node.spec.nic_bandwidth.value() * 8 / 1e9));
  row("scale-out bandwidth", sim::human(inv.scaleout_bandwidth_total) + " (sum of NIC line rates, one direction)");
  row("HBM", fmt::format("{} ({} per GPU)", sim::human(inv.hbm_total), per_gpu(inv.hbm_total)));
  row("HBM bandwidth", fmt::format("{} ({} per GPU)", sim::human(inv.hbm_bandwidth_total), per_gpu(inv.hbm_bandwidth_total)));
  for (const char* dtype : {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"}) {
    const auto it = inv.peak_flops_total.find(dtype);
    if (it == inv.peak_flops_total.end()) continue;
    row(fmt::format("peak {} (dense)", dtype), fmt::format("{} ({} per GPU)", sim::human(it->second), per_gpu(it->second)));
  }
  // The nodes' total, one node's beside it (it read as one node's figure).
  row("node power, full load", fmt::format("{} for the {} node{} (GPUs {}, hosts {}), {} each; the network below",
                                           sim::human(inv.it_power), inv.nodes, inv.nodes == 1 ? "" : "s",
                                           sim::human(inv.gpu_power), sim::human(inv.host_power),
                                           sim::human(inv.it_power / static_cast<double>(std::max<std::int64_t>(1, inv.nodes)))));
  row("calibration", calibration_summary(loaded));
  if (result.fabric) {
    const fabric::FabricMetrics& m = *result.fabric;
    out += "\nFabric (clustersim topology for details)\n";
    row("topology", m.sizing);
    row("switches", fmt::format("{}", m.switches));
    row("bisection bandwidth", sim::human(m.bisection_bandwidth) + " one way");
    row("capex (network)", m.capex ? sim::human(*m.capex) : std::string("not priced"));
  }
  const bool queued = result.reliability && scenario::jobs_queue(loaded);
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    const scenario::ResolvedJob& job = loaded.jobs[i];
    const workload::StepResult& st = result.jobs[i];
    const auto& p = job.config.parallelism;
    if (job.copy > 0) continue;  // the copies of a `count` job: in the schedule below
    // In a queue the scheduler places the job (the schedule below); its step is timed on
    // these GPUs, which another job may hold when it runs.
    const std::string range = job.config.gpus == 1 ? fmt::format("GPU {}", job.first_gpu)
                                                    : fmt::format("GPUs {}-{}", job.first_gpu, job.first_gpu + job.config.gpus - 1);
    out += fmt::format("\nJob {}: {} on {} GPU{} ({}{}{})\n", job.config.name, job.model_name, job.config.gpus,
                       job.config.gpus == 1 ? "" : "s", queued ? "step timed on " : "", range,
                       queued ? "; placed by the scheduler" : "");
    if (const std::int64_t n = loaded.config.workload.jobs[job.entry].count; n > 1) {
      row("copies", fmt::format("{} ({}-0 .. {}-{}), each as this one; the schedule below has each",
                                n, loaded.config.workload.jobs[job.entry].name, loaded.config.workload.jobs[job.entry].name,
                                n - 1));
    }
    // Tensor-parallel groups across two nodes are allowed, and costly: say why its TP time is
    // (a tp that does not divide the node's GPUs, a job that starts mid-node, a rank order with
    // TP not fastest). Counted from the ranks' GPUs (it was judged by gpus % tp alone: silent
    // for a job starting at GPU 4, said for tp 16 of a 72-GPU node that holds the job whole).
    // So is a tp above the key/value heads (each rank holds a replica of its head, as vLLM
    // does; Megatron-Core refuses it): say where the weights and the K/V GEMMs come from.
    const std::int64_t gpn = loaded.node.spec.gpus;
    const std::int64_t kv = workload::kv_head_count(job.model);
    std::int64_t tp_across = 0;  // TP groups with ranks on two nodes or more
    if (p.tp > 1 && gpn > 1) {
      std::int64_t stride = 1;  // of the TP coordinate (workload/job.hpp: the first of `order` varies fastest)
      for (const workload::Axis a : p.order) {
        if (a == workload::Axis::tp) break;
        stride *= a == workload::Axis::cp ? p.cp : a == workload::Axis::pp ? p.pp : p.dp;
      }
      for (std::int64_t base = 0; base < job.config.gpus; ++base) {
        if ((base / stride) % p.tp != 0) continue;  // a group's first rank: its TP coordinate 0
        const std::int64_t node = (job.first_gpu + base) / gpn;
        bool across = false;
        for (std::int64_t k = 1; k < p.tp && !across; ++k) across = (job.first_gpu + base + k * stride) / gpn != node;
        tp_across += across ? 1 : 0;
      }
    }
    const std::int64_t tp_groups = job.config.gpus / p.tp;
    row("parallelism", fmt::format("tp {} cp {} pp {} dp {} ep {}, {} virtual stage{}, zero {}{}{}{}", p.tp, p.cp, p.pp,
                                   p.dp, p.ep, p.virtual_stages, p.virtual_stages == 1 ? "" : "s", p.zero, p.sequence_parallel ? ", sequence parallel" : "",
                                   tp_across > 0
                                       ? fmt::format(" ({} of {} tensor-parallel groups span{} two nodes, their "
                                                     "traffic over the fabric: {})",
                                                     tp_across, tp_groups, tp_across == 1 ? "s" : "",
                                                     gpn % p.tp != 0   ? fmt::format("tp {} does not divide the node's {} "
                                                                                     "GPUs", p.tp, gpn)
                                                     : job.first_gpu % gpn != 0 ? fmt::format("the job starts mid-node, at "
                                                                                              "GPU {}", job.first_gpu)
                                                                                : std::string("the rank order puts other "
                                                                                              "axes inside TP"))
                                       : std::string(),
                                   p.tp > kv ? fmt::format(" (the model's {} key/value head{} on {} TP ranks: each "
                                                           "held whole by {} ranks, its weights and K/V work replicated)",
                                                           kv, kv == 1 ? "" : "s", p.tp, p.tp / kv)
                                             : std::string()));
    row("batch", fmt::format("{} sequences of {} tokens; {} micro-batches of {} per replica", job.config.global_batch,
                             workload::sequence_length(job.config, job.model), st.micro_batches, job.config.micro_batch));
    row("step time", fmt::format("{:.4f} s ({} network model)", st.step_time_s,
                                 config::enum_name(loaded.config.network.model)));
    row("throughput", fmt::format("{} tokens/s", sim::human(sim::Count::of(st.tokens_per_s))));
    row("per GPU", fmt::format("{:.1f} TFLOP/s (model FLOPs)", st.tflops_per_gpu));
    row("MFU", fmt::format("{:.1f}% (HFU {:.1f}%, {}){}", 100 * st.mfu, 100 * st.hfu, mfu_peak_text(job, loaded),
                           st.mfu >= 1.0005 ? "; above 100% because model FLOPs count causal attention in full, as "
                                          "PaLM's MFU does, while the attention kernels skip its masked half"
                           : st.hfu < st.mfu ? "; HFU below MFU: the causal attention kernels compute half of the "
                                               "scores, which model FLOPs count in full (PaLM)"
                                             : ""));
    const auto& m = st.memory;
    const auto bytes = [](double b) { return sim::human(sim::Bytes::of(b)); };
    row("memory per GPU", fmt::format("{} of {} (stage {}: weights {}, gradients {}, optimizer {}, activations {})",
                                      bytes(m.total), sim::human(loaded.node.gpu.hbm_capacity), m.stage, bytes(m.weights),
                                      bytes(m.gradients), bytes(m.optimizer), bytes(m.activations)));
    if (job.config.train_tokens) {
      const double days = workload::ideal_time_to_train_s(job.config, st) / 86400.0;
      const double tokens = job.config.train_tokens->value();
      row("time to train", fmt::format("{} for {} token{}, without failures", duration_text(days * 86400.0),
                                       sim::human(*job.config.train_tokens), tokens == 1.0 ? "" : "s"));
    }
    const workload::Breakdown& b = st.breakdown;
    out += fmt::format("  step breakdown (stage {}, the last to finish)\n", st.critical_stage);
    const auto part = [&](std::string_view label, double v) {
      out += fmt::format("    {:<20}{:>10.4f} s {:>6.1f}%\n", label, v, 100.0 * v / st.step_time_s);
    };
    part("compute", b.compute);
    part("compute slowed", b.contention);
    part("TP communication", b.tp);
    part("CP communication", b.cp);
    part("EP communication", b.ep);
    part("PP communication", b.pp);
    part("DP communication", b.dp);
    part("pipeline bubble", b.bubble);
    part("optimizer", b.optimizer);
    if (!st.comm.empty()) {
      // Each distinct call as the step timed it: every group of its kind at once, so a busy
      // link shared by groups shows here (the busiest over the call, at its utilisation).
      out += "  collectives (each distinct call, every group of its kind at once; busbw as nccl-tests; the link it loads most)\n";
      std::vector<std::array<std::string, 7>> cells;
      for (const workload::CommTiming& c : st.comm) {
        const double us = c.time_s * 1e6;
        const double busbw = busbw_GBps(c);
        // Pipeline sends are timed per stage boundary; the row is the first boundary's.
        cells.push_back({fmt::format("{} {} {}{}", group_name(c.group), config::enum_name(c.op),
                                     config::enum_name(c.algorithm), c.group == workload::Group::pp ? " (stages 0-1)" : ""),
                         sim::human(sim::Bytes::of(c.bytes)),
                         fmt::format("{} group{} of {}", c.groups, c.groups == 1 ? "" : "s", c.group_size),
                         us < 1000.0 ? fmt::format("{:.1f} us", us) : fmt::format("{:.3f} ms", us / 1000.0),
                         busbw > 0.0 ? fmt::format("{:.1f} GB/s", busbw) : std::string("-"),
                         // The load right-aligned, the link's name after it: the names start in line.
                         c.busiest_link.empty() ? std::string("-") : fmt::format("{:.1f}%", 100.0 * c.busiest_utilisation),
                         c.busiest_link});
      }
      std::array<std::size_t, 7> width{};
      for (const auto& cell : cells) {
        for (std::size_t k = 0; k < cell.size(); ++k) width[k] = std::max(width[k], cell[k].size());
      }
      for (const auto& cell : cells) {
        const std::string line =
            fmt::format("    {:<{}}  {:>{}}  {:<{}}  {:>{}}  busbw {:>{}}  {:>{}} {}", cell[0], width[0], cell[1], width[1],
                        cell[2], width[2], cell[3], width[3], cell[4], width[4], cell[5], width[5], cell[6]);
        out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
      }
    }
    const auto busy = [](const workload::Breakdown& x) { return x.total() - x.bubble - x.pp; };
    if (st.busiest_stage != st.critical_stage && !st.stage_breakdowns.empty() &&
        busy(st.stage_breakdowns[static_cast<std::size_t>(st.busiest_stage)]) - busy(b) > 0.05 * st.step_time_s) {
      // The last stage to finish mostly waits (5% of the step or more than the busiest):
      // say where the work is.
      const workload::Breakdown& w = st.stage_breakdowns[static_cast<std::size_t>(st.busiest_stage)];
      std::vector<std::string> parts;
      for (const auto& [label, v] : {std::pair<const char*, double>{"compute", w.compute},
                                     {"compute slowed", w.contention}, {"TP", w.tp}, {"CP", w.cp},
                                     {"EP", w.ep}, {"PP", w.pp}, {"DP", w.dp}, {"bubble", w.bubble},
                                     {"optimizer", w.optimizer}}) {
        if (v > 0.0005 * st.step_time_s) parts.push_back(fmt::format("{} {:.4f} s", label, v));
      }
      // The last stage waits for the work of busier stages (layers of unequal cost, such as
      // MoE beside dense ones): the gap in busy time is that work. Its bubble beyond the
      // busiest one's holds more: the drain the busiest stage's breakdown, ending with its own
      // work, does not count ((p - 1) backward chunks on a balanced pipeline), so it is said as
      // an upper bound; called all imbalance, it doubled the figure on a pipeline of 4.
      const double gap = busy(w) - busy(b);
      const double waits = (b.bubble + b.pp) - (w.bubble + w.pp);
      out += fmt::format("  busiest stage {} (least waiting): {}\n", st.busiest_stage, fmt::join(parts, ", "));
      out += fmt::format("  unbalanced stages: stage {} works {:.4f} s ({:.1f}% of the step) more than stage {}, which "
                         "waits for it ({:.4f} s more bubble and PP time than stage {}, fill and drain included)\n",
                         st.busiest_stage, gap, 100.0 * gap / st.step_time_s, st.critical_stage, waits, st.busiest_stage);
    }
    if (result.reliability) {
      const reliability::JobSummary& rs = result.reliability->jobs[i];
      const auto pm = [](const reliability::Estimate& e, double scale, int digits, double hi = kInf,
                         std::string_view unit = "", double lo = 0.0) {
        return plus_minus(e.mean * scale, e.ci95 * scale, digits, lo * scale, hi * scale, unit);
      };
      const double elapsed = result.reliability->elapsed_s;
      // One replication has no interval to give (its figures print without one).
      const std::int64_t reps = loaded.config.simulation.replications;
      out += fmt::format("  {} ({} replication{}, {}{})\n", scenario::long_run_label(loaded), reps,
                         reps == 1 ? "" : "s", duration_text(elapsed), reps == 1 ? "" : "; mean +- 95% interval");
      if (std::isfinite(rs.queue_wait_s.mean)) {
        row("queue", fmt::format("waited {} h, started at {} h{}", pm(rs.queue_wait_s, 1.0 / 3600.0, 2),
                                 pm(rs.start_s, 1.0 / 3600.0, 2),
                                 rs.started_share < 1.0 ? fmt::format(" (started in {:.0f}% of replications)",
                                                                      100.0 * rs.started_share)
                                                        : std::string()));
      } else {
        row("queue", "still queued at the end of every replication");
      }
      std::vector<std::string> causes;
      for (const auto& [k, e] : rs.by_cause) causes.push_back(fmt::format("{} {:.1f}", k, e.mean));
      row("interruptions", causes.empty() ? pm(rs.interruptions, 1.0, 1)
                                          : fmt::format("{} ({})", pm(rs.interruptions, 1.0, 1), fmt::join(causes, ", ")));
      if (std::isfinite(rs.ettr.mean)) {
        row("ETTR", fmt::format("{} of the time trains", pm(rs.ettr, 100.0, 2, 1.0, "%")));
        row("goodput", fmt::format("{} tokens/s", sim::human(sim::Count::of(rs.goodput_tokens_per_s.mean))));
      } else {
        row("ETTR", "none: the job never started");
      }
      if (job.config.train_tokens) {
        // In days from a day up, else hours, minutes or seconds (0.66 h read "0.0 +- 0.0 days").
        const double t = rs.time_to_train_s.mean;
        const auto [t_scale, t_unit] = t >= 86400.0 ? std::pair{1.0 / 86400.0, "days"}
                                       : t >= 3600.0 ? std::pair{1.0 / 3600.0, "hours"}
                                       : t >= 60.0   ? std::pair{1.0 / 60.0, "min"}
                                                     : std::pair{1.0, "s"};
        row("time to train", std::isfinite(rs.time_to_train_s.mean)
                                 ? fmt::format("{} {}{}",
                                               pm(rs.time_to_train_s, t_scale, 1, kInf, "",
                                                  st.tokens_per_s > 0 ? workload::ideal_time_to_train_s(job.config, st)
                                                                      : 0.0),
                                               t_unit,
                                               rs.finished_share < 1.0 ? " (projected where the horizon ended first)" : "")
                                 : rs.started_share <= 0.0
                                     ? std::string("not projectable: the job never started (queued to the end of "
                                                   "every replication)")
                                 : rs.projection_past_clock
                                     ? std::string("not projectable: at the pace within the horizon it would take "
                                                   "more than 292 years")
                                     : std::string("not projectable: by the horizon, under a millionth of the "
                                                   "training was done and saved, or expected to be saved, by a "
                                                   "checkpoint"));
        // The ETTR is a mean of ratios, the time to train a mean of times: where replications
        // differ widely the two part (a mean of ratios is not a ratio of means). Said where
        // they part by more than a twentieth, so that neither reads as a slip of the other.
        const double ideal = st.tokens_per_s > 0 ? workload::ideal_time_to_train_s(job.config, st) : 0.0;
        if (std::isfinite(rs.time_to_train_s.mean) && rs.time_to_train_s.mean > 0.0 && std::isfinite(rs.ettr.mean) &&
            rs.ettr.mean > 0.0 && ideal > 0.0) {
          const double implied = ideal / rs.time_to_train_s.mean;
          if (std::fabs(implied - rs.ettr.mean) > 0.05 * rs.ettr.mean) {
            row("", fmt::format("(the failure-free {} is {:.1f}% of that mean, the mean ETTR {:.1f}%: the replications "
                                "differ widely, and a mean of ratios is not a ratio of means)",
                                duration_text(ideal), 100.0 * implied, 100.0 * rs.ettr.mean));
          }
        }
      }
      row("lost GPU-hours", fmt::format("{} (lost work and downtime; {} more blocked writing checkpoints)",
                                        gpu_hours_text(reliability::total_lost_gpu_hours(rs)),
                                        gpu_hours_text(rs.checkpoint_gpu_hours.mean)));
      // Minutes and seconds with one decimal, whole and grouped past a million ("1,440,000
      // min", not "1.44e+06 min"), in exponent form past 1e12 (a 1e24-byte checkpoint blocks
      // for 5e11 s: more digits said nothing more).
      // Under 0.05, three significant digits: a 1 ns interval read "every 0.0 min".
      const auto decimal = [](double v) {
        return v != 0.0 && std::fabs(v) < 0.05 ? fmt::format("{:.3g}", v)
               : std::fabs(v) < 1e6            ? fmt::format("{:.1f}", v)
               : std::fabs(v) < 1e12           ? grouped(v)
                                               : fmt::format("{:.4g}", v);
      };
      // Saved between steps: the interval is a whole number of them.
      const bool stepped = st.step_time_s > 0.0 && std::isfinite(rs.checkpoint_interval_s);
      const long long steps_per_interval = stepped ? std::llround(rs.checkpoint_interval_s / st.step_time_s) : 0;
      const std::string interval_steps = fmt::format("{} step{}", grouped(static_cast<double>(steps_per_interval)), steps_per_interval == 1 ? "" : "s");
      row("checkpoints", std::isfinite(rs.checkpoint_interval_s)
                             ? fmt::format("every {} min{}{} ({}{}), {} s blocking each{}; job MTBF {}",
                                           decimal(rs.checkpoint_interval_s / 60.0),
                                           // From two hours, in hours or days too: "144000.0 min" said 100 days.
                                           rs.checkpoint_interval_s >= 7200.0 && rs.checkpoint_interval_s < 9e9  // the clock's range
                                               ? " (" + sim::human(sim::Time::from_seconds(rs.checkpoint_interval_s)) + ")"
                                               : std::string(),
                                           stepped ? " = " + interval_steps : std::string(),
                                           // An asynchronous checkpoint starts when the last one is written.
                                           std::isfinite(rs.checkpoint_interval_asked_s)
                                               ? fmt::format("{} {} min, raised to the background write's time: an "
                                                             "asynchronous checkpoint starts when the last one is written",
                                                             loaded.config.checkpoint.interval.automatic ? "Young/Daly's"
                                                                                                         : "fixed at",
                                                             decimal(rs.checkpoint_interval_asked_s / 60.0))
                                           : loaded.config.checkpoint.interval.automatic ? std::string("Young/Daly")
                                                                                         : std::string("fixed"),
                                           // No checkpoint completes: every failure loses all the work.
                                           rs.checkpoint_interval_s >= result.reliability->elapsed_s
                                               ? "; longer than the run: no checkpoint completes"
                                               : "",
                                           decimal(std::isfinite(rs.checkpoint_blocking_s.mean)
                                                       ? rs.checkpoint_blocking_s.mean
                                                       : rs.checkpoint_write_s),
                                           rs.storage_slowdown.mean > 1.0005
                                               ? fmt::format(" (writes {:.2f} x slower than alone: shared storage)",
                                                             rs.storage_slowdown.mean)
                                               : std::string(),
                                           std::isfinite(rs.mtbf_s) ? fmt::format("{:.4g} h", rs.mtbf_s / 3600.0)
                                                                    : std::string("none (no failure stops it)"))
                             // Announced stops write one each (checkpoint_and_stop()), and the trained
                             // model is saved once at the end (final_write_left()) where it finishes.
                             : fmt::format("none on a schedule: no unplanned failure stops this job{}{}",
                                           rs.interruptions.mean > 0.0 ? "; each announced stop writes one" : "",
                                           rs.finished_share > 0.0
                                               ? fmt::format("; one write of {} s saves it at the end",
                                                             decimal(std::isfinite(rs.checkpoint_blocking_s.mean)
                                                                         ? rs.checkpoint_blocking_s.mean
                                                                         : rs.checkpoint_write_s))
                                               : std::string()));
    }
  }
  out += cost_table(loaded, result);
  if (result.reliability && std::isfinite(result.reliability->top1_failure_share.mean)) {
    out += fmt::format("\nGPU failures: the 1% of GPUs that failed most had {:.1f}% of them (they carry {:.1f}% of the "
                       "fleet's failure rate; with few failures per GPU most GPUs have none); {:.1f} nodes retired\n",
                       100.0 * result.reliability->top1_failure_share.mean,
                       100.0 * result.reliability->top1_rate_share.mean, result.reliability->retired_nodes.mean);
  }
  if (result.reliability) out += schedule_table(loaded, *result.reliability);
  out += fmt::format("\nwall time {:.3f} s, {} events\n", info.wall_time_s, info.events_processed);
  return out;
}

std::int64_t nodes_per_rack(const scenario::LoadedScenario& loaded) {
  return cost::price_node(loaded.node.name, loaded.node.gpu_name, loaded.node.spec.gpus, loaded.pricing,
                          loaded.config.economics)
      .nodes_per_rack;
}

std::string topology_table(const scenario::LoadedScenario& loaded, const fabric::FabricMetrics& m) {
  std::string out;
  const auto row = [&](std::string_view label, const std::string& value) { out += labelled_row(label, value); };
  out += fmt::format("Fabric of {}: {}\n\n", loaded.config.name.empty() ? loaded.file : loaded.config.name, m.sizing);
  row("endpoints", fmt::format("{} NICs ({} node{} x {}; {} GPUs)", m.endpoints, m.nodes, m.nodes == 1 ? "" : "s",
                               m.nodes ? m.endpoints / m.nodes : 0, m.gpus));
  std::vector<std::string> tiers;
  for (const auto& t : m.switches_by_tier) tiers.push_back(fmt::format("{} {}", t.switches, t.tier));
  row("switches", fmt::format("{} ({})", m.switches, fmt::join(tiers, ", ")));
  // Cables between boxes, then the links inside the nodes (NVLink, GPU to NIC).
  std::vector<std::string> cables, inside;
  for (const auto& [kind, n] : m.links) {
    const bool internal = kind == fabric::name(fabric::LinkKind::nvlink) || kind == fabric::name(fabric::LinkKind::host);
    (internal ? inside : cables).push_back(fmt::format("{} {}", n, kind));
  }
  row("links", fmt::format("{} cables{}", fmt::join(cables, ", "),
                           inside.empty() ? std::string() : fmt::format("; inside the nodes: {}", fmt::join(inside, ", "))));
  const std::int64_t per_rack = nodes_per_rack(loaded);
  const bool direct = loaded.fabric && (loaded.fabric->topology == fabric::Topology::torus ||
                                        loaded.fabric->topology == fabric::Topology::dragonfly);
  row("racks", fmt::format("{} of {} node{}, the fabric's (economics.nodes_per_rack, else the priced server's){}",
                           (m.nodes + per_rack - 1) / per_rack, per_rack, per_rack == 1 ? "" : "s",
                           direct ? ": router cables between racks are optical, inside a rack copper" : ""));
  row("optics", fmt::format("{} transceivers", m.optics));
  // Valiant and UGAL routes are longer than the minimal ones these figures count.
  const bool nonminimal = loaded.fabric && loaded.fabric->topology == fabric::Topology::dragonfly &&
                          loaded.config.fabric && loaded.config.fabric->routing != fabric::Routing::minimal;
  const std::string_view routing = nonminimal ? config::enum_name(loaded.config.fabric->routing) : "";
  row("diameter", fmt::format("{} switch-to-switch hop{}{}", m.diameter_hops, m.diameter_hops == 1 ? "" : "s",
                              nonminimal ? fmt::format(" on minimal routes ({} routing takes longer ones)", routing)
                                         : std::string()));
  row("average hops", fmt::format("{:.3f} (uniform traffic between endpoints{})", m.average_hops,
                                  nonminimal ? fmt::format(", minimal routes; {} routing takes longer ones", routing)
                                             : std::string()));
  // In bits too, as switch ports are sold: Tbps, or Pbps from what {:.4g} rounds to 10,000 Tbps
  // (8.389e+05Tbps read badly).
  const double tbps = m.bisection_bandwidth.value() * 8 / 1e12;
  row("bisection bandwidth", fmt::format("{} one way ({})", sim::human(m.bisection_bandwidth),
                                         tbps < 9999.5 ? fmt::format("{:.4g}Tbps", tbps) : fmt::format("{:.4g}Pbps", tbps / 1e3)));
  out += "\nCost and power of the network (models/fabric/pricing.yaml)\n";
  out += fmt::format("  {:<14}{:<20}{:>10}{:>14}{:>12}\n", "part", "model", "count", "capex", "power");
  for (const auto& c : m.costs) {
    out += fmt::format("  {:<14}{:<20}{:>10}{:>14}{:>12}\n", c.part, c.model, c.count, sim::human(c.capex),
                       sim::human(c.power));
  }
  for (const auto& u : m.unpriced) out += fmt::format("  not priced: {}\n", u);
  out += fmt::format("  {:<44}{:>14}{:>12}\n", "total", m.capex ? sim::human(*m.capex) : std::string("-"),
                     m.power ? sim::human(*m.power) : std::string("-"));
  return out;
}

std::string folder(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string csv_quote(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string result_csv(const scenario::LoadedScenario& loaded, const RunResult& result) {
  const cluster::Inventory& inv = result.inventory;
  std::string out = "section,metric,value,unit\n";
  std::string_view section = "inventory";
  const auto row = [&](std::string_view metric, auto value, std::string_view unit) {
    // Metric names carry component names (interruptions_<cause>), and values the catalog's
    // names (node_type), either of which may hold a comma.
    if constexpr (std::is_convertible_v<decltype(value), std::string_view>) {
      out += fmt::format("{},{},{},{}\n", section, csv_quote(metric), csv_quote(value), unit);
    } else {
      out += fmt::format("{},{},{},{}\n", section, csv_quote(metric), value, unit);
    }
  };
  row("node_type", inv.node_type, "");
  row("gpu_type", inv.gpu_type, "");
  row("nodes", inv.nodes, "count");
  row("gpus_per_node", inv.gpus_per_node, "count");
  row("gpus", inv.gpus, "count");
  row("nics", inv.nics, "count");
  row("hbm_total", inv.hbm_total.value(), "B");
  row("hbm_bandwidth_total", inv.hbm_bandwidth_total.value(), "B/s");
  row("scaleout_bandwidth_total", inv.scaleout_bandwidth_total.value(), "B/s");
  for (const auto& [dtype, rate] : inv.peak_flops_total) row("peak_flops_total_" + dtype, rate.value(), "FLOP/s");
  row("gpu_power", inv.gpu_power.value(), "W");
  row("host_power", inv.host_power.value(), "W");
  row("node_power", inv.it_power.value(), "W");  // GPUs and hosts: the table's "node power, full load"
  row("it_power", inv.it_power.value(), "W");    // the same, kept for scripts; with the network: cost,peak_it_power
  section = "calibration";
  row("profile", calibration_name(loaded), "");
  row("scaleup_efficiency", loaded.config.network.scaleup_efficiency, "fraction");
  row("scaleout_efficiency", loaded.config.network.scaleout_efficiency, "fraction");
  row("call_overhead", loaded.config.network.call_overhead.seconds(), "s");
  // The calibration keys the scenario writes itself (they win over the calibration).
  if (!loaded.calibration_overrides.empty()) row("overrides", fmt::format("{}", fmt::join(loaded.calibration_overrides, " ")), "");
  if (result.fabric) {
    const fabric::FabricMetrics& m = *result.fabric;
    section = "fabric";
    row("endpoints", m.endpoints, "count");
    row("switches", m.switches, "count");
    row("optics", m.optics, "count");
    row("diameter_hops", m.diameter_hops, "hops");
    row("average_hops", m.average_hops, "hops");
    row("bisection_bandwidth", m.bisection_bandwidth.value(), "B/s");
    if (m.capex) row("capex", m.capex->value(), "USD");
    if (m.power) row("power", m.power->value(), "W");
  }
  {
    const cost::CostResult& c = result.cost;
    section = "cost";
    if (c.capex) row("capex", c.capex->value(), "USD");
    row("energy_per_year", c.energy_per_year_kwh, "kWh/year");
    row("opex_per_year", c.opex_per_year.value(), "USD/year");
    if (c.depreciation_per_year) row("depreciation_per_year", c.depreciation_per_year->value(), "USD/year");
    if (c.usd_per_gpu_hour) row("usd_per_gpu_hour", *c.usd_per_gpu_hour, "USD/GPU-h");
    if (c.tco) row("tco", c.tco->value(), "USD");
    row("utilization", c.utilization, "fraction");
    row("gpu_busy_share", c.utilization, "fraction");  // what `utilization` holds, by its name
    row("average_facility_power", c.average.facility.value(), "W");
    row("peak_facility_power", c.peak.facility.value(), "W");
    row("peak_it_power", c.peak.it.value(), "W");  // nodes, spares and network at full load: the table's "IT"
    row("rack_power", c.rack_power.value(), "W");
    row("racks", c.racks, "count");
    const cost::MonitoringLoad& m = result.monitoring;
    section = "monitoring";
    row("series", m.series, "count");
    row("samples_per_s", m.samples_per_s, "samples/s");
    row("ingest_bytes_per_s", m.ingest_bytes_per_s, "B/s");
    row("stored_bytes_per_day", m.stored_bytes_per_day, "B/day");
    row("stored_bytes_at_retention", m.stored_bytes_at_retention, "B");
  }
  // Every job the same rows, in the same order (a sweep's runs or a shared cluster's jobs
  // pivot on them): a figure not defined is an empty value, and the causes are those of any
  // job, 0 where a job saw none (a row was left out where a value was not finite, a cause's
  // where it did not occur).
  const auto maybe = [&](std::string_view metric, double v, std::string_view unit) {
    if (std::isfinite(v)) {
      row(metric, v, unit);
    } else {
      row(metric, std::string(), unit);
    }
  };
  std::set<std::string> causes, lost_causes;
  if (loaded.config.failures) {  // every configured component, whether this run saw it or not
    for (const auto& [name, component] : loaded.config.failures->components) {
      causes.insert(name);
      lost_causes.insert(name);
    }
  }
  if (result.reliability) {
    for (const reliability::JobSummary& rs : result.reliability->jobs) {
      for (const auto& [cause, e] : rs.by_cause) causes.insert(cause);
      for (const auto& [cause, e] : rs.lost_gpu_hours) lost_causes.insert(cause);
    }
  }
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    const workload::StepResult& st = result.jobs[i];
    const std::string sec = fmt::format("jobs[{}]", i);
    section = sec;
    row("name", loaded.jobs[i].config.name, "");
    row("step_time_s", st.step_time_s, "s");
    row("tokens_per_s", st.tokens_per_s, "tokens/s");
    row("tflops_per_gpu", st.tflops_per_gpu, "TFLOP/s");
    row("mfu", st.mfu, "fraction");
    row("hfu", st.hfu, "fraction");
    row("memory_per_gpu_bytes", st.memory.total, "B");
    // As results.json's job: the memory's split and the step's shape (the per-stage rows and
    // the collectives, lists, are the JSON's alone).
    row("memory_stage", st.memory.stage, "index");  // a pipeline stage, 0 first
    row("memory_weights_bytes", st.memory.weights, "B");
    row("memory_gradients_bytes", st.memory.gradients, "B");
    row("memory_optimizer_bytes", st.memory.optimizer, "B");
    row("memory_activations_bytes", st.memory.activations, "B");
    row("micro_batches", st.micro_batches, "count");
    row("tokens_per_step", st.tokens_per_step, "tokens");
    row("model_flops_per_step", st.model_flops_per_step, "FLOP");
    row("hardware_flops_per_step", st.hardware_flops_per_step, "FLOP");
    row("critical_stage", st.critical_stage, "index");
    row("busiest_stage", st.busiest_stage, "index");
    const workload::Breakdown& b = st.breakdown;
    for (const auto& [k, v] : {std::pair{"compute_s", b.compute}, {"tp_s", b.tp}, {"cp_s", b.cp}, {"ep_s", b.ep},
                               {"pp_s", b.pp}, {"dp_s", b.dp}, {"bubble_s", b.bubble}, {"optimizer_s", b.optimizer},
                               {"contention_s", b.contention}}) {
      row(std::string("breakdown_") + k, v, "s");
    }
    if (result.reliability) {
      const reliability::JobSummary& rs = result.reliability->jobs[i];
      row("interruptions", rs.interruptions.mean, "count");
      for (const std::string& cause : causes) {
        const auto e = rs.by_cause.find(cause);
        row("interruptions_" + cause, e == rs.by_cause.end() ? 0.0 : e->second.mean, "count");
      }
      maybe("ettr", rs.ettr.mean, "fraction");
      maybe("goodput", rs.goodput_tokens_per_s.mean, "tokens/s");
      maybe("time_to_train_s", rs.time_to_train_s.mean, "s");
      row("lost_gpu_hours", reliability::total_lost_gpu_hours(rs), "GPU-h");
      maybe("checkpoint_interval_s", rs.checkpoint_interval_s, "s");
      maybe("checkpoint_interval_asked_s", rs.checkpoint_interval_asked_s, "s");
      maybe("queue_wait_s", rs.queue_wait_s.mean, "s");
      maybe("start_s", rs.start_s.mean, "s");
      maybe("end_s", rs.end_s.mean, "s");
      maybe("storage_slowdown", rs.storage_slowdown.mean, "ratio");
      // As results.json: the time without failures, checkpoints, MTBF and the 95% intervals.
      maybe("time_to_train_ideal_s",
            st.tokens_per_s > 0 && loaded.jobs[i].config.train_tokens
                ? workload::ideal_time_to_train_s(loaded.jobs[i].config, st)
                : std::numeric_limits<double>::quiet_NaN(),
            "s");
      row("finished_share", rs.finished_share, "fraction");
      row("checkpoint_blocking_s",
          std::isfinite(rs.checkpoint_blocking_s.mean) ? rs.checkpoint_blocking_s.mean : rs.checkpoint_write_s, "s");
      maybe("mtbf_s", rs.mtbf_s, "s");
      for (const auto& [metric, e, unit] :
           {std::tuple{"interruptions", &rs.interruptions, "count"}, {"ettr", &rs.ettr, "fraction"},
            {"goodput", &rs.goodput_tokens_per_s, "tokens/s"}, {"time_to_train_s", &rs.time_to_train_s, "s"},
            {"queue_wait_s", &rs.queue_wait_s, "s"}, {"start_s", &rs.start_s, "s"}, {"end_s", &rs.end_s, "s"},
            {"storage_slowdown", &rs.storage_slowdown, "ratio"}}) {
        maybe(std::string(metric) + "_ci95", e->ci95, unit);
      }
      for (const std::string& cause : lost_causes) {
        const auto e = rs.lost_gpu_hours.find(cause);
        row("lost_gpu_hours_" + cause, e == rs.lost_gpu_hours.end() ? 0.0 : e->second.mean, "GPU-h");
      }
      row("checkpoint_gpu_hours", rs.checkpoint_gpu_hours.mean, "GPU-h");
      // The rest of results.json's job figures (the CSV lacked them).
      row("checkpoint_blocking_alone_s", rs.checkpoint_write_s, "s");
      row("submit_s", loaded.jobs[i].config.submit.seconds(), "s");
      row("started_share", rs.started_share, "fraction");
      maybe("fragmented_starts", rs.fragmented_starts.mean, "count");
    }
    row("placement", result.reliability && scenario::jobs_queue(loaded) ? "scheduler" : "fixed", "");
    // The training's cost, empty where it is not known (no train_tokens, no price, not
    // projectable): the rows are there either way.
    const cost::TrainingCost* t = i < result.training.size() && result.training[i] ? &*result.training[i] : nullptr;
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    // With failures the time to train (ETTR included) is among the reliability rows.
    if (!result.reliability) maybe("time_to_train_s", t ? t->time_to_train_s : kNone, "s");
    maybe("gpu_hours", t ? t->gpu_hours : kNone, "GPU-h");
    maybe("total_cost_usd", t && t->cost_usd ? *t->cost_usd : kNone, "USD");
    maybe("usd_per_million_tokens", t && t->usd_per_million_tokens ? *t->usd_per_million_tokens : kNone, "USD/1e6 tokens");
    maybe("training_energy_kwh", t ? t->energy_kwh : kNone, "kWh");
  }
  if (result.reliability) {
    section = "schedule";
    row("utilisation", result.reliability->utilisation.mean, "fraction");
    row("busy_gpu_hours", result.reliability->busy_gpu_hours.mean, "GPU-h");
    row("burn_in_node_hours", result.reliability->burn_in_node_hours.mean, "node-h");
    row("available_gpu_hours", result.reliability->available_gpu_hours.mean, "GPU-h");
    if (std::isfinite(result.reliability->utilisation.ci95)) {
      row("utilisation_ci95", result.reliability->utilisation.ci95, "fraction");
    }
    const reliability::LongRunResult& rel = *result.reliability;
    section = "failures";
    row("replications", loaded.config.simulation.replications, "count");
    row("elapsed_s", rel.elapsed_s, "s");
    for (const auto& [cause, e] : rel.failures_by_cause) row("by_cause_" + cause, e.mean, "count");
    if (std::isfinite(rel.top1_failure_share.mean)) row("top1_failure_share", rel.top1_failure_share.mean, "fraction");
    if (std::isfinite(rel.top1_rate_share.mean)) row("top1_rate_share", rel.top1_rate_share.mean, "fraction");
    row("retired_nodes", rel.retired_nodes.mean, "count");
    row("heterogeneity_alpha", rel.heterogeneity_alpha, "shape");  // the Pareto law's, no unit
    row("timeline_events", rel.timeline.size(), "count");
    row("timeline_events_dropped", rel.timeline_dropped, "count");
    row("burn_in_duration_s", loaded.config.scheduler.burn_in.seconds(), "s");
    row("burn_ins", rel.burn_ins.mean, "count");
    row("burn_in_caught_installed", rel.burn_in_failures_installed.mean, "count");
    for (const auto& [cause, e] : rel.burn_in_failures) row("burn_in_caught_" + cause, e.mean, "count");
  }
  return out;
}

namespace {

/// Writes `text` to path.tmp (creating the folder); the error, or empty.
std::string write_tmp(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;  // is_directory sets it when the file does not exist yet: not an error
  if (fs::is_directory(target, ec)) return fmt::format("cannot write '{}': is a directory", path);
  ec.clear();
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    std::error_code is;
    if (fs::exists(target.parent_path(), is) && !fs::is_directory(target.parent_path(), is)) {
      return fmt::format("'{}' is a file, not a folder (name a folder, new or existing)", target.parent_path().string());
    }
    return fmt::format("cannot create the folder '{}': {}", target.parent_path().string(), ec.message());
  }
  const fs::path tmp = target.string() + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return fmt::format("cannot write '{}': {}", tmp.string(), std::strerror(errno));
  out << text;
  out.flush();
  if (!out) {
    const std::string why = std::strerror(errno);
    out.close();
    fs::remove(tmp, ec);
    return fmt::format("cannot write '{}': {}", tmp.string(), why);
  }
  return {};
}

}  // namespace

std::string write_file_atomically(const std::string& path, const std::string& text) {
  return write_files_atomically({{path, text}});
}

namespace {

/// Writes all of `text` to descriptor `fd`, a broken pipe said as an error (SIGPIPE is
/// ignored meanwhile: it ended the process without a word, .tmp files left behind).
std::string write_all(int fd, const std::string& path, const std::string& text) {
  struct sigaction ignore {};
  struct sigaction old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old);
  std::string err;
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = fmt::format("cannot write '{}': {}", path, n < 0 ? std::strerror(errno) : "nothing was taken");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  sigaction(SIGPIPE, &old, nullptr);
  return err;
}

/// Whether `st` is the file behind our standard output or error: /dev/stdout when the shell
/// sent it to a file (renamed onto, it replaced that file, losing what >> had kept).
std::optional<int> standard_stream(const struct stat& st) {
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat o {};
    if (::fstat(fd, &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino) return fd;
  }
  return std::nullopt;
}

/// Writes `text` straight to `path`, a stream rather than a file to replace: a character
/// device (/dev/null, /dev/full), a pipe (a process substitution, a FIFO), our own standard
/// output or error, or anything named under /dev or /proc (/dev/fd/3). A rename would have
/// replaced it by a regular file (for a user with the rights: root in a container replaced
/// /dev/full). Opened without truncating (a file behind /dev/fd/N keeps what the shell gave
/// it) and without blocking (a FIFO that nobody reads is an error, not a hang). The error,
/// or empty.
std::string write_stream(const std::string& path, const std::string& text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (const auto fd = standard_stream(st)) {
      (*fd == STDOUT_FILENO ? std::cout : std::cerr).flush();
      return write_all(*fd, path, text);
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENXIO ? fmt::format("cannot write '{}': no process reads it (a FIFO with no reader)", path)
                          : fmt::format("cannot write '{}': {}", path, std::strerror(errno));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // then wait for a slow reader
  std::string err = write_all(fd, path, text);
  if (::close(fd) != 0 && err.empty()) err = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
  return err;
}

/// How an output is written: replaced through a temporary file and a rename (a file, new or
/// existing; through a symbolic link, its target), written straight (a stream), or refused.
struct OutputTarget {
  enum class Kind : std::uint8_t { file, stream, refused } kind = Kind::file;
  std::string path;  ///< the file to replace; the stream; or why it is refused
};

OutputTarget output_target(const std::string& path) {
  namespace fs = std::filesystem;
  const bool named_stream = path.starts_with("/dev/") || path.starts_with("/proc/");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
      return {OutputTarget::Kind::refused,
              fmt::format("cannot write '{}': it is a {}, not a file", path, S_ISBLK(st.st_mode) ? "block device (a disk)" : "socket")};
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || standard_stream(st) || (named_stream && !S_ISDIR(st.st_mode))) {
      return {OutputTarget::Kind::stream, path};
    }
  }
  // A symbolic link stays one: its target gets the output, created if the link dangles (a
  // chain followed link by link; weakly_canonical stops at a dangling one).
  std::error_code ec;
  fs::path at(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(at, ec)); ++hops) {
    const fs::path next = fs::read_symlink(at, ec);
    if (ec) break;
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  if (fs::is_symlink(fs::symlink_status(at, ec))) {
    return {OutputTarget::Kind::refused, fmt::format("cannot write '{}': {}", path, std::strerror(ELOOP))};
  }
  return {OutputTarget::Kind::file, at.string()};
}

}  // namespace

std::string write_files_atomically(const std::vector<std::pair<std::string, std::string>>& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> files;    // replaced by a rename
  std::vector<std::pair<std::string, std::string>> streams;  // written straight
  for (const auto& [path, text] : given) {
    const OutputTarget t = output_target(path);
    if (t.kind == OutputTarget::Kind::refused) return t.path;
    (t.kind == OutputTarget::Kind::stream ? streams : files).emplace_back(t.path, text);
  }
  // Two outputs onto one file (--trace out/results.json beside --out out): the second would
  // overwrite the first's temporary file and its rename fail after the first landed.
  std::vector<fs::path> targets;
  for (const auto& [path, text] : given) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (std::find(targets.begin(), targets.end(), target) != targets.end()) {
      return fmt::format("cannot write '{}' twice: two outputs name it", path);
    }
    if (config::is_input_file(path)) {
      return fmt::format("cannot write '{}': it is an input of this command, which the output would overwrite; "
                         "choose another file name",
                         path);
    }
    targets.push_back(target);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::string err = write_tmp(files[i].first, files[i].second); !err.empty()) {
      for (std::size_t k = 0; k < i; ++k) fs::remove(files[k].first + ".tmp", ec);
      return err;
    }
  }
  // The streams once the files are ready (what a stream took cannot be taken back).
  for (const auto& [path, text] : streams) {
    if (std::string err = write_stream(path, text); !err.empty()) {
      for (const auto& file : files) fs::remove(file.first + ".tmp", ec);
      return err;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::rename(files[i].first + ".tmp", files[i].first, ec);
    if (ec) {
      const std::string why = ec.message();
      for (std::size_t k = i; k < files.size(); ++k) fs::remove(files[k].first + ".tmp", ec);
      return fmt::format("cannot write '{}': {}", files[i].first, why);
    }
  }
  return {};
}

std::string reference_text(const std::vector<config::FieldDoc>& docs) {
  std::string out;
  for (const config::FieldDoc& d : docs) {
    if (d.section) {
      out += fmt::format("\n{}  (section)\n    {}\n", d.path, d.help);
      continue;
    }
    out += fmt::format("{}  {}{}\n    {}", d.path, d.type, d.required ? "  (required)" : "", d.help);
    if (!d.required) {
      out += fmt::format(" [default: {}{}]", d.default_value, d.default_note.empty() ? "" : ", " + d.default_note);
    }
    out += "\n";
  }
  return out;
}

namespace {

void markdown_table(std::string& out, const std::vector<config::FieldDoc>& docs) {
  out += "| key | type | default | description |\n|---|---|---|---|\n";
  for (const config::FieldDoc& d : docs) {
    const std::string def = d.section    ? ""
                            : d.required ? "**required**"
                                         : "`" + d.default_value + "`" + (d.default_note.empty() ? "" : ", " + d.default_note);
    std::string type = d.section ? "section" : d.type;
    std::string help = d.help;
    for (std::string* s : {&type, &help}) {
      for (std::size_t p = 0; (p = s->find('|', p)) != std::string::npos; p += 2) s->replace(p, 1, "\\|");
    }
    out += fmt::format("| `{}` | {} | {} | {} |\n", d.path, type, def, help);
  }
}

}  // namespace

std::string reference_markdown(const std::vector<config::FieldDoc>& docs, const std::vector<config::FieldDoc>& catalog) {
  std::string out =
      "# Scenario reference\n\n"
      "Generated by `clustersim describe --format markdown` from the field tables in the code; "
      "do not edit by hand (a test checks that it is current).\n\n"
      "A scenario is one YAML file. Values carry units: times `700ns`, `1.5us`, `10min`, `54d`; "
      "sizes `80GiB`, `1.5TB`; bandwidths `400Gbps`, `50GB/s`; FLOP rates `989TFLOPS`; "
      "power `700W`, `10.2kW`; money `30000USD`, `1.5MUSD`; counts `2048`, `15.6T`; a number "
      "without its unit is an error but for 0 (a failure rate still names what it counts per: `0/gpu-day`). "
      "A file may start from another with `extends:`, and any key can be overridden on the "
      "command line with `--set key.path=value`. Unknown keys are errors, and so is a key that "
      "does not apply to the scenario's other choices (`fabric.routing` on a Clos, "
      "`network.nvls_latency` with NVLS off), even written at its default: it would be ignored. "
      "The scenario a run echoes (`scenario` in its JSON) lists every key, resolved: a record of "
      "what ran, not a file to load back. In a file that "
      "extends another (or a --set), `key: ~` (or `null`) puts a section back to its defaults, "
      "empties a list or a mapping of names and removes an optional value; a section or a "
      "mapping with nothing under it changes nothing.\n\n"
      "## Scenario keys\n\n";
  markdown_table(out, docs);
  out += "\n## Catalog files\n\n"
         "The built-in catalog is `models/hardware/catalog.yaml`; a scenario adds its own with "
         "`catalogs: [file.yaml]` (entries with the same name replace built-in ones).\n\n";
  markdown_table(out, catalog);
  return out;
}

}  // namespace clustersim::tools
