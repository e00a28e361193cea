// The compute cost model: its equations on a synthetic profile, the built-in profiles,
// and the H100 profile against OpenXLA's measured H100 GEMM table.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/compute/profile.hpp"
#include "models/hardware/catalog.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::compute;

namespace {

constexpr double kPeak = 1e15;  // FLOP/s, bf16

/// A profile with round numbers: 132 SMs, 128 x 128 tiles, no k term, no launch, an HBM
/// so fast that GEMMs are compute-bound unless a test says otherwise.
ComputeProfile synthetic() {
  ComputeProfile p;
  p.gpu = "synthetic";
  p.sms = 132;
  p.peak_flops.bf16 = sim::FlopRate::of(kPeak);
  p.peak_flops.fp32 = sim::FlopRate::of(kPeak / 16);
  p.gemm_efficiency = 0.8;
  p.tile_m = 128;
  p.tile_n = 128;
  p.k_half = 0;
  p.attention_efficiency = 0.5;
  p.hbm_bandwidth = sim::Bandwidth::of(1e18);
  p.launch_overhead = sim::Time::zero();
  return p;
}

hardware::Catalog builtin_catalog() {
  config::LoadState state;
  hardware::Catalog c;
  config::Codec<hardware::Catalog>::decode(YAML::Load(std::string(hardware::builtin_catalog_text())), c,
                                           config::Context(state, std::string(hardware::kBuiltinCatalogFile)));
  REQUIRE(state.diagnostics.ok());
  return c;
}

ComputeProfile builtin(const std::string& name) {
  const hardware::Catalog c = builtin_catalog();
  REQUIRE(c.gpus.count(name) == 1);
  return default_profile(name, c.gpus.at(name));
}

double flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n) *
         static_cast<double>(s.k);
}

}  // namespace

TEST_CASE("element sizes and peaks per datatype; fp8 falls back to bf16 without FP8") {
  CHECK(dtype_bytes(Dtype::fp32) == 4.0);
  CHECK(dtype_bytes(Dtype::tf32) == 4.0);
  CHECK(dtype_bytes(Dtype::bf16) == 2.0);
  CHECK(dtype_bytes(Dtype::fp16) == 2.0);
  CHECK(dtype_bytes(Dtype::fp8) == 1.0);

  const ComputeProfile h100 = builtin("h100-sxm");
  CHECK(peak_flops(Dtype::bf16, h100) == Rel(989.4e12));
  CHECK(peak_flops(Dtype::tf32, h100) == Rel(494.7e12));
  CHECK(peak_flops(Dtype::fp32, h100) == Rel(66.9e12));
  CHECK(peak_flops(Dtype::fp8, h100) == Rel(1978.9e12));
  const ComputeProfile a100 = builtin("a100-sxm-80gb");
  CHECK(peak_flops(Dtype::fp8, a100) == Rel(312e12));  // no FP8 on Ampere: bf16
  const ComputeProfile s = synthetic();
  CHECK(peak_flops(Dtype::tf32, s) == 0.0);  // absent and no fallback
}

TEST_CASE("wave quantization: tiles / (ceil(tiles / sms) sms), times the padding of partial tiles") {
  const ComputeProfile p = synthetic();  // 132 SMs, 128 x 128 tiles
  struct Row {
    GemmShape s;
    double wave;
  };
  const Row rows[] = {
      {{128 * 132, 128, 4096, 1}, 1.0},             // 132 tiles: one full wave
      {{128 * 133, 128, 4096, 1}, 133.0 / 264.0},   // 133 tiles take two waves
      {{128 * 66, 128, 4096, 1}, 0.5},              // half the SMs idle
      {{128 * 66, 128, 4096, 2}, 1.0},              // the batch fills them
      {{128 * 132, 64, 4096, 1}, 0.5},              // half of each tile is padding
      {{128 * 264, 128, 4096, 1}, 1.0},             // exactly two waves
  };
  for (const Row& r : rows) {
    CAPTURE(r.s.m);
    CAPTURE(r.s.n);
    CAPTURE(r.s.batch);
    CHECK(wave_efficiency(r.s, p) == Rel(r.wave));
    // t = 2 b m n k / (peak x gemm_efficiency x wave)   (k_half 0, launch 0, HBM not binding)
    CHECK(gemm_seconds(r.s, Dtype::bf16, p) == Rel(flops(r.s) / (kPeak * 0.8 * r.wave)));
  }
  // 133 tiles take as long as 264: the second wave costs a whole wave.
  CHECK(gemm_seconds({128 * 133, 128, 4096, 1}, Dtype::bf16, p) ==
        Rel(gemm_seconds({128 * 264, 128, 4096, 1}, Dtype::bf16, p)));
}

TEST_CASE("a large square GEMM reaches gemm_efficiency x wave x k' / (k' + k_half) x sustained_factor, k' = min(k, k_saturation)") {
  for (const char* name : {"h100-sxm", "h200-sxm", "a100-sxm-80gb", "mi300x", "b200"}) {
    CAPTURE(name);
    const ComputeProfile p = builtin(name);
    const GemmShape s{16384, 16384, 16384, 1};
    const double t = gemm_seconds(s, Dtype::bf16, p) - p.launch_overhead.seconds();
    const double achieved = flops(s) / t / peak_flops(Dtype::bf16, p);
    const double k = p.k_saturation > 0 ? std::min(16384.0, p.k_saturation) : 16384.0;
    CHECK(achieved == Rel(p.gemm_efficiency * wave_efficiency(s, p) * k / (k + p.k_half) * p.sustained_factor));
    CHECK(achieved == Rel(gemm_shape_efficiency(s, p) * p.sustained_factor));
    // and that is within 1.5% of the asymptote of the k term where it stops
    CHECK(achieved > 0.985 * p.gemm_efficiency * k / (k + p.k_half) * p.sustained_factor);
    CHECK(achieved <= p.gemm_efficiency * p.sustained_factor);
  }
  // The GH100 GPUs hold less than a burst measurement: the H100's published burst figures
  // carry a factor, the H200's measured (held) ones none.
  CHECK(builtin("h100-sxm").sustained_factor == 0.851);
  CHECK(builtin("h200-sxm").sustained_factor == 1.0);
}

TEST_CASE("sustained_factor slows the compute-bound GEMM, not attention (held figures) nor memory-bound work") {
  ComputeProfile burst = builtin("h100-sxm");
  burst.sustained_factor = 1.0;
  ComputeProfile held = burst;
  held.sustained_factor = 0.8;
  const double launch = burst.launch_overhead.seconds();
  const GemmShape big{8192, 8192, 8192, 1};
  CHECK(gemm_seconds(big, Dtype::bf16, held) - launch == Rel((gemm_seconds(big, Dtype::bf16, burst) - launch) / 0.8));
  const AttentionShape att{64, 8192, 8192, 128, true};
  CHECK(attention_seconds(att, Dtype::bf16, true, held) == attention_seconds(att, Dtype::bf16, true, burst));
  // A GEMM bound by HBM (a matrix-vector product) and a memory-bound kernel are not slowed.
  const GemmShape thin{8192, 1, 8192, 1};
  CHECK(gemm_seconds(thin, Dtype::bf16, held) == gemm_seconds(thin, Dtype::bf16, burst));
  CHECK(memory_seconds(1e9, held) == memory_seconds(1e9, burst));
}

TEST_CASE("no GEMM runs above the best share of peak that mamf-finder's scan of shapes measured") {
  // mamf-finder (ml-engineering, "Maximum Achievable Matmul FLOPS"): H100 SXM best 792.1
  // TFLOP/s = 80.1% at 6144x17920x2816, A100 SXM 267.9 = 85.9% at 6912x16384x2048; the
  // scans went deeper than those k. The model meets each best at its shape (within 0.5%)
  // and stays at or below it on deeper, larger shapes, where the k term alone rose to 83%
  // (H100) and 90% (A100).
  struct Best {
    const char* gpu;
    GemmShape at;
    double share;
  };
  for (const Best& b : {Best{"h100-sxm", {6144, 17920, 2816, 1}, 792.1 / 989.4},
                        Best{"a100-sxm-80gb", {6912, 16384, 2048, 1}, 267.9 / 312.0}}) {
    CAPTURE(b.gpu);
    const ComputeProfile p = builtin(b.gpu);
    CHECK(gemm_shape_efficiency(b.at, p) == Rel(b.share).epsilon(0.005));
    for (const GemmShape& s : {GemmShape{16384, 16384, 16384, 1}, GemmShape{8192, 8192, 20480, 1},
                               GemmShape{16896, 16896, 8192, 1}}) {
      CAPTURE(s.k);
      CHECK(gemm_shape_efficiency(s, p) <= b.share * 1.005);
    }
  }
}

TEST_CASE("GEMM time is monotone in each dimension and in the batch") {
  const ComputeProfile p = builtin("h100-sxm");
  const std::vector<std::int64_t> sizes = {1,    7,    63,   64,   65,   127,  128,  129,  200,
                                           256,  1000, 1024, 4095, 4096, 4097, 8192, 8448, 16384};
  const std::int64_t base[] = {1, 64, 1000, 4096};
  for (int dim = 0; dim < 4; ++dim) {
    for (std::int64_t other : base) {
      double last = 0.0;
      for (std::int64_t v : sizes) {
        GemmShape s{other, other, other, 1};
        if (dim == 0) s.m = v;
        if (dim == 1) s.n = v;
        if (dim == 2) s.k = v;
        if (dim == 3) s.batch = v;
        const double t = gemm_seconds(s, Dtype::bf16, p);
        CAPTURE(dim);
        CAPTURE(other);
        CAPTURE(v);
        CHECK(t >= last * (1 - 1e-12));  // equal times may differ in the last bit
        last = t;
      }
    }
  }
}

TEST_CASE("the memory roofline binds for skinny GEMMs: t = launch + b (mk + kn + mn) e(d) / hbm") {
  const ComputeProfile p = builtin("h100-sxm");
  const double hbm = p.hbm_bandwidth.value();
  const double launch = p.launch_overhead.seconds();
  struct Row {
    GemmShape s;
    Dtype d;
  };
  const Row rows[] = {
      {{1, 8192, 8192, 1}, Dtype::bf16},     // GEMV: one token through a weight matrix
      {{8, 16384, 16384, 1}, Dtype::bf16},   // small decode batch
      {{16, 8192, 28672, 1}, Dtype::fp8},    // fp8 weights: half the bytes
      {{4, 4096, 4096, 8}, Dtype::bf16},     // batched
  };
  for (const Row& r : rows) {
    CAPTURE(r.s.m);
    const auto m = static_cast<double>(r.s.m);
    const auto n = static_cast<double>(r.s.n);
    const auto k = static_cast<double>(r.s.k);
    const auto b = static_cast<double>(r.s.batch);
    const double bytes = b * (m * k + k * n + m * n) * dtype_bytes(r.d);
    CHECK(gemm_seconds(r.s, r.d, p) == Rel(launch + bytes / hbm));
    // and the compute term alone would have been faster
    CHECK(flops(r.s) / (peak_flops(r.d, p) * gemm_shape_efficiency(r.s, p)) < bytes / hbm);
  }
}

TEST_CASE("fp8 GEMMs run at twice the bf16 rate on H100 and at the bf16 rate on A100") {
  const GemmShape s{8192, 8192, 8192, 1};
  const ComputeProfile h100 = builtin("h100-sxm");
  const double l = h100.launch_overhead.seconds();
  // The datasheet's rounded peaks, 1,978.9 and 989.4 TFLOP/s, are 2 x within 5e-5.
  CHECK((gemm_seconds(s, Dtype::fp8, h100) - l) * 2 == Rel(gemm_seconds(s, Dtype::bf16, h100) - l).epsilon(1e-4));
  const ComputeProfile a100 = builtin("a100-sxm-80gb");
  CHECK(gemm_seconds(s, Dtype::fp8, a100) == Rel(gemm_seconds(s, Dtype::bf16, a100)));
}

TEST_CASE("attention: 4 bh q kv h FLOPs forward, halved when causal, 2.5x backward") {
  ComputeProfile p = builtin("h100-sxm");
  p.attention_kv_half = 0.0;  // the FLOP count alone (the sequence term: the next test)
  const double launch = p.launch_overhead.seconds();
  const double rate = peak_flops(Dtype::bf16, p) * p.attention_efficiency;
  AttentionShape full{64, 8192, 8192, 128, false};
  AttentionShape causal = full;
  causal.causal = true;
  const double f = 4.0 * 64 * 8192.0 * 8192.0 * 128;
  // forward, non-causal: t = launch + 4 bh q kv h / (peak x attention_efficiency)
  CHECK(attention_seconds(full, Dtype::bf16, false, p) == Rel(launch + f / rate));
  // causal halves the time, less the launch
  CHECK(attention_seconds(causal, Dtype::bf16, false, p) - launch ==
        Rel((attention_seconds(full, Dtype::bf16, false, p) - launch) / 2));
  // backward: 2.5 x the forward FLOPs, at the backward efficiency
  CHECK(attention_seconds(causal, Dtype::bf16, true, p) - launch ==
        Rel(2.5 * (attention_seconds(causal, Dtype::bf16, false, p) - launch) * p.attention_efficiency /
                        p.attention_backward_efficiency));
  CHECK(p.attention_backward_efficiency < p.attention_efficiency);  // measured on an H200: 57.8% vs 63.8%
  compute::ComputeProfile same = p;
  same.attention_backward_efficiency = 0.0;  // unset: as the forward
  CHECK(attention_seconds(causal, Dtype::bf16, true, same) - launch ==
        Rel(2.5 * (attention_seconds(causal, Dtype::bf16, false, same) - launch)));
  // a short sequence is memory-bound: bytes = bh (2 q h + 2 kv h) e(d)
  const AttentionShape tiny{4096, 16, 16, 128, false};
  const double bytes = 4096.0 * (2 * 16 * 128 + 2 * 16 * 128) * 2;
  CHECK(attention_seconds(tiny, Dtype::bf16, false, p) == Rel(launch + bytes / p.hbm_bandwidth.value()));
}

TEST_CASE("attention reaches its efficiency x kv / (kv + kv_half), twice kv_half when causal") {
  ComputeProfile p = builtin("h200-sxm");
  REQUIRE(p.attention_kv_half > 0.0);  // measured: 543.8
  ComputeProfile flat = p;
  flat.attention_kv_half = 0.0;
  const double launch = p.launch_overhead.seconds();
  for (const std::int64_t kv : {1024, 8192, 32768}) {
    for (const bool causal : {false, true}) {
      CAPTURE(kv);
      CAPTURE(causal);
      const AttentionShape s{8, kv, kv, 128, causal};
      const double h = p.attention_kv_half * (causal ? 2.0 : 1.0);
      for (const bool backward : {false, true}) {
        CHECK(attention_seconds(s, Dtype::bf16, backward, p) - launch ==
              Rel((attention_seconds(s, Dtype::bf16, backward, flat) - launch) * (double(kv) + h) / double(kv)));
      }
    }
  }
  // The H200's causal forward calls measured 28-29% of peak at 1K, 60% at 32K: the term puts
  // them within 10% (validation/calibration/measured/h200-sxm/attention*.jsonl).
  const double peak = peak_flops(Dtype::bf16, p);
  const auto share = [&](std::int64_t kv) {
    const AttentionShape s{8, kv, kv, 128, true};
    return 4.0 * 8 * double(kv) * double(kv) * 128 * 0.5 / (attention_seconds(s, Dtype::bf16, false, p) - launch) / peak;
  };
  CHECK(share(1024) == Rel(283.0 / 989.4).epsilon(0.10));
  CHECK(share(32768) == Rel(594.4 / 989.4).epsilon(0.10));
}

TEST_CASE("memory-bound kernels: t = launch + bytes / hbm; empty work costs nothing") {
  const ComputeProfile p = builtin("h200-sxm");
  CHECK(memory_seconds(1e9, p) == Rel(p.launch_overhead.seconds() + 1e9 / p.hbm_bandwidth.value()));
  CHECK(memory_seconds(0.0, p) == 0.0);
  CHECK(gemm_seconds({0, 4096, 4096, 1}, Dtype::bf16, p) == 0.0);
  CHECK(gemm_seconds({4096, 4096, 4096, 0}, Dtype::bf16, p) == 0.0);
  CHECK(attention_seconds({0, 4096, 4096, 128, true}, Dtype::bf16, true, p) == 0.0);
  // a GEMM in a datatype the GPU lacks is a broken precondition, not a silent zero
  CHECK_THROWS(gemm_seconds({64, 64, 64, 1}, Dtype::tf32, synthetic()));
}

TEST_CASE("a catalog GPU redefined with another HBM bandwidth gets the built-in share of it") {
  const hardware::Catalog c = builtin_catalog();
  hardware::GpuSpec slow = c.gpus.at("h100-sxm");
  const ComputeProfile stock = default_profile("h100-sxm", slow);
  CHECK(stock.hbm_bandwidth.value() == Rel(2.903e12));  // 86.7% of 3.35 TB/s, as profiles.yaml says
  slow.hbm_bandwidth = sim::Bandwidth::of(100e9);
  const ComputeProfile p = default_profile("h100-sxm", slow);
  // 2.903 / 3.35 of 100 GB/s: the user's figure, not the built-in 2.903 TB/s above it
  CHECK(p.hbm_bandwidth.value() == Rel(100e9 * 2.903e12 / 3.35e12));
  CHECK(p.gemm_efficiency == stock.gemm_efficiency);
  CHECK(p.source.find("hbm_bandwidth scaled to the catalog's") != std::string::npos);
  CHECK(stock.source.find("scaled") == std::string::npos);
}

TEST_CASE("every catalog GPU has a built-in profile that decodes, cites a source and is plausible") {
  config::LoadState state;
  ProfileCatalog profiles;
  config::Codec<ProfileCatalog>::decode(YAML::Load(std::string(builtin_profiles_text())), profiles,
                                        config::Context(state, std::string(kBuiltinProfilesFile)));
  INFO(state.diagnostics.format());
  REQUIRE(state.diagnostics.ok());
  const hardware::Catalog catalog = builtin_catalog();
  CHECK(profiles.profiles.size() == catalog.gpus.size());
  for (const auto& [name, spec] : catalog.gpus) {
    CAPTURE(name);
    REQUIRE(profiles.profiles.count(name) == 1);
    CHECK_FALSE(profiles.profiles.at(name).source.empty());
    const ComputeProfile p = default_profile(name, spec);
    CHECK(p.gpu == name);
    CHECK(p.sms == spec.sms);
    CHECK(peak_flops(Dtype::bf16, p) == Rel(spec.peak_flops.bf16->value()));
    CHECK(p.source == profiles.profiles.at(name).source);
    CHECK(p.source.find("DERIVED") == std::string::npos);
    // achieved figures below the datasheet, launch a few microseconds
    CHECK(p.hbm_bandwidth < spec.hbm_bandwidth);
    CHECK(p.hbm_bandwidth > spec.hbm_bandwidth * 0.5);
    CHECK(p.gemm_efficiency > 0.5);
    CHECK(p.attention_efficiency <= p.gemm_efficiency);
    CHECK(p.launch_overhead >= sim::Time::from_ns(1'000));
    CHECK(p.launch_overhead <= sim::Time::from_ns(10'000));
  }
}

TEST_CASE("an unknown GPU gets a profile derived from its spec, saying so") {
  const hardware::Catalog catalog = builtin_catalog();
  hardware::GpuSpec spec = catalog.gpus.at("h100-sxm");
  spec.sms = 114;
  const ComputeProfile p = default_profile("h100-pcie-custom", spec);
  CHECK(p.gpu == "h100-pcie-custom");
  CHECK(p.sms == 114);
  CHECK(p.source.find("DERIVED") != std::string::npos);
  CHECK(p.hbm_bandwidth.value() == Rel(0.85 * spec.hbm_bandwidth.value()));
  CHECK(p.gemm_efficiency == 0.8);
  CHECK(gemm_seconds({4096, 4096, 4096, 1}, Dtype::bf16, p) > 0.0);
  // a built-in name keeps the catalog spec it is given (a scenario may override the GPU)
  hardware::GpuSpec faster = catalog.gpus.at("h100-sxm");
  faster.peak_flops.bf16 = sim::FlopRate::of(2e15);
  CHECK(peak_flops(Dtype::bf16, default_profile("h100-sxm", faster)) == 2e15);
}

// OpenXLA's measured H100 (sm_90) GEMM table, bf16 x bf16 -> bf16, batch 1: m, n, k and
// achieved FLOP/s (2 m n k / time), 5 significant digits. Source: openxla/xla
// xla/service/gpu/model/matmul_interpolator_data.h (kDefaultMatmulPTable, "sm_90").
struct XlaPoint {
  std::int64_t m, n, k;
  double flops;
};
const XlaPoint kXlaH100[] = {
    {256, 256, 256, 6.4528e12}, {256, 256, 512, 1.1460e13}, {256, 256, 1024, 1.9463e13},
    {256, 256, 2048, 3.1127e13}, {256, 256, 4096, 8.4308e13}, {256, 512, 256, 1.1460e13},
    {256, 512, 512, 2.1960e13}, {256, 512, 1024, 3.9108e13}, {256, 512, 2048, 6.2369e13},
    {256, 512, 4096, 9.1679e13}, {256, 1024, 256, 2.2672e13}, {256, 1024, 512, 4.1838e13},
    {256, 1024, 1024, 7.2472e13}, {256, 1024, 2048, 1.1899e14}, {256, 1024, 4096, 1.7229e14},
    {256, 2048, 256, 4.1838e13}, {256, 2048, 512, 7.8215e13}, {256, 2048, 1024, 1.3808e14},
    {256, 2048, 2048, 2.1578e14}, {256, 2048, 4096, 2.8587e14}, {256, 4096, 256, 7.8034e13},
    {256, 4096, 512, 1.3808e14}, {256, 4096, 1024, 2.2520e14}, {256, 4096, 2048, 3.2459e14},
    {256, 4096, 4096, 4.1203e14}, {512, 256, 256, 1.1460e13}, {512, 256, 512, 2.1789e13},
    {512, 256, 1024, 3.9291e13}, {512, 256, 2048, 6.0133e13}, {512, 256, 4096, 9.1057e13},
    {512, 512, 256, 2.1620e13}, {512, 512, 512, 4.0721e13}, {512, 512, 1024, 7.1241e13},
    {512, 512, 2048, 1.1472e14}, {512, 512, 4096, 1.7454e14}, {512, 1024, 256, 4.3464e13},
    {512, 1024, 512, 8.0466e13}, {512, 1024, 1024, 1.3865e14}, {512, 1024, 2048, 2.1648e14},
    {512, 1024, 4096, 3.0961e14}, {512, 2048, 256, 7.9325e13}, {512, 2048, 512, 1.4340e14},
    {512, 2048, 1024, 2.3261e14}, {512, 2048, 2048, 3.4239e14}, {512, 2048, 4096, 4.3053e14},
    {512, 4096, 256, 1.3422e14}, {512, 4096, 512, 2.3630e14}, {512, 4096, 1024, 3.7335e14},
    {512, 4096, 2048, 5.2225e14}, {512, 4096, 4096, 6.4412e14}, {1024, 256, 256, 2.1960e13},
    {1024, 256, 512, 4.0920e13}, {1024, 256, 1024, 6.8339e13}, {1024, 256, 2048, 1.1317e14},
    {1024, 256, 4096, 1.6968e14}, {1024, 512, 256, 4.2908e13}, {1024, 512, 512, 8.2241e13},
    {1024, 512, 1024, 1.4128e14}, {1024, 512, 2048, 2.2003e14}, {1024, 512, 4096, 2.9893e14},
    {1024, 1024, 256, 8.2040e13}, {1024, 1024, 512, 1.4557e14}, {1024, 1024, 1024, 2.3630e14},
    {1024, 1024, 2048, 3.4998e14}, {1024, 1024, 4096, 4.7011e14}, {1024, 2048, 256, 1.3952e14},
    {1024, 2048, 512, 2.3755e14}, {1024, 2048, 1024, 3.7335e14}, {1024, 2048, 2048, 5.2429e14},
    {1024, 2048, 4096, 6.5353e14}, {1024, 4096, 256, 2.0972e14}, {1024, 4096, 512, 3.3893e14},
    {1024, 4096, 1024, 4.9029e14}, {1024, 4096, 2048, 6.3422e14}, {1024, 4096, 4096, 7.3847e14},
    {2048, 256, 256, 4.3577e13}, {2048, 256, 512, 7.7314e13}, {2048, 256, 1024, 1.3585e14},
    {2048, 256, 2048, 2.1613e14}, {2048, 256, 4096, 3.0749e14}, {2048, 512, 256, 8.3886e13},
    {2048, 512, 512, 1.4278e14}, {2048, 512, 1024, 2.3588e14}, {2048, 512, 2048, 3.4771e14},
    {2048, 512, 4096, 4.5115e14}, {2048, 1024, 256, 1.4158e14}, {2048, 1024, 512, 2.3840e14},
    {2048, 1024, 1024, 3.7335e14}, {2048, 1024, 2048, 5.2327e14}, {2048, 1024, 4096, 6.5313e14},
    {2048, 2048, 256, 2.1304e14}, {2048, 2048, 512, 3.4548e14}, {2048, 2048, 1024, 4.9390e14},
    {2048, 2048, 2048, 6.3198e14}, {2048, 2048, 4096, 7.3797e14}, {2048, 4096, 256, 2.9926e14},
    {2048, 4096, 512, 4.5040e14}, {2048, 4096, 1024, 5.9421e14}, {2048, 4096, 2048, 7.1535e14},
    {2048, 4096, 4096, 7.5364e14}, {4096, 256, 256, 8.2241e13}, {4096, 256, 512, 1.3724e14},
    {4096, 256, 1024, 2.1718e14}, {4096, 256, 2048, 3.0469e14}, {4096, 256, 4096, 3.7622e14},
    {4096, 512, 256, 1.4248e14}, {4096, 512, 512, 2.3882e14}, {4096, 512, 1024, 3.7077e14},
    {4096, 512, 2048, 5.2174e14}, {4096, 512, 4096, 6.4996e14}, {4096, 1024, 256, 2.1648e14},
    {4096, 1024, 512, 3.4371e14}, {4096, 1024, 1024, 4.8806e14}, {4096, 1024, 2048, 6.3198e14},
    {4096, 1024, 4096, 7.3847e14}, {4096, 2048, 256, 3.0400e14}, {4096, 2048, 512, 4.4702e14},
    {4096, 2048, 1024, 5.9323e14}, {4096, 2048, 2048, 7.1607e14}, {4096, 2048, 4096, 7.5843e14},
    {4096, 4096, 256, 3.9216e14}, {4096, 4096, 512, 5.4312e14}, {4096, 4096, 1024, 6.7744e14},
    {4096, 4096, 2048, 7.3874e14}, {4096, 4096, 4096, 7.8333e14},
};

TEST_CASE("the H100 profile reproduces OpenXLA's measured GEMM times") {
  // Tolerances on |model time / measured time - 1| over the 125 points: median <= 5%,
  // 90th percentile <= 12%, worst <= 80%. The worst point is 256 x 256 x 4096, which
  // cuBLAS runs faster than 256 x 256 x 2048 (a per-shape heuristic the model does not
  // have); without it the worst is <= 25%. XLA timed each GEMM briefly, at boost clocks: the
  // profile's burst rate (sustained_factor 1) is what the table measured.
  ComputeProfile p = builtin("h100-sxm");
  p.sustained_factor = 1.0;
  std::vector<double> errors;
  double worst_other = 0.0;
  for (const XlaPoint& x : kXlaH100) {
    const GemmShape s{x.m, x.n, x.k, 1};
    const double measured = flops(s) / x.flops;
    const double error = std::abs(gemm_seconds(s, Dtype::bf16, p) / measured - 1.0);
    errors.push_back(error);
    if (!(x.m == 256 && x.n == 256 && x.k == 4096)) worst_other = std::max(worst_other, error);
  }
  REQUIRE(errors.size() == 125);
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  const double p90 = errors[errors.size() * 9 / 10];
  MESSAGE("H100 vs OpenXLA (125 shapes): median ", median, ", p90 ", p90, ", worst ", errors.back(),
          ", worst without 256x256x4096 ", worst_other);
  CHECK(median <= 0.05);
  CHECK(p90 <= 0.12);
  CHECK(errors.back() <= 0.80);
  CHECK(worst_other <= 0.25);
}
