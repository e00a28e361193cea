#include "sim/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace clustersim::sim {

TimeWeighted::TimeWeighted(Time start, double initial)
    : start_(start), last_(start), value_(initial), min_(initial), max_(initial) {}

void TimeWeighted::check_not_before_last(Time now, const char* what) const {
  if (now < last_) {
    throw std::invalid_argument(
        fmt::format("TimeWeighted::{}: time {} ns is before the last update at {} ns", what, now.ns(), last_.ns()));
  }
}

void TimeWeighted::update(Time now, double value) {
  check_not_before_last(now, "update");
  area_ns_ += value_ * static_cast<double>((now - last_).ns());
  last_ = now;
  value_ = value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

double TimeWeighted::integral(Time now) const {
  check_not_before_last(now, "integral");
  return (area_ns_ + value_ * static_cast<double>((now - last_).ns())) * 1e-9;
}

double TimeWeighted::mean(Time now) const {
  check_not_before_last(now, "mean");
  if (now == start_) return value_;
  return (area_ns_ + value_ * static_cast<double>((now - last_).ns())) / static_cast<double>((now - start_).ns());
}

void TimeWeighted::reset(Time now) {
  check_not_before_last(now, "reset");
  start_ = now;
  last_ = now;
  area_ns_ = 0.0;
  min_ = value_;
  max_ = value_;
}

double t_critical_95(std::uint64_t df) {
  // t_(0.975, df) for df = 1..30, from mpmath (inverting the regularised incomplete
  // beta function) to 10 significant digits.
  static constexpr std::array<double, 30> kTable = {
      12.70620474, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
      2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
      2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
      2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
      2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
  };
  if (df == 0) throw std::invalid_argument("t_critical_95: degrees of freedom must be >= 1, got 0");
  if (df <= kTable.size()) return kTable[df - 1];
  // Abramowitz & Stegun 26.7.5: t = z + g1/v + g2/v^2 + g3/v^3 + g4/v^4 with z the
  // standard normal 0.975 quantile.
  constexpr double z = 1.959963984540054;
  constexpr double z3 = z * z * z;
  constexpr double z5 = z3 * z * z;
  constexpr double z7 = z5 * z * z;
  constexpr double z9 = z7 * z * z;
  constexpr double g1 = (z3 + z) / 4.0;
  constexpr double g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
  constexpr double g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
  constexpr double g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
  const double inv = 1.0 / static_cast<double>(df);
  return z + inv * (g1 + inv * (g2 + inv * (g3 + inv * g4)));
}

void Welford::add(double x) {
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
  min_ = std::min(min_, x);
  max_ = std::max(max_, x);
}

void Welford::merge(const Welford& other) {
  if (other.n_ == 0) return;
  if (n_ == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(n_);
  const double nb = static_cast<double>(other.n_);
  const double n = na + nb;
  const double delta = other.mean_ - mean_;
  mean_ += delta * nb / n;
  m2_ += other.m2_ + delta * delta * na * nb / n;
  n_ += other.n_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Welford::variance() const { return n_ < 2 ? kNaN : m2_ / static_cast<double>(n_ - 1); }

double Welford::stddev() const { return std::sqrt(variance()); }

double Welford::ci95_half_width() const {
  if (n_ < 2) return kNaN;
  return t_critical_95(n_ - 1) * stddev() / std::sqrt(static_cast<double>(n_));
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile: no samples");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument(fmt::format("quantile: q must be in [0, 1], got {}", q));
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const double k = std::floor(h);
  const auto lo = static_cast<std::size_t>(k);
  if (lo + 1 >= sorted.size()) return sorted.back();
  if (h == k || sorted[lo] == sorted[lo + 1]) return sorted[lo];  // exact; no inf - inf
  return sorted[lo] + (h - k) * (sorted[lo + 1] - sorted[lo]);
}

namespace {

void sort_checked(std::vector<double>& samples, const char* what) {
  for (double x : samples) {
    if (std::isnan(x)) throw std::invalid_argument(fmt::format("{}: samples contain NaN", what));
  }
  std::sort(samples.begin(), samples.end());
}

}  // namespace

double quantile(std::vector<double> samples, double q) {
  sort_checked(samples, "quantile");
  return quantile_sorted(samples, q);
}

Summary summarize(std::vector<double> samples) {
  sort_checked(samples, "summarize");
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  Welford w;
  for (double x : samples) w.add(x);
  s.mean = w.mean();
  s.stddev = w.stddev();
  s.ci95 = w.ci95_half_width();
  s.min = samples.front();
  s.p50 = quantile_sorted(samples, 0.50);
  s.p90 = quantile_sorted(samples, 0.90);
  s.p99 = quantile_sorted(samples, 0.99);
  s.max = samples.back();
  return s;
}

}  // namespace clustersim::sim
