// Output statistics: counters, time averages, running moments, confidence intervals
// and quantiles.
//
// Usage:
//
//   TimeWeighted busy(Time::zero());          // a piecewise-constant signal
//   busy.update(now, 3.0);                    // from `now` on, 3 GPUs busy
//   double utilisation = busy.mean(end) / 8;
//
//   Welford makespan;                         // one value per replication
//   for (...) makespan.add(run(r).seconds());
//   fmt::print("{} +- {}", makespan.mean(), makespan.ci95_half_width());
//
// Equations:
//   - TimeWeighted: for a signal holding value v_k on [t_k, t_(k+1)),
//       integral(T) = sum_k v_k (min(t_(k+1), T) - t_k)   (value x seconds)
//       mean(T)     = integral(T) / (T - t_0).
//   - Welford (Welford 1962): n += 1; d = x - mean; mean += d / n; M2 += d (x - mean);
//       variance = M2 / (n - 1) (the unbiased sample variance).
//     Merge (Chan, Golub & LeVeque 1979): with d = mean_b - mean_a, n = n_a + n_b,
//       mean = mean_a + d n_b / n,   M2 = M2_a + M2_b + d^2 n_a n_b / n.
//   - 95% confidence interval of the mean: mean +- t_(0.975, n-1) s / sqrt(n), where
//     t_(0.975, df) is the Student-t quantile. For df <= 30 it comes from a table
//     (computed to 10 digits with mpmath); above, from the Cornish-Fisher expansion of
//     Abramowitz & Stegun 26.7.5 to the 1/df^4 term, whose relative error is below 2e-8
//     for df > 30 (checked against mpmath in the tests).
//   - Quantiles, type 7 of Hyndman & Fan (the default of R and numpy): for sorted
//     x_(0) <= ... <= x_(n-1), h = (n - 1) q, k = floor(h):
//       Q(q) = x_(k) + (h - k) (x_(k+1) - x_(k)).
//
// Assumptions and LIMITATIONS: the confidence interval assumes independent, roughly
// normal observations (replication means are; successive waiting times inside one run
// are not, so use batch means or replications for those). Only the two-sided 95% level
// is provided. Statistics of fewer than two observations that need a spread (variance,
// standard deviation, interval) are NaN rather than a misleading 0; callers print NaN
// as "n/a" or JSON null. Quantiles need all samples in memory (O(n) space,
// O(n log n) time); no streaming quantile sketch.
//
// Validation: tests/sim/test_stats.cpp compares Welford with the two-pass formula and
// a merge with one sequential pass, the t quantiles with mpmath, type-7 quantiles
// with values from R/numpy, and a time average with a hand computation.
//
// References:
//   B. P. Welford, "Note on a method for calculating corrected sums of squares and
//     products", Technometrics 4(3), 1962.
//   T. F. Chan, G. H. Golub, R. J. LeVeque, "Updating formulae and a pairwise algorithm
//     for computing sample variances", Stanford CS tech. report STAN-CS-79-773, 1979.
//   M. Abramowitz, I. A. Stegun, Handbook of Mathematical Functions, 1964, eq. 26.7.5.
//   R. J. Hyndman, Y. Fan, "Sample quantiles in statistical packages", The American
//     Statistician 50(4), 1996.
//   A. M. Law, Simulation Modeling and Analysis, 5th ed., 2015, ch. 9 (output analysis).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sim/time.hpp"

namespace clustersim::sim {

/// Number of events and the sum of their weights (bytes sent, jobs failed, ...).
class Counter {
 public:
  void add(double weight = 1.0) {
    ++count_;
    sum_ += weight;
  }
  void merge(const Counter& other) {
    count_ += other.count_;
    sum_ += other.sum_;
  }

  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] double sum() const { return sum_; }

 private:
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
};

/// Time average of a piecewise-constant signal (queue length, busy GPUs, power draw).
/// The value set by `update(t, v)` holds from t until the next update.
/// Updates must come in non-decreasing time; an earlier time throws std::invalid_argument.
class TimeWeighted {
 public:
  /// Observation starts at `start` with the signal at `initial`.
  explicit TimeWeighted(Time start = Time::zero(), double initial = 0.0);

  /// From `now` on the signal is `value`. O(1).
  void update(Time now, double value);

  /// Integral of the signal over [start, now], in value x seconds. Precondition: now is
  /// not before the last update.
  [[nodiscard]] double integral(Time now) const;
  /// integral(now) / (now - start); the current value when now == start.
  [[nodiscard]] double mean(Time now) const;

  /// Smallest and largest value the signal has taken since the start, including the
  /// initial value and values held for zero time.
  [[nodiscard]] double min() const { return min_; }
  [[nodiscard]] double max() const { return max_; }
  [[nodiscard]] double current() const { return value_; }
  [[nodiscard]] Time start() const { return start_; }

  /// Starts a new observation window at `now` (e.g., after warm-up), keeping the current
  /// value; min and max restart from it.
  void reset(Time now);

 private:
  void check_not_before_last(Time now, const char* what) const;

  Time start_;
  Time last_;
  double value_;
  double area_ns_ = 0.0;  // integral in value x nanoseconds up to last_
  double min_;
  double max_;
};

/// Two-sided 95% critical value of Student's t with `df` degrees of freedom, i.e. the
/// 0.975 quantile: 12.706 for df = 1, tending to 1.95996 as df grows. Relative error
/// below 1e-8 for df <= 30 (table) and below 2e-8 above (expansion). Precondition: df >= 1.
double t_critical_95(std::uint64_t df);

/// Running count, mean, variance, min and max of a stream of observations in O(1)
/// memory, numerically stable (Welford). Two accumulators combine exactly with `merge`
/// (e.g., one per thread or per replication batch).
class Welford {
 public:
  void add(double x);
  /// As if every observation of `other` had been added to this one (Chan et al.).
  void merge(const Welford& other);

  [[nodiscard]] std::uint64_t count() const { return n_; }
  /// NaN when empty.
  [[nodiscard]] double mean() const { return n_ == 0 ? kNaN : mean_; }
  /// Sample variance M2 / (n - 1); NaN when count() < 2.
  [[nodiscard]] double variance() const;
  /// sqrt(variance()); NaN when count() < 2.
  [[nodiscard]] double stddev() const;
  /// t_(0.975, n-1) * stddev() / sqrt(n): the mean's 95% confidence interval is
  /// mean() +- this. NaN when count() < 2.
  [[nodiscard]] double ci95_half_width() const;
  /// NaN when empty.
  [[nodiscard]] double min() const { return n_ == 0 ? kNaN : min_; }
  [[nodiscard]] double max() const { return n_ == 0 ? kNaN : max_; }

 private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

/// Type-7 quantile of already sorted (ascending) samples. O(1).
/// Precondition (throws std::invalid_argument): non-empty, 0 <= q <= 1.
double quantile_sorted(std::span<const double> sorted, double q);

/// Type-7 quantile of `samples` (taken by value and sorted). O(n log n).
/// Precondition (throws std::invalid_argument): non-empty, no NaN, 0 <= q <= 1.
double quantile(std::vector<double> samples, double q);

/// The usual one-line description of a sample. All fields but n are NaN for an empty
/// sample; stddev and ci95 are NaN for a single observation.
struct Summary {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::size_t n = 0;
  double mean = kNaN;
  double stddev = kNaN;  // sample standard deviation (n - 1)
  double ci95 = kNaN;    // half-width of the mean's 95% confidence interval
  double min = kNaN;
  double p50 = kNaN;     // type-7 quantiles
  double p90 = kNaN;
  double p99 = kNaN;
  double max = kNaN;
};

/// Summary of `samples` (taken by value and sorted once). O(n log n).
/// Precondition (throws std::invalid_argument): no NaN.
Summary summarize(std::vector<double> samples);

}  // namespace clustersim::sim
