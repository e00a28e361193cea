// The price and power table (models/fabric/pricing.yaml, compiled in): network parts
// (switches by port count and speed, NICs, optical transceivers and cables), and the
// compute hardware the cost model prices (servers by catalog node type, GPUs by catalog GPU
// type, and the host parts per GPU of a server the table does not list), each entry with
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
  bool sharp = false;  ///< reduces in the network (InfiniBand SHARP: NVIDIA Quantum switches)
  std::string date;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{field("ports", &SwitchPrice::ports, "ports at port_bandwidth").require().at_least(1),
                      field("port_bandwidth", &SwitchPrice::port_bandwidth, "line rate of each port").require(),
                      field("price", &SwitchPrice::price, "price of one switch, without optics").require(),
                      field("power", &SwitchPrice::power, "power of one switch, without transceivers").require(),
                      field("sharp", &SwitchPrice::sharp,
                            "reduces all-reduce traffic in the switch (InfiniBand SHARP, NVIDIA Quantum): a fabric "
                            "with network.sharp is priced with such a class"),
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

/// A server (a catalog node type), as bought: GPUs, host, scale-up fabric and, unless
/// includes_nics is false, its scale-out NICs.
struct ServerPrice {
  sim::Money price;
  bool includes_nics = true;
  std::int64_t nodes_per_rack = 1;
  std::string date;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("price", &ServerPrice::price, "price of one node").require(),
        field("includes_nics", &ServerPrice::includes_nics,
              "the price includes the node's scale-out NICs (the fabric's NIC line is then not added)"),
        field("nodes_per_rack", &ServerPrice::nodes_per_rack,
              "nodes in one rack, for the rack power density and for which torus and dragonfly cables leave a "
              "rack (optical)")
            .at_least(1)
            .at_most(1000),
        field("date", &ServerPrice::date, "when the price applies"),
        field("source", &ServerPrice::source, "where the figures come from"),
        field("notes", &ServerPrice::notes, "derivations and caveats")};
  }
};

/// A price without a power figure: a GPU (its power is the catalog's TDP) or host parts.
struct ItemPrice {
  sim::Money price;
  std::string date;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{field("price", &ItemPrice::price, "price of one").require(),
                      field("date", &ItemPrice::date, "when the price applies"),
                      field("source", &ItemPrice::source, "where the figures come from"),
                      field("notes", &ItemPrice::notes, "derivations and caveats")};
  }
};

struct PricingTable {
  std::string currency = "USD";
  std::map<std::string, SwitchPrice> switches;
  std::map<std::string, PartPrice> nics;
  std::map<std::string, PartPrice> transceivers;
  std::map<std::string, PartPrice> cables;
  std::map<std::string, ServerPrice> servers;
  std::map<std::string, ItemPrice> gpus;
  std::optional<ItemPrice> host_per_gpu;

  static auto fields() {
    using config::field;
    return std::tuple{field("currency", &PricingTable::currency, "currency of every price"),
                      field("switches", &PricingTable::switches, "switch classes by name"),
                      field("nics", &PricingTable::nics, "NIC classes by name"),
                      field("transceivers", &PricingTable::transceivers, "optical transceivers, one per link end"),
                      field("cables", &PricingTable::cables, "copper DAC and fibre cables, one per link"),
                      field("servers", &PricingTable::servers, "servers by catalog node type"),
                      field("gpus", &PricingTable::gpus, "GPUs by catalog GPU type"),
                      field("host_per_gpu", &PricingTable::host_per_gpu,
                            "host parts per GPU (CPUs, memory, chassis, NICs) of a server the table does not list")};
  }
};

/// The built-in table's text (models/fabric/pricing.yaml) and file name.
std::string_view builtin_pricing_text();
inline constexpr std::string_view kBuiltinPricingFile = "models/fabric/pricing.yaml";

/// The cheapest switch class with at least `ports` ports at `rate` or faster (and SHARP when
/// `sharp`); nullptr if none.
const std::pair<const std::string, SwitchPrice>* cheapest_switch(const PricingTable& t, std::int64_t ports,
                                                                 sim::Bandwidth rate, bool sharp = false);
/// Of the parts whose name starts with `prefix` (e.g. "dac", "fiber"), the cheapest of the
/// slowest class at `rate` or faster; nullptr if none. A link end takes the optic (cable,
/// NIC) of its own speed: a faster part does not plug into a slower port, and a cheaper
/// faster entry (osfp-1600g, a twin-port module priced at hyperscaler volume, serves two
/// 800G ends) had priced every 800G end as one 1.6T module.
const std::pair<const std::string, PartPrice>* cheapest_part(const std::map<std::string, PartPrice>& parts,
                                                             sim::Bandwidth rate, std::string_view prefix = {});

}  // namespace clustersim::fabric
