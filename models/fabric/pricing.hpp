// The price and power table of network parts (models/fabric/pricing.yaml, compiled in):
// switches by port count and speed, NICs, optical transceivers and cables, each entry with
// its source and the date its price applies to. The fabric's capex and power are priced
// from it by choosing, for each part, the cheapest class that meets the need.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::fabric {

struct SwitchPrice {
  std::int64_t ports = 0;
  sim::Bandwidth port_bandwidth;
  sim::Money price;
  sim::Power power;
  std::string date;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{field("ports", &SwitchPrice::ports, "ports at port_bandwidth").require().at_least(1),
                      field("port_bandwidth", &SwitchPrice::port_bandwidth, "line rate of each port").require(),
                      field("price", &SwitchPrice::price, "price of one switch, without optics").require(),
                      field("power", &SwitchPrice::power, "power of one switch, without transceivers").require(),
                      field("date", &SwitchPrice::date, "when the price applies"),
                      field("source", &SwitchPrice::source, "where the figures come from"),
                      field("notes", &SwitchPrice::notes, "derivations and caveats")};
  }
};

struct PartPrice {
  sim::Bandwidth bandwidth;
  sim::Money price;
  sim::Power power;
  std::string date;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{field("bandwidth", &PartPrice::bandwidth, "line rate").require(),
                      field("price", &PartPrice::price, "price of one part").require(),
                      field("power", &PartPrice::power, "power of one part").require(),
                      field("date", &PartPrice::date, "when the price applies"),
                      field("source", &PartPrice::source, "where the figures come from"),
                      field("notes", &PartPrice::notes, "derivations and caveats")};
  }
};

struct PricingTable {
  std::string currency = "USD";
  std::map<std::string, SwitchPrice> switches;
  std::map<std::string, PartPrice> nics;
  std::map<std::string, PartPrice> transceivers;
  std::map<std::string, PartPrice> cables;

  static auto fields() {
    using config::field;
    return std::tuple{field("currency", &PricingTable::currency, "currency of every price"),
                      field("switches", &PricingTable::switches, "switch classes by name"),
                      field("nics", &PricingTable::nics, "NIC classes by name"),
                      field("transceivers", &PricingTable::transceivers, "optical transceivers, one per link end"),
                      field("cables", &PricingTable::cables, "copper DAC and fibre cables, one per link")};
  }
};

/// The built-in table's text (models/fabric/pricing.yaml) and file name.
std::string_view builtin_pricing_text();
inline constexpr std::string_view kBuiltinPricingFile = "models/fabric/pricing.yaml";

/// The cheapest switch class with at least `ports` ports at `rate` or faster; nullptr if none.
const std::pair<const std::string, SwitchPrice>* cheapest_switch(const PricingTable& t, std::int64_t ports,
                                                                 sim::Bandwidth rate);
/// The cheapest part at `rate` or faster whose name starts with `prefix` (e.g. "dac", "fiber");
/// nullptr if none.
const std::pair<const std::string, PartPrice>* cheapest_part(const std::map<std::string, PartPrice>& parts,
                                                             sim::Bandwidth rate, std::string_view prefix = {});

}  // namespace clustersim::fabric
