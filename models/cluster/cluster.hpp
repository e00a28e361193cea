// The cluster: how many nodes of which type, resolved against the hardware catalog, and
// the inventory that follows from it (GPUs, HBM, peak FLOP rates, NICs, power).
//
// The inventory is a plain sum over identical nodes; nothing here is estimated. Power is
// the sum of the GPUs' TDPs and the nodes' host power: the IT load at full utilisation,
// before cooling (PUE) and before the fabric's switches, which the fabric model adds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "models/config/decode.hpp"
#include "models/hardware/catalog.hpp"
#include "sim/units.hpp"

namespace clustersim::cluster {

/// The most GPUs a cluster may have (nodes x GPUs per node), with a fabric or without: the
/// fabric model's bound (its 32-bit ids and memory), 40 times the largest clusters planned.
/// Without a fabric, a cluster of 10^12 GPUs was run, its peak FLOP/s past the 10^24 that
/// every input is held to.
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 22;
/// The most nodes a cluster may have (cluster.nodes, plan --nodes): a node holds one GPU at
/// least, so no more than kMaxGpus (describe said 10,000,000, which no node type could
/// reach).
inline constexpr std::int64_t kMaxNodes = kMaxGpus;

struct ClusterConfig {
  config::NameOr<hardware::NodeSpec> node;
  std::int64_t nodes = 0;

  static auto fields() {
    return std::tuple{
        config::field("node", &ClusterConfig::node,
                      "node type: a catalog name (e.g. dgx-h100) or an inline node definition")
            .require(),
        config::field("nodes", &ClusterConfig::nodes, "number of nodes").require().at_least(1).at_most(kMaxNodes),
    };
  }
};

/// A node type with its GPU type looked up: what the models read.
struct ResolvedNode {
  std::string name;      ///< catalog name, or "inline"
  std::string gpu_name;  ///< catalog name, or "inline"
  hardware::NodeSpec spec;
  hardware::GpuSpec gpu;
  sim::Bandwidth scaleup_bandwidth;  ///< the node's, else the GPU's

  /// The node type as messages name it: its catalog name, or for a node defined in the
  /// scenario "inline: G x GPU".
  [[nodiscard]] std::string label() const;
};

/// Why `node` has no NVLink SHARP (NVLS: all-reduce reduced in the scale-up switch), or ""
/// when it has: it needs two GPUs or more behind an NVSwitch (or NVLink switch trays) of
/// Hopper or later (A100's NVSwitch has no reduction engine).
std::string nvls_unavailable(const ResolvedNode& node);

struct Inventory {
  std::string node_type;
  std::string gpu_type;
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  std::int64_t gpus = 0;
  std::int64_t nics = 0;
  sim::Bytes hbm_total;
  sim::Bandwidth hbm_bandwidth_total;
  sim::Bandwidth scaleout_bandwidth_total;  ///< sum of NIC line rates, one direction
  std::map<std::string, sim::FlopRate> peak_flops_total;  ///< per datatype the GPU has
  sim::Power gpu_power;
  sim::Power host_power;
  sim::Power it_power;  ///< gpu_power + host_power
};

Inventory make_inventory(const ResolvedNode& node, std::int64_t nodes);

/// JSON with SI values and the unit in each key ("hbm_total_bytes", "it_power_w").
config::Json to_json(const Inventory& inv);

}  // namespace clustersim::cluster
