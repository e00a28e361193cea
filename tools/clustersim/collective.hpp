// One collective timed on a scenario's fabric, as nccl-tests would measure it: what
// `clustersim collective` prints for each size and what `clustersim validate` compares with
// published bus bandwidths (validation/cases.yaml, `collectives`).
//
// Ranks are the first n GPUs in node order (rank r is GPU r mod g of node r / g, g GPUs per
// node), as an MPI launch of one process per GPU, packed by node, lays them out. For the
// algorithm `auto` the fastest of NCCL's algorithms (not halving_doubling) by the analytical model is chosen, size by size
// (network::choose_algorithm), as NCCL's tuner picks one per size; the collective is then
// timed alone on the idle fabric by the configuration's model (analytical or flow,
// models/network/network.hpp). Then, as nccl-tests reports (doc/PERFORMANCE.md):
//     algbw = S / t,    busbw = algbw x bus_factor(op, n)
// with S the size in bytes, t the time, bus_factor 2(n-1)/n for all-reduce, (n-1)/n for
// reduce-scatter, all-gather and all-to-all, 1 for broadcast and send/recv; both in GB/s
// (10^9 bytes per second, as nccl-tests prints them).
//
// LIMITATIONS: those of the network model (no protocol choice beyond its efficiencies,
// size factors and overheads, an idle fabric, no run-to-run noise); nccl-tests' in-place and out-of-place
// timings are not distinguished.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/fabric/fabric.hpp"
#include "models/network/network.hpp"
#include "sim/units.hpp"

namespace clustersim::tools {

/// Sizes a collective may have: 1 B to 1 PiB (far beyond any GPU's memory; it keeps every
/// simulated time within range).
inline constexpr double kMinCollectiveBytes = 1.0;
inline constexpr double kMaxCollectiveBytes = 1125899906842624.0;

struct CollectiveTiming {
  network::Algorithm algorithm = network::Algorithm::ring;  ///< the one run (auto resolved)
  sim::Time time;
  double algbw_GBps = 0.0;  ///< S / t, 10^9 bytes per second
  double busbw_GBps = 0.0;  ///< algbw x bus_factor(op, n)
  network::LinkLoad load;   ///< bytes carried by each directed link
  std::string note;         ///< why auto ran another algorithm than its choice, when it did
};

/// Ranks 0 to n-1: the first n GPUs in node order.
std::vector<std::int64_t> first_ranks(std::int64_t n);

/// The bytes of one whole element step of `op` on `ranks` ranks, as nccl-tests counts them
/// (common.cu, getCollByteCount: count = size / 4, split among the ranks for all-gather,
/// reduce-scatter and all-to-all): 4 B, or 4 B per rank for those. A size is timed in whole
/// multiples of it.
double float_unit(network::Op op, std::int64_t ranks);

/// The bytes of one rank's send and receive buffers for `op` of `size` bytes (nccl-tests'
/// size) on `ranks` ranks, out of place as nccl-tests allocates them: all-gather receives the
/// size and sends its share, reduce-scatter the reverse; all-reduce, broadcast and
/// all-to-all hold the size twice, and so does send/recv (nccl-tests' sendrecv: every rank
/// sends to the next and receives from the previous).
double buffer_bytes_per_rank(network::Op op, std::int64_t ranks, double size);

/// Times `op` of `size` bytes over `ranks` on `fab` under `cfg` (cfg.model: analytical or
/// flow), with `algo` (automatic: the fastest of NCCL's algorithms by the analytical model for this size).
/// Returns false, with the planner's reason in `why`, when the algorithm cannot run the
/// collective on these ranks. Preconditions: 2 <= ranks.size(), every rank a GPU of `fab`,
/// size within [kMinCollectiveBytes, kMaxCollectiveBytes].
bool time_collective(const fabric::Fabric& fab, const network::NetworkConfig& cfg, network::Op op,
                     const std::vector<std::int64_t>& ranks, sim::Bytes size, network::Algorithm algo,
                     CollectiveTiming& out, std::string& why);

}  // namespace clustersim::tools
