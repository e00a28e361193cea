#include "sim/time.hpp"

#include <cmath>

namespace clustersim::sim {

Time Time::from_seconds(double s) { return Time(static_cast<std::int64_t>(std::llround(s * 1e9))); }

}  // namespace clustersim::sim
