#include "sim/time.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/check.hpp"

namespace clustersim::sim {

namespace {
constexpr const char* kRange = "the simulated clock counts nanoseconds in 64 bits and reaches 292 years";
}  // namespace

void detail::throw_time_overflow(const char* operation) {
  throw TimeRangeError(fmt::format("{} is past the clock's range ({})", operation, kRange));
}

Time Time::from_seconds(double s, const char* what) {
  CLUSTERSIM_CHECK(!std::isnan(s), "a time that is not a number");
  // llround of a value beyond int64 is undefined: check first. 9.2e9 s is just under 2^63 ns.
  if (!(std::abs(s) < 9.2e9)) [[unlikely]] {
    throw TimeRangeError(fmt::format("{} of {:.4g} s ({:.3g} years) is past the clock's range ({})",
                                     what ? what : "a duration", s, s / (365.25 * 86400.0), kRange));
  }
  return Time(static_cast<std::int64_t>(std::llround(s * 1e9)));
}

}  // namespace clustersim::sim
