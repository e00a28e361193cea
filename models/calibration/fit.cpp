#include "models/calibration/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/calibration/profile.hpp"
#include "models/fabric/fabric.hpp"
#include "models/network/network.hpp"
#include "sim/check.hpp"

namespace clustersim::calibration {
namespace {

using compute::Dtype;

/// The argument minimizing a unimodal f on [lo, hi] by golden section: `iterations` steps,
/// each shrinking the bracket by 0.618 (160 reach the resolution of a double), then the
/// bracket's midpoint.
template <class F>
double golden_section(F f, double lo, double hi, int iterations) {
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - phi * (hi - lo);
  double x2 = lo + phi * (hi - lo);
  double f1 = f(x1);
  double f2 = f(x2);
  for (int it = 0; it < iterations && hi > lo; ++it) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = f(x2);
    }
  }
  return 0.5 * (lo + hi);
}

/// Bus bandwidth given to a regime whose time does not grow with size (latency only).
constexpr double kFlatBusbw = 1e15;

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

/// A size regime's line t = a + b x, fitted by minimax relative error (Chebyshev):
/// minimizes max_i |(a + b x_i) / t_i - 1| subject to a >= 0, b >= 0.
struct MinimaxLine {
  double a = 0.0;      ///< seconds
  double b = 0.0;      ///< seconds per byte
  double worst = 0.0;  ///< the largest |relative error| over the points
};

/// For a fixed slope b: the best a >= 0 and its worst error. With p_i = t_i - b x_i the
/// error of point i is |a - p_i| / t_i, so the optimum is a weighted 1-D Chebyshev centre:
/// z = max over pairs (i, j) of (p_i - p_j) / (t_i + t_j), reached at a = p_i - z t_i.
/// O(m^2) in the m points; exact.
std::pair<double, double> best_intercept(const std::vector<std::pair<double, double>>& xt, double b) {
  double z = 0.0;
  double a = xt.front().second - b * xt.front().first;
  for (std::size_t i = 0; i < xt.size(); ++i) {
    const double pi = xt[i].second - b * xt[i].first;
    for (std::size_t j = 0; j < xt.size(); ++j) {
      const double pj = xt[j].second - b * xt[j].first;
      const double zij = (pi - pj) / (xt[i].second + xt[j].second);
      if (zij > z) {
        z = zij;
        a = pi - zij * xt[i].second;
      }
    }
  }
  if (a < 0.0) {  // the error is convex in a: on a >= 0 the best is a = 0
    a = 0.0;
    z = 0.0;
    for (const auto& [x, t] : xt) z = std::max(z, std::abs(b * x / t - 1.0));
  }
  return {a, z};
}

/// The minimax line of the points (bytes, seconds). The worst error, minimized over a, is a
/// convex function of b (a partial minimum of a convex function), so b is found by golden
/// section on [0, 2 max t_i / x_i] (beyond it every prediction is more than twice the
/// measurement). 160 iterations shrink the bracket by 0.618^160 ~ 1e-33: exact in doubles.
MinimaxLine minimax_line(const std::vector<std::pair<double, double>>& xt) {
  double hi = 0.0;
  for (const auto& [x, t] : xt) {
    if (x > 0.0) hi = std::max(hi, 2.0 * t / x);
  }
  const auto worst_at = [&](double b) { return best_intercept(xt, b).second; };
  MinimaxLine line;
  line.b = golden_section(worst_at, 0.0, hi, 160);
  std::tie(line.a, line.worst) = best_intercept(xt, line.b);
  if (const auto [a0, z0] = best_intercept(xt, 0.0); z0 < line.worst) {  // flat: latency only
    line = MinimaxLine{a0, 0.0, z0};
  }
  return line;
}

/// Repeatability of a series: the median over sizes measured more than once of
/// (max - min) / mean of their times (nccl-tests prints an out-of-place and an in-place time
/// per size); 0.5% without repeats (about that of the two logs in tests/calibration, 0.6% and
/// 0.8%).
double repeatability(const std::vector<CollectivePoint>& points) {
  std::map<double, std::vector<double>> by_size;
  for (const CollectivePoint& p : points) by_size[p.bytes].push_back(p.seconds);
  std::vector<double> spreads;
  for (const auto& [bytes, ts] : by_size) {
    if (ts.size() < 2) continue;
    const auto [mn, mx] = std::minmax_element(ts.begin(), ts.end());
    double mean = 0.0;
    for (double t : ts) mean += t / double(ts.size());
    spreads.push_back((*mx - *mn) / mean);
  }
  if (spreads.empty()) return 0.005;
  std::sort(spreads.begin(), spreads.end());
  const std::size_t k = spreads.size();
  return k % 2 ? spreads[k / 2] : 0.5 * (spreads[k / 2 - 1] + spreads[k / 2]);
}

// The lowest GEMM efficiency a profile takes (compute.gemm_efficiency and its per-datatype
// values: models/compute/profile.hpp).
constexpr double kLowestGemmEfficiency = 0.01;

std::string shape_label_of(const compute::GemmShape& s) {
  return s.batch == 1 ? fmt::format("{}x{}x{}", s.m, s.n, s.k) : fmt::format("{}x{}x{}x{}", s.batch, s.m, s.n, s.k);
}

std::string shape_label(const GemmPoint& g) { return shape_label_of(g.shape); }

/// The depth past which deeper GEMMs ran no closer to peak (compute.k_saturation), from a
/// depth sweep: the GEMMs of one datatype and m x n x batch at three or more k (bf16 first,
/// else the sweep with most depths). The smallest k within 0.5% of the sweep's best share of
/// peak, if a deeper k was measured; 0 when the share still rose at the deepest k.
struct Saturation {
  double k = 0.0;
  std::string sweep;  ///< "bf16 8192x8192xk, k 128..8192", for the note; empty: no sweep
};

Saturation saturation_depth(const std::vector<GemmPoint>& points, const compute::ComputeProfile& p) {
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::vector<const GemmPoint*>> sweeps;
  for (const GemmPoint& g : points) {
    sweeps[{g.dtype == Dtype::bf16 ? 0 : 1 + static_cast<int>(g.dtype), g.shape.m, g.shape.n, g.shape.batch}].push_back(&g);
  }
  const std::vector<const GemmPoint*>* chosen = nullptr;
  for (const auto& [key, sweep] : sweeps) {
    std::vector<std::int64_t> ks;
    for (const GemmPoint* g : sweep) ks.push_back(g->shape.k);
    std::sort(ks.begin(), ks.end());
    if (std::unique(ks.begin(), ks.end()) - ks.begin() < 3) continue;
    const bool bf16 = std::get<0>(key) == 0;
    if (!chosen || (bf16 && (*chosen)[0]->dtype != Dtype::bf16) ||
        (bf16 == ((*chosen)[0]->dtype == Dtype::bf16) && sweep.size() > chosen->size())) {
      chosen = &sweep;
    }
  }
  if (!chosen) return {};
  // The share of peak of the kernel's own time (the launch overhead, fitted before, apart).
  const double launch = p.launch_overhead.seconds();
  const auto share = [&](const GemmPoint* g) {
    const double flops = 2.0 * static_cast<double>(g->shape.batch) * static_cast<double>(g->shape.m) *
                         static_cast<double>(g->shape.n) * static_cast<double>(g->shape.k);
    return flops / std::max(g->seconds - launch, 0.5 * g->seconds) / compute::peak_flops(g->dtype, p);
  };
  double best = 0.0;
  std::int64_t deepest = 0, shallowest = std::numeric_limits<std::int64_t>::max();
  for (const GemmPoint* g : *chosen) {
    best = std::max(best, share(g));
    deepest = std::max(deepest, g->shape.k);
    shallowest = std::min(shallowest, g->shape.k);
  }
  std::int64_t at = deepest;
  for (const GemmPoint* g : *chosen) {
    if (share(g) >= best * (1.0 - 0.005)) at = std::min(at, g->shape.k);
  }
  const GemmPoint& g0 = *(*chosen)[0];
  Saturation out;
  out.sweep = fmt::format("{} {}x{}xk, k {}..{}", config::enum_name(g0.dtype), g0.shape.m, g0.shape.n, shallowest, deepest);
  if (at < deepest) out.k = static_cast<double>(at);
  return out;
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
      // Within the profile's range (compute.gemm_efficiency_by_dtype, 0.01 to 1): a fit
      // below it wrote a profile the loader then refused. fit_compute() notes the clamp.
      eff = std::clamp(std::exp(sum / n), kLowestGemmEfficiency, 1.0);
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
  // A GH200's GPU is not an H200 SXM (96 GB of HBM3 on the first ones), nor an H200 NVL a
  // SXM board; "GH200" held "H200", which named the catalog's H200 SXM.
  if (has("GH200")) return std::nullopt;
  if (has("H200") && !has("PCIE") && !has("NVL")) return "h200-sxm";
  if (has("H100") && !has("PCIE") && !has("NVL")) return "h100-sxm";
  if (has("A100") && has("80GB") && !has("PCIE")) return "a100-sxm-80gb";
  if (has("A100") && !has("PCIE")) return "a100-sxm-40gb";
  if (has("MI300X")) return "mi300x";
  return std::nullopt;
}

namespace {

/// The windows of a held GEMM (gemm --sustained) against the sweep's point of the same shape:
/// what the GPU keeps under minutes of load, where power or heat lowers its clocks, against
/// what the fit was made of. A sweep 5% or more above it overstates a training run.
void sustained_notes(const Measurements& m, FitReport& report) {
  std::vector<std::vector<const SustainedPoint*>> runs;  // by dtype and shape, in file order
  for (const SustainedPoint& s : m.sustained) {
    const auto same = [&](const std::vector<const SustainedPoint*>& r) {
      const SustainedPoint& f = *r.front();
      return f.dtype == s.dtype && f.shape.m == s.shape.m && f.shape.n == s.shape.n && f.shape.k == s.shape.k &&
             f.shape.batch == s.shape.batch;
    };
    const auto it = std::find_if(runs.begin(), runs.end(), same);
    if (it == runs.end()) {
      runs.push_back({&s});
    } else {
      it->push_back(&s);
    }
  }
  for (const auto& run : runs) {
    const SustainedPoint& f = *run.front();
    double last = 0.0;
    for (const SustainedPoint* s : run) last = std::max(last, s->t_s);
    // The settled half: windows ending past half of the run (the first seconds hold a boost).
    std::vector<const SustainedPoint*> settled;
    for (const SustainedPoint* s : run) {
      if (s->t_s > 0.5 * last) settled.push_back(s);
    }
    if (settled.empty()) settled = run;
    std::vector<double> rates;
    double clock_lo = 1e300, clock_hi = -1.0, power = 0.0, temperature = 0.0;
    int power_n = 0, temperature_n = 0;
    for (const SustainedPoint* s : settled) {
      rates.push_back(s->flops());
      if (s->sm_clock_mhz >= 0.0) {
        clock_lo = std::min(clock_lo, s->sm_clock_mhz);
        clock_hi = std::max(clock_hi, s->sm_clock_mhz);
      }
      if (s->power_w >= 0.0) {
        power += s->power_w;
        ++power_n;
      }
      if (s->temperature_c >= 0.0) {
        temperature += s->temperature_c;
        ++temperature_n;
      }
    }
    std::sort(rates.begin(), rates.end());
    const double held = rates.size() % 2 ? rates[rates.size() / 2]
                                          : 0.5 * (rates[rates.size() / 2 - 1] + rates[rates.size() / 2]);
    std::string state;
    if (clock_hi >= 0.0) {
      state += clock_lo == clock_hi ? fmt::format("SM clock {:g} MHz", clock_hi)
                                    : fmt::format("SM clock {:g}-{:g} MHz", clock_lo, clock_hi);
    }
    if (power_n > 0) state += fmt::format("{}{:.0f} W", state.empty() ? "" : ", ", power / power_n);
    if (temperature_n > 0) state += fmt::format("{}{:.0f} C", state.empty() ? "" : ", ", temperature / temperature_n);
    const std::string what = fmt::format("{} {}", config::enum_name(f.dtype), shape_label_of(f.shape));
    std::string line = fmt::format("sustained {}: {:.4g} TFLOP/s held over {:.3g} s ({}{}{}){}", what, held / 1e12,
                                   last,
                                   settled.size() == 1 ? std::string("one window")
                                                       : fmt::format("median of the {} windows past {:.3g} s",
                                                                     settled.size(), 0.5 * last),
                                   state.empty() ? "" : "; ", state,
                                   last < 10.0 ? " (under 10 s: too short for the clocks to settle, a minute is usual)"
                                               : "");
    // The sweep's points of the shape (the fastest, as the fit's ceiling is).
    double swept = 0.0;
    for (const GemmPoint& g : m.gemm) {
      if (g.dtype == f.dtype && g.shape.m == f.shape.m && g.shape.n == f.shape.n && g.shape.k == f.shape.k &&
          g.shape.batch == f.shape.batch) {
        swept = std::max(swept, 2.0 * double(g.shape.m) * double(g.shape.n) * double(g.shape.k) *
                                    double(g.shape.batch) / g.seconds);
      }
    }
    if (swept <= 0.0) {
      line += ": no point of the sweep has this shape and datatype to compare";
    } else {
      const double ratio = held / swept;
      line += fmt::format(", {:.1f}% of the sweep's {:.4g} TFLOP/s for the shape", 100.0 * ratio, swept / 1e12);
      if (swept >= 1.05 * held) {
        line += fmt::format(": WARNING the sweep ran {:.0f}% faster than the GPU holds under load (a boost it keeps for "
                            "a moment); its GEMM efficiencies overstate a training run's, and the profile keeps them "
                            "(this is a check, not a correction): measure each point after a warm-up, as "
                            "tools/microbench/gemm does",
                            100.0 * (1.0 / ratio - 1.0));
      } else if (held >= 1.05 * swept) {
        line += fmt::format(": WARNING the sweep's point ran {:.0f}% slower than the GPU held: was it timed under "
                            "other load, or on another GPU?",
                            100.0 * (ratio - 1.0));
      } else {
        line += ": the sweep's points are what the GPU holds";
      }
    }
    report.notes.push_back(line);
  }
}

}  // namespace

namespace {

/// The attention terms from fused attention calls (tools/microbench/attention.py), in the
/// compute model's own equation: a call's share of peak at kv_half h is its compute time at
/// efficiency 1 and no sequence term (attention_seconds without launch, HBM unbounded) over
/// its measured time less the launch, over kv / (kv + h) (2h when causal); each pass's
/// efficiency is the geometric mean of its calls' (least squares in log time), and h, with
/// two kv lengths or more, the one of least squared log error over both passes (a grid of
/// 1 to 16,384 by 1%). A pass not measured keeps the profile's efficiency.
void fit_attention(const Measurements& m, compute::ComputeProfile& p, FitReport& report) {
  const double launch = p.launch_overhead.seconds();
  struct Call {
    const AttentionPoint* a;
    double log_share;  ///< log of its share of peak, no sequence term
  };
  std::vector<Call> calls;
  std::set<std::int64_t> lengths;
  for (const AttentionPoint& a : m.attention) {
    if (compute::peak_flops(a.dtype, p) <= 0.0) continue;
    const double ideal = attention_peak_seconds(a, p.peak_flops);
    calls.push_back(Call{&a, std::log(ideal / std::max(a.seconds - launch, 1e-12))});
    lengths.insert(a.shape.kv_len);
  }
  if (calls.empty()) {
    report.kept_builtin.emplace_back("the attention efficiencies");
    return;
  }
  std::set<std::string> all_backends;
  for (const Call& c : calls) all_backends.insert(c.a->backend);
  if (all_backends.size() > 1) {
    report.notes.push_back(fmt::format("attention: calls of {} kernel libraries ({}) fitted as one; a training stack "
                                       "runs one of them: fit its calls alone",
                                       all_backends.size(), fmt::join(all_backends, ", ")));
  }
  // Per pass at kv_half h: the efficiency and the squared log error.
  struct Pass {
    double efficiency = 0.0;
    double sse = 0.0;
    int n = 0;
  };
  const auto passes_at = [&](double h) {
    std::array<Pass, 2> out{};
    std::array<double, 2> sum{};
    const auto term = [&](const AttentionPoint& a) {
      const double kv = static_cast<double>(a.shape.kv_len);
      return std::log(kv / (kv + h * (a.shape.causal ? 2.0 : 1.0)));
    };
    for (const Call& c : calls) {
      sum[c.a->backward] += c.log_share - term(*c.a);
      ++out[c.a->backward].n;
    }
    for (std::size_t b = 0; b < 2; ++b) {
      if (out[b].n > 0) out[b].efficiency = std::exp(sum[b] / out[b].n);
    }
    for (const Call& c : calls) {
      const double r = c.log_share - term(*c.a) - std::log(out[c.a->backward].efficiency);
      out[c.a->backward].sse += r * r;
    }
    return out;
  };
  double kv_half = p.attention_kv_half;
  if (lengths.size() >= 2) {
    double best = std::numeric_limits<double>::infinity();
    kv_half = 0.0;
    for (double h = 0.0; h <= 16384.0; h = h < 1.0 ? 1.0 : h * 1.01) {
      const auto at = passes_at(h);
      const double sse = at[0].sse + at[1].sse;
      if (sse < best) {
        best = sse;
        kv_half = h;
      }
    }
  }
  const auto fitted = passes_at(kv_half);
  p.attention_kv_half = kv_half;
  for (std::size_t b = 0; b < 2; ++b) {
    if (fitted[b].n == 0) continue;
    const double e = std::clamp(fitted[b].efficiency, kLowestGemmEfficiency, 1.0);
    (b ? p.attention_backward_efficiency : p.attention_efficiency) = e;
    std::set<std::string> backends;
    for (const Call& c : calls) {
      if (c.a->backward == (b == 1)) backends.insert(c.a->backend);
    }
    report.notes.push_back(fmt::format("attention {}: efficiency {:.4f} over {} calls ({}), {:.4g} TFLOP/s in bf16 "
                                       "at long sequences",
                                       b ? "backward" : "forward", e, fitted[b].n, fmt::join(backends, ", "),
                                       e * compute::peak_flops(Dtype::bf16, p) / 1e12));
  }
  report.notes.push_back(
      lengths.size() >= 2
          ? fmt::format("attention kv_half {:.4g} (twice for causal kernels), from {} kv lengths", kv_half,
                        lengths.size())
          : fmt::format("attention kv_half {:.4g} kept (one kv length measured: no sequence term to fit)", kv_half));
  for (const Call& c : calls) {
    const AttentionPoint& a = *c.a;
    report.points.push_back(FitPoint{
        fmt::format("attention/{}/{}", config::enum_name(a.dtype), a.backward ? "backward" : "forward"),
        fmt::format("{}x{}x{}x{}{}", a.shape.batch_heads, a.shape.q_len, a.shape.kv_len, a.shape.head_dim,
                    a.shape.causal ? " causal" : ""),
        a.seconds, compute::attention_seconds(a.shape, a.dtype, a.backward, p), true, 0.0});
  }
}

}  // namespace

double attention_peak_seconds(const AttentionPoint& a, const hardware::PeakFlops& peaks) {
  compute::ComputeProfile unit;
  unit.peak_flops = peaks;
  unit.attention_efficiency = 1.0;
  unit.attention_backward_efficiency = 1.0;
  unit.attention_kv_half = 0.0;
  unit.hbm_bandwidth = sim::Bandwidth::of(1e300);
  unit.launch_overhead = sim::Time::zero();
  return compute::attention_seconds(a.shape, a.dtype, a.backward, unit);
}

compute::ComputeProfile fit_compute(const Measurements& m, const compute::ComputeProfile& base, FitReport& report) {
  compute::ComputeProfile p = base;
  if (m.device) p.sms = m.device->sm_count;

  // Launch overhead.
  std::optional<double> launch;
  for (const LaunchPoint& l : m.launch) {
    if (l.kind == "stream") launch = l.seconds;
  }
  // HBM bandwidth from device-to-device copies, of buffers too large for the last-level cache
  // to hold (kPastCacheBytes): a smaller copy can run from the cache, faster than HBM. When
  // fewer than two copies are that large, every copy is used, with a note.
  std::vector<std::tuple<double, double, double>> copies, all_copies;
  for (const MemoryPoint& mp : m.memory) {
    if (mp.kind != "d2d_copy") continue;
    const std::tuple<double, double, double> point{mp.moved, mp.seconds, 1.0 / (mp.seconds * mp.seconds)};
    all_copies.push_back(point);
    if (mp.moved >= 2.0 * kPastCacheBytes) copies.push_back(point);
  }
  std::string which = "of 1 GiB or more";
  if (copies.size() < 2) {
    copies = all_copies;
    which = "(of every size: fewer than two of 1 GiB or more; smaller ones may have run from the cache)";
  }
  if (copies.size() >= 2) {
    const auto [a, b] = weighted_line(copies);
    if (b <= 0.0) {  // it kept the built-in value without a word
      report.notes.push_back(fmt::format("hbm_bandwidth: the {} device-to-device copies {} take no longer as they grow "
                                         "(slope {:.3g} s/B); the built-in value is kept",
                                         copies.size(), which, b));
      report.kept_builtin.emplace_back("hbm_bandwidth");
    } else {
      p.hbm_bandwidth = sim::Bandwidth::of(1.0 / b);
      report.notes.push_back(fmt::format("hbm_bandwidth {:.4g} GB/s from {} device-to-device copies {} (intercept {:.3g} us)",
                                         1e-9 / b, copies.size(), which, a * 1e6));
      // Copies that cost nothing beyond their bytes measured 0 (within rounding: 1 ns), not nothing.
      if (!launch && a > -1e-9) {
        launch = std::max(0.0, a);
        report.notes.push_back("launch_overhead: no 'stream' launch record; the copies' intercept is used");
      }
    }
  } else {
    report.notes.push_back("hbm_bandwidth: no device-to-device copies measured; the built-in value is kept");
    report.kept_builtin.emplace_back("hbm_bandwidth");
  }
  if (launch) {
    p.launch_overhead = sim::Time::from_seconds(*launch);
    report.notes.push_back(fmt::format("launch_overhead {:.3g} us", *launch * 1e6));
  } else {
    report.notes.push_back("launch_overhead: not measured; the built-in value is kept");
    report.kept_builtin.emplace_back("launch_overhead");
  }

  // GEMM shape terms and per-datatype efficiencies.
  std::vector<GemmPoint> gemm;
  for (const GemmPoint& g : m.gemm) {
    if (compute::peak_flops(g.dtype, p) > 0.0) gemm.push_back(g);
  }
  // tools/microbench times each GEMM after half a second of its own calls: the efficiencies
  // fitted from them are what the GPU holds (the held GEMM's note checks it): sustained_factor 1.
  if (!gemm.empty() && p.sustained_factor != 1.0) {
    report.notes.push_back(fmt::format("sustained_factor 1, not the built-in's {:.4g}: the GEMMs were timed after a "
                                       "warm-up, in the clocks the GPU holds",
                                       p.sustained_factor));
    p.sustained_factor = 1.0;
  }
  if (!gemm.empty()) {
    // The measured shapes set the k term themselves, its saturation depth included (the
    // built-in profile's comes from a published scan of shapes, not from these).
    const Saturation saturation = saturation_depth(gemm, p);
    p.k_saturation = saturation.k;
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
      const double lo = grid[bi == 0 ? 0 : bi - 1];
      const double hi = grid[std::min(bi + 1, grid.size() - 1)];
      double k_half = golden_section(sse_at, lo, hi, 60);
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
      report.notes.push_back(fmt::format("gemm {}: efficiency {:.4f}, a ceiling of {:.4g} TFLOP/s of {:.4g} (the large-GEMM limit before the shape terms){}",
                                         config::enum_name(d), *slot, *slot * compute::peak_flops(d, p) / 1e12,
                                         compute::peak_flops(d, p) / 1e12,
                                         *slot <= kLowestGemmEfficiency
                                             ? " (the measurements sit below 1% of peak: held at the profile's "
                                               "lowest, 0.01; are they from this GPU, in seconds?)"
                                             : ""));
    }
    if (bf16) p.gemm_efficiency = *bf16;
    report.notes.push_back(fmt::format(
        "gemm shape terms: tile {}x{}, k_half {:.4g}, on {} SMs; {}", p.tile_m, p.tile_n, p.k_half, p.sms,
        saturation.sweep.empty() ? std::string("k_saturation 0 (no depth sweep: three k or more at one m x n)")
        : saturation.k > 0.0
            ? fmt::format("k_saturation {:g} (depth sweep {}: deeper ran no closer to peak)", saturation.k, saturation.sweep)
            : fmt::format("k_saturation 0 (depth sweep {}: still rising at its deepest)", saturation.sweep)));
    for (const GemmPoint& g : gemm) {
      report.points.push_back(FitPoint{fmt::format("gemm/{}", config::enum_name(g.dtype)), shape_label(g), g.seconds,
                                       compute::gemm_seconds(g.shape, g.dtype, p), true, 0.0});
    }
  } else {
    report.notes.push_back("gemm: no GEMM measured; the built-in efficiency and shape terms are kept");
    report.kept_builtin.emplace_back("the GEMM efficiency and shape terms");
  }
  fit_attention(m, p, report);
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
      report.notes.push_back(fmt::format("host link {}: {:.4g} GB/s, {:.3g} us per copy (back to back; not used by "
                                         "the models)",
                                         kind, 1e-9 / b, a * 1e6));
    }
  }
  // Each reason once, with its count (a plain-FP32 sweep skips thirty shapes for one reason).
  std::vector<std::pair<std::string, int>> skipped;
  for (const std::string& s : m.skipped) {
    const auto it = std::find_if(skipped.begin(), skipped.end(), [&](const auto& e) { return e.first == s; });
    if (it == skipped.end()) {
      skipped.emplace_back(s, 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [s, n] : skipped) {
    report.notes.push_back(n == 1 ? "skipped: " + s : fmt::format("skipped: {} ({} records)", s, n));
  }
  sustained_notes(m, report);
  return p;
}

CollectiveFit fit_collective_series(const std::vector<CollectivePoint>& points, int max_regimes) {
  CLUSTERSIM_CHECK(!points.empty(), "fit_collective_series: no points");
  CLUSTERSIM_CHECK(max_regimes >= 1, "fit_collective_series: max_regimes < 1");
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
  // Each regime spans at least three sizes, so that its two parameters are
  // over-determined (a line through two sizes fits anything).
  const std::size_t min_sizes = std::min<std::size_t>(3, n);

  // The minimax line of every run of sizes [i, j), computed once.
  std::map<std::pair<std::size_t, std::size_t>, MinimaxLine> cache;
  const auto points_in = [&](std::size_t i, std::size_t j) {
    std::vector<std::pair<double, double>> xt;
    for (const CollectivePoint& p : points) {
      if (p.bytes >= sizes[i] && p.bytes <= sizes[j - 1]) xt.emplace_back(p.bytes, p.seconds);
    }
    return xt;
  };
  const auto line = [&](std::size_t i, std::size_t j) -> const MinimaxLine& {
    auto it = cache.find({i, j});
    if (it == cache.end()) it = cache.emplace(std::pair{i, j}, minimax_line(points_in(i, j))).first;
    return it->second;
  };
  std::vector<std::size_t> count_before(n + 1, 0);  // points with size < sizes[i]
  for (std::size_t i = 0; i < n; ++i) {
    count_before[i + 1] = count_before[i] + static_cast<std::size_t>(std::count_if(
                                                points.begin(), points.end(),
                                                [&](const CollectivePoint& p) { return p.bytes == sizes[i]; }));
  }
  const auto cost = [&](std::size_t i, std::size_t j) {  // points x worst error of the run
    return double(count_before[j] - count_before[i]) * line(i, j).worst;
  };

  // Dynamic programme over cuts: best[k][j] = least total cost of sizes [0, j) in k regimes.
  const std::size_t k_max = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(max_regimes), n / min_sizes));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(k_max + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(k_max + 1, std::vector<std::size_t>(n + 1, 0));
  for (std::size_t j = min_sizes; j <= n; ++j) best[1][j] = cost(0, j);
  for (std::size_t k = 2; k <= k_max; ++k) {
    for (std::size_t j = k * min_sizes; j <= n; ++j) {
      for (std::size_t i = (k - 1) * min_sizes; i + min_sizes <= j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double c = best[k - 1][i] + cost(i, j);
        if (c < best[k][j] - 1e-15) {
          best[k][j] = c;
          cut[k][j] = i;
        }
      }
    }
  }
  std::size_t k = k_max;
  while (k > 1 && best[k][n] == inf) --k;
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // [from, to) size indices
  for (std::size_t j = n; k >= 1; --k) {
    const std::size_t i = k == 1 ? 0 : cut[k][j];
    runs.insert(runs.begin(), {i, j});
    j = i;
  }

  // Merge neighbours that one line serves as well, within the measurements' repeatability:
  // the merged line's worst error over each side's points exceeds that side's own by at
  // most `noise`. The merge with the least merged error first, until none qualifies.
  const double noise = repeatability(points);
  const auto worst_of = [&](const MinimaxLine& l, std::size_t i, std::size_t j) {
    double w = 0.0;
    for (const auto& [x, t] : points_in(i, j)) w = std::max(w, std::abs((l.a + l.b * x) / t - 1.0));
    return w;
  };
  while (runs.size() > 1) {
    std::size_t pick = runs.size();
    double pick_worst = inf;
    for (std::size_t r = 0; r + 1 < runs.size(); ++r) {
      const auto [i, m] = runs[r];
      const std::size_t j = runs[r + 1].second;
      const MinimaxLine& merged = line(i, j);
      if (worst_of(merged, i, m) <= line(i, m).worst + noise && worst_of(merged, m, j) <= line(m, j).worst + noise &&
          merged.worst < pick_worst) {
        pick = r;
        pick_worst = merged.worst;
      }
    }
    if (pick == runs.size()) break;
    runs[pick].second = runs[pick + 1].second;
    runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(pick) + 1);
  }

  for (const auto& [i, j] : runs) {
    const MinimaxLine& l = line(i, j);
    Regime reg;
    reg.from = sim::Bytes::of(sizes[i]);
    reg.latency = sim::Time::from_seconds(l.a);
    // A flat regime (latency only) gets a bus bandwidth far beyond any link, 1 PB/s.
    reg.busbw = sim::Bandwidth::of(l.b > factor / kFlatBusbw ? factor / l.b : kFlatBusbw);
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
    const auto distinct = std::unique(sizes.begin(), sizes.end()) - sizes.begin();
    if (distinct < 2) {
      report.notes.push_back(fmt::format("{}: fewer than two sizes; not fitted", group));
      continue;
    }
    if (distinct == 2) {  // a regime wants three (fit_collective_series): a line meets any two
      report.notes.push_back(fmt::format("{}: only two sizes, which its line meets whatever they are: nothing checks "
                                         "the fit, and the latency and bus bandwidth beyond them are extrapolated "
                                         "(measure a range: nccl-tests -b 8 -e 8G -f 2)",
                                         group));
    }
    CollectiveFit fit = fit_collective_series(pts);
    for (const CollectivePoint& p : pts) {
      report.points.push_back(FitPoint{group, sim::human(sim::Bytes::of(p.bytes)), p.seconds,
                                       collective_seconds(fit, p.bytes), true, p.bytes});
    }
    std::string regimes;
    for (const Regime& r : fit.regimes) {
      regimes += fmt::format("{}from {}: latency {:.2f} us, {}", regimes.empty() ? "" : "; ", sim::human(r.from),
                             r.latency.seconds() * 1e6,
                             r.busbw.value() >= kFlatBusbw ? std::string("latency only")
                                                           : fmt::format("busbw {:.2f} GB/s", r.busbw.value() / 1e9));
    }
    // Measured where a size was timed twice; else the default, said as assumed (it read as measured).
    const bool repeated = std::any_of(pts.begin(), pts.end(), [&](const CollectivePoint& a) {
      return std::count_if(pts.begin(), pts.end(), [&](const CollectivePoint& b) { return b.bytes == a.bytes; }) > 1;
    });
    report.notes.push_back(fmt::format("{} ({}): {} regime{} ({}); repeatability {}", group,
                                       config::enum_name(fit.level), fit.regimes.size(),
                                       fit.regimes.size() == 1 ? "" : "s", regimes,
                                       repeated ? fmt::format("{:.2f}% (median spread of the times measured twice at "
                                                              "one size)",
                                                              100 * repeatability(pts))
                                                : fmt::format("not measured (no size timed twice): {:.2f}% assumed",
                                                              100 * repeatability(pts))));
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

namespace {

/// The minimum of a unimodal f on [lo, hi] by golden section (25 steps: 1e-5 of the
/// interval), the interval's ends included: the optimum of a monotone error sits on one.
template <class F>
double golden_min(F f, double lo, double hi) {
  double best = golden_section(f, lo, hi, 25);
  double fbest = f(best);
  for (double x : {lo, hi}) {
    const double fx = f(x);
    if (fx < fbest) {
      best = x;
      fbest = fx;
    }
  }
  return best;
}

std::string series_group(const std::string& prefix, const CollectiveFit& f) {
  return fmt::format("{}/{}/{}x{}", prefix, config::enum_name(f.op), f.nodes, f.ranks / f.nodes);
}

}  // namespace

std::vector<network::SizeFactor> fit_size_factors(const CollectiveFit* fit,
                                                  const std::vector<const CollectivePoint*>& points, bool scaleup,
                                                  const network::NetworkConfig& cfg, const NetworkModel& model) {
  constexpr double kLowest = 0.001;  // SizeFactor's range
  constexpr double kShare = 0.25;    // the bandwidth term's least share of the time
  std::vector<double> sizes;
  for (const CollectivePoint* p : points) sizes.push_back(p->bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<network::SizeFactor> table;
  for (double size : sizes) {
    std::vector<double> times;
    for (const CollectivePoint* p : points) {
      if (p->bytes == size) times.push_back(p->seconds);
    }
    std::sort(times.begin(), times.end());
    const std::size_t m = times.size();
    const double measured = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
    // The model at a constant factor f is the model at size `size` with factor f.
    const auto at = [&](double f) {
      network::NetworkConfig c = cfg;
      (scaleup ? c.scaleup_size_factors : c.scaleout_size_factors) = {network::SizeFactor{sim::Bytes::of(size), f}};
      return model(*fit, size, c);
    };
    double factor = 1.0;
    if (at(1.0) < measured) {
      // The time falls as f grows (every algorithm's does, and so does their minimum):
      // bisection on log f.
      double lo = std::log(kLowest);
      double hi = 0.0;
      if (at(kLowest) <= measured) {
        hi = lo;
      } else {
        for (int i = 0; i < 50; ++i) {
          const double mid = 0.5 * (lo + hi);
          (at(std::exp(mid)) > measured ? lo : hi) = mid;
        }
      }
      factor = std::exp(hi);
    }
    // If t = a + b / f, t(f / 2) - t(f) = b / f is the bandwidth term: below a quarter of
    // the time, a 1% error in the time would move the factor by more than 4%.
    const double t = at(factor);
    if (!std::isfinite(t) || at(factor / 2) - t < kShare * t) continue;
    table.push_back({sim::Bytes::of(size), factor});
  }
  return table;
}

NetworkModel network_model_on(const cluster::ResolvedNode& node) {
  auto fabrics = std::make_shared<std::map<std::int64_t, std::optional<fabric::Fabric>>>();
  return [node, fabrics](const CollectiveFit& series, double bytes, const network::NetworkConfig& cfg) {
    auto it = fabrics->find(series.nodes);
    if (it == fabrics->end()) {
      fabric::FabricConfig fc;
      fc.topology = fabric::Topology::fat_tree;
      fc.radix = 64;
      fc.tiers = 0;  // the fewest that fit
      fc.link_latency = sim::Time::from_ns(700);
      std::vector<fabric::FabricError> errors;
      it = fabrics->emplace(series.nodes, fabric::build_fabric(fc, node, series.nodes, errors)).first;
    }
    const std::optional<fabric::Fabric>& f = it->second;
    // ranks / nodes GPUs on each node, as nccl-tests places them with -npernode.
    const std::int64_t g = f ? f->gpus_per_node : 0;
    const std::int64_t per_node = series.nodes > 0 ? series.ranks / series.nodes : 0;
    if (!f || per_node < 1 || per_node * series.nodes != series.ranks || per_node > g) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    std::vector<std::int64_t> ranks;
    ranks.reserve(static_cast<std::size_t>(series.ranks));
    for (std::int64_t on = 0; on < series.nodes; ++on) {
      for (std::int64_t l = 0; l < per_node; ++l) ranks.push_back(on * g + l);
    }
    const sim::Bytes size = sim::Bytes::of(bytes);
    const network::Algorithm algo = network::choose_algorithm(*f, cfg, series.op, ranks, size);
    network::Schedule schedule;
    std::string why;
    if (!network::plan(series.op, algo, ranks, size, f->gpus_per_node, network::in_network(*f, cfg), schedule, why)) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return network::analytical_time(*f, cfg, schedule).seconds();
  };
}

NetworkCalibration invert_network(const std::vector<CollectivePoint>& points, const std::vector<CollectiveFit>& fits,
                                  const NetworkModel& model, FitReport& report, const network::NetworkConfig& base,
                                  double nvls_line) {
  // Per level, the series to invert: an all-reduce if there is one (the collective whose
  // configuration NCCL's tuning and the model know best), else a reduce-scatter, an
  // all-gather, an all-to-all, a broadcast; the most ranks among those.
  const auto preference = [](network::Op op) {
    constexpr std::array order{network::Op::all_reduce, network::Op::reduce_scatter, network::Op::all_gather,
                               network::Op::all_to_all, network::Op::broadcast};
    return static_cast<int>(std::find(order.begin(), order.end(), op) - order.begin());
  };
  const CollectiveFit* up = nullptr;
  const CollectiveFit* out = nullptr;
  for (const CollectiveFit& f : fits) {
    // A sendrecv_perf log sets no level's efficiency: the collectives' logs do.
    if (f.regimes.empty() || f.op == network::Op::send_recv) continue;
    const CollectiveFit*& slot = f.level == Level::scaleup ? up : out;
    if (!slot || std::pair{-preference(f.op), f.ranks} > std::pair{-preference(slot->op), slot->ranks}) slot = &f;
  }
  // One series to invert: its points, the latency-bound (smallest) and bandwidth-bound
  // (largest) ones.
  struct Series {
    const CollectiveFit* fit = nullptr;
    std::vector<const CollectivePoint*> all;
    std::vector<const CollectivePoint*> small;
    std::vector<const CollectivePoint*> large;
    double small_to = -1.0;
    double large_from = 0.0;
    bool scaleup = true;
    bool nvls = false;  // a one-node all-reduce reduced in the NVSwitch: fits nvls_efficiency
  };
  network::NetworkConfig cfg = base;  // what the profile runs over, replaced as the fit goes
  std::vector<Series> series;
  for (const CollectiveFit* f : {up, out}) {
    if (!f) continue;
    Series s;
    s.fit = f;
    s.scaleup = f == up;
    for (const CollectivePoint& p : points) {
      if (p.op == f->op && p.ranks == f->ranks && p.nodes == f->nodes) s.all.push_back(&p);
    }
    if (s.all.empty()) continue;
    if (!std::isfinite(model(*f, s.all.front()->bytes, cfg))) {
      report.notes.push_back(fmt::format("{}: the network model cannot run this configuration; its parameters "
                                         "are not fitted from it",
                                         series_group("network", *f)));
      continue;
    }
    // The efficiency is the share of line rate reached where the bandwidth term dominates,
    // the three largest sizes of the last regime; the latency is what the smallest sizes
    // take, the three smallest of the first regime (none when the series has fewer than 6).
    std::vector<double> sizes;
    for (const CollectivePoint* p : s.all) sizes.push_back(p->bytes);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    s.large_from = std::max(f->regimes.back().from.value(), sizes[sizes.size() - std::min<std::size_t>(3, sizes.size())]);
    if (sizes.size() >= 6) {
      s.small_to = sizes[2];
      if (f->regimes.size() > 1) s.small_to = std::min(s.small_to, std::nextafter(f->regimes[1].from.value(), 0.0));
    }
    double most_busbw = 0.0;
    for (const CollectivePoint* p : s.all) {
      if (p->bytes <= s.small_to) s.small.push_back(p);
      if (p->bytes >= s.large_from) {
        s.large.push_back(p);
        most_busbw = std::max(most_busbw, p->bytes / p->seconds * network::bus_factor(p->op, p->ranks));
      }
    }
    s.nvls = s.scaleup && f->op == network::Op::all_reduce && f->nodes <= 1 && nvls_line > 0.0 &&
             most_busbw > kNvlsAboveLine * nvls_line;
    if (s.nvls) {
      cfg.nvls = true;  // the model's auto then takes NVLS where it is the faster
      report.notes.push_back(fmt::format(
          "{}: a bus bandwidth of up to {} from {}, above the {} NVLink line rate: NCCL reduced in the NVSwitch "
          "(NVLS); this series fits nvls_efficiency, not scaleup_efficiency (rerun all_reduce_perf with "
          "NCCL_NVLS_ENABLE=0 for that)",
          series_group("network", *f), sim::human(sim::Bandwidth::of(most_busbw)),
          sim::human(sim::Bytes::of(s.large_from)), sim::human(sim::Bandwidth::of(nvls_line))));
    }
    series.push_back(std::move(s));
  }
  NetworkCalibration n;
  if (series.empty()) return n;
  // A level that is fitted starts without a size table: the efficiency is fitted on the
  // largest sizes at factor 1, and the table, if any, comes from this log. (An NVLS series
  // fits no scale-up efficiency, so the level keeps its table.)
  for (const Series& s : series) {
    if (!s.nvls) (s.scaleup ? cfg.scaleup_size_factors : cfg.scaleout_size_factors).clear();
  }

  const auto worst = [&](const Series& s, const std::vector<const CollectivePoint*>& ps,
                         const network::NetworkConfig& c) {
    double w = 0.0;
    for (const CollectivePoint* p : ps) {
      const double t = model(*s.fit, p->bytes, c);
      if (!std::isfinite(t)) return std::numeric_limits<double>::infinity();
      w = std::max(w, std::abs(t / p->seconds - 1.0));
    }
    return w;
  };
  const auto worst_small = [&](const network::NetworkConfig& c) {
    double w = 0.0;
    for (const Series& s : series) w = std::max(w, worst(s, s.small, c));
    return w;
  };
  double max_small = 0.0;
  for (const Series& s : series) {
    for (const CollectivePoint* p : s.small) max_small = std::max(max_small, p->seconds);
  }
  // step_latency only when two series with different step counts can tell it from
  // call_overhead: one on one node and one across nodes.
  const bool fit_latency = max_small > 0.0;
  const bool fit_step = fit_latency && series.size() == 2 && !series[0].small.empty() && !series[1].small.empty();
  // The efficiency a series fits: its level's, or NVLS's.
  const auto efficiency = [](network::NetworkConfig& c, const Series& s) -> double& {
    return s.nvls ? c.nvls_efficiency : s.scaleup ? c.scaleup_efficiency : c.scaleout_efficiency;
  };
  for (int round = 0; round < 3; ++round) {
    if (fit_latency) {
      // The latency terms: call_overhead c (and step_latency s) minimizing the worst error
      // over the smallest sizes of every series; each time grows linearly with c and s.
      const auto best_c = [&](double step) {
        return golden_min(
            [&](double x) {
              network::NetworkConfig c = cfg;
              c.call_overhead = sim::Time::from_seconds(x);
              c.step_latency = sim::Time::from_seconds(step);
              return worst_small(c);
            },
            0.0, max_small);
      };
      double step = 0.0;
      if (fit_step) {
        step = golden_min(
            [&](double x) {
              network::NetworkConfig c = cfg;
              c.call_overhead = sim::Time::from_seconds(best_c(x));
              c.step_latency = sim::Time::from_seconds(x);
              return worst_small(c);
            },
            0.0, max_small / 8);
      }
      cfg.call_overhead = sim::Time::from_seconds(best_c(step));
      cfg.step_latency = sim::Time::from_seconds(step);
    }
    for (const Series& s : series) {
      efficiency(cfg, s) = golden_min(
          [&](double x) {
            network::NetworkConfig c = cfg;
            efficiency(c, s) = x;
            return worst(s, s.large, c);
          },
          0.01, 1.0);
    }
  }
  if (fit_latency) {
    n.call_overhead = cfg.call_overhead;
    if (fit_step) n.step_latency = cfg.step_latency;
  }
  for (const Series& s : series) {
    const char* name = s.nvls ? "nvls_efficiency" : s.scaleup ? "scaleup_efficiency" : "scaleout_efficiency";
    const double e = efficiency(cfg, s);
    // Identifiable only if moving it 5% either way worsens the fit: where the largest sizes
    // are bound by a link of the other level (NVLink for a multi-node series whose NICs keep
    // up) any value above a threshold fits as well.
    const auto error_at = [&](double x) {
      network::NetworkConfig c = cfg;
      efficiency(c, s) = x;
      return worst(s, s.large, c);
    };
    const double best = error_at(e);
    const bool flat_down = e > 0.0101 && error_at(std::max(0.01, 0.95 * e)) <= best + 1e-4;
    const bool flat_up = e < 0.999 && error_at(std::min(1.0, 1.05 * e)) <= best + 1e-4;
    if (!flat_down && !flat_up) {
      (s.nvls ? n.nvls_efficiency : s.scaleup ? n.scaleup_efficiency : n.scaleout_efficiency) = e;
      report.notes.push_back(fmt::format(
          "{} {:.4f}: the network model reproduces the {} {} from {} within {:.1f}%{}", name, e,
          fmt::format("{}x{}", s.fit->nodes, s.fit->ranks / s.fit->nodes), config::enum_name(s.fit->op),
          sim::human(sim::Bytes::of(s.large_from)),
          100 * worst(s, s.large, cfg),
          e >= 0.999 ? " (at the bound: the model's links at full line rate are still slower than the log)"
          : s.nvls   ? " (used where a scenario sets network.nvls: true)"
                     : ""));
    } else {
      network::NetworkConfig restore = base;
      efficiency(cfg, s) = efficiency(restore, s);
      report.notes.push_back(fmt::format("{}: not determined by the {} series, whose largest sizes the model bounds "
                                         "by another link; not set",
                                         name, series_group("network", *s.fit)));
    }
  }
  // Size factors: the measured sizes between the smallest and the largest reach less of the
  // line rate than the largest do (NCCL's protocols and channel counts, config.hpp); at each
  // size the factor of the series' level that makes the network model take the measured
  // time, where the bandwidth term decides enough of it to be told from the latency.
  for (const Series& s : series) {
    if (s.nvls) continue;  // the size tables scale the levels' efficiencies, not NVLS's
    std::vector<network::SizeFactor> table = fit_size_factors(s.fit, s.all, s.scaleup, cfg, model);
    if (table.empty()) {
      // Fitted without one: the base's table must not come back under the profile.
      if (!(s.scaleup ? base.scaleup_size_factors : base.scaleout_size_factors).empty()) {
        (s.scaleup ? n.scaleup_size_factors : n.scaleout_size_factors) = std::vector<network::SizeFactor>{};
      }
      continue;
    }
    // Held out: every other point dropped, how far the interpolation between the others is
    // from the measured times there (the points themselves are matched by construction).
    std::vector<network::SizeFactor> even;
    for (std::size_t i = 0; i < table.size(); i += 2) even.push_back(table[i]);
    network::NetworkConfig held = cfg;
    (s.scaleup ? held.scaleup_size_factors : held.scaleout_size_factors) = even;
    std::vector<double> errors;
    double worst_size = 0.0;
    double worst_error = 0.0;
    for (std::size_t i = 1; i < table.size(); i += 2) {
      for (const CollectivePoint* p : s.all) {
        if (p->bytes != table[i].size.value()) continue;
        const double e = std::abs(model(*s.fit, p->bytes, held) / p->seconds - 1.0);
        errors.push_back(e);
        if (e >= worst_error) {
          worst_error = e;
          worst_size = p->bytes;
        }
      }
    }
    const char* name = s.scaleup ? "scaleup_size_factors" : "scaleout_size_factors";
    std::string held_out = "too few sizes to hold any out";
    if (!errors.empty()) {
      std::sort(errors.begin(), errors.end());
      const std::size_t m = errors.size();
      const double median = m % 2 ? errors[m / 2] : 0.5 * (errors[m / 2 - 1] + errors[m / 2]);
      held_out = fmt::format("fitted on every other size, the model is off by median {:.1f}%, worst {:.1f}% (at {}) "
                             "on the sizes held out",
                             100 * median, 100 * worst_error, sim::human(sim::Bytes::of(worst_size)));
    }
    report.notes.push_back(fmt::format("{}: {} sizes from {} to {}, factor {:.3f} to {:.3f}; {}", name, table.size(),
                                       sim::human(table.front().size), sim::human(table.back().size),
                                       std::min_element(table.begin(), table.end(),
                                                        [](const auto& a, const auto& b) { return a.factor < b.factor; })
                                           ->factor,
                                       std::max_element(table.begin(), table.end(),
                                                        [](const auto& a, const auto& b) { return a.factor < b.factor; })
                                           ->factor,
                                       held_out));
    (s.scaleup ? cfg.scaleup_size_factors : cfg.scaleout_size_factors) = table;
    (s.scaleup ? n.scaleup_size_factors : n.scaleout_size_factors) = std::move(table);
  }
  if (fit_latency) {
    report.notes.push_back(fmt::format(
        "call_overhead {:.2f} us{}: the network model reproduces the smallest sizes within {:.1f}%",
        cfg.call_overhead.seconds() * 1e6,
        fit_step ? fmt::format(", step_latency {:.3f} us", cfg.step_latency.seconds() * 1e6) : std::string(),
        100 * worst_small(cfg)));
  }
  for (const Series& s : series) {
    const std::string group = series_group("network", *s.fit);
    const auto& table = s.scaleup ? cfg.scaleup_size_factors : cfg.scaleout_size_factors;
    for (const CollectivePoint* p : s.all) {
      const bool in_table = std::any_of(table.begin(), table.end(),
                                        [&](const network::SizeFactor& f) { return f.size.value() == p->bytes; });
      const bool used = p->bytes >= s.large_from || p->bytes <= s.small_to || in_table;
      report.points.push_back({group, sim::human(sim::Bytes::of(p->bytes)), p->seconds, model(*s.fit, p->bytes, cfg),
                               used, p->bytes});
    }
  }
  return n;
}

CalibrationProfile fit_profile(const Measurements& m, const FitTarget& target, FitReport& report) {
  CalibrationProfile p;
  p.gpu = target.gpu_name;
  p.kind = "measured";
  const compute::ComputeProfile base = compute::default_profile(target.gpu_name, target.gpu);
  if (!m.gemm.empty() || !m.memory.empty() || !m.launch.empty() || !m.attention.empty()) {
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
    // Fitted over what the profile will run on: the GPU type's built-in network calibration.
    network::NetworkConfig over;
    const auto builtin = builtin_network(target.gpu_name);
    if (builtin) apply_network(builtin->network, over, {});
    NetworkCalibration n = target.node
                               ? invert_network(m.collectives, p.collectives, network_model_on(*target.node), report, over,
                                                cluster::nvls_unavailable(*target.node).empty()
                                                    ? target.scaleup_line
                                                    : 0.0)
                               : network_from(p.collectives, target, report);
    if (n.scaleup_efficiency || n.scaleout_efficiency || n.nvls_efficiency || n.call_overhead) {
      p.network = n;
      if (builtin && target.node) {
        report.notes.push_back(fmt::format("network: fitted over the built-in calibration of {} ({}); what this log "
                                           "does not set keeps its values",
                                           target.gpu_name, kBuiltinNetworkFile));
      }
    }
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
