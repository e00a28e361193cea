// The compute cost model: how long a GPU takes for a matrix multiply, a fused attention
// kernel or a memory-bound kernel, from a calibration profile.
//
// A profile (ComputeProfile) holds one GPU type's achieved figures: vendor peak per
// datatype, the best achieved GEMM efficiency, the shape terms that lower it for small or
// awkward shapes, achieved HBM bandwidth and kernel launch overhead. Profiles are data:
// the built-in ones live in models/compute/profiles.yaml (one per catalog GPU, each with
// its sources); measured profiles (validation/calibration/) replace them.
//
// The equations are documented in profile.cpp's header comment and in profiles.yaml.
//
// Costs are pure functions of (shape, profile): no state, callable millions of times.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/config/decode.hpp"
#include "models/hardware/catalog.hpp"
#include "sim/units.hpp"

namespace clustersim::compute {

enum class Dtype { fp32, tf32, bf16, fp16, fp8 };

constexpr std::array<std::pair<Dtype, std::string_view>, 5> enum_names(Dtype) {
  return {{{Dtype::fp32, "fp32"}, {Dtype::tf32, "tf32"}, {Dtype::bf16, "bf16"}, {Dtype::fp16, "fp16"},
           {Dtype::fp8, "fp8"}}};
}

/// Bytes of one element of `d`.
double dtype_bytes(Dtype d);

/// C[m x n] = A[m x k] B[k x n], `batch` independent products of that shape.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
};

/// One fused (flash) attention call: `batch_heads` = batch x query heads on this GPU,
/// `q_len` queries attending to `kv_len` keys of width `head_dim`.
struct AttentionShape {
  std::int64_t batch_heads = 0;
  std::int64_t q_len = 0;
  std::int64_t kv_len = 0;
  std::int64_t head_dim = 0;
  bool causal = true;
};

/// Best achieved share of peak of large GEMMs per datatype, where measured (calibration
/// profiles fit one per datatype); a datatype without one uses ComputeProfile::gemm_efficiency.
struct DtypeEfficiency {
  std::optional<double> fp32;
  std::optional<double> tf32;
  std::optional<double> bf16;
  std::optional<double> fp16;
  std::optional<double> fp8;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("fp32", &DtypeEfficiency::fp32, "share of the FP32 peak").at_least(0.01).at_most(1.0),
        field("tf32", &DtypeEfficiency::tf32, "share of the TF32 peak").at_least(0.01).at_most(1.0),
        field("bf16", &DtypeEfficiency::bf16, "share of the BF16 peak").at_least(0.01).at_most(1.0),
        field("fp16", &DtypeEfficiency::fp16, "share of the FP16 peak").at_least(0.01).at_most(1.0),
        field("fp8", &DtypeEfficiency::fp8, "share of the FP8 peak").at_least(0.01).at_most(1.0),
    };
  }
};

/// One GPU type's achieved compute figures. (The equations that use them: profile.cpp.)
struct ComputeProfile {
  std::string gpu;  ///< catalog GPU name this profile is for
  std::int64_t sms = 0;
  hardware::PeakFlops peak_flops;   ///< vendor dense peaks (MFU's denominator)
  double gemm_efficiency = 0.8;     ///< best achieved share of peak on large GEMMs
  DtypeEfficiency gemm_efficiency_by_dtype;  ///< per-datatype values that override it
  std::int64_t tile_m = 64;         ///< rows of C per unit of work (wave quantization)
  std::int64_t tile_n = 64;         ///< columns of C per unit of work
  double k_half = 128;              ///< k at which the k term k/(k+k_half) is 1/2
  double k_saturation = 0;          ///< depth past which a deeper GEMM runs no closer to peak (0: none)
  double attention_efficiency = 0.7;  ///< best achieved share of peak of fused attention (forward)
  double attention_backward_efficiency = 0.0;  ///< of its backward pass; 0: as the forward
  /// kv length at which fused attention reaches half its efficiency (a causal kernel's is
  /// twice this); 0: no sequence term.
  double attention_kv_half = 0.0;
  /// Share of the GEMM rates above that the GPU holds under a training run's continuous load
  /// (a power or thermal limit lowers its clocks after a moment of boost); 1: they are what
  /// it holds (measured after a warm-up).
  double sustained_factor = 1.0;
  sim::Bandwidth hbm_bandwidth;     ///< achieved HBM bandwidth of memory-bound kernels
  sim::Time launch_overhead;        ///< per kernel
  std::string source;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("gpu", &ComputeProfile::gpu, "catalog GPU name this profile is for"),
        field("sms", &ComputeProfile::sms, "streaming multiprocessors").at_least(1),
        field("peak_flops", &ComputeProfile::peak_flops, "vendor dense peak per datatype"),
        field("gemm_efficiency", &ComputeProfile::gemm_efficiency, "best achieved share of peak on large GEMMs")
            .at_least(0.01)
            .at_most(1.0),
        field("gemm_efficiency_by_dtype", &ComputeProfile::gemm_efficiency_by_dtype,
              "per-datatype best achieved shares of peak (calibration); a missing datatype uses gemm_efficiency"),
        // At most 65,536: no GPU's GEMM tile comes near (CUTLASS's largest are 256 wide).
        field("tile_m", &ComputeProfile::tile_m, "rows of C per unit of GEMM work, for wave quantization")
            .at_least(1)
            .at_most(65536),
        field("tile_n", &ComputeProfile::tile_n, "columns of C per unit of GEMM work, for wave quantization")
            .at_least(1)
            .at_most(65536),
        // At most 2^20, as k_saturation: a larger one puts every real GEMM near 0% of peak
        // (a profile with 1e300 passed and made a step last 1e294 s).
        field("k_half", &ComputeProfile::k_half, "GEMM depth k at which the k term k/(k+k_half) is 1/2")
            .at_least(0.0)
            .at_most(1048576.0),
        field("k_saturation", &ComputeProfile::k_saturation,
              "GEMM depth k past which the k term stops rising: the k of the best shape of a scan of shapes "
              "(mamf-finder), when deeper ones in the scan did no better (0: none)")
            .at_least(0.0)
            .at_most(1048576.0),
        field("attention_efficiency", &ComputeProfile::attention_efficiency,
              "best achieved share of peak of a fused (flash) attention kernel, forward")
            .at_least(0.01)
            .at_most(1.0),
        field("attention_backward_efficiency", &ComputeProfile::attention_backward_efficiency,
              "the same for its backward pass (0: as the forward)")
            .at_least(0.0)
            .at_most(1.0),
        field("attention_kv_half", &ComputeProfile::attention_kv_half,
              "key/value length at which a fused attention kernel reaches half its efficiency, kv / (kv + this); a "
              "causal kernel's is twice this (its diagonal blocks, its rows of unequal length); 0: no such term")
            .at_least(0.0)
            .at_most(1048576.0),
        field("sustained_factor", &ComputeProfile::sustained_factor,
              "share of the GEMM rates the GPU holds under a training run's continuous load, when they are burst "
              "figures (timed for milliseconds, at boost clocks); 1: they are already what it holds")
            .at_least(0.1)
            .at_most(1.0),
        field("hbm_bandwidth", &ComputeProfile::hbm_bandwidth, "achieved HBM bandwidth of memory-bound kernels")
            .above_zero(),
        field("launch_overhead", &ComputeProfile::launch_overhead, "time added per kernel"),
        field("source", &ComputeProfile::source, "where the numbers come from"),
    };
  }
};

/// The built-in profiles file: profiles by catalog GPU name. An entry holds only the
/// achieved figures; default_profile() fills gpu, sms and peak_flops from the catalog.
struct ProfileCatalog {
  std::map<std::string, ComputeProfile> profiles;

  static auto fields() {
    using config::field;
    return std::tuple{field("profiles", &ProfileCatalog::profiles, "compute profiles by catalog GPU name")};
  }
};

/// The built-in profiles' text (models/compute/profiles.yaml, compiled in).
std::string_view builtin_profiles_text();
/// Its file name, as diagnostics print it.
inline constexpr std::string_view kBuiltinProfilesFile = "models/compute/profiles.yaml";

/// The profile for catalog GPU `gpu_name` with spec `gpu`: the built-in entry
/// (models/compute/profiles.yaml) if there is one, else one derived from the spec with
/// generic efficiencies, saying so in its `source`.
ComputeProfile default_profile(std::string_view gpu_name, const hardware::GpuSpec& gpu);

/// Vendor dense peak of `d` in FLOP/s (MFU's denominator). A GPU without FP8 runs fp8
/// work at its bf16 peak (the kernel falls back to bf16); 0 if the GPU lacks `d` otherwise.
double peak_flops(Dtype d, const ComputeProfile& p);

/// Best achieved share of peak of large GEMMs in `d`: gemm_efficiency_by_dtype's value for
/// d if it has one, else gemm_efficiency.
double gemm_efficiency(Dtype d, const ComputeProfile& p);

/// Wave quantization of `s` on `p`'s SMs, in (0, 1]: the useful share of the SM time,
/// batch x m x n / (ceil(tiles / sms) x sms x tile_m x tile_n), tiles = batch x
/// ceil(m / tile_m) x ceil(n / tile_n); tiles / (ceil(tiles / sms) x sms) when m and n
/// are multiples of the tile. 1 for an empty shape or a profile without SMs.
double wave_efficiency(const GemmShape& s, const ComputeProfile& p);

/// Achieved share of peak of GEMM `s` while compute-bound (bf16's efficiency): gemm_efficiency x
/// wave_efficiency x k / (k + k_half), as the profile's figures were timed (sustained_factor
/// is not in it). (gemm_seconds applies sustained_factor and the memory roofline.)
double gemm_shape_efficiency(const GemmShape& s, const ComputeProfile& p);

/// Seconds for one GEMM call of `s` in `d` (launch overhead included); 0 for an empty
/// shape (a dimension or the batch <= 0). Precondition: peak_flops(d, p) > 0.
double gemm_seconds(const GemmShape& s, Dtype d, const ComputeProfile& p);

/// Seconds for one fused attention call, forward or backward (launch included); 0 for an
/// empty shape. Precondition: peak_flops(d, p) > 0.
double attention_seconds(const AttentionShape& s, Dtype d, bool backward, const ComputeProfile& p);

/// Seconds for one memory-bound kernel that reads and writes `bytes` in all (launch
/// included); 0 when bytes <= 0 (no kernel).
double memory_seconds(double bytes, const ComputeProfile& p);

}  // namespace clustersim::compute
