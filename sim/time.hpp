// Simulated time.
//
// `Time` is a signed 64-bit count of nanoseconds. It serves both as a point on the
// simulation clock (nanoseconds since the start of the run) and as a span between two
// points: one type keeps arithmetic simple, as in ns-3's `Time`.
//
// Range trade-off: int64 nanoseconds reach +-9.22e18 ns = +-292 years, enough for a
// multi-year fleet study, and every value is exact, so runs are deterministic on every
// platform (no floating-point clock drift). The cost is a 1 ns resolution: a time given
// with a finer fraction is rejected by the parser rather than silently rounded.
// Arithmetic that leaves the range is a programming error; `Time::max()` stands for
// "never" (an event that is not scheduled).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::sim {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time from_ns(std::int64_t ns) { return Time(ns); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  /// Seconds as a double; rounded to the nearest nanosecond. Only for I/O edges and
  /// cost models that produce a real-valued duration.
  static Time from_seconds(double s);

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }

  constexpr Time& operator+=(Time o) { ns_ += o.ns_; return *this; }
  constexpr Time& operator-=(Time o) { ns_ -= o.ns_; return *this; }
  friend constexpr Time operator+(Time a, Time b) { return Time(a.ns_ + b.ns_); }
  friend constexpr Time operator-(Time a, Time b) { return Time(a.ns_ - b.ns_); }
  friend constexpr Time operator*(Time a, std::int64_t k) { return Time(a.ns_ * k); }
  friend constexpr Time operator*(std::int64_t k, Time a) { return Time(a.ns_ * k); }
  friend constexpr std::int64_t operator/(Time a, Time b) { return a.ns_ / b.ns_; }
  friend constexpr auto operator<=>(Time, Time) = default;

 private:
  constexpr explicit Time(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

namespace time_literals {
constexpr Time operator""_ns(unsigned long long v) { return Time::from_ns(static_cast<std::int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::from_ns(static_cast<std::int64_t>(v) * 1'000); }
constexpr Time operator""_ms(unsigned long long v) { return Time::from_ns(static_cast<std::int64_t>(v) * 1'000'000); }
constexpr Time operator""_s(unsigned long long v) { return Time::from_ns(static_cast<std::int64_t>(v) * 1'000'000'000); }
}  // namespace time_literals

}  // namespace clustersim::sim
