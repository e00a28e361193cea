// Deterministic random numbers: a generator, named streams and the distributions the
// models draw from.
//
// Usage:
//
//   RandomStream failures = make_stream(cfg.seed, "failures", replication);
//   Time next = Time::from_seconds(failures.exponential(mtbf_s));
//
// Every stochastic part of a model owns its own `RandomStream`, derived from the
// scenario's root seed and a stable name. Streams are passed explicitly (no global
// generator), so two simulations can run side by side in one process, and adding a new
// named stream never shifts the draws of an existing one.
//
// Determinism contract: the same (seed, name, index) gives the same sequence of
// `next_u64()`, `uniform01()`, `uniform()` and `uniform_int()` results, bit for bit, on
// every platform and standard library. That is why nothing here uses `std::hash` or the
// std:: distributions (their algorithms differ between libstdc++, libc++ and MSVC).
// The continuous distributions below are exact compositions of IEEE basic operations and
// `std::log`, `std::log1p`, `std::exp`, `std::pow`, `std::cos`; those libm functions are
// not required to be correctly rounded, so on a different libm a draw may differ in
// its last bit or so (LIMITATION). Every draw still consumes the same number of words on
// every platform, so the streams never drift apart: the only draw with a variable count,
// the ziggurat exponential, decides accept or reject with IEEE basic operations and tables
// built from them at compile time, never with libm.
//
// Algorithms:
//   - Generator: xoshiro256** (Blackman & Vigna 2018), 256-bit state, period 2^256 - 1,
//     passes BigCrush. Checked against the reference outputs for state {1, 2, 3, 4}.
//   - Seeding: splitmix64 (Steele, Lea & Flood 2014) expands a 64-bit seed into the
//     state, as Blackman & Vigna recommend; it never yields the all-zero state.
//   - Stream names: FNV-1a 64 of the name's bytes, mixed with the seed and index
//     through the splitmix64 finaliser (see `make_stream`).
//   - uniform01: the top 53 bits of one word times 2^-53, so every value is a multiple
//     of 2^-53 in [0, 1).
//   - uniform_int: Lemire's multiply-and-reject method (Lemire 2019), unbiased.
//   - exponential: the ziggurat method (Marsaglia & Tsang 2000) with 256 layers, the layer
//     and the abscissa taken from disjoint bits of one word (Doornik 2005): one word in
//     97.8% of draws, 1.034 on average; about twice as fast as inversion (~6 ns vs ~13 ns
//     here), which matters to an event loop drawing one per event. Exact up to its tables
//     (within 5e-13 of a 50-digit evaluation of the layer recurrence).
//   - Weibull, Pareto: inversion of the CDF, one word per draw.
//   - normal: Box-Muller (Box & Muller 1958), two words per draw; the second variate
//     of the pair is discarded, so a stream holds no cached state and copying a stream
//     copies its future exactly. Lognormal is exp(normal).
//   - DiscreteDistribution: Walker's alias method in Vose's numerically stable form
//     (Vose 1991): O(n) build, O(1) sample.
//   - EmpiricalDistribution: inversion of the piecewise-linear empirical CDF (the same
//     interpolation as the type-7 quantile in stats.hpp).
//
// LIMITATIONS: not cryptographic; inversion from 53-bit uniforms truncates the far
// tail (an exponential never exceeds about 44.4 means: the ziggurat's base 7.7 plus an
// inverted tail of at most 36.7, a Weibull (-ln(1 - U))^(1/shape) <= 36.7^(1/shape) scales,
// a Pareto never exceeds scale * 2^(53/shape)); streams derived from distinct names are
// independent only in
// the statistical sense of a good hash (a 64-bit seed collision is possible in
// principle, with probability about 2^-64 per pair).
//
// Validation: tests/sim/test_random.cpp checks the published xoshiro256**, splitmix64
// and FNV-1a vectors, pins the first draws of make_stream(42, "x"), and compares the
// sample moments of every distribution with the analytic ones; the exponential is also
// checked bin by bin (chi-square on equiprobable bins), beyond the ziggurat's base, and
// for its word count.
//
// References:
//   D. Blackman, S. Vigna, "Scrambled linear pseudorandom number generators", 2018
//     (ACM TOMS 47(4), 2021); https://prng.di.unimi.it/
//   G. Steele, D. Lea, C. Flood, "Fast splittable pseudorandom number generators",
//     OOPSLA 2014.
//   D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1), 2019.
//   G. Marsaglia, W. W. Tsang, "The ziggurat method for generating random variables",
//     J. Statistical Software 5(8), 2000.
//   J. A. Doornik, "An improved ziggurat method to generate normal random samples",
//     University of Oxford, 2005.
//   M. D. Vose, "A linear algorithm for generating random numbers with a given
//     distribution", IEEE TSE 17(9), 1991.
//   G. E. P. Box, M. E. Muller, "A note on the generation of random normal deviates",
//     Ann. Math. Statist. 29(2), 1958.
//   G. Fowler, L. C. Noll, K.-P. Vo, "FNV hash", IETF draft-eastlake-fnv.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace clustersim::sim {

/// Advances `state` by the golden-ratio increment and returns the mixed value
/// (splitmix64). From state 0 the first output is 0xe220a8397b1dcdaf.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a 64-bit hash of the bytes of `s`: stable across platforms, unlike std::hash.
constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<std::uint64_t>(static_cast<unsigned char>(c));
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// One independent sequence of random numbers (xoshiro256**). 32 bytes, trivially
/// copyable; a copy continues with exactly the same draws as the original.
/// Parameter checks throw std::invalid_argument (callers pass config-validated values).
class RandomStream {
 public:
  /// State expanded from `seed` by four splitmix64 steps.
  explicit RandomStream(std::uint64_t seed);

  /// A stream at an explicit generator state, for reference tests.
  /// Precondition: not all words zero (the one state xoshiro never leaves).
  static RandomStream from_state(const std::array<std::uint64_t, 4>& state);

  [[nodiscard]] const std::array<std::uint64_t, 4>& state() const { return s_; }

  /// The next raw 64-bit word. Every other draw is built from these.
  std::uint64_t next_u64();

  /// Uniform on [0, 1), a multiple of 2^-53. One word.
  double uniform01();

  /// Uniform on [a, b]; b itself is reached only through rounding. One word.
  /// Precondition: a, b finite, a <= b.
  double uniform(double a, double b);

  /// Uniform integer in [0, n), exactly unbiased (Lemire). Usually one word; expected
  /// words < 2. Precondition: n > 0.
  std::uint64_t uniform_int(std::uint64_t n);

  /// Exponential with the given mean (rate 1/mean): mean * standard_exponential().
  /// Precondition: mean > 0, finite.
  double exponential(double mean);

  /// Exponential with mean 1, by the ziggurat method (see random.cpp for the layers).
  /// One word in 97.8% of draws, 1.034 on average, the same count on every platform.
  double standard_exponential();

  /// Weibull, CDF 1 - exp(-(x/scale)^shape): scale * (-ln(1 - U))^(1/shape). One word.
  /// Precondition: shape > 0, scale > 0, both finite.
  double weibull(double shape, double scale);

  /// Normal with mean and standard deviation `sd` (Box-Muller, cosine branch):
  /// mean + sd * sqrt(-2 ln U1) * cos(2 pi U2) with U1 in (0, 1]. Two words.
  /// Precondition: mean finite, sd >= 0 finite.
  double normal(double mean, double sd);

  /// Lognormal: exp(normal(mu, sigma)); mu and sigma are those of the underlying
  /// normal, so the median is exp(mu) and the mean exp(mu + sigma^2 / 2). Two words.
  /// Precondition: mu finite, sigma >= 0 finite.
  double lognormal(double mu, double sigma);

  /// Lognormal given its median (= exp(mu)) instead of mu. Two words.
  /// Precondition: median > 0 finite, sigma >= 0 finite.
  double lognormal_median(double median, double sigma);

  /// mu of the underlying normal for a lognormal with this median: ln(median).
  static double lognormal_mu_from_median(double median);
  /// mu of the underlying normal for a lognormal with this mean: ln(mean) - sigma^2 / 2.
  static double lognormal_mu_from_mean(double mean, double sigma);

  /// Pareto (type I), CDF 1 - (scale / x)^shape for x >= scale: scale * (1 - U)^(-1/shape).
  /// The mean, shape * scale / (shape - 1), is finite only for shape > 1. One word.
  /// Precondition: shape > 0, scale > 0, both finite.
  double pareto(double shape, double scale);

  /// Gamma with density x^(shape-1) e^(-x/scale) / (Gamma(shape) scale^shape): mean
  /// shape * scale. Marsaglia and Tsang's squeeze ("A Simple Method for Generating Gamma
  /// Variables", ACM TOMS 26(3), 2000) on normal() and uniform01(), for shape >= 1; below 1,
  /// gamma(shape + 1) * U^(1/shape) (their section 6). Three words or more per try, a try
  /// accepted with probability > 0.95; the same words on every platform.
  /// Precondition: shape > 0, scale > 0, both finite.
  double gamma(double shape, double scale);

  friend bool operator==(const RandomStream&, const RandomStream&) = default;

 private:
  RandomStream() = default;
  std::array<std::uint64_t, 4> s_{};
};

/// The stream named `name` under `root_seed`:
///   key = mix(root_seed ^ mix(fnv1a64(name))),   state = RandomStream(key),
/// where mix(x) is the first splitmix64 output from state x. Streams depend only on their own
/// (seed, name), so adding a stream never changes another's draws.
RandomStream make_stream(std::uint64_t root_seed, std::string_view name);

/// Member `index` of the family `name` (replication r of "failures", GPU g of "jitter"):
///   key = mix(mix(root_seed ^ mix(fnv1a64(name))) ^ mix(index)),   state = RandomStream(key).
/// Independent of make_stream(root_seed, name) and of every other index.
RandomStream make_stream(std::uint64_t root_seed, std::string_view name, std::uint64_t index);

/// Samples index i with probability weights[i] / sum(weights), by Walker's alias method
/// (Vose 1991). Build O(n) time and memory, sample O(1): one uniform_int and one
/// uniform01 per draw.
class DiscreteDistribution {
 public:
  /// Precondition: at least one weight, all finite and >= 0, sum > 0, fewer than
  /// 2^32 weights.
  explicit DiscreteDistribution(const std::vector<double>& weights);

  [[nodiscard]] std::size_t sample(RandomStream& rng) const;

  [[nodiscard]] std::size_t size() const { return prob_.size(); }
  /// weights[i] / sum(weights).
  [[nodiscard]] double probability(std::size_t i) const { return normalized_.at(i); }

 private:
  std::vector<double> normalized_;
  std::vector<double> prob_;          // chance of keeping column i rather than its alias
  std::vector<std::uint32_t> alias_;  // the other outcome stored in column i
};

/// Samples from observed values.
///
/// `sample` inverts the piecewise-linear CDF through the points
/// (x_(k), k / (n - 1)) of the sorted observations x_(0) <= ... <= x_(n-1): with
/// h = U (n - 1) and k = floor(h) it returns x_(k) + (h - k) (x_(k+1) - x_(k)), i.e. the
/// type-7 quantile at U. Values lie in [min, max]; the tails beyond the observed range
/// are never produced (LIMITATION: fit a parametric tail where it matters).
/// `resample` returns one of the observations, each with probability 1/n (bootstrap).
class EmpiricalDistribution {
 public:
  /// Precondition: at least one value, all finite.
  explicit EmpiricalDistribution(std::vector<double> values);

  /// Interpolated draw, one word. O(1).
  [[nodiscard]] double sample(RandomStream& rng) const;
  /// One of the observed values, uniformly. O(1).
  [[nodiscard]] double resample(RandomStream& rng) const;
  /// Type-7 quantile of the observations. Precondition: 0 <= q <= 1.
  [[nodiscard]] double quantile(double q) const;

  [[nodiscard]] std::size_t size() const { return sorted_.size(); }

 private:
  std::vector<double> sorted_;
};

}  // namespace clustersim::sim
