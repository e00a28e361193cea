#include "sim/stats.hpp"

#include "sim/random.hpp"
#include "sim/time.hpp"

#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

using clustersim::sim::Counter;
using clustersim::sim::make_stream;
using clustersim::sim::quantile;
using clustersim::sim::RandomStream;
using clustersim::sim::summarize;
using clustersim::sim::Summary;
using clustersim::sim::t_critical_95;
using clustersim::sim::Time;
using clustersim::sim::TimeWeighted;
using clustersim::sim::Welford;
using namespace clustersim::sim::time_literals;
using clustersim::test::Rel;

namespace {

struct TwoPass {
  double mean;
  double variance;  // sample, n - 1
};

/// Reference: mean first, then the sum of squared deviations.
TwoPass two_pass(const std::vector<double>& xs) {
  double sum = 0.0;
  for (double x : xs) sum += x;
  const double mean = sum / static_cast<double>(xs.size());
  double ss = 0.0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return {mean, ss / static_cast<double>(xs.size() - 1)};
}

Welford welford_of(const std::vector<double>& xs, std::size_t from, std::size_t to) {
  Welford w;
  for (std::size_t i = from; i < to; ++i) w.add(xs[i]);
  return w;
}

std::vector<double> normal_sample(double mean, double sd, int n, const char* name) {
  RandomStream r = make_stream(23, name);
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(r.normal(mean, sd));
  return xs;
}

}  // namespace

TEST_CASE("Counter counts events and sums weights") {
  Counter c;
  c.add();
  c.add(2.5);
  c.add(0.5);
  // count = 3, sum = 1 + 2.5 + 0.5 = 4.
  CHECK(c.count() == 3);
  CHECK(c.sum() == 4.0);
  Counter d;
  d.add(10.0);
  c.merge(d);
  CHECK(c.count() == 4);
  CHECK(c.sum() == 14.0);
}

TEST_CASE("TimeWeighted: hand-computed time average") {
  // Signal: 0 on [0, 1 s), 4 on [1 s, 3 s), 1 on [3 s, 5 s].
  // integral(5 s) = 0*1 + 4*2 + 1*2 = 10 value.s; mean = 10 / 5 = 2.
  TimeWeighted tw(Time::zero(), 0.0);
  CHECK(tw.mean(Time::zero()) == 0.0);
  tw.update(1_s, 4.0);
  tw.update(3_s, 1.0);
  CHECK(tw.integral(5_s) == Rel(10.0));
  CHECK(tw.mean(5_s) == Rel(2.0));
  // Part way: integral(2 s) = 0*1 + 4*1 = 4; mean = 2. At 3 s: 8 / 3.
  CHECK(tw.mean(3_s) == Rel(8.0 / 3.0));
  CHECK(tw.min() == 0.0);
  CHECK(tw.max() == 4.0);
  CHECK(tw.current() == 1.0);

  SUBCASE("a zero-length value counts for min/max but not for the mean") {
    tw.update(5_s, 100.0);
    tw.update(5_s, 1.0);
    CHECK(tw.max() == 100.0);
    CHECK(tw.mean(5_s) == Rel(2.0));
  }
  SUBCASE("reset starts a new window with the current value") {
    // After reset at 5 s the signal is 1 until 7 s, then 3 until 9 s: mean = (2 + 6) / 4 = 2.
    tw.reset(5_s);
    CHECK(tw.start() == 5_s);
    CHECK(tw.min() == 1.0);
    tw.update(7_s, 3.0);
    CHECK(tw.mean(9_s) == Rel(2.0));
    CHECK(tw.max() == 3.0);
  }
  SUBCASE("time going back is rejected") {
    CHECK_THROWS_AS(tw.update(2_s, 0.0), std::invalid_argument);
    CHECK_THROWS_AS(static_cast<void>(tw.mean(2_s)), std::invalid_argument);
  }
}

TEST_CASE("TimeWeighted: nanosecond steps over a long horizon stay exact enough") {
  // 1 for 1 ns out of 4 years (1.26e17 ns): mean = 1 / 1.26144e17.
  const Time horizon = Time::from_ns(4LL * 365 * 24 * 3600 * 1'000'000'000LL);
  TimeWeighted tw(Time::zero(), 0.0);
  tw.update(Time::from_ns(1000), 1.0);
  tw.update(Time::from_ns(1001), 0.0);
  CHECK(tw.mean(horizon) == Rel(1.0 / static_cast<double>(horizon.ns())).epsilon(1e-12));
}

TEST_CASE("Welford matches the two-pass formula") {
  struct Row {
    const char* what;
    std::vector<double> xs;
  };
  std::vector<double> offset;  // large offset, small spread: the naive sum-of-squares fails here
  for (int i = 0; i < 1000; ++i) offset.push_back(1e9 + static_cast<double>(i % 7) * 1e-3);
  const std::vector<Row> rows = {
      {"small integers", {2, 4, 4, 4, 5, 5, 7, 9}},
      {"two values", {1.0, 3.0}},
      {"negative and positive", {-3.5, 2.25, 0.0, 10.0, -1.0}},
      {"normal sample", normal_sample(5.0, 2.0, 10000, "two_pass")},
      {"offset 1e9", offset},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    const Welford w = welford_of(row.xs, 0, row.xs.size());
    const TwoPass ref = two_pass(row.xs);
    CHECK(w.count() == row.xs.size());
    CHECK(w.mean() == Rel(ref.mean).epsilon(1e-12));
    // At an offset of 1e9 a double resolves 1.2e-7, against deviations of 1e-3: each
    // deviation carries ~1e-4 of rounding, which no algorithm removes (the naive sum of
    // squares is wrong by orders of magnitude there).
    const double tolerance = row.xs.front() > 1e8 ? 1e-4 : 1e-10;
    CHECK(w.variance() == Rel(ref.variance).epsilon(tolerance));
    CHECK(w.stddev() == Rel(std::sqrt(ref.variance)).epsilon(tolerance));
  }
  // {2,4,4,4,5,5,7,9}: mean 5, sum of squared deviations 32, variance 32/7.
  const Welford w = welford_of(rows[0].xs, 0, rows[0].xs.size());
  CHECK(w.mean() == Rel(5.0));
  CHECK(w.variance() == Rel(32.0 / 7.0));
  CHECK(w.min() == 2.0);
  CHECK(w.max() == 9.0);
}

TEST_CASE("Welford with fewer than two observations") {
  Welford w;
  CHECK(w.count() == 0);
  CHECK(std::isnan(w.mean()));
  CHECK(std::isnan(w.variance()));
  CHECK(std::isnan(w.min()));
  w.add(3.0);
  CHECK(w.mean() == 3.0);
  CHECK(std::isnan(w.variance()));
  CHECK(std::isnan(w.stddev()));
  CHECK(std::isnan(w.ci95_half_width()));
}

TEST_CASE("Welford::merge equals one sequential pass") {
  const std::vector<double> xs = normal_sample(-2.0, 3.0, 1001, "merge");
  const Welford all = welford_of(xs, 0, xs.size());
  // Split points include the empty halves.
  for (std::size_t split : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{500}, std::size_t{1000},
                            xs.size()}) {
    CAPTURE(split);
    Welford a = welford_of(xs, 0, split);
    const Welford b = welford_of(xs, split, xs.size());
    a.merge(b);
    CHECK(a.count() == all.count());
    CHECK(a.mean() == Rel(all.mean()).epsilon(1e-12));
    CHECK(a.variance() == Rel(all.variance()).epsilon(1e-12));
    CHECK(a.min() == all.min());
    CHECK(a.max() == all.max());
  }
  // Many small pieces (one per "thread").
  Welford pieces;
  for (std::size_t from = 0; from < xs.size(); from += 37) {
    pieces.merge(welford_of(xs, from, std::min(from + 37, xs.size())));
  }
  CHECK(pieces.mean() == Rel(all.mean()).epsilon(1e-12));
  CHECK(pieces.variance() == Rel(all.variance()).epsilon(1e-12));
}

TEST_CASE("t_critical_95 matches Student-t 0.975 quantiles") {
  // Reference t_(0.975, df) from mpmath (inverse regularised incomplete beta), 10 digits.
  // df <= 30 come from the table, the rest from the Cornish-Fisher expansion.
  struct Row {
    std::uint64_t df;
    double t;
  };
  const std::vector<Row> rows = {
      {1, 12.70620474},  {2, 4.30265273},   {3, 3.182446305},  {5, 2.570581836},  {10, 2.228138852},
      {29, 2.045229642}, {30, 2.042272456}, {31, 2.039513446}, {35, 2.030107928}, {40, 2.02107539},
      {60, 2.000297822}, {100, 1.983971519}, {120, 1.979930405}, {1000, 1.962339081}, {1000000, 1.959966357},
  };
  for (const Row& row : rows) {
    CAPTURE(row.df);
    CHECK(t_critical_95(row.df) == Rel(row.t).epsilon(1e-6));
  }
  // The textbook three-decimal values quoted in every table.
  CHECK(t_critical_95(1) == Rel(12.706).epsilon(1e-3));
  CHECK(t_critical_95(2) == Rel(4.303).epsilon(1e-3));
  CHECK(t_critical_95(10) == Rel(2.228).epsilon(1e-3));
  CHECK(t_critical_95(30) == Rel(2.042).epsilon(1e-3));
  CHECK(t_critical_95(1'000'000'000) == Rel(1.960).epsilon(1e-3));
  // Monotone decreasing across the table/expansion boundary.
  for (std::uint64_t df = 1; df < 200; ++df) CHECK(t_critical_95(df + 1) < t_critical_95(df));
  CHECK_THROWS_AS(t_critical_95(0), std::invalid_argument);
}

TEST_CASE("ci95_half_width = t_(0.975, n-1) s / sqrt(n)") {
  // {1,2,3,4,5}: s^2 = 2.5, t_(0.975,4) = 2.776445105, half-width = 2.776445105 * sqrt(2.5 / 5).
  Welford w;
  for (double x : {1.0, 2.0, 3.0, 4.0, 5.0}) w.add(x);
  CHECK(w.ci95_half_width() == Rel(2.776445105 * std::sqrt(0.5)).epsilon(1e-9));

  // Coverage: over 400 replications of n = 5 normal draws, the interval holds the true
  // mean with probability 0.95; the count is binomial(400, 0.95), sd = sqrt(400 * 0.95 * 0.05).
  RandomStream r = make_stream(29, "coverage");
  int covered = 0;
  const int reps = 400;
  for (int rep = 0; rep < reps; ++rep) {
    Welford s;
    for (int i = 0; i < 5; ++i) s.add(r.normal(10.0, 3.0));
    covered += std::abs(s.mean() - 10.0) <= s.ci95_half_width() ? 1 : 0;
  }
  CHECK(std::abs(covered - 0.95 * reps) < 4.0 * std::sqrt(reps * 0.95 * 0.05));
}

TEST_CASE("quantile: type 7 (R and numpy default)") {
  struct Row {
    std::vector<double> xs;
    double q;
    double expected;  // x_(k) + (h - k)(x_(k+1) - x_(k)), h = (n - 1) q
  };
  const std::vector<Row> rows = {
      {{1, 2, 3, 4}, 0.5, 2.5},          // h = 1.5
      {{1, 2, 3, 4}, 0.25, 1.75},        // h = 0.75
      {{4, 3, 2, 1}, 0.25, 1.75},        // unsorted input
      {{1, 3, 7, 15}, 0.3, 2.8},         // h = 0.9: 1 + 0.9 * 2 (R: quantile(c(1,3,7,15), 0.3))
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9.1},  // h = 8.1
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.0, 1.0},
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1.0, 10.0},
      {{42}, 0.7, 42.0},                 // n = 1
      {{5, 5, 5}, 0.33, 5.0},
      {{-INFINITY, 1, INFINITY}, 0.5, 1.0},  // infinities allowed, exact ranks stay exact
  };
  for (const Row& row : rows) {
    CAPTURE(row.q);
    CHECK(quantile(row.xs, row.q) == Rel(row.expected).epsilon(1e-12));
  }
  CHECK_THROWS_AS(quantile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0, 2.0}, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0, 2.0}, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0, std::nan("")}, 0.5), std::invalid_argument);
}

TEST_CASE("summarize 1..100") {
  std::vector<double> xs;
  for (int i = 100; i >= 1; --i) xs.push_back(i);
  const Summary s = summarize(xs);
  // mean 50.5; variance n(n+1)/12 = 841.666..; p50: h = 49.5 -> 50.5; p90: h = 89.1 -> 90.1;
  // p99: h = 98.01 -> 99.01; ci95 = t_(0.975, 99) s / 10 with t_(0.975, 99) = 1.984216952.
  CHECK(s.n == 100);
  CHECK(s.mean == Rel(50.5));
  CHECK(s.stddev == Rel(std::sqrt(100.0 * 101.0 / 12.0)));
  CHECK(s.ci95 == Rel(1.984216952 * std::sqrt(100.0 * 101.0 / 12.0) / 10.0).epsilon(1e-6));
  CHECK(s.min == 1.0);
  CHECK(s.p50 == Rel(50.5));
  CHECK(s.p90 == Rel(90.1));
  CHECK(s.p99 == Rel(99.01));
  CHECK(s.max == 100.0);

  const Summary empty = summarize({});
  CHECK(empty.n == 0);
  CHECK(std::isnan(empty.mean));
  CHECK(std::isnan(empty.p50));

  const Summary one = summarize({3.0});
  CHECK(one.n == 1);
  CHECK(one.mean == 3.0);
  CHECK(one.p99 == 3.0);
  CHECK(std::isnan(one.stddev));
  CHECK(std::isnan(one.ci95));
}
