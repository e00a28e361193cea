// Collectives as schedules of point-to-point transfers.
//
// A collective on n ranks (GPUs, in communicator order) is planned as a sequence of phases;
// a phase is a set of transfers that start together, and the next phase starts when the
// last one has arrived. A phase may repeat: the 2(n-1) steps of a ring all-reduce are one
// phase of n transfers repeated 2(n-1) times, so a schedule stays O(n) in memory however
// long the ring, and a model may solve a repeated phase once and reuse its time.
//
// Sizes follow nccl-tests (doc/PERFORMANCE.md): S is the size of the buffer each rank
// holds at the end (all-reduce, all-gather, broadcast) or starts with (reduce-scatter,
// all-to-all). algbw = S / time, busbw = algbw x factor with factor 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and
// send/recv, so that busbw compares with the hardware's link bandwidth whatever n.
//
// Algorithms (time on an idle network with per-step cost alpha and link bandwidth B):
//   ring all-reduce          2(n-1) steps of S/n:  2(n-1) alpha + 2(n-1)/n S/B. When every
//                            node holds at least k >= 2 GPUs of the communicator (k the
//                            fewest on one node: whole nodes, k = g; a DP group under TP
//                            inside the node; a last node partly used), k channels (rings)
//                            run at once, each with S/k, ring c entering every node at its
//                            c-th GPU: each of those GPUs' NICs carries one ring (with
//                            NCCL's PXN: the hop out of a node is relayed over NVLink to the
//                            sender node's GPU on the receiver's rail, when that GPU is in
//                            the communicator; the two legs run at once, chunk by chunk,
//                            and the step pays both legs' latencies)
//   ring reduce-scatter/all-gather  n-1 steps of S/n
//   ring broadcast           on the same k rings, each turned to start at the root and
//                            carrying S/k, pipelined in C chunks: n-2+C steps, each edge
//                            carrying S/k in all, the last C-1 streamed: (n-1) alpha +
//                            S/(k B)
//   tree all-reduce          NCCL's tree as it runs (NCCL_ALGO=Tree): "tree on nodes"
//                            below, on whole nodes, a node and a part, or one rank per
//                            node (a DP group under TP: no chain, one rail). Its two
//                            in-order binary trees over the nodes (src/graph/trees.cc)
//                            join nodes 2^k apart, near in node order (a heap-ordered
//                            tree, parent (i-1)/2, sent most of its edges across the
//                            fabric's core: 7x slower over 16,384 GPUs behind a 1:7 taper)
//   halving_doubling         recursive halving reduce-scatter then doubling all-gather,
//                            2 log2(n) steps (n a power of two)
//   tree on nodes            NCCL's tree all-reduce: a chain through each node's GPUs
//                            (NVLink), which every byte climbs and comes back down (a GPU
//                            sends 2S: NCCL's tuning.cc halves a tree's bus bandwidth for
//                            it), and across nodes, rail by rail, NCCL's double binary
//                            tree over the nodes (src/graph/trees.cc: in-order trees, root
//                            with one child, the second mirrored or shifted) on the rail's
//                            shard S/k, k the fewest ranks a node holds (g on whole nodes;
//                            rail i on each node's i-th rank, as the rings spread over
//                            channels: a last node of 7 GPUs of 8 costs a rail, 8/7 of the
//                            time), the three pipelined in chunks as NCCL runs them: one
//                            phase of R = 2(m-1) + 2d + C - 1 steps (m the most ranks on a
//                            node, d the trees' depth, C = chunks(S/2k)), the last C-1
//                            streamed: time (2(m-1) + 2d) alpha + max(2S / B_nvlink,
//                            NIC bytes / B_nic) (on a full-mesh node, S / B_link: the
//                            chain's two directions take a link each). Through the NICs a node sends S/k per rail
//                            GPU on 2 nodes (twice the ring's busbw), 2 S/k on the busiest
//                            node from 4 on (an inner node of one tree and a leaf of the
//                            other: slightly less than the ring's busbw)
//   hierarchical all-reduce  on whole nodes, three stages one after the other: a ring
//                            reduce-scatter inside each node (g-1 steps of S/g), a ring
//                            all-reduce of each GPU's shard S/g across the nodes on its rail
//                            (2(N-1) steps of S/(gN)), a ring all-gather inside each node:
//                            2(g-1)/g S over NVLink and 2(N-1)/N S/g through a GPU's NIC, the
//                            stages' times added (Horovod's hierarchical all-reduce). NCCL
//                            has no such algorithm (its tree is the pipelined counterpart),
//                            so auto never chooses it for an all-reduce; --algo asks for it
//   direct all-to-all        one phase, every rank sends S/n to every other (no PXN relay:
//                            a send between rails crosses the fabric's upper tiers, where
//                            NCCL would relay it; the hierarchical one keeps to the rails)
//   hierarchical all-to-all  inside each node, GPU i hands GPU j all it has for local rank j
//                            (nodes x S/n); rail by rail, GPU j of node a sends GPU j of
//                            node b its node's data for it (g x S/n): fewer, larger messages
//                            on the network. NCCL's PXN relay, forwarding each chunk as it
//                            arrives: the two legs overlap (one pipelined phase), time =
//                            call overhead + the larger latency + max(nodes x (g-1) S/n /
//                            B_nvlink, (nodes-1) g S/n / B_nic)
//   send/recv                2 ranks: one transfer of S from rank 0 to rank 1; n > 2: every
//                            rank i sends S to rank i+1 mod n at once (nccl-tests'
//                            sendrecv_perf ring of pairs); a send to another node's other
//                            rail is relayed as a ring's hop is (PXN, NCCL_P2P_PXN_LEVEL 2,
//                            its default), when the relay GPU is a rank
// Chunks: C = ceil(S' / 512 KiB) for the pipelined algorithms (S' the bytes one tree or
// the ring carries; 512 KiB is NCCL's per-step slot), capped at 1024. A pipelined schedule
// spreads each edge's bytes evenly over its steps, so bytes are exact; the steps that fill
// the pipeline pay the per-step latency and the C-1 that follow are streamed (Phase), so
// time is (fill steps) x alpha + S'/B, without the pipeline's fill and drain bandwidth, as
// NCCL's own cost model charges latency per algorithm step, not per chunk
// (src/graph/tuning.cc).
//
//   nvls all-reduce          NVLink SHARP (Hopper and later NVSwitch), ranks of one
//                            scale-up domain: one phase in which every rank sends its S to
//                            the switch, which reduces, and the switch multicasts the S of
//                            the result to every rank (hops into and out of the switch;
//                            the two directions of each NVLink overlap, as NCCL pipelines
//                            them). Each GPU's NVLink carries S per direction instead of the
//                            ring's 2(n-1)/n S; the rate is bounded by the switch's
//                            reduction rate (NetworkConfig::nvls_efficiency x the NVLink
//                            line rate): time = call overhead + nvls_latency (the pass
//                            through the switch: 25 us, NCCL's) + S / (B_nvlink x e_nvls), busbw =
//                            2(n-1)/n x B_nvlink x e_nvls.
//   sharp all-reduce         InfiniBand SHARP (NCCL's CollNet Direct) on ranks spread evenly
//                            over two or more nodes, k on each (k = g on whole nodes; 1 for
//                            a DP group under TP or nodes of one GPU), one pipelined phase:
//                            rank (a, i) sends each rank (a, j) of its node the slice j of
//                            its buffer (reduce-scatter over NVLink, S/k) and later the
//                            reduced slice i (all-gather, S/k): one transfer of 2S/k per
//                            ordered pair of the node; rank (a, i) sends its reduced slice
//                            (S/k) up into the fabric's aggregation tree and receives the
//                            global result (S/k) back, through its NIC. Each NIC carries S/k
//                            per direction instead of the ring's 2(n-1)/n S/k; the tree's
//                            switch-to-switch links carry one reduced stream each and are not
//                            modelled, nor is a limit on the trees running at once (k per
//                            node group, g DP groups under TP). time = call overhead +
//                            sharp_latency (the pass up the aggregation tree and back: 31 us,
//                            NCCL's CollNet Direct) + max(2(k-1)/k S / B_nvlink,
//                            S / (k B_nic e_sharp)).
// Hops into and out of a switch (Transfer::hop) carry data to a switch that reduces it or
// from one that multicasts it: such a transfer is sent by a GPU (into) or received by one
// (out of), not both.
//
// LIMITATIONS: steps are synchronous (a phase waits for its slowest transfer, and a ring's
// latency is the mean of its hops', Phase::latency_along), which is exact for rings on
// symmetric hardware and pessimistic when one link lags. A direct all-to-all is one step
// whatever the ranks: NCCL runs it as n-1 grouped sends and receives per rank, whose
// per-peer cost makes its small-message time grow with the ranks; that cost is not
// modelled (no source gives it), so small all-to-alls over many ranks are optimistic. No protocol
// (LL / LL128 / Simple) distinction beyond the efficiency and overhead parameters and the
// size factors (models/network/config.hpp). NVLS
// and SHARP are modelled for all-reduce only (not reduce-scatter / all-gather), NVLS
// within one scale-up domain only (NCCL's NVLS across nodes, NVLS Tree, and SHARP with
// NVLS inside the nodes are not modelled); their pipelines are one concurrent phase
// (Phase::pipelined), so the slowest stage sets the rate, the largest latency (the pass
// through the switch, or up the aggregation tree and back) is paid once, and the pipeline's
// fill is not charged; SHARP's aggregation tree is the routes' switches, not a configured
// tree: the stream into it loads the route from each GPU to a GPU of the communicator's
// last node (its first for the last node itself; the farthest-numbered when the ranks come
// in node order), and its latency is network.sharp_latency. Whether the hardware has NVLS (an NVSwitch of Hopper or later: A100's has
// no SHARP engine) is the scenario's statement (network.nvls), checked only for an
// NVSwitch-style scale-up switch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::network {

enum class Op { all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, send_recv };
enum class Algorithm { automatic, ring, tree, hierarchical, halving_doubling, direct, nvls, sharp };

constexpr std::array<std::pair<Op, std::string_view>, 6> enum_names(Op) {
  return {{{Op::all_reduce, "all_reduce"},
           {Op::reduce_scatter, "reduce_scatter"},
           {Op::all_gather, "all_gather"},
           {Op::broadcast, "broadcast"},
           {Op::all_to_all, "all_to_all"},
           {Op::send_recv, "send_recv"}}};
}

constexpr std::array<std::pair<Algorithm, std::string_view>, 8> enum_names(Algorithm) {
  return {{{Algorithm::automatic, "auto"},
           {Algorithm::ring, "ring"},
           {Algorithm::tree, "tree"},
           {Algorithm::hierarchical, "hierarchical"},
           {Algorithm::halving_doubling, "halving_doubling"},
           {Algorithm::direct, "direct"},
           {Algorithm::nvls, "nvls"},
           {Algorithm::sharp, "sharp"}}};
}

/// Where a transfer goes besides GPU to GPU: into or out of a switch that reduces
/// (in-network reduction).
enum class Hop : std::uint8_t {
  gpu,           ///< GPU src to GPU dst along the fabric's route
  scaleup_in,    ///< GPU src into its node's scale-up switch (NVLS); dst = src
  scaleup_out,   ///< the scale-up switch out to GPU dst (NVLS multicast); src = dst
  fabric_in,     ///< GPU src through its NIC into the fabric's aggregation tree (SHARP);
                 ///< dst: a GPU of another node, whose route sets the tree's latency
  fabric_out,    ///< the aggregation tree out through GPU dst's NIC to dst; src = dst
};

struct Transfer {
  std::int64_t src = 0;  ///< global GPU index
  std::int64_t dst = 0;
  double bytes = 0.0;
  Hop hop = Hop::gpu;
  /// The next transfer of the phase forwards this one's bytes as they arrive (a PXN relay:
  /// over NVLink to a GPU on the receiver's rail, then out of its NIC). The two run at once,
  /// chunk by chunk, but the first chunk crosses both: the next transfer's latency adds this
  /// one's path latency.
  bool feeds_next = false;
  /// In a Phase::latency_along phase, this transfer's weight in the mean of the hops'
  /// latencies that each step pays: a phase whose steps cross different links in turn (a
  /// tree's chain inside the nodes, then its edges across them) weighs each kind by the
  /// steps it takes.
  double latency_weight = 1.0;
  friend bool operator==(const Transfer&, const Transfer&) = default;

  /// Bytes a GPU sends (received by a GPU, `receives`): a hop into a switch is received by
  /// the switch, a hop out of one is sent by it.
  [[nodiscard]] bool sent_by_gpu() const { return hop != Hop::scaleup_out && hop != Hop::fabric_out; }
  [[nodiscard]] bool received_by_gpu() const { return hop != Hop::scaleup_in && hop != Hop::fabric_in; }
};

/// In-network reduction the hardware offers and the scenario enables (NetworkConfig's
/// nvls and sharp, where the fabric can: network::in_network()).
/// The most transfers one phase may hold on the flow-level model: each is a flow with its
/// own route and max-min variable, about 0.5 KB in all, and a phase's flows are solved
/// together (a direct all-to-all over 2,048 ranks, 4.2 million flows, took 1.9 GB; over
/// 3,072 it ran out of memory). A 1,024-rank all-to-all fits: about 2 s (bench_network).
inline constexpr std::size_t kMaxFlowTransfers = std::size_t{1} << 20;

/// The most paths one phase may route (transfers x network.qps_per_connection, in either
/// model): a 1,024-rank all-to-all at 16 queue pairs (16.8 million) fits; at 256 it took
/// 77 s and 7 GB in the analytical model alone.
inline constexpr std::size_t kMaxRoutedPaths = std::size_t{1} << 25;

struct InNetwork {
  bool nvls = false;   ///< NVLink SHARP in the scale-up switches
  bool sharp = false;  ///< SHARP in the fabric's switches
  /// Not in-network reduction, but how the planner must lay rings out: the node's GPUs are
  /// joined pairwise (a full mesh, AMD Infinity Fabric), not through a switch, so that rings
  /// that differ only by where they start would all take the same links.
  bool mesh = false;
  /// Paths each transfer between nodes routes (network.qps_per_connection): the planner
  /// keeps its ring count within what the network models route (network.hpp).
  std::int64_t qps = 1;
  /// The flow-level model runs the plan: it holds at most 2^20 transfers in a phase.
  bool flow = false;
};

struct Phase {
  std::vector<Transfer> transfers;
  std::int64_t repeat = 1;
  /// Of the repeats, the last `streamed` follow the others back to back: the chunks of a
  /// pipeline once it is full, each sent while earlier ones are still in flight (NCCL keeps
  /// 8 slots per channel in flight), so that a step's latency hides behind the transfers and
  /// it costs its transfer time alone. The first repeat - streamed (the pipeline's fill)
  /// pay the per-step latency and the route's.
  std::int64_t streamed = 0;
  /// The transfers form rings (or a chain) along which each step's data moves on from rank
  /// to rank as soon as it arrives: the latency on a step's critical path is then the mean
  /// of its hops' (the path around the ring; a relayed hop's latency is its second leg's,
  /// which includes the first's), not the largest. NCCL's cost model charges
  /// a ring (nsteps - nInterSteps) intraLat + nInterSteps interLat (src/graph/tuning.cc):
  /// per step, the NVLink hops at their latency and only the node-crossing ones at the
  /// network's. Other phases wait for their slowest transfer, latency included, but
  /// pipelined ones (below).
  bool latency_along = false;
  /// The transfers are the legs of one pipeline whose chunks cross them in turn (NVLS,
  /// SHARP's CollNet Direct: into the switch or the tree, through it, back out; the
  /// hierarchical all-to-all: over NVLink to the rail's GPU, then over the rail), so the
  /// phase costs its slowest leg's transfer time plus the largest of the legs' latencies,
  /// paid once: a chunk's trip up the aggregation tree and back cannot hide behind the
  /// NVLink legs' transfers. (Each leg timed with its own latency, the largest, max(latency
  /// + transfer), hid SHARP's 31 us whenever the NVLink legs were the bottleneck.)
  bool pipelined = false;
};

struct Schedule {
  Op op = Op::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  std::vector<Phase> phases;
  /// The collective's size S in bytes as nccl-tests counts it (plan() sets it): what the
  /// network model's size factors are looked up by (NetworkConfig, models/network/config.hpp).
  double size = 0.0;

  /// Bytes sent by all transfers of all phases, repeats included.
  [[nodiscard]] double bytes_sent() const;
  /// Steps (phases counted with their repeats).
  [[nodiscard]] std::int64_t steps() const;
};

/// nccl-tests' bus bandwidth factor for `op` on n ranks.
double bus_factor(Op op, std::int64_t n);

/// The rings of a ring collective on m GPUs of one fully connected node (3 <= m <= 16):
/// arc-disjoint Hamiltonian cycles of the m vertices, each from vertex 0, as many as a
/// bounded search finds (m - 1 where they exist: all m but 4 and 6, found up to m = 16);
/// empty when it finds fewer than 2. Computed once per m and thread.
std::vector<std::vector<int>> mesh_rings(int m);

/// The algorithms that can run `op` on these ranks (e.g. halving_doubling needs a power of
/// two, hierarchical needs whole nodes).
std::vector<Algorithm> algorithms_for(Op op, const std::vector<std::int64_t>& ranks, std::int64_t gpus_per_node);
/// The same, with the in-network reductions `in` offers: nvls (all-reduce, every rank in
/// one scale-up domain), sharp (all-reduce on two or more nodes holding as many ranks each).
std::vector<Algorithm> algorithms_for(Op op, const std::vector<std::int64_t>& ranks, std::int64_t gpus_per_node,
                                      const InNetwork& in);

/// Plans `op` of `size` bytes over `ranks` (global GPU indices, in communicator order) with
/// `algorithm` (not automatic). Returns false and a reason when the algorithm cannot run it.
bool plan(Op op, Algorithm algorithm, const std::vector<std::int64_t>& ranks, sim::Bytes size,
          std::int64_t gpus_per_node, Schedule& out, std::string& why);
/// The same, where the in-network reductions of `in` may be planned (nvls, sharp).
bool plan(Op op, Algorithm algorithm, const std::vector<std::int64_t>& ranks, sim::Bytes size,
          std::int64_t gpus_per_node, const InNetwork& in, Schedule& out, std::string& why);

}  // namespace clustersim::network
