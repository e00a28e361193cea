// The network model's configuration (scenario section `network`): which level of detail,
// and the calibration parameters that turn line rates into achieved rates.
//
// Defaults and their sources. These are generic: a GPU type with an entry in the built-in
// network calibrations (models/calibration/network.yaml: A100, H100, H200, B200, GB200)
// starts from that entry instead, a calibration profile named by the scenario overlays it,
// and keys the scenario writes win over both (models/scenario/scenario.cpp).
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
//   NCCL blog posts; `clustersim calibrate` refits it from a one-node all_reduce_perf log
//   run with NVLS on, NCCL's default on Hopper NVSwitch nodes: calibration::invert_network.)
// - nvls_latency 25us: the latency of an NVLS all-reduce's pass through the NVSwitch, in
//   place of its NVLink hop's: NCCL's cost model charges NVLS 25 us on NVLink (hwLat, NVLS,
//   Simple, the only protocol NVLS runs; NVIDIA/nccl src/graph/tuning.cc, 2.19 and later)
//   against 0.6 us per ring step with LL, so that NCCL takes NVLS for large all-reduces
//   only. Without it, an NVLS all-reduce of 1 KiB on 8 x H100 took 8.7 us, faster than
//   NCCL's own floor for it.
// - sharp_efficiency 0.94: the rate of a SHARP stream per NIC and direction, as a share of
//   the NIC's line rate; by default the NCCL-over-NDR figure (47 / 50, nccl-tests #290).
//   The CoreWeave H100 SHARP run (all_reduce_perf, 96 ranks, busbw 386.6 GB/s at 8 GiB,
//   coreweave/nccl-tests README) is NVLink-bound in this model (its SHARP stream needs
//   only 24.4 GB/s per NIC), so it bounds e_sharp from below (>= 0.49), not more.
// - sharp_latency 31us: the latency of a SHARP all-reduce's pass up the fabric's aggregation
//   tree and back, in place of the path's: NCCL's cost model charges CollNet Direct 31 us
//   on the network (hwLat, NET, CollNetDirect, Simple, the only protocol CollNet runs;
//   NVIDIA/nccl src/graph/tuning.cc), as it charges NVLS 25 us on NVLink. Without it a
//   1 KiB SHARP all-reduce on 2 nodes took 9.8 us, faster than one inside a node.
// - qps_per_connection 1: NCCL's default NCCL_IB_QPS_PER_CONNECTION. A transfer between two
//   nodes is split evenly over this many queue pairs, each its own ECMP flow (flow ids
//   i q .. i q + q - 1 for the phase's transfer i), so that a connection's bytes spread over
//   the uplinks as RoCE's per-QP source ports make them. The analytical model counts a
//   link's flows by their share (a transfer with m of its q flows on it counts m / q; its
//   rate is min over its links of capacity / count); the flow model keeps one max-min
//   variable per transfer, using each link with coefficient m / q, so the transfer moves at
//   the pace of its busiest path. A transfer's own pairs are routed against the other
//   transfers' load only (under UGAL they are no load to each other); UGAL's greedy choice
//   still sees pairs one by one, so more pairs can move its picks either way (a 256-GPU
//   all-to-all on dragonfly-1k: 1-4% slower at 16 than at 1). Steps past kMaxRoutedPaths
//   (network.hpp) routed paths are refused. Meta's Llama 3 collectives open 16 flows per GPU pair
//   ("The Llama 3 Herd of Models", 2024, section 3.3.1, load balancing with E-ECMP).
// - scaleup_size_factors, scaleout_size_factors: empty (every size reaches the level's
//   efficiency). A calibration table, fitted by `clustersim calibrate` from nccl-tests logs
//   (see below); no published default.
//
// Size factors. NCCL does not reach the same share of line rate at every message size: at
// medium sizes it runs fewer channels and the LL / LL128 protocols (NVIDIA/nccl
// src/graph/tuning.cc and src/enqueue.cc pick the algorithm, protocol and channel count per
// size from a cost table, with a static per-size correction factor for trees). On the
// public logs of tests/calibration a 16 MiB all-reduce reaches 9.5% (2 x 8 H100, TCPXO) and
// a 2 MiB one 14% (8 x A100, NVLink) of the bus bandwidth of the largest sizes. The model
// takes this as a table per level: the efficiency of a link of that level in a collective
// of nccl-tests size S is
//     efficiency(S) = {scaleup,scaleout}_efficiency x factor(S),
// factor(S) interpolated linearly in log2(S) between the table's points and constant beyond
// its ends (1 with no table). The factors apply to the collectives NCCL's tuner configures
// by size (all-reduce, reduce-scatter, all-gather, broadcast), not to send/recv and
// all-to-all, which NCCL runs as point-to-point operations outside that tuner. Both network models apply it as a coefficient: a transfer of
// a call of size S uses 1 / factor(S) of a link's capacity per byte/s (the flow model's
// max-min coefficient; the analytical model's share), so a call at a low factor also leaves
// less to the others. It stands for protocol and channel effects the model does not
// simulate; it is measured once per node type, never set per case.
#pragma once

#include <array>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

namespace clustersim::network {

/// analytical: alpha-beta per transfer from its path, links shared equally among the
/// transfers of a phase; flow: every transfer a flow, links shared max-min fairly, rates
/// re-solved as flows start and end (events on the engine).
enum class Model { analytical, flow };

constexpr std::array<std::pair<Model, std::string_view>, 2> enum_names(Model) {
  return {{{Model::analytical, "analytical"}, {Model::flow, "flow"}}};
}

/// One point of a size-factor table: collectives of nccl-tests size `size` reach `factor`
/// times the level's efficiency.
struct SizeFactor {
  sim::Bytes size;
  double factor = 1.0;
  friend bool operator==(const SizeFactor&, const SizeFactor&) = default;

  static auto fields() {
    using config::field;
    return std::tuple{field("size", &SizeFactor::size, "collective size (nccl-tests' size column)")
                          .require()
                          .at_least(sim::Bytes::of(1.0)),
                      field("factor", &SizeFactor::factor, "share of the level's efficiency reached at that size")
                          .require()
                          .at_least(0.001)
                          .at_most(1.0)};
  }
};

/// factor(S) of a table (see the header): linear in log2(S) between points, constant beyond
/// the ends, 1 for an empty table. Precondition: sizes strictly increasing. O(points).
double size_factor(const std::vector<SizeFactor>& table, double bytes);

/// Where a table breaks the precondition of size_factor(): the index of the first point
/// whose size is not above its predecessor's, or 0 when the table is fine.
std::size_t first_unsorted(const std::vector<SizeFactor>& table);

struct NetworkConfig {
  Model model = Model::analytical;
  double scaleup_efficiency = 0.93;
  double scaleout_efficiency = 0.94;
  sim::Time call_overhead = sim::Time::from_ns(8'400);
  sim::Time step_latency = sim::Time::zero();
  bool nvls = false;
  bool sharp = false;
  double nvls_efficiency = 0.61;
  sim::Time nvls_latency = sim::Time::from_ns(25'000);
  double sharp_efficiency = 0.94;
  sim::Time sharp_latency = sim::Time::from_ns(31'000);
  double overlap_slowdown = 0.189;
  std::vector<SizeFactor> scaleup_size_factors;
  std::vector<SizeFactor> scaleout_size_factors;
  std::int64_t qps_per_connection = 1;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("model", &NetworkConfig::model, "level of detail: analytical (alpha-beta) or flow (max-min flows)"),
        field("scaleup_efficiency", &NetworkConfig::scaleup_efficiency,
              "share of NVLink / scale-up line rate a collective achieves; default: the GPU type's built-in "
              "calibration (models/calibration/network.yaml: H100, H200 0.822; A100 0.7787), else 0.93 (B200 node, "
              "839 of 900 GB/s)")
            .at_least(0.01)
            .at_most(1.0),
        field("scaleout_efficiency", &NetworkConfig::scaleout_efficiency,
              "share of NIC and fabric line rate achieved (0.94: NCCL 47 of 50 GB/s on NDR, nccl-tests #290)")
            .at_least(0.01)
            .at_most(1.0),
        field("call_overhead", &NetworkConfig::call_overhead,
              "fixed cost of one collective call (8.4us: NCCL ring/Simple base latency; A100: 23.5us, fitted by the "
              "built-in calibration)"),
        field("step_latency", &NetworkConfig::step_latency,
              "software latency of each algorithm step, on top of the links' latency"),
        field("nvls", &NetworkConfig::nvls,
              "NVLink SHARP: all-reduce reduced inside NVSwitch (Hopper or later; needs an NVSwitch scale-up)"),
        field("sharp", &NetworkConfig::sharp, "InfiniBand SHARP: all-reduce across nodes reduced in the fabric's switches"),
        field("nvls_efficiency", &NetworkConfig::nvls_efficiency,
              "NVLS all-reduce rate per GPU as a share of NVLink line rate (0.61: ~480 GB/s busbw on 8 x H100; "
              "fitted by calibrate from a one-node all-reduce log that ran NVLS)")
            .at_least(0.01)
            .at_most(1.0),
        field("nvls_latency", &NetworkConfig::nvls_latency,
              "latency of an NVLS all-reduce's pass through the NVSwitch, in place of the NVLink hop's (25us: "
              "NCCL's NVLS latency on NVLink, src/graph/tuning.cc)"),
        field("sharp_efficiency", &NetworkConfig::sharp_efficiency,
              "SHARP stream rate per NIC as a share of its line rate (0.94: as scaleout_efficiency)")
            .at_least(0.01)
            .at_most(1.0),
        field("sharp_latency", &NetworkConfig::sharp_latency,
              "latency of a SHARP all-reduce's pass up the aggregation tree and back, in place of the path's "
              "(31us: NCCL's CollNet Direct latency on the network, src/graph/tuning.cc)"),
        field("overlap_slowdown", &NetworkConfig::overlap_slowdown,
              "how much longer compute takes while a collective runs behind it (SMs and HBM shared with the "
              "communication kernels): 0.189 = 18.9%, the mean Lee et al. measured on A100, H100, MI250 and MI210 "
              "(arXiv:2507.03114, 2025); 0: overlap is free")
            .at_least(0.0)
            .at_most(1.0),
        field("scaleup_size_factors", &NetworkConfig::scaleup_size_factors,
              "share of scaleup_efficiency reached by collectives of each size, sizes increasing (fitted by calibrate; "
              "the A100's built-in calibration has one)"),
        field("qps_per_connection", &NetworkConfig::qps_per_connection,
              "ECMP flows per GPU-to-GPU connection across nodes: each transfer is split evenly over this "
              "many queue pairs, each hashed to its own uplinks (NCCL_IB_QPS_PER_CONNECTION, default 1; "
              "Meta's Llama 3 collectives open 16 per GPU pair, arXiv:2407.21783 section 3.3.1)")
            .at_least(1)
            .at_most(256),
        field("scaleout_size_factors", &NetworkConfig::scaleout_size_factors,
              "share of scaleout_efficiency reached by collectives of each size, sizes increasing (fitted by calibrate)"),
    };
  }
};

}  // namespace clustersim::network
