// One training step of a job, simulated on the engine over the network model.
//
// Symmetry: every data-parallel replica runs the same pipeline on the same shapes, and the
// ranks of a TP or CP group do the same work, so the step is simulated for the pipeline of
// one replica (its pp stages, each represented by its first TP/CP rank); the collectives
// those ranks wait for are timed on the network with every group of their kind running at
// once (all TP groups, all DP groups, ...), as they do in lockstep training, so groups that
// share links slow each other (an oversubscribed Clos shows it).
//
// Pipeline (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", SC'21, section 2.2): each stage runs its forward (F) and
// backward (B) passes of micro-batches in Megatron's order: 1F1B with pp - s - 1 warm-up
// forwards on stage s; interleaved 1F1B with v model chunks per stage and
// 2 (pp - s - 1) + (v - 1) pp warm-up forwards, micro-batches in groups of pp. A pass starts
// when the stage is free and its input has arrived: the previous chunk's output (forward)
// or the next chunk's input gradient (backward), sent point to point between stages. Each
// pass is an engine event; its duration is its compute time (models/workload/costs.hpp)
// plus its exposed collectives (TP, EP: on the critical path; CP: beyond the attention
// compute it hides behind; ZeRO's per-pass DP collectives, ZeRO-3's parameter gathers and,
// in a backward, ZeRO-2 and -3's gradient reduce-scatters: beyond the pass's compute, which
// hides them together, once).
//
// Data parallelism: gradients are reduced over the data- and context-parallel ranks together
// (as Megatron-LM does; ZeRO shards over the same ranks). With overlap_grad_reduce each
// layer's gradients are reduced (all-reduce with zero 0, reduce-scatter with ZeRO) as soon
// as the last micro-batch's backward has produced them (the pass's layers follow one
// another, each over its share of the pass's backward compute, so the output layer's
// gradients are ready after its GEMM, the embedding's at the end), one reduction at a time
// per stage in the order they become ready; otherwise all after the stage's last backward.
// With ZeRO-3 that stream also carries the last backward's parameter gathers, first, from
// the pass's start (prefetched ahead of the layers), so the reductions cannot hide behind
// time the gathers already use. With ZeRO 2-3 the
// gradients are sharded, so they cannot accumulate whole over the micro-batches: each
// micro-batch's backward reduce-scatters its chunk's gradients too (behind the pass's
// compute with overlap_grad_reduce; the M - 1 before the last are charged evenly, (M-1)/M
// per backward pass, since every micro-batch runs the same pass). Then
// the optimizer step (memory-bound Adam over the local shard: 16 bytes per parameter
// read and written, plus the weight copy) and, with ZeRO 1-2, the all-gather of the updated
// parameters (with overlap_param_gather, Megatron's --overlap-param-gather, the stage's
// first forward passes of the next step hide it: only what they cannot hide, and their
// slowdown, count). The step ends when the slowest stage is done.
//
// Breakdown (of the stage that finishes last; its parts sum to the step time; the other
// stages' too, each up to its own end, and the busiest one named: the stage with the least
// waiting, where a bubble on the last stage comes from):
//   compute   passes' compute, recomputation included
//   contention  compute slowed by collectives running behind it: overlap_slowdown (network
//             config; 18.9%, Lee et al., arXiv:2507.03114) x the compute they share: the
//             hidden part of an overlapped call (CP's K/V ring, ZeRO-2 and -3's per-pass
//             collectives; at most the pass's compute, however many run at once) and the
//             gradient reductions that run while the stage still computes (on the compute
//             its own collectives leave; each such slowdown makes the next gradients ready
//             later and the stage's last backward end later; the ZeRO-3 gathers that share
//             their stream are the pass's own, slowing it once, with the pass)
//   tp cp ep  collectives exposed in the passes
//   pp        waiting for an activation or gradient in flight between stages
//   bubble    waiting for a pass upstream or downstream to finish (pipeline fill and drain)
//   dp        gradient reduction beyond the (slowed) last backward, parameter all-gathers
//   optimizer the optimizer step
//
// MFU (Chowdhery et al., PaLM, 2022, appendix B): model FLOPs per step
// (training_flops_per_token x tokens, no recomputation) / (step time x GPUs x dense peak of
// the job's precision). HFU counts the FLOPs executed, recomputation included.
//
// LIMITATIONS: a pass's layers are timed by their compute share over the pass's length, not
// gated on their ZeRO-3 gathers, and the stream runs a chunk's gathers before its
// reductions rather than interleaved with them (the same bytes; the order can shift a
// reduction's start); a pass's DP collectives hide only behind its compute, not behind its exposed
// TP time (they use other links); identical replicas (no stragglers, no data-dependent
// imbalance); compute
// slows by one average factor while a collective overlaps it, whatever the collective's
// size, channels or the kernel's shape (a GEMM whose last wave spills can lose far more:
// Lee et al. measured up to 40%), pipeline sends do not slow it, communication is not
// slowed by compute, and the slowdown the gradient reductions cause is added to the stage
// once its passes are timed (first order: the passes are not re-timed, and the stages
// downstream do not wait for it); point-to-point sends of one boundary are timed once, all replicas at once, and then reused; several jobs in one
// scenario are simulated one at a time (they share no links in time); with tied embeddings
// and pp > 1, the all-reduce of the embedding's gradient between the first and the last
// stage (Megatron-LM's embedding group: V h / tp values, ~12 ms for GPT-3 175B at tp 8 over
// a 200 Gb/s NIC, under 0.1% of its step) is not timed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/fabric/fabric.hpp"
#include "models/network/config.hpp"
#include "models/workload/costs.hpp"
#include "models/workload/job.hpp"
#include "models/workload/model.hpp"
#include "sim/units.hpp"

namespace clustersim::workload {

/// One pass in a stage's order: forward or backward of `micro` through model chunk `chunk`
/// (model order; stage = chunk % pp).
struct PipelineOp {
  bool forward = true;
  std::int64_t micro = 0;
  std::int64_t chunk = 0;
  friend bool operator==(const PipelineOp&, const PipelineOp&) = default;
};

/// The order of passes on each of the pp stages (Megatron's 1F1B, or interleaved when
/// virtual_stages > 1; micro_batches must then be a multiple of pp).
std::vector<std::vector<PipelineOp>> pipeline_order(std::int64_t pp, std::int64_t virtual_stages,
                                                    std::int64_t micro_batches);

struct MemoryBreakdown {
  std::int64_t stage = 0;  ///< the stage that needs the most
  double weights = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;
  double activations = 0.0;
  double total = 0.0;  ///< bytes
};

/// Memory per GPU on the stage that needs the most (bytes; the header's accounting:
/// parameters at the precision's width (4 bytes for fp32/tf32, else 2), gradients at
/// grad_dtype, Adam (fp32 master, m, v: 12 bytes per parameter, 8 when the weights are fp32
/// already; 4 more when the gradients are below fp32: their fp32 copy for the update), each sharded over dp x cp by the ZeRO stage (experts over their
/// expert-data-parallel group); with ZeRO-3 the weights also count the units gathered at
/// once: the unit in use and the next, prefetched (a layer, the embedding or the output
/// layer; the largest two neighbours, whole); activations of the passes in flight).
MemoryBreakdown memory_per_gpu(const JobConfig& job, const std::vector<ChunkCost>& chunks,
                               const std::vector<std::vector<PipelineOp>>& order);

struct Breakdown {
  double compute = 0.0;
  double tp = 0.0;
  double cp = 0.0;
  double ep = 0.0;
  double pp = 0.0;
  double dp = 0.0;
  double bubble = 0.0;
  double optimizer = 0.0;
  double contention = 0.0;  ///< compute slowed by collectives running behind it (overlap_slowdown)
  [[nodiscard]] double total() const { return compute + tp + cp + ep + pp + dp + bubble + optimizer + contention; }
};

/// One span of the timeline, for the trace: on `lane` (a stage), [start, end) seconds.
struct TraceSpan {
  std::int64_t lane = 0;
  std::int64_t gpu = 0;
  std::string name;
  /// "forward", "backward", "contention" (compute slowed by overlapping DP reductions),
  /// "optimizer" on the compute lane; "dp" (the gradient reductions, the parameter
  /// gathers) and "dp_pass" (ZeRO's collectives inside a pass) on lanes of their own
  std::string category;
  double start_s = 0.0;
  double end_s = 0.0;
  std::vector<std::pair<std::string, double>> args;  ///< shown with the span (name, value)
};

/// The collective times the step used, one row per distinct call.
struct CommTiming {
  Group group = Group::tp;
  network::Op op = network::Op::all_reduce;
  network::Algorithm algorithm = network::Algorithm::ring;
  double bytes = 0.0;
  std::int64_t group_size = 0;
  std::int64_t groups = 0;
  double time_s = 0.0;
  /// With StepInputs::want_links: the link the call loads most (every group of its kind at
  /// once), as fabric::describe_link() names it, and its utilisation over the call (bytes
  /// carried / (line rate x efficiency x time), network::hottest_links()); empty and 0
  /// without, or when the call crosses no link (a group of one GPU).
  std::string busiest_link;
  double busiest_utilisation = 0.0;
};

struct StepResult {
  double step_time_s = 0.0;
  double tokens_per_step = 0.0;
  double tokens_per_s = 0.0;
  double model_flops_per_step = 0.0;
  double hardware_flops_per_step = 0.0;
  double tflops_per_gpu = 0.0;  ///< model FLOPs
  double mfu = 0.0;
  double hfu = 0.0;
  std::int64_t micro_batches = 0;
  Breakdown breakdown;
  std::int64_t critical_stage = 0;
  /// Every stage's parts, up to its own end (the critical stage's is `breakdown`).
  std::vector<Breakdown> stage_breakdowns;
  /// The stage with the most time in compute, communication and the optimizer (of those
  /// that tie, the one that waits least): where the step's work lies when the last stage
  /// to finish mostly waits for it.
  std::int64_t busiest_stage = 0;
  MemoryBreakdown memory;
  std::vector<CommTiming> comm;
  std::vector<TraceSpan> trace;
  std::uint64_t events = 0;            ///< engine events processed
  std::uint64_t events_scheduled = 0;  ///< engine events scheduled (cancelled ones included)
};

struct StepInputs {
  const JobConfig* job = nullptr;
  const ModelSpec* model = nullptr;
  const compute::ComputeProfile* profile = nullptr;
  const fabric::Fabric* fabric = nullptr;
  const network::NetworkConfig* network = nullptr;
  std::int64_t first_gpu = 0;  ///< the job's GPUs are first_gpu .. first_gpu + gpus - 1
  bool want_trace = false;
  /// Fill CommTiming's busiest link (O(transfers x hops + links) per distinct call; `run`
  /// asks, sweeps and plans do not).
  bool want_links = false;
};

/// Simulates one step. The job must have passed validate_job and fit the fabric.
StepResult simulate_step(const StepInputs& in);

/// The tokens that training `tokens` really takes: whole steps of the step's tokens (the
/// last step runs in full). `tokens` itself when a step holds none.
double tokens_in_whole_steps(double tokens, const StepResult& step);

/// Failure-free time to train the job's train_tokens: its whole steps at the step's time.
/// NaN without train_tokens or throughput.
double ideal_time_to_train_s(const JobConfig& job, const StepResult& step);

}  // namespace clustersim::workload
