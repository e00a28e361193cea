#include "models/workload/costs.hpp"

#include <algorithm>

#include "sim/check.hpp"

namespace clustersim::workload {

namespace {

using compute::AttentionShape;
using compute::Dtype;
using compute::GemmShape;

double as_double(std::int64_t v) { return static_cast<double>(v); }

/// Forward, backward and recomputation costs accumulated op by op for one layer.
struct LayerBuilder {
  const compute::ComputeProfile& profile;
  Dtype dtype;
  PassCost forward;
  PassCost backward;
  PassCost selective;  // what selective recomputation repeats before backward

  double gemm_flops(const GemmShape& g) const {
    return 2.0 * as_double(g.m) * as_double(g.n) * as_double(g.k) * as_double(g.batch);
  }
  /// A weight GEMM: forward once, backward as data gradient (m x k x n) and weight
  /// gradient (k x n x m).
  void gemm(const GemmShape& g) {
    forward.compute_s += compute::gemm_seconds(g, dtype, profile);
    forward.hardware_flops += gemm_flops(g);
    const GemmShape dgrad{g.m, g.k, g.n, g.batch};
    const GemmShape wgrad{g.k, g.n, g.m, g.batch};
    backward.compute_s += compute::gemm_seconds(dgrad, dtype, profile) + compute::gemm_seconds(wgrad, dtype, profile);
    backward.hardware_flops += gemm_flops(dgrad) + gemm_flops(wgrad);
  }
  /// A memory-bound op moving `bytes` forward and twice that backward.
  void elementwise(double bytes, bool recomputed_when_selective) {
    const double f = compute::memory_seconds(bytes, profile);
    forward.compute_s += f;
    backward.compute_s += compute::memory_seconds(2.0 * bytes, profile);
    if (recomputed_when_selective) selective.compute_s += f;
  }
  void comm(Group g, network::Op fwd_op, network::Op bwd_op, double bytes, double overlap_s = 0.0) {
    forward.comm.push_back({g, fwd_op, bytes, 1, overlap_s});
    backward.comm.push_back({g, bwd_op, bytes, 1, overlap_s});
  }
};

void add_pass(PassCost& into, const PassCost& from) {
  into.compute_s += from.compute_s;
  into.hardware_flops += from.hardware_flops;
  for (const CommCall& c : from.comm) {
    auto it = std::find_if(into.comm.begin(), into.comm.end(), [&](const CommCall& x) {
      return x.group == c.group && x.op == c.op && x.bytes == c.bytes && x.overlap_s == c.overlap_s;
    });
    if (it != into.comm.end()) {
      it->count += c.count;
    } else {
      into.comm.push_back(c);
    }
  }
}

}  // namespace

std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp) {
  const std::int64_t multiple = 128 * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

std::vector<std::int64_t> chunk_layers(std::int64_t layers, std::int64_t chunks) {
  CLUSTERSIM_CHECK(chunks >= 1 && layers >= 1, "a model has layers and chunks");
  const std::int64_t base = (layers + chunks - 1) / chunks;
  std::vector<std::int64_t> out(static_cast<std::size_t>(chunks), base);
  std::int64_t deficit = base * chunks - layers;
  // Take from the outermost chunks inwards: first, last, second, second-to-last, ...,
  // and round again while layers remain to take (never below zero).
  for (std::int64_t i = 0; deficit > 0; ++i) {
    const std::int64_t round = i % chunks;
    const std::int64_t j = (round % 2 == 0) ? round / 2 : chunks - 1 - round / 2;
    auto& n = out[static_cast<std::size_t>(j)];
    if (n > 0) {
      --n;
      --deficit;
    }
  }
  return out;
}

std::vector<ChunkCost> chunk_costs(const JobConfig& job, const ModelSpec& model, const compute::ComputeProfile& profile) {
  using network::Op;
  const Parallelism& p = job.parallelism;
  const Dtype dtype = job.precision;  // the linear layers' GEMMs
  // The attention core (flash, or unfused Q K^T and P V) stays in bf16 under fp8: Transformer
  // Engine's fp8_autocast runs the linear layers' GEMMs in FP8 and its DotProductAttention in
  // the higher precision unless FP8 attention is asked for (the recipe's fp8_dpa, "default =
  // False", Megatron-LM's opt-in --fp8-dot-product-attention): Transformer Engine docs,
  // transformer_engine.common.recipe (DelayedScaling and the other FP8 recipes). The MFU
  // denominator stays the fp8 peak (step.hpp).
  const Dtype attention_dtype = job.precision == Dtype::fp8 ? Dtype::bf16 : job.precision;
  const double eb = compute::dtype_bytes(job.precision == Dtype::fp8 ? Dtype::bf16 : job.precision);  // activations
  const std::int64_t seq = sequence_length(job, model);
  const std::int64_t kv_heads = kv_head_count(model);
  const std::int64_t dqk = qk_head_dim(model);   // query/key width per head
  const std::int64_t dv = value_head_dim(model);  // value (and attention output) width per head
  const std::int64_t s_loc = seq / p.cp;
  const std::int64_t T = job.micro_batch * s_loc;
  const std::int64_t a_loc = model.heads / p.tp;
  // Key/value heads per TP rank: kv/t, or one replicated on each of the t/kv ranks that share
  // it when t > kv (validate_job admits t a multiple of kv), each holding the head whole, as
  // vLLM's QKVParallelLinear does ("if tp_size >= self.total_num_kv_heads: self.num_kv_heads =
  // 1", num_kv_head_replicas = tp_size / kv; Megatron-Core instead requires kv divisible by t,
  // divide(num_query_groups, world_size)). Its K and V weights, GEMM columns, activations and
  // CP ring blocks are all those of the rank's heads.
  const std::int64_t kv_loc = std::max<std::int64_t>(1, kv_heads / p.tp);
  const std::int64_t h = model.hidden;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double X = as_double(T) * as_double(h);
  const double Xs = sp ? X / as_double(p.tp) : X;
  const double t = as_double(p.tp);
  const double tokens_h_bytes = X * eb;  // one full activation tensor of width h
  // Dropout's masks, 1 byte per element (PyTorch's bool mask; Korthikanti et al. 2022,
  // section 4.1, count them so): kept for backward and written by the dropout kernels, for a
  // model trained with dropout only.
  const double mask_bytes = model.dropout ? 1.0 : 0.0;
  // Multi-head latent attention (DeepSeek-V2/V3) as Megatron-Core runs it
  // (megatron/core/transformer/multi_latent_attention.py, MLASelfAttention with the
  // gpt_layer_specs MLA spec): the down projections W^DQ and W^DKV (with the decoupled RoPE
  // key W^KR) are plain linears replicated on every TP rank, applied to the rank's own
  // tokens (T/t with sequence parallelism: "q_compressed: [s / TP, b, q_lora_rank]"); their
  // latents are normed and enter the TP region, whose column-parallel up projections
  // (W^UQ, W^UK W^UV) make the rank's heads. The TP region's entry then carries the latents,
  // r_q + r_kv + d_r wide, instead of the hidden state (still h wide for a projection that
  // is full-rank).
  const bool q_low = model.q_lora_rank > 0;
  const bool kv_low = model.kv_lora_rank > 0;
  const std::int64_t latent_width =
      (q_low ? model.q_lora_rank : 0) + (kv_low ? model.kv_lora_rank + model.rope_head_dim : 0);
  const std::int64_t attention_entry_width = latent_width + (q_low && kv_low ? 0 : h);
  const std::int64_t T_own = sp ? std::max<std::int64_t>(1, T / p.tp) : T;  // the rank's own (sequence-parallel) tokens

  // Megatron's tensor-parallel regions (Shoeybi et al. 2019, Figure 3: f and g; Korthikanti
  // et al. 2022, Figure 5: g and g-bar). Entering (before the QKV or MLP-up GEMM): with
  // sequence parallelism an all-gather forward and a reduce-scatter backward; without, f:
  // nothing forward (the input is replicated) and an all-reduce of the input's gradient
  // backward. Leaving (after the output projection or MLP-down GEMM): a reduce-scatter
  // forward and an all-gather backward; without, g: an all-reduce forward and nothing
  // backward. Per dense layer without sequence parallelism: 2 all-reduces forward and 2
  // backward (full recomputation repeats the forward's); with it, 2 all-gathers and 2
  // reduce-scatters each way, the same bytes on a ring. (An MoE block's differ: below.)
  const auto tp_enter = [&](LayerBuilder& L, double bytes) {
    if (p.tp <= 1) return;
    if (sp) {
      L.comm(Group::tp, Op::all_gather, Op::reduce_scatter, bytes);
    } else {
      L.backward.comm.push_back({Group::tp, Op::all_reduce, bytes, 1, 0.0});
    }
  };
  const auto tp_leave = [&](LayerBuilder& L) {
    if (p.tp <= 1) return;
    if (sp) {
      L.comm(Group::tp, Op::reduce_scatter, Op::all_gather, tokens_h_bytes);
    } else {
      L.forward.comm.push_back({Group::tp, Op::all_reduce, tokens_h_bytes, 1, 0.0});
    }
  };

  // One layer of each kind (dense MLP or MoE); chunks are sums of layers.
  const auto layer = [&](bool moe, double& activations, double& working, double& params, double& expert_params) {
    LayerBuilder L{profile, dtype, {}, {}, {}};
    params = 0.0;
    expert_params = 0.0;
    // Attention block.
    L.elementwise(2.0 * Xs * eb, true);  // norm
    double latents_kept = 0.0;  // MLA: bytes kept of the latents (their norms' and up projections' inputs)
    if (q_low || kv_low) {
      // MLA's down projections on the rank's own tokens, replicated weights; the latents' norms.
      if (q_low) {
        L.gemm({T_own, model.q_lora_rank, h, 1});
        params += as_double(h) * as_double(model.q_lora_rank) + as_double(model.q_lora_rank);
      }
      if (kv_low) {
        L.gemm({T_own, model.kv_lora_rank + model.rope_head_dim, h, 1});
        params += as_double(h) * as_double(model.kv_lora_rank + model.rope_head_dim) + as_double(model.kv_lora_rank);
      }
      const double normed = as_double(T_own) * as_double(model.q_lora_rank + model.kv_lora_rank) * eb;
      L.elementwise(2.0 * normed, true);
      // Kept: each latent norm's input (dropped by selective recomputation, as the norms') and
      // each up projection's input (the rank's share with sequence parallelism, as Megatron's
      // column-parallel linears keep it).
      latents_kept = normed + as_double(T_own) * as_double(latent_width) * eb;
    }
    tp_enter(L, as_double(T) * as_double(attention_entry_width) * eb);
    // Up projections from the latents; full-rank projections from the hidden state in one GEMM.
    if (q_low) {
      L.gemm({T, a_loc * dqk, model.q_lora_rank, 1});
      params += as_double(model.q_lora_rank) * as_double(a_loc * dqk);
    }
    if (kv_low) {
      const std::int64_t kv_n = a_loc * (dqk - model.rope_head_dim + dv);
      L.gemm({T, kv_n, model.kv_lora_rank, 1});
      params += as_double(model.kv_lora_rank) * as_double(kv_n);
    }
    const std::int64_t full_n = (q_low ? 0 : a_loc * dqk) + (kv_low ? 0 : kv_loc * (dqk + dv));
    if (full_n > 0) {
      L.gemm({T, full_n, h, 1});
      params += as_double(h) * as_double(full_n);
    }
    // The attention kernel's model (models/compute) has one head width: its FLOPs (4 bh q kv d)
    // and bytes (Q, K, V, O: 2 bh (q + kv) d) are linear in it, so the mean of the query/key
    // and value widths gives those of Q K^T over dqk and P V over dv exactly (to half a
    // column when their sum is odd).
    const AttentionShape att{job.micro_batch * a_loc, s_loc, seq, (dqk + dv) / 2, true};
    double attention_fwd = 0.0;
    if (job.attention == AttentionKernel::flash) {
      attention_fwd = compute::attention_seconds(att, attention_dtype, false, profile);
      // What the kernel executes: a causal one skips the masked half of the score matrix (its
      // time, above, does too). Model FLOPs (MFU) count the whole of it, as PaLM does.
      const double flops = (att.causal ? 0.5 : 1.0) * 2.0 * as_double(att.batch_heads) * as_double(s_loc) *
                           as_double(seq) * as_double(dqk + dv);
      L.forward.compute_s += attention_fwd;
      L.forward.hardware_flops += flops;
      L.backward.compute_s += compute::attention_seconds(att, attention_dtype, true, profile);
      L.backward.hardware_flops += 2.5 * flops;
    } else {
      const std::int64_t bh = job.micro_batch * a_loc;
      const GemmShape qk{s_loc, seq, dqk, bh};
      const GemmShape pv{s_loc, dv, seq, bh};
      const double elems = as_double(bh) * as_double(s_loc) * as_double(seq);
      // Softmax reads the scores and writes the probabilities (2 eb); dropout, where the model
      // has it, reads them and writes its output and mask (eb + eb + 1): 9 bytes an element in
      // 16-bit, Korthikanti et al.'s, or 4 without dropout.
      const double score_bytes = 2.0 * eb + (model.dropout ? 2.0 * eb + mask_bytes : 0.0);
      const double soft_f = compute::memory_seconds(score_bytes * elems, profile);
      const double gf =
          compute::gemm_seconds(qk, attention_dtype, profile) + compute::gemm_seconds(pv, attention_dtype, profile);
      attention_fwd = gf + soft_f;
      const double flops = L.gemm_flops(qk) + L.gemm_flops(pv);
      L.forward.compute_s += attention_fwd;
      L.forward.hardware_flops += flops;
      L.backward.compute_s += 2.0 * gf + compute::memory_seconds(2.0 * score_bytes * elems, profile);
      L.backward.hardware_flops += 2.0 * flops;
      L.selective.compute_s += attention_fwd;
      L.selective.hardware_flops += flops;
    }
    // The rank's K and V (its kv_loc heads, or MLA's a_loc up-projected ones), bytes.
    const std::int64_t kv_loc_heads = kv_low ? a_loc : kv_loc;
    const double kv_bytes = as_double(T) * as_double(kv_loc_heads * (dqk + dv)) * eb;
    if (p.cp > 1) {
      // Ring attention: each rank's K and V blocks visit every other rank, forward; an
      // all-gather of the K/V blocks moves the same bytes. Backward, the K/V blocks go round
      // again (each rank's dQ needs every K and V) with their gradients' partial sums beside
      // them, one message per ring step: Transformer Engine's AttnFuncWithCPAndKVP2P.backward
      // sends K, V, dK and dV together (its buffers hold 2 x kv), twice the forward's bytes,
      // a reduce-scatter of both.
      L.forward.comm.push_back({Group::cp, Op::all_gather, kv_bytes * as_double(p.cp), 1, attention_fwd});
      L.backward.comm.push_back(
          {Group::cp, Op::reduce_scatter, 2.0 * kv_bytes * as_double(p.cp), 1, 2.0 * attention_fwd});
    }
    L.gemm({T, h, a_loc * dv, 1});
    params += as_double(a_loc * dv) * as_double(h);
    tp_leave(L);
    // Residual add (read two, write one) fused with dropout where the model has it (Megatron's
    // bias-dropout-add: its mask written too).
    const double residual_bytes = Xs * (3.0 * eb + mask_bytes);
    L.elementwise(residual_bytes, false);
    // MLP block.
    L.elementwise(2.0 * Xs * eb, true);  // norm
    // An MoE block follows Megatron-Core's all-to-all token dispatcher (token_dispatcher.py,
    // MoEAlltoAllTokenDispatcher: permute, EP all-to-all, TP all-gather, experts, TP
    // reduce-scatter, EP all-to-all, unpermute). It works on the sequence-parallel layout:
    // each TP rank routes and dispatches only its T/t tokens, so the all-to-all carries
    // T k h / t per rank whatever tp is, and the TP all-gather after it (T k h) gives the
    // TP-sharded experts every token routed to them. Megatron-Core runs MoE with TP only
    // with sequence parallelism (TransformerConfig: "When using expert parallelism and tensor
    // parallelism, sequence parallelism must be used"; the MoE README says the same). A job
    // here without it is modelled the same inside the block, rather than refused (a plan or
    // sweep over tp keeps its points): each TP rank dispatches its 1/t share of the tokens it
    // holds replicated (taking a share moves nothing), so no token is sent twice; the block's
    // output, sharded, is replicated again by an all-gather of T h forward, and the input's
    // gradient gathered from the shares backward. Shared experts are a dense MLP in a TP
    // region of their own (Megatron's SharedExpertMLP), whose entry and exit (all-gather and
    // reduce-scatter with sequence parallelism, f and g's all-reduces without) also carry the
    // routed part: nothing is added for it then.
    const bool moe_own_region = moe && model.shared_experts == 0;
    if (moe_own_region) {
      if (p.tp > 1 && !sp) L.backward.comm.push_back({Group::tp, Op::all_gather, tokens_h_bytes, 1, 0.0});
    } else {
      tp_enter(L, tokens_h_bytes);
    }
    const double mats_in = model.ffn == Mlp::swiglu ? 2.0 : 1.0;
    double fc1_elems = 0.0;  // fc1 outputs kept, elements
    double act_elems = 0.0;  // activation outputs kept, elements
    double expert_inputs = 0.0;
    const auto dense_mlp = [&](std::int64_t width, std::int64_t tokens, std::int64_t batch) {
      const std::int64_t f_loc = width / p.tp;
      L.gemm({tokens, static_cast<std::int64_t>(mats_in) * f_loc, h, batch});
      L.elementwise((mats_in + 1.0) * as_double(tokens * f_loc * batch) * eb, true);  // activation function
      L.gemm({tokens, h, f_loc, batch});
      fc1_elems += mats_in * as_double(tokens * f_loc * batch);
      act_elems += as_double(tokens * f_loc * batch);
      return (mats_in + 1.0) * as_double(h) * as_double(width) / t * as_double(batch);
    };
    if (!moe) {
      params += dense_mlp(model.ffn_hidden, T, 1);
    } else {
      // The router scores the rank's own T/t tokens.
      L.gemm({std::max<std::int64_t>(1, T / p.tp), model.experts, h, 1});
      params += as_double(h) * as_double(model.experts);
      const double routed = as_double(T) * as_double(model.top_k) * as_double(h) * eb;  // T k h: the TP group's
      const double dispatch = routed / t;  // per TP rank
      if (p.ep > 1) L.comm(Group::ep, Op::all_to_all, Op::all_to_all, dispatch);
      if (p.tp > 1) L.comm(Group::tp, Op::all_gather, Op::reduce_scatter, routed);
      const std::int64_t local_experts = model.experts / p.ep;
      const std::int64_t per_expert =
          std::max<std::int64_t>(1, T * model.top_k * p.ep / model.experts);
      const double experts = dense_mlp(model.expert_ffn_hidden, per_expert, local_experts);
      if (p.tp > 1) L.comm(Group::tp, Op::reduce_scatter, Op::all_gather, routed);
      if (p.ep > 1) L.comm(Group::ep, Op::all_to_all, Op::all_to_all, dispatch);
      params += experts;
      if (p.ep > 1) expert_params = experts;
      if (model.shared_experts > 0) params += dense_mlp(model.shared_experts * model.expert_ffn_hidden, T, 1);
      expert_inputs = routed;  // the experts' gathered input, kept for their weight gradients
    }
    if (moe_own_region) {
      if (p.tp > 1 && !sp) L.forward.comm.push_back({Group::tp, Op::all_gather, tokens_h_bytes, 1, 0.0});
    } else {
      tp_leave(L);
    }
    L.elementwise(residual_bytes, false);  // dropout (if any) + residual add
    params += 2.0 * as_double(h);  // norm weights (replicated over TP)

    // Recomputation before backward.
    if (job.recompute == Recompute::full) {
      add_pass(L.backward, L.forward);
    } else if (job.recompute == Recompute::selective) {
      add_pass(L.backward, L.selective);
    }
    // Activations kept (bytes; the header's table with element size eb and 1-byte masks).
    // The attention core's inputs and output: Q (a_loc dqk), K and V, O (a_loc dv) per token.
    const double qo_bytes = as_double(T) * as_double(a_loc * (dqk + dv)) * eb;
    const double s2 = job.attention == AttentionKernel::unfused
                          ? (model.dropout ? 2.0 * eb + mask_bytes : eb) * as_double(job.micro_batch * a_loc) *
                                as_double(s_loc) * as_double(seq)
                          : 0.0;
    const double all = Xs * (4.0 * eb + 2.0 * mask_bytes) + qo_bytes + kv_bytes + (fc1_elems + act_elems) * eb +
                       expert_inputs + s2 + latents_kept;
    switch (job.recompute) {
      case Recompute::none:
        activations = all;
        break;
      case Recompute::selective:
        // The latent norms' inputs are recomputed with the norms; the up projections' kept.
        activations = Xs * (2.0 * eb + 2.0 * mask_bytes) + qo_bytes + kv_bytes + fc1_elems * eb + expert_inputs +
                      (latent_width > 0 ? as_double(T_own) * as_double(latent_width) * eb : 0.0);
        break;
      case Recompute::full:
        activations = Xs * eb;
        break;
    }
    working = all - activations;  // rebuilt for the layer's backward, one layer at a time
    return L;
  };

  double dense_act = 0.0, dense_params = 0.0, no_experts = 0.0, moe_act = 0.0, moe_params = 0.0, moe_experts = 0.0;
  double dense_working = 0.0, moe_working = 0.0;
  const LayerBuilder dense = layer(false, dense_act, dense_working, dense_params, no_experts);
  const LayerBuilder moe_layer =
      model.experts > 0 ? layer(true, moe_act, moe_working, moe_params, moe_experts) : dense;

  const std::int64_t chunks = p.pp * p.virtual_stages;
  const std::vector<std::int64_t> per_chunk = chunk_layers(model.layers, chunks);
  std::vector<ChunkCost> out(static_cast<std::size_t>(chunks));
  std::int64_t first_layer = 0;
  const std::int64_t V = padded_vocab(model.vocab, p.tp);
  for (std::int64_t ci = 0; ci < chunks; ++ci) {
    ChunkCost& c = out[static_cast<std::size_t>(ci)];
    c.layers = per_chunk[static_cast<std::size_t>(ci)];
    for (std::int64_t l = first_layer; l < first_layer + c.layers; ++l) {
      const bool is_moe = model.experts > 0 && l >= model.dense_layers;
      const LayerBuilder& L = is_moe ? moe_layer : dense;
      add_pass(c.forward, L.forward);
      add_pass(c.backward, L.backward);
      c.activation_bytes += is_moe ? moe_act : dense_act;
      c.activation_working_bytes = std::max(c.activation_working_bytes, is_moe ? moe_working : dense_working);
      c.parameters += is_moe ? moe_params : dense_params;
      c.expert_parameters += is_moe ? moe_experts : 0.0;
      c.layer_gradient_params.push_back(is_moe ? moe_params - moe_experts : dense_params);
      c.layer_expert_gradient_params.push_back(is_moe ? moe_experts : 0.0);
      c.layer_backward_compute_s.push_back(L.backward.compute_s);
    }
    std::reverse(c.layer_gradient_params.begin(), c.layer_gradient_params.end());
    std::reverse(c.layer_expert_gradient_params.begin(), c.layer_expert_gradient_params.end());
    std::reverse(c.layer_backward_compute_s.begin(), c.layer_backward_compute_s.end());
    first_layer += c.layers;
    if (ci == 0) {  // embedding lookup: read rows, write activations
      LayerBuilder E{profile, dtype, {}, {}, {}};
      E.elementwise(2.0 * Xs * eb, false);
      // Each rank looks up the tokens of its V/t rows (zeros elsewhere): the partial
      // embeddings are summed over TP as a layer's output is (Megatron's
      // VocabParallelEmbedding: reduce-scatter with sequence parallelism, else all-reduce).
      tp_leave(E);
      add_pass(c.forward, E.forward);
      add_pass(c.backward, E.backward);
      c.parameters += as_double(V) * as_double(h) / t;
      c.layer_gradient_params.push_back(as_double(V) * as_double(h) / t);
      c.layer_expert_gradient_params.push_back(0.0);
      c.layer_backward_compute_s.push_back(E.backward.compute_s);
    }
    if (ci == chunks - 1) {  // final norm, output layer, cross-entropy in fp32
      LayerBuilder O{profile, dtype, {}, {}, {}};
      O.elementwise(2.0 * Xs * eb, false);
      // The column-parallel output layer takes the whole T x h input, as a layer's first
      // GEMM does (all-gather with sequence parallelism; backward, the gradient's reduction).
      tp_enter(O, tokens_h_bytes);
      O.gemm({T, V / p.tp, h, 1});
      O.elementwise(as_double(T) * as_double(V / p.tp) * (eb + 4.0 + 4.0), false);
      // The vocab-parallel cross-entropy all-reduces three fp32 values per token over TP:
      // the logits' maximum, the target's logit and the sum of exponentials (Megatron-LM,
      // tensor_parallel/cross_entropy.py).
      if (p.tp > 1) O.forward.comm.push_back({Group::tp, Op::all_reduce, as_double(T) * 4.0, 3, 0.0});
      add_pass(c.forward, O.forward);
      add_pass(c.backward, O.backward);
      if (!model.tied_embeddings || chunks > 1) {
        c.parameters += as_double(V) * as_double(h) / t;
        c.layer_gradient_params.insert(c.layer_gradient_params.begin(), as_double(V) * as_double(h) / t);
        c.layer_expert_gradient_params.insert(c.layer_expert_gradient_params.begin(), 0.0);
        c.layer_backward_compute_s.insert(c.layer_backward_compute_s.begin(), O.backward.compute_s);
      } else {
        // Tied embeddings on one chunk: the output layer's gradient joins the embedding's,
        // reduced last; its backward compute runs first, ahead of the first bucket's layer.
        c.layer_backward_compute_s.front() += O.backward.compute_s;
      }
      c.activation_bytes += as_double(T) * as_double(V / p.tp) * (eb + 4.0);
    }
  }
  return out;
}

}  // namespace clustersim::workload
