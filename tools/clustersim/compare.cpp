#include "tools/clustersim/compare.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/scenario.hpp"
#include "sim/stats.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/sweep.hpp"

namespace clustersim::tools {
namespace {

/// One scenario's figures, in the rows' order.
struct Figures {
  std::vector<std::optional<double>> values;
  std::vector<std::optional<double>> ci95;  ///< the 95% half-widths of the values that have one
  std::vector<std::vector<double>> samples;  ///< per replication, for the rows that pair them
};

struct RowSpec {
  const char* metric;
  const char* key;
  const char* unit;
  Better better;
};

constexpr RowSpec kRows[] = {
    {"GPUs", "gpus", "count", Better::none},
    {"fabric capex (NICs in)", "fabric_capex_usd", "USD", Better::lower},
    {"fabric power (NICs in)", "fabric_power_w", "W", Better::lower},  // the NICs are in node power too
    {"peak IT power", "it_power_w", "W", Better::lower},
    {"peak facility power", "peak_facility_power_w", "W", Better::lower},
    {"capex", "capex_usd", "USD", Better::lower},
    // Not starred: energy is charged for the GPUs' busy share, so a cluster idle or down more
    // (fewer spares, a job finished early) prices its hours lower; total cost and cost per
    // trained token rank the designs.
    {"cost per GPU-hour", "usd_per_gpu_hour", "USD/GPU-h", Better::none},
    {"bisection bandwidth", "bisection_bandwidth_Bps", "B/s", Better::higher},
    {"step time", "step_time_s", "s", Better::lower},
    {"step time, fastest ECMP seed", "step_time_min_s", "s", Better::none},
    {"step time, slowest ECMP seed", "step_time_max_s", "s", Better::none},
    // Which draw the column is (the JSON's ecmp_seed): fabric.ecmp_seed reruns it.
    {"ECMP seed of the median draw", "ecmp_seed", "id", Better::none},
    {"throughput", "tokens_per_s", "tokens/s", Better::higher},
    {"MFU", "mfu", "fraction", Better::higher},
    {"memory per GPU", "memory_per_gpu_bytes", "B", Better::none},
    {"ETTR", "ettr", "fraction", Better::higher},
    // Not starred: each trades against the other (checkpoint rarely: fewer hours writing,
    // more lost) and against the ETTR (a job down half the time writes little): ETTR ranks.
    {"lost GPU-hours (lost work, downtime)", "lost_gpu_hours", "GPU-h", Better::none},
    {"GPU-hours blocked writing checkpoints", "checkpoint_gpu_hours", "GPU-h", Better::none},
    {"cluster utilisation", "utilisation", "fraction", Better::higher},
    // Of the jobs that started: one still queued at the horizon has no wait to average (a
    // policy that left two jobs queued read 0 s, as one that started them all at once), so
    // the jobs that never started are a row of their own.
    {"mean queue wait (jobs that started)", "mean_queue_wait_s", "s", Better::lower},
    {"jobs never started", "jobs_never_started", "count", Better::lower},
    {"time to train", "time_to_train_s", "s", Better::lower},
    {"total cost", "total_cost_usd", "USD", Better::lower},
    {"cost per million trained tokens", "usd_per_million_tokens", "USD", Better::lower},
};

/// The row of `key` in kRows.
constexpr std::size_t row_of(std::string_view key) {
  for (std::size_t i = 0; i < std::size(kRows); ++i) {
    if (key == kRows[i].key) return i;
  }
  return std::size(kRows);
}

std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

Figures figures(const scenario::LoadedScenario& loaded, const RunResult& r) {
  Figures f;
  f.values.resize(std::size(kRows));
  f.ci95.resize(std::size(kRows));
  f.samples.resize(std::size(kRows));
  const auto v = [&](std::string_view key) -> std::optional<double>& {
    const std::size_t i = row_of(key);
    if (i >= f.values.size()) throw std::logic_error(fmt::format("compare: no row '{}'", key));
    return f.values[i];
  };
  v("gpus") = static_cast<double>(r.inventory.gpus);
  if (r.fabric) {
    if (r.fabric->capex) v("fabric_capex_usd") = r.fabric->capex->value();
    if (r.fabric->power) v("fabric_power_w") = r.fabric->power->value();
    v("bisection_bandwidth_Bps") = r.fabric->bisection_bandwidth.value();
  }
  // The cost model's peak IT power: GPUs, hosts, network and idle spares, which differ
  // between the topologies compared (the inventory's figure is the nodes' alone).
  v("it_power_w") = r.cost.peak.it.value();
  v("peak_facility_power_w") = r.cost.peak.facility.value();
  if (r.cost.capex) v("capex_usd") = r.cost.capex->value();
  if (r.cost.usd_per_gpu_hour) v("usd_per_gpu_hour") = finite(*r.cost.usd_per_gpu_hour);
  if (r.reliability) {
    v("utilisation") = finite(r.reliability->utilisation.mean);
    f.ci95[row_of("utilisation")] = finite(r.reliability->utilisation.ci95);
    v("mean_queue_wait_s") = finite(reliability::mean_queue_wait_s(*r.reliability));
    v("jobs_never_started") = static_cast<double>(reliability::jobs_never_started(*r.reliability));
  }
  if (!r.jobs.empty()) {
    const workload::StepResult& st = r.jobs[0];
    v("step_time_s") = finite(st.step_time_s);
    v("tokens_per_s") = finite(st.tokens_per_s);
    v("mfu") = finite(st.mfu);
    v("memory_per_gpu_bytes") = finite(st.memory.total);
    if (r.reliability && !r.reliability->jobs.empty()) {
      const reliability::JobSummary& s = r.reliability->jobs[0];
      v("ettr") = finite(s.ettr.mean);
      f.ci95[row_of("ettr")] = finite(s.ettr.ci95);
      f.samples[row_of("ettr")] = s.ettr_by_replication;
      v("lost_gpu_hours") = finite(reliability::total_lost_gpu_hours(s));
      v("checkpoint_gpu_hours") = finite(s.checkpoint_gpu_hours.mean);
    }
    v("time_to_train_s") = finite(time_to_train_s(loaded, r, 0));
    if (!r.training.empty() && r.training[0]) {
      if (r.training[0]->cost_usd) v("total_cost_usd") = finite(*r.training[0]->cost_usd);
      if (r.training[0]->usd_per_million_tokens) {
        v("usd_per_million_tokens") = finite(*r.training[0]->usd_per_million_tokens);
      }
    }
  }
  return f;
}

/// Four significant digits, trailing zeros kept: "2.800" beside "2.801" (it read "2.8"), "48.80"
/// beside "46.54"; no lone point ("1000", not "1000.").
std::string sig4(double v) {
  if (v == 0.0) return "0";
  std::string text = fmt::format("{:#.4g}", v);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

/// "1.168 M" style: four significant digits and an SI prefix. Money takes no prefix below 1
/// ("0.03989 USD", not "39.89 mUSD", which reads as millions at a glance).
std::string si(double v, std::string_view unit) {
  if (unit == "fraction") return fmt::format("{:.1f}%", 100.0 * v);
  if (unit == "count" || unit == "id") return fmt::format("{:.0f}", v);  // id: a number that names (a seed)
  if (unit == "USD/GPU-h") return fmt::format("{:.3f} USD/GPU-h", v);
  if (unit == "GPU-h") return grouped(v) + " GPU-h";
  if (unit == "s" && v >= 86400.0) return fmt::format("{:.2f} d", v / 86400.0);
  if (unit == "s" && v >= 3600.0) return fmt::format("{:.2f} h", v / 3600.0);
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1.0, ""}, {1e-3, "m"}, {1e-6, "u"}};
  const bool money = unit == "USD";
  // Tokens as run counts them (282.5K tokens/s, 15.6T tokens: K, M, B, T), not 282.5 ktokens/s.
  if (unit.starts_with("tokens") && std::abs(v) >= 1e3) {
    static constexpr std::pair<double, const char*> kCounts[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (const auto& [scale, prefix] : kCounts) {
      if (std::abs(v) >= scale) return fmt::format("{}{} {}", sig4(v / scale), prefix, unit);
    }
  }
  for (const auto& [scale, prefix] : kPrefixes) {
    // Money's billions are B, as run prints them and scenarios write them (1.489 BUSD; a
    // G read as another unit beside run's table).
    const std::string_view p = money && scale == 1e9 ? "B" : prefix;
    if (std::abs(v) >= scale || (money && scale == 1.0)) return fmt::format("{} {}{}", sig4(v / scale), p, unit);
  }
  return fmt::format("{} {}", sig4(v), unit);
}

std::string_view better_text(Better b) {
  switch (b) {
    case Better::lower: return "lower";
    case Better::higher: return "higher";
    case Better::none: return "";
  }
  return "";
}

}  // namespace

void mark_best(CompareRow& row) {
  row.best.assign(row.values.size(), false);
  if (row.better == Better::none) return;
  std::optional<double> best;
  std::size_t best_at = 0;
  std::size_t present = 0;
  for (std::size_t i = 0; i < row.values.size(); ++i) {
    const auto& v = row.values[i];
    if (!v) continue;
    ++present;
    if (!best || (row.better == Better::lower ? *v < *best : *v > *best)) {
      best = v;
      best_at = i;
    }
  }
  if (present < 2) return;  // nothing to compare against
  // Whether the replications, paired, cannot tell value i from the best: the 95% interval of
  // the mean of their differences holds 0. Two intervals that overlap say nothing of it: the
  // designs share their failure draws, so the differences vary far less than the values.
  const auto tied = [&](std::size_t i) {
    if (i >= row.samples.size() || best_at >= row.samples.size()) return false;
    const std::vector<double>& a = row.samples[i];
    const std::vector<double>& b = row.samples[best_at];
    if (a.size() != b.size()) return false;
    sim::Welford d;
    for (std::size_t r = 0; r < a.size(); ++r) {
      if (std::isfinite(a[r]) && std::isfinite(b[r])) d.add(a[r] - b[r]);
    }
    return d.count() >= 2 && std::abs(d.mean()) <= d.ci95_half_width();
  };
  for (std::size_t i = 0; i < row.values.size(); ++i) {
    const auto& v = row.values[i];
    // A value that prints as the best one is as good: a star on 5.615 s and none on 5.615 s
    // (1.5 us apart) told nothing true. So is one within kTieShare of it, whatever its
    // rounding: the rows of one figure in two units (total cost, cost per million tokens)
    // marked different designs where one printed 2.445 USD twice and the other 38.14 and
    // 38.15 MUSD. (Two values 0.05-0.1% apart can still print alike in one unit only.)
    row.best[i] = v && (std::abs(*v - *best) <= kTieShare * std::max(std::abs(*v), std::abs(*best)) ||
                        si(*v, row.unit) == si(*best, row.unit) || tied(i));
  }
}

namespace {

/// A shared --set that changes nothing in any scenario compared is an error, as in one
/// scenario (each load sets aside the shared keys inert there: LoadedScenario::shared_inert).
/// Where the scenarios give different reasons, the error gives each, with the scenarios'
/// names.
void refuse_inert_everywhere(const std::vector<scenario::LoadedScenario>& loaded, config::Diagnostics& out) {
  if (loaded.empty()) return;
  for (const config::Diagnostic& d : loaded.front().shared_inert.items()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // message -> scenarios, first seen first
    const bool everywhere = std::all_of(loaded.begin(), loaded.end(), [&](const scenario::LoadedScenario& l) {
      const auto& items = l.shared_inert.items();
      const auto it = std::find_if(items.begin(), items.end(), [&](const config::Diagnostic& e) { return e.path == d.path; });
      if (it == items.end()) return false;
      auto r = std::find_if(reasons.begin(), reasons.end(), [&](const auto& kv) { return kv.first == it->message; });
      if (r == reasons.end()) r = reasons.insert(reasons.end(), {it->message, {}});
      r->second.push_back(l.config.name.empty() ? l.file : l.config.name);
      return true;
    });
    if (!everywhere) continue;
    if (reasons.size() == 1) {
      out.add(d.where, d.path, d.message + " (in every scenario compared)", d.hint);
      continue;
    }
    std::vector<std::string> each;
    for (const auto& [message, names] : reasons) each.push_back(fmt::format("in {}: {}", fmt::join(names, ", "), message));
    out.add(d.where, d.path, fmt::format("changes nothing in any scenario compared ({})", fmt::join(each, "; ")),
            "remove it");
  }
}

/// The designs of one file: the scenario, or each point of its `sweep:` block (named by the
/// point's `name` if the block sets it, else by its parameters).
void load_designs(const std::string& file, const CompareArgs& args, std::vector<scenario::LoadedScenario>& loaded,
                  std::vector<std::string>& labels) {
  // The grid's base is judged at its points (a job larger than its cluster, with
  // cluster.nodes a parameter, holds at each); without a grid, it is the design, loaded below.
  scenario::LoadOptions unresolved{args.sets, args.seed, false, false};
  unresolved.resolve = false;
  const scenario::LoadedScenario base = scenario::load_scenario(file, unresolved);
  SweepSpec spec;
  spec.scenario = file;
  spec.sets = args.sets;
  spec.seed = args.seed;
  spec.params = sweep_block_params(base.config);
  if (args.files.size() == 1) {  // with other files, the --set still applies to them
    config::Diagnostics bad;
    check_sets_against_params(spec, bad);
    if (!bad.ok()) throw config::InputError(std::move(bad));
  }
  // With other files the --set applies to them too: a key inert here may matter there.
  std::vector<std::string> shared;
  if (args.files.size() > 1) {
    for (const std::string& set : args.sets) shared.push_back(scenario::set_key(set));
  }
  if (spec.params.empty()) {
    scenario::LoadOptions o{args.sets, args.seed, true};
    o.shared_keys = shared;
    loaded.push_back(scenario::load_scenario(file, o));
    labels.emplace_back();
    return;
  }
  if (spec.points() > kMaxComparePoints) {
    config::Diagnostics d;
    d.add(config::Location{file, 0, 0}, "sweep",
          fmt::format("the sweep block has {} points; compare shows at most {} side by side", spec.points(),
                      kMaxComparePoints),
          fmt::format("run them with `clustersim sweep {}`", file));
    throw config::InputError(std::move(d));
  }
  const bool named = std::any_of(spec.params.begin(), spec.params.end(), [](const SweepParam& p) { return p.key == "name"; });
  config::Diagnostics bad;
  for (std::int64_t i = 0; i < spec.points(); ++i) {
    std::vector<std::string> parts;
    const std::vector<std::string> values = spec.values_of(i);
    std::vector<std::string> others;  // the grid axes: the name stands for the zipped ones
    for (std::size_t k = 0; k < values.size(); ++k) {
      parts.push_back(spec.params[k].key + "=" + values[k]);
      if (!spec.params[k].zipped && spec.params[k].key != "name") others.push_back(parts.back());
    }
    const std::string label = fmt::format("{}", fmt::join(parts, " "));
    try {
      scenario::LoadOptions o = spec.options_of(i);
      o.shared_keys = shared;
      loaded.push_back(scenario::load_scenario(file, o));
      const std::string& name = loaded.back().config.name;
      labels.push_back(!named         ? label
                       : others.empty() ? name
                                                 : fmt::format("{} ({})", name, fmt::join(others, " ")));
    } catch (const config::InputError& e) {
      // Located at the sweep block's value that caused it, where one did (the point's values
      // are applied as --set overrides, which have no place in the file).
      const config::Diagnostics located = locate_point_errors(spec, i, e.diagnostics());
      for (const config::Diagnostic& d : located.items()) {
        bad.add(d.where, d.path, fmt::format("sweep point {} ({}): {}", i, label, d.message), d.hint);
      }
    }
  }
  if (!bad.ok()) throw config::InputError(std::move(bad));
}

}  // namespace

Comparison compare(const CompareArgs& args) {
  Comparison c;
  config::Diagnostics all;
  std::vector<scenario::LoadedScenario> loaded;
  std::vector<std::string> labels;  // a sweep point's parameters, for its column title
  bool more_checks = false;          // a file stopped at a stage that leaves checks for later
  for (const std::string& file : args.files) {
    try {
      load_designs(file, args, loaded, labels);
    } catch (const config::InputError& e) {
      more_checks = more_checks || e.more_checks();
      // An error of the command line (--seed beside --set simulation.seed) is every
      // scenario's: said once.
      for (const config::Diagnostic& d : e.diagnostics().items()) {
        const bool said = std::any_of(all.items().begin(), all.items().end(), [&](const config::Diagnostic& o) {
          return o.format() == d.format();
        });
        if (!said) all.add(d.where, d.path, d.message, d.hint);
      }
    }
  }
  if (!all.ok()) throw config::InputError(std::move(all), more_checks);
  // One design on one draw has nothing to be compared with: its table would mark nothing
  // best. (With --ecmp-seeds it shows the spread of its draws.)
  if (loaded.size() == 1 && args.ecmp_seeds == 1) {
    all.add(config::Location{args.files.front()}, "",
            "one design, nothing to compare it with (the file has no sweep: block with two points or more)",
            fmt::format("name a second scenario (clustersim compare {} OTHER.yaml), see the spread of its ECMP draws "
                        "where its routes are hashed (--ecmp-seeds 7), or run it alone (clustersim run {})",
                        args.files.front(), args.files.front()));
    throw config::InputError(std::move(all));
  }
  refuse_inert_everywhere(loaded, all);
  if (!all.ok()) throw config::InputError(std::move(all));

  // One thread per scenario: the runs share nothing. With several ECMP seeds, a design
  // whose routes are hashed runs once per seed, and keeps the run of median step time.
  std::vector<RunResult> results(loaded.size());
  std::vector<std::exception_ptr> errors(loaded.size());
  std::vector<std::optional<std::pair<double, double>>> spread(loaded.size());  // fastest, slowest step
  c.ecmp_seed.assign(loaded.size(), std::nullopt);
  c.ecmp_seeds = args.ecmp_seeds;
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      threads.emplace_back([&, i] {
        try {
          EcmpDraws draws = run_ecmp_draws(loaded[i], args.ecmp_seeds);
          results[i] = std::move(draws.run);
          c.ecmp_seed[i] = draws.seed;
          if (args.ecmp_seeds > 1 && draws.seed) spread[i] = draws.steps;  // a design that hashes nothing has no spread
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
  }
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }

  for (std::size_t i = 0; i < loaded.size(); ++i) {
    std::string name = !labels[i].empty()             ? labels[i]
                       : loaded[i].config.name.empty() ? std::filesystem::path(loaded[i].file).stem().string()
                                                       : loaded[i].config.name;
    // A name taken already gets its position, and more if that is taken too ("q #3" may be
    // another scenario's own name): every column has its own name, and `best` is not ambiguous.
    const std::string given = name;
    for (std::size_t k = i + 1; std::count(c.names.begin(), c.names.end(), name) > 0; ++k) {
      name = fmt::format("{} #{}", given, k);
    }
    c.names.push_back(std::move(name));
    c.files.push_back(loaded[i].file);
    c.several_jobs = c.several_jobs || loaded[i].jobs.size() > 1;
  }
  std::vector<Figures> figs;
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    std::optional<DesignStep> step;
    if (!results[i].jobs.empty()) {
      const workload::StepResult& st = results[i].jobs[0];
      const workload::Breakdown& b = st.breakdown;
      step = DesignStep{loaded[i].jobs.front().config.name, st.step_time_s, b.compute, b.tp, b.cp, b.ep, b.pp,
                        b.dp, b.bubble, b.optimizer, b.contention};
    }
    c.steps.push_back(std::move(step));
    figs.push_back(figures(loaded[i], results[i]));
    if (spread[i]) {
      figs.back().values[row_of("step_time_min_s")] = spread[i]->first;
      figs.back().values[row_of("step_time_max_s")] = spread[i]->second;
      if (c.ecmp_seed[i]) figs.back().values[row_of("ecmp_seed")] = static_cast<double>(*c.ecmp_seed[i]);
    }
  }
  for (std::size_t r = 0; r < std::size(kRows); ++r) {
    CompareRow row{kRows[r].metric, kRows[r].key, kRows[r].unit, kRows[r].better, {}, {}};
    for (const Figures& f : figs) {
      row.values.push_back(f.values[r]);
      row.ci95.push_back(f.ci95[r]);
      row.samples.push_back(f.samples[r]);
    }
    if (std::none_of(row.values.begin(), row.values.end(), [](const auto& v) { return v.has_value(); })) continue;
    mark_best(row);
    c.rows.push_back(std::move(row));
  }
  return c;
}

std::string compare_table(const Comparison& c) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> title{""};
  title.insert(title.end(), c.names.begin(), c.names.end());
  title.push_back("better");
  cells.push_back(title);
  for (const CompareRow& row : c.rows) {
    std::vector<std::string> line{row.metric};
    for (std::size_t i = 0; i < row.values.size(); ++i) {
      std::string cell = row.values[i] ? si(*row.values[i], row.unit) : "-";
      if (row.values[i] && i < row.ci95.size() && row.ci95[i]) cell += " +- " + si(*row.ci95[i], row.unit);
      line.push_back(cell + (row.values[i] && row.best[i] ? " *" : "  "));
    }
    line.emplace_back(better_text(row.better));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> width(title.size(), 0);
  for (const auto& line : cells) {
    for (std::size_t k = 0; k < line.size(); ++k) width[k] = std::max(width[k], line[k].size());
  }
  std::string out =
      fmt::format("Comparison (*: the best of a row that has a better side, and the values within {:g}% of it; an "
                  "ETTR is marked too when the replications, paired, cannot tell it from the best. +-: the half-width "
                  "of a 95% interval over replications)\n",
                  100.0 * kTieShare);
  if (c.ecmp_seeds > 1) {
    out += fmt::format("  ({} ECMP seeds per design whose routes are hashed: each column is the run of median step "
                       "time, fastest and slowest beside it)\n",
                       c.ecmp_seeds);
  }
  for (const auto& line : cells) {
    std::string text = fmt::format("  {:<{}}", line[0], width[0]);
    for (std::size_t k = 1; k + 1 < line.size(); ++k) text += fmt::format("  {:>{}}", line[k], width[k]);
    text += fmt::format("  {}", line.back());
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  if (c.several_jobs) out += "  (step, throughput, MFU, memory, time to train and training cost: each scenario's first job)\n";
  for (std::size_t i = 0; i < c.names.size(); ++i) {
    if (c.names[i] != c.files[i]) out += fmt::format("  {}: {}\n", c.names[i], c.files[i]);
  }
  return out;
}

config::Json compare_json(const Comparison& c) {
  config::Json doc;
  config::Json scenarios = config::Json::array();
  for (std::size_t i = 0; i < c.names.size(); ++i) {
    config::Json s = {{"name", c.names[i]}, {"file", c.files[i]}};
    if (c.ecmp_seeds > 1) s["ecmp_seed"] = i < c.ecmp_seed.size() && c.ecmp_seed[i] ? config::Json(*c.ecmp_seed[i]) : config::Json();
    scenarios.push_back(std::move(s));
  }
  doc["scenarios"] = std::move(scenarios);
  doc["ecmp_seeds"] = c.ecmp_seeds;
  config::Json rows = config::Json::array();
  for (const CompareRow& row : c.rows) {
    config::Json values = config::Json::array();
    config::Json best = config::Json::array();
    config::Json ci95 = config::Json::array();
    bool has_ci = false;
    for (std::size_t i = 0; i < row.values.size(); ++i) {
      values.push_back(row.values[i] ? config::Json(*row.values[i]) : config::Json());
      if (row.best[i]) best.push_back(c.names[i]);
      const bool here = i < row.ci95.size() && row.ci95[i];
      ci95.push_back(here ? config::Json(*row.ci95[i]) : config::Json());
      has_ci = has_ci || here;
    }
    config::Json r = {{"metric", row.metric},
                      {"key", row.key},
                      {"unit", row.unit},
                      {"better", better_text(row.better)},
                      {"values", std::move(values)},
                      {"best", std::move(best)}};
    if (has_ci) r["ci95"] = std::move(ci95);  // the values' 95% half-widths over replications
    rows.push_back(std::move(r));
  }
  doc["rows"] = std::move(rows);
  return doc;
}

std::string compare_breakdown_csv(const Comparison& c) {
  std::string out = "design,job,step_time_s,compute_s,tp_s,cp_s,ep_s,pp_s,dp_s,bubble_s,optimizer_s,contention_s\n";
  for (std::size_t i = 0; i < c.names.size(); ++i) {
    if (i >= c.steps.size() || !c.steps[i]) continue;
    const DesignStep& s = *c.steps[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_quote(c.names[i]), csv_quote(s.job), s.step_time_s,
                       s.compute, s.tp, s.cp, s.ep, s.pp, s.dp, s.bubble, s.optimizer, s.contention);
  }
  return out;
}

std::string compare_csv(const Comparison& c) {
  std::string out = "metric,unit,better";
  for (const std::string& n : c.names) {
    out += ',';  // not `"," + string`: GCC 12 warns falsely under -Wrestrict
    out += csv_quote(n);
  }
  out += ",best\n";
  for (const CompareRow& row : c.rows) {
    out += fmt::format("{},{},{}", row.key, row.unit, better_text(row.better));
    std::string best;
    for (std::size_t i = 0; i < row.values.size(); ++i) {
      out += row.values[i] ? fmt::format(",{}", *row.values[i]) : std::string(",");
      if (!row.best[i]) continue;
      if (!best.empty()) best += ';';
      best += c.names[i];
    }
    out += ',';
    out += csv_quote(best);
    out += '\n';
    // The values' 95% half-widths over replications, as the table and the JSON carry them:
    // a row of their own under the figure's key (`ettr_ci95`, as sweep.csv names it), no
    // better nor best.
    if (std::none_of(row.ci95.begin(), row.ci95.end(), [](const auto& h) { return h.has_value(); })) continue;
    out += fmt::format("{}_ci95,{},", row.key, row.unit);
    for (std::size_t i = 0; i < row.values.size(); ++i) {
      const bool here = i < row.ci95.size() && row.ci95[i];
      out += here ? fmt::format(",{}", *row.ci95[i]) : std::string(",");
    }
    out += ",\n";
  }
  return out;
}

}  // namespace clustersim::tools
