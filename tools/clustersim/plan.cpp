#include "tools/clustersim/plan.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <charconv>
#include <cmath>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/cost/cost.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/time.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/sweep.hpp"

namespace clustersim::tools {
namespace {

config::InputError option_error(std::string option, std::string message, std::string hint = {}) {
  config::Diagnostics d;
  d.add(config::Location{"<command line>", 0, 0}, std::move(option), std::move(message), std::move(hint));
  return config::InputError(std::move(d));
}

std::vector<std::int64_t> powers_of_two_up_to(std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t v = 1; v <= limit && v <= 64; v *= 2) out.push_back(v);
  return out;
}

std::vector<std::int64_t> node_counts(const std::string& text, std::int64_t base) {
  std::vector<std::int64_t> out;
  if (text.empty()) {
    for (const auto& [num, den] : {std::pair{1, 4}, {1, 2}, {1, 1}, {2, 1}, {4, 1}}) {
      if ((base * num) % den != 0) continue;
      const std::int64_t n = base * num / den;
      if (n >= 1 && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
  }
  SweepParam p;
  std::string why;
  if (!parse_sweep_param("cluster.nodes=" + text, p, why)) {
    // "cluster.nodes='8:64:x1': ..." names the key --nodes sets; the option is the user's word.
    if (why.rfind("cluster.nodes=", 0) == 0) why.erase(0, std::string_view("cluster.nodes=").size());
    // (One example: a range's own message gives the one it likely meant.)
    throw option_error("--nodes", why, why.find("(e.g. ") == std::string::npos ? "--nodes 512:8192:x2" : "");
  }
  for (const std::string& v : p.values) {
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > cluster::kMaxNodes) {
      // A range without its step is a single value: said so where the range would be one
      // (from a >= 1 to b >= a), as sweep's --param says it.
      if (looks_like_range_without_step(v)) {
        const std::size_t colon = v.find(':');
        const double a = std::strtod(v.substr(0, colon).c_str(), nullptr);
        const double b = std::strtod(v.substr(colon + 1).c_str(), nullptr);
        if (a >= 1.0 && b >= a) {
          throw option_error("--nodes", fmt::format("'{}' is not a node count, nor a range: a range needs its step", v),
                             fmt::format("--nodes {}:x2 to double, or {}:+1 for steps of 1", v, v));
        }
      }
      throw option_error("--nodes",
                         fmt::format("'{}' is not a node count (a whole number from 1 to {})", v, cluster::kMaxNodes),
                         "--nodes 512,1024,2048");
    }
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

std::string first_problem(const config::Diagnostics& d) {
  if (d.items().empty()) return "invalid";
  const config::Diagnostic& x = d.items().front();
  return x.path.empty() ? x.message : fmt::format("{}: {}", x.path, x.message);
}

/// Loads and runs one point; fills its figures, or marks it infeasible with the reason.
void evaluate(const PlanArgs& args, const std::vector<std::string>& sets, PlanPoint& pt) {
  try {
    scenario::LoadOptions options{sets, args.seed, true};
    options.first_job_only = true;
    options.point_sets = sets.size() - args.sets.size();  // the point's values follow the user's --set
    const scenario::LoadedScenario loaded = scenario::load_scenario(args.scenario, options);
    EcmpDraws draws = run_ecmp_draws(loaded, args.ecmp_seeds);
    const RunResult& r = draws.run;
    pt.ecmp_seed = draws.seed;
    if (r.jobs.empty()) {
      pt.reason = "no job";
      return;
    }
    const workload::StepResult& st = r.jobs[0];
    pt.step_time_s = st.step_time_s;
    pt.mfu = st.mfu;
    if (r.reliability && !r.reliability->jobs.empty()) pt.ettr = r.reliability->jobs[0].ettr.mean;
    pt.time_to_train_s = time_to_train_s(loaded, r, 0);
    if (!std::isfinite(pt.time_to_train_s)) {
      pt.reason = "no training progress to project a time to train from";
      return;
    }
    if (!r.training.empty() && r.training[0]) {
      pt.total_cost_usd = r.training[0]->cost_usd;
      pt.usd_per_million_tokens = r.training[0]->usd_per_million_tokens;
    }
    if (!pt.total_cost_usd) pt.unpriced = r.cost.unpriced;
    if (r.cost.capex) pt.capex_usd = r.cost.capex->value();
    pt.usd_per_gpu_hour = r.cost.usd_per_gpu_hour;
    pt.peak_facility_power_w = r.cost.peak.facility.value();
    pt.feasible = true;
  } catch (const config::InputError& e) {
    pt.reason = first_problem(e.diagnostics());
  } catch (const sim::TimeRangeError& e) {
    pt.reason = e.what();
  } catch (const std::exception& e) {
    pt.reason = fmt::format("internal error (a bug in clustersim): {}", e.what());
  }
}

std::string opt_cell(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); }
config::Json opt_json(const std::optional<double>& v) { return v ? config::Json(*v) : config::Json(nullptr); }

std::string days(double s) { return fmt::format("{:.2f} d", s / 86400.0); }

/// A duration in a sentence: days from a day up, then hours, minutes, seconds (a 1 h
/// deadline read "0.04 d").
std::string duration(double s) {
  if (s >= 86400.0) return days(s);
  if (s >= 3600.0) return fmt::format("{:.2f} h", s / 3600.0);
  if (s >= 60.0) return fmt::format("{:.1f} min", s / 60.0);
  return fmt::format("{:.3g} s", s);
}

/// A time to train in the unit duration() gives the deadline, to judge it against the
/// deadline (under a 5 h deadline, 5.03 h read "0.21 d").
std::string in_unit_of(double s, double deadline) {
  if (deadline >= 86400.0) return days(s);
  if (deadline >= 3600.0) return fmt::format("{:.2f} h", s / 3600.0);
  if (deadline >= 60.0) return fmt::format("{:.1f} min", s / 60.0);
  return fmt::format("{:.3g} s", s);
}

}  // namespace

std::string node_counts_problem(const std::string& text) {
  if (text.empty()) return {};
  try {
    node_counts(text, 1);
  } catch (const config::InputError& e) {
    const config::Diagnostic& d = e.diagnostics().items().front();
    return d.hint.empty() ? d.message : fmt::format("{} (e.g. {})", d.message, d.hint);
  }
  return {};
}

void mark_pareto(std::vector<PlanPoint>& points) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i].pareto = false;
    if (points[i].feasible && points[i].total_cost_usd && points[i].within_capex_budget) order.push_back(i);
  }
  // By time, then cost: a point is on the front when it is cheaper than every faster one.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const PlanPoint& x = points[a];
    const PlanPoint& y = points[b];
    if (x.time_to_train_s != y.time_to_train_s) return x.time_to_train_s < y.time_to_train_s;
    return *x.total_cost_usd < *y.total_cost_usd;
  });
  double best_cost = INFINITY;
  double best_time = -1.0;
  for (std::size_t i : order) {
    PlanPoint& p = points[i];
    const double c = *p.total_cost_usd;
    if (c < best_cost || (c == best_cost && p.time_to_train_s == best_time)) {
      p.pareto = true;
      best_cost = c;
      best_time = p.time_to_train_s;
    }
  }
}

/// plan sets these keys at every point (after the user's --set, which would be lost without
/// a word): a --set that writes one (the key itself, one inside it, or a mapping holding it)
/// is refused with the option to use instead. cluster.nodes and fabric.topology only beside
/// --nodes and --topologies: without them plan takes its grid from the scenario, --set
/// included; simulation.replications likewise beside --replications.
void check_sets_against_search(const PlanArgs& args) {
  struct Searched {
    std::string_view key;
    bool searched;
    std::string_view hint;
  };
  const std::array<Searched, 7> searched{{
      {"cluster.nodes", !args.nodes.empty(), "give the node counts with --nodes only"},
      {"fabric.topology", !args.topologies.empty(), "give the topologies with --topologies only"},
      {"network.model", true, "drop it: plan times every point with the analytical model"},
      {"workload.jobs[0].gpus", true, "drop it: plan gives the job every GPU of each cluster size"},
      {"workload.jobs[0].parallelism.tp", true, "drop it: plan searches tp"},
      {"workload.jobs[0].parallelism.pp", true, "drop it: plan searches pp"},
      {"workload.jobs[0].parallelism.dp", true, "drop it: plan sets dp to fill the GPUs"},
  }};
  config::Diagnostics bad;
  const auto refuse = [&](const std::string& set, const std::string& key, std::string_view k, std::string_view hint) {
    bad.add(config::Location{"<command line>", 0, 0}, key,
            fmt::format("--set {}: plan sets {} at every point of its search, and the --set would be lost", set, k),
            std::string(hint));
  };
  for (const std::string& set : args.sets) {
    const std::string key = scenario::set_key(set);
    const std::size_t start = config::set_value_start(set);
    const std::string value = start == std::string::npos ? std::string() : set.substr(start);
    for (const Searched& s : searched) {
      if (!s.searched) continue;
      const std::string_view k = s.key;
      const bool inside = config::key_inside(k, key);
      const bool holds = config::key_inside(key, k) &&
                         value_writes(value, k.substr(key.size() + (k[key.size()] == '.' ? 1 : 0)), false);
      if (key != k && !inside && !holds) continue;
      refuse(set, key, k, s.hint);
      break;
    }
    if (key == "simulation.replications" && args.replications_given) {
      refuse(set, key, key, "give one of --replications and --set simulation.replications");
    }
  }
  if (!bad.ok()) throw config::InputError(std::move(bad));
}

namespace {

/// Priced point a before b: cheaper, or as cheap and faster.
bool cheaper_then_faster(const PlanPoint& a, const PlanPoint& b) {
  return *a.total_cost_usd < *b.total_cost_usd ||
         (*a.total_cost_usd == *b.total_cost_usd && a.time_to_train_s < b.time_to_train_s);
}

/// Point a before b: faster, or as fast and cheaper (a priced one before one without a price).
bool faster_then_cheaper(const PlanPoint& a, const PlanPoint& b) {
  if (a.time_to_train_s != b.time_to_train_s) return a.time_to_train_s < b.time_to_train_s;
  if (!a.total_cost_usd || !b.total_cost_usd) return a.total_cost_usd.has_value() && !b.total_cost_usd.has_value();
  return *a.total_cost_usd < *b.total_cost_usd;
}

}  // namespace

Plan plan(const PlanArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  check_sets_against_search(args);
  // The base need not hold where what fails is what the search sets (a job larger than the
  // scenario's cluster, a dp that does not divide its batch, a fabric too small for its
  // nodes), as a sweep's base: it is then taken as decoded, its node resolved, and each
  // point is checked in full as it is run. Where no point holds, the error is the base's.
  scenario::LoadOptions options{args.sets, args.seed, false, false};
  options.first_job_only = true;
  scenario::LoadedScenario base;
  std::string base_problem;  // the base's first error, when it does not hold
  std::optional<config::InputError> base_error;
  try {
    base = scenario::load_scenario(args.scenario, options);
  } catch (const config::InputError& e) {
    // Whether the search sets what fails shows in its points: where none holds, the base's
    // own errors are the answer (an unknown model, a broken fabric), said as a load says them.
    const auto& said = e.diagnostics().items();
    if (said.empty()) throw;
    base_error.emplace(e);
    options.resolve = false;
    base = scenario::load_scenario(args.scenario, options);  // its decoding errors are the scenario's
    base_problem = said.front().format();
  }
  // The planned job as the base resolved it, or (a base that does not hold) its model looked
  // up on the side.
  std::optional<scenario::ResolvedJob> unresolved;
  if (base.jobs.empty() && !base_problem.empty() && !base.config.workload.jobs.empty()) {
    scenario::ResolvedJob j;
    j.config = base.config.workload.jobs[0];
    j.where = config::Location{base.file, 0, 0};
    if (auto model = scenario::job_model(j.config)) {
      j.model_name = std::move(model->first);
      j.model = std::move(model->second);
      unresolved = std::move(j);
    }
  }
  if (base_error && !unresolved) throw *base_error;  // no job, or not even its model: the base's own errors
  // What the scenario lacks is said at the scenario (its job, or the file), not the command line.
  const auto scenario_error = [&](config::Location where, std::string path, std::string message, std::string hint) {
    config::Diagnostics d;
    d.add(std::move(where), std::move(path), std::move(message), std::move(hint));
    return config::InputError(std::move(d));
  };
  const scenario::ResolvedJob* planned = unresolved ? &*unresolved : base.jobs.empty() ? nullptr : &base.jobs[0];
  if (planned == nullptr || !planned->config.train_tokens) {
    throw scenario_error(planned == nullptr ? config::Location{base.file, 0, 0} : planned->where,
                         planned == nullptr ? "workload.jobs" : "workload.jobs[0]",
                         "plan needs a job with train_tokens (what has to be trained by the deadline)",
                         planned == nullptr ? "workload: {jobs: [{name: pretrain, model: llama3-405b, train_tokens: 15.6T, ...}]}"
                                           : "add it, e.g. train_tokens: 15.6T");
  }
  if (!base.config.fabric) {
    throw scenario_error(config::Location{base.file, 0, 0}, "fabric",
                         "plan needs a fabric section (the topology is one of the axes)",
                         "fabric: {topology: rail_clos, radix: 64}");
  }
  if (args.deadline.ns() <= 0) throw option_error("--deadline", "must be positive", "--deadline 90d");
  // A plan is the cheapest point that meets the deadline: without a node price no point has
  // a cost, and every run would end in "no plan meets the deadline".
  const cost::NodePricing pricing = cost::price_node(base.node.name, base.node.gpu_name, base.node.spec.gpus,
                                                     base.pricing, base.config.economics);
  if (!pricing.node_price) {
    config::Diagnostics d;
    d.add(config::Location{base.file, 0, 0}, "cluster.node",
          fmt::format("node type '{}' has no price ({}): plan chooses the cheapest way to meet the deadline, and "
                      "no point can be priced",
                      base.node.name, pricing.unpriced),
          "set economics.node_price, e.g. economics: {node_price: 300kUSD} or --set economics.node_price=300kUSD");
    throw config::InputError(std::move(d));
  }
  const scenario::ResolvedJob& job = *planned;
  const auto& par = job.config.parallelism;
  const std::int64_t gpn = base.node.spec.gpus;

  Plan p;
  p.scenario = base.config.name.empty() ? std::filesystem::path(base.file).stem().string() : base.config.name;
  p.job = job.config.name;
  if (!base.dropped_jobs.empty()) {
    fmt::print(stderr, "note: plan plans the first job, {}, alone on each cluster size; the scenario's other {} ({}) {} left out\n",
               job.config.name, base.dropped_jobs.size() == 1 ? "job" : "jobs", fmt::join(base.dropped_jobs, ", "),
               base.dropped_jobs.size() == 1 ? "is" : "are");
  }
  p.sweep_points = sweep_block_points(base.config);
  p.base_problem = base_problem;
  p.model = job.model_name;
  p.train_tokens = job.config.train_tokens->value();
  p.deadline_s = args.deadline.seconds();
  if (args.budget) p.budget_usd = args.budget->value();
  if (args.capex_budget) p.capex_budget_usd = args.capex_budget->value();
  p.node_counts = node_counts(args.nodes, base.config.cluster.nodes);
  if (!args.topologies.empty()) {
    for (const std::string& t : args.topologies) {
      if (std::find(p.topologies.begin(), p.topologies.end(), t) == p.topologies.end()) p.topologies.push_back(t);
    }
  } else {
    const std::string own(config::enum_name(base.config.fabric->topology));
    p.topologies.push_back(own);
    if (own == "rail_clos") p.topologies.emplace_back("fat_tree");
    if (own == "fat_tree") p.topologies.emplace_back("rail_clos");
  }
  // A torus or dragonfly takes its shape from the scenario (plan sizes only Clos fabrics):
  // one that the scenario's fabric is not has no shape, and no point could fit (0 of 240,
  // exit 0). The scenario's own torus or dragonfly holds any node count up to its size.
  const std::string own_topology(config::enum_name(base.config.fabric->topology));
  for (const std::string& t : p.topologies) {
    if ((t != "torus" && t != "dragonfly") || t == own_topology) continue;
    throw option_error("--topologies",
                       fmt::format("the scenario's fabric is a {}, so a {} has no shape ({}): plan derives only Clos "
                                   "fabrics per node count, and no point could fit",
                                   own_topology, t, t == "torus" ? "dims" : "routers, hosts and global links"),
                       fmt::format("plan from a scenario whose fabric is the {} to study, or --topologies fat_tree,rail_clos", t));
  }
  p.tps = powers_of_two_up_to(gpn);
  p.pps = powers_of_two_up_to(job.model.layers + 2);
  // A node whose GPUs are not a power of two (a GB200 NVL72: 72 = 9 x 8) leaves that odd
  // factor in dp whatever tp and pp are powers of two, and a dp of 9 x 2^k divides no batch
  // of 2^m sequences: every point failed (0 of 196). pp takes it too: 9, 18, 36.
  std::int64_t odd = gpn;
  while (odd % 2 == 0) odd /= 2;
  if (odd > 1) {
    for (std::int64_t v = odd; v <= job.model.layers + 2 && v <= 64; v *= 2) p.pps.push_back(v);
    std::sort(p.pps.begin(), p.pps.end());
  }
  if (args.replications_given && !base.config.failures) {
    throw option_error("--replications", "the scenario has no failures: every replication would give the same figures",
                       "add a failures section, or drop --replications");
  }
  // Without --replications, the scenario's own count when it asks for several (plan had
  // run 5 whatever the scenario said).
  const std::int64_t replications = args.replications_given || base.config.simulation.replications <= 1
                                        ? args.replications
                                        : base.config.simulation.replications;
  p.replications = base.config.failures ? replications : 0;
  p.ecmp_seeds = args.ecmp_seeds;

  // The points and their --set overrides, in search order.
  std::vector<std::vector<std::string>> sets;
  for (std::int64_t nodes : p.node_counts) {
    for (const std::string& topo : p.topologies) {
      for (std::int64_t tp : p.tps) {
        for (std::int64_t pp : p.pps) {
          PlanPoint pt;
          pt.nodes = nodes;
          pt.gpus = nodes * gpn;
          pt.topology = topo;
          pt.tp = tp;
          pt.pp = pp;
          pt.cp = par.cp;
          pt.ep = par.ep;
          std::vector<std::string> s = args.sets;
          const std::int64_t model_ranks = tp * par.cp * pp;
          if (pt.gpus % model_ranks != 0) {
            pt.dp = 0;  // none: plan.csv leaves the cell empty (it read 1)
            pt.reason = fmt::format("{} GPUs do not split into tp x cp x pp = {} ranks", pt.gpus, model_ranks);
            p.points.push_back(std::move(pt));
            sets.emplace_back();
            continue;
          }
          pt.dp = pt.gpus / model_ranks;
          // The scenario's interleaving where the schedule allows it (enough layers for the
          // chunks, micro-batches a multiple of pp), else none.
          const std::int64_t per_step = pt.dp * job.config.micro_batch;
          const std::int64_t micro = per_step > 0 && job.config.global_batch % per_step == 0
                                         ? job.config.global_batch / per_step
                                         : 0;
          pt.virtual_stages = pp > 1 && pp * par.virtual_stages <= job.model.layers + 2 && micro > 0 && micro % pp == 0
                                  ? par.virtual_stages
                                  : 1;
          s.push_back(fmt::format("cluster.nodes={}", nodes));
          s.push_back(fmt::format("fabric.topology={}", topo));
          s.emplace_back("network.model=analytical");
          s.push_back(fmt::format("workload.jobs[0].gpus={}", pt.gpus));
          s.push_back(fmt::format("workload.jobs[0].parallelism.tp={}", tp));
          s.push_back(fmt::format("workload.jobs[0].parallelism.pp={}", pp));
          s.push_back(fmt::format("workload.jobs[0].parallelism.dp={}", pt.dp));
          s.push_back(fmt::format("workload.jobs[0].parallelism.virtual_stages={}", pt.virtual_stages));
          if (p.replications > 0) s.push_back(fmt::format("simulation.replications={}", p.replications));
          p.points.push_back(std::move(pt));
          sets.push_back(std::move(s));
        }
      }
    }
  }

  // Every point on a worker thread; points share nothing. Each worker, in turn, shows the
  // share of points done on a terminal (a search with failures runs for tens of seconds).
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  const int threads = std::max(
      1, std::min<int>(args.jobs > 0 ? args.jobs : static_cast<int>(std::thread::hardware_concurrency()),
                       static_cast<int>(std::max<std::size_t>(1, p.points.size()))));
  {
    TerminalProgress progress(fmt::format("plan: {} points", p.points.size()));
    std::mutex shown;  // TerminalProgress is not thread-safe
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < p.points.size(); i = next++) {
          if (!sets[i].empty()) evaluate(args, sets[i], p.points[i]);
          const std::size_t finished = ++done;
          const std::lock_guard lock(shown);
          progress(static_cast<double>(finished) / static_cast<double>(p.points.size()));
        }
      });
    }
    for (std::jthread& w : workers) w.join();
  }

  // A base that did not hold, and no point that does: the base's errors say why (an error
  // the search does not set, an unknown model of another job, a broken fabric).
  if (base_error && std::none_of(p.points.begin(), p.points.end(), [](const PlanPoint& pt) { return pt.feasible; })) {
    throw *base_error;
  }
  // Feasible points, none with a cost: no plan can be chosen, and the reason is the prices
  // (a network part of every design not in the priced table), not the deadline.
  std::vector<std::string> unpriced;
  bool any_feasible = false;
  bool any_priced = false;
  for (const PlanPoint& pt : p.points) {
    if (!pt.feasible) continue;
    any_feasible = true;
    any_priced = any_priced || pt.total_cost_usd.has_value();
    for (const std::string& u : pt.unpriced) {
      if (std::find(unpriced.begin(), unpriced.end(), u) == unpriced.end()) unpriced.push_back(u);
    }
  }
  if (any_feasible && !any_priced) {
    config::Diagnostics d;
    d.add(config::Location{base.file, 0, 0}, "",
          fmt::format("no feasible point has a total cost, so none can be chosen: {}",
                      unpriced.empty() ? std::string("the cost model priced none") : fmt::format("{}", fmt::join(unpriced, "; "))),
          "plan ranks points by cost: use parts, rates and switch radixes that models/fabric/pricing.yaml prices");
    throw config::InputError(std::move(d));
  }

  // The front among the hardware the capex budget allows: with a point over it on the front,
  // the plan chosen was missing from the table.
  for (PlanPoint& pt : p.points) {
    pt.within_capex_budget = !p.capex_budget_usd || (pt.capex_usd && *pt.capex_usd <= *p.capex_budget_usd);
  }
  mark_pareto(p.points);
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    PlanPoint& pt = p.points[i];
    if (!pt.feasible) continue;
    pt.meets_deadline = pt.time_to_train_s <= p.deadline_s;
    pt.within_budget = (!p.budget_usd || (pt.total_cost_usd && *pt.total_cost_usd <= *p.budget_usd)) &&
                       pt.within_capex_budget;
    if (!pt.meets_deadline || !pt.within_budget || !pt.total_cost_usd) continue;
    if (!p.best || cheaper_then_faster(pt, p.points[*p.best])) p.best = i;
  }
  p.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

/// Why no point is chosen: with points meeting the deadline, the budget rules them out, so
/// the cheapest of them is named; else the fastest feasible point (and, with a budget, the
/// cheapest too); with no feasible point at all, plan.csv's reasons when --out wrote it,
/// else the most common reasons here.
namespace {
std::string node_count(std::int64_t n) { return fmt::format("{} node{}", n, n == 1 ? "" : "s"); }
}  // namespace

std::string no_plan_text(const Plan& p, bool files_written) {
  if (p.best) return {};
  const auto money = [](const std::optional<double>& v) {
    return v ? sim::human(sim::Money::of(*v)) : std::string("-");
  };
  const PlanPoint* fastest = nullptr;
  const PlanPoint* cheapest = nullptr;      // meeting the deadline, priced
  const PlanPoint* cheapest_any = nullptr;  // priced
  for (const PlanPoint& pt : p.points) {
    if (!pt.feasible) continue;
    // Of points as fast, the cheapest; of points as cheap, the fastest (the first found, of
    // two rail-optimized and fat-tree twins, named the dearer one "the fastest" where the
    // Pareto front listed only the other).
    if (!fastest || faster_then_cheaper(pt, *fastest)) fastest = &pt;
    if (!pt.total_cost_usd) continue;
    if (!cheapest_any || cheaper_then_faster(pt, *cheapest_any)) cheapest_any = &pt;
    if (pt.meets_deadline && (!cheapest || cheaper_then_faster(pt, *cheapest))) cheapest = &pt;
  }
  const bool budgeted = p.budget_usd || p.capex_budget_usd;
  std::string out = fmt::format("No plan meets the deadline{}", budgeted ? " and the budget" : "");
  if (cheapest && budgeted) {
    std::vector<std::string> over;  // the budgets it misses (an unpriced figure misses its budget)
    if (p.budget_usd && !(cheapest->total_cost_usd && *cheapest->total_cost_usd <= *p.budget_usd)) {
      over.push_back(fmt::format("total cost {} against {}", money(cheapest->total_cost_usd), money(p.budget_usd)));
    }
    if (p.capex_budget_usd && !(cheapest->capex_usd && *cheapest->capex_usd <= *p.capex_budget_usd)) {
      over.push_back(fmt::format("capex {} against {}", money(cheapest->capex_usd), money(p.capex_budget_usd)));
    }
    return out + fmt::format("; the cheapest meeting the deadline ({}, {}, tp {} pp {}, {} to train) has {}\n",
                             node_count(cheapest->nodes), cheapest->topology, cheapest->tp, cheapest->pp,
                             duration(cheapest->time_to_train_s), fmt::join(over, ", "));
  }
  if (fastest) {
    out += fmt::format("; the fastest takes {} ({}, {}, tp {} pp {}, total cost {})", duration(fastest->time_to_train_s),
                       node_count(fastest->nodes), fastest->topology, fastest->tp, fastest->pp, money(fastest->total_cost_usd));
    if (budgeted && cheapest_any && cheapest_any != fastest) {
      out += fmt::format("; the cheapest costs {} ({}, {}, tp {} pp {}, {} to train)",
                         money(cheapest_any->total_cost_usd), node_count(cheapest_any->nodes), cheapest_any->topology,
                         cheapest_any->tp, cheapest_any->pp, duration(cheapest_any->time_to_train_s));
    }
    return out + "\n";
  }
  if (files_written) return out + ": no point is feasible (see plan.csv for the reasons)\n";
  std::map<std::string, std::size_t> reasons;
  for (const PlanPoint& pt : p.points) ++reasons[pt.reason];
  std::vector<std::pair<std::string, std::size_t>> common(reasons.begin(), reasons.end());
  std::stable_sort(common.begin(), common.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  out += ": no point is feasible; the most common reasons:\n";
  for (std::size_t i = 0; i < common.size() && i < 3; ++i) {
    out += fmt::format("  {} of {} points: {}\n", common[i].second, p.points.size(), common[i].first);
  }
  return out;
}

std::string plan_table(const Plan& p, bool files_written) {
  std::string out;
  std::size_t feasible = 0;
  for (const PlanPoint& pt : p.points) feasible += pt.feasible ? 1 : 0;
  out += fmt::format("Plan: {} ({}, {} tokens) from {}; deadline {}{}\n", p.job, p.model,
                     sim::human(sim::Count::of(p.train_tokens)), p.scenario, duration(p.deadline_s),
                     (p.budget_usd ? fmt::format(", budget {} (total cost)", sim::human(sim::Money::of(*p.budget_usd)))
                                   : std::string()) +
                         (p.capex_budget_usd
                              ? fmt::format(", capex budget {}", sim::human(sim::Money::of(*p.capex_budget_usd)))
                              : std::string()));
  out += fmt::format("Search: nodes {{{}}} x topology {{{}}} x tp {{{}}} x pp {{{}}}; dp = GPUs / (tp cp pp); "
                     "analytical network{}\n",
                     fmt::join(p.node_counts, ", "), fmt::join(p.topologies, ", "), fmt::join(p.tps, ", "),
                     fmt::join(p.pps, ", "),
                     (p.replications > 0 ? fmt::format(", {} failure replications per point", p.replications)
                                         : std::string()) +
                         (p.ecmp_seeds > 1 ? fmt::format(", the median step of {} ECMP seeds per hashed design",
                                                         p.ecmp_seeds)
                                           : std::string()));
  if (!p.base_problem.empty()) {
    out += fmt::format("Note: the scenario as written does not hold ({}); plan sets the cluster's size, the topology "
                       "and the job's GPUs and parallelism at each point and checks each point in full\n",
                       p.base_problem);
  }
  out += fmt::format("{} points, {} feasible ({} not: they do not fit, do not divide or cannot be simulated), wall time {:.2f} s\n",
                     p.points.size(), feasible,
                     p.points.size() - feasible, p.wall_s);
  // The capex budget bounds the hardware that can be bought at all: the front is drawn among
  // the points within it (mark_pareto), which the heading says (it read as over every point).
  out += fmt::format("\nPareto front of time to train against total cost{} (> meets the deadline and the budget, * "
                     "the cheapest that does)\n",
                     p.capex_budget_usd ? fmt::format(", among the points within the capex budget of {}",
                                                      sim::human(sim::Money::of(*p.capex_budget_usd)))
                                        : std::string());
  out += fmt::format("    {:>6} {:>7} {:<10} {:>3} {:>3} {:>5} {:>3} {:>9} {:>6} {:>7} {:>13} {:>12} {:>10} {:>12} "
                     "{:>10}\n",
                     "nodes", "GPUs", "topology", "tp", "pp", "dp", "vp", "step (s)", "MFU", "ETTR", "time to train",
                     "total cost", "USD/Mtok", "capex", "USD/GPU-h");
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    if (p.points[i].pareto) front.push_back(i);
  }
  std::sort(front.begin(), front.end(),
            [&](std::size_t a, std::size_t b) { return p.points[a].time_to_train_s < p.points[b].time_to_train_s; });
  const auto money = [](const std::optional<double>& v) {
    return v ? sim::human(sim::Money::of(*v)) : std::string("-");
  };
  for (std::size_t i : front) {
    const PlanPoint& pt = p.points[i];
    const char* mark = p.best == i ? " *" : pt.meets_deadline && pt.within_budget ? " >" : "  ";
    out += fmt::format("{}  {:>6} {:>7} {:<10} {:>3} {:>3} {:>5} {:>3} {:>9} {:>5.1f}% {:>7} {:>13} {:>12} {:>10} "
                       "{:>12} {:>10}\n",
                       mark, pt.nodes, pt.gpus, pt.topology, pt.tp, pt.pp, pt.dp, pt.virtual_stages,
                       pt.step_time_s < 1e5 ? fmt::format("{:.3f}", pt.step_time_s) : fmt::format("{:.3e}", pt.step_time_s),
                       100.0 * pt.mfu, pt.ettr ? fmt::format("{:.1f}%", 100.0 * *pt.ettr) : std::string("-"),
                       in_unit_of(pt.time_to_train_s, p.deadline_s), money(pt.total_cost_usd),
                       pt.usd_per_million_tokens ? fmt::format("{:.3f}", *pt.usd_per_million_tokens) : std::string("-"),
                       money(pt.capex_usd),
                       pt.usd_per_gpu_hour ? fmt::format("{:.3f}", *pt.usd_per_gpu_hour) : std::string("-"));
  }
  if (front.empty()) {
    // Under a capex budget the front is drawn among the points within it: feasible, priced
    // points may all lie above it (the message said none was priced).
    const bool priced = std::any_of(p.points.begin(), p.points.end(), [](const PlanPoint& pt) {
      return pt.feasible && pt.total_cost_usd.has_value();
    });
    out += p.capex_budget_usd && priced
               ? fmt::format("    (no feasible point within the capex budget of {})\n",
                             sim::human(sim::Money::of(*p.capex_budget_usd)))
               : std::string("    (no feasible point with a priced cost)\n");
  } else {
    // The columns that are not plain words (a "vs" read as "versus").
    out += "    (vp: virtual pipeline stages per GPU, interleaved; ETTR: effective training time ratio under the "
           "scenario's failures, - without; USD/Mtok: total cost per million trained tokens)\n";
  }
  out += "\n";
  if (p.best) {
    const PlanPoint& b = p.points[*p.best];
    out += fmt::format("Cheapest meeting the deadline{}: {} node{} ({} GPUs), {}, tp {} pp {} dp {}: {} to train, "
                       "total cost {}, {:.3f} USD per million tokens, capex {}\n",
                       p.budget_usd || p.capex_budget_usd ? " and the budget" : "", b.nodes, b.nodes == 1 ? "" : "s",
                       b.gpus, b.topology, b.tp, b.pp, b.dp,
                       duration(b.time_to_train_s), money(b.total_cost_usd), b.usd_per_million_tokens.value_or(NAN),
                       money(b.capex_usd));
  } else {
    out += no_plan_text(p, files_written);
  }
  return out;
}

std::string plan_csv(const Plan& p) {
  std::string out =
      "point,nodes,gpus,topology,tp,cp,pp,dp,ep,virtual_stages,status,step_time_s,mfu,ettr,time_to_train_s,"
      "total_cost_usd,usd_per_million_tokens,capex_usd,usd_per_gpu_hour,peak_facility_power_w,meets_deadline,"
      "within_budget,pareto,best,reason";
  // The draw each hashed point kept, so that a row can be run again (`run --set
  // fabric.ecmp_seed=`): as plan.json, only when several were drawn.
  const bool seeds = p.ecmp_seeds > 1;
  // within_capex_budget last (added after the others: scripts that read the columns by place
  // keep theirs): a design over --capex-budget is no candidate at all (it is on no front).
  out += seeds ? ",ecmp_seed,within_capex_budget\n" : ",within_capex_budget\n";
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    const PlanPoint& pt = p.points[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}", i, pt.nodes, pt.gpus, pt.topology, pt.tp, pt.cp, pt.pp,
                       pt.dp > 0 ? fmt::format("{}", pt.dp) : std::string(), pt.ep, pt.virtual_stages,
                       pt.feasible ? "ok" : "infeasible");
    if (pt.feasible) {
      out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},", pt.step_time_s, pt.mfu, opt_cell(pt.ettr),
                         pt.time_to_train_s, opt_cell(pt.total_cost_usd), opt_cell(pt.usd_per_million_tokens),
                         opt_cell(pt.capex_usd), opt_cell(pt.usd_per_gpu_hour), pt.peak_facility_power_w,
                         flag(pt.meets_deadline), flag(pt.within_budget), flag(pt.pareto), flag(p.best == i));
    } else {
      out += ",,,,,,,,,,false,false,false,false,";
    }
    out += csv_quote(pt.reason);
    if (seeds) out += pt.feasible && pt.ecmp_seed ? fmt::format(",{}", *pt.ecmp_seed) : std::string(",");
    out += pt.feasible ? fmt::format(",{}\n", flag(pt.within_capex_budget)) : std::string(",false\n");
  }
  return out;
}

config::Json plan_json(const Plan& p) {
  config::Json points = config::Json::array();
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    const PlanPoint& pt = p.points[i];
    config::Json j = {{"point", i},           {"nodes", pt.nodes}, {"gpus", pt.gpus}, {"topology", pt.topology},
                      {"tp", pt.tp},          {"cp", pt.cp},       {"pp", pt.pp},     {"dp", pt.dp > 0 ? config::Json(pt.dp) : config::Json()},
                      {"ep", pt.ep},          {"virtual_stages", pt.virtual_stages},
                      {"status", pt.feasible ? "ok" : "infeasible"}};
    if (pt.feasible) {
      j["step_time_s"] = pt.step_time_s;
      if (p.ecmp_seeds > 1) j["ecmp_seed"] = pt.ecmp_seed ? config::Json(*pt.ecmp_seed) : config::Json(nullptr);
      j["mfu"] = pt.mfu;
      j["ettr"] = opt_json(pt.ettr);
      j["time_to_train_s"] = pt.time_to_train_s;
      j["total_cost_usd"] = opt_json(pt.total_cost_usd);
      j["usd_per_million_tokens"] = opt_json(pt.usd_per_million_tokens);
      j["capex_usd"] = opt_json(pt.capex_usd);
      j["usd_per_gpu_hour"] = opt_json(pt.usd_per_gpu_hour);
      j["peak_facility_power_w"] = pt.peak_facility_power_w;
      j["meets_deadline"] = pt.meets_deadline;
      j["within_budget"] = pt.within_budget;
      j["within_capex_budget"] = pt.within_capex_budget;
      j["pareto"] = pt.pareto;
      j["best"] = p.best == i;
    } else {
      // The same fields as plan.csv: an infeasible point meets nothing and is on no front.
      if (p.ecmp_seeds > 1) j["ecmp_seed"] = nullptr;
      j["meets_deadline"] = false;
      j["within_budget"] = false;
      j["within_capex_budget"] = false;
      j["pareto"] = false;
      j["best"] = false;
      j["reason"] = pt.reason;
    }
    points.push_back(std::move(j));
  }
  config::Json front = config::Json::array();
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    if (p.points[i].pareto) front.push_back(i);
  }
  return {{"scenario", p.scenario},
          {"job", p.job},
          {"model", p.model},
          // The scenario's first error where it does not hold as written; null where it does.
          {"base_problem", p.base_problem.empty() ? config::Json(nullptr) : config::Json(p.base_problem)},
          {"train_tokens", p.train_tokens},
          {"deadline_s", p.deadline_s},
          {"budget_usd", opt_json(p.budget_usd)},
          {"capex_budget_usd", opt_json(p.capex_budget_usd)},
          {"search_space",
           {{"nodes", p.node_counts},
            {"topologies", p.topologies},
            {"tp", p.tps},
            {"pp", p.pps},
            {"dp", "GPUs / (tp x cp x pp)"},
            {"network_model", "analytical"},
            {"failure_replications", p.replications}}},
          {"points", std::move(points)},
          {"pareto", std::move(front)},
          {"best", p.best ? config::Json(*p.best) : config::Json(nullptr)}};
}

}  // namespace clustersim::tools
