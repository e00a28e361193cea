// The hardware catalog: GPU and node types as data.
//
// Entries live in models/hardware/catalog.yaml (compiled into the binary), each with the
// datasheet or paper it comes from; a scenario can add its own through `catalogs:` files
// or define a node inline under `cluster.node`. The structs below are the schema: their
// field tables decode the catalog, check it, and document it (`clustersim describe catalog`).
//
// Conventions: FLOP rates are dense vendor peaks; scale-up bandwidth is per GPU and per
// direction; host power is the node's non-GPU power at load (see the catalog's header).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::hardware {

using config::field;

/// Dense peak FLOP rates per datatype; a datatype the GPU lacks is absent.
struct PeakFlops {
  std::optional<sim::FlopRate> fp64;
  std::optional<sim::FlopRate> fp32;
  std::optional<sim::FlopRate> tf32;
  std::optional<sim::FlopRate> bf16;
  std::optional<sim::FlopRate> fp16;
  std::optional<sim::FlopRate> fp8;

  static auto fields() {
    return std::tuple{
        field("fp64", &PeakFlops::fp64, "FP64 peak (tensor-core where the GPU has it)"),
        field("fp32", &PeakFlops::fp32, "FP32 peak (non-tensor)"),
        field("tf32", &PeakFlops::tf32, "TF32 tensor-core peak"),
        field("bf16", &PeakFlops::bf16, "BF16 tensor-core peak"),
        field("fp16", &PeakFlops::fp16, "FP16 tensor-core peak"),
        field("fp8", &PeakFlops::fp8, "FP8 tensor-core peak"),
    };
  }
};

struct GpuSpec {
  std::string vendor;
  std::string architecture;
  std::int64_t sms = 0;
  PeakFlops peak_flops;
  sim::Bytes hbm_capacity;
  sim::Bandwidth hbm_bandwidth;
  sim::Bandwidth scaleup_bandwidth;
  sim::Power tdp;
  std::string source;
  std::string notes;

  static auto fields() {
    return std::tuple{
        field("vendor", &GpuSpec::vendor, "manufacturer"),
        field("architecture", &GpuSpec::architecture, "GPU architecture"),
        field("sms", &GpuSpec::sms, "streaming multiprocessors (compute units on AMD)")
            .at_least(0)
            .at_most(100'000),
        field("peak_flops", &GpuSpec::peak_flops, "dense peak FLOP rate per datatype"),
        field("hbm_capacity", &GpuSpec::hbm_capacity, "HBM capacity").require().above_zero(),
        field("hbm_bandwidth", &GpuSpec::hbm_bandwidth, "HBM bandwidth").require().above_zero(),
        field("scaleup_bandwidth", &GpuSpec::scaleup_bandwidth,
              "NVLink / Infinity Fabric bandwidth per GPU, per direction"),
        field("tdp", &GpuSpec::tdp, "thermal design power").require().above_zero(),
        field("source", &GpuSpec::source, "where the numbers come from (datasheet, paper)"),
        field("notes", &GpuSpec::notes, "derivations and caveats"),
    };
  }
};

/// How the GPUs of one node (or rack-scale domain) talk to each other.
enum class ScaleUp { none, nvswitch, infinity_fabric, nvlink_switch_tray };

constexpr std::array<std::pair<ScaleUp, std::string_view>, 4> enum_names(ScaleUp) {
  return {{{ScaleUp::none, "none"},
           {ScaleUp::nvswitch, "nvswitch"},
           {ScaleUp::infinity_fabric, "infinity_fabric"},
           {ScaleUp::nvlink_switch_tray, "nvlink_switch_tray"}}};
}

struct NodeSpec {
  config::NameOr<GpuSpec> gpu;
  std::int64_t gpus = 0;
  ScaleUp scaleup = ScaleUp::nvswitch;
  std::optional<sim::Bandwidth> scaleup_bandwidth;
  sim::Time scaleup_latency;
  std::int64_t nics = 0;
  sim::Bandwidth nic_bandwidth;
  std::int64_t rails = 0;  ///< 0: every NIC its own rail
  std::int64_t hosts = 1;  ///< operating-system hosts (compute trays) in the node
  sim::Power host_power;
  std::string source;
  std::string notes;

  static auto fields() {
    return std::tuple{
        field("gpu", &NodeSpec::gpu, "GPU type: a catalog name or an inline GPU definition").require(),
        field("gpus", &NodeSpec::gpus, "GPUs in the node (the scale-up domain)").require().at_least(1).at_most(100'000),
        field("scaleup", &NodeSpec::scaleup, "scale-up fabric joining the node's GPUs"),
        field("scaleup_bandwidth", &NodeSpec::scaleup_bandwidth,
              "per GPU, per direction, inside the scale-up domain (default: the GPU's)"),
        field("scaleup_latency", &NodeSpec::scaleup_latency, "one-way GPU-to-GPU latency inside the node"),
        field("nics", &NodeSpec::nics, "scale-out NICs, at most one per GPU (each GPU sends through one)").at_least(0).at_most(100'000),
        field("nic_bandwidth", &NodeSpec::nic_bandwidth, "line rate of each scale-out NIC"),
        field("rails", &NodeSpec::rails,
              "a rail-optimized fabric's rails: NIC i is on rail i mod rails, and the node counts as nics / rails "
              "rail units (trays) of one NIC per rail (GB200 NVL72: 4, its compute trays; 0: every NIC its own rail)")
            .at_least(0)
            .at_most(100'000),
        field("hosts", &NodeSpec::hosts,
              "operating-system hosts in the node, each with its own CPUs and node metrics (GB200 NVL72: 18, its "
              "compute trays; a DGX: 1)")
            .at_least(1)
            .at_most(100'000),
        field("host_power", &NodeSpec::host_power, "power of everything but the GPUs, at load"),
        field("source", &NodeSpec::source, "where the numbers come from"),
        field("notes", &NodeSpec::notes, "derivations and caveats"),
    };
  }
};

struct Catalog {
  std::map<std::string, GpuSpec> gpus;
  std::map<std::string, NodeSpec> nodes;

  static auto fields() {
    return std::tuple{
        field("gpus", &Catalog::gpus, "GPU types by name"),
        field("nodes", &Catalog::nodes, "node types by name"),
    };
  }
};

/// The built-in catalog's text (models/hardware/catalog.yaml, compiled in).
std::string_view builtin_catalog_text();
/// Its file name, as diagnostics print it.
inline constexpr std::string_view kBuiltinCatalogFile = "models/hardware/catalog.yaml";

}  // namespace clustersim::hardware
