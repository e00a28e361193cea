// Training steps: the pipeline schedule, per-layer costs and memory, the simulated step and
// its breakdown, against the equations they implement.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "models/compute/profile.hpp"
#include "models/scenario/scenario.hpp"
#include "models/workload/costs.hpp"
#include "models/workload/step.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::workload;

namespace {

const std::string kSource = CLUSTERSIM_SOURCE_DIR;

scenario::LoadedScenario small_cluster(std::vector<std::string> sets = {}) {
  scenario::LoadOptions options;
  options.sets = std::move(sets);
  return scenario::load_scenario(kSource + "/tests/scenarios/training_small.yaml", options);
}

/// The compute profile of small_cluster()'s GPU.
compute::ComputeProfile small_profile() {
  const auto cluster = small_cluster();
  return compute::default_profile(cluster.node.gpu_name, cluster.node.gpu);
}

/// A GPT-like model with a small vocabulary, so that embedding and output layers are
/// negligible next to the transformer layers.
ModelSpec gpt(std::int64_t layers, std::int64_t hidden = 4096, std::int64_t heads = 32) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.ffn = Mlp::gelu;
  m.vocab = 128;
  m.seq_len = 2048;
  return m;
}

/// gpt(8) as a mixture of 8 swiglu experts of width 4096, top-2.
ModelSpec moe8() {
  ModelSpec m = gpt(8);
  m.ffn = Mlp::swiglu;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn_hidden = 4096;
  return m;
}

JobConfig job_for(std::int64_t tp, std::int64_t pp, std::int64_t dp, std::int64_t global_batch) {
  JobConfig j;
  j.name = "test";
  j.gpus = tp * pp * dp;
  j.parallelism.tp = tp;
  j.parallelism.pp = pp;
  j.parallelism.dp = dp;
  j.global_batch = global_batch;
  return j;
}

StepResult step(const scenario::LoadedScenario& s, const JobConfig& job, const ModelSpec& model,
                bool trace = false) {
  REQUIRE(validate_job(job, model, s.node.spec.gpus).empty());
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  StepInputs in;
  in.job = &job;
  in.model = &model;
  in.profile = &profile;
  in.fabric = &*s.fabric;
  in.network = &s.config.network;
  in.want_trace = trace;
  return simulate_step(in);
}

}  // namespace

TEST_CASE("1F1B: every stage runs each micro-batch forward then backward, warm-up pp - s - 1") {
  const std::int64_t pp = 4, M = 8;
  const auto order = pipeline_order(pp, 1, M);
  REQUIRE(order.size() == 4);
  for (std::int64_t s = 0; s < pp; ++s) {
    const auto& list = order[static_cast<std::size_t>(s)];
    CAPTURE(s);
    REQUIRE(list.size() == static_cast<std::size_t>(2 * M));
    // Warm-up: the first pp - s - 1 passes are forwards, then one more forward, then a backward.
    for (std::int64_t i = 0; i < pp - s; ++i) CHECK(list[static_cast<std::size_t>(i)].forward);
    CHECK_FALSE(list[static_cast<std::size_t>(pp - s)].forward);
    std::set<std::tuple<bool, std::int64_t>> seen;
    std::set<std::int64_t> done_forward;
    for (const PipelineOp& op : list) {
      CHECK(op.chunk == s);
      CHECK(seen.insert({op.forward, op.micro}).second);
      if (op.forward) done_forward.insert(op.micro);
      if (!op.forward) CHECK(done_forward.count(op.micro) == 1);
    }
  }
}

TEST_CASE("interleaved 1F1B: each stage runs its v chunks; Megatron's warm-up 2(pp - s - 1) + (v - 1) pp") {
  const std::int64_t pp = 2, v = 3, M = 4;
  const auto order = pipeline_order(pp, v, M);
  for (std::int64_t s = 0; s < pp; ++s) {
    const auto& list = order[static_cast<std::size_t>(s)];
    CAPTURE(s);
    REQUIRE(list.size() == static_cast<std::size_t>(2 * M * v));
    const std::int64_t warmup = 2 * (pp - s - 1) + (v - 1) * pp;
    for (std::int64_t i = 0; i <= warmup; ++i) CHECK(list[static_cast<std::size_t>(i)].forward);
    CHECK_FALSE(list[static_cast<std::size_t>(warmup + 1)].forward);
    std::set<std::tuple<bool, std::int64_t, std::int64_t>> seen;
    for (const PipelineOp& op : list) {
      CHECK(op.chunk % pp == s);
      CHECK(seen.insert({op.forward, op.micro, op.chunk}).second);
    }
    CHECK(seen.size() == static_cast<std::size_t>(2 * M * v));
  }
}

TEST_CASE("chunk_layers: even split, uneven ones take from the first and last chunks") {
  CHECK(chunk_layers(8, 4) == std::vector<std::int64_t>{2, 2, 2, 2});
  CHECK(chunk_layers(126, 128).front() == 0);
  CHECK(chunk_layers(126, 128).back() == 0);
  CHECK(chunk_layers(126, 128)[1] == 1);
  CHECK(chunk_layers(10, 4) == std::vector<std::int64_t>{2, 3, 3, 2});
  const auto v = chunk_layers(105, 35);
  CHECK(std::accumulate(v.begin(), v.end(), std::int64_t{0}) == 105);
}

TEST_CASE("activations per layer follow Korthikanti et al. 2022: s b h (34 + 5 a s / h), / t with SP") {
  const ModelSpec m = gpt(2, 4096, 32);
  const double s = 2048, b = 2, h = 4096, a = 32;
  const compute::ComputeProfile profile = small_profile();
  JobConfig j = job_for(1, 2, 1, 4);
  j.micro_batch = 2;
  j.attention = AttentionKernel::unfused;
  // Chunk 0 holds layer 0 and the embedding (which keeps no activation of its own).
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(s * b * h * (34 + 5 * a * s / h)));
  j.parallelism.tp = 4;
  j.parallelism.sequence_parallel = true;
  j.gpus = 8;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(s * b * h / 4 * (34 + 5 * a * s / h)));
  CHECK(chunk_costs(j, m, profile)[0].activation_working_bytes == 0.0);
  // Full recomputation keeps each layer's input: 2 s b h / t bytes; while a layer's backward
  // runs, it holds that layer's whole set again (Korthikanti et al., section 4.1): the rest.
  j.recompute = Recompute::full;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(2 * s * b * h / 4));
  CHECK(chunk_costs(j, m, profile)[0].activation_working_bytes ==
        Rel(s * b * h / 4 * (34 + 5 * a * s / h) - 2 * s * b * h / 4));
  // The first of 2 stages (1F1B, 2 micro-batches) peaks at its first backward: both
  // micro-batches' inputs kept and the working set of its one layer.
  {
    const std::vector<ChunkCost> chunks = chunk_costs(j, m, profile);
    const auto order = pipeline_order(2, 1, 2);
    const MemoryBreakdown mem = memory_per_gpu(j, chunks, order);
    REQUIRE(mem.stage == 0);
    CHECK(mem.activations == Rel(2 * (2 * s * b * h / 4) + s * b * h / 4 * (34 + 5 * a * s / h) - 2 * s * b * h / 4));
  }
  // Flash attention keeps no s^2 term.
  j.recompute = Recompute::none;
  j.attention = AttentionKernel::flash;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(s * b * h / 4 * 34));
}

TEST_CASE("a model without dropout keeps no masks: s b h (32 + 2 a s / h), and writes none") {
  // Korthikanti et al. 2022, section 4.1: of the 34 s b h, 2 s b h are the two 1-byte dropout
  // masks (attention output, MLP output); of the 5 a s^2 b, the attention-probability mask
  // (a s^2 b) and the dropout output (2 a s^2 b). Without dropout the probabilities (2 a s^2 b)
  // are all that P V and the softmax backward need.
  ModelSpec m = gpt(2, 4096, 32);
  m.dropout = false;
  const double s = 2048, b = 2, h = 4096, a = 32;
  const compute::ComputeProfile profile = small_profile();
  JobConfig j = job_for(1, 2, 1, 4);
  j.micro_batch = 2;
  j.attention = AttentionKernel::unfused;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(s * b * h * (32 + 2 * a * s / h)));
  j.parallelism.tp = 4;
  j.parallelism.sequence_parallel = true;
  j.gpus = 8;
  j.attention = AttentionKernel::flash;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes == Rel(s * b * h / 4 * 32));
  // Selective recomputation keeps the masks too when there are some: 2 s b h / t more.
  j.recompute = Recompute::selective;
  const double selective_without = chunk_costs(j, m, profile)[0].activation_bytes;
  m.dropout = true;
  CHECK(chunk_costs(j, m, profile)[0].activation_bytes - selective_without == Rel(2 * s * b * h / 4));
  // The fused residual adds (2 per layer) write a 1-byte mask per element of X_s = s b h / t
  // with dropout: forward, 2 X_s bytes more at HBM bandwidth (chunk 0 holds one layer).
  j.recompute = Recompute::none;
  const double with = chunk_costs(j, m, profile)[0].forward.compute_s;
  m.dropout = false;
  const double without = chunk_costs(j, m, profile)[0].forward.compute_s;
  CHECK(with - without == Rel(2 * s * b * h / 4 / profile.hbm_bandwidth.value()));
}

TEST_CASE("K/V heads replicated over TP ranks when tp > kv_heads: each rank holds one head's K and V weights") {
  // 32 heads of 128, 2 K/V heads, tp 8: each rank computes with max(2 / 8, 1) = 1 K/V head
  // (the 4 ranks sharing a head each hold it whole), so it holds that head's weights:
  //   attention per rank = h (a/t d + 1 x 2 d) + a/t d h
  //   layer per rank     = attention + 2 h f / t (gelu) + 2 h (norms)
  // and the chunk (pp = 1) adds the embedding and the untied output layer, V h / t each
  // (V = 128 padded to 128 x 8 = 1024).
  ModelSpec m = gpt(2, 4096, 32);
  m.kv_heads = 2;
  const double h = 4096, d = 128, f = 4 * 4096, t = 8, V = 1024;
  const compute::ComputeProfile profile = small_profile();
  const JobConfig j = job_for(8, 1, 1, 1);
  REQUIRE(validate_job(j, m, 8).empty());
  const double attention = h * (32 / t * d + 2 * d) + 32 / t * d * h;
  const double layer = attention + 2 * h * f / t + 2 * h;
  CHECK(chunk_costs(j, m, profile)[0].parameters == Rel(2 * layer + 2 * V * h / t));
}

TEST_CASE("head widths and multi-head latent attention: per-rank weights, TP bytes and attention FLOPs") {
  // A DeepSeek-V3-shaped layer, scaled down: h 1024, 16 heads, query/key heads 96 wide (64 +
  // 32 RoPE), values 64, q_lora_rank 256, kv_lora_rank 128 (DeepSeek-V2, section 2.1).
  ModelSpec m = gpt(1, 1024, 16);
  m.head_dim = 96;
  m.v_head_dim = 64;
  m.q_lora_rank = 256;
  m.kv_lora_rank = 128;
  m.rope_head_dim = 32;
  m.ffn = Mlp::swiglu;
  REQUIRE(validate(m).empty());
  const double h = 1024, a = 16, d = 96, dv = 64, rq = 256, rkv = 128, dr = 32, f = 4096;
  const compute::ComputeProfile profile = small_profile();
  // tp = 1: the chunk holds every parameter of the model but the final norm (h).
  JobConfig j = job_for(1, 1, 1, 1);
  CHECK(chunk_costs(j, m, profile)[0].parameters == Rel(parameters(m).total - h));
  // tp = 4 with sequence parallelism: the down projections (and latent norms) on every rank
  // whole, the up and output projections split:
  //   replicated  h rq + rq + h (rkv + dr) + rkv
  //   split       (rq a d + rkv a (d - dr + dv) + a dv h) / t
  j = job_for(4, 1, 1, 1);
  j.parallelism.sequence_parallel = true;
  const double t = 4;
  const double replicated = h * rq + rq + h * (rkv + dr) + rkv;
  const double split = (rq * a * d + rkv * a * (d - dr + dv) + a * dv * h) / t;
  const double V = 512;  // 128 padded to 128 x 4
  const ChunkCost c = chunk_costs(j, m, profile)[0];
  CHECK(c.parameters == Rel(replicated + split + 3 * h * f / t + 2 * h + 2 * V * h / t));
  // The attention block's TP all-gather carries the latents, T (rq + rkv + dr) x 2 bytes
  // (T = 2048), the MLP's the hidden state, T h x 2.
  std::multiset<double> gathers;
  for (const CommCall& call : c.forward.comm) {
    if (call.group == Group::tp && call.op == network::Op::all_gather) gathers.insert(call.bytes);
  }
  CHECK(gathers.count(2048 * (rq + rkv + dr) * 2) == 1);
  CHECK(gathers.count(2048 * h * 2) == 1);
  // Model FLOPs: 6 N_active + 6 L s a (d + d_v), Q K^T over 96 columns and P V over 64.
  const double n = parameters(m).active - parameters(m).embedding;  // the untied output layer in
  CHECK(training_flops_per_token(m, 2048) == Rel(6 * n + 6 * 1 * 2048 * a * (d + dv)));
}

TEST_CASE("tensor parallelism: 2 all-reduces per layer forward and 2 backward, as Megatron's f and g") {
  // Shoeybi et al. 2019, section 3: "two all-reduces in the forward path and two in the
  // backward path" per layer; with sequence parallelism (Korthikanti et al. 2022) each
  // becomes an all-gather and a reduce-scatter, the same bytes on a ring. Full
  // recomputation repeats the forward's, in backward.
  const ModelSpec m = gpt(4);
  const compute::ComputeProfile profile = small_profile();
  const auto calls = [](const PassCost& pass, network::Op op) {
    std::int64_t n = 0;
    for (const CommCall& c : pass.comm) {
      if (c.group == Group::tp && c.op == op) n += c.count;
    }
    return n;
  };
  // The one chunk (pp 1) also holds the vocab-parallel embedding, whose partial lookups are
  // summed as a layer's output is (1 call forward; its mirror backward), the output layer,
  // entered as a layer's first GEMM is (its mirror forward; 1 call backward), and the
  // vocab-parallel cross-entropy's 3 all-reduces of T fp32 values (forward).
  JobConfig j = job_for(4, 1, 2, 8);
  const ChunkCost plain = chunk_costs(j, m, profile)[0];
  CHECK(calls(plain.forward, network::Op::all_reduce) == 2 * 4 + 1 + 3);
  CHECK(calls(plain.backward, network::Op::all_reduce) == 2 * 4 + 1);
  j.recompute = Recompute::full;  // the layers' forward again; the embedding is not recomputed
  CHECK(calls(chunk_costs(j, m, profile)[0].backward, network::Op::all_reduce) == 4 * 4 + 1);
  j.recompute = Recompute::none;
  j.parallelism.sequence_parallel = true;
  const ChunkCost sp = chunk_costs(j, m, profile)[0];
  for (const PassCost* pass : {&sp.forward, &sp.backward}) {
    CHECK(calls(*pass, network::Op::all_gather) == 2 * 4 + 1);
    CHECK(calls(*pass, network::Op::reduce_scatter) == 2 * 4 + 1);
  }
  CHECK(calls(sp.forward, network::Op::all_reduce) == 3);  // the cross-entropy's
  CHECK(calls(sp.backward, network::Op::all_reduce) == 0);
  // With pp 2, the first chunk adds the embedding's call to its layers' 2 + 2, the last the
  // output layer's and the cross-entropy's.
  j.parallelism.pp = 2;
  j.parallelism.dp = 1;
  j.parallelism.virtual_stages = 1;
  j.parallelism.sequence_parallel = false;
  const auto two = chunk_costs(j, m, profile);
  REQUIRE(two.size() == 2);
  CHECK(calls(two[0].forward, network::Op::all_reduce) == 2 * 2 + 1);      // layers + embedding
  CHECK(calls(two[0].backward, network::Op::all_reduce) == 2 * 2);
  CHECK(calls(two[1].forward, network::Op::all_reduce) == 2 * 2 + 3);      // layers + cross-entropy
  CHECK(calls(two[1].backward, network::Op::all_reduce) == 2 * 2 + 1);     // layers + output layer
}

TEST_CASE("ZeRO-2 reduce-scatters every micro-batch's gradients: M - 1 reductions more than ZeRO-1") {
  // Sharded gradients cannot be accumulated whole, so each backward reduce-scatters them; the
  // last one's reduction is the step's, as with ZeRO-1. Without overlap, ZeRO-2's extra DP
  // time is (M - 1) reduce-scatters: 3 at M = 4 for 1 at M = 2, and none at M = 1.
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  const auto extra_dp = [&](std::int64_t M) {
    JobConfig j = job_for(1, 1, 8, 8 * M);
    j.overlap_grad_reduce = false;
    j.parallelism.zero = 1;
    const StepResult z1 = step(s, j, m);
    j.parallelism.zero = 2;
    const StepResult z2 = step(s, j, m);
    CHECK(z2.step_time_s - z1.step_time_s == Rel(z2.breakdown.dp - z1.breakdown.dp).epsilon(1e-6).margin(1e-12));
    return z2.breakdown.dp - z1.breakdown.dp;
  };
  CHECK(extra_dp(1) == Rel(0.0).margin(1e-12));
  const double one = extra_dp(2);
  CHECK(one > 1e-4);
  CHECK(extra_dp(4) == Rel(3.0 * one).epsilon(1e-6));
}

TEST_CASE("breakdown: every stage's parts, and the busiest stage where the last to finish mostly waits") {
  // 9 layers on 2 stages: 4 and 5 (chunk_layers takes from the first chunk). Stage 0 finishes
  // last (1F1B: it runs the last backward) and waits for stage 1, which works more.
  const auto s = small_cluster();
  const ModelSpec m = gpt(9);
  JobConfig j = job_for(1, 2, 4, 32);
  const StepResult r = step(s, j, m);
  REQUIRE(r.stage_breakdowns.size() == 2);
  CHECK(r.critical_stage == 0);
  CHECK(r.busiest_stage == 1);
  CHECK(r.stage_breakdowns[1].compute > 1.2 * r.stage_breakdowns[0].compute);
  CHECK(r.stage_breakdowns[0].total() == Rel(r.step_time_s).epsilon(1e-6));
  CHECK(r.stage_breakdowns[1].total() <= r.step_time_s * (1 + 1e-6));
  CHECK(r.stage_breakdowns[0].bubble > r.stage_breakdowns[1].bubble);
}

TEST_CASE("memory: ZeRO shards the optimizer (1), then gradients (2), then weights (3) over dp") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 1, 8, 64);
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  const auto chunks = chunk_costs(j, m, profile);
  const auto order = pipeline_order(1, 1, micro_batches(j));
  const double params = chunks[0].parameters;
  MemoryBreakdown z0 = memory_per_gpu(j, chunks, order);
  // bf16 weights (2 B), fp32 gradients (4 B), Adam fp32 master + m + v (12 B) per parameter.
  CHECK(z0.weights == Rel(2 * params));
  CHECK(z0.gradients == Rel(4 * params));
  CHECK(z0.optimizer == Rel(12 * params));
  j.parallelism.zero = 1;
  CHECK(memory_per_gpu(j, chunks, order).optimizer == Rel(12 * params / 8));
  // bf16 gradients: the optimizer keeps an fp32 copy of them too, 16 B (Megatron-Core's
  // distributed optimizer: fp16 parameters and gradients, 4 + 16/d bytes per parameter).
  {
    JobConfig half = j;
    half.grad_dtype = compute::Dtype::bf16;
    const MemoryBreakdown h = memory_per_gpu(half, chunks, order);
    CHECK(h.weights + h.gradients == Rel(4 * params));
    CHECK(h.optimizer == Rel(16 * params / 8));
  }
  j.parallelism.zero = 2;
  CHECK(memory_per_gpu(j, chunks, order).gradients == Rel(4 * params / 8));
  j.parallelism.zero = 3;
  // ... and holds, whole, the units it gathers: the layer in use and the next, prefetched
  // (the embedding and output layers of a 128-word vocabulary are smaller).
  const double layer = chunks[0].layer_gradient_params[1];  // [output, layers 7..0, embedding]
  CHECK(memory_per_gpu(j, chunks, order).weights == Rel(2 * params / 8 + 2 * 2 * layer));
  // Activations: one micro-batch in flight without pipelining.
  CHECK(z0.activations == Rel(chunks[0].activation_bytes));
}

TEST_CASE("ZeRO-3 memory: the shard and the two neighbouring units gathered, not the whole chunk") {
  // llama3-8b on 64 GPUs, pp = 1, dp = 64 (the chunk is the whole model). FSDP and ZeRO-3
  // gather one unit at a time (a layer; the embedding and the output layer are units of their
  // own) with the next one prefetched, each into a buffer of its full size:
  //   weights = 2 B x (N / 64 + the largest two neighbours) = 2 (N / 64 + V h + layer)
  // (V h = 128256 x 4096 = 525M, the embedding, beside the first layer's 218M), about
  // 1.74 GB where ZeRO-2 holds all 2 N = 16.06 GB.
  const auto job = [](const std::string& model, int zero) {
    return "workload.jobs=[{name: j, model: " + model + ", gpus: 64, parallelism: {dp: 64, zero: " +
           std::to_string(zero) + "}, global_batch: 64, seq_len: 8192, recompute: full}]";
  };
  const auto s = small_cluster({job("llama3-8b", 3)});
  REQUIRE(s.jobs.size() == 1);
  JobConfig j = s.jobs[0].config;
  const auto chunks = chunk_costs(j, s.jobs[0].model, s.jobs[0].profile);
  const auto order = pipeline_order(1, 1, micro_batches(j));
  const double N = chunks[0].parameters;
  const double Vh = 128256.0 * 4096.0;
  const double layer = chunks[0].layer_gradient_params[1];  // [output, layers 31..0, embedding]
  CHECK(chunks[0].layer_gradient_params.back() == Vh);
  CHECK(layer == Rel(218.1e6).epsilon(0.001));
  const MemoryBreakdown z3 = memory_per_gpu(j, chunks, order);
  CHECK(z3.weights == Rel(2.0 * (N / 64.0 + Vh + layer)));
  CHECK(z3.weights == Rel(1.738e9).epsilon(0.001));
  j.parallelism.zero = 2;
  const MemoryBreakdown z2 = memory_per_gpu(j, chunks, order);
  CHECK(z2.weights == Rel(2.0 * N));
  CHECK(z2.weights == Rel(16.06e9).epsilon(0.001));
  CHECK(z3.gradients == Rel(z2.gradients));  // ZeRO-2 already shards gradients and optimizer
  CHECK(z3.optimizer == Rel(z2.optimizer));

  // llama3-70b the same way fits an 80 GB H100 with ZeRO-3 (weights 2 (70.6G / 64 +
  // 1.05G + 0.86G) = 6 GB, 41 GB in all); ZeRO-2 keeps 141 GB of weights and is refused.
  const auto refusal = [&](int zero) -> std::string {
    try {
      small_cluster({job("llama3-70b", zero)});
      return "";
    } catch (const config::InputError& e) {
      return e.diagnostics().format();
    }
  };
  CHECK(refusal(3).empty());
  CHECK(refusal(2).find("does not fit") != std::string::npos);
}

TEST_CASE("1F1B memory: stage 0 holds pp micro-batches in flight") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  const JobConfig j = job_for(1, 4, 1, 16);
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  const auto chunks = chunk_costs(j, m, profile);
  const MemoryBreakdown mem = memory_per_gpu(j, chunks, pipeline_order(4, 1, 16));
  CHECK(mem.stage == 0);
  CHECK(mem.activations == Rel(4 * chunks[0].activation_bytes));
}

TEST_CASE("the step's breakdown adds up to the step time, and MFU is model FLOPs over peak") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(16);
  JobConfig j = job_for(8, 4, 2, 32);
  j.parallelism.sequence_parallel = true;
  j.parallelism.zero = 1;
  const StepResult r = step(s, j, m);
  CHECK(r.breakdown.total() == Rel(r.step_time_s).epsilon(1e-6));
  CHECK(r.breakdown.compute > 0.0);
  CHECK(r.breakdown.tp > 0.0);
  CHECK(r.breakdown.bubble > 0.0);
  CHECK(r.breakdown.dp > 0.0);
  // MFU = 6 N_active-ish model FLOPs per token x tokens / (step x GPUs x peak).
  const double tokens = 32.0 * 2048.0;
  CHECK(r.model_flops_per_step == Rel(training_flops_per_token(m, 2048) * tokens));
  CHECK(r.mfu == Rel(r.model_flops_per_step / (r.step_time_s * 64 * 989.4e12)));
  CHECK(r.tokens_per_s == Rel(tokens / r.step_time_s));
  // Recomputation executes more FLOPs than the model needs.
  j.recompute = Recompute::full;
  const StepResult full = step(s, j, m);
  CHECK(full.hardware_flops_per_step > 1.2 * r.hardware_flops_per_step);
  CHECK(full.step_time_s > r.step_time_s);
}

TEST_CASE("pipeline bubble: (pp - 1) / (M + pp - 1) of the step for 1F1B; interleaving divides it by about v") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(16);
  const std::int64_t pp = 4, M = 8;
  JobConfig j = job_for(8, pp, 1, M);
  const StepResult r = step(s, j, m);
  const double busy = r.step_time_s - r.breakdown.dp - r.breakdown.optimizer;
  // Stages are equal up to the embedding and output layers: the classic bubble fraction.
  CHECK(r.breakdown.bubble / busy == Rel(double(pp - 1) / double(M + pp - 1)).epsilon(0.1));
  j.parallelism.virtual_stages = 2;
  const StepResult v2 = step(s, j, m);
  CHECK(v2.breakdown.bubble < 0.65 * r.breakdown.bubble);
  CHECK(v2.step_time_s < r.step_time_s);
}

TEST_CASE("data-parallel reduction is slower on an oversubscribed fabric; flow and analytical agree without it") {
  // TP inside each node, one ring per local rank across the 8 nodes: every ring step crosses
  // the leaves' uplinks, which 1:3 oversubscription thins to a third.
  const ModelSpec m = gpt(8);
  const JobConfig j = job_for(8, 1, 8, 64);
  const auto full = small_cluster({"fabric.radix=16", "fabric.tiers=2"});
  const auto thin = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3"});
  const StepResult a = step(full, j, m);
  const StepResult b = step(thin, j, m);
  CHECK(b.breakdown.dp > 1.5 * a.breakdown.dp);
  CHECK(b.breakdown.compute == Rel(a.breakdown.compute));
  const auto flow = small_cluster({"fabric.radix=16", "fabric.tiers=2", "network.model=flow"});
  const StepResult f = step(flow, j, m);
  CHECK(f.step_time_s == Rel(a.step_time_s).epsilon(0.01));
}

TEST_CASE("the trace has one span per pass on each stage, in time order, none overlapping") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  const JobConfig j = job_for(8, 2, 4, 16);
  const StepResult r = step(s, j, m, true);
  std::map<std::int64_t, std::vector<TraceSpan>> compute_lanes;
  for (const TraceSpan& span : r.trace) {
    CHECK(span.end_s >= span.start_s);
    CHECK(span.end_s <= r.step_time_s + 1e-9);
    if (span.category == "forward" || span.category == "backward") compute_lanes[span.lane].push_back(span);
  }
  REQUIRE(compute_lanes.size() == 2);
  for (const auto& [lane, spans] : compute_lanes) {
    CHECK(spans.size() == 2 * 4);  // 4 micro-batches per replica, forward and backward
    for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].start_s >= spans[i - 1].end_s - 1e-9);
  }
  // The waits for inputs in flight between stages (the breakdown's pp) are drawn on the
  // compute lane, between its passes, and add up to the stage's pp (they read as gaps, like
  // the bubble's).
  double drawn = 0.0;
  for (std::size_t stage = 0; stage < r.stage_breakdowns.size(); ++stage) {
    std::vector<TraceSpan> lane = compute_lanes[static_cast<std::int64_t>(stage)];
    double waits = 0.0;
    for (const TraceSpan& span : r.trace) {
      if (span.lane != static_cast<std::int64_t>(stage) || span.category != "pp") continue;
      waits += span.end_s - span.start_s;
      lane.push_back(span);
    }
    CHECK(waits == Rel(r.stage_breakdowns[stage].pp).epsilon(1e-9));
    drawn += waits;
    std::sort(lane.begin(), lane.end(), [](const TraceSpan& a, const TraceSpan& b) { return a.start_s < b.start_s; });
    for (std::size_t i = 1; i < lane.size(); ++i) CHECK(lane[i].start_s >= lane[i - 1].end_s - 1e-9);
  }
  CHECK(drawn > 0.0);
}

TEST_CASE("the trace draws where the step's time goes: the reductions' slowdown, ZeRO's collectives in passes") {
  // The reductions behind a stage's backward passes slow them (overlap_slowdown); the model
  // counts that delay after the stage's last pass, and so does the trace: a "contention"
  // span on the compute lane from the last backward's end, after which the last reduction
  // starts. (It read as an idle gap: 0.23 s of Llama 3 405B's step.)
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 2, 4, 16);
  REQUIRE(s.config.network.overlap_slowdown > 0.0);
  const StepResult r = step(s, j, m, true);
  for (std::int64_t lane = 0; lane < 2; ++lane) {
    CAPTURE(lane);
    double last_backward_end = 0.0, reduction_start = 0.0;
    const TraceSpan* slowed = nullptr;
    std::vector<const TraceSpan*> compute_lane;
    for (const TraceSpan& t : r.trace) {
      if (t.lane != lane) continue;
      if (t.category == "backward") last_backward_end = std::max(last_backward_end, t.end_s);
      if (t.category == "dp" && !t.name.starts_with("all_gather")) reduction_start = std::max(reduction_start, t.start_s);
      if (t.category == "contention") slowed = &t;
      if (t.category != "dp" && t.category != "dp_pass") compute_lane.push_back(&t);
      if (t.category == "forward" || t.category == "backward") {
        // a pass's args break its span down: they add up to its length (to the engine's
        // nanosecond tick)
        double sum = 0.0;
        for (const auto& [key, ms] : t.args) sum += ms / 1e3;
        CHECK(std::fabs(sum - (t.end_s - t.start_s)) <= 1e-9);
      }
    }
    REQUIRE(slowed != nullptr);
    CHECK(slowed->start_s == Rel(last_backward_end).epsilon(1e-12));
    CHECK(slowed->end_s > slowed->start_s);
    CHECK(reduction_start >= slowed->end_s - 1e-12);
    std::sort(compute_lane.begin(), compute_lane.end(), [](auto* a, auto* b) { return a->start_s < b->start_s; });
    for (std::size_t i = 1; i < compute_lane.size(); ++i) CHECK(compute_lane[i]->start_s >= compute_lane[i - 1]->end_s - 1e-12);
  }
  // ZeRO-1 has no collectives inside its passes; ZeRO-3 gathers in every pass and, on more
  // than one micro-batch, reduce-scatters in every backward but a chunk's last (whose
  // gradients go with the step's reductions): one span per pass on a lane of their own,
  // from the pass's start, within it. With overlap_grad_reduce a chunk's last backward
  // gathers in the reductions' stream ("dp"), drawn there and only there.
  for (const TraceSpan& t : r.trace) CHECK(t.category != "dp_pass");
  j.parallelism.zero = 3;
  for (const bool overlap : {true, false}) {
    CAPTURE(overlap);
    j.overlap_grad_reduce = overlap;
    const StepResult z3 = step(s, j, m, true);
    REQUIRE(z3.micro_batches > 1);
    const std::string last_micro = fmt::format(" mb {} ", z3.micro_batches - 1);
    std::size_t passes = 0, in_pass = 0, in_stream = 0;
    for (const TraceSpan& t : z3.trace) {
      if (t.category == "forward" || t.category == "backward") {
        ++passes;
        const bool last_backward = t.category == "backward" && t.name.find(last_micro) != std::string::npos;
        const auto it = std::find_if(z3.trace.begin(), z3.trace.end(), [&](const TraceSpan& d) {
          return d.category == "dp_pass" && d.lane == t.lane && d.start_s == t.start_s;
        });
        const auto gathered = std::find_if(z3.trace.begin(), z3.trace.end(), [&](const TraceSpan& d) {
          return d.category == "dp" && d.lane == t.lane && d.name.starts_with("all_gather params") &&
                 std::fabs(d.start_s - t.start_s) <= 1e-12;
        });
        if (last_backward && overlap) {
          CHECK(it == z3.trace.end());
          CHECK(gathered != z3.trace.end());
          ++in_stream;
          continue;
        }
        CHECK(gathered == z3.trace.end());
        REQUIRE(it != z3.trace.end());
        CHECK(it->end_s <= t.end_s + 1e-12);
        CHECK(it->name.starts_with("all_gather params"));
        const bool reduces = it->name.find("reduce_scatter grads") != std::string::npos;
        CHECK(reduces == (t.category == "backward" && !last_backward));
      }
      if (t.category == "dp_pass") ++in_pass;
    }
    CHECK(in_pass + in_stream == passes);
    CHECK(in_stream == (overlap ? 2 : 0));  // one chunk per stage, two stages
  }
  j.overlap_grad_reduce = true;
  // overlap_param_gather: the next step's first forwards, slowed by the parameter gather
  // behind them, close the step (the trace ended 16 ms short of a 6.144 s step).
  j.parallelism.zero = 1;
  j.overlap_param_gather = true;
  const StepResult gathered = step(s, j, m, true);
  double last_end = 0.0;
  bool drawn = false;
  for (const TraceSpan& t : gathered.trace) {
    last_end = std::max(last_end, t.end_s);
    drawn = drawn || (t.category == "contention" && t.name.starts_with("next step's first forwards"));
  }
  CHECK(drawn);
  CHECK(last_end == Rel(gathered.step_time_s).epsilon(1e-12));
}

TEST_CASE("validate_job names the inconsistent key and suggests a fix") {
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 2, 4, 16);
  j.gpus = 128;
  auto problems = validate_job(j, m, 8);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "parallelism");
  CHECK(problems[0].hint == "dp: 8 uses all 128 GPUs");
  j = job_for(3, 1, 1, 16);
  problems = validate_job(j, m, 8);
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].path == "parallelism.tp");
  j = job_for(8, 2, 4, 10);
  problems = validate_job(j, m, 8);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "global_batch");
  CHECK(problems[0].hint == "global_batch: 12");
}

TEST_CASE("overlapping the gradient reduction with backward hides data-parallel time") {
  const auto s = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3"});
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 1, 8, 64);
  const StepResult overlapped = step(s, j, m);
  j.overlap_grad_reduce = false;
  const StepResult serial = step(s, j, m);
  CHECK(serial.breakdown.dp > overlapped.breakdown.dp);
  CHECK(serial.step_time_s > overlapped.step_time_s);
  // Without overlap, the whole reduction follows the last backward: its exposed time is the
  // sum of every layer's reduction (one at a time).
  CHECK(serial.breakdown.compute == Rel(overlapped.breakdown.compute));
}

TEST_CASE("mixture of experts: expert parallelism adds all-to-all time; ep must divide the experts") {
  const auto s = small_cluster();
  const ModelSpec m = moe8();
  JobConfig j = job_for(1, 1, 64, 64);
  j.parallelism.ep = 8;
  const StepResult r = step(s, j, m);
  CHECK(r.breakdown.ep > 0.0);
  const auto all_to_all = std::count_if(r.comm.begin(), r.comm.end(), [](const CommTiming& c) {
    return c.group == Group::ep && c.op == network::Op::all_to_all && c.group_size == 8 && c.groups == 8;
  });
  CHECK(all_to_all == 1);
  j.parallelism.ep = 3;
  CHECK_FALSE(validate_job(j, m, 8).empty());
}

TEST_CASE("mixture of experts: expert gradients are reduced and sharded over the expert-data-parallel group") {
  const auto s = small_cluster();
  const ModelSpec m = moe8();
  JobConfig j = job_for(1, 1, 64, 64);
  j.parallelism.ep = 8;
  j.parallelism.zero = 1;
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  const auto chunks = chunk_costs(j, m, profile);
  // One local expert per GPU: 3 h f parameters (swiglu) in each of the 8 layers.
  const double experts = 8.0 * 3.0 * 4096.0 * 4096.0;
  CHECK(chunks[0].expert_parameters == Rel(experts));
  const double dense = chunks[0].parameters - experts;
  // ZeRO-1: Adam's 12 B per parameter, the dense ones over dp = 64, the experts over the
  // 64 / 8 = 8 ranks that hold the same expert.
  const MemoryBreakdown mem = memory_per_gpu(j, chunks, pipeline_order(1, 1, micro_batches(j)));
  CHECK(mem.optimizer == Rel(12.0 * (dense / 64.0 + experts / 8.0)));

  const StepResult r = step(s, j, m);
  const auto over = [&](Group g, std::int64_t size, std::int64_t groups) {
    return std::count_if(r.comm.begin(), r.comm.end(), [&](const CommTiming& c) {
      return c.group == g && c.op == network::Op::reduce_scatter && c.group_size == size && c.groups == groups;
    });
  };
  CHECK(over(Group::dp, 64, 1) >= 1);  // dense gradients: every replica
  CHECK(over(Group::edp, 8, 8) >= 1);  // expert gradients: 8 groups of 8
  // With ep = 1 every rank holds every expert: one group, nothing apart.
  j.parallelism.ep = 1;
  const auto whole = chunk_costs(j, m, profile);
  CHECK(whole[0].expert_parameters == 0.0);
  const StepResult r1 = step(s, j, m);
  CHECK(std::none_of(r1.comm.begin(), r1.comm.end(), [](const CommTiming& c) { return c.group == Group::edp; }));
}

TEST_CASE("mixture of experts with TP: each TP rank dispatches its T/t tokens, then the TP group gathers them") {
  // Megatron-Core's all-to-all dispatcher on the sequence-parallel layout: a rank's
  // all-to-all carries its T k / t routed tokens, T k h / t elements (bf16: 2 bytes):
  //   T = 2048, k = 2, h = 4096:  2 x 2048 x 2 x 4096 / t = 32 MiB / t
  // then a TP all-gather (forward; reduce-scatter backward) of all T k h, and the mirror
  // before the combine. With tp x dp fixed, a GPU's EP bytes per step no longer grow with tp.
  const auto s = small_cluster();
  const ModelSpec m = moe8();
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  const double routed = 2.0 * 2048 * 2 * 4096;
  const auto bytes = [](const PassCost& pass, Group g, network::Op op) {
    std::vector<double> out;
    for (const CommCall& c : pass.comm) {
      if (c.group == g && c.op == op) out.push_back(c.bytes);
    }
    return out;
  };
  for (const bool sp : {true, false}) {
    for (const std::int64_t tp : {1, 2, 4}) {
      CAPTURE(sp);
      CAPTURE(tp);
      JobConfig j = job_for(tp, 1, 64 / tp, 64);
      j.parallelism.ep = 8;
      j.parallelism.sequence_parallel = sp;
      const ChunkCost c = chunk_costs(j, m, profile)[0];
      for (const PassCost* pass : {&c.forward, &c.backward}) {
        CHECK(bytes(*pass, Group::ep, network::Op::all_to_all) == std::vector<double>{routed / double(tp)});
      }
      // One dispatch and one combine per layer, each way.
      std::int64_t calls = 0;
      for (const CommCall& call : c.forward.comm) calls += call.group == Group::ep ? call.count : 0;
      CHECK(calls == 2 * 8);
      if (tp == 1) continue;
      // The expert side: all-gather and reduce-scatter of T k h over the TP group, each way.
      for (const PassCost* pass : {&c.forward, &c.backward}) {
        for (const network::Op op : {network::Op::all_gather, network::Op::reduce_scatter}) {
          const auto b = bytes(*pass, Group::tp, op);
          CHECK(std::count(b.begin(), b.end(), routed) == 1);
        }
      }
      // Without sequence parallelism (which Megatron-Core requires with MoE and TP) the
      // block's output, sharded, is gathered back to the replicated layout: T h more forward.
      if (!sp) {
        const auto b = bytes(c.forward, Group::tp, network::Op::all_gather);
        CHECK(std::count(b.begin(), b.end(), 2.0 * 2048 * 4096) == 1);
      }
    }
  }
}

TEST_CASE("fp8: the linear layers' GEMMs run at the fp8 rate, attention stays at bf16's") {
  // Transformer Engine runs attention in bf16 unless FP8 attention (fp8_dpa) is asked for.
  // Chunk 0 of gpt(2) on pp = 2 holds layer 0 and the embedding; element-wise ops move the
  // same bf16 bytes either way, so what fp8 changes is the four weight GEMMs alone:
  //   forward(fp8) - forward(bf16) = sum over QKV, projection, fc1, fc2 of
  //                                  gemm(fp8) - gemm(bf16)      (< 0)
  //   backward: the same over their data- and weight-gradient GEMMs
  // and the attention core's time is bf16's in both.
  const auto s = small_cluster();
  const ModelSpec m = gpt(2);
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  const std::int64_t T = 2048, h = 4096, f = 4 * 4096;
  const compute::GemmShape gemms[] = {{T, 3 * h, h, 1}, {T, h, h, 1}, {T, f, h, 1}, {T, h, f, 1}};
  double fwd = 0.0, bwd = 0.0;
  const auto diff = [&](const compute::GemmShape& g) {
    return compute::gemm_seconds(g, compute::Dtype::fp8, profile) - compute::gemm_seconds(g, compute::Dtype::bf16, profile);
  };
  for (const compute::GemmShape& g : gemms) {
    fwd += diff(g);
    bwd += diff({g.m, g.k, g.n, 1}) + diff({g.k, g.n, g.m, 1});
  }
  CHECK(fwd < 0.0);
  for (const AttentionKernel kernel : {AttentionKernel::flash, AttentionKernel::unfused}) {
    CAPTURE(kernel == AttentionKernel::flash);
    JobConfig j = job_for(1, 2, 1, 4);
    j.attention = kernel;
    const ChunkCost bf16 = chunk_costs(j, m, profile)[0];
    j.precision = compute::Dtype::fp8;
    const ChunkCost fp8 = chunk_costs(j, m, profile)[0];
    CHECK(fp8.forward.compute_s - bf16.forward.compute_s == Rel(fwd).epsilon(1e-6));
    CHECK(fp8.backward.compute_s - bf16.backward.compute_s == Rel(bwd).epsilon(1e-6));
  }
}

TEST_CASE("context parallelism: the K/V ring hides behind attention, more so at longer sequences") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(4);
  // Exposed CP time over the ring time of every call (a forward all-gather and a backward
  // reduce-scatter per layer and micro-batch): the ring grows as s, attention as s^2.
  const auto exposure = [&](std::int64_t seq) {
    JobConfig j = job_for(8, 1, 1, 4);
    j.parallelism.cp = 4;
    j.gpus = 32;
    j.seq_len = seq;
    const StepResult r = step(s, j, m);
    double ring = 0.0;
    for (const CommTiming& c : r.comm) {
      if (c.group == Group::cp) {
        CHECK(c.group_size == 4);
        ring += c.time_s;
      }
    }
    REQUIRE(ring > 0.0);
    return r.breakdown.cp / (ring * 4.0 * double(r.micro_batches));
  };
  const double short_seq = exposure(8192);
  const double long_seq = exposure(131072);
  CHECK(long_seq < short_seq);
  CHECK(long_seq < 0.5);
  CHECK(short_seq <= 1.0);
}

TEST_CASE("context parallelism: backward moves K/V and their gradients, twice the forward's bytes") {
  // Ring attention's backward circulates K and V again with dK and dV beside them (Transformer
  // Engine's AttnFuncWithCPAndKVP2P): per layer, forward all-gathers kv_bytes x cp and
  // backward reduce-scatters twice that. gpt(4): hidden 4096, multi-head (K and V are h wide),
  // tp 8, seq 8192 in bf16: one rank's K and V block is (8192 / 4) tokens x 2 x 4096 / 8 x 2 B.
  const ModelSpec m = gpt(4);
  JobConfig j = job_for(8, 1, 1, 4);
  j.parallelism.cp = 4;
  j.gpus = 32;
  j.seq_len = 8192;
  const ChunkCost c = chunk_costs(j, m, small_profile())[0];
  const auto cp_bytes = [](const PassCost& pass, network::Op op) {
    double b = 0.0;
    for (const CommCall& call : pass.comm) {
      if (call.group == Group::cp && call.op == op) b += call.bytes * double(call.count);
    }
    return b;
  };
  const double fwd = cp_bytes(c.forward, network::Op::all_gather);
  const double bwd = cp_bytes(c.backward, network::Op::reduce_scatter);
  REQUIRE(fwd > 0.0);
  CHECK(fwd == Rel(double(m.layers) * (8192.0 / 4.0) * 2.0 * double(m.hidden) / 8.0 * 2.0 * 4.0));
  CHECK(bwd == Rel(2.0 * fwd));
}

TEST_CASE("compute takes overlap_slowdown longer while a collective runs behind it") {
  // Context parallelism at 128K tokens: every K/V all-gather and reduce-scatter hides behind
  // attention, so each slows the compute by overlap_slowdown x its own time.
  const auto s = small_cluster();
  const auto free_overlap = small_cluster({"network.overlap_slowdown=0"});
  REQUIRE(s.config.network.overlap_slowdown == 0.189);
  const ModelSpec m = gpt(4);
  JobConfig j = job_for(8, 1, 1, 4);
  j.parallelism.cp = 4;
  j.gpus = 32;
  j.seq_len = 131072;
  j.overlap_grad_reduce = false;  // the gradient reduction (over dp x cp) after the last backward
  const StepResult r = step(s, j, m);
  REQUIRE(r.breakdown.cp == 0.0);  // fully hidden
  double ring = 0.0;
  for (const CommTiming& c : r.comm) {
    if (c.group == Group::cp) ring += c.time_s;
  }
  REQUIRE(ring > 0.0);
  CHECK(r.breakdown.contention == Rel(0.189 * ring * 4.0 * double(r.micro_batches)));
  const StepResult r0 = step(free_overlap, j, m);
  CHECK(r0.breakdown.contention == 0.0);
  CHECK(r0.step_time_s == Rel(r.step_time_s - r.breakdown.contention));
  CHECK(r.breakdown.total() == Rel(r.step_time_s));

  // Data parallelism: the gradient reductions that run during backward slow it; the stage
  // ends later by at most what it saves in exposed reduction time, and by nothing when the
  // reduction waits for the last backward.
  const auto tapered = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3"});
  const auto tapered0 =
      small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3", "network.overlap_slowdown=0"});
  JobConfig d = job_for(8, 1, 8, 64);
  const StepResult slowed = step(tapered, d, gpt(8));
  const StepResult free = step(tapered0, d, gpt(8));
  CHECK(slowed.breakdown.contention > 0.0);
  CHECK(slowed.breakdown.contention <= 0.189 * slowed.breakdown.compute);
  // The slowed backward makes the later gradients ready later: the step grows, by no more
  // than the contention (the reduction was partly exposed already).
  CHECK(slowed.step_time_s > free.step_time_s);
  CHECK(slowed.step_time_s - free.step_time_s <= slowed.breakdown.contention * (1.0 + 1e-12));
  CHECK(slowed.breakdown.total() == Rel(slowed.step_time_s));
  // However many collectives run behind it at once (ZeRO-3: a gather and a reduce-scatter
  // per pass, and the stage's reductions), compute is slowed once: contention stays within
  // overlap_slowdown x compute on every stage, pipelined or not.
  for (const std::int64_t zero : {2, 3}) {
    JobConfig z = job_for(8, 2, 4, 64);
    z.parallelism.zero = zero;
    z.micro_batch = 2;
    const StepResult r3 = step(tapered, z, gpt(8));
    for (const Breakdown& b : r3.stage_breakdowns) {
      CHECK(b.contention > 0.0);
      CHECK(b.contention <= 0.189 * b.compute * (1.0 + 1e-12));
    }
    CHECK(r3.breakdown.total() == Rel(r3.step_time_s));
  }
  d.overlap_grad_reduce = false;
  const StepResult serial = step(tapered, d, gpt(8));
  CHECK(serial.breakdown.contention == 0.0);
  CHECK(serial.step_time_s == Rel(step(tapered0, d, gpt(8)).step_time_s));
}

TEST_CASE("ZeRO-3 gathers parameters for every pass; ZeRO-1 gathers once after the optimizer") {
  const auto s = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3"});
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 1, 8, 64);
  j.parallelism.zero = 1;
  const StepResult z1 = step(s, j, m);
  j.parallelism.zero = 3;
  const StepResult z3 = step(s, j, m);
  CHECK(z3.memory.total < z1.memory.total);
  CHECK(z3.breakdown.dp != Rel(z1.breakdown.dp));
}

TEST_CASE("ZeRO-3: a pass's compute hides its gathers and its reduce-scatters together, not each in full") {
  // The gathers and the reduce-scatters of a pass share the DP links: when the gathers alone
  // outlast the compute (a short sequence over a 1:3 tapered fabric, no TP), there is nothing
  // left to hide the gradient reductions behind. On one micro-batch the step is then the same
  // with overlap_grad_reduce on or off: the last backward's gathers hold the stream first.
  const auto s = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3",
                                "network.overlap_slowdown=0"});
  ModelSpec m = gpt(8);
  m.seq_len = 256;
  JobConfig j = job_for(1, 1, 16, 16);
  j.parallelism.zero = 3;
  j.overlap_grad_reduce = true;
  const StepResult on = step(s, j, m, true);
  j.overlap_grad_reduce = false;
  const StepResult off = step(s, j, m);
  REQUIRE(on.micro_batches == 1);
  // the gathers outlast the compute: the forward pass alone exposes DP time
  REQUIRE(off.breakdown.dp > off.breakdown.compute);
  CHECK(on.step_time_s == Rel(off.step_time_s).epsilon(1e-9));
  // The trace shows the chunk's gathers on the final reductions' stream, first, from the last
  // backward's start; then its layers' reductions.
  std::vector<const TraceSpan*> dp;
  for (const TraceSpan& t : on.trace) {
    if (t.category == "dp") dp.push_back(&t);
  }
  REQUIRE(dp.size() >= 2);
  CHECK(dp.front()->name == "all_gather params chunk 0");
  CHECK(dp.back()->name.starts_with("reduce_scatter chunk 0"));
  const auto gathers = std::count_if(dp.begin(), dp.end(), [](const TraceSpan* t) {
    return t->name.starts_with("all_gather");
  });
  CHECK(gathers == 1);

  // On M = 4 micro-batches, each backward but the last also reduce-scatters its gradients
  // (one chunk's reduce-scatter r, measured below as ZeRO-2's extra DP time over ZeRO-1,
  // (M - 1) r without overlap). Gather-bound, a pass hides none of it: overlap only moves
  // the last pass's averaged share, (M - 1)/M r, behind the final stream. Counting each
  // collective against the compute in full would save about another (M - 1) x the
  // backward's compute here.
  const std::int64_t M = 4;
  JobConfig k = job_for(1, 1, 16, 16 * M);
  k.overlap_grad_reduce = false;
  k.parallelism.zero = 1;
  const StepResult z1 = step(s, k, m);
  k.parallelism.zero = 2;
  const StepResult z2 = step(s, k, m);
  const double r = (z2.step_time_s - z1.step_time_s) / static_cast<double>(M - 1);
  REQUIRE(r > 0.0);
  k.parallelism.zero = 3;
  const StepResult off3 = step(s, k, m);
  k.overlap_grad_reduce = true;
  const StepResult on3 = step(s, k, m);
  CHECK(off3.step_time_s - on3.step_time_s == Rel(r * static_cast<double>(M - 1) / static_cast<double>(M)).epsilon(1e-6));
}

TEST_CASE("ZeRO-3: overlapping the gradient reductions never makes the step slower") {
  // A large vocabulary makes the output and embedding layers most of the parameters: their
  // gathers and reductions dominate the last backward. The stream carries the gathers first,
  // then the reductions as they become ready: never later than all of them after the pass.
  const auto s = small_cluster({"network.overlap_slowdown=0"});
  ModelSpec m = gpt(1, 512, 8);
  m.vocab = 128256;
  m.seq_len = 512;
  for (const std::int64_t M : {1, 2, 4}) {
    CAPTURE(M);
    JobConfig j = job_for(1, 1, 16, 16 * M);
    j.parallelism.zero = 3;
    j.overlap_grad_reduce = true;
    const StepResult on = step(s, j, m);
    j.overlap_grad_reduce = false;
    const StepResult off = step(s, j, m);
    CHECK(on.step_time_s <= off.step_time_s * (1.0 + 1e-12));
  }
}

TEST_CASE("ZeRO-1 with overlap_param_gather: the next step's first forward hides the parameter all-gather") {
  // Without it the all-gather after the optimizer is exposed in full; with it the stage's
  // first forward pass hides min(gather, its compute), slowed by overlap_slowdown. No TP
  // and one stage, so the forward pass is compute alone; a long and a short sequence give a
  // compute-bound and a gather-bound case.
  for (const double slowdown : {0.0, 0.189}) {
    const auto s = small_cluster({"fabric.radix=16", "fabric.tiers=2", "fabric.oversubscription=1:3",
                                  "network.overlap_slowdown=" + std::to_string(slowdown)});
    for (const std::int64_t seq : {256, 8192}) {
      CAPTURE(slowdown);
      CAPTURE(seq);
      ModelSpec m = gpt(8);
      m.seq_len = seq;
      JobConfig j = job_for(1, 1, 16, 32);
      j.parallelism.zero = 1;
      const StepResult off = step(s, j, m, true);
      j.overlap_param_gather = true;
      const StepResult on = step(s, j, m);
      const auto span = [&](std::string_view name) {
        const auto it = std::find_if(off.trace.begin(), off.trace.end(), [&](const TraceSpan& t) { return t.name == name; });
        REQUIRE(it != off.trace.end());
        return it->end_s - it->start_s;
      };
      const double gather = span("all_gather params");
      const double forward = span("F mb 0 chunk 0");
      const double hidden = std::min(gather, forward);
      CHECK(off.step_time_s - on.step_time_s == Rel((1.0 - slowdown) * hidden).epsilon(1e-6));
      CHECK(on.breakdown.contention - off.breakdown.contention == Rel(slowdown * hidden).epsilon(1e-6).margin(1e-15));
      CHECK(on.breakdown.total() == Rel(on.step_time_s));
    }
  }
}

TEST_CASE("a backward pass's layers take their share of its compute: per-layer costs add up to the pass") {
  const auto s = small_cluster();
  const compute::ComputeProfile profile = compute::default_profile(s.node.gpu_name, s.node.gpu);
  for (const bool tied : {false, true}) {
    ModelSpec m = gpt(6);
    m.vocab = 32000;  // an output layer that costs something
    m.tied_embeddings = tied;
    for (const std::int64_t pp : {1, 2}) {
      const auto costs = chunk_costs(job_for(2, pp, 1, 8), m, profile);
      for (const ChunkCost& c : costs) {
        CAPTURE(tied);
        CAPTURE(pp);
        REQUIRE(c.layer_backward_compute_s.size() == c.layer_gradient_params.size());
        double sum = 0.0;
        for (const double t : c.layer_backward_compute_s) {
          CHECK(t > 0.0);
          sum += t;
        }
        CHECK(sum == Rel(c.backward.compute_s).epsilon(1e-12));
      }
      // The output layer (backward's first) costs more than the embedding lookup (its last).
      if (pp == 1 && !tied) {
        CHECK(costs[0].layer_backward_compute_s.front() > costs[0].layer_backward_compute_s.back());
      }
    }
  }
}

TEST_CASE("rank order: DP innermost puts the TP group across nodes, and TP gets slower") {
  const auto s = small_cluster();
  const ModelSpec m = gpt(8);
  JobConfig j = job_for(8, 1, 8, 64);
  const StepResult inside = step(s, j, m);
  j.parallelism.order = {Axis::dp, Axis::tp, Axis::cp, Axis::pp};
  const StepResult across = step(s, j, m);
  CHECK(across.breakdown.tp > 2.0 * inside.breakdown.tp);
}

TEST_CASE("the same inputs give the same step, to the bit") {
  const auto s = small_cluster({"network.model=flow"});
  const ModelSpec m = gpt(8);
  const JobConfig j = job_for(8, 2, 4, 32);
  const StepResult a = step(s, j, m);
  const StepResult b = step(s, j, m);
  CHECK(a.step_time_s == b.step_time_s);
  CHECK(a.breakdown.bubble == b.breakdown.bubble);
}

TEST_CASE("NVLink SHARP speeds up the TP all-reduces of a job without sequence parallelism") {
  const ModelSpec m = gpt(8);
  // All-reduces of 2 x 2048 x 4096 x 2 B = 32 MiB: large enough to repay NVLS's 25 us
  // (network.nvls_latency), as NCCL takes NVLS for large all-reduces only.
  JobConfig j = job_for(8, 1, 8, 64);
  j.micro_batch = 2;
  const StepResult ring = step(small_cluster(), j, m);
  const StepResult nvls = step(small_cluster({"network.nvls=true"}), j, m);
  CHECK(nvls.breakdown.tp < 0.95 * ring.breakdown.tp);
  const auto tp_algo = std::find_if(nvls.comm.begin(), nvls.comm.end(),
                                    [](const CommTiming& c) { return c.group == Group::tp; });
  REQUIRE(tp_algo != nvls.comm.end());
  CHECK(tp_algo->algorithm == network::Algorithm::nvls);
}

TEST_CASE("the time to train counts whole steps: the last one runs in full") {
  // 1M tokens at 524,288 tokens a step take 2 steps, not 1.907.
  StepResult step;
  step.step_time_s = 0.5;
  step.tokens_per_step = 524288;
  step.tokens_per_s = step.tokens_per_step / step.step_time_s;
  JobConfig job;
  job.train_tokens = sim::Count::of(1e6);
  CHECK(tokens_in_whole_steps(1e6, step) == 2 * 524288.0);
  CHECK(ideal_time_to_train_s(job, step) == Rel(2 * 0.5));
  // A whole number of steps stays as it is.
  CHECK(tokens_in_whole_steps(3 * 524288.0, step) == 3 * 524288.0);
  job.train_tokens.reset();
  CHECK(std::isnan(ideal_time_to_train_s(job, step)));
}
