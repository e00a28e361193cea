// Physical quantities with their units, parsed from and printed to text.
//
// Units live in types, not in names: a `Bandwidth` cannot be passed where `Bytes` is
// expected, and raw doubles appear only at the I/O edges (parsing and printing here,
// JSON writers elsewhere). All quantities but time are doubles in one SI base unit:
//
//   type        base unit   accepted units (case-sensitive; decimal k/M/G/T = 1e3..., Ki/Mi = 2^10...)
//   Time        ns (int64)  ns us µs ms s min h d y      e.g. 700ns 1.5us 10min 54d 4y
//                           (y, input only, is the Julian year of 365.25 d)
//   Bytes       B           B KB MB GB TB PB KiB MiB GiB TiB PiB; a bare number is bytes
//   Bandwidth   B/s         bps Kbps Mbps Gbps Tbps Pbps (bits/s; also Gb/s ...), B/s KB/s ... PB/s, KiB/s ... PiB/s
//   FlopRate    FLOP/s      FLOPS GFLOPS TFLOPS PFLOPS EFLOPS (also TFLOP/s ...)
//   Power       W           W kW MW GW
//   Money       USD         USD kUSD MUSD BUSD
//   EnergyPrice USD/kWh     USD/kWh USD/MWh USD/Wh              e.g. 0.08USD/kWh 80USD/MWh
//   Count       1           a bare number with an optional K M B (=G) T suffix: 15.6T
//
// Parsing is strict: a unit from another family ("400GB" for a bandwidth), a missing
// unit where one is required, or a time finer than 1 ns is an error whose message says
// what was expected and suggests the nearest known unit. Printing picks the largest
// unit that keeps the number readable and always round-trips: parse(format(q)) == q.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace clustersim::sim {

/// A double in a fixed base unit, tagged so that quantities of different kinds do not mix.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity of(double base_units) { return Quantity(base_units); }
  [[nodiscard]] constexpr double value() const { return v_; }

  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v_ / k); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.v_ / b.v_; }
  friend constexpr auto operator<=>(Quantity, Quantity) = default;

 private:
  constexpr explicit Quantity(double v) : v_(v) {}
  double v_ = 0.0;
};

using Bytes = Quantity<struct BytesTag>;          ///< bytes
using Bandwidth = Quantity<struct BandwidthTag>;  ///< bytes per second
using FlopRate = Quantity<struct FlopRateTag>;    ///< floating-point operations per second
using Power = Quantity<struct PowerTag>;          ///< watts
using Money = Quantity<struct MoneyTag>;          ///< US dollars
using Count = Quantity<struct CountTag>;          ///< a dimensionless count (tokens, steps)
using EnergyPrice = Quantity<struct EnergyPriceTag>;  ///< US dollars per kilowatt-hour

/// Time to move `size` at `rate`, rounded to the nearest nanosecond. rate > 0.
Time transfer_time(Bytes size, Bandwidth rate);

/// The result of parsing a quantity: a value, or a message saying what was expected.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;  ///< empty when value is set
  bool beyond = false;  ///< the error: a number past the largest the quantity accepts
  explicit operator bool() const { return value.has_value(); }
};

Parsed<Time> parse_time(std::string_view text);
Parsed<Bytes> parse_bytes(std::string_view text);
/// As parse_bytes, but a number without a unit is bytes (command-line sizes, as nccl-tests
/// takes them); parse_bytes asks for a unit (but for 0).
Parsed<Bytes> parse_byte_count(std::string_view text);
Parsed<Bandwidth> parse_bandwidth(std::string_view text);
Parsed<FlopRate> parse_flop_rate(std::string_view text);
Parsed<Power> parse_power(std::string_view text);
Parsed<Money> parse_money(std::string_view text);
Parsed<Count> parse_count(std::string_view text);
Parsed<EnergyPrice> parse_energy_price(std::string_view text);

/// Canonical text that parses back to exactly the same value ("1.5us", "54d", "50GB/s").
std::string format_time(Time t);
std::string format_bytes(Bytes b);
std::string format_bandwidth(Bandwidth b);
std::string format_flop_rate(FlopRate f);
std::string format_power(Power p);
std::string format_money(Money m);
std::string format_count(Count c);
std::string format_energy_price(EnergyPrice p);

/// Rounded text for people: 4 significant digits in the largest unit that keeps the number
/// at least 1 ("10.24TB", "126.6PFLOPS", "163.2kW"). Not for round-tripping: use format_*.
std::string human(Time t);
std::string human(Bytes b);
std::string human(Bandwidth b);
std::string human(FlopRate f);
std::string human(Power p);
std::string human(Money m);
std::string human(Count c);
std::string human(EnergyPrice p);

/// The candidate closest to `word` by edit distance (ignoring case), if it is close enough
/// to be a likely typo: at most `max_distance`, or max(1, |word|/3) when that is negative
/// (then also the one candidate a word of 4 or more letters begins, an abbreviation).
/// Ties go to the earliest candidate. Used for "did you mean ...?" suggestions.
/// Complexity O(sum of |word| * |candidate|).
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates,
                                         int max_distance = -1);

}  // namespace clustersim::sim
