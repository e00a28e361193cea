#include "models/network/collective.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

namespace clustersim::network {

double Schedule::bytes_sent() const {
  double total = 0.0;
  for (const Phase& p : phases) {
    double phase = 0.0;
    for (const Transfer& t : p.transfers) phase += t.bytes;
    total += phase * static_cast<double>(p.repeat);
  }
  return total;
}

std::int64_t Schedule::steps() const {
  std::int64_t n = 0;
  for (const Phase& p : phases) n += p.repeat;
  return n;
}

double bus_factor(Op op, std::int64_t n) {
  const auto nn = static_cast<double>(n);
  switch (op) {
    case Op::all_reduce: return 2.0 * (nn - 1) / nn;
    case Op::reduce_scatter:
    case Op::all_gather:
    case Op::all_to_all: return (nn - 1) / nn;
    case Op::broadcast:
    case Op::send_recv: return 1.0;
  }
  return 1.0;
}

namespace {

// NCCL's default channel buffer (NCCL_BUFFSIZE = 4 MiB) is split into NCCL_STEPS = 8 slots
// (NVIDIA/nccl src/include/device.h): 512 KiB moves per pipeline step. The cap bounds the
// step count of huge messages; beyond it chunks grow instead.
constexpr double kChunkBytes = 512.0 * 1024;

std::int64_t chunks_for(double bytes) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(bytes / kChunkBytes)), 1, 1024);
}

bool whole_nodes(const std::vector<std::int64_t>& ranks, std::int64_t g) {
  if (g <= 1 || ranks.size() % static_cast<std::size_t>(g) != 0) return false;
  // Ranks come node by node, each node's GPUs in order.
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] / g != ranks[i - i % static_cast<std::size_t>(g)] / g) return false;
    if (i % static_cast<std::size_t>(g) != static_cast<std::size_t>(ranks[i] % g)) return false;
  }
  return true;
}

// The ranks node by node: the nodes in the order they first appear, each node's ranks in
// their order.
std::vector<std::vector<std::int64_t>> by_node(const std::vector<std::int64_t>& ranks, std::int64_t g) {
  std::vector<std::vector<std::int64_t>> nodes;
  std::unordered_map<std::int64_t, std::size_t> index;  // node -> its entry of `nodes`
  std::int64_t last = -1;                               // ranks mostly come node by node
  for (const std::int64_t r : ranks) {
    if (r / g == last) {
      nodes.back().push_back(r);
      continue;
    }
    const auto [at, added] = index.try_emplace(r / g, nodes.size());
    if (added) nodes.emplace_back();
    nodes[at->second].push_back(r);
    if (at->second + 1 == nodes.size()) last = r / g;
  }
  return nodes;
}

// Two or more nodes, each holding the same number of the ranks, none twice: how SHARP
// (CollNet) takes a communicator, whole nodes or a DP group of one GPU per node under TP.
bool even_over_nodes(const std::vector<std::int64_t>& ranks, std::int64_t g) {
  if (ranks.size() < 2) return false;
  std::vector<std::int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  const auto nodes = by_node(ranks, std::max<std::int64_t>(g, 1));
  return nodes.size() >= 2 && std::all_of(nodes.begin(), nodes.end(),
                                          [&](const auto& n) { return n.size() == nodes.front().size(); });
}

// Depth-first search for `want` arc-disjoint Hamiltonian cycles of the complete directed
// graph on m vertices, each from vertex 0, cycle after cycle (a dead end backtracks into the
// earlier cycles); gives up when `budget` steps are spent.
class CycleSearch {
 public:
  CycleSearch(int m, int want, long budget)
      : m_(m), want_(want), budget_(budget), used_(static_cast<std::size_t>(m * m), false) {}
  std::vector<std::vector<int>> run() {
    if (!next_cycle()) cycles_.clear();
    return cycles_;
  }

 private:
  bool next_cycle() {
    if (static_cast<int>(cycles_.size()) == want_) return true;
    path_.assign(1, 0);
    in_path_.assign(static_cast<std::size_t>(m_), false);
    in_path_[0] = true;
    return extend();
  }
  bool extend() {
    if (--budget_ < 0) return false;
    const int u = path_.back();
    if (static_cast<int>(path_.size()) == m_) {
      if (arc(u, 0)) return false;
      arc(u, 0) = true;
      cycles_.push_back(path_);
      const std::vector<int> mine = path_;
      const std::vector<bool> mine_in = in_path_;
      if (next_cycle()) return true;
      path_ = mine;
      in_path_ = mine_in;
      cycles_.pop_back();
      arc(u, 0) = false;
      return false;
    }
    for (int v = 1; v < m_; ++v) {
      if (in_path_[static_cast<std::size_t>(v)] || arc(u, v)) continue;
      arc(u, v) = true;
      in_path_[static_cast<std::size_t>(v)] = true;
      path_.push_back(v);
      if (extend()) return true;
      path_.pop_back();
      in_path_[static_cast<std::size_t>(v)] = false;
      arc(u, v) = false;
      if (budget_ < 0) return false;
    }
    return false;
  }
  std::vector<bool>::reference arc(int u, int v) { return used_[static_cast<std::size_t>(u * m_ + v)]; }

  int m_, want_;
  long budget_;
  std::vector<bool> used_;  // arcs taken by the cycles so far and the path
  std::vector<std::vector<int>> cycles_;
  std::vector<int> path_;
  std::vector<bool> in_path_;
};

}  // namespace

std::vector<std::vector<int>> mesh_rings(int m) {
  // Per thread (sweeps plan on threads), per size: found once.
  thread_local std::unordered_map<int, std::vector<std::vector<int>>> found;
  if (m < 3 || m > 16) return {};  // the search's time grows fast beyond
  if (const auto it = found.find(m); it != found.end()) return it->second;
  std::vector<std::vector<int>> cycles;
  // m - 1 exist for every m but 4 and 6 (Tillson, "A Hamiltonian decomposition of K*_2m,
  // 2m >= 8", J. Combin. Theory B 29, 1980; Bermond and Faber for odd m), found within a
  // few hundred thousand steps up to m = 16 (on 6, m - 1 is ruled out in ~1 million).
  for (int want = m - 1; want >= 2 && cycles.empty(); --want) cycles = CycleSearch(m, want, 2'000'000).run();
  return found[m] = cycles;
}

namespace {

// Appends to `out` the cycles of mesh_rings() laid on `ranks` (vertex v: ranks[v]).
void lay_rings(const std::vector<std::vector<int>>& cycles, const std::vector<std::int64_t>& ranks,
               std::vector<std::vector<std::int64_t>>& out) {
  for (const auto& c : cycles) {
    auto& ring = out.emplace_back();
    ring.reserve(c.size());
    for (const int v : c) ring.push_back(ranks[static_cast<std::size_t>(v)]);
  }
}

// The rings of NCCL's channels over whole mesh nodes holding m ranks each (`nodes`, the
// ranks node by node, m from 3 to 16): for each of the node's arc-disjoint Hamiltonian
// cycles (mesh_rings(): 7 on 8 GPUs) and each of its m vertices e, one ring that visits
// every node along that cycle from its vertex e, and goes to the next node from the node's
// last GPU (the cycle's predecessor of e) to the next node's vertex e: relayed over the
// cycle's closing link to the sender node's vertex e, whose NIC is on the receiver's rail
// (ring_transfers(), PXN). So every ring takes its cycle's m links in each node, each link
// carries m rings, and each NIC the same number, one per cycle (7 x 8 = 56 rings on
// MI300X nodes: a GPU's 7 links and its NIC each evenly loaded). Strides coprime with m
// (the fallback below) take 4 of 7 links, and two rings share each of them: 2 x 8 MI300X
// reached 237 GB/s of bus bandwidth, where its 8 x 400 Gb/s NICs allow ~376.
// Either model routes at most 2^25 paths, a transfer taking `qps` (kMaxRoutedPaths), and
// the flow model (`flow`) runs each transfer as a flow, at most 2^20 at once
// (kMaxFlowTransfers): beyond, m / J rings per cycle when the J cycles divide m
// (each NIC still once), else one, entering at the cycle's own vertex (cycle j at vertex j),
// the links still evenly loaded but 7 of the 8 NICs used. On the flow model that is from
// 2,081 MI300X nodes on (16,648 GPUs in one ring, latency-bound at usual sizes), where the
// few large flows also collide more under ECMP hashing (16 GiB on a radix-64 fat tree: 274
// GB/s at 16,640 GPUs, 99 at 16,648); on the analytical one, from 66,577 nodes at one
// queue pair, 1,041 at 64. Empty when mesh_rings() finds no cycles for m.
std::vector<std::vector<std::int64_t>> mesh_node_rings(const std::vector<std::vector<std::int64_t>>& nodes,
                                                       std::int64_t qps, bool flow) {
  const std::size_t m = nodes.front().size();
  const std::vector<std::vector<int>> cycles = mesh_rings(static_cast<int>(m));
  if (cycles.empty()) return {};
  // Each ring: m hops and one relay per node.
  const std::size_t hops = cycles.size() * m * (m + 1) * nodes.size();
  const bool every_entry = (!flow || hops <= kMaxFlowTransfers) &&
                           hops * static_cast<std::size_t>(std::max<std::int64_t>(1, qps)) <= kMaxRoutedPaths;
  // Entries of cycle j: every vertex, or j, j + J, ... (those below m).
  const std::size_t step = every_entry ? 1 : cycles.size();
  const std::size_t per_cycle = every_entry ? m : m % cycles.size() == 0 ? m / cycles.size() : 1;
  std::vector<std::vector<std::int64_t>> out;
  out.reserve(cycles.size() * m);
  std::vector<std::size_t> next(m);  // successor of each vertex on the cycle
  for (std::size_t j = 0; j < cycles.size(); ++j) {
    const std::vector<int>& cycle = cycles[j];
    for (std::size_t i = 0; i < m; ++i) next[static_cast<std::size_t>(cycle[i])] = static_cast<std::size_t>(cycle[(i + 1) % m]);
    for (std::size_t n = 0, e = every_entry ? 0 : j % m; n < per_cycle && e < m; ++n, e += step) {
      auto& ring = out.emplace_back();
      ring.reserve(m * nodes.size());
      for (const auto& node : nodes) {
        for (std::size_t v = e, i = 0; i < m; ++i, v = next[v]) ring.push_back(node[v]);
      }
    }
  }
  return out;
}

// The rings of NCCL's channels over `ranks`. The ranks are taken node by node (in the
// order their nodes first appear, each node's in their order); with k >= 2 ranks on every
// node (k the fewest on one), k rings run side by side, ring c visiting each node's ranks
// from its c-th (mod its count), so that every ring enters each node at a different GPU and
// leaves by a different NIC, as NCCL's channels spread over the NICs. With a node holding a
// single rank (or one node per rank), one ring in the communicator's order. On a full mesh
// (`mesh`: every pair of a node's GPUs joined by its own link) rings that differ only by
// their start would take the same links: ring c steps through each node's m ranks by a
// stride coprime with m (the (c mod phi(m))-th: 1, 3, 5, 7 on 8), each stride a different
// set of links, as RCCL's rings spread over the Infinity Fabric links; on mesh nodes that
// each hold the same number of ranks, mesh_node_rings() instead. Inside one mesh node
// (every rank on it, 3 or more), the rings are instead arc-disjoint Hamiltonian cycles of
// its ranks (mesh_rings(): 7 on 8 GPUs), each link carrying one ring: the strides coprime
// with 8 take 4 of a GPU's 7 links (MI300X's ring all-reduce at 4 of its 7 links'
// bandwidth), where RCCL's rings on a fully connected MI300X node use them all (AMD,
// "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X", ROCm blogs,
// March 2025: every GPU joined to its 7 peers by its own xGMI link).
std::vector<std::vector<std::int64_t>> ring_channels(const std::vector<std::int64_t>& ranks, std::int64_t g,
                                                     bool mesh, std::int64_t qps, bool flow) {
  if (g <= 1 || ranks.empty()) return {ranks};
  if (mesh && ranks.size() >= 3 && ranks.size() <= static_cast<std::size_t>(g) &&
      std::all_of(ranks.begin(), ranks.end(), [&](std::int64_t r) { return r / g == ranks.front() / g; })) {
    const std::vector<std::vector<int>> cycles = mesh_rings(static_cast<int>(ranks.size()));
    if (!cycles.empty()) {
      std::vector<std::vector<std::int64_t>> out;
      lay_rings(cycles, ranks, out);
      return out;
    }
  }
  // The usual communicator lists its nodes in increasing order, each node's ranks together:
  // found in one pass without allocating (plans are made per size and group kind, often).
  bool ordered = true;
  std::size_t fewest = ranks.size();
  for (std::size_t i = 0, run = 0; i < ranks.size() && ordered; ++i) {
    const bool same = i > 0 && ranks[i] / g == ranks[i - 1] / g;
    if (i > 0 && !same && ranks[i] / g < ranks[i - 1] / g) ordered = false;
    run = same ? run + 1 : 1;
    if (i + 1 == ranks.size() || ranks[i + 1] / g != ranks[i] / g) fewest = std::min(fewest, run);
  }
  if (ordered && fewest < 2) return {ranks};
  const std::vector<std::vector<std::int64_t>> nodes = by_node(ranks, g);
  std::size_t k = ranks.size();
  for (const auto& node : nodes) k = std::min(k, node.size());
  if (k < 2) return {ranks};
  if (mesh && k >= 3 && std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == k; })) {
    if (std::vector<std::vector<std::int64_t>> out = mesh_node_rings(nodes, qps, flow); !out.empty()) return out;
  }
  std::vector<std::vector<std::int64_t>> out(k);
  for (std::size_t c = 0; c < k; ++c) {
    out[c].reserve(ranks.size());
    for (const auto& node : nodes) {
      const std::size_t m = node.size();
      std::size_t stride = 1;
      if (mesh) {
        std::vector<std::size_t> coprime;
        for (std::size_t s = 1; s < m; ++s) {
          if (std::gcd(s, m) == 1) coprime.push_back(s);
        }
        stride = coprime[c % coprime.size()];
      }
      for (std::size_t i = 0; i < m; ++i) out[c].push_back(node[(c + i * stride) % m]);
    }
  }
  return out;
}

// Appends to `p` one step of each ring of `rings` (rank i sends `bytes` to rank i+1; without
// the hop back to the first when `open`). With several rings, a hop between nodes that would
// change rails (the sender's local index is not the receiver's) is relayed over NVLink to
// the sender node's GPU of the receiver's local index, when that GPU is in the communicator
// (`members`, sorted), whose NIC is on the receiver's rail, so that inter-node traffic stays
// on its rail (PXN, NCCL 2.12 and later, on by default: NVIDIA, "Doubling all2all
// Performance with NVIDIA Collective Communication Library 2.12", 2022).
// One ring relays too when `relay_one_ring` (send/recv's ring of peers; a collective's one
// ring has no PXN relay, see plan()).
void ring_transfers(const std::vector<std::vector<std::int64_t>>& rings, const std::vector<std::int64_t>& members,
                    std::int64_t g, double bytes, bool open, Phase& p, bool relay_one_ring = false) {
  for (const auto& ring : rings) {
    const std::size_t n = ring.size();
    for (std::size_t i = 0; i + (open ? 1 : 0) < n; ++i) {
      const Transfer t{ring[i], ring[(i + 1) % n], bytes};
      const std::int64_t relay = g > 1 ? t.src / g * g + t.dst % g : t.src;
      if ((rings.size() > 1 || relay_one_ring) && g > 1 && t.src / g != t.dst / g && t.src % g != t.dst % g &&
          std::binary_search(members.begin(), members.end(), relay)) {
        p.transfers.push_back({t.src, relay, t.bytes, Hop::gpu, /*feeds_next=*/true});
        p.transfers.push_back({relay, t.dst, t.bytes});
      } else {
        p.transfers.push_back(t);
      }
    }
  }
}

// The parent of position r (0 <= r < n) in tree 0 or 1 of NCCL's double binary tree, -1 at
// a root (NVIDIA/nccl, src/graph/trees.cc: ncclGetBtree, ncclGetDtree). Tree 0 is an in-order
// binary tree rooted at 0 whose root has a single child: the parent of r clears r's lowest
// set bit b and sets the next one, (r ^ b) | 2b, or only clears it when that is out of range.
// Tree 1 is tree 0 mirrored (r -> n-1-r) when n is even, shifted by one position when odd,
// so that most inner positions of one tree are leaves of the other.
std::int64_t nccl_tree_parent(int tree, std::int64_t n, std::int64_t r) {
  const auto btree = [n](std::int64_t x) -> std::int64_t {
    if (x == 0) return -1;
    const std::int64_t bit = x & -x;
    const std::int64_t up = (x ^ bit) | (bit << 1);
    return up < n ? up : x ^ bit;
  };
  if (tree == 0) return btree(r);
  if (n % 2 == 1) {
    const std::int64_t u = btree((r - 1 + n) % n);
    return u < 0 ? -1 : (u + 1) % n;
  }
  const std::int64_t u = btree(n - 1 - r);
  return u < 0 ? -1 : n - 1 - u;
}

// The depth of NCCL's double binary tree over n positions: the longest path to a root in
// either tree.
std::int64_t nccl_trees_depth(std::int64_t n) {
  std::int64_t depth = 0;
  for (int tree = 0; tree < 2; ++tree) {
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t d = 0;
      for (std::int64_t at = j; (at = nccl_tree_parent(tree, n, at)) >= 0;) ++d;
      depth = std::max(depth, d);
    }
  }
  return depth;
}

bool power_of_two(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }

// All ranks in one node (one scale-up domain), none twice.
bool one_node(const std::vector<std::int64_t>& ranks, std::int64_t g) {
  if (g <= 1 || ranks.size() < 2 || ranks.size() > static_cast<std::size_t>(g)) return false;
  std::vector<std::int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  return sorted.front() / g == sorted.back() / g;
}

}  // namespace

std::vector<Algorithm> algorithms_for(Op op, const std::vector<std::int64_t>& ranks, std::int64_t gpus_per_node) {
  return algorithms_for(op, ranks, gpus_per_node, InNetwork{});
}

std::vector<Algorithm> algorithms_for(Op op, const std::vector<std::int64_t>& ranks, std::int64_t gpus_per_node,
                                      const InNetwork& in) {
  std::vector<Algorithm> out;
  switch (op) {
    case Op::all_reduce:
      out = {Algorithm::ring, Algorithm::tree};
      if (power_of_two(ranks.size())) out.push_back(Algorithm::halving_doubling);
      if (whole_nodes(ranks, gpus_per_node) && static_cast<std::int64_t>(ranks.size()) > gpus_per_node) {
        out.push_back(Algorithm::hierarchical);
      }
      if (in.nvls && one_node(ranks, gpus_per_node)) out.push_back(Algorithm::nvls);
      // SHARP on two or more nodes that each hold as many of the ranks: whole nodes, nodes
      // of one GPU, a DP group of one GPU per node under TP (it had needed whole nodes).
      if (in.sharp && even_over_nodes(ranks, gpus_per_node)) out.push_back(Algorithm::sharp);
      break;
    case Op::reduce_scatter:
    case Op::all_gather:
      out = {Algorithm::ring};
      if (power_of_two(ranks.size())) out.push_back(Algorithm::halving_doubling);
      break;
    case Op::broadcast: out = {Algorithm::ring}; break;
    case Op::all_to_all:
      out = {Algorithm::direct};
      if (whole_nodes(ranks, gpus_per_node) && static_cast<std::int64_t>(ranks.size()) > gpus_per_node) {
        out.push_back(Algorithm::hierarchical);
      }
      break;
    case Op::send_recv: out = {Algorithm::direct}; break;
  }
  return out;
}

namespace {

// Why algorithms_for() leaves `a` out: what it needs that these ranks or this network lack.
std::string why_not(Op op, Algorithm a, const InNetwork& in) {
  const bool op_has = [&] {
    switch (op) {
      case Op::all_reduce: return a != Algorithm::direct;
      case Op::reduce_scatter:
      case Op::all_gather: return a == Algorithm::ring || a == Algorithm::halving_doubling;
      case Op::broadcast: return a == Algorithm::ring;
      case Op::all_to_all: return a == Algorithm::direct || a == Algorithm::hierarchical;
      case Op::send_recv: return a == Algorithm::direct;
    }
    return false;
  }();
  if (!op_has) return fmt::format("{} has no {} algorithm", config::enum_name(op), config::enum_name(a));
  switch (a) {
    case Algorithm::halving_doubling: return "it needs a power-of-two number of ranks";
    case Algorithm::hierarchical: return "it needs every GPU of two or more nodes, each of two or more GPUs";
    case Algorithm::nvls:
      return !in.nvls ? "network.nvls is off, or the node has no NVSwitch" : "it runs inside one node";
    case Algorithm::sharp:
      return !in.sharp ? "network.sharp is off" : "it needs two or more nodes, each holding as many of the ranks";
    default: return "not for these ranks";
  }
}

}  // namespace

namespace {

// NCCL's tree all-reduce over `nodes`, the ranks node by node (by_node(); on one node, the
// chain alone): see below.
void nccl_tree_on_nodes(const std::vector<std::vector<std::int64_t>>& nodes, double S, Schedule& out) {
  // All-reduce as NCCL's tree runs it, pipelined in chunks: inside each node a chain of its
  // GPUs over NVLink, which every byte climbs (reduce) and comes back down (broadcast), so
  // that a GPU inside the chain sends S to its parent and S to its child: 2S (NCCL's
  // src/graph/tuning.cc converts a tree's bus bandwidth to algorithm bandwidth by 0.5 for
  // that reason; a reduce-scatter and all-gather inside the node, 2(g-1)/g S, had put
  // 2 x 8 H100 above the NVLink rate that a one-node ring reaches); and across nodes, rail
  // by rail, NCCL's double binary tree over the nodes (nccl_tree_parent) on the rail's
  // shard S/k, each tree carrying half: every tree edge S/2k up (reduce) and S/2k down
  // (broadcast). The rails are NCCL's channels: k, the fewest ranks a node holds (g on whole
  // nodes of g GPUs, 1 for a DP group of one GPU per node), rail i on each node's i-th rank,
  // as ring_channels() spreads its rings, so that a last node holding 7 of 8 GPUs costs the
  // tree what it costs the ring, a rail (it had fallen back to a binary tree over the ranks
  // themselves, whose node-crossing edges each took one GPU's NIC: 18 times slower on 127
  // GPUs than on 128). One phase whose R steps spread those bytes evenly:
  // R = 2(m-1) + 2d + C - 1, the longest chain's steps (m ranks), the trees' depth d up and
  // down, and the pipeline's C - 1 further chunks (C = chunks_for(S/2k)). The stages overlap
  // on their different links: time R alpha + max(2S / B_nvlink, (NIC bytes of the busiest
  // node) / B_nic). A node sends S/k per rail GPU through its NIC on 2 nodes (as a ring
  // would: 2(N-1)/N S/k), the busiest one 2 S/k from 4 on (an inner node of one tree,
  // sending its parent and two children, and a leaf of the other), so beyond 2 nodes the
  // ring is faster at large sizes, as NCCL's choices show.
  // The pipeline's fill pays each step's latency along the data's path: the 2(m-1) chain
  // steps an NVLink hop's, the 2d tree steps a node-to-node path's (NCCL's tree latency,
  // 2((g-1) intraLat + log2(N) interLat), src/graph/tuning.cc). The transfers weigh the mean
  // latency of a step by those counts (Transfer::latency_weight); every step had paid the
  // network's. On one node (NCCL's tree inside a node is the chain) there are no tree steps;
  // a node of one rank has no chain.
  std::size_t fewest = nodes.front().size();
  std::size_t most = 0;
  for (const auto& node : nodes) {
    fewest = std::min(fewest, node.size());
    most = std::max(most, node.size());
  }
  const auto count = static_cast<std::int64_t>(nodes.size());
  const auto k = static_cast<std::int64_t>(fewest);
  const auto m = static_cast<std::int64_t>(most);
  const auto kd = static_cast<double>(k);
  const std::int64_t depth = nccl_trees_depth(count);
  const std::int64_t steps = 2 * (m - 1) + 2 * depth + chunks_for(S / kd / 2) - 1;
  const auto rd = static_cast<double>(steps);
  Phase p;
  p.repeat = steps;
  p.streamed = chunks_for(S / kd / 2) - 1;
  p.latency_along = true;
  // A chain's inner GPUs send 2S: S down the chain (the reduction, to the GPU before) and S
  // up it (the broadcast, to the GPU after); on 2 GPUs both are its ends and send S. The
  // chain is closed into a cycle, each GPU sending S to each neighbour, which loads every
  // GPU's links into an NVSwitch as the chain's inner ones (2S each way) and, on a full mesh
  // (MI300X), each point-to-point link with S, as the chain's two directions do. (One 2S
  // transfer to the next GPU put both directions' bytes on one mesh link: twice the time.)
  for (const auto& node : nodes) {
    const std::size_t s = node.size();
    if (s < 2) continue;
    for (std::size_t i = 0; i < s; ++i) {
      p.transfers.push_back({node[i], node[(i + 1) % s], S / rd});
      if (s > 2) p.transfers.push_back({node[i], node[(i + s - 1) % s], S / rd});
    }
  }
  const std::size_t chain = p.transfers.size();
  const double chain_weight = static_cast<double>(2 * (m - 1)) / static_cast<double>(std::max<std::size_t>(1, chain));
  for (std::size_t i = 0; i < chain; ++i) p.transfers[i].latency_weight = chain_weight;
  const double edge = S / kd / 2 / rd;
  for (int tree = 0; tree < 2; ++tree) {
    for (std::int64_t child = 0; child < count; ++child) {
      const std::int64_t parent = nccl_tree_parent(tree, count, child);
      if (parent < 0) continue;
      const auto& from = nodes[static_cast<std::size_t>(child)];
      const auto& to = nodes[static_cast<std::size_t>(parent)];
      for (std::size_t i = 0; i < fewest; ++i) {
        p.transfers.push_back({from[i], to[i], edge});
        p.transfers.push_back({to[i], from[i], edge});
      }
    }
  }
  const double tree_weight = static_cast<double>(2 * depth) / static_cast<double>(std::max<std::size_t>(1, p.transfers.size() - chain));
  for (std::size_t i = chain; i < p.transfers.size(); ++i) p.transfers[i].latency_weight = tree_weight;
  out.phases.push_back(std::move(p));
}

}  // namespace

bool plan(Op op, Algorithm algorithm, const std::vector<std::int64_t>& ranks, sim::Bytes size,
          std::int64_t gpus_per_node, Schedule& out, std::string& why) {
  return plan(op, algorithm, ranks, size, gpus_per_node, InNetwork{}, out, why);
}

bool plan(Op op, Algorithm algorithm, const std::vector<std::int64_t>& ranks, sim::Bytes size,
          std::int64_t gpus_per_node, const InNetwork& in, Schedule& out, std::string& why) {
  out = Schedule{op, algorithm, {}, size.value()};
  const std::size_t n = ranks.size();
  const double S = size.value();
  const auto nn = static_cast<double>(n);
  const auto allowed = algorithms_for(op, ranks, gpus_per_node, in);
  if (std::find(allowed.begin(), allowed.end(), algorithm) == allowed.end()) {
    std::vector<std::string_view> names;
    for (Algorithm a : allowed) names.push_back(config::enum_name(a));
    why = fmt::format("{} cannot run {} on {} ranks ({}); it can run {}", config::enum_name(algorithm),
                      config::enum_name(op), n, why_not(op, algorithm, in), fmt::join(names, ", "));
    return false;
  }
  if (n < 2) {
    why = "a collective needs at least 2 ranks";
    return false;
  }
  const auto sn = static_cast<std::int64_t>(n);
  switch (algorithm) {
    case Algorithm::ring: {
      // NCCL's channels (ring_channels(): k rings side by side on nodes that each hold k or
      // more ranks, each ring carrying S/k), inter-node hops kept on their rail (PXN).
      const std::vector<std::vector<std::int64_t>> rings = ring_channels(ranks, gpus_per_node, in.mesh, in.qps, in.flow);
      const auto k = static_cast<double>(rings.size());
      std::vector<std::int64_t> members;  // for PXN relays, which one ring never has
      if (rings.size() > 1) {
        members = ranks;
        std::sort(members.begin(), members.end());
      }
      Phase p;
      if (op == Op::broadcast) {
        // Each ring, turned to start at the root (rank 0), pipelines S/k from it in C
        // chunks: n-2+C steps, the last C-1 streamed (Phase::streamed). Each edge carries
        // S/k once, so each step moves S/k/(n-2+C) on every edge (the fill and drain
        // steps' idle edges are spread over the steps rather than charged extra): time
        // (n-1) alpha + S/(k B), the pipelined broadcast's cost. No edge into the root.
        const std::int64_t chunks = chunks_for(S / k);
        const std::int64_t steps = sn - 2 + chunks;
        std::vector<std::vector<std::int64_t>> from_root = rings;
        for (auto& ring : from_root) std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), ranks[0]), ring.end());
        ring_transfers(from_root, members, gpus_per_node, S / k / static_cast<double>(steps), true, p);
        p.repeat = steps;
        p.streamed = chunks - 1;
      } else {
        ring_transfers(rings, members, gpus_per_node, S / nn / k, false, p);
        p.repeat = op == Op::all_reduce ? 2 * (sn - 1) : sn - 1;
      }
      p.latency_along = true;
      out.phases.push_back(std::move(p));
      break;
    }
    case Algorithm::tree: {
      // NCCL's tree (NCCL_ALGO=Tree, all-reduce only) runs a chain inside each node and
      // the double binary tree across nodes on every channel's rail (nccl_tree_on_nodes();
      // src/graph/trees.cc builds binary trees across nodes only: inside one node, the chain
      // of its GPUs, 2(g-1) NVLink steps, not a binary tree's 2 log2 g). A tree over the
      // ranks themselves, right for one rank per node, would send each node's share through
      // one NIC: 88 GB/s busbw on 2 DGX, where the ring reaches 376.
      nccl_tree_on_nodes(by_node(ranks, std::max<std::int64_t>(gpus_per_node, 1)), S, out);
      break;
    }
    case Algorithm::halving_doubling: {
      // Reduce-scatter by recursive halving: at step k, partners 2^k apart exchange half of
      // what they still hold; the all-gather mirrors it. Nearest partners first, as MPICH's
      // Rabenseifner all-reduce (src/mpi/coll/allreduce, reduce_scatter_allgather: mask from
      // 1 up): with ranks in node order the largest halves stay inside the node, and only
      // the last, smallest steps cross the network (the other order sent S/2 over the NICs).
      std::vector<Phase> rs;
      double bytes = S / 2;
      for (std::size_t dist = 1; dist < n; dist *= 2) {
        Phase p;
        for (std::size_t i = 0; i < n; ++i) p.transfers.push_back({ranks[i], ranks[i ^ dist], bytes});
        rs.push_back(std::move(p));
        bytes /= 2;
      }
      if (op == Op::reduce_scatter || op == Op::all_reduce) {
        for (const Phase& p : rs) out.phases.push_back(p);
      }
      if (op == Op::all_gather || op == Op::all_reduce) {
        for (auto it = rs.rbegin(); it != rs.rend(); ++it) out.phases.push_back(*it);
      }
      break;
    }
    case Algorithm::hierarchical: {
      const std::int64_t g = gpus_per_node;
      const std::int64_t nodes = sn / g;
      if (op == Op::all_to_all) {
        // Rank (a, i) holds S/n for every rank (b, j). Inside each node, (a, i) hands (a, j)
        // everything bound for local rank j anywhere: nodes x S/n. Then, rail by rail,
        // (a, j) sends (b, j) what its node has for it: g x S/n. Data for the own node
        // arrives over NVLink alone. The two legs are NCCL's PXN relay, which forwards each
        // chunk as it arrives: one pipelined phase (Phase::pipelined), NVLink and the NICs
        // busy at once, its time the slower leg's plus the largest latency (the NVLink hop's
        // latency before a network one, under a microsecond, is not added). The legs as two
        // phases, one after the other, added the NVLink leg's time: 22% slow on 16 H100
        // at 1 GiB.
        if (sn * (nodes - 1 + g - 1) > (std::int64_t{1} << 24)) {
          why = fmt::format("hierarchical all-to-all plans n(nodes-1) + n(g-1) = {} transfers; at most 2^24 are supported",
                            sn * (nodes - 1 + g - 1));
          return false;
        }
        Phase intra;
        intra.pipelined = true;
        Phase inter;
        for (std::int64_t a = 0; a < nodes; ++a) {
          for (std::int64_t i = 0; i < g; ++i) {
            const std::int64_t from = ranks[static_cast<std::size_t>(a * g + i)];
            for (std::int64_t j = 0; j < g; ++j) {
              if (j != i) {
                intra.transfers.push_back({from, ranks[static_cast<std::size_t>(a * g + j)],
                                           static_cast<double>(nodes) * S / nn});
              }
            }
            for (std::int64_t b = 0; b < nodes; ++b) {
              if (b != a) {
                inter.transfers.push_back({from, ranks[static_cast<std::size_t>(b * g + i)],
                                           static_cast<double>(g) * S / nn});
              }
            }
          }
        }
        intra.transfers.insert(intra.transfers.end(), inter.transfers.begin(), inter.transfers.end());
        out.phases.push_back(std::move(intra));
        break;
      }
      // All-reduce in three stages, one after the other: a ring reduce-scatter inside each
      // node over NVLink (g-1 steps of S/g), a ring all-reduce of each GPU's reduced shard
      // S/g across the nodes, rail by rail (2(nodes-1) steps of S/(g nodes)), and a ring
      // all-gather inside each node (g-1 steps of S/g): a GPU sends 2(g-1)/g S over NVLink
      // and 2(nodes-1)/nodes S/g through its NIC, and the stages do not overlap (Horovod's
      // hierarchical all-reduce; NCCL has none, so auto never picks it for an all-reduce).
      std::vector<std::vector<std::int64_t>> in_node(static_cast<std::size_t>(nodes));
      std::vector<std::vector<std::int64_t>> on_rail(static_cast<std::size_t>(g));
      for (std::int64_t a = 0; a < nodes; ++a) {
        for (std::int64_t i = 0; i < g; ++i) {
          const std::int64_t r = ranks[static_cast<std::size_t>(a * g + i)];
          in_node[static_cast<std::size_t>(a)].push_back(r);
          on_rail[static_cast<std::size_t>(i)].push_back(r);
        }
      }
      const auto gd = static_cast<double>(g);
      // On a full-mesh node, the node's stages run on its disjoint rings (mesh_rings(), as a
      // ring collective inside one node does), each carrying its share: one ring took one of
      // an MI300X's 7 links (hierarchical all-reduce at 58 GB/s busbw on 2 nodes).
      std::vector<std::vector<std::int64_t>> node_rings = in_node;
      if (in.mesh && g >= 3) {
        if (const std::vector<std::vector<int>> cycles = mesh_rings(static_cast<int>(g)); !cycles.empty()) {
          node_rings.clear();
          for (const auto& node : in_node) lay_rings(cycles, node, node_rings);
        }
      }
      const double per_node = static_cast<double>(node_rings.size()) / static_cast<double>(nodes);
      Phase inside;
      ring_transfers(node_rings, {}, g, S / gd / per_node, false, inside);
      inside.repeat = g - 1;
      inside.latency_along = true;
      Phase across;
      ring_transfers(on_rail, {}, g, S / gd / static_cast<double>(nodes), false, across);
      across.repeat = 2 * (nodes - 1);
      across.latency_along = true;
      out.phases.push_back(inside);
      out.phases.push_back(std::move(across));
      out.phases.push_back(std::move(inside));
      break;
    }
    case Algorithm::direct: {
      Phase p;
      if (op == Op::send_recv && n == 2) {
        // A pair: the first rank hands S to the second, as pipeline stages hand activations.
        p.transfers.push_back({ranks[0], ranks[1], S});
      } else if (op == Op::send_recv) {
        // More ranks: every rank sends S to the next and receives S from the previous, all at
        // once, as nccl-tests' sendrecv_perf (peer (rank + 1) mod n). On 2 ranks that test
        // sends both ways at once, which full-duplex links carry in the time of one way.
        // A send to another node on another rail goes over NVLink to the sender node's GPU on
        // the receiver's rail, when that GPU is a rank too, and out of its NIC (PXN: NCCL's
        // NCCL_P2P_PXN_LEVEL defaults to 2, always for send/receive; it crossed the spine,
        // where ECMP collisions took a 1 GiB ring of sends on 64 H100 to 12-16 GB/s).
        std::vector<std::int64_t> members(ranks.begin(), ranks.end());
        std::sort(members.begin(), members.end());
        ring_transfers({std::vector<std::int64_t>(ranks.begin(), ranks.end())}, members, gpus_per_node, S, false, p,
                       /*relay_one_ring=*/true);
      } else {
        if (n > 4096) {
          why = fmt::format("direct all-to-all plans n(n-1) transfers; {} ranks is beyond the 4,096 supported", n);
          return false;
        }
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (i != j) p.transfers.push_back({ranks[i], ranks[j], S / nn});
          }
        }
      }
      out.phases.push_back(std::move(p));
      break;
    }
    case Algorithm::nvls: {
      // Every rank sends its S into the switch and receives the reduced S from it, in one
      // pipelined phase (see the header).
      Phase p;
      p.pipelined = true;
      for (std::int64_t r : ranks) {
        p.transfers.push_back({r, r, S, Hop::scaleup_in});
        p.transfers.push_back({r, r, S, Hop::scaleup_out});
      }
      out.phases.push_back(std::move(p));
      break;
    }
    case Algorithm::sharp: {
      // NCCL's CollNet Direct as one pipelined phase (see the header): inside each node a
      // reduce-scatter and an all-gather over NVLink (S/g each way between every ordered
      // pair: one transfer of 2S/g), and each GPU's reduced slice S/g into the aggregation
      // tree and back. The hop into the tree names the same local rank on the last node (on
      // node 0 for the last node itself): its route is where the stream loads the fabric;
      // the climb up the tree and the descent cost network.sharp_latency.
      // With k of the ranks on each node (g on whole nodes, 1 for a DP group under TP), the
      // slices are S/k.
      const std::vector<std::vector<std::int64_t>> nodes = by_node(ranks, std::max<std::int64_t>(gpus_per_node, 1));
      const std::size_t k = nodes.front().size();
      const double slice = S / static_cast<double>(k);
      Phase p;
      p.pipelined = true;
      for (std::size_t a = 0; a < nodes.size(); ++a) {
        const std::vector<std::int64_t>& far = nodes[a + 1 == nodes.size() ? 0 : nodes.size() - 1];
        for (std::size_t i = 0; i < k; ++i) {
          const std::int64_t me = nodes[a][i];
          for (std::size_t j = 0; j < k; ++j) {
            if (j != i) p.transfers.push_back({me, nodes[a][j], 2 * slice});
          }
          p.transfers.push_back({me, far[i], slice, Hop::fabric_in});
          p.transfers.push_back({me, me, slice, Hop::fabric_out});
        }
      }
      out.phases.push_back(std::move(p));
      break;
    }
    case Algorithm::automatic: why = "automatic is resolved by the network model"; return false;
  }
  return true;
}

}  // namespace clustersim::network
