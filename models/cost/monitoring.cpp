#include "models/cost/monitoring.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace clustersim::cost {

namespace {
/// The hint for a rollup interval: ten times the finer one, where that is a time.
std::string coarser_hint(sim::Time finer) {
  if (finer.ns() > std::numeric_limits<std::int64_t>::max() / 10) {
    return "a coarser interval, or a finer sampling interval";
  }
  return fmt::format("interval: {}", sim::format_time(finer * 10));
}
}  // namespace

std::vector<ConfigProblem> check_monitoring(const MonitoringConfig& m) {
  std::vector<ConfigProblem> out;
  if (m.interval.ns() <= 0) out.push_back({"interval", "must be positive", "interval: 30s"});
  if (m.retention.ns() <= 0) out.push_back({"retention", "must be positive", "retention: 365d"});
  if (m.bytes_per_sample.value() <= 0.0) {
    out.push_back({"bytes_per_sample", "must be positive", "bytes_per_sample: 16B (a timestamp and a value)"});
  }
  sim::Time prev_after = sim::Time::zero();
  sim::Time prev_interval = m.interval;
  for (std::size_t i = 0; i < m.rollups.size(); ++i) {
    const Rollup& r = m.rollups[i];
    const std::string at = fmt::format("rollups[{}]", i);
    if (r.after.ns() == 0) {
      out.push_back({at + ".after", "must be positive (missing counts as 0): a rollup needs the age from which it applies",
                     "after: 40h"});
    } else if (r.after <= prev_after) {
      out.push_back({at + ".after",
                     i == 0 ? std::string("must be after 0 (the raw samples come first)")
                            : fmt::format("must be later than the previous rollup's after ({}): rollups go by "
                                          "increasing age",
                                          sim::format_time(prev_after)),
                     "rollups: [{after: 40h, interval: 5min}, {after: 10d, interval: 1h}]"});
    }
    if (r.interval.ns() == 0) {
      out.push_back({at + ".interval", "must be positive (missing counts as 0): a rollup keeps one point per series per interval",
                     coarser_hint(prev_interval.ns() > 0 ? prev_interval : sim::Time::from_ns(30'000'000'000))});
    } else if (r.interval <= prev_interval) {
      out.push_back({at + ".interval",
                     fmt::format("must be coarser than {} ({}): a rollup keeps fewer points than what it replaces",
                                 i == 0 ? "the sampling interval" : "the previous rollup's interval",
                                 sim::format_time(prev_interval)),
                     coarser_hint(prev_interval)});
    }
    // Samples are deleted at the retention: a level from there on would hold none (it was
    // left out of the storage without a word).
    // (Not beside an after already in error.)
    if (r.after.ns() > 0 && r.after > prev_after && m.retention.ns() > 0 && r.after >= m.retention) {
      out.push_back({at + ".after",
                     fmt::format("{} is at or past monitoring.retention ({}): samples are deleted before they reach "
                                 "this rollup",
                                 sim::format_time(r.after), sim::format_time(m.retention)),
                     fmt::format("an after below {}, a longer retention, or remove the rollup",
                                 sim::format_time(m.retention))});
    }
    prev_after = std::max(prev_after, r.after);
    prev_interval = std::max(prev_interval, r.interval);
  }
  return out;
}

MonitoringLoad monitoring_load(std::int64_t gpus, std::int64_t hosts, std::int64_t switches, const MonitoringConfig& m) {
  MonitoringLoad l;
  l.series_gpus = gpus * m.metrics_per_gpu;
  l.series_nodes = hosts * m.metrics_per_node;
  l.series_switches = switches * m.metrics_per_switch;
  l.series = l.series_gpus + l.series_nodes + l.series_switches;
  const auto s = static_cast<double>(l.series);
  const double interval = m.interval.seconds();
  const double b = m.bytes_per_sample.value();
  l.samples_per_s = s / interval;
  l.ingest_bytes_per_s = l.samples_per_s * b;
  l.stored_bytes_per_day = s * (86400.0 / interval) * b / m.compression;
  l.retention_s = m.retention.seconds();

  // Level 0 is the raw samples; each rollup starts a level at its `after`.
  struct Start {
    double after_s;
    double interval_s;
    std::int64_t aggregates;
  };
  std::vector<Start> starts{{0.0, interval, 1}};
  for (const Rollup& r : m.rollups) starts.push_back({r.after.seconds(), r.interval.seconds(), r.aggregates});
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const double from = starts[k].after_s;
    const double to = std::min(k + 1 < starts.size() ? starts[k + 1].after_s : l.retention_s, l.retention_s);
    if (to <= from) continue;
    MonitoringLevel level;
    level.from_s = from;
    level.to_s = to;
    level.interval_s = starts[k].interval_s;
    level.aggregates = starts[k].aggregates;
    level.bytes = s * ((to - from) / level.interval_s) * static_cast<double>(level.aggregates) * b / m.compression;
    l.stored_bytes_at_retention += level.bytes;
    l.levels.push_back(level);
  }
  return l;
}

config::Json to_json(const MonitoringLoad& l) {
  config::Json levels = config::Json::array();
  for (const MonitoringLevel& v : l.levels) {
    levels.push_back({{"from_s", v.from_s},
                      {"to_s", v.to_s},
                      {"interval_s", v.interval_s},
                      {"aggregates", v.aggregates},
                      {"stored_bytes", v.bytes}});
  }
  return {{"series", l.series},
          {"series_by_source", {{"gpus", l.series_gpus}, {"nodes", l.series_nodes}, {"switches", l.series_switches}}},
          {"samples_per_s", l.samples_per_s},
          {"ingest_bytes_per_s", l.ingest_bytes_per_s},
          {"stored_bytes_per_day", l.stored_bytes_per_day},
          {"retention_s", l.retention_s},
          {"stored_bytes_at_retention", l.stored_bytes_at_retention},
          {"levels", std::move(levels)}};
}

}  // namespace clustersim::cost
