#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "sim/check.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

using namespace clustersim::sim;
using clustersim::test::Rel;

TEST_CASE("time parses every unit to exact nanoseconds") {
  struct Row { const char* text; std::int64_t ns; };
  const Row rows[] = {
      {"700ns", 700},           {"1.5us", 1'500},          {"1.5µs", 1'500},
      {"2ms", 2'000'000},       {"0.25s", 250'000'000},    {"10min", 600'000'000'000},
      {"4h", 14'400'000'000'000}, {"54d", 4'665'600'000'000'000}, {"0", 0},
      {" 3 s ", 3'000'000'000},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    const Parsed<Time> p = parse_time(r.text);
    REQUIRE(p);
    CHECK(p.value->ns() == r.ns);
  }
}

TEST_CASE("time rejects what it cannot represent, saying why") {
  CHECK(parse_time("5").error == "'5' has no unit: expected a time such as 700ns, 1.5us, 10min or 54d");
  CHECK(parse_time("0.5ns").error == "'0.5ns' is finer than the 1ns resolution of simulated time");
  CHECK(parse_time("300yr").error.find("unknown unit 'yr'") == 0);
  // y is the Julian year, 365.25 d; 300 of them exceed int64 nanoseconds.
  CHECK(parse_time("300y").error == "'300y' is beyond the 292-year range of simulated time");
  CHECK(parse_time("10mins").error.find("(did you mean '10min'?)") != std::string::npos);
  CHECK(parse_time("-1s").error == "expected a time that is not negative, got '-1s'");
  CHECK(parse_time("fast").error == "expected a time such as 700ns, 1.5us, 10min or 54d, got 'fast'");
  // 300 years exceeds int64 nanoseconds (292 years).
  CHECK(parse_time("110000d").error == "'110000d' is beyond the 292-year range of simulated time");
}

TEST_CASE("time arithmetic past the clock's range throws TimeRangeError, not undefined behaviour") {
  using namespace clustersim::sim::time_literals;
  const Time year = Time::from_ns(31'557'600'000'000'000);  // 365.25 d
  const Time almost = year * 290;
  CHECK((almost + year).ns() == 291 * year.ns());
  CHECK_THROWS_AS(almost + year * 3, TimeRangeError);
  CHECK_THROWS_AS(Time::zero() - almost - almost - year * 5, TimeRangeError);
  CHECK_THROWS_AS(year * 300, TimeRangeError);
  CHECK_THROWS_AS(Time::max() + 1_ns, TimeRangeError);
  Time t = almost;
  CHECK_THROWS_AS(t += almost, TimeRangeError);
  CHECK(t == almost);  // unchanged by the failed sum
  CHECK(Time::from_seconds(9.1e9).ns() == 9'100'000'000'000'000'000);
  CHECK_THROWS_AS(Time::from_seconds(9.3e9), TimeRangeError);
  CHECK_THROWS_AS(Time::from_seconds(-1e300), TimeRangeError);
  CHECK_THROWS_AS(Time::from_seconds(std::numeric_limits<double>::infinity()), TimeRangeError);
  try {
    (void)Time::from_seconds(1e12, "a collective");
    FAIL("no exception");
  } catch (const TimeRangeError& e) {
    CHECK(std::string(e.what()).find("a collective of 1e+12 s (3.17e+04 years) is past the clock's range") == 0);
  }
  // NaN is no input's fault: a bug upstream.
  CHECK_THROWS_AS(Time::from_seconds(std::nan("")), InternalError);
}

TEST_CASE("time formatting picks the largest exact unit and round-trips") {
  CHECK(format_time(Time::from_ns(700)) == "700ns");
  CHECK(format_time(Time::from_ns(1'500)) == "1.5us");
  CHECK(format_time(Time::from_ns(600'000'000'000)) == "10min");
  CHECK(format_time(Time::from_ns(4'665'600'000'000'000)) == "54d");
  CHECK(format_time(Time::zero()) == "0s");
  // 1 ns more than a day is not a decimal number of days that parses back exactly.
  const Time odd = Time::from_ns(86'400'000'000'001);
  CHECK(parse_time(format_time(odd)).value == odd);
}

TEST_CASE("sizes: decimal and binary prefixes, bare numbers are bytes") {
  CHECK(parse_bytes("80GiB").value->value() == 80.0 * 1024 * 1024 * 1024);
  CHECK(parse_bytes("1.5TB").value->value() == 1.5e12);
  CHECK(parse_byte_count("4096").value->value() == 4096.0);
  // A scenario's size takes a unit (hbm_capacity: 80 held 80 B); 0 needs none.
  CHECK(parse_bytes("4096").error == "'4096' has no unit: expected a size such as 80GiB or 1.5TB");
  CHECK(parse_bytes("0").value->value() == 0.0);
  CHECK(parse_bytes("80Gb").error ==
        "unknown unit 'Gb' in '80Gb': expected a size such as 80GiB or 1.5TB (did you mean '80GB'?)");
  CHECK(format_bytes(Bytes::of(80e9)) == "80GB");
  CHECK(format_bytes(Bytes::of(1536)) == "1.536KB");
}

TEST_CASE("bandwidth: bits and bytes per second") {
  // 400 Gb/s = 400e9 / 8 B/s = 50 GB/s
  CHECK(parse_bandwidth("400Gbps").value->value() == 50e9);
  CHECK(parse_bandwidth("400Gb/s").value->value() == 50e9);
  CHECK(parse_bandwidth("3.35TB/s").value->value() == 3.35e12);
  CHECK(format_bandwidth(Bandwidth::of(50e9)) == "50GB/s");
  // A 16k-GPU cluster's HBM bandwidth, 54.9 PB/s, prints in PB/s, not as 54886TB/s.
  CHECK(human(Bandwidth::of(54.886e15)) == "54.89PB/s");
  CHECK(parse_bandwidth("1.6Pbps").value->value() == Rel(0.2e15));
  CHECK(parse_bandwidth("2PB/s").value->value() == 2e15);
  CHECK(parse_bandwidth("400").error == "'400' has no unit: expected a bandwidth such as 400Gbps or 50GB/s");
  CHECK(parse_bandwidth("400GB").error.find("did you mean '400GB/s'") != std::string::npos);
  // A unit of another quantity is said as such ("90USD" for a time was offered as 90us).
  CHECK(parse_time("90USD").error.ends_with("('USD' is a unit of money, not of time)"));
  CHECK(parse_money("50W").error.ends_with("('W' is a unit of power, not of money)"));
  // Spellings whose nearest unit by edit distance would be 8 or 1,440 times off.
  CHECK(parse_bandwidth("10GBps").error.find("did you mean '10GB/s'") != std::string::npos);
  CHECK(parse_time("5m").error.find("did you mean '5min'") != std::string::npos);
  CHECK(parse_time("3hours").error.find("did you mean '3h'") != std::string::npos);
  // A suggestion keeps the magnitude: the prefix letter, bits or bytes by case, weeks in days.
  CHECK(parse_bandwidth("400Gb").error.find("did you mean '400Gbps'") != std::string::npos);
  CHECK(parse_bandwidth("400Gbit/s").error.find("did you mean '400Gb/s'") != std::string::npos);
  CHECK(parse_bandwidth("400Mb").error.find("did you mean '400Mbps'") != std::string::npos);
  // A no-break or thin space before the unit is a space (it was read as part of the unit, and
  // 1461 d suggested 1461µs); the Greek mu is the micro sign.
  CHECK(parse_time("1461\u00a0d").value->ns() == 1461LL * 86400 * 1'000'000'000);
  CHECK(parse_time("700\u202fns").value->ns() == 700);
  CHECK(parse_bytes("80\u2009GiB").value->value() == 80.0 * 1024 * 1024 * 1024);
  CHECK(parse_time("0.7\u03bcs").value->ns() == 700);
  CHECK(parse_time("0.7\u00b5s").value->ns() == 700);
  // A bare magnitude letter: nccl-tests' "1M" is 1 MiB, so the binary unit is offered first.
  CHECK(parse_bytes("80G").error.find("did you mean '80GiB', binary, as nccl-tests reads G, or '80GB', decimal?") !=
        std::string::npos);
  CHECK(parse_bytes("1m").error.find("'1MiB', binary, as nccl-tests reads m, or '1MB'") != std::string::npos);
  CHECK(parse_bytes("4k").error.find("'4KiB', binary") != std::string::npos);
  CHECK(parse_bytes("2T").error.find("did you mean '2TiB', binary, or '2TB', decimal?") != std::string::npos);
  CHECK(parse_time("2w").error.find("did you mean '14d'") != std::string::npos);
  CHECK(parse_flop_rate("989tflops").error.find("did you mean '989TFLOPS'") != std::string::npos);
  CHECK(parse_time("5q").error.find("did you mean") == std::string::npos);
  CHECK(parse_bandwidth("2PBps").error.find("did you mean '2PB/s'") != std::string::npos);
  CHECK(parse_time("3mo").error.find("a month has no fixed length") != std::string::npos);
}

TEST_CASE("FLOP rates, power, money and counts") {
  CHECK(parse_flop_rate("989.4TFLOPS").value->value() == Rel(989.4e12));
  CHECK(parse_flop_rate("2.25PFLOP/s").value->value() == Rel(2.25e15));
  CHECK(parse_power("700W").value->value() == 700.0);
  CHECK(parse_power("10.2kW").value->value() == Rel(10200.0));
  CHECK(parse_money("30000USD").value->value() == 30000.0);
  CHECK(parse_money("500MUSD").value->value() == 500e6);
  CHECK(parse_count("15.6T").value->value() == Rel(15.6e12));
  CHECK(parse_count("2048").value->value() == 2048.0);
  CHECK(format_power(Power::of(10200)) == "10.2kW");
  CHECK(format_money(Money::of(30000)) == "30kUSD");
  // Years are input only (365.25 d): 4y is 1461 days and prints as such.
  CHECK(parse_time("4y").value->ns() == 4 * 31'557'600'000'000'000LL);
  CHECK(format_time(*parse_time("4y").value) == "1461d");
  // An exact whole unit beats a long fraction of a larger one.
  CHECK(format_time(*parse_time("40h").value) == "40h");
  CHECK(format_time(*parse_time("36h").value) == "1.5d");
  // Energy prices in USD per kWh; per MWh and per Wh convert.
  CHECK(parse_energy_price("0.08USD/kWh").value->value() == 0.08);
  CHECK(parse_energy_price("80USD/MWh").value->value() == Rel(0.08));
  CHECK(parse_energy_price("0.00008USD/Wh").value->value() == Rel(0.08));
  CHECK(format_energy_price(EnergyPrice::of(0.08)) == "0.08USD/kWh");
  CHECK(parse_energy_price("0.08USD").error.find("unknown unit 'USD' in '0.08USD': expected an energy price") == 0);
  CHECK(parse_energy_price("0.08").error == "'0.08' has no unit: expected an energy price such as 0.08USD/kWh or 80USD/MWh");
}

TEST_CASE("quantities past 10^24 base units are rejected, not carried as inf") {
  // 1e300TB/s is 1e312 B/s: inf in a double. Before, it parsed, and the flow model stopped
  // with an internal error; huge finite values overflowed later and printed as "inf".
  CHECK(parse_bandwidth("1e300TB/s").error == "'1e300TB/s' is beyond the largest bandwidth clustersim accepts, 1e+24B/s");
  CHECK(parse_byte_count("1.7e308").error == "'1.7e308' is beyond the largest size clustersim accepts, 1e+24B");
  CHECK(parse_count("1e300T").error == "'1e300T' is beyond the largest count clustersim accepts, 1e+24");
  CHECK(parse_money("2e24USD").error == "'2e24USD' is beyond the largest amount of money clustersim accepts, 1e+24USD");
  CHECK(parse_bytes("1e24B").value->value() == 1e24);  // the bound itself is accepted
  // Past what a double holds too, said with the quantity's own bound (it said a double's,
  // 1.8e308), and flagged as such for a caller with a tighter bound (collective --sizes).
  CHECK(parse_money("1e400USD").error == "'1e400USD' is beyond the largest amount of money clustersim accepts, 1e+24USD");
  CHECK(parse_byte_count("1e400").beyond);
  CHECK(parse_byte_count("1e30").beyond);
  CHECK_FALSE(parse_byte_count("1e-400").beyond);
  CHECK(parse_byte_count("1e-400").error == "'1e-400' is below the smallest size clustersim accepts other than 0, 1e-24B");
  CHECK_FALSE(parse_bytes("xx").beyond);
  // The sign and the unit are checked first (-1e400USD read "beyond the largest", 1e400xyz
  // passed over its unit).
  CHECK(parse_money("-1e400USD").error == "expected an amount of money that is not negative, got '-1e400USD'");
  CHECK(parse_money("1e400xyz").error.find("unknown unit 'xyz'") == 0);
  CHECK_FALSE(parse_byte_count("-1e400").beyond);
  // An explicit '+', as YAML 1.2 reads numbers; not before a sign.
  CHECK(parse_time("+5d").value->seconds() == 5 * 86400.0);
  CHECK(parse_bytes("+.5KiB").value->value() == 512.0);
  CHECK_FALSE(parse_bytes("+-5B").value.has_value());
  CHECK_FALSE(parse_flop_rate("1e9EFLOPS").value.has_value());
  // Likewise below 10^-24, zero aside: a denormal bandwidth rounded a flow's rate to 0.
  CHECK(parse_bandwidth("5e-324B/s").error ==
        "'5e-324B/s' is below the smallest bandwidth clustersim accepts other than 0, 1e-24B/s");
  CHECK(parse_bytes("1e-24B").value->value() == 1e-24);
  CHECK(parse_bandwidth("0B/s").value->value() == 0.0);
  // -0 reads as 0 (it printed as "-0" and "-0.0%").
  CHECK_FALSE(std::signbit(parse_power("-0W").value->value()));
  CHECK_FALSE(std::signbit(parse_count("-0").value->value()));
}

TEST_CASE("every formatted quantity parses back to the same value") {
  const double values[] = {1.0, 0.125, 3.35e12, 989.4e12, 1.0 / 3.0, 123456789.0, 7e-3};
  for (double v : values) {
    CAPTURE(v);
    CHECK(parse_bytes(format_bytes(Bytes::of(v))).value == Bytes::of(v));
    CHECK(parse_bandwidth(format_bandwidth(Bandwidth::of(v))).value == Bandwidth::of(v));
    CHECK(parse_flop_rate(format_flop_rate(FlopRate::of(v))).value == FlopRate::of(v));
    CHECK(parse_power(format_power(Power::of(v))).value == Power::of(v));
    CHECK(parse_money(format_money(Money::of(v))).value == Money::of(v));
    CHECK(parse_count(format_count(Count::of(v))).value == Count::of(v));
    CHECK(parse_energy_price(format_energy_price(EnergyPrice::of(v))).value == EnergyPrice::of(v));
  }
}

TEST_CASE("transfer time = size / bandwidth, to the nearest ns") {
  // 1 GB at 50 GB/s = 20 ms
  CHECK(transfer_time(Bytes::of(1e9), Bandwidth::of(50e9)) == Time::from_ns(20'000'000));
}

TEST_CASE("closest_match suggests near misses only") {
  const std::vector<std::string_view> keys{"link_latency", "link_bandwidth", "radix", "tiers"};
  CHECK(closest_match("link_latncy", keys) == "link_latency");
  CHECK(closest_match("Radix", keys) == "radix");
  CHECK_FALSE(closest_match("completely_different", keys).has_value());
  // An abbreviation that begins one key only; "link" begins two, "rad" is too short to trust.
  CHECK(closest_match("link_band", keys) == "link_bandwidth");
  CHECK_FALSE(closest_match("link", keys).has_value());
  CHECK_FALSE(closest_match("rad", keys).has_value());
  CHECK_FALSE(closest_match("link_band", keys, 2).has_value());  // an explicit distance is kept
}

TEST_CASE("human(): four significant digits and the largest unit that fits; whole digits past the largest") {
  CHECK(human(Money::of(1.5e6)) == "1.5MUSD");
  CHECK(human(Money::of(3.7e14)) == "370000BUSD");  // was "3.7e+05BUSD"
  CHECK(human(Time::from_seconds(1.5 * 86400)) == "1.5d");
  CHECK(human(Time::from_seconds(36890.0 * 86400)) == "36890d");
  CHECK(human(Bytes::of(2.5e9)) == "2.5GB");
  // A count under a thousand is a plain number (it read "0.02813K").
  CHECK(human(Count::of(28.13)) == "28.13");
  CHECK(human(Count::of(6.061e-6)) == "6.061e-06");
  CHECK(human(Count::of(1500)) == "1.5K");
}
