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
// `Time::max()` stands for "never" (an event that is not scheduled).
//
// Leaving the range is not always a bug: a scenario's values can each be legal and still
// compose into a duration past 292 years (a 1 B/s HBM, a latency of 1000 days per
// collective step over thousands of steps). So every conversion and every sum, difference
// or product of times is checked (a compiler overflow builtin: one well-predicted branch),
// and throws TimeRangeError, which the commands report as an input error (exit 2), never
// as undefined behaviour or an internal error.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace clustersim::sim {

/// A time outside the clock's range (+-292 years). The input asked for a duration the
/// simulator cannot represent: the commands report it as an input error (exit 2).
class TimeRangeError : public std::range_error {
 public:
  explicit TimeRangeError(const std::string& what) : std::range_error(what) {}
};

namespace detail {
[[noreturn]] void throw_time_overflow(const char* operation);
}  // namespace detail

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time from_ns(std::int64_t ns) { return Time(ns); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  /// Seconds as a double; rounded to the nearest nanosecond. Only for I/O edges and
  /// cost models that produce a real-valued duration. Throws TimeRangeError past the
  /// range, naming `what` (e.g. "a collective") when given.
  static Time from_seconds(double s, const char* what = nullptr);

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  /// Divided rather than multiplied by 1e-9 (which is not exact): the quotient is the double
  /// nearest ns / 10^9, so 8,400 ns prints as 8.4e-06, not 8.400000000000001e-06.
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  // Checked: a result past the range throws TimeRangeError (see the header comment).
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  friend constexpr Time operator+(Time a, Time b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a.ns_, b.ns_, &r)) [[unlikely]] detail::throw_time_overflow("a sum of times");
    return Time(r);
  }
  friend constexpr Time operator-(Time a, Time b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a.ns_, b.ns_, &r)) [[unlikely]] detail::throw_time_overflow("a difference of times");
    return Time(r);
  }
  friend constexpr Time operator*(Time a, std::int64_t k) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a.ns_, k, &r)) [[unlikely]] detail::throw_time_overflow("a multiple of a time");
    return Time(r);
  }
  friend constexpr Time operator*(std::int64_t k, Time a) { return a * k; }
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
