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
//   ring all-reduce          2(n-1) steps of S/n:  2(n-1) alpha + 2(n-1)/n S/B. On whole
//                            nodes of g GPUs, g channels (rings) run at once, each with S/g,
//                            ring c entering every node at GPU c: every NIC carries one ring
//   ring reduce-scatter/all-gather  n-1 steps of S/n
//   ring broadcast           pipelined in C chunks along the ring: n-2+C steps, each edge
//                            carrying S in all: (n-2+C) alpha + S/B
//   tree all-reduce          double binary tree (two binary trees, the second over the ranks
//                            in reverse order so that one tree's leaves are the other's inner
//                            ranks; each carries S/2), pipelined in C chunks: reduce up
//                            d+C-1 steps, broadcast down d+C-1 steps, d = tree depth; each
//                            edge carries S/2 each way in all
//   halving_doubling         recursive halving reduce-scatter then doubling all-gather,
//                            2 log2(n) steps (n a power of two)
//   hierarchical all-reduce  ring reduce-scatter inside each node (NVLink), ring all-reduce
//                            across nodes among the GPUs of the same local rank (one ring
//                            per rail, S/g each), ring all-gather inside each node
//   direct all-to-all        one phase, every rank sends S/n to every other
//   hierarchical all-to-all  inside each node, GPU i hands GPU j all it has for local rank j
//                            (nodes x S/n); then rail by rail, GPU j of node a sends GPU j
//                            of node b its node's data for it (g x S/n): fewer, larger
//                            messages on the network
//   send/recv                one transfer of S from rank 0 to rank 1
// Chunks: C = ceil(S' / 512 KiB) for the pipelined algorithms (S' the bytes one tree or
// the ring carries; 512 KiB is NCCL's per-step slot), capped at 1024. A pipelined schedule
// spreads each edge's bytes evenly over its steps, so bytes are exact and time is
// steps x alpha + S'/B, without the pipeline's fill and drain bandwidth.
//
// LIMITATIONS: steps are synchronous (a phase waits for its slowest transfer), which is
// exact for rings on symmetric hardware and pessimistic when one link lags; no NVLS / SHARP
// in-network reduction yet; no protocol (LL / LL128 / Simple) distinction beyond the
// efficiency and overhead parameters.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/config/decode.hpp"
#include "sim/units.hpp"

namespace clustersim::network {

enum class Op { all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, send_recv };
enum class Algorithm { automatic, ring, tree, hierarchical, halving_doubling, direct };

constexpr std::array<std::pair<Op, std::string_view>, 6> enum_names(Op) {
  return {{{Op::all_reduce, "all_reduce"},
           {Op::reduce_scatter, "reduce_scatter"},
           {Op::all_gather, "all_gather"},
           {Op::broadcast, "broadcast"},
           {Op::all_to_all, "all_to_all"},
           {Op::send_recv, "send_recv"}}};
}

constexpr std::array<std::pair<Algorithm, std::string_view>, 6> enum_names(Algorithm) {
  return {{{Algorithm::automatic, "auto"},
           {Algorithm::ring, "ring"},
           {Algorithm::tree, "tree"},
           {Algorithm::hierarchical, "hierarchical"},
           {Algorithm::halving_doubling, "halving_doubling"},
           {Algorithm::direct, "direct"}}};
}

struct Transfer {
  std::int64_t src = 0;  ///< global GPU index
  std::int64_t dst = 0;
  double bytes = 0.0;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

struct Phase {
  std::vector<Transfer> transfers;
  std::int64_t repeat = 1;
};

struct Schedule {
  Op op = Op::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  std::vector<Phase> phases;

  /// Bytes sent by all transfers of all phases, repeats included.
  [[nodiscard]] double bytes_sent() const;
  /// Steps (phases counted with their repeats).
  [[nodiscard]] std::int64_t steps() const;
};

/// nccl-tests' bus bandwidth factor for `op` on n ranks.
double bus_factor(Op op, std::int64_t n);

/// The algorithms that can run `op` on these ranks (e.g. halving_doubling needs a power of
/// two, hierarchical needs whole nodes).
std::vector<Algorithm> algorithms_for(Op op, const std::vector<std::int64_t>& ranks, std::int64_t gpus_per_node);

/// Plans `op` of `size` bytes over `ranks` (global GPU indices, in communicator order) with
/// `algorithm` (not automatic). Returns false and a reason when the algorithm cannot run it.
bool plan(Op op, Algorithm algorithm, const std::vector<std::int64_t>& ranks, sim::Bytes size,
          std::int64_t gpus_per_node, Schedule& out, std::string& why);

}  // namespace clustersim::network
