#include "models/calibration/profile.hpp"
#include "models/calibration/fit.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "sim/check.hpp"

namespace clustersim::calibration {
namespace {

bool written(const std::vector<std::string>& keys, const std::string& path) {
  return std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
    return k == path || (k.size() > path.size() && k.compare(0, path.size(), path) == 0 && k[path.size()] == '.');
  });
}

/// Copies into `base` the members of `src` whose key paths (under `prefix`) were written.
template <class S>
void overlay(S& base, const S& src, const std::string& prefix, const std::vector<std::string>& keys) {
  config::for_each_field(S::fields(), [&](const auto& f) {
    const std::string path = prefix + "." + std::string(f.key);
    using M = typename std::decay_t<decltype(f)>::Member;
    if constexpr (config::HasFields<M>) {
      overlay(base.*(f.member), src.*(f.member), path, keys);
    } else if (written(keys, path)) {
      base.*(f.member) = src.*(f.member);
    }
  });
}

/// The range and order checks of a network section (a profile's, or a built-in entry's):
/// efficiencies from 0.01 to 1, size-factor tables by increasing size. Key paths under `prefix`.
void check_network(const NetworkCalibration& n, const std::string& prefix, config::LoadState& state) {
  const auto check = [&](const char* key, const std::optional<double>& v) {
    if (v && (*v < 0.01 || *v > 1.0)) {
      const std::string at = prefix + "." + key;
      state.diagnostics.add(state.where(at), at, fmt::format("must be from 0.01 to 1, got {}", *v));
    }
  };
  check("scaleup_efficiency", n.scaleup_efficiency);
  check("scaleout_efficiency", n.scaleout_efficiency);
  check("nvls_efficiency", n.nvls_efficiency);
  check("sharp_efficiency", n.sharp_efficiency);
  const auto sorted = [&](const char* key, const std::optional<std::vector<network::SizeFactor>>& table) {
    if (!table) return;
    const std::size_t i = network::first_unsorted(*table);
    if (i == 0) return;
    const std::string at = fmt::format("{}.{}[{}].size", prefix, key, i);
    state.diagnostics.add(state.where(at), at,
                          fmt::format("sizes must increase from point to point: {} follows {}",
                                      sim::format_bytes((*table)[i].size), sim::format_bytes((*table)[i - 1].size)));
  };
  sorted("scaleup_size_factors", n.scaleup_size_factors);
  sorted("scaleout_size_factors", n.scaleout_size_factors);
}

/// The line and column (in characters) of byte `offset` of `text`.
config::Location located(const std::string& path, const std::string& text, std::size_t offset) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U) {  // a character's first byte
      ++column;
    }
  }
  return config::Location{path, line, column};
}

}  // namespace

double collective_seconds(const CollectiveFit& fit, double bytes) {
  CLUSTERSIM_CHECK(!fit.regimes.empty(), "collective_seconds: a fit without regimes");
  const double factor = network::bus_factor(fit.op, fit.ranks);
  // The last regime that starts at or below `bytes` (the first one below every start).
  const Regime* r = &fit.regimes.front();
  for (const Regime& candidate : fit.regimes) {
    if (candidate.from.value() <= bytes && candidate.from.value() >= r->from.value()) r = &candidate;
  }
  return r->latency.seconds() + factor * bytes / r->busbw.value();
}

std::optional<CalibrationProfile> load_profile(const std::string& path, config::LoadState& state,
                                               const config::Location& named_at, const std::string& named_by) {
  std::string text, why;
  if (!config::read_input_file(path, text, why)) {
    state.diagnostics.add(named_at.file.empty() ? config::Location{path, 0, 0} : named_at, named_by,
                          fmt::format("cannot read the calibration profile '{}': {}", path, why));
    return std::nullopt;
  }
  // Strict JSON first (YAML, which decodes it below with positions, would take trailing
  // text, a second document or YAML syntax in its stride).
  try {
    [[maybe_unused]] const nlohmann::json parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    state.diagnostics.add(located(path, text, e.byte == 0 ? 0 : e.byte - 1), "",
                          fmt::format("not valid JSON: {}", e.what()),
                          "a calibration profile is one JSON object, as clustersim calibrate writes them");
    return std::nullopt;
  } catch (const nlohmann::json::out_of_range& e) {  // a number past a double's range: 1e400
    const std::string number = config::quoted_in(e.what());
    const std::size_t at = number.empty() ? std::string::npos : text.find(number);
    state.diagnostics.add(located(path, text, at == std::string::npos ? 0 : at), "",
                          fmt::format("a number past the range of a double (about 1.8e308): {}", number.empty() ? e.what() : number),
                          "write a finite number, in the unit its key names");
    return std::nullopt;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    state.diagnostics.add(config::Location{path, e.mark.line + 1, config::character_column(text, e.mark.line, e.mark.column)},
                          "",
                          dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr
                              ? fmt::format("cannot read the JSON: {}", config::yaml_error_text(e))
                              : fmt::format("not valid JSON: {}", e.msg));
    return std::nullopt;
  }
  if (!root.IsMap()) {
    state.diagnostics.add(config::Location{path, 1, 1}, "",
                          fmt::format("expected a JSON object (a calibration profile), got {}", config::describe_node(root)));
    return std::nullopt;
  }
  config::LoadState file_state;
  // A number written as a string ("0.9") is refused by the decoding, at its key, as in a
  // scenario: quantities with a unit ("2.9TB/s") are strings.
  CalibrationProfile p;
  config::Codec<CalibrationProfile>::decode(root, p, config::Context(file_state, path));
  if (file_state.diagnostics.ok()) config::check_required(p, "", file_state);
  if (p.kind != "measured" && p.kind != "derived") {
    file_state.diagnostics.add(file_state.where("kind"), "kind",
                               fmt::format("must be 'measured' or 'derived', got '{}'", p.kind));
  }
  // The compute section is for the profile's GPU: another name there was taken for it.
  if (p.compute && file_state.assigned.count("compute.gpu") && p.compute->gpu != p.gpu) {
    file_state.diagnostics.add(file_state.where("compute.gpu"), "compute.gpu",
                               fmt::format("'{}' is not the profile's gpu '{}'", p.compute->gpu, p.gpu),
                               "one profile per GPU type: make them agree, or leave compute.gpu out");
  }
  // A device the catalog knows by name is that GPU type: a profile measured on one and
  // named for another (its gpu edited) was taken for the other's.
  if (p.device) {
    if (const auto measured = catalog_gpu_for(p.device->name); measured && *measured != p.gpu) {
      file_state.diagnostics.add(file_state.where("device.name"), "device.name",
                                 fmt::format("'{}' is GPU type {}, not the profile's gpu '{}'", p.device->name, *measured, p.gpu),
                                 "a profile is for the GPU it was measured on: fit it again for that one");
    }
  }
  // A depth under one step of k would make every GEMM far slower than its flops.
  if (p.compute && p.compute->k_saturation > 0.0 && p.compute->k_saturation < 1.0) {
    file_state.diagnostics.add(file_state.where("compute.k_saturation"), "compute.k_saturation",
                               fmt::format("must be 0 (none) or at least 1, got {}", p.compute->k_saturation),
                               "k_saturation: 2816, a depth in elements of k; or 0");
  }
  if (p.network) check_network(*p.network, "network", file_state);
  for (std::size_t i = 0; i < p.collectives.size(); ++i) {
    for (std::size_t r = 0; r < p.collectives[i].regimes.size(); ++r) {
      // (A value that did not decode is reported already.)
      const std::string at = fmt::format("collectives[{}].regimes[{}].busbw", i, r);
      if (file_state.assigned.count(at) && p.collectives[i].regimes[r].busbw.value() <= 0.0) {
        file_state.diagnostics.add(file_state.where(at), at, "must be positive");
      }
    }
  }
  for (const auto& d : file_state.diagnostics.items()) state.diagnostics.add(d.where, d.path, d.message, d.hint);
  if (!file_state.diagnostics.ok()) return std::nullopt;
  for (const auto& [key, where] : file_state.assigned) {
    if (key.rfind("compute.", 0) == 0) {
      p.compute_keys.push_back(key);
      p.compute_locations[key] = where;
    }
  }
  return p;
}

compute::ComputeProfile compute_profile(const CalibrationProfile& profile, std::string_view gpu_name,
                                        const hardware::GpuSpec& gpu) {
  compute::ComputeProfile base = compute::default_profile(gpu_name, gpu);
  if (!profile.compute) return base;
  const std::string keep_source = base.source;
  overlay(base, *profile.compute, "compute", profile.compute_keys);
  if (!written(profile.compute_keys, "compute.source")) {
    base.source = profile.source.empty() ? keep_source : profile.source;
  }
  return base;
}

void apply_network(const NetworkCalibration& n, network::NetworkConfig& cfg, const std::vector<std::string>& keep) {
  const auto kept = [&](const char* key) { return std::find(keep.begin(), keep.end(), key) != keep.end(); };
  if (n.scaleup_efficiency && !kept("scaleup_efficiency")) cfg.scaleup_efficiency = *n.scaleup_efficiency;
  if (n.scaleout_efficiency && !kept("scaleout_efficiency")) cfg.scaleout_efficiency = *n.scaleout_efficiency;
  if (n.call_overhead && !kept("call_overhead")) cfg.call_overhead = *n.call_overhead;
  if (n.step_latency && !kept("step_latency")) cfg.step_latency = *n.step_latency;
  if (n.nvls_efficiency && !kept("nvls_efficiency")) cfg.nvls_efficiency = *n.nvls_efficiency;
  if (n.nvls_latency && !kept("nvls_latency")) cfg.nvls_latency = *n.nvls_latency;
  if (n.sharp_efficiency && !kept("sharp_efficiency")) cfg.sharp_efficiency = *n.sharp_efficiency;
  if (n.scaleup_size_factors && !kept("scaleup_size_factors")) cfg.scaleup_size_factors = *n.scaleup_size_factors;
  if (n.scaleout_size_factors && !kept("scaleout_size_factors")) cfg.scaleout_size_factors = *n.scaleout_size_factors;
}

namespace {

/// models/calibration/network.yaml, decoded once (an unknown key anywhere in it is a bug:
/// the check fails).
const BuiltinNetworkCatalog& builtin_network_catalog() {
  static const BuiltinNetworkCatalog catalog = [] {
    config::LoadState state;
    BuiltinNetworkCatalog c;
    const YAML::Node root = YAML::Load(std::string(builtin_network_text()));
    config::Codec<BuiltinNetworkCatalog>::decode(root, c, config::Context(state, std::string(kBuiltinNetworkFile)));
    if (state.diagnostics.ok()) config::check_required(c, "", state);
    for (const auto& [gpu, entry] : c.profiles) check_network(entry.network, "profiles." + gpu + ".network", state);
    CLUSTERSIM_CHECK(state.diagnostics.ok(), state.diagnostics.format());
    return c;
  }();
  return catalog;
}

}  // namespace

std::vector<std::string> builtin_network_keys() {
  std::vector<std::string> keys;
  config::for_each_field(NetworkCalibration::fields(), [&](const auto& f) {
    for (const auto& [gpu, entry] : builtin_network_catalog().profiles) {
      if ((entry.network.*(f.member)).has_value()) {
        keys.emplace_back(f.key);
        return;
      }
    }
  });
  return keys;
}

std::optional<BuiltinNetwork> builtin_network(std::string_view gpu_name) {
  const BuiltinNetworkCatalog& catalog = builtin_network_catalog();
  const auto it = catalog.profiles.find(std::string(gpu_name));
  if (it == catalog.profiles.end()) return std::nullopt;
  return it->second;
}

config::Json to_json(const CalibrationProfile& p) { return config::Codec<CalibrationProfile>::encode(p); }

}  // namespace clustersim::calibration
