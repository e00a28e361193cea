#include "models/calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/check.hpp"

namespace clustersim::calibration {
namespace {

using compute::Dtype;

constexpr Dtype kDtypes[] = {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8};

std::optional<double>& efficiency_slot(compute::DtypeEfficiency& e, Dtype d) {
  switch (d) {
    case Dtype::fp32:
      return e.fp32;
    case Dtype::tf32:
      return e.tf32;
    case Dtype::bf16:
      return e.bf16;
    case Dtype::fp16:
      return e.fp16;
    case Dtype::fp8:
      break;
  }
  return e.fp8;
}

/// Weighted least squares of t = a + b x with weights w; returns (a, b).
std::pair<double, double> weighted_line(const std::vector<std::tuple<double, double, double>>& xtw) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, t, w] : xtw) {
    sw += w;
    sx += w * x;
    sy += w * t;
    sxx += w * x * x;
    sxy += w * x * t;
  }
  const double det = sw * sxx - sx * sx;
  if (sw <= 0.0) return {0.0, 0.0};
  if (std::abs(det) <= 1e-300 * std::max(1.0, sw * sxx)) return {sy / sw, 0.0};
  const double b = (sw * sxy - sx * sy) / det;
  return {(sy - b * sx) / sw, b};
}

/// The same with a >= 0 and b > 0 (a line of a collective regime).
std::pair<double, double> regime_line(const std::vector<std::tuple<double, double, double>>& xtw) {
  auto [a, b] = weighted_line(xtw);
  if (b <= 1e-18) {  // flat: pure latency (bandwidth far beyond any link)
    double sw = 0, sy = 0;
    for (const auto& [x, t, w] : xtw) {
      sw += w;
      sy += w * t;
    }
    return {sy / sw, 1e-18};
  }
  if (a < 0.0) {  // through the origin
    double sxt = 0, sxx = 0;
    for (const auto& [x, t, w] : xtw) {
      sxt += w * x * t;
      sxx += w * x * x;
    }
    return {0.0, sxt / sxx};
  }
  return {a, b};
}

std::string shape_label(const GemmPoint& g) {
  return g.shape.batch == 1 ? fmt::format("{}x{}x{}", g.shape.m, g.shape.n, g.shape.k)
                            : fmt::format("{}x{}x{}x{}", g.shape.batch, g.shape.m, g.shape.n, g.shape.k);
}

/// Squared log error of the GEMM points under `p`, after fitting each datatype's
/// efficiency in closed form (written into p).
double fit_gemm_efficiencies(const std::vector<GemmPoint>& points, compute::ComputeProfile& p) {
  const double launch = p.launch_overhead.seconds();
  for (Dtype d : kDtypes) {
    std::optional<double>& slot = efficiency_slot(p.gemm_efficiency_by_dtype, d);
    double eff = slot.value_or(p.gemm_efficiency);
    bool any = false;
    for (int iter = 0; iter < 6; ++iter) {
      double sum = 0.0;
      int n = 0;
      for (const GemmPoint& g : points) {
        if (g.dtype != d || g.seconds <= launch) continue;
        const double peak = compute::peak_flops(d, p);
        const double eff_shape = compute::gemm_shape_efficiency(g.shape, p) / compute::gemm_efficiency(Dtype::bf16, p);
        const auto& s = g.shape;
        const double flops = 2.0 * double(s.batch) * double(s.m) * double(s.n) * double(s.k);
        const double t1 = flops / (peak * eff_shape);  // compute time at efficiency 1
        const double mem = double(s.batch) * double(s.m * s.k + s.k * s.n + s.m * s.n) * compute::dtype_bytes(d) /
                           p.hbm_bandwidth.value();
        if (t1 / eff < mem) continue;  // memory-bound at the current estimate
        sum += std::log(t1 / (g.seconds - launch));
        ++n;
      }
      if (n == 0) break;
      any = true;
      eff = std::clamp(std::exp(sum / n), 1e-4, 1.0);
    }
    if (any) slot = eff;
  }
  double sse = 0.0;
  for (const GemmPoint& g : points) {
    if (compute::peak_flops(g.dtype, p) <= 0.0) continue;
    const double e = std::log(compute::gemm_seconds(g.shape, g.dtype, p) / g.seconds);
    sse += e * e;
  }
  return sse;
}

}  // namespace

std::optional<std::string> catalog_gpu_for(const std::string& device_name) {
  std::string n;
  for (char c : device_name) n += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("GB200")) return "gb200";
  if (has("B200")) return "b200";
  if (has("H200")) return "h200-sxm";
  if (has("H100") && !has("PCIE") && !has("NVL")) return "h100-sxm";
  if (has("A100") && has("80GB") && !has("PCIE")) return "a100-sxm-80gb";
  if (has("A100") && !has("PCIE")) return "a100-sxm-40gb";
  if (has("MI300X")) return "mi300x";
  return std::nullopt;
}

compute::ComputeProfile fit_compute(const Measurements& m, const compute::ComputeProfile& base, FitReport& report) {
  compute::ComputeProfile p = base;
  if (m.device) p.sms = m.device->sm_count;

  // Launch overhead.
  std::optional<double> launch;
  for (const LaunchPoint& l : m.launch) {
    if (l.kind == "stream") launch = l.seconds;
  }
  // HBM bandwidth from device-to-device copies.
  std::vector<std::tuple<double, double, double>> copies;
  for (const MemoryPoint& mp : m.memory) {
    if (mp.kind == "d2d_copy") copies.emplace_back(mp.moved, mp.seconds, 1.0 / (mp.seconds * mp.seconds));
  }
  if (copies.size() >= 2) {
    const auto [a, b] = weighted_line(copies);
    if (b > 0.0) {
      p.hbm_bandwidth = sim::Bandwidth::of(1.0 / b);
      report.notes.push_back(fmt::format("hbm_bandwidth {:.4g} GB/s from {} device-to-device copies (intercept {:.3g} us)",
                                         1e-9 / b, copies.size(), a * 1e6));
      if (!launch && a > 0.0) {
        launch = a;
        report.notes.push_back("launch_overhead: no 'stream' launch record; the copies' intercept is used");
      }
    }
  } else {
    report.notes.push_back("hbm_bandwidth: no device-to-device copies measured; the built-in value is kept");
  }
  if (launch) {
    p.launch_overhead = sim::Time::from_seconds(*launch);
    report.notes.push_back(fmt::format("launch_overhead {:.3g} us", *launch * 1e6));
  } else {
    report.notes.push_back("launch_overhead: not measured; the built-in value is kept");
  }

  // GEMM shape terms and per-datatype efficiencies.
  std::vector<GemmPoint> gemm;
  for (const GemmPoint& g : m.gemm) {
    if (compute::peak_flops(g.dtype, p) > 0.0) gemm.push_back(g);
  }
  if (!gemm.empty()) {
    const std::pair<std::int64_t, std::int64_t> tiles[] = {{64, 64},   {64, 128},  {128, 64}, {128, 128},
                                                           {128, 256}, {256, 128}, {64, 256}, {256, 64}};
    double best_sse = std::numeric_limits<double>::infinity();
    compute::ComputeProfile best = p;
    for (const auto& [tm, tn] : tiles) {
      compute::ComputeProfile trial = p;
      trial.tile_m = tm;
      trial.tile_n = tn;
      trial.gemm_efficiency_by_dtype = {};
      const auto sse_at = [&](double k_half) {
        trial.k_half = k_half;
        return fit_gemm_efficiencies(gemm, trial);
      };
      // Grid over k_half = 0 and 2^0 .. 2^13 in quarter octaves, then golden section.
      std::vector<double> grid{0.0};
      for (int i = 0; i <= 52; ++i) grid.push_back(std::pow(2.0, i / 4.0));
      std::size_t bi = 0;
      double bv = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < grid.size(); ++i) {
        const double v = sse_at(grid[i]);
        if (v < bv) {
          bv = v;
          bi = i;
        }
      }
      double lo = grid[bi == 0 ? 0 : bi - 1];
      double hi = grid[std::min(bi + 1, grid.size() - 1)];
      const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
      double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
      double f1 = sse_at(x1), f2 = sse_at(x2);
      for (int it = 0; it < 80 && hi - lo > 1e-9 * std::max(1.0, hi); ++it) {
        if (f1 < f2) {
          hi = x2;
          x2 = x1;
          f2 = f1;
          x1 = hi - phi * (hi - lo);
          f1 = sse_at(x1);
        } else {
          lo = x1;
          x1 = x2;
          f1 = f2;
          x2 = lo + phi * (hi - lo);
          f2 = sse_at(x2);
        }
      }
      double k_half = 0.5 * (lo + hi);
      double sse = sse_at(k_half);
      if (bv < sse) {
        k_half = grid[bi];
        sse = sse_at(k_half);
      }
      if (sse < best_sse) {
        best_sse = sse;
        best = trial;
      }
    }
    p = best;
    const std::optional<double> bf16 = p.gemm_efficiency_by_dtype.bf16;
    for (Dtype d : kDtypes) {
      const auto& slot = efficiency_slot(p.gemm_efficiency_by_dtype, d);
      if (!slot) continue;
      if (!bf16 && d != Dtype::bf16) p.gemm_efficiency = *slot;
      report.notes.push_back(fmt::format("gemm {}: efficiency {:.4f}, achieved peak {:.4g} TFLOP/s of {:.4g}",
                                         config::enum_name(d), *slot, *slot * compute::peak_flops(d, p) / 1e12,
                                         compute::peak_flops(d, p) / 1e12));
    }
    if (bf16) p.gemm_efficiency = *bf16;
    report.notes.push_back(fmt::format("gemm shape terms: tile {}x{}, k_half {:.4g}, on {} SMs", p.tile_m, p.tile_n,
                                       p.k_half, p.sms));
    for (const GemmPoint& g : gemm) {
      report.points.push_back(FitPoint{fmt::format("gemm/{}", config::enum_name(g.dtype)), shape_label(g), g.seconds,
                                       compute::gemm_seconds(g.shape, g.dtype, p), true, 0.0});
    }
  } else {
    report.notes.push_back("gemm: no GEMM measured; the built-in efficiency and shape terms are kept");
  }
  for (const MemoryPoint& mp : m.memory) {
    if (mp.kind == "h2d" || mp.kind == "d2h") continue;
    report.points.push_back(FitPoint{fmt::format("memory/{}", mp.kind), sim::human(sim::Bytes::of(mp.moved)), mp.seconds,
                                     compute::memory_seconds(mp.moved, p), mp.kind == "d2d_copy", mp.moved});
  }
  for (const char* kind : {"h2d", "d2h"}) {
    std::vector<std::tuple<double, double, double>> xs;
    for (const MemoryPoint& mp : m.memory) {
      if (mp.kind == kind) xs.emplace_back(mp.moved, mp.seconds, 1.0 / (mp.seconds * mp.seconds));
    }
    if (xs.size() < 2) continue;
    const auto [a, b] = weighted_line(xs);
    if (b > 0.0) {
      report.notes.push_back(fmt::format("host link {}: {:.4g} GB/s, latency {:.3g} us (not used by the models)", kind,
                                         1e-9 / b, a * 1e6));
    }
  }
  for (const std::string& s : m.skipped) report.notes.push_back("skipped: " + s);
  return p;
}

CollectiveFit fit_collective_series(const std::vector<CollectivePoint>& points, int max_regimes) {
  CLUSTERSIM_CHECK(!points.empty(), "fit_collective_series: no points");
  CollectiveFit fit;
  fit.op = points.front().op;
  fit.ranks = points.front().ranks;
  fit.nodes = points.front().nodes;
  fit.level = fit.nodes > 1 ? Level::scaleout : Level::scaleup;
  const double factor = network::bus_factor(fit.op, fit.ranks);
  std::vector<double> sizes;
  for (const CollectivePoint& p : points) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const std::size_t n = sizes.size();

  using Line = std::pair<double, double>;
  const auto line_for = [&](std::size_t from, std::size_t to) {  // sizes [from, to)
    std::vector<std::tuple<double, double, double>> xs;
    for (const CollectivePoint& p : points) {
      if (p.bytes >= sizes[from] && p.bytes <= sizes[to - 1]) xs.emplace_back(p.bytes, p.seconds, 1.0 / (p.seconds * p.seconds));
    }
    return regime_line(xs);
  };
  const auto worst = [&](const std::vector<Line>& lines) {
    double w = 0.0;
    for (const CollectivePoint& p : points) {
      double t = std::numeric_limits<double>::infinity();
      for (const auto& [a, b] : lines) t = std::min(t, a + b * p.bytes);
      w = std::max(w, std::abs(t / p.seconds - 1.0));
    }
    return w;
  };
  std::vector<Line> chosen;
  std::vector<std::size_t> chosen_starts;
  double chosen_worst = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= max_regimes; ++k) {
    if (static_cast<std::size_t>(2 * k) > n && k > 1) break;
    std::vector<Line> best_lines;
    std::vector<std::size_t> best_starts;
    double best = std::numeric_limits<double>::infinity();
    // Cuts c1 < c2 < ... (segment starts), each segment at least 2 sizes (1 if only one size).
    std::vector<std::size_t> starts{0};
    const auto search = [&](auto&& self, std::size_t from) -> void {
      if (static_cast<int>(starts.size()) == k) {
        if (n - starts.back() < std::min<std::size_t>(2, n)) return;
        std::vector<Line> lines;
        for (std::size_t s = 0; s < starts.size(); ++s) {
          lines.push_back(line_for(starts[s], s + 1 < starts.size() ? starts[s + 1] : n));
        }
        const double w = worst(lines);
        if (w < best) {
          best = w;
          best_lines = lines;
          best_starts = starts;
        }
        return;
      }
      for (std::size_t c = from + 2; c + 2 <= n; ++c) {
        starts.push_back(c);
        self(self, c);
        starts.pop_back();
      }
    };
    search(search, 0);
    if (best_lines.empty()) break;
    if (best < chosen_worst - 0.01 || chosen.empty()) {
      chosen = best_lines;
      chosen_starts = best_starts;
      chosen_worst = best;
    }
  }
  for (std::size_t r = 0; r < chosen.size(); ++r) {
    Regime reg;
    reg.from = sim::Bytes::of(sizes[chosen_starts[r]]);
    reg.latency = sim::Time::from_seconds(chosen[r].first);
    reg.busbw = sim::Bandwidth::of(factor / chosen[r].second);
    fit.regimes.push_back(reg);
  }
  return fit;
}

std::vector<CollectiveFit> fit_collectives(const std::vector<CollectivePoint>& points, FitReport& report) {
  std::map<std::tuple<network::Op, std::int64_t, std::int64_t>, std::vector<CollectivePoint>> series;
  for (const CollectivePoint& p : points) series[{p.op, p.ranks, p.nodes}].push_back(p);
  std::vector<CollectiveFit> fits;
  for (const auto& [key, pts] : series) {
    const auto& [op, ranks, nodes] = key;
    const std::string group = fmt::format("collective/{}/{}x{}", config::enum_name(op), nodes, ranks / nodes);
    std::vector<double> sizes;
    for (const auto& p : pts) sizes.push_back(p.bytes);
    std::sort(sizes.begin(), sizes.end());
    if (std::unique(sizes.begin(), sizes.end()) - sizes.begin() < 2) {
      report.notes.push_back(fmt::format("{}: fewer than two sizes; not fitted", group));
      continue;
    }
    CollectiveFit fit = fit_collective_series(pts);
    for (const CollectivePoint& p : pts) {
      report.points.push_back(FitPoint{group, sim::human(sim::Bytes::of(p.bytes)), p.seconds,
                                       collective_seconds(fit, p.bytes), true, p.bytes});
    }
    std::string regimes;
    for (const Regime& r : fit.regimes) {
      regimes += fmt::format("{}from {}: latency {:.2f} us, busbw {:.2f} GB/s", regimes.empty() ? "" : "; ",
                             sim::human(r.from), r.latency.seconds() * 1e6, r.busbw.value() / 1e9);
    }
    report.notes.push_back(fmt::format("{} ({}): {}", group, config::enum_name(fit.level), regimes));
    fits.push_back(std::move(fit));
  }
  return fits;
}

NetworkCalibration network_from(const std::vector<CollectiveFit>& fits, const FitTarget& target, FitReport& report) {
  NetworkCalibration n;
  const CollectiveFit* up = nullptr;
  const CollectiveFit* out = nullptr;
  std::vector<std::tuple<double, double, double>> alphas;  // per scale-up rank count: 2(n-1), latency
  for (const CollectiveFit& f : fits) {
    if (f.op != network::Op::all_reduce || f.regimes.empty()) continue;
    if (f.level == Level::scaleup) {
      if (!up || f.ranks > up->ranks) up = &f;
      alphas.emplace_back(2.0 * double(f.ranks - 1), f.regimes.front().latency.seconds(), 1.0);
    } else if (!out || f.ranks > out->ranks) {
      out = &f;
    }
  }
  const auto efficiency = [&](const CollectiveFit& f, double line, const char* what) -> std::optional<double> {
    const double busbw = f.regimes.back().busbw.value();
    if (line <= 0.0) {
      report.notes.push_back(fmt::format("{}: no line rate known; not fitted", what));
      return std::nullopt;
    }
    const double e = busbw / line;
    if (e > 1.0 || e < 0.01) {
      report.notes.push_back(fmt::format("{}: all-reduce busbw {:.1f} GB/s is {:.0f}% of the {:.1f} GB/s line rate: "
                                         "outside the model's range (in-network reduction, or a tree across nodes?); "
                                         "not set",
                                         what, busbw / 1e9, 100 * e, line / 1e9));
      return std::nullopt;
    }
    report.notes.push_back(fmt::format("{} {:.4f}: all-reduce busbw {:.1f} GB/s over {:.1f} GB/s line rate ({} ranks)",
                                       what, e, busbw / 1e9, line / 1e9, f.ranks));
    return e;
  };
  if (up) n.scaleup_efficiency = efficiency(*up, target.scaleup_line, "scaleup_efficiency");
  if (out) n.scaleout_efficiency = efficiency(*out, target.nic_line_per_gpu, "scaleout_efficiency");
  if (!alphas.empty()) {
    double c = std::get<1>(alphas.front());
    double s = 0.0;
    if (alphas.size() >= 2) {
      const auto [a, b] = weighted_line(alphas);
      if (b >= 0.0 && a >= 0.0) {
        c = a;
        s = b;
      }
    }
    n.call_overhead = sim::Time::from_seconds(c);
    n.step_latency = sim::Time::from_seconds(s);
    report.notes.push_back(fmt::format("call_overhead {:.2f} us, step_latency {:.3f} us (from {} scale-up rank count{})",
                                       c * 1e6, s * 1e6, alphas.size(), alphas.size() == 1 ? ": step_latency 0" : "s"));
  }
  return n;
}

CalibrationProfile fit_profile(const Measurements& m, const FitTarget& target, FitReport& report) {
  CalibrationProfile p;
  p.gpu = target.gpu_name;
  p.kind = "measured";
  const compute::ComputeProfile base = compute::default_profile(target.gpu_name, target.gpu);
  if (!m.gemm.empty() || !m.memory.empty() || !m.launch.empty()) {
    p.compute = fit_compute(m, base, report);
    p.compute->gpu = target.gpu_name;
  }
  if (m.device) {
    DeviceRecord d;
    d.name = m.device->name;
    d.sm_count = m.device->sm_count;
    d.driver_version = m.device->driver_version;
    d.cuda_version = m.device->cuda_version;
    p.device = d;
  }
  if (!m.collectives.empty()) {
    p.collectives = fit_collectives(m.collectives, report);
    NetworkCalibration n = network_from(p.collectives, target, report);
    if (n.scaleup_efficiency || n.scaleout_efficiency || n.call_overhead) p.network = n;
  }
  return p;
}

ErrorSummary summarize(const std::vector<FitPoint>& points, const std::string& group_prefix, double min_bytes) {
  ErrorSummary s;
  std::vector<double> errs;
  for (const FitPoint& p : points) {
    if (p.group.rfind(group_prefix, 0) != 0 || p.bytes < min_bytes) continue;
    const double e = std::abs(p.error());
    errs.push_back(e);
    if (e >= s.worst) {
      s.worst = e;
      s.worst_label = p.group + " " + p.label;
    }
  }
  s.count = errs.size();
  if (errs.empty()) return s;
  std::sort(errs.begin(), errs.end());
  s.median = errs.size() % 2 ? errs[errs.size() / 2] : 0.5 * (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]);
  return s;
}

}  // namespace clustersim::calibration
