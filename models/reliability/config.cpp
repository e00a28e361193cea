#include "models/reliability/config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace clustersim::reliability {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool parse_number(std::string_view s, double& v) {
  s = trim(s);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(v);
}

// "0.01/gpu-hour" is meant as a rate over another period: the same rate per day, if the
// period and the unit are ones we know.
std::string rate_per_day_hint(std::string_view text) {
  const auto slash = text.find('/');
  const auto dash = text.rfind('-');
  if (slash == std::string_view::npos || dash == std::string_view::npos || dash < slash) return {};
  double v = 0.0;
  if (!parse_number(text.substr(0, slash), v) || v < 0.0) return {};
  const std::string_view unit = text.substr(slash + 1, dash - slash - 1);
  const std::string_view period = text.substr(dash + 1);
  // Days in the period; a year of 365 days, a week of 7.
  constexpr std::array<std::pair<std::string_view, double>, 9> kDays{{{"s", 1.0 / 86400.0},
                                                                     {"sec", 1.0 / 86400.0},
                                                                     {"min", 1.0 / 1440.0},
                                                                     {"h", 1.0 / 24.0},
                                                                     {"hr", 1.0 / 24.0},
                                                                     {"hour", 1.0 / 24.0},
                                                                     {"week", 7.0},
                                                                     {"year", 365.0},
                                                                     {"yr", 365.0}}};
  const auto units = enum_names(Per{});
  const bool known_unit = std::any_of(units.begin(), units.end(), [&](const auto& e) { return e.second == unit; });
  if (!known_unit) return {};
  for (const auto& [name, days] : kDays) {
    if (period == name) return fmt::format("did you mean '{:.4g}/{}-day'?", v / days, unit);
  }
  return {};
}

}  // namespace

bool parse_rate(std::string_view text, FailureRate& out, std::string& why, std::string* hint) {
  const auto slash = text.find('/');
  const auto dash = text.rfind("-day");
  if (slash == std::string_view::npos || dash == std::string_view::npos || dash + 4 != text.size() || dash < slash) {
    why = fmt::format("expected failures per unit and day such as 0.0002/gpu-day, got '{}'", text);
    double bare = 0.0;
    if (hint && parse_number(text, bare) && bare == 0.0) {
      // A rate's unit says what fails (a GPU, a node, a switch...): written even for 0.
      *hint = "a rate names what it counts per even at 0: 0/gpu-day, 0/node-day, 0/switch-day, 0/link-day or 0/job-day";
    } else if (hint) {
      *hint = rate_per_day_hint(text);
    }
    return false;
  }
  double v = 0.0;
  if (!parse_number(text.substr(0, slash), v) || v < 0.0) {
    why = fmt::format("'{}': the rate must be a non-negative number before the '/'", text);
    return false;
  }
  const std::string_view unit = text.substr(slash + 1, dash - slash - 1);
  for (const auto& [per, name] : enum_names(Per{})) {
    if (unit == name) {
      out = {v == 0.0 ? 0.0 : v, per};  // -0 is 0
      return true;
    }
  }
  why = fmt::format("'{}': unknown unit '{}'; expected /gpu-day, /node-day, /switch-day, /link-day or /job-day", text,
                    unit);
  return false;
}

bool parse_duration_law(std::string_view text, DurationLaw& out, std::string& why) {
  text = trim(text);
  const auto open = text.find('(');
  if (open == std::string_view::npos) {
    const sim::Parsed<sim::Time> t = sim::parse_time(text);
    if (!t) {
      why = t.error;
      return false;
    }
    out = {DurationLaw::Kind::fixed, *t.value, 1.0};
    return true;
  }
  if (text.back() != ')') {
    why = fmt::format("'{}': expected NAME(MEAN[, SHAPE]) with a closing ')'", text);
    return false;
  }
  const std::string_view name = trim(text.substr(0, open));
  const std::string_view args = text.substr(open + 1, text.size() - open - 2);
  const auto comma = args.find(',');
  const std::string_view mean_text = trim(args.substr(0, comma));
  const sim::Parsed<sim::Time> mean = sim::parse_time(mean_text);
  if (!mean) {
    why = fmt::format("'{}': {}", text, mean.error);
    return false;
  }
  if (mean.value->seconds() <= 0.0) {
    why = fmt::format("'{}': the mean must be positive", text);
    return false;
  }
  DurationLaw d{DurationLaw::Kind::fixed, *mean.value, 1.0};
  if (name == "exponential") {
    d.kind = DurationLaw::Kind::exponential;
    if (comma != std::string_view::npos) {
      why = fmt::format("'{}': exponential takes only its mean", text);
      return false;
    }
  } else if (name == "lognormal" || name == "weibull") {
    // The shapes the failure laws accept (check_failures): a lognormal sigma above 5 puts
    // the median below 4e-6 of the mean, a Weibull shape under 0.2 the mean at 120 times the
    // scale; nearly every draw is then ~0 and a rare one astronomically long.
    const bool lognormal = name == "lognormal";
    d.kind = lognormal ? DurationLaw::Kind::lognormal : DurationLaw::Kind::weibull;
    const double lo = lognormal ? 0.05 : 0.2;
    const double hi = lognormal ? 5.0 : 20.0;
    if (comma == std::string_view::npos || !parse_number(args.substr(comma + 1), d.shape) || d.shape < lo ||
        d.shape > hi) {
      why = fmt::format("'{}': {} takes a mean and a {} from {:g} to {:g}, e.g. {}(4h, 1.0)", text, name,
                        lognormal ? "sigma" : "shape", lo, hi, name);
      return false;
    }
  } else {
    why = fmt::format("'{}': unknown law '{}'; expected exponential, lognormal or weibull", text, name);
    return false;
  }
  out = d;
  return true;
}

std::string format_duration_law(const DurationLaw& d) {
  const std::string mean = sim::format_time(d.mean);
  switch (d.kind) {
    case DurationLaw::Kind::fixed: return mean;
    case DurationLaw::Kind::exponential: return fmt::format("exponential({})", mean);
    case DurationLaw::Kind::lognormal: return fmt::format("lognormal({}, {})", mean, d.shape);
    case DurationLaw::Kind::weibull: return fmt::format("weibull({}, {})", mean, d.shape);
  }
  return mean;
}

std::optional<Per> default_per(std::string_view c) {
  for (const char* n : {"gpu", "hbm", "sram", "gsp", "thermal", "sdc"}) {
    if (c == n) return Per::gpu;
  }
  for (const char* n : {"nvlink", "nvswitch", "nic", "host", "cpu", "memory", "psu", "ssd", "chassis", "maintenance"}) {
    if (c == n) return Per::node;
  }
  if (c == "switch") return Per::switch_;
  for (const char* n : {"cable", "optic", "link"}) {
    if (c == n) return Per::link;
  }
  for (const char* n : {"software", "nccl"}) {
    if (c == n) return Per::job;
  }
  return std::nullopt;
}

bool default_hardware(std::string_view c) { return c != "software" && c != "nccl" && c != "maintenance"; }

Per unit_of(std::string_view name, const ComponentConfig& c) {
  return c.rate ? c.rate->per : c.per ? *c.per : default_per(name).value_or(Per::node);
}

}  // namespace clustersim::reliability

namespace clustersim::config {

bool Codec<reliability::FailureRate>::decode(const YAML::Node& n, reliability::FailureRate& out, const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "a rate such as 0.0002/gpu-day")) return false;
  std::string why;
  std::string hint;
  if (!reliability::parse_rate(text, out, why, &hint)) {
    ctx.error(n, why, hint);
    return false;
  }
  return true;
}

Json Codec<reliability::FailureRate>::encode(const reliability::FailureRate& r) {
  return fmt::format("{}/{}-day", r.per_day, enum_name(r.per));
}

bool Codec<reliability::DurationLaw>::decode(const YAML::Node& n, reliability::DurationLaw& out, const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "a time or a law such as lognormal(4h, 1.0)")) return false;
  std::string why;
  if (!reliability::parse_duration_law(text, out, why)) {
    ctx.error(n, why);
    return false;
  }
  return true;
}

bool Codec<reliability::CheckpointInterval>::decode(const YAML::Node& n, reliability::CheckpointInterval& out,
                                                    const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "auto or a time such as 2h")) return false;
  if (text == "auto") {
    out = {true, sim::Time::zero()};
    return true;
  }
  const sim::Parsed<sim::Time> t = sim::parse_time(text);
  if (!t || t.value->seconds() <= 0.0) {
    ctx.error(n, fmt::format("expected auto or a positive time such as 2h, got '{}'", text));
    return false;
  }
  out = {false, *t.value};
  return true;
}

Json Codec<reliability::CheckpointInterval>::encode(const reliability::CheckpointInterval& c) {
  return c.automatic ? std::string("auto") : sim::format_time(c.every);
}

}  // namespace clustersim::config
