#include "models/fabric/config.hpp"

#include <charconv>

namespace clustersim::config {

bool Codec<fabric::Ratio>::decode(const YAML::Node& n, fabric::Ratio& out, const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "a ratio such as \"1:7\"")) return false;
  const auto colon = text.find(':');
  fabric::Ratio r;
  const auto parse = [](std::string_view s, std::int64_t& v) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() && v >= 1;
  };
  if (colon == std::string::npos || !parse(std::string_view(text).substr(0, colon), r.up) ||
      !parse(std::string_view(text).substr(colon + 1), r.down)) {
    ctx.error(n, fmt::format("expected a ratio \"up:down\" of positive integers such as \"1:7\", got '{}'", text));
    return false;
  }
  if (r.up > r.down) {
    ctx.error(n, fmt::format("uplinks faster than downlinks ({}) is not an oversubscription", text),
              fmt::format("did you mean '{}:{}'?", r.down, r.up));
    return false;
  }
  out = r;
  return true;
}

bool Codec<fabric::Oversubscription>::decode(const YAML::Node& n, fabric::Oversubscription& out, const Context& ctx) {
  fabric::Oversubscription o;
  if (n.IsSequence()) {
    if (n.size() == 0) {
      ctx.error(n, "expected one ratio per tier from the leaves up, got an empty list",
                "write \"1:1\" for a non-blocking fabric, or a ratio such as \"1:3\" for its top tier");
      return false;
    }
    if (!Codec<std::vector<fabric::Ratio>>::decode(n, o.per_tier, ctx)) return false;
  } else {
    fabric::Ratio r;
    if (!Codec<fabric::Ratio>::decode(n, r, ctx)) return false;
    o.top = r;
  }
  out = std::move(o);
  return true;
}

Json Codec<fabric::Oversubscription>::encode(const fabric::Oversubscription& o) {
  if (o.top) return Codec<fabric::Ratio>::encode(*o.top);
  if (o.per_tier.empty()) return "1:1";
  return Codec<std::vector<fabric::Ratio>>::encode(o.per_tier);
}

}  // namespace clustersim::config
