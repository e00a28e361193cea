// What one micro-batch costs on one GPU: compute time, the collectives it waits for, the
// FLOPs it does and the activations it leaves behind, per pipeline model chunk.
//
// Notation: b micro_batch, s seq_len, c cp, t tp, h hidden, a heads, d query/key head width
// and d_v value head width (head_dim, v_head_dim; h / a by default), kv key/value heads and
// kv_t = max(kv / t, 1) of them per TP rank (one replicated on the t / kv ranks sharing it
// when t > kv), f ffn_hidden, V vocab, E experts, k top_k, f_e expert_ffn_hidden.
// Each GPU holds s/c of the sequence, so its GEMMs see T = b s / c tokens; tensors of
// width h are sharded over TP (T/t tokens each) with sequence parallelism, else replicated.
//
// Forward of one layer on one GPU (Megatron-LM's tensor-parallel layout, Shoeybi et al.
// 2019; Korthikanti et al. 2022 for sequence parallelism):
//   norm, [TP all-gather | -], QKV GEMM T x h x (a/t d + kv_t (d + d_v)), attention core,
//   output projection T x (a/t d_v) x h, [TP reduce-scatter | all-reduce], residual,
//   norm, [TP all-gather | -], MLP up T x h x f/t (x2 for swiglu's gate), activation,
//   MLP down T x (f/t) x h, [TP reduce-scatter | all-reduce], residual.
// Multi-head latent attention (q_lora_rank, kv_lora_rank; Megatron-Core's MLASelfAttention):
// the replicated down projections on the rank's T/t tokens (sequence parallel; T without),
// norms of the latents, the TP all-gather of the latents (r_q + r_kv + d_r wide, not h), the
// column-parallel up projections T x r_q x a/t d and T x r_kv x a/t (d - d_r + d_v).
// Attention core: flash (one fused kernel, models/compute) or unfused: batched GEMMs
// Q K^T and P V over b a/t heads plus softmax and, for a model with dropout, dropout over
// b (a/t) (s/c) s elements (4 eb + 1 bytes each forward, 9 in 16-bit: softmax read and write,
// dropout read, write and 1-byte mask; 2 eb without dropout).
// With context parallelism each GPU's queries attend to all s keys; the key/value blocks
// go round the CP ring (Liu et al., Ring Attention, 2023) overlapped with the attention
// compute: only the part of the ring exchange longer than the attention is exposed.
// MoE layers replace the MLP, as Megatron-Core's all-to-all token dispatcher runs them, on
// the sequence-parallel layout (T/t tokens per TP rank): router GEMM (T/t) x h x E,
// all-to-all dispatch of the rank's T k / t routed tokens over the EP group, TP all-gather
// of the T k tokens (T k h elements), E/ep local experts as a grouped GEMM of T k ep / E
// tokens each (TP-sharded like the dense MLP), TP reduce-scatter, all-to-all combine;
// shared experts as a dense MLP in a TP region of its own. Without sequence parallelism
// (which Megatron-Core requires for MoE with TP) the block is the same inside; an
// all-gather of T h replicates its output (forward) and gathers its input's gradient
// (backward), or the shared experts' all-reduces do. Routing is assumed balanced (no
// capacity factor, no dropped tokens).
// Precision: the GEMMs of the linear layers (and experts) run in the job's precision; the
// attention core runs in bf16 when that is fp8 (Transformer Engine's default: FP8 dot
// product attention is opt-in).
// Backward: each GEMM twice (data and weight gradients), attention backward (flash: 2.5x
// forward; unfused: four batched GEMMs and the softmax backward), element-wise ops twice
// their forward bytes, and TP collectives mirroring the forward's: with sequence
// parallelism each all-gather becomes a reduce-scatter and vice versa; without it, the
// all-reduce moves from after the block's output GEMM (forward) to before its input GEMM
// (backward: the input's gradient), 2 per layer each way (Megatron's f and g). Recomputation adds, before backward: full, the whole forward
// (collectives included); selective, the norms, the MLP activation and (unfused) the
// attention core.
// First chunk: embedding lookup (memory-bound), its partial sums reduced over TP as a layer's
// output (reduce-scatter with sequence parallelism, else all-reduce; backward all-gather with
// it). Last chunk: the TP entry of a layer's first GEMM (all-gather with sequence parallelism;
// backward reduce-scatter, or all-reduce without it), output GEMM T x h x V/t (vocab padded to
// a multiple of 128 t) and the cross-entropy (memory-bound, fp32; three all-reduces of T fp32
// values over TP, Megatron's vocab-parallel cross-entropy).
//
// Activations kept per layer and micro-batch (bytes, 16-bit; X = T h, X_s = X/t with sequence
// parallelism else X; Korthikanti et al. 2022, section 4.1, generalised to GQA, head widths,
// swiglu and models without dropout):
//   none       8 X_s + 2 m X_s + 2 T a/t (d + d_v) + 2 T kv_t (d + d_v) + fc1 + 2 T f/t
//              [+ (4 + m) b (a/t) (s/c) s unfused]
//              m = 1 (the two 1-byte dropout masks, attention output and MLP output, and the
//              attention-probability mask) for a model with dropout, else 0 (and the s^2 term
//              keeps the softmax output only); fc1 = 2 T f/t (gelu) or 4 T f/t (swiglu); MoE
//              layers count T k tokens through the experts and the dispatched input 2 T k h;
//              MLA adds its latents, each norm's input and each up projection's
//   selective  drops the norm outputs (4 X_s, and MLA's latent norms'), the activation output
//              (2 T f/t) and the s^2 attention terms
//   full       2 X_s (the layer input)
// where "none", for GPT (gelu, f = 4h, a = kv, d = d_v = h/a, dropout, c = t = 1, unfused), is
// Korthikanti's s b h (34 + 5 a s / h), and s b h (32 + 2 a s / h) without dropout. While a
// layer's backward runs, a stage also holds what recomputation rebuilds for it: one layer's
// "none" set less what it keeps (the working set, ChunkCost::activation_working_bytes;
// Korthikanti et al. count it for full recomputation), one layer at a time.
//
// Hardware FLOPs (HFU), what the kernels execute: 2 m n k per GEMM; attention 2 b (a/t) (s/c)
// s (d + d_v) forward over the score matrix, half of it for a causal flash kernel (which skips the
// masked blocks), all of it unfused; x2.5 backward for flash (its recomputation), x2
// unfused. Model FLOPs (MFU, step.hpp) count causal attention in full, as PaLM does, so a
// causal flash job without recomputation has an HFU below its MFU.
//
// LIMITATIONS: no kernel fusion beyond flash attention and fused activations; element-wise
// ops are one kernel each at achieved HBM bandwidth; balanced expert routing; the TP
// all-gathers that Megatron repeats in backward for weight gradients are taken as hidden
// behind the data-gradient GEMMs; a flash kernel's time does not depend on dropout (it
// regenerates its mask from the RNG state, keeping none); gradients of weights replicated over
// TP ranks are not all-reduced over TP: MLA's down projections (partial over the ranks'
// tokens; DeepSeek-V3: 15M parameters a layer) and K/V heads shared by t/kv ranks; the
// embedding's dropout is not modelled.
#pragma once

#include <cstdint>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/network/collective.hpp"
#include "models/workload/job.hpp"
#include "models/workload/model.hpp"

namespace clustersim::workload {

/// The communicator a collective runs on. edp, the expert-data-parallel group, reduces the
/// gradients of an MoE layer's experts: the dp x cp / ep ranks that hold the same experts
/// (those at the same place in their EP groups), as Megatron-LM's expert data parallelism.
enum class Group { tp, cp, ep, pp, dp, edp };

/// `count` calls of `op` with nccl-tests size `bytes` on `group`, each hidden behind
/// `overlap_s` seconds of compute (0: fully exposed).
struct CommCall {
  Group group = Group::tp;
  network::Op op = network::Op::all_reduce;
  double bytes = 0.0;
  std::int64_t count = 1;
  double overlap_s = 0.0;
};

/// One pass (forward or backward) of one micro-batch through one model chunk on one GPU.
struct PassCost {
  double compute_s = 0.0;
  std::vector<CommCall> comm;
  double hardware_flops = 0.0;  ///< FLOPs executed, recomputation included
};

struct ChunkCost {
  std::int64_t layers = 0;
  PassCost forward;
  PassCost backward;         ///< recomputation included
  double activation_bytes = 0.0;  ///< kept from forward to backward, one micro-batch
  /// Held on top of the kept activations while one of the chunk's layers runs its backward:
  /// what recomputation rebuilds for that layer (its largest layer's; 0 without recompute).
  double activation_working_bytes = 0.0;
  double parameters = 0.0;        ///< held by this GPU (before ZeRO sharding), experts included
  /// The routed experts' share of `parameters` when ep > 1: reduced and sharded (ZeRO) over
  /// the expert-data-parallel group. 0 when ep = 1, where that group is the data-parallel one.
  double expert_parameters = 0.0;
  /// Per layer (in backward order), for bucketed reduction: the parameters reduced over the
  /// data-parallel group (dp x cp), and those over the expert-data-parallel group.
  std::vector<double> layer_gradient_params;
  std::vector<double> layer_expert_gradient_params;
  /// Per layer (in the same backward order): its backward compute, recomputation included,
  /// seconds; the step spreads a backward pass's layers over its length by these shares.
  std::vector<double> layer_backward_compute_s;
};

/// Layers in each of the pp x virtual_stages model chunks, in model order. Uneven counts
/// take layers from the first and last chunks first (they also hold the embedding and the
/// output layer; Llama 3 does the same, "The Llama 3 Herd of Models", section 3.3.2).
std::vector<std::int64_t> chunk_layers(std::int64_t layers, std::int64_t chunks);

/// Costs of every model chunk (index = model order, pp x virtual_stages of them).
std::vector<ChunkCost> chunk_costs(const JobConfig& job, const ModelSpec& model, const compute::ComputeProfile& profile);

/// Vocabulary padded to a multiple of 128 x tp (Megatron's make-vocab-size-divisible-by).
std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp);

}  // namespace clustersim::workload
