#include "sim/time.hpp"

#include <cmath>

#include "sim/check.hpp"

namespace clustersim::sim {

Time Time::from_seconds(double s) {
  // llround of a value beyond int64 is undefined: a time past 292 years is a bug upstream.
  CLUSTERSIM_CHECK(std::abs(s) < 9.2e9, "a time beyond 292 years");
  return Time(static_cast<std::int64_t>(std::llround(s * 1e9)));
}

}  // namespace clustersim::sim
