// Relative comparison of doubles for the tests.
//
// doctest::Approx(v).epsilon(e) accepts |x - v| < e (1 + max(|x|, |v|)): its default scale
// of 1 makes e an ABSOLUTE tolerance for values below 1, so Approx(20e-6).epsilon(0.01)
// accepts anything within 0.01 s of 20 us. Times, rates and shares here are mostly far
// below or above 1, so the tests compare relatively instead:
//
//   CHECK(x == Rel(v));                 |x - v| <= 1.2e-5 max(|x|, |v|) (doctest's default epsilon, 100 x FLT_EPSILON)
//   CHECK(x == Rel(v).epsilon(0.01));   |x - v| <= 0.01 max(|x|, |v|)
//   CHECK(x == Rel(v).epsilon(0.01).margin(1e-9));   ... or |x - v| <= 1e-9 (values near 0)
//   CHECK(x == Rel(v).epsilon(0).margin(1e-9));      |x - v| <= 1e-9 alone (an absolute bound)
//
// An infinite v matches only the same infinity.
//
// Zero equals zero; a non-zero value is never "relatively" equal to zero without a margin.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include <doctest/doctest.h>

namespace clustersim::test {

class Rel {
 public:
  explicit Rel(double value) : value_(value) {}
  Rel& epsilon(double e) {
    epsilon_ = e;
    return *this;
  }
  Rel& margin(double m) {
    margin_ = m;
    return *this;
  }
  [[nodiscard]] bool matches(double x) const {
    if (std::isinf(value_) || std::isinf(x)) return x == value_;
    const double d = std::abs(x - value_);
    return d <= margin_ || d <= epsilon_ * std::max(std::abs(x), std::abs(value_));
  }
  friend bool operator==(double x, const Rel& r) { return r.matches(x); }
  friend bool operator==(const Rel& r, double x) { return r.matches(x); }
  friend bool operator!=(double x, const Rel& r) { return !r.matches(x); }
  friend bool operator!=(const Rel& r, double x) { return !r.matches(x); }
  friend std::ostream& operator<<(std::ostream& os, const Rel& r) {
    return os << "Rel(" << r.value_ << ", relative " << r.epsilon_ << ")";
  }

 private:
  double value_;
  double epsilon_ = std::numeric_limits<float>::epsilon() * 100;  // doctest's default
  double margin_ = 0.0;
};

}  // namespace clustersim::test
