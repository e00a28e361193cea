#include "sim/random.hpp"

#include "sim/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace clustersim::sim {

namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/// The first splitmix64 output from state x: a bijective 64-bit mixer.
constexpr std::uint64_t mix(std::uint64_t x) { return splitmix64(x); }

struct U128 {
  std::uint64_t hi;
  std::uint64_t lo;
};

/// Full 64 x 64 -> 128-bit product from 32-bit halves (portable; no __int128).
constexpr U128 mul_wide(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kLow = 0xffffffffULL;
  const std::uint64_t a_lo = a & kLow;
  const std::uint64_t a_hi = a >> 32;
  const std::uint64_t b_lo = b & kLow;
  const std::uint64_t b_hi = b >> 32;
  const std::uint64_t p0 = a_lo * b_lo;
  const std::uint64_t p1 = a_lo * b_hi;
  const std::uint64_t p2 = a_hi * b_lo;
  const std::uint64_t p3 = a_hi * b_hi;
  const std::uint64_t mid = (p0 >> 32) + (p1 & kLow) + (p2 & kLow);
  return U128{p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32), (mid << 32) | (p0 & kLow)};
}

// exp(x) for -708 < x <= 0 from IEEE basic operations only, so that it gives the same
// bits on every platform (std::exp may differ in the last bit between libms): reduce
// x = -k ln2 + r with |r| <= ln2 / 2 (Cody & Waite: ln2 split so that k * kLn2Hi is exact),
// sum the Taylor series of e^r to degree 16 by Horner (truncation < 1e-20), scale by 2^-k
// exactly. Within 1 ulp of glibc's exp on [-9, 0], the range used: building the ziggurat
// tables at compile time, and its wedge test.
constexpr double exp_nonpositive(double x) {
  constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
  const int k = static_cast<int>(-x * 0x1.71547652b82fep0 + 0.5);  // round(-x / ln2)
  const double r = (x + k * kLn2Hi) + k * kLn2Lo;
  double sum = 1.0;
  for (int n = 16; n >= 1; --n) sum = 1.0 + sum * r / n;
  for (int i = 0; i < k; ++i) sum *= 0.5;
  return sum;
}

// ln(x) for x > 0 finite, at compile time only (building the ziggurat tables): reduce
// x = m 2^e with m in [sqrt(1/2), sqrt(2)) by exact halving and doubling, then
// ln(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m - 1)/(m + 1), |s| < 0.18.
consteval double log_positive(double x) {
  constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
  int e = 0;
  while (x >= 0x1.6a09e667f3bcdp0) {
    x *= 0.5;
    ++e;
  }
  while (x < 0x1.6a09e667f3bcdp-1) {
    x *= 2.0;
    --e;
  }
  const double s = (x - 1.0) / (x + 1.0);
  const double s2 = s * s;
  double series = 0.0;
  for (int n = 41; n >= 3; n -= 2) series = (series + 1.0 / n) * s2;
  return (e * kLn2Hi + 2.0 * s * (1.0 + series)) + e * kLn2Lo;
}

// The exponential ziggurat of Marsaglia & Tsang (2000): 256 layers of equal area v cover
// f(x) = e^-x, x >= 0. Layer 0 is the base strip [0, r] x [0, f(r)] plus the tail x > r,
// drawn as a rectangle of width x_0 = v / f(r) = r + 1; layer i >= 1 is the rectangle
// [0, x_i] x [f(x_i), f(x_{i+1})], with
//
//   x_1 = r,   x_{i+1} = -ln(f(x_i) + v / x_i)   (so that x_i (f(x_{i+1}) - f(x_i)) = v),
//   x_256 = 0, f(x_256) = 1,   v = r f(r) + integral_r^inf f = f(r) (r + 1),
//
// where r = 7.69711747013104972 is the published value for which the recurrence reaches 0
// at i = 256 (the top layer's area is then v to 2e-15). A point uniform on a uniformly
// chosen layer is uniform on the union; keeping those under f gives Exp(1) exactly.
// Built at compile time; checked against a 50-digit evaluation when written: x_i within
// 5e-13 relative, accept thresholds within 2e-13.
struct Ziggurat {
  static constexpr double kR = 7.69711747013104972;
  std::array<std::uint64_t, 256> accept{};  // floor(2^53 x_{i+1} / x_i): below it, under f
  std::array<double, 256> scale{};          // x_i 2^-53
  std::array<double, 257> f{};              // f(x_i); f[0] unused
};

consteval Ziggurat make_ziggurat() {
  Ziggurat z;
  const double v = exp_nonpositive(-Ziggurat::kR) * (Ziggurat::kR + 1.0);
  std::array<double, 257> x{};
  x[0] = Ziggurat::kR + 1.0;  // v / f(r)
  x[1] = Ziggurat::kR;
  z.f[1] = exp_nonpositive(-Ziggurat::kR);
  for (std::size_t i = 2; i < 256; ++i) {
    x[i] = -log_positive(z.f[i - 1] + v / x[i - 1]);
    z.f[i] = exp_nonpositive(-x[i]);
  }
  x[256] = 0.0;
  z.f[256] = 1.0;
  for (std::size_t i = 0; i < 256; ++i) {
    z.accept[i] = static_cast<std::uint64_t>(x[i + 1] / x[i] * 0x1.0p53);
    z.scale[i] = x[i] * 0x1.0p-53;
  }
  return z;
}

constexpr Ziggurat kZiggurat = make_ziggurat();

bool positive_finite(double x) { return x > 0.0 && std::isfinite(x); }
bool non_negative_finite(double x) { return x >= 0.0 && std::isfinite(x); }

void require(bool ok, const char* what, const char* condition, double got) {
  if (!ok) {
    throw std::invalid_argument(fmt::format("{}: must be {}, got {}", what, condition, got));
  }
}

}  // namespace

RandomStream::RandomStream(std::uint64_t seed) {
  std::uint64_t sm = seed;
  for (auto& word : s_) word = splitmix64(sm);
}

RandomStream RandomStream::from_state(const std::array<std::uint64_t, 4>& state) {
  if (state[0] == 0 && state[1] == 0 && state[2] == 0 && state[3] == 0) {
    throw std::invalid_argument("RandomStream::from_state: the all-zero state is not allowed");
  }
  RandomStream r;
  r.s_ = state;
  return r;
}

std::uint64_t RandomStream::next_u64() {
  // xoshiro256** 1.0, as in Blackman & Vigna's reference xoshiro256starstar.c.
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RandomStream::uniform01() {
  // 2^53 distinct values k * 2^-53; both the conversion and the scaling are exact.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double RandomStream::uniform(double a, double b) {
  if (!(std::isfinite(a) && std::isfinite(b) && a <= b)) {
    throw std::invalid_argument(
        fmt::format("RandomStream::uniform: need finite a <= b, got a = {}, b = {}", a, b));
  }
  return a + (b - a) * uniform01();
}

std::uint64_t RandomStream::uniform_int(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("RandomStream::uniform_int: n must be > 0, got 0");
  // Lemire 2019: the high word of x * n is uniform on [0, n) once the low word is
  // outside the 2^64 mod n values that would over-represent some results.
  U128 m = mul_wide(next_u64(), n);
  if (m.lo < n) {
    const std::uint64_t threshold = (std::uint64_t{0} - n) % n;  // 2^64 mod n
    while (m.lo < threshold) m = mul_wide(next_u64(), n);
  }
  return m.hi;
}

double RandomStream::exponential(double mean) {
  require(positive_finite(mean), "RandomStream::exponential: mean", "> 0 and finite", mean);
  return mean * standard_exponential();
}

double RandomStream::standard_exponential() {
  // Ziggurat (see kZiggurat): the low 8 bits of a word pick a layer i, its top 53 bits a
  // point x = u 2^-53 x_i across it. Left of x_{i+1} the whole column is under f: accept
  // (97.8% of draws end here, after one word). Otherwise, in layer 0 the point is in the
  // tail, which is r + Exp(1) by memorylessness (drawn by inversion, one more word); in a
  // wedge a second word picks the height y in [f(x_i), f(x_{i+1})]: accept if y < e^-x,
  // else start again. The decisions use IEEE operations only (exp_nonpositive, not libm).
  for (;;) {
    const std::uint64_t w = next_u64();
    const unsigned i = static_cast<unsigned>(w & 0xFF);
    const std::uint64_t u = w >> 11;
    const double x = static_cast<double>(u) * kZiggurat.scale[i];
    if (u < kZiggurat.accept[i]) return x;
    if (i == 0) return Ziggurat::kR - std::log1p(-uniform01());  // 1 - U in (0, 1]
    const double y = kZiggurat.f[i] + uniform01() * (kZiggurat.f[i + 1] - kZiggurat.f[i]);
    if (y < exp_nonpositive(-x)) return x;
  }
}

double RandomStream::weibull(double shape, double scale) {
  require(positive_finite(shape), "RandomStream::weibull: shape", "> 0 and finite", shape);
  require(positive_finite(scale), "RandomStream::weibull: scale", "> 0 and finite", scale);
  return scale * std::pow(-std::log1p(-uniform01()), 1.0 / shape);
}

double RandomStream::normal(double mean, double sd) {
  require(std::isfinite(mean), "RandomStream::normal: mean", "finite", mean);
  require(non_negative_finite(sd), "RandomStream::normal: sd", ">= 0 and finite", sd);
  const double u1 = 1.0 - uniform01();  // (0, 1]
  const double u2 = uniform01();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  return mean + sd * radius * std::cos(2.0 * std::numbers::pi * u2);
}

double RandomStream::lognormal(double mu, double sigma) {
  require(std::isfinite(mu), "RandomStream::lognormal: mu", "finite", mu);
  require(non_negative_finite(sigma), "RandomStream::lognormal: sigma", ">= 0 and finite", sigma);
  return std::exp(normal(mu, sigma));
}

double RandomStream::lognormal_median(double median, double sigma) {
  return lognormal(lognormal_mu_from_median(median), sigma);
}

double RandomStream::lognormal_mu_from_median(double median) {
  require(positive_finite(median), "lognormal: median", "> 0 and finite", median);
  return std::log(median);
}

double RandomStream::lognormal_mu_from_mean(double mean, double sigma) {
  require(positive_finite(mean), "lognormal: mean", "> 0 and finite", mean);
  require(non_negative_finite(sigma), "lognormal: sigma", ">= 0 and finite", sigma);
  return std::log(mean) - 0.5 * sigma * sigma;
}

double RandomStream::pareto(double shape, double scale) {
  require(positive_finite(shape), "RandomStream::pareto: shape", "> 0 and finite", shape);
  require(positive_finite(scale), "RandomStream::pareto: scale", "> 0 and finite", scale);
  // 1 - U is exact (U is a multiple of 2^-53) and in (0, 1].
  return scale * std::pow(1.0 - uniform01(), -1.0 / shape);
}

double RandomStream::gamma(double shape, double scale) {
  require(positive_finite(shape), "RandomStream::gamma: shape", "> 0 and finite", shape);
  require(positive_finite(scale), "RandomStream::gamma: scale", "> 0 and finite", scale);
  if (shape < 1.0) {
    const double g = gamma(shape + 1.0, 1.0);
    return scale * g * std::pow(1.0 - uniform01(), 1.0 / shape);  // 1 - U in (0, 1]
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = normal(0.0, 1.0);
    const double v0 = 1.0 + c * x;
    if (v0 <= 0.0) continue;
    const double v = v0 * v0 * v0;
    const double u = 1.0 - uniform01();  // (0, 1]: log(u) finite
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return scale * d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return scale * d * v;
  }
}

RandomStream make_stream(std::uint64_t root_seed, std::string_view name) {
  return RandomStream(mix(root_seed ^ mix(fnv1a64(name))));
}

RandomStream make_stream(std::uint64_t root_seed, std::string_view name, std::uint64_t index) {
  return RandomStream(mix(mix(root_seed ^ mix(fnv1a64(name))) ^ mix(index)));
}

DiscreteDistribution::DiscreteDistribution(const std::vector<double>& weights) {
  const std::size_t n = weights.size();
  if (n == 0) throw std::invalid_argument("DiscreteDistribution: no weights");
  if (n >= (std::size_t{1} << 32)) throw std::invalid_argument("DiscreteDistribution: 2^32 weights or more");
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!non_negative_finite(weights[i])) {
      throw std::invalid_argument(
          fmt::format("DiscreteDistribution: weight {} must be >= 0 and finite, got {}", i, weights[i]));
    }
    sum += weights[i];
  }
  if (!positive_finite(sum)) {
    throw std::invalid_argument(fmt::format("DiscreteDistribution: weights must sum to > 0 and finite, got {}", sum));
  }

  // Vose 1991: scale so the average column holds 1, then repeatedly fill a column that
  // holds less than 1 ("small") with the excess of one that holds more ("large").
  normalized_.resize(n);
  prob_.assign(n, 1.0);
  alias_.resize(n);
  std::vector<double> scaled(n);
  std::vector<std::uint32_t> small;
  std::vector<std::uint32_t> large;
  const double dn = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    normalized_[i] = weights[i] / sum;
    scaled[i] = normalized_[i] * dn;
    alias_[i] = static_cast<std::uint32_t>(i);
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t l = small.back();
    small.pop_back();
    const std::uint32_t g = large.back();
    large.pop_back();
    prob_[l] = scaled[l];
    alias_[l] = g;
    scaled[g] = (scaled[g] + scaled[l]) - 1.0;
    (scaled[g] < 1.0 ? small : large).push_back(g);
  }
  // Whatever remains holds 1 up to rounding; prob_ = 1 and alias_ = self already.
}

std::size_t DiscreteDistribution::sample(RandomStream& rng) const {
  const auto column = static_cast<std::size_t>(rng.uniform_int(prob_.size()));
  return rng.uniform01() < prob_[column] ? column : alias_[column];
}

EmpiricalDistribution::EmpiricalDistribution(std::vector<double> values) : sorted_(std::move(values)) {
  if (sorted_.empty()) throw std::invalid_argument("EmpiricalDistribution: no values");
  for (std::size_t i = 0; i < sorted_.size(); ++i) {
    if (!std::isfinite(sorted_[i])) {
      throw std::invalid_argument(fmt::format("EmpiricalDistribution: value {} must be finite, got {}", i, sorted_[i]));
    }
  }
  std::sort(sorted_.begin(), sorted_.end());
}

double EmpiricalDistribution::sample(RandomStream& rng) const { return quantile_sorted(sorted_, rng.uniform01()); }

double EmpiricalDistribution::resample(RandomStream& rng) const {
  return sorted_[static_cast<std::size_t>(rng.uniform_int(sorted_.size()))];
}

double EmpiricalDistribution::quantile(double q) const { return quantile_sorted(sorted_, q); }

}  // namespace clustersim::sim
