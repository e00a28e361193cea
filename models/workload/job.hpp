// Training jobs (scenario section `workload`): which model, on how many GPUs, split how.
//
// A job trains `model` on `gpus` GPUs, taken in node order after the previous job's: its
// nominal placement, on which its step is simulated (when the jobs do not all fit at once,
// the placement wraps back to GPU 0; the scheduler of models/reliability/longrun.hpp places
// each job when it starts). `count: N` stands for N identical jobs NAME-0 .. NAME-<N-1>,
// submitted together at `submit`. The GPUs are split into tp x cp x pp x dp ranks (tensor,
// context, pipeline and data parallel); expert parallelism (ep) divides each data-parallel
// group into ep-sized expert groups (as Megatron-Core folds EP into DP). Global rank r has coordinates
// (tp_i, cp_i, pp_i, dp_i) with the first name in `order` varying fastest:
//     r = tp_i + tp (cp_i + cp (pp_i + pp dp_i))        for order [tp, cp, pp, dp]
// and runs on the job's r-th GPU, so TP stays inside a node (when tp divides the node's
// GPUs), then CP, then PP, then DP span nodes. That default is the order of Llama 3's
// training (Llama Team, arXiv 2407.21783, section 3.3.2: [TP, CP, PP, DP]); Megatron-Core
// defaults to "tp-cp-ep-dp-pp" (parallel_state.initialize_model_parallel), pipeline
// outermost, which puts an expert group (ep ranks within dp) on fewer nodes.
//
// A step processes `global_batch` sequences of `seq_len` tokens: each data-parallel replica
// runs global_batch / (dp x micro_batch) micro-batches through its pipeline.
//
// Validation (validate_job) checks the relations the field tables cannot: the product of
// the degrees equals gpus, heads and kv_heads divide by tp, seq_len by cp, experts by ep,
// the batch by dp x micro_batch, and the interleaved schedule's micro-batch count.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/config/decode.hpp"
#include "models/workload/model.hpp"
#include "sim/units.hpp"

namespace clustersim::workload {

/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", MLSys 2023): none stores every activation; selective recomputes the
/// cheap, large ones: the attention core when it is not fused (Korthikanti's selective; with
/// flash attention there is nothing to drop there), the norms and the MLP activation
/// function (Megatron-Core's --recompute-modules core_attn,layernorm, plus the activation
/// recomputation that Megatron-Core offers for expert MLPs as moe_act, here for every MLP);
/// full stores only each layer's input and recomputes the layer's forward in backward.
enum class Recompute { none, selective, full };

constexpr std::array<std::pair<Recompute, std::string_view>, 3> enum_names(Recompute) {
  return {{{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
}

/// flash: one fused kernel per attention call (FlashAttention; no s^2 tensors stored);
/// unfused: Q K^T and P V as batched GEMMs with a softmax and dropout between them, as
/// Megatron-LM did before fused attention (2021).
enum class AttentionKernel { flash, unfused };

constexpr std::array<std::pair<AttentionKernel, std::string_view>, 2> enum_names(AttentionKernel) {
  return {{{AttentionKernel::flash, "flash"}, {AttentionKernel::unfused, "unfused"}}};
}

enum class Axis { tp, cp, pp, dp };

constexpr std::array<std::pair<Axis, std::string_view>, 4> enum_names(Axis) {
  return {{{Axis::tp, "tp"}, {Axis::cp, "cp"}, {Axis::pp, "pp"}, {Axis::dp, "dp"}}};
}

// Sanity limits of the field tables, far above any published run (Llama 3 405B: 16,384 GPUs,
// 2,048 sequences a step): they keep the products of degrees and batch sizes inside int64.
inline constexpr std::int64_t kMaxDegree = 100'000'000;  ///< GPUs of a job, and each parallel degree
inline constexpr std::int64_t kMaxBatch = 100'000'000;   ///< sequences of a global batch or a micro-batch
/// Micro-batch passes per step the step simulation takes: micro-batches per replica x pipeline
/// chunks (pp x virtual_stages), each an event and a trace span. 100,000 micro-batches on 32
/// stages (under the old limit of 1,000,000 micro-batches alone) took 8 GB and ended in
/// std::bad_alloc; a million passes take about 2 GB with a trace.
inline constexpr std::int64_t kMaxMicroBatches = 1'000'000;

struct Parallelism {
  std::int64_t tp = 1;
  std::int64_t cp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t ep = 1;
  std::int64_t virtual_stages = 1;
  std::int64_t zero = 0;
  bool sequence_parallel = false;
  std::vector<Axis> order{Axis::tp, Axis::cp, Axis::pp, Axis::dp};

  static auto fields() {
    using config::field;
    return std::tuple{
        field("tp", &Parallelism::tp, "tensor-parallel degree").at_least(1).at_most(kMaxDegree),
        field("cp", &Parallelism::cp, "context-parallel degree (the sequence split across GPUs)")
            .at_least(1)
            .at_most(kMaxDegree),
        field("pp", &Parallelism::pp, "pipeline-parallel degree (stages)").at_least(1).at_most(kMaxDegree),
        field("dp", &Parallelism::dp, "data-parallel degree (replicas)").at_least(1).at_most(kMaxDegree),
        field("ep", &Parallelism::ep, "expert-parallel degree, dividing dp (MoE models)").at_least(1).at_most(kMaxDegree),
        field("virtual_stages", &Parallelism::virtual_stages,
              "model chunks per pipeline stage (interleaved 1F1B when above 1)")
            .at_least(1)
            .at_most(100'000),
        field("zero", &Parallelism::zero,
              "ZeRO stage: 0 replicated, 1 optimizer sharded, 2 + gradients, 3 + parameters (FSDP)")
            .at_least(0)
            .at_most(3),
        field("sequence_parallel", &Parallelism::sequence_parallel,
              "shard norms and dropout across the TP group (all-gather / reduce-scatter instead of all-reduce)"),
        field("order", &Parallelism::order,
              "rank-to-GPU order, fastest-varying first; the default is Llama 3's (Meta, 2024); "
              "Megatron-Core's is [tp, cp, dp, pp], which keeps data- and expert-parallel groups (ep within dp) "
              "on fewer nodes: try it for MoE jobs"),
    };
  }
};

struct JobConfig {
  std::string name;
  config::NameOr<ModelSpec> model;
  std::int64_t gpus = 0;
  Parallelism parallelism;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 0;
  std::int64_t seq_len = 0;  ///< 0: the model's
  compute::Dtype precision = compute::Dtype::bf16;
  Recompute recompute = Recompute::none;
  AttentionKernel attention = AttentionKernel::flash;
  compute::Dtype grad_dtype = compute::Dtype::fp32;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = false;
  std::optional<sim::Count> train_tokens;
  sim::Time submit = sim::Time::zero();
  std::int64_t count = 1;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("name", &JobConfig::name, "the job's name").require(),
        field("model", &JobConfig::model, "model architecture: a catalog name (llama3-405b) or an inline definition")
            .require(),
        field("gpus", &JobConfig::gpus, "GPUs the job runs on (= tp x cp x pp x dp)")
            .require()
            .at_least(1)
            .at_most(kMaxDegree),
        field("parallelism", &JobConfig::parallelism, "how the model and batch are split across the GPUs"),
        field("micro_batch", &JobConfig::micro_batch, "sequences per micro-batch").at_least(1).at_most(kMaxBatch),
        field("global_batch", &JobConfig::global_batch, "sequences per training step, all replicas together")
            .require()
            .at_least(1)
            .at_most(kMaxBatch),
        field("seq_len", &JobConfig::seq_len, "tokens per sequence (default: the model's)").at_least(0).at_most(100'000'000),
        field("precision", &JobConfig::precision,
              "datatype of the matrix multiplies (bf16, fp16, fp8, tf32, fp32); with fp8 the attention core "
              "stays bf16 (Transformer Engine's default)"),
        field("recompute", &JobConfig::recompute,
              "activation recomputation: none; selective (the norms, the MLP activation function and, when not "
              "fused, the attention core are recomputed: Megatron-Core's core_attn, layernorm and moe_act for every "
              "MLP; its default, core_attn alone, saves nothing with flash attention, as none here); or full (each "
              "layer's input kept, its forward recomputed)"),
        field("attention", &JobConfig::attention, "attention kernel: flash (fused) or unfused (batched GEMMs)"),
        field("grad_dtype", &JobConfig::grad_dtype,
              "datatype of accumulated and reduced gradients (fp32: Megatron's default with bf16)"),
        field("overlap_grad_reduce", &JobConfig::overlap_grad_reduce,
              "reduce each layer's gradients while backward goes on (else after the last micro-batch)"),
        field("overlap_param_gather", &JobConfig::overlap_param_gather,
              "ZeRO-1/2: all-gather the updated parameters behind the next step's first forward passes "
              "(Megatron-LM's --overlap-param-gather), else after the optimizer"),
        field("train_tokens", &JobConfig::train_tokens, "tokens to train on, for time_to_train (15.6T)"),
        field("submit", &JobConfig::submit, "when the job enters the scheduler's queue")
            .at_least(sim::Time::zero()),
        field("count", &JobConfig::count,
              "identical copies of the job (a hyperparameter search), named NAME-0 .. NAME-<count-1>")
            .at_least(1)
            .at_most(100'000),
    };
  }
};

struct WorkloadConfig {
  std::vector<JobConfig> jobs;

  static auto fields() {
    return std::tuple{config::field("jobs", &WorkloadConfig::jobs, "training jobs, placed on the GPUs in order (queued when they do not all fit)")};
  }
};

/// A problem with a job's values: the key path below the job (e.g. "parallelism.dp"), what is
/// wrong and a suggestion.
struct JobProblem {
  std::string path;
  std::string message;
  std::string hint;
  /// For a problem of how several keys go together: those keys (relative to the job, as
  /// `path`), so that an error can point at the one a --set changed.
  std::vector<std::string> keys;
};

/// The sequence length the job trains at.
std::int64_t sequence_length(const JobConfig& job, const ModelSpec& model);

/// Micro-batches each pipeline runs per step: global_batch / (dp x micro_batch).
std::int64_t micro_batches(const JobConfig& job);

/// Checks `job` against its model and the GPUs of one node. Empty when it is consistent.
std::vector<JobProblem> validate_job(const JobConfig& job, const ModelSpec& model, std::int64_t gpus_per_node);

}  // namespace clustersim::workload
