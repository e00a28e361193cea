#include "sim/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>

#include <fmt/format.h>

namespace clustersim::sim {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // base units per one of this unit
};

// Each table lists the units we print first (largest first), then input-only aliases.
// `printable` is how many leading entries format_* may choose from.
struct UnitFamily {
  std::string_view what;     // "a size", used in messages
  std::string_view example;  // "80GiB or 1.5TB"
  std::span<const Unit> units;
  std::size_t printable;
  bool bare_number_allowed;  // a number without a unit is in the base unit
  std::string_view base;     // printed for zero
  bool bounded = true;       // at most kLargest base units (time: parse_time's own range)
};

constexpr double kLargest = 1e24;
constexpr double kSmallest = 1e-24;

constexpr std::array kByteUnits{
    Unit{"PB", 1e15}, Unit{"TB", 1e12}, Unit{"GB", 1e9}, Unit{"MB", 1e6}, Unit{"KB", 1e3},
    Unit{"B", 1.0},
    Unit{"PiB", 1125899906842624.0}, Unit{"TiB", 1099511627776.0}, Unit{"GiB", 1073741824.0},
    Unit{"MiB", 1048576.0}, Unit{"KiB", 1024.0}, Unit{"kB", 1e3}};

constexpr std::array kBandwidthUnits{
    Unit{"PB/s", 1e15}, Unit{"TB/s", 1e12}, Unit{"GB/s", 1e9}, Unit{"MB/s", 1e6}, Unit{"KB/s", 1e3},
    Unit{"B/s", 1.0},
    Unit{"Pbps", 1e15 / 8}, Unit{"Tbps", 1e12 / 8}, Unit{"Gbps", 1e9 / 8}, Unit{"Mbps", 1e6 / 8}, Unit{"Kbps", 1e3 / 8},
    Unit{"bps", 1.0 / 8},
    Unit{"Pb/s", 1e15 / 8}, Unit{"Tb/s", 1e12 / 8}, Unit{"Gb/s", 1e9 / 8}, Unit{"Mb/s", 1e6 / 8}, Unit{"Kb/s", 1e3 / 8},
    Unit{"PiB/s", 1125899906842624.0}, Unit{"TiB/s", 1099511627776.0}, Unit{"GiB/s", 1073741824.0}, Unit{"MiB/s", 1048576.0},
    Unit{"KiB/s", 1024.0}, Unit{"kB/s", 1e3}};

constexpr std::array kFlopUnits{
    Unit{"EFLOPS", 1e18}, Unit{"PFLOPS", 1e15}, Unit{"TFLOPS", 1e12}, Unit{"GFLOPS", 1e9},
    Unit{"MFLOPS", 1e6}, Unit{"FLOPS", 1.0},
    Unit{"EFLOP/s", 1e18}, Unit{"PFLOP/s", 1e15}, Unit{"TFLOP/s", 1e12}, Unit{"GFLOP/s", 1e9},
    Unit{"MFLOP/s", 1e6}, Unit{"FLOP/s", 1.0}};

constexpr std::array kPowerUnits{Unit{"GW", 1e9}, Unit{"MW", 1e6}, Unit{"kW", 1e3}, Unit{"W", 1.0},
                                 Unit{"KW", 1e3}};

constexpr std::array kMoneyUnits{Unit{"BUSD", 1e9}, Unit{"MUSD", 1e6}, Unit{"kUSD", 1e3},
                                 Unit{"USD", 1.0}, Unit{"KUSD", 1e3}};

// The base unit is USD/kWh, the unit tariffs are quoted in, so that printed prices read as
// written ("0.08USD/kWh"); USD/MWh (wholesale) and USD/Wh are accepted on input.
constexpr std::array kEnergyPriceUnits{Unit{"USD/kWh", 1.0}, Unit{"USD/MWh", 1e-3}, Unit{"USD/Wh", 1e3}};

constexpr std::array kCountUnits{Unit{"T", 1e12}, Unit{"B", 1e9}, Unit{"M", 1e6}, Unit{"K", 1e3},
                                 Unit{"G", 1e9}, Unit{"k", 1e3}};

// Time factors are exact integers of nanoseconds; kept as doubles for the shared parser
// and checked for integrality after scaling.
constexpr std::array kTimeUnits{Unit{"d", 86400e9}, Unit{"h", 3600e9}, Unit{"min", 60e9},
                                Unit{"s", 1e9},     Unit{"ms", 1e6},   Unit{"us", 1e3},
                                Unit{"ns", 1.0},    Unit{"µs", 1e3},   Unit{"y", 365.25 * 86400e9}};

// A scenario's sizes take a unit (80 read as 80 bytes: an inline GPU's hbm_capacity: 80 held
// 80 B of HBM, with nothing said); the command line's sizes, as nccl-tests', may be bytes.
constexpr UnitFamily kBytes{"a size", "80GiB or 1.5TB", kByteUnits, 6, false, "B"};
constexpr UnitFamily kByteCount{"a size", "80GiB or 1.5TB", kByteUnits, 6, true, "B"};
constexpr UnitFamily kBandwidth{"a bandwidth", "400Gbps or 50GB/s", kBandwidthUnits, 6, false,
                                "B/s"};
constexpr UnitFamily kFlops{"a FLOP rate", "989TFLOPS", kFlopUnits, 6, false, "FLOPS"};
constexpr UnitFamily kPower{"a power", "700W or 10.2kW", kPowerUnits, 4, false, "W"};
constexpr UnitFamily kMoney{"an amount of money", "30000USD or 1.5MUSD", kMoneyUnits, 4, false,
                            "USD"};
constexpr UnitFamily kEnergyPrice{"an energy price", "0.08USD/kWh or 80USD/MWh", kEnergyPriceUnits, 1, false,
                                  "USD/kWh"};
constexpr UnitFamily kCount{"a count", "15.6T or 2048", kCountUnits, 4, true, ""};
constexpr UnitFamily kTime{"a time", "700ns, 1.5us, 10min or 54d", kTimeUnits, 7, false, "s", false};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> unit_names(const UnitFamily& family) {
  std::vector<std::string_view> names;
  for (const Unit& u : family.units) names.push_back(u.name);
  return names;
}

// Edits (insertions, deletions, substitutions) from `a` to `b`, counting case or not.
std::size_t edits(std::string_view a, std::string_view b, bool fold_case) {
  const auto same = [&](char x, char y) {
    return fold_case ? std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y))
                     : x == y;
  };
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The candidate at the fewest edits from `unit` regardless of case, at most 2 ("tflops" is
// TFLOPS); among those, the fewest counting case (b is a bit, B a byte: "Gb" is Gbps, two
// edits, rather than GB/s, three); then the earliest.
std::optional<std::string_view> nearest_unit(std::string_view unit, const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  std::pair<std::size_t, std::size_t> best_distance{3, 0};
  for (const std::string_view c : candidates) {
    const std::pair<std::size_t, std::size_t> d{edits(unit, c, true), edits(unit, c, false)};
    if (d.first <= 2 && (!best || d < best_distance)) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

// Parses "<number>[ ]<unit>" into base units. Negative values are rejected: no quantity
// in a scenario is negative.
Parsed<double> parse_in(const UnitFamily& family, std::string_view raw) {
  const std::string_view text = trim(raw);
  const auto fail = [&](std::string message) {
    return Parsed<double>{std::nullopt, std::move(message)};
  };
  if (text.empty()) return fail(fmt::format("expected {} such as {}, got nothing", family.what, family.example));

  double number = 0.0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // An explicit '+' before a digit, as YAML 1.2 reads numbers (+5d; from_chars takes none).
  const char* digits = last - first > 1 && *first == '+' &&
                               (std::isdigit(static_cast<unsigned char>(first[1])) != 0 || first[1] == '.')
                           ? first + 1
                           : first;
  auto [end, ec] = std::from_chars(digits, last, number, std::chars_format::general);
  // Past what a double holds (1e400, 1e-400): for a bounded quantity, said with its own
  // bounds once the sign and the unit are checked, as a number within a double's but past
  // them is; the magnitude is strtod's (inf, or 0 and below).
  bool overflow = false;
  bool underflow = false;
  if (ec == std::errc::result_out_of_range && family.bounded) {
    number = std::strtod(std::string(digits, end).c_str(), nullptr);
    overflow = std::isinf(number);
    underflow = !overflow;
    ec = std::errc();
  }
  if (ec == std::errc::result_out_of_range) {  // a number, past what a double holds (1e400)
    return fail(fmt::format("'{}' is out of range for a number (a magnitude of at most about 1.8e308, and at least "
                            "about 4.9e-324 unless 0): expected {} such as {}",
                            text, family.what, family.example));
  }
  if (ec != std::errc() || !(std::isfinite(number) || overflow)) {
    return fail(fmt::format("expected {} such as {}, got '{}'", family.what, family.example, text));
  }
  if (number < 0 || (underflow && std::signbit(number))) {
    return fail(fmt::format("expected {} that is not negative, got '{}'", family.what, text));
  }
  std::string_view unit = trim(std::string_view(end, static_cast<std::size_t>(last - end)));
  // A no-break, narrow no-break or thin space between the number and its unit (as word
  // processors and typeset tables write "700 ns") is a space: it was read as part of the
  // unit, and its UTF-8 bytes made the nearest unit µs (1461 d suggested 1461µs).
  for (const std::string_view space : {"\u00a0", "\u202f", "\u2009"}) {
    while (unit.starts_with(space)) unit = trim(unit.substr(space.size()));
  }
  // The micro sign's look-alike, the Greek small mu that keyboards type: the same unit.
  std::string greek;
  if (unit.starts_with("\u03bc")) {
    greek = "\u00b5" + std::string(unit.substr(std::string_view("\u03bc").size()));
    unit = greek;
  }
  // Every quantity of a scenario is bounded: beyond kLargest base units (a yottabyte, 10^24
  // FLOP/s, 10^24 tokens) no cluster is described, and a product of a few such values still
  // fits a double, so nothing downstream turns into inf. Time has its own, tighter range.
  const auto bounded = [&](double value) -> Parsed<double> {
    if (underflow) value = kSmallest / 2.0;  // 1e-400: below the bound, not 0
    if (family.bounded && !(value <= kLargest)) {
      return Parsed<double>{std::nullopt,
                            fmt::format("'{}' is beyond the largest {} clustersim accepts, {:g}{}", text,
                                        family.what.substr(family.what.find(' ') + 1), kLargest, family.base),
                            true};
    }
    // Likewise below 10^-24 (a denormal 5e-324B/s rounded a flow's rate to 0), zero aside.
    if (family.bounded && value != 0.0 && value < kSmallest) {
      return fail(fmt::format("'{}' is below the smallest {} clustersim accepts other than 0, {:g}{}", text,
                              family.what.substr(family.what.find(' ') + 1), kSmallest, family.base));
    }
    return {value == 0.0 ? 0.0 : value, {}};  // -0 reads as 0
  };
  if (unit.empty()) {
    if (family.bare_number_allowed || number == 0.0) return bounded(number);
    return fail(fmt::format("'{}' has no unit: expected {} such as {}", text, family.what, family.example));
  }
  for (const Unit& u : family.units) {
    if (u.name == unit) return bounded(number * u.factor);
  }
  std::string message = fmt::format("unknown unit '{}' in '{}': expected {} such as {}", unit, text,
                                    family.what, family.example);
  // Spellings whose nearest unit by edit distance is the wrong one ("GBps" is a gigabyte per
  // second, not "Gbps"; "m" is a minute here, not "d"); said first.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 18> kAliases{{
      {"GBps", "GB/s"}, {"MBps", "MB/s"}, {"TBps", "TB/s"}, {"PBps", "PB/s"}, {"kBps", "kB/s"}, {"KBps", "kB/s"},
      {"m", "min"}, {"mins", "min"}, {"minute", "min"}, {"minutes", "min"}, {"sec", "s"}, {"secs", "s"},
      {"hr", "h"}, {"hrs", "h"}, {"hour", "h"}, {"hours", "h"}, {"day", "d"}, {"days", "d"}}};
  std::optional<std::string_view> alias;
  for (const auto& [from, to] : kAliases) {
    if (from != unit) continue;
    for (const Unit& u : family.units) {
      if (u.name == to) alias = to;
    }
  }
  // Weeks, which no family has: the number of days they make.
  const bool weeks = family.base == "s" && (unit == "w" || unit == "wk" || unit == "week" || unit == "weeks");
  // Months, which have no fixed length: no suggestion ("3mo" is not 3ms, nor "5mon" 5min).
  const bool months = family.base == "s" && (unit == "mo" || unit == "mon" || unit == "month" || unit == "months");
  // Otherwise the nearest unit that starts with the same letter, either case: the first
  // letter is the magnitude ("80G" is 80GB, not 80B; "400Gb" 400Gbps, not 400GB/s; "1w"
  // is no unit of time that one letter away stands for, and gets no suggestion).
  const std::vector<std::string_view> names = unit_names(family);
  std::vector<std::string_view> same_prefix;
  for (const std::string_view name : names) {
    if (std::tolower(static_cast<unsigned char>(name.front())) == std::tolower(static_cast<unsigned char>(unit.front()))) {
      same_prefix.push_back(name);
    }
  }
  // A unit of another quantity (a deadline in USD): said as such, not matched to the nearest
  // spelling of this one ("90USD" was offered as 90us).
  // (Not where a unit of this one starts with it: 400GB for a bandwidth is 400GB/s less its
  // "/s", and said so below.)
  const UnitFamily* other = nullptr;
  if (std::none_of(names.begin(), names.end(), [&](std::string_view n) { return n.starts_with(unit); })) {
    for (const UnitFamily* f : {&kBytes, &kBandwidth, &kFlops, &kPower, &kMoney, &kEnergyPrice, &kTime}) {
      if (f->base == family.base) continue;
      for (const Unit& u : f->units) {
        if (u.name == unit) other = f;
      }
    }
  }
  const auto noun = [](std::string_view what) {  // "an amount of money": "money"
    what = what.substr(what.find(' ') + 1);
    return what.starts_with("amount of ") ? what.substr(10) : what;
  };
  if (other != nullptr) {
    message += fmt::format(" ('{}' is a unit of {}, not of {})", unit, noun(other->what), noun(family.what));
  } else if (alias) {
    message += fmt::format(" (did you mean '{}{}'?)", std::string_view(first, static_cast<std::size_t>(end - first)),
                           *alias);
  } else if (weeks) {
    message += fmt::format(" (did you mean '{:g}d'?)", number * 7.0);
  } else if (months) {
    message += " (a month has no fixed length: give days, e.g. 30d)";
  } else if (const std::string_view binary = "KMGTPE";
             family.base == "B" && unit.size() == 1 &&
             binary.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit.front())))) !=
                 std::string_view::npos) {
    // A size's bare magnitude letter: nccl-tests (K, M, G) and dd read "1M" as 1 MiB, which
    // "MB" is not; both are offered, the binary one first.
    const auto letter = static_cast<char>(std::toupper(static_cast<unsigned char>(unit.front())));
    const std::string_view number_text(first, static_cast<std::size_t>(end - first));
    const bool nccl = letter == 'K' || letter == 'M' || letter == 'G';
    message += fmt::format(" (did you mean '{}{}iB', binary{}, or '{}{}B', decimal?)", number_text, letter,
                           nccl ? fmt::format(", as nccl-tests reads {}", unit) : std::string(), number_text, letter);
  } else if (auto near = nearest_unit(unit, same_prefix)) {
    message += fmt::format(" (did you mean '{}{}'?)",
                           std::string_view(first, static_cast<std::size_t>(end - first)), *near);
  }
  return fail(std::move(message));
}

template <class Q>
Parsed<Q> parse_quantity(const UnitFamily& family, std::string_view text) {
  Parsed<double> p = parse_in(family, text);
  if (!p) return {std::nullopt, std::move(p.error), p.beyond};
  return {Q::of(*p.value), {}};
}

// The largest printable unit in which `v` reads as a number >= 1 that parses back exactly.
std::string format_in(const UnitFamily& family, double v) {
  if (v == 0.0) return fmt::format("0{}", family.base);
  const auto printable = family.units.first(family.printable);
  for (const Unit& u : printable) {
    if (std::fabs(v) < u.factor && &u != &printable.back()) continue;
    const std::string text = fmt::format("{}{}", v / u.factor, u.name);
    Parsed<double> back = parse_in(family, text);
    if (back && *back.value == v) return text;
  }
  return fmt::format("{}{}", v / printable.back().factor, printable.back().name);
}

std::string human_in(const UnitFamily& family, double v) {
  if (v == 0.0) return fmt::format("0{}", family.base);
  const auto printable = family.units.first(family.printable);
  for (const Unit& u : printable) {
    // A count under the smallest unit is a plain number ("28.13 tokens/s", not "0.02813K").
    if (&u == &printable.back() && std::fabs(v) < u.factor && family.base.empty()) return fmt::format("{:.4g}", v);
    if (std::fabs(v) >= u.factor || &u == &printable.back()) {
      // Past the largest unit, whole digits up to 1e15 ("370000BUSD", not "3.7e+05BUSD").
      const double x = v / u.factor;
      if (std::fabs(x) >= 9999.5 && std::fabs(x) < 1e15 && &u == &printable.front()) {
        return fmt::format("{:.0f}{}", x, u.name);  // from 9999.5, which {:.4g} writes 1e+04
      }
      return fmt::format("{:.4g}{}", x, u.name);
    }
  }
  return fmt::format("{:.4g}{}", v, family.base);
}

}  // namespace

std::string human(Time t) {
  return human_in(kTime, static_cast<double>(t.ns()));
}
std::string human(Bytes b) { return human_in(kBytes, b.value()); }
std::string human(Bandwidth b) { return human_in(kBandwidth, b.value()); }
std::string human(FlopRate f) { return human_in(kFlops, f.value()); }
std::string human(Power p) { return human_in(kPower, p.value()); }
std::string human(Money m) { return human_in(kMoney, m.value()); }
std::string human(Count c) { return human_in(kCount, c.value()); }
std::string human(EnergyPrice p) { return human_in(kEnergyPrice, p.value()); }

Time transfer_time(Bytes size, Bandwidth rate) { return Time::from_seconds(size / Bytes::of(rate.value())); }

Parsed<Time> parse_time(std::string_view text) {
  Parsed<double> p = parse_in(kTime, text);
  if (!p) return {std::nullopt, std::move(p.error)};
  const double ns = *p.value;
  if (ns > 9.2e18) return {std::nullopt, fmt::format("'{}' is beyond the 292-year range of simulated time", trim(text))};
  const double whole = std::round(ns);
  if (std::fabs(ns - whole) > 1e-6 * std::max(1.0, ns)) {
    return {std::nullopt,
            fmt::format("'{}' is finer than the 1ns resolution of simulated time", trim(text))};
  }
  return {Time::from_ns(static_cast<std::int64_t>(whole)), {}};
}

Parsed<Bytes> parse_bytes(std::string_view text) { return parse_quantity<Bytes>(kBytes, text); }
Parsed<Bytes> parse_byte_count(std::string_view text) { return parse_quantity<Bytes>(kByteCount, text); }
Parsed<Bandwidth> parse_bandwidth(std::string_view text) { return parse_quantity<Bandwidth>(kBandwidth, text); }
Parsed<FlopRate> parse_flop_rate(std::string_view text) { return parse_quantity<FlopRate>(kFlops, text); }
Parsed<Power> parse_power(std::string_view text) { return parse_quantity<Power>(kPower, text); }
Parsed<Money> parse_money(std::string_view text) { return parse_quantity<Money>(kMoney, text); }
Parsed<Count> parse_count(std::string_view text) { return parse_quantity<Count>(kCount, text); }
Parsed<EnergyPrice> parse_energy_price(std::string_view text) {
  return parse_quantity<EnergyPrice>(kEnergyPrice, text);
}

std::string format_time(Time t) {
  const std::int64_t ns = t.ns();
  if (ns == 0) return "0s";
  const std::int64_t mag = ns < 0 ? -ns : ns;
  // The largest unit in which the time reads as a number >= 1 with at most three decimals
  // that parses back exactly ("1.5us", "40h" rather than "1.6666666666666667d").
  for (const Unit& u : std::span(kTimeUnits).first(kTime.printable)) {
    const auto f = static_cast<std::int64_t>(u.factor);
    if (mag < f) continue;
    if (ns % f == 0) return fmt::format("{}{}", ns / f, u.name);
    if (mag < std::numeric_limits<std::int64_t>::max() / 1000 && (ns * 1000) % f != 0) continue;
    const std::string text = fmt::format("{}{}", static_cast<double>(ns) / u.factor, u.name);
    Parsed<Time> back = parse_time(text);
    if (back && *back.value == t) return text;
  }
  return fmt::format("{}ns", ns);
}

std::string format_bytes(Bytes b) { return format_in(kBytes, b.value()); }
std::string format_bandwidth(Bandwidth b) { return format_in(kBandwidth, b.value()); }
std::string format_flop_rate(FlopRate f) { return format_in(kFlops, f.value()); }
std::string format_power(Power p) { return format_in(kPower, p.value()); }
std::string format_money(Money m) { return format_in(kMoney, m.value()); }
std::string format_count(Count c) { return format_in(kCount, c.value()); }
std::string format_energy_price(EnergyPrice p) { return format_in(kEnergyPrice, p.value()); }

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates,
                                         int max_distance) {
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t limit = max_distance >= 0 ? static_cast<std::size_t>(max_distance)
                                              : std::max<std::size_t>(1, word.size() / 3);
  // Optimal-string-alignment distance (Levenshtein plus adjacent transpositions: "nodse"
  // is one edit from "nodes"), three rows at a time. Ties go to the candidate whose length
  // is closest to the word's, then to the earliest.
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  std::size_t best_length_gap = 0;
  std::vector<std::size_t> prev2;
  std::vector<std::size_t> prev;
  std::vector<std::size_t> row;
  for (std::string_view cand : candidates) {
    const std::size_t m = cand.size();
    prev2.assign(m + 1, 0);
    prev.resize(m + 1);
    row.resize(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      row[0] = i;
      for (std::size_t j = 1; j <= m; ++j) {
        const std::size_t cost = lower(word[i - 1]) == lower(cand[j - 1]) ? 0 : 1;
        row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
        if (i > 1 && j > 1 && lower(word[i - 1]) == lower(cand[j - 2]) && lower(word[i - 2]) == lower(cand[j - 1])) {
          row[j] = std::min(row[j], prev2[j - 2] + 1);
        }
      }
      std::swap(prev2, prev);
      std::swap(prev, row);
    }
    const std::size_t distance = prev[m];
    const std::size_t gap = m > word.size() ? m - word.size() : word.size() - m;
    if (distance < best_distance || (distance == best_distance && best && gap < best_length_gap)) {
      best_distance = distance;
      best_length_gap = gap;
      best = std::string(cand);
    }
  }
  // An abbreviation ("distrib" for "distribution") is many edits away but unambiguous when
  // it begins exactly one candidate.
  if (!best && max_distance < 0 && word.size() >= 4) {
    std::size_t starts = 0;
    for (std::string_view cand : candidates) {
      if (cand.size() > word.size() &&
          std::equal(word.begin(), word.end(), cand.begin(), [&](char a, char b) { return lower(a) == lower(b); })) {
        ++starts;
        best = std::string(cand);
      }
    }
    if (starts != 1) best.reset();
  }
  return best;
}

}  // namespace clustersim::sim
