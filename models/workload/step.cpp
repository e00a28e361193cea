#include "models/workload/step.hpp"

#include <algorithm>
#include <limits>
#include <array>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "models/network/network.hpp"
#include "sim/check.hpp"
#include "sim/engine.hpp"

namespace clustersim::workload {

namespace {

double as_double(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

std::vector<std::vector<PipelineOp>> pipeline_order(std::int64_t pp, std::int64_t v, std::int64_t M) {
  CLUSTERSIM_CHECK(pp >= 1 && v >= 1 && M >= 1, "a pipeline has stages and micro-batches");
  CLUSTERSIM_CHECK(v == 1 || M % pp == 0, "the interleaved schedule needs micro-batches in groups of pp");
  std::vector<std::vector<PipelineOp>> out(static_cast<std::size_t>(pp));
  const std::int64_t total = M * v;
  for (std::int64_t s = 0; s < pp; ++s) {
    const auto op_at = [&](std::int64_t k, bool forward) {
      if (v == 1) return PipelineOp{forward, k, s};
      const std::int64_t in_group = k % (pp * v);
      std::int64_t chunk_v = in_group / pp;
      if (!forward) chunk_v = v - 1 - chunk_v;
      const std::int64_t micro = (k / (pp * v)) * pp + k % pp;
      return PipelineOp{forward, micro, chunk_v * pp + s};
    };
    const std::int64_t warmup =
        std::min(total, v == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (v - 1) * pp);
    auto& list = out[static_cast<std::size_t>(s)];
    list.reserve(static_cast<std::size_t>(2 * total));
    for (std::int64_t k = 0; k < warmup; ++k) list.push_back(op_at(k, true));
    for (std::int64_t i = 0; i < total - warmup; ++i) {
      list.push_back(op_at(warmup + i, true));
      list.push_back(op_at(i, false));
    }
    for (std::int64_t i = total - warmup; i < total; ++i) list.push_back(op_at(i, false));
  }
  return out;
}

namespace {

double weight_bytes(const JobConfig& job) {
  return (job.precision == compute::Dtype::fp32 || job.precision == compute::Dtype::tf32) ? 4.0 : 2.0;
}

/// ZeRO-3's working set while chunk `c` runs: the parameters held gathered at once, per GPU
/// (before sharding), the most over the chunk. ZeRO-3 and PyTorch FSDP gather one unit at a
/// time (here a transformer layer; the embedding and the output layer are units of their
/// own) and free it after use, with the next unit's gather prefetched so that it overlaps
/// the current unit's compute: with FSDP's prefetching (forward, and the default
/// backward_prefetch BACKWARD_PRE) the next unit's all-gather output is allocated while the
/// current one is in use, and no more (Zhao et al., "PyTorch FSDP: Experiences on Scaling
/// Fully Sharded Data Parallel", VLDB 2023; PyTorch's "FSDP Notes", prefetch nuances;
/// Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
/// Models", SC'20, section 5.3: parameters are gathered layer by layer and discarded after
/// use). So: the largest two neighbouring units, in the order the passes run them (the
/// chunk's units are listed in backward order; forward runs them in reverse, the same
/// neighbours). A unit is gathered into a buffer of its full size, beside the rank's own
/// shard (FSDP's unsharded flat parameter; DeepSpeed's full param.data beside ds_tensor).
/// Only what is sharded is gathered: the dense parameters when dp x cp > 1
/// (`dense_sharded`), the experts when their expert-data-parallel group has more than one
/// rank (`experts_sharded`). O(units).
double zero3_gathered_params(const ChunkCost& c, bool dense_sharded, bool experts_sharded) {
  const std::size_t n = c.layer_gradient_params.size();
  const auto unit = [&](std::size_t i) {
    return (dense_sharded ? c.layer_gradient_params[i] : 0.0) +
           (experts_sharded ? c.layer_expert_gradient_params[i] : 0.0);
  };
  double most = 0.0;
  for (std::size_t i = 0; i < n; ++i) most = std::max(most, unit(i) + (i + 1 < n ? unit(i + 1) : 0.0));
  return most;
}

}  // namespace

MemoryBreakdown memory_per_gpu(const JobConfig& job, const std::vector<ChunkCost>& chunks,
                               const std::vector<std::vector<PipelineOp>>& order) {
  const Parallelism& p = job.parallelism;
  // ZeRO shards over the data- and context-parallel ranks; experts (ep > 1) over the
  // expert-data-parallel ranks, ep times fewer.
  const double dp = as_double(p.dp * p.cp);
  const double edp = dp / as_double(p.ep);
  const double wb = weight_bytes(job);
  const double gb = compute::dtype_bytes(job.grad_dtype);
  // Adam's m and v (8 bytes); with half-precision weights the fp32 master copy (4 more), and
  // with gradients below fp32 an fp32 copy of them for the update (4 more): Megatron-Core's
  // distributed optimizer table (docs, "Distributed Optimizer"): fp16 parameters and
  // gradients 4 + 16/d bytes per parameter, bf16 parameters with fp32 gradients 6 + 12/d,
  // fp32 both 8 + 8/d.
  const double ob = (wb == 4.0 ? 8.0 : 12.0) + (gb < 4.0 ? 4.0 : 0.0);
  MemoryBreakdown worst;
  for (std::int64_t s = 0; s < p.pp; ++s) {
    double params = 0.0, experts = 0.0, gathered = 0.0;
    for (std::int64_t c = s; c < p.pp * p.virtual_stages; c += p.pp) {
      const ChunkCost& cc = chunks[static_cast<std::size_t>(c)];
      params += cc.parameters - cc.expert_parameters;
      experts += cc.expert_parameters;
      // A stage runs one chunk's pass at a time: the largest working set of its chunks.
      gathered = std::max(gathered, zero3_gathered_params(cc, dp > 1.0, edp > 1.0));
    }
    // Parameters held per GPU after sharding at ZeRO stage z >= k.
    const auto sharded = [&](std::int64_t k) { return p.zero >= k ? params / dp + experts / edp : params + experts; };
    MemoryBreakdown m;
    m.stage = s;
    // ZeRO-3 also holds the units it has gathered (the one in use and the next, prefetched).
    m.weights = sharded(3) * wb + (p.zero >= 3 ? gathered * wb : 0.0);
    m.gradients = sharded(2) * gb;
    m.optimizer = sharded(1) * ob;
    double held = 0.0;
    for (const PipelineOp& op : order[static_cast<std::size_t>(s)]) {
      const ChunkCost& cc = chunks[static_cast<std::size_t>(op.chunk)];
      // A backward holds the micro-batch's kept activations and what recomputation rebuilds.
      if (!op.forward) m.activations = std::max(m.activations, held + cc.activation_working_bytes);
      held += op.forward ? cc.activation_bytes : -cc.activation_bytes;
      m.activations = std::max(m.activations, held);
    }
    m.total = m.weights + m.gradients + m.optimizer + m.activations;
    if (m.total > worst.total) worst = m;
  }
  return worst;
}

namespace {

using network::Op;

struct Key {
  Group group;
  Op op;
  double bytes;
  std::int64_t boundary;  // PP: the sending stage; else -1
  friend auto operator<=>(const Key&, const Key&) = default;
};

/// The job's communicators on the fabric and the time of each distinct collective, every
/// group of the kind running at once.
class CommTimes {
 public:
  CommTimes(const StepInputs& in) : in_(in), p_(in.job->parallelism), timer_(*in.fabric, *in.network) {
    std::int64_t stride = 1;
    for (const Axis a : p_.order) {
      stride_[static_cast<std::size_t>(a)] = stride;
      stride *= degree(a);
    }
  }

  /// GPU of the rank with these coordinates.
  [[nodiscard]] std::int64_t gpu(std::int64_t t, std::int64_t c, std::int64_t s, std::int64_t d) const {
    return in_.first_gpu + t * stride_[0] + c * stride_[1] + s * stride_[2] + d * stride_[3];
  }

  double time(Group g, Op op, double bytes, std::int64_t boundary = -1) {
    const Key key{g, op, bytes, boundary};
    const auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const Groups& groups = groups_for(g, boundary);
    const sim::Bytes size = sim::Bytes::of(std::max(1.0, bytes));
    const network::Algorithm algo = op == Op::send_recv ? network::Algorithm::direct : choose(op, groups, size);
    network::Schedule& merged = merged_for(g, op, algo, boundary, groups, size);
    // Each link's bytes, for the busiest link of a row of timings() (as `collective` finds it).
    network::LinkLoad load;
    network::LinkLoad* const want = in_.want_links && boundary <= 0 ? &load : nullptr;
    const bool flow = in_.network->model == network::Model::flow;
    const sim::Time t = flow ? network::flow_time(*in_.fabric, *in_.network, merged, want) : timer_.time(merged, want);
    const double seconds = t.seconds();
    cache_.emplace(key, seconds);
    if (boundary <= 0) {
      CommTiming row;
      row.group = g;
      row.op = op;
      row.algorithm = algo;
      row.bytes = bytes;
      row.group_size = static_cast<std::int64_t>(groups.ranks[0].size());
      row.groups = groups.count;
      row.time_s = seconds;
      if (want && t > sim::Time::zero()) {
        const auto hottest = network::hottest_links(*in_.fabric, *in_.network, load, t, 1);
        if (!hottest.empty() && hottest.front().second > 0.0) {
          row.busiest_link = fabric::describe_link(*in_.fabric, hottest.front().first);
          row.busiest_utilisation = hottest.front().second;
        }
      }
      timings_.push_back(std::move(row));
    }
    return seconds;
  }

  [[nodiscard]] const std::vector<CommTiming>& timings() const { return timings_; }

 private:
  [[nodiscard]] std::int64_t degree(Axis a) const {
    switch (a) {
      case Axis::tp: return p_.tp;
      case Axis::cp: return p_.cp;
      case Axis::pp: return p_.pp;
      case Axis::dp: return p_.dp;
    }
    return 1;
  }

  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups_of(Group g, std::int64_t boundary) const {
    std::vector<std::vector<std::int64_t>> out;
    for (std::int64_t d = 0; d < p_.dp; ++d) {
      for (std::int64_t s = 0; s < p_.pp; ++s) {
        for (std::int64_t c = 0; c < p_.cp; ++c) {
          for (std::int64_t t = 0; t < p_.tp; ++t) {
            std::vector<std::int64_t> ranks;
            switch (g) {
              case Group::tp:
                if (t != 0) continue;
                for (std::int64_t i = 0; i < p_.tp; ++i) ranks.push_back(gpu(i, c, s, d));
                break;
              case Group::cp:
                if (c != 0) continue;
                for (std::int64_t i = 0; i < p_.cp; ++i) ranks.push_back(gpu(t, i, s, d));
                break;
              case Group::dp:  // gradients are reduced over the data- and context-parallel ranks
                if (d != 0 || c != 0) continue;
                for (std::int64_t i = 0; i < p_.dp; ++i) {
                  for (std::int64_t k = 0; k < p_.cp; ++k) ranks.push_back(gpu(t, k, s, i));
                }
                break;
              case Group::edp:  // the ranks holding the same experts: every ep-th replica
                if (d >= p_.ep || c != 0) continue;
                for (std::int64_t i = d; i < p_.dp; i += p_.ep) {
                  for (std::int64_t k = 0; k < p_.cp; ++k) ranks.push_back(gpu(t, k, s, i));
                }
                break;
              case Group::ep:
                if (d % p_.ep != 0) continue;
                for (std::int64_t i = 0; i < p_.ep; ++i) ranks.push_back(gpu(t, c, s, d + i));
                break;
              case Group::pp:
                if (s != boundary) continue;
                ranks = {gpu(t, c, s, d), gpu(t, c, (s + 1) % p_.pp, d)};
                break;
            }
            out.push_back(std::move(ranks));
          }
        }
      }
    }
    return out;
  }

  /// The communicators of one kind (PP: of one boundary), all at once.
  struct Groups {
    std::vector<std::vector<std::int64_t>> ranks;  // one when they are all inside nodes
    std::int64_t count = 0;                        // communicators of the kind
    std::vector<std::size_t> shapes{0};            // one group of each shape on the nodes, in order
  };

  /// How a group lies on the nodes: per rank, its node's ordinal (in order of first
  /// appearance) and its offset from the first rank's GPU index, packed as ordinal x gpn +
  /// offset. A plan depends on the ranks only through their number and this shape
  /// (network::plan), so groups of one shape plan alike.
  [[nodiscard]] static std::vector<std::int64_t> shape_of(const std::vector<std::int64_t>& ranks, std::int64_t gpn) {
    std::vector<std::int64_t> out(ranks.size());
    const bool sorted = std::is_sorted(ranks.begin(), ranks.end());
    std::map<std::int64_t, std::int64_t> ordinals;  // node -> ordinal, when ranks come back to a node
    std::int64_t ordinal = 0;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const std::int64_t node = ranks[i] / gpn;
      if (sorted) {
        ordinal += i > 0 && node != ranks[i - 1] / gpn;
      } else {
        ordinal = ordinals.try_emplace(node, std::ssize(ordinals)).first->second;
      }
      out[i] = ordinal * gpn + (ranks[i] % gpn - ranks[0] % gpn + gpn) % gpn;
    }
    return out;
  }

  /// The algorithm of a kind's collective, as NCCL's tuner picks it (network::choose_algorithm):
  /// the groups of one kind run one algorithm, as one schedule. When they all lie on the nodes
  /// alike, the first group's choice is every group's; when they do not (a job that starts
  /// mid-node, a TP degree that does not divide the node), it must plan for one group of each
  /// shape (NVLS only where each is inside a node), and the slowest of them decides.
  network::Algorithm choose(Op op, const Groups& groups, sim::Bytes size) {
    std::vector<const std::vector<std::int64_t>*> communicators;
    for (const std::size_t k : groups.shapes) communicators.push_back(&groups.ranks[k]);
    return network::choose_algorithm(timer_, op, communicators, size);
  }

  const Groups& groups_for(Group g, std::int64_t boundary) {
    const auto key = std::make_pair(g, boundary);
    auto it = groups_.find(key);
    if (it != groups_.end()) return it->second;
    Groups out;
    out.ranks = groups_of(g, boundary);
    out.count = static_cast<std::int64_t>(out.ranks.size());
    // Groups inside one node each use only their own GPUs' scale-up links, so they do not
    // meet: all of them at once take as long as one (every node is the same).
    const std::int64_t gpn = in_.fabric->gpus_per_node;
    const bool intra_node = std::all_of(out.ranks.begin(), out.ranks.end(), [&](const std::vector<std::int64_t>& ranks) {
      return std::all_of(ranks.begin(), ranks.end(), [&](std::int64_t r) { return r / gpn == ranks.front() / gpn; });
    });
    if (intra_node) {
      out.ranks.resize(1);
    } else {
      std::map<std::vector<std::int64_t>, std::size_t> seen;
      for (std::size_t k = 0; k < out.ranks.size(); ++k) {
        if (seen.try_emplace(shape_of(out.ranks[k], gpn), k).second && k > 0) out.shapes.push_back(k);
      }
    }
    return groups_.emplace(key, std::move(out)).first->second;
  }

  /// The schedule of every group's collective at once: their plans side by side, phase by
  /// phase. It is planned over all groups once per (kind, op, algorithm); at another size
  /// only the first group is planned again and its bytes and repeats are copied to the
  /// others. That is exact when the groups plan alike (the same transfers and bytes, phase
  /// by phase): a plan depends on the ranks only through their number and node structure
  /// (network::plan), which the groups of one kind share when the job starts on a node
  /// boundary. A job that starts mid-node can have groups of one kind that differ (a TP
  /// group across two nodes beside one inside a node, which runs one ring channel per GPU):
  /// their schedule is merged as planned, and planned again, all groups, at every size.
  /// Their phases may repeat differently (a tree over a node's 6 GPUs and 2 of the next,
  /// whose chain is shorter and rails fewer than a tree inside one node: see
  /// network::plan): a merged phase takes the most repeats and the longest fill of its
  /// groups, each transfer keeping its bytes spread over those steps, so its transfers last
  /// about as long as its slowest group's; its steps' latency is the mean over all the
  /// groups' hops (Phase::latency_along), as merged rings pool theirs, so many groups inside
  /// nodes dilute one whose tree crosses the fabric (LIMITATION: a latency-bound collective
  /// of such a job reads somewhat fast). Groups whose phase counts differ cannot run as one
  /// schedule: an internal error, as no algorithm plans so today.
  network::Schedule& merged_for(Group g, Op op, network::Algorithm algo, std::int64_t boundary, const Groups& groups,
                                sim::Bytes size) {
    const std::int64_t gpn = in_.fabric->gpus_per_node;
    const network::InNetwork in_net = network::in_network(*in_.fabric, *in_.network);
    std::string why;
    network::Schedule first;
    CLUSTERSIM_CHECK(network::plan(op, algo, groups.ranks[0], size, gpn, in_net, first, why), why);
    const auto key = std::make_tuple(g, op, algo, boundary);
    auto it = merged_.find(key);
    if (it != merged_.end() && it->second.alike) {
      network::Schedule& merged = it->second.schedule;
      merged.size = first.size;
      CLUSTERSIM_CHECK(first.phases.size() == merged.phases.size(), "a plan's shape depends only on its ranks");
      for (std::size_t i = 0; i < first.phases.size(); ++i) {
        const auto& one = first.phases[i].transfers;
        auto& all = merged.phases[i].transfers;
        CLUSTERSIM_CHECK(one.size() * groups.ranks.size() == all.size(), "a plan's shape depends only on its ranks");
        merged.phases[i].repeat = first.phases[i].repeat;
        merged.phases[i].streamed = first.phases[i].streamed;
        for (std::size_t k = 0; k < all.size(); ++k) all[k].bytes = one[k % one.size()].bytes;
      }
      return merged;
    }
    std::vector<network::Schedule> plans;
    plans.reserve(groups.ranks.size());
    plans.push_back(first);
    bool alike = true;
    for (std::size_t k = 1; k < groups.ranks.size(); ++k) {
      network::Schedule s;
      CLUSTERSIM_CHECK(network::plan(op, algo, groups.ranks[k], size, gpn, in_net, s, why), why);
      CLUSTERSIM_CHECK(s.phases.size() == first.phases.size(), "the groups of one kind plan as many phases");
      for (std::size_t i = 0; i < s.phases.size(); ++i) {
        const network::Phase& mine = s.phases[i];
        const network::Phase& ref = first.phases[i];
        if (mine.repeat != ref.repeat || mine.streamed != ref.streamed || mine.transfers.size() != ref.transfers.size()) {
          alike = false;
        } else {
          for (std::size_t j = 0; j < mine.transfers.size(); ++j) alike = alike && mine.transfers[j].bytes == ref.transfers[j].bytes;
        }
      }
      plans.push_back(std::move(s));
    }
    Merged merged{first, alike};
    for (std::size_t i = 0; i < first.phases.size(); ++i) {
      network::Phase& phase = merged.schedule.phases[i];
      std::int64_t repeat = 0;
      std::int64_t fill = 0;  // the repeats that pay their latency (Phase::streamed)
      std::size_t transfers = 0;
      for (const network::Schedule& s : plans) {
        repeat = std::max(repeat, s.phases[i].repeat);
        fill = std::max(fill, s.phases[i].repeat - s.phases[i].streamed);
        transfers += s.phases[i].transfers.size();
      }
      phase.repeat = repeat;
      phase.streamed = repeat - fill;
      phase.transfers.clear();
      phase.transfers.reserve(transfers);
      for (const network::Schedule& s : plans) {
        // 1 when the groups repeat alike: the bytes as planned, bit for bit.
        const double spread = static_cast<double>(s.phases[i].repeat) / static_cast<double>(repeat);
        for (network::Transfer t : s.phases[i].transfers) {
          t.bytes *= spread;
          phase.transfers.push_back(t);
        }
      }
    }
    merged_.insert_or_assign(key, std::move(merged));
    return merged_.at(key).schedule;
  }

  const StepInputs& in_;
  const Parallelism& p_;
  std::array<std::int64_t, 4> stride_{};
  std::map<Key, double> cache_;
  std::map<std::pair<Group, std::int64_t>, Groups> groups_;
  struct Merged {
    network::Schedule schedule;
    bool alike = true;  // every group planned the same transfers and bytes: reuse by copying bytes
  };
  std::map<std::tuple<Group, Op, network::Algorithm, std::int64_t>, Merged> merged_;
  // Routes each shape of merged schedule once: across sizes, schedules of the same groups and
  // algorithm differ only in bytes (and a ring reduce-scatter and all-gather share a ring).
  network::AnalyticalTimer timer_;
  std::vector<CommTiming> timings_;
};

/// The pipeline of one replica on the engine: one handler for the end of a pass, one for the
/// arrival of a pass's input.
class Pipeline {
 public:
  struct Pass {
    double duration = 0.0;
    Breakdown parts;            // compute, contention, tp, cp, ep, dp (ZeRO-2 and -3 collectives)
    double free_compute = 0.0;  // compute time no collective of the pass's own runs behind
    // ZeRO's data-parallel collectives of the pass, seconds on the DP links from the pass's
    // start, for the trace: ZeRO-3's parameter gathers, and the gradient reduce-scatter
    // (ZeRO-2 and -3) of a backward that is not the chunk's last (parts.dp averages it over
    // the micro-batches).
    double dp_gather = 0.0;
    double dp_reduce_scatter = 0.0;
  };

  Pipeline(sim::Engine& engine, const std::vector<std::vector<PipelineOp>>& order, std::int64_t pp,
           std::int64_t chunks, std::int64_t micro, std::vector<Pass> forward, std::vector<Pass> backward,
           std::vector<double> p2p)
      : engine_(engine),
        order_(order),
        pp_(pp),
        chunks_(chunks),
        micro_(micro),
        forward_(std::move(forward)),
        backward_(std::move(backward)),
        p2p_(std::move(p2p)),
        stages_(static_cast<std::size_t>(pp)),
        produced_(static_cast<std::size_t>(2 * chunks * micro), -1.0),
        arrived_(static_cast<std::size_t>(2 * chunks * micro), -1.0) {
    end_id_ = engine_.add_handler<&Pipeline::on_end>(*this);
    arrive_id_ = engine_.add_handler<&Pipeline::on_arrive>(*this);
  }

  struct Stage {
    std::size_t next = 0;
    bool busy = false;
    double free_at = 0.0;
    Breakdown parts;
    std::vector<std::pair<double, double>> spans;  // start, end per pass in order
    std::vector<double> span_free;  // per span: its pass's free_compute / duration
    std::vector<double> span_pp;    // per span: the wait for its input in flight just before it (parts.pp's share)
    std::vector<double> chunk_last_backward_start;  // per local chunk
  };

  void start() {
    for (std::int64_t s = 0; s < pp_; ++s) try_start(s);
  }
  [[nodiscard]] const std::vector<Stage>& stages() const { return stages_; }

 private:
  [[nodiscard]] std::size_t key(bool forward, std::int64_t micro, std::int64_t chunk) const {
    return static_cast<std::size_t>(((forward ? 0 : 1) * micro_ + micro) * chunks_ + chunk);
  }

  /// The input a pass waits for: (key of the producing pass) or none.
  [[nodiscard]] bool input_of(const PipelineOp& op, std::size_t& k) const {
    if (op.forward) {
      if (op.chunk == 0) return false;
      k = key(true, op.micro, op.chunk - 1);
      return true;
    }
    if (op.chunk == chunks_ - 1) return false;  // after its own forward, earlier on this stage
    k = key(false, op.micro, op.chunk + 1);
    return true;
  }

  void try_start(std::int64_t s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const auto& list = order_[static_cast<std::size_t>(s)];
    if (st.busy || st.next >= list.size()) return;
    const PipelineOp& op = list[st.next];
    const double now = engine_.now().seconds();
    std::size_t k = 0;
    double in_flight = 0.0;
    if (input_of(op, k)) {
      if (arrived_[k] < 0.0) return;  // on_arrive starts it
      // Idle since the stage was free: waiting for the producer is bubble, for the transfer pp.
      const double producer_done = std::min(produced_[k], now);
      st.parts.bubble += std::max(0.0, producer_done - st.free_at);
      in_flight = std::max(0.0, now - std::max(producer_done, st.free_at));
      st.parts.pp += in_flight;
    } else {
      st.parts.bubble += std::max(0.0, now - st.free_at);
    }
    const Pass& pass = (op.forward ? forward_ : backward_)[static_cast<std::size_t>(op.chunk)];
    st.busy = true;
    st.parts.compute += pass.parts.compute;
    st.parts.tp += pass.parts.tp;
    st.parts.cp += pass.parts.cp;
    st.parts.ep += pass.parts.ep;
    st.parts.dp += pass.parts.dp;
    st.parts.contention += pass.parts.contention;
    if (!op.forward && op.micro == micro_ - 1) {
      st.chunk_last_backward_start.resize(static_cast<std::size_t>(chunks_ / pp_), 0.0);
      st.chunk_last_backward_start[static_cast<std::size_t>(op.chunk / pp_)] = now;
    }
    const sim::Time end = engine_.now() + sim::Time::from_seconds(pass.duration);
    st.spans.emplace_back(now, end.seconds());
    st.span_free.push_back(pass.duration > 0.0 ? pass.free_compute / pass.duration : 0.0);
    st.span_pp.push_back(in_flight);
    engine_.schedule_at(end, end_id_, static_cast<std::uint64_t>(s));
  }

  void on_end(sim::Engine& e, std::uint64_t arg) {
    const auto s = static_cast<std::int64_t>(arg);
    Stage& st = stages_[arg];
    const PipelineOp op = order_[arg][st.next];
    const double now = e.now().seconds();
    st.busy = false;
    st.free_at = now;
    ++st.next;
    // Hand the output on: forward to the next chunk, backward to the previous one.
    const std::int64_t to = op.forward ? op.chunk + 1 : op.chunk - 1;
    if (to >= 0 && to < chunks_) {
      const std::size_t k = key(op.forward, op.micro, op.chunk);
      produced_[k] = now;
      const std::int64_t boundary = op.forward ? s : (s + pp_ - 1) % pp_;  // the link crossed
      const double transfer = pp_ > 1 ? p2p_[static_cast<std::size_t>(boundary)] : 0.0;
      e.schedule_at(e.now() + sim::Time::from_seconds(transfer), arrive_id_, k);
    }
    try_start(s);
  }

  void on_arrive(sim::Engine&, std::uint64_t k) {
    arrived_[k] = engine_.now().seconds();
    const auto chunk = static_cast<std::int64_t>(k % static_cast<std::uint64_t>(chunks_));
    const bool forward = k / static_cast<std::uint64_t>(chunks_ * micro_) == 0;
    const std::int64_t consumer = forward ? chunk + 1 : chunk - 1;
    try_start(consumer % pp_);
  }

  sim::Engine& engine_;
  const std::vector<std::vector<PipelineOp>>& order_;
  std::int64_t pp_, chunks_, micro_;
  std::vector<Pass> forward_, backward_;
  std::vector<double> p2p_;
  std::vector<Stage> stages_;
  std::vector<double> produced_;
  std::vector<double> arrived_;
  sim::HandlerId end_id_, arrive_id_;
};

}  // namespace

StepResult simulate_step(const StepInputs& in) {
  const JobConfig& job = *in.job;
  const ModelSpec& model = *in.model;
  const Parallelism& p = job.parallelism;
  StepResult r;
  const std::int64_t M = micro_batches(job);
  const std::int64_t chunks = p.pp * p.virtual_stages;
  const std::int64_t seq = sequence_length(job, model);
  r.micro_batches = M;

  const std::vector<ChunkCost> costs = chunk_costs(job, model, *in.profile);
  const auto order = pipeline_order(p.pp, p.virtual_stages, M);
  r.memory = memory_per_gpu(job, costs, order);

  CommTimes comm(in);
  const double wb = weight_bytes(job);
  // Compute that runs while a collective is in flight behind it takes overlap_slowdown
  // longer for that time (the collective's kernels hold SMs and HBM bandwidth).
  const double slowdown = in.network->overlap_slowdown;
  // ZeRO-3: one pass's gathers of the chunk's parameters (its dense ones over the DP group,
  // its experts over theirs).
  const auto zero3_gather = [&](const ChunkCost& chunk) {
    double t = comm.time(Group::dp, Op::all_gather, (chunk.parameters - chunk.expert_parameters) * wb);
    if (chunk.expert_parameters > 0.0 && p.dp * p.cp > p.ep) {
      t += comm.time(Group::edp, Op::all_gather, chunk.expert_parameters * wb);
    }
    return t;
  };
  const auto pass_of = [&](const PassCost& pc, const ChunkCost& chunk, bool is_backward) {
    Pipeline::Pass pass;
    pass.parts.compute = pc.compute_s;
    double covered = 0.0;  // compute time the pass's own collectives run behind
    for (const CommCall& call : pc.comm) {
      const double t = comm.time(call.group, call.op, call.bytes);
      const double exposed = std::max(0.0, t - call.overlap_s);
      covered += std::min(t, call.overlap_s) * as_double(call.count);
      const double total = exposed * as_double(call.count);
      switch (call.group) {
        case Group::tp: pass.parts.tp += total; break;
        case Group::cp: pass.parts.cp += total; break;
        case Group::ep: pass.parts.ep += total; break;
        case Group::dp:
        case Group::edp: pass.parts.dp += total; break;
        case Group::pp: pass.parts.pp += total; break;
      }
    }
    // ZeRO's data-parallel collectives of the pass share one stream behind its compute: the
    // chunk's parameter gathers (ZeRO-3, prefetched layer by layer) and, in a backward, the
    // gradient reduce-scatters (ZeRO-2 and -3). The compute hides their sum once, not each
    // of them in full.
    double gather = 0.0;
    if (p.zero >= 3 && p.dp * p.cp > 1) gather = zero3_gather(chunk);
    double rs = 0.0;
    if (is_backward && p.zero >= 2 && p.dp * p.cp > 1 && M > 1) {
      // Sharded gradients cannot be accumulated whole: every micro-batch's backward
      // reduce-scatters them (DeepSpeed ZeRO-2, FSDP), behind its compute with
      // overlap_grad_reduce. The last one's goes with the step's final reduction below; the
      // other M - 1 are spread over the M passes that share this cost.
      const double gb_pass = compute::dtype_bytes(job.grad_dtype);
      rs = comm.time(Group::dp, Op::reduce_scatter, (chunk.parameters - chunk.expert_parameters) * gb_pass);
      if (chunk.expert_parameters > 0.0 && p.dp * p.cp > p.ep) {
        rs += comm.time(Group::edp, Op::reduce_scatter, chunk.expert_parameters * gb_pass);
      }
    }
    if (gather > 0.0 || rs > 0.0) {
      const double c = pc.compute_s;
      const double with_rs = as_double(M - 1) / as_double(M);  // the passes that reduce-scatter
      pass.dp_gather = gather;
      pass.dp_reduce_scatter = rs;
      if (job.overlap_grad_reduce) {
        pass.parts.dp += with_rs * std::max(0.0, gather + rs - c) + (1.0 - with_rs) * std::max(0.0, gather - c);
        covered += with_rs * std::min(gather + rs, c) + (1.0 - with_rs) * std::min(gather, c);
      } else {
        pass.parts.dp += std::max(0.0, gather - c) + with_rs * rs;
        covered += std::min(gather, c);
      }
    }
    // Collectives that run at the same time share the slowdown: compute is slowed at most
    // once over its whole length.
    covered = std::min(covered, pc.compute_s);
    pass.parts.contention = slowdown * covered;
    pass.free_compute = pc.compute_s - covered;
    pass.duration = pass.parts.total();
    return pass;
  };
  std::vector<Pipeline::Pass> forward, backward;
  for (const ChunkCost& c : costs) {
    forward.push_back(pass_of(c.forward, c, false));
    backward.push_back(pass_of(c.backward, c, true));
  }
  // Point-to-point: one activation (or its gradient) per micro-batch, split over the TP
  // ranks with sequence parallelism (Megatron's scatter-gather optimisation without it).
  std::vector<double> p2p(static_cast<std::size_t>(p.pp), 0.0);
  if (p.pp > 1) {
    const double act = as_double(job.micro_batch) * as_double(seq / p.cp) * as_double(model.hidden) *
                       compute::dtype_bytes(job.precision == compute::Dtype::fp8 ? compute::Dtype::bf16 : job.precision) /
                       as_double(p.tp);
    for (std::int64_t s = 0; s < p.pp; ++s) {
      if (p.virtual_stages == 1 && s == p.pp - 1) break;  // no wrap-around without interleaving
      p2p[static_cast<std::size_t>(s)] = comm.time(Group::pp, Op::send_recv, act, s);
    }
  }

  sim::Engine engine;
  Pipeline pipe(engine, order, p.pp, chunks, M, forward, backward, p2p);
  pipe.start();
  engine.run();
  r.events = engine.events_processed();
  r.events_scheduled = engine.events_scheduled();

  // Data-parallel reduction and the optimizer, per stage.
  const double gb = compute::dtype_bytes(job.grad_dtype);
  // ZeRO-3 with overlap: each chunk's last backward also gathers its parameters on the same
  // links, from the pass's start (prefetched ahead of its layers): the stream is busy with
  // them first, so the reductions cannot hide behind the time they take. (Interleaving the
  // gathers with the reductions layer by layer, as FSDP does, moves the same bytes; with
  // the layers spread over the pass's length, a gather queued behind a reduction ran after
  // the pass that needed it.)
  const bool gathers_in_stream = p.zero >= 3 && job.overlap_grad_reduce && p.dp * p.cp > 1;
  const Op reduce = p.zero >= 1 ? Op::reduce_scatter : Op::all_reduce;
  double step = 0.0;
  std::vector<Breakdown> parts(static_cast<std::size_t>(p.pp));
  for (std::int64_t s = 0; s < p.pp; ++s) {
    const auto& st = pipe.stages()[static_cast<std::size_t>(s)];
    CLUSTERSIM_CHECK(st.next == order[static_cast<std::size_t>(s)].size(), "the pipeline ran every pass");
    Breakdown b = st.parts;
    double last = st.free_at;
    double stream = 0.0;  // the stage's DP stream is free from here
    double params = 0.0, experts = 0.0;
    // Each layer's gradients, with the time they are ready; reduced one at a time in that
    // order, an MoE layer's experts over their own group after the rest of the layer.
    struct Bucket {
      double ready;
      double params;
      Group group;
      std::int64_t chunk;
      std::size_t layer;
      bool gather = false;  // ZeRO-3: the chunk's parameter gathers, not a reduction
    };
    std::vector<Bucket> buckets;
    const bool expert_groups = p.dp * p.cp > p.ep;  // more than one rank holds each expert
    for (std::int64_t c = s, local = 0; c < chunks; c += p.pp, ++local) {
      const ChunkCost& cc = costs[static_cast<std::size_t>(c)];
      params += cc.parameters - cc.expert_parameters;
      experts += cc.expert_parameters;
      if (p.dp * p.cp == 1) continue;
      const double bwd_start = st.chunk_last_backward_start[static_cast<std::size_t>(local)];
      const double bwd = backward[static_cast<std::size_t>(c)].duration;
      // The pass's layers follow one another, each over its share of the backward compute.
      double total = 0.0;
      for (const double t : cc.layer_backward_compute_s) total += t;
      double done = 0.0;
      if (gathers_in_stream) buckets.push_back({bwd_start, 0.0, Group::dp, c, 0, true});
      for (std::size_t i = 0; i < cc.layer_gradient_params.size(); ++i) {
        done += cc.layer_backward_compute_s[i];
        const double ready = job.overlap_grad_reduce ? bwd_start + bwd * (total > 0.0 ? done / total : 1.0) : last;
        const double experts_i = expert_groups ? cc.layer_expert_gradient_params[i] : 0.0;
        buckets.push_back({ready, cc.layer_gradient_params[i], Group::dp, c, i});
        if (experts_i > 0.0) buckets.push_back({ready, experts_i, Group::edp, c, i});
      }
    }
    std::stable_sort(buckets.begin(), buckets.end(), [](const Bucket& a, const Bucket& b2) { return a.ready < b2.ready; });
    // The reductions that run while the stage still computes slow its passes: the compute
    // they share with the stage's spans (the part of each pass that its own collectives do
    // not already slow, spread evenly over the pass), times overlap_slowdown, delays what
    // follows on the stage: the next gradients are ready that much later, and the stage's
    // last backward ends that much later. (First order: the spans are not re-timed.)
    double shared = 0.0;
    std::size_t span = 0;
    for (const Bucket& bk : buckets) {
      double t = 0.0;
      if (bk.gather) {
        t = zero3_gather(costs[static_cast<std::size_t>(bk.chunk)]);
      } else {
        t = comm.time(bk.group, reduce, bk.params * gb);
      }
      const double begin = std::max(stream, bk.ready + slowdown * shared);
      stream = begin + t;
      for (; span < st.spans.size() && st.spans[span].second <= begin; ++span) {
      }
      // A gather's slowdown is the pass's own (counted with the pass): only the reductions add.
      for (std::size_t k = span; !bk.gather && k < st.spans.size() && st.spans[k].first < stream; ++k) {
        const double both = std::min(stream, st.spans[k].second) - std::max(begin, st.spans[k].first);
        shared += std::max(0.0, both) * st.span_free[k];
      }
      if (in.want_trace) {
        r.trace.push_back({s, comm.gpu(0, 0, s, 0),
                           bk.gather ? fmt::format("all_gather params chunk {}", bk.chunk)
                                     : fmt::format("{} chunk {} layer {}{}", config::enum_name(reduce), bk.chunk,
                                                   bk.layer, bk.group == Group::edp ? " experts" : ""),
                           "dp",
                           begin, stream, {}});
      }
    }
    b.contention += slowdown * shared;
    // The trace does not re-time the stage's passes either: their slowdown by the reductions
    // is drawn where the model counts it, after the stage's last pass (the last gradients
    // are ready, and the last reductions start, that much later).
    if (in.want_trace && slowdown * shared > 0.0) {
      r.trace.push_back({s, comm.gpu(0, 0, s, 0), "compute slowed by the DP reductions behind it (overlap_slowdown)",
                         "contention", last, last + slowdown * shared, {}});
    }
    last += slowdown * shared;
    double end = std::max(last, stream);
    b.dp += end - last;
    // Optimizer: Adam over the local shard (fp32 master, m, v read and written, the
    // gradient read, the weights written).
    const double shard = p.zero >= 1 ? params / as_double(p.dp * p.cp) + experts / as_double(p.dp * p.cp / p.ep)
                                     : params + experts;
    const double opt = compute::memory_seconds(shard * (24.0 + gb + wb), *in.profile);
    if (in.want_trace) r.trace.push_back({s, comm.gpu(0, 0, s, 0), "optimizer", "optimizer", end, end + opt, {}});
    end += opt;
    b.optimizer += opt;
    if (p.zero >= 1 && p.zero <= 2 && p.dp * p.cp > 1) {
      double gather = comm.time(Group::dp, Op::all_gather, params * wb);
      if (experts > 0.0 && expert_groups) gather += comm.time(Group::edp, Op::all_gather, experts * wb);
      double hidden = 0.0;
      if (job.overlap_param_gather) {
        // Megatron's distributed optimizer with --overlap-param-gather issues each bucket's
        // all-gather ahead of the next step's forward of its layers: the stage's first
        // forward pass of each chunk (its compute that its own collectives leave) hides it,
        // slowed by overlap_slowdown. Counted in this step: the steady state's next one.
        double first_forwards = 0.0;
        for (std::int64_t c = s; c < chunks; c += p.pp) first_forwards += forward[static_cast<std::size_t>(c)].free_compute;
        hidden = std::min(gather, first_forwards);
      }
      if (in.want_trace && gather > hidden) {
        r.trace.push_back({s, comm.gpu(0, 0, s, 0), hidden > 0.0 ? "all_gather params (beyond the next forward)" : "all_gather params",
                           "dp", end, end + gather - hidden, {}});
      }
      if (in.want_trace && slowdown * hidden > 0.0) {
        r.trace.push_back({s, comm.gpu(0, 0, s, 0),
                           "next step's first forwards slowed by the parameter gather behind them (overlap_slowdown)",
                           "contention", end + gather - hidden, end + gather - hidden + slowdown * hidden, {}});
      }
      end += gather - hidden + slowdown * hidden;
      b.dp += gather - hidden;
      b.contention += slowdown * hidden;
    }
    parts[static_cast<std::size_t>(s)] = b;
    if (end > step) {
      step = end;
      r.critical_stage = s;
    }
  }
  r.breakdown = parts[static_cast<std::size_t>(r.critical_stage)];
  r.stage_breakdowns = parts;
  // Stages with the same work (an unbalanced pipeline's middle, say) differ in their busy
  // time by rounding only: among those within a relative 1e-9 of the busiest, the one that
  // waits least (bubble and PP communication), as its label says, then the first.
  double busiest = 0.0;
  for (const Breakdown& b : parts) busiest = std::max(busiest, b.total() - b.bubble - b.pp);
  double least_wait = std::numeric_limits<double>::infinity();
  for (std::int64_t s = 0; s < p.pp; ++s) {
    const Breakdown& b = parts[static_cast<std::size_t>(s)];
    if (b.total() - b.bubble - b.pp < busiest * (1 - 1e-9)) continue;
    if (b.bubble + b.pp < least_wait) {
      least_wait = b.bubble + b.pp;
      r.busiest_stage = s;
    }
  }
  r.step_time_s = step;
  // A step past the clock's range (292 years: a link latency of a year, say) cannot be
  // scheduled: an input error, as everywhere else, not a long run that never trains.
  (void)sim::Time::from_seconds(step, "a training step");
  r.tokens_per_step = as_double(job.global_batch) * as_double(seq);
  r.tokens_per_s = r.tokens_per_step / step;
  r.model_flops_per_step = training_flops_per_token(model, seq) * r.tokens_per_step;
  double hw = 0.0;
  for (const ChunkCost& c : costs) hw += c.forward.hardware_flops + c.backward.hardware_flops;
  r.hardware_flops_per_step = hw * as_double(M) * as_double(p.tp * p.cp * p.dp);
  const double gpus = as_double(job.gpus);
  const double peak = compute::peak_flops(job.precision, *in.profile);
  r.tflops_per_gpu = r.model_flops_per_step / (step * gpus) / 1e12;
  r.mfu = peak > 0.0 ? r.model_flops_per_step / (step * gpus * peak) : 0.0;
  r.hfu = peak > 0.0 ? r.hardware_flops_per_step / (step * gpus * peak) : 0.0;
  r.comm = comm.timings();

  if (in.want_trace) {
    for (std::int64_t s = 0; s < p.pp; ++s) {
      const auto& st = pipe.stages()[static_cast<std::size_t>(s)];
      const auto& list = order[static_cast<std::size_t>(s)];
      for (std::size_t i = 0; i < list.size(); ++i) {
        const PipelineOp& op = list[i];
        const Pipeline::Pass& pass = (op.forward ? forward : backward)[static_cast<std::size_t>(op.chunk)];
        // A pass's span holds its compute and what its own collectives leave exposed, which
        // its args break down (milliseconds, as the step's breakdown names them).
        TraceSpan span{s, comm.gpu(0, 0, s, 0),
                       fmt::format("{} mb {} chunk {}", op.forward ? "F" : "B", op.micro, op.chunk),
                       op.forward ? "forward" : "backward", st.spans[i].first, st.spans[i].second, {}};
        const Breakdown& b = pass.parts;
        for (const auto& [key, v] : {std::pair{"compute_ms", b.compute}, std::pair{"contention_ms", b.contention},
                                     std::pair{"tp_ms", b.tp}, std::pair{"cp_ms", b.cp}, std::pair{"ep_ms", b.ep},
                                     std::pair{"dp_ms", b.dp}}) {
          if (v > 0.0) span.args.emplace_back(key, v * 1e3);
        }
        r.trace.push_back(std::move(span));
        // The wait just before it for its input in flight from the next or previous stage
        // (the breakdown's pp), drawn on the compute lane: it read as a gap, like a bubble.
        if (const double wait = st.span_pp[i]; wait > 0.0) {
          r.trace.push_back({s, comm.gpu(0, 0, s, 0),
                             fmt::format("waiting for the {} of mb {} in flight (pp)",
                                         op.forward ? "activations" : "gradients", op.micro),
                             "pp", st.spans[i].first - wait, st.spans[i].first, {}});
        }
        // ZeRO's collectives inside the pass run on the DP links from its start (a lane of
        // their own: the stage's gradient reductions have theirs). A chunk's last backward
        // reduce-scatters nothing (its gradients go with the step's reductions), and with
        // overlap_grad_reduce its gather is drawn in the reductions' lane, where it runs.
        const bool last_backward = !op.forward && op.micro == M - 1;
        const double gather = last_backward && gathers_in_stream ? 0.0 : pass.dp_gather;
        const double rs = op.forward || last_backward ? 0.0 : pass.dp_reduce_scatter;
        if (gather + rs > 0.0) {
          r.trace.push_back({s, comm.gpu(0, 0, s, 0),
                             fmt::format("{}{}{} mb {} chunk {}", gather > 0.0 ? "all_gather params" : "",
                                         gather > 0.0 && rs > 0.0 ? " + " : "", rs > 0.0 ? "reduce_scatter grads" : "",
                                         op.micro, op.chunk),
                             "dp_pass", st.spans[i].first,
                             // within the pass (its span is rounded to the engine's tick)
                             std::min(st.spans[i].first + gather + rs, st.spans[i].second), {}});
        }
      }
    }
    std::stable_sort(r.trace.begin(), r.trace.end(), [](const TraceSpan& a, const TraceSpan& b) {
      return std::tie(a.lane, a.start_s) < std::tie(b.lane, b.start_s);
    });
  }
  return r;
}

double tokens_in_whole_steps(double tokens, const StepResult& step) {
  if (!(step.tokens_per_step > 0.0)) return tokens;
  return std::ceil(tokens / step.tokens_per_step) * step.tokens_per_step;
}

double ideal_time_to_train_s(const JobConfig& job, const StepResult& step) {
  if (!job.train_tokens || !(step.tokens_per_s > 0.0)) return std::nan("");
  return tokens_in_whole_steps(job.train_tokens->value(), step) / step.tokens_per_s;
}

}  // namespace clustersim::workload
