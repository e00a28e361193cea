// The compute cost model: equations, assumptions, limitations, validation.
//
// GEMM. C[m x n] = A[m x k] B[k x n], `batch` independent products, datatype d of
// e(d) bytes per element (fp32/tf32 4, bf16/fp16 2, fp8 1):
//
//   flops      = 2 b m n k
//   tiles      = b ceil(m / tile_m) ceil(n / tile_n)
//   wave       = b m n / (ceil(tiles / sms) sms tile_m tile_n)   (wave quantization)
//   eff        = gemm_efficiency(d) x wave x k' / (k' + k_half),  k' = min(k, k_saturation)
//   t_compute  = flops / (peak(d) eff sustained_factor)
//   t_memory   = b (m k + k n + m n) e(d) / hbm_bandwidth          (A, B read; C written once)
//   t          = launch_overhead + max(t_compute, t_memory)
//
// `wave` is the useful share of the SM time the kernel occupies: tiles / (ceil(tiles /
// sms) sms) when m and n are multiples of the tile (133 tiles on 132 SMs take two waves,
// wave = 133/264), times the padding m n / (tile_m ceil(m / tile_m) tile_n ceil(n /
// tile_n)) of partial tiles. With the padding, t_compute = 2 tile_m tile_n (k + k_half)
// ceil(tiles / sms) / (peak / sms x gemm_efficiency): time is monotone in m, n, k and b.
// gemm_efficiency is the asymptote: the share of peak a large, well-shaped GEMM reaches.
// The tile is an *effective* unit of work, not one kernel's CTA tile: libraries pick
// among tiles, split-K and stream-K per shape, and on the H100 table below a 64 x 64
// quantum fits best (median error 4%, against 6% for 64 x 128 and 14% for 128 x 128).
// k / (k + k_half) charges each tile a fixed prologue/epilogue worth k_half steps of its
// main loop. It stops rising at k_saturation where a scan of shapes found its best at that
// depth and nothing better deeper (mamf-finder on H100: 80.1% at k = 2,816, no deeper shape
// above it; the term alone would reach 83% at k = 16,384). The memory roofline is a floor: a GEMM is never faster than moving its
// operands once at the achieved HBM bandwidth.
//
// Fused (flash) attention. bh = batch x heads, q and kv sequence lengths, head_dim h:
//
//   flops_fwd  = 4 bh q kv h, halved when causal (the masked half is skipped)
//   flops_bwd  = 2.5 flops_fwd       (5 matmuls instead of 2, FlashAttention-2 section 3)
//   bytes_fwd  = bh (2 q h + 2 kv h) e(d)        (read Q, K, V; write O)
//   bytes_bwd  = bh (4 q h + 4 kv h) e(d)        (read Q, K, V, O, dO; write dQ, dK, dV)
//   eff        = attention_efficiency x kv / (kv + kv_half),  kv_half = attention_kv_half,
//                twice that when causal (no term when 0); backward at attention_backward_efficiency
//   t          = launch_overhead + max(flops / (peak(d) eff), bytes / hbm_bandwidth)
//
// The sequence term: an H200's cuDNN fused attention, held at its power limit, ran causal
// forward calls at 28-29% of peak at 1K tokens and 60% at 32K, non-causal ones at 44-48% and
// 63-64% (validation/calibration/measured/h200-sxm/attention*.jsonl): short sequences leave the
// kernel's tiles and pipeline underused, and a causal kernel more so (its diagonal blocks are
// computed whole, its rows are of unequal length). One kv_half, twice for causal kernels,
// fits the 48 calls of two runs with a median error of 3% forward, 2% backward (worst 17%,
// a 1K non-causal call; the runs differ by up to 20% at 2K, 1% at 32K).
//
// Memory-bound kernel (element-wise, norms, softmax outside flash attention):
//
//   t = launch_overhead + bytes / hbm_bandwidth
//
// peak(d) is the profile's vendor dense peak for d (copied from the catalog). fp8 on a GPU
// without FP8 (A100) runs at the bf16 peak: the work falls back to a bf16 kernel.
//
// sustained_factor: GEMM efficiencies published as burst figures (a kernel timed for
// milliseconds, at boost clocks) overstate a training run, which keeps the GPU at its power
// limit for hours: an H200 held an 8192^3 bf16 GEMM at 676 TFLOP/s over a minute, against
// 794 timed at once (validation/calibration/measured/h200-sxm/). The factor scales the GEMM
// compute term, not the memory roofline (HBM keeps its clock) nor attention, whose
// efficiencies are held figures where measured (attention draws less power than a GEMM: the
// H200 held 605-608 TFLOP/s of non-causal attention at 8K, 0.94 of the 646 FlashAttention-3
// published for an H100 at 8K, where the GEMM held 0.85 of its burst rate).
//
// Assumptions: one kernel per call, alone on the GPU (no overlap with communication
// kernels, which share SMs and HBM in practice); operands in HBM, not L2; one clock for
// every kernel of a run (the held one: sustained_factor for GEMMs), whatever its power draw.
//
// LIMITATIONS: the shape terms are fitted to one library (cuBLAS via XLA on H100) and
// carried to the other GPUs as ESTIMATEs; the kernel library's per-shape heuristics are
// not modelled, so individual shapes can be off by tens of percent (worst case in the
// H100 table: 256 x 256 x 4096, which cuBLAS runs faster than 256 x 256 x 2048, 78%
// over). Attention's only shape term is its sequence length: small head_dim is optimistic.
// Causal halving ignores the diagonal blocks, and K/V traffic is counted per query head
// (grouped-query attention reads less).
//
// Validation: tests/models/test_compute.cpp compares the H100 profile with the 125 b=1
// bf16 points of OpenXLA's measured H100 GEMM table
// (xla/service/gpu/model/matmul_interpolator_data.h): median |error| 4.1%, 90th
// percentile 10.6%, worst 78% (the point above), 21% without it. Calibration sources: profiles.yaml.
#include "models/compute/profile.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/hardware/catalog.hpp"
#include "sim/check.hpp"

namespace clustersim::compute {

namespace {

double rate(const std::optional<sim::FlopRate>& r) { return r ? r->value() : 0.0; }

// In doubles: a + b - 1 could overflow (m and n are products of the model's dimensions).
double ceil_div(std::int64_t a, std::int64_t b) { return std::ceil(static_cast<double>(a) / static_cast<double>(b)); }

/// The compute-side efficiency without the memory floor, for a GEMM whose best share of
/// peak is `best`. Precondition: s is not empty.
double shape_efficiency(const GemmShape& s, double best, const ComputeProfile& p) {
  const double k = p.k_saturation > 0.0 ? std::min(static_cast<double>(s.k), p.k_saturation) : static_cast<double>(s.k);
  return best * wave_efficiency(s, p) * k / (k + p.k_half);
}

bool empty(const GemmShape& s) { return s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0; }

double checked_peak(Dtype d, const ComputeProfile& p) {
  const double peak = peak_flops(d, p);
  CLUSTERSIM_CHECK(peak > 0.0, fmt::format("compute profile '{}' has no {} peak", p.gpu, config::enum_name(d)));
  return peak;
}

}  // namespace

double dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::tf32:
      return 4.0;
    case Dtype::bf16:
    case Dtype::fp16:
      return 2.0;
    case Dtype::fp8:
      return 1.0;
  }
  return 0.0;
}

double peak_flops(Dtype d, const ComputeProfile& p) {
  const hardware::PeakFlops& f = p.peak_flops;
  switch (d) {
    case Dtype::fp32:
      return rate(f.fp32);
    case Dtype::tf32:
      return rate(f.tf32);
    case Dtype::bf16:
      return rate(f.bf16);
    case Dtype::fp16:
      return rate(f.fp16);
    case Dtype::fp8:
      return f.fp8 ? rate(f.fp8) : rate(f.bf16);
  }
  return 0.0;
}

double gemm_efficiency(Dtype d, const ComputeProfile& p) {
  const DtypeEfficiency& e = p.gemm_efficiency_by_dtype;
  std::optional<double> v;
  switch (d) {
    case Dtype::fp32:
      v = e.fp32;
      break;
    case Dtype::tf32:
      v = e.tf32;
      break;
    case Dtype::bf16:
      v = e.bf16;
      break;
    case Dtype::fp16:
      v = e.fp16;
      break;
    case Dtype::fp8:
      v = e.fp8;
      break;
  }
  return v.value_or(p.gemm_efficiency);
}

double wave_efficiency(const GemmShape& s, const ComputeProfile& p) {
  if (empty(s) || p.sms < 1 || p.tile_m < 1 || p.tile_n < 1) return 1.0;
  const double tiles = static_cast<double>(s.batch) * ceil_div(s.m, p.tile_m) * ceil_div(s.n, p.tile_n);
  const auto sms = static_cast<double>(p.sms);
  const double useful = static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n);
  return useful / (std::ceil(tiles / sms) * sms * static_cast<double>(p.tile_m) * static_cast<double>(p.tile_n));
}

double gemm_shape_efficiency(const GemmShape& s, const ComputeProfile& p) {
  return empty(s) ? 0.0 : shape_efficiency(s, gemm_efficiency(Dtype::bf16, p), p);
}

double gemm_seconds(const GemmShape& s, Dtype d, const ComputeProfile& p) {
  if (empty(s)) return 0.0;
  const double peak = checked_peak(d, p);
  const auto m = static_cast<double>(s.m);
  const auto n = static_cast<double>(s.n);
  const auto k = static_cast<double>(s.k);
  const auto b = static_cast<double>(s.batch);
  const double compute =
      2.0 * b * m * n * k / (peak * shape_efficiency(s, gemm_efficiency(d, p), p) * p.sustained_factor);
  const double memory = b * (m * k + k * n + m * n) * dtype_bytes(d) / p.hbm_bandwidth.value();
  return p.launch_overhead.seconds() + std::max(compute, memory);
}

double attention_seconds(const AttentionShape& s, Dtype d, bool backward, const ComputeProfile& p) {
  if (s.batch_heads <= 0 || s.q_len <= 0 || s.kv_len <= 0 || s.head_dim <= 0) return 0.0;
  const double peak = checked_peak(d, p);
  const auto bh = static_cast<double>(s.batch_heads);
  const auto q = static_cast<double>(s.q_len);
  const auto kv = static_cast<double>(s.kv_len);
  const auto h = static_cast<double>(s.head_dim);
  double flops = 4.0 * bh * q * kv * h * (s.causal ? 0.5 : 1.0);
  double bytes = bh * (2.0 * q * h + 2.0 * kv * h) * dtype_bytes(d);
  if (backward) {
    flops *= 2.5;
    bytes *= 2.0;
  }
  const double efficiency =
      backward && p.attention_backward_efficiency > 0.0 ? p.attention_backward_efficiency : p.attention_efficiency;
  const double kv_half = p.attention_kv_half * (s.causal ? 2.0 : 1.0);
  const double compute = flops / (peak * efficiency * kv / (kv + kv_half));
  const double memory = bytes / p.hbm_bandwidth.value();
  return p.launch_overhead.seconds() + std::max(compute, memory);
}

double memory_seconds(double bytes, const ComputeProfile& p) {
  if (bytes <= 0.0) return 0.0;
  return p.launch_overhead.seconds() + bytes / p.hbm_bandwidth.value();
}

ComputeProfile default_profile(std::string_view gpu_name, const hardware::GpuSpec& gpu) {
  // Derived from the spec; the built-in entry, if any, overlays its keys on this.
  ComputeProfile p;
  p.gpu = std::string(gpu_name);
  p.sms = gpu.sms;
  p.peak_flops = gpu.peak_flops;
  p.hbm_bandwidth = gpu.hbm_bandwidth * 0.85;
  p.launch_overhead = sim::Time::from_ns(5'000);
  p.source = fmt::format(
      "DERIVED: no built-in profile for '{}'; catalog peaks and SMs, generic ESTIMATEs: gemm_efficiency 0.8, "
      "attention_efficiency 0.7, tile 64x64, k_half 128, 85% of the datasheet HBM bandwidth, 5us launch",
      gpu_name);

  const YAML::Node root = YAML::Load(std::string(builtin_profiles_text()));
  const YAML::Node entry = root["profiles"][std::string(gpu_name)];
  if (!entry) return p;
  config::LoadState state;
  const config::Context ctx =
      config::Context(state, std::string(kBuiltinProfilesFile)).child("profiles").child(gpu_name);
  config::Codec<ComputeProfile>::decode(entry, p, ctx);
  CLUSTERSIM_CHECK(state.diagnostics.ok(), state.diagnostics.format());
  // The entry's achieved HBM bandwidth is a share of the built-in GPU's datasheet figure: a
  // catalog file that redefines the GPU with another datasheet bandwidth gets that share of
  // its own (it kept the built-in figure, above the one the user wrote).
  static const hardware::Catalog builtin = [] {
    hardware::Catalog c;
    config::LoadState s;
    config::Codec<hardware::Catalog>::decode(YAML::Load(std::string(hardware::builtin_catalog_text())), c,
                                             config::Context(s, std::string(hardware::kBuiltinCatalogFile)));
    CLUSTERSIM_CHECK(s.diagnostics.ok(), s.diagnostics.format());
    return c;
  }();
  if (const auto it = builtin.gpus.find(std::string(gpu_name)); it != builtin.gpus.end()) {
    const double datasheet = it->second.hbm_bandwidth.value();
    const double given = gpu.hbm_bandwidth.value();
    if (datasheet > 0.0 && given > 0.0 && given != datasheet) {
      p.hbm_bandwidth = p.hbm_bandwidth * (given / datasheet);
      p.source += fmt::format(" hbm_bandwidth scaled to the catalog's {} ({:.1f}% of it, the built-in share of {}).",
                              sim::format_bandwidth(gpu.hbm_bandwidth), 100.0 * p.hbm_bandwidth.value() / given,
                              sim::format_bandwidth(it->second.hbm_bandwidth));
    }
  }
  return p;
}

}  // namespace clustersim::compute
