// The network model's configuration (scenario section `network`): which level of detail,
// and the calibration parameters that turn line rates into achieved rates.
//
// Defaults and their sources (until calibration profiles replace them):
// - scaleout_efficiency 0.94: NCCL reaches 46-48 GB/s per 400 Gb/s (50 GB/s) InfiniBand NDR
//   NIC (NVIDIA maintainers, NVIDIA/nccl-tests issue #290): 47 / 50.
// - scaleup_efficiency 0.93: one 8-GPU B200 node reaches an all-reduce bus bandwidth of
//   839 GB/s at 16 GiB over 900 GB/s NVLink per direction (ml-engineering, network
//   benchmarks): 839 / 900.
// - call_overhead 8.4us: NCCL's base latency of a ring collective with the Simple protocol
//   (NVIDIA/nccl src/graph/tuning.cc, baseLat).
// - step_latency 0: software latency per algorithm step beyond the links' own latency; a
//   calibration parameter, fitted from measurements (nccl-tests logs).
// - nvls, sharp: in-network reduction (models/network/collective.hpp, algorithms nvls and
//   sharp), off by default so that results without them do not change.
// - nvls_efficiency 0.61: the rate of an NVLS all-reduce per GPU and direction, as a share
//   of the NVLink line rate; it stands for the NVSwitch's reduction rate. NVIDIA quotes an
//   all-reduce bus bandwidth of ~480 GB/s with NVLS on 8 x H100 (NCCL 2.17+, NVLS; 450 GB/s
//   NVLink per direction) against ~360-370 GB/s for the ring: 480 = 2 x 7/8 x 450 x e, so
//   e = 480 / 787.5 = 0.61. (Figure as quoted in the NCCL 2.17 release material and NVIDIA's
//   NCCL blog posts; refit from an nccl-tests log with NCCL_NVLS_ENABLE=1.)
// - sharp_efficiency 0.94: the rate of a SHARP stream per NIC and direction, as a share of
//   the NIC's line rate; by default the NCCL-over-NDR figure (47 / 50, nccl-tests #290).
//   The CoreWeave H100 SHARP run (all_reduce_perf, 96 ranks, busbw 386.6 GB/s at 8 GiB,
//   coreweave/nccl-tests README) is NVLink-bound in this model (its SHARP stream needs
//   only 24.4 GB/s per NIC), so it bounds e_sharp from below (>= 0.49), not more.
#pragma once

#include <array>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/config/decode.hpp"
#include "sim/time.hpp"

namespace clustersim::network {

/// analytical: alpha-beta per transfer from its path, links shared equally among the
/// transfers of a phase; flow: every transfer a flow, links shared max-min fairly, rates
/// re-solved as flows start and end (events on the engine).
enum class Model { analytical, flow };

constexpr std::array<std::pair<Model, std::string_view>, 2> enum_names(Model) {
  return {{{Model::analytical, "analytical"}, {Model::flow, "flow"}}};
}

struct NetworkConfig {
  Model model = Model::analytical;
  double scaleup_efficiency = 0.93;
  double scaleout_efficiency = 0.94;
  sim::Time call_overhead = sim::Time::from_ns(8'400);
  sim::Time step_latency = sim::Time::zero();
  bool nvls = false;
  bool sharp = false;
  double nvls_efficiency = 0.61;
  double sharp_efficiency = 0.94;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("model", &NetworkConfig::model, "level of detail: analytical (alpha-beta) or flow (max-min flows)"),
        field("scaleup_efficiency", &NetworkConfig::scaleup_efficiency,
              "share of NVLink / scale-up line rate a collective achieves (0.93: B200 node, 839 of 900 GB/s)")
            .at_least(0.01)
            .at_most(1.0),
        field("scaleout_efficiency", &NetworkConfig::scaleout_efficiency,
              "share of NIC and fabric line rate achieved (0.94: NCCL 47 of 50 GB/s on NDR, nccl-tests #290)")
            .at_least(0.01)
            .at_most(1.0),
        field("call_overhead", &NetworkConfig::call_overhead,
              "fixed cost of one collective call (8.4us: NCCL ring/Simple base latency)"),
        field("step_latency", &NetworkConfig::step_latency,
              "software latency of each algorithm step, on top of the links' latency"),
        field("nvls", &NetworkConfig::nvls,
              "NVLink SHARP: all-reduce reduced inside NVSwitch (Hopper or later; needs an NVSwitch scale-up)"),
        field("sharp", &NetworkConfig::sharp, "InfiniBand SHARP: all-reduce across nodes reduced in the fabric's switches"),
        field("nvls_efficiency", &NetworkConfig::nvls_efficiency,
              "NVLS all-reduce rate per GPU as a share of NVLink line rate (0.61: ~480 GB/s busbw on 8 x H100)")
            .at_least(0.01)
            .at_most(1.0),
        field("sharp_efficiency", &NetworkConfig::sharp_efficiency,
              "SHARP stream rate per NIC as a share of its line rate (0.94: as scaleout_efficiency)")
            .at_least(0.01)
            .at_most(1.0),
    };
  }
};

}  // namespace clustersim::network
