#include "tools/clustersim/calibrate.hpp"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/calibration/fit.hpp"
#include "models/hardware/catalog.hpp"
#include "models/network/config.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"
#include "tools/clustersim/plotting.hpp"
#include "tools/clustersim/report.hpp"

namespace clustersim::tools {
namespace {

/// A measurement's "file:line" as a location, so that its errors sort with the file's others.
config::Location located(const std::string& where) {
  const std::size_t colon = where.rfind(':');
  if (colon == std::string::npos) return {where, 0, 0};
  int line = 0;
  const auto [end, ec] = std::from_chars(where.data() + colon + 1, where.data() + where.size(), line);
  if (ec != std::errc() || end != where.data() + where.size()) return {where, 0, 0};
  return {where.substr(0, colon), line, 1};
}

constexpr int kExitInput = 2;

bool read_file(const std::string& path, std::string& out, config::Diagnostics& errors) {
  std::string why;
  if (config::read_input_file(path, out, why)) return true;
  errors.add(config::Location{path, 0, 0}, "", fmt::format("cannot read: {}", why));
  return false;
}

hardware::Catalog builtin_catalog() {
  hardware::Catalog catalog;
  config::LoadState state;
  config::Codec<hardware::Catalog>::decode(YAML::Load(std::string(hardware::builtin_catalog_text())), catalog,
                                           config::Context(state, std::string(hardware::kBuiltinCatalogFile)));
  return catalog;
}

std::vector<std::string_view> names_of(const auto& map) {
  std::vector<std::string_view> names;
  for (const auto& entry : map) names.push_back(entry.first);
  return names;
}

/// "unknown node type 'x'; the catalog has a, b, c", as the scenario loader says it.
std::string unknown_name_message(std::string_view kind, const std::string& name, const auto& map) {
  return fmt::format("unknown {} type '{}'; the catalog has {}", kind, name, fmt::join(names_of(map), ", "));
}

/// "did you mean 'y'?" for a likely typo, else empty (no hint).
std::string did_you_mean(const std::string& name, const auto& map) {
  const auto near = sim::closest_match(name, names_of(map));
  return near ? fmt::format("did you mean '{}'?", *near) : std::string();
}

/// The files the profile is fitted to, in the order given.
std::vector<std::string> inputs_of(const CalibrateArgs& args) {
  std::vector<std::string> inputs = args.results;
  inputs.insert(inputs.end(), args.nccl_tests.begin(), args.nccl_tests.end());
  return inputs;
}

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{:.2f}us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f}ms", s * 1e3);
  return fmt::format("{:.3f}s", s);
}

std::string report_text(const calibration::FitReport& report) {
  std::string out = "# clustersim calibrate: fit report (error = predicted / measured - 1)\n";
  // Each group's points together, the groups in the order they first appear (the results
  // may interleave them: d2d copies and triads alternate).
  std::vector<std::string> groups;
  for (const auto& p : report.points) {
    if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
  }
  for (const std::string& group : groups) {
    // The point column as wide as the group's longest label (an attention shape with
    // " causal" ran past 22 characters and out of line).
    std::size_t width = 22;
    for (const auto& p : report.points) {
      if (p.group == group) width = std::max(width, p.label.size());
    }
    out += fmt::format("\n## {}\n# {:>{}} {:>12} {:>12} {:>8}\n", group, "point", width, "measured", "predicted", "error");
    for (const auto& p : report.points) {
      if (p.group != group) continue;
      out += fmt::format("  {:>{}} {:>12} {:>12} {:>+7.1f}%{}\n", p.label, width, seconds_text(p.measured),
                         seconds_text(p.predicted),
                         std::fabs(100 * p.error()) < 0.05 ? 0.0 : 100 * p.error(),  // +0.0%, not -0.0%
                         p.fitted ? "" : "  (cross-check)");
    }
  }
  out += "\n## summary (|error|)\n";
  const auto line = [&](const std::string& name, const calibration::ErrorSummary& s) {
    if (s.count == 0) return;
    out += fmt::format("  {:<34} {:>4} points  median {:>5.1f}%  worst {:>5.1f}% ({})\n", name, s.count,
                       100 * s.median, 100 * s.worst, s.worst_label);
  };
  for (const std::string& g : groups) line(g, calibration::summarize(report.points, g));
  line("collectives at >= 1 MiB", calibration::summarize(report.points, "collective/", 1048576.0));
  line("network model at >= 1 MiB", calibration::summarize(report.points, "network/", 1048576.0));
  line("all points", calibration::summarize(report.points));
  out += "\n## fitted parameters and notes\n";
  for (const std::string& n : report.notes) out += "  " + n + "\n";
  return out;
}

/// The data behind the plots: every point (points.csv) and, for each collective series, the
/// fitted model on a dense size grid (curves.csv: 16 sizes per octave plus each regime's start
/// and the size just below it, so that a switch between regimes shows as a step).
std::pair<std::string, std::string> plot_data(const calibration::FitReport& report,
                                              const calibration::CalibrationProfile& profile) {
  const auto group_of = [](const calibration::CollectiveFit& f) {
    return fmt::format("collective/{}/{}x{}", config::enum_name(f.op), f.nodes, f.ranks / f.nodes);
  };
  std::map<std::string, double> bus_factor;
  for (const auto& f : profile.collectives) bus_factor[group_of(f)] = network::bus_factor(f.op, f.ranks);
  std::string points = "group,label,bytes,measured_s,predicted_s,fitted,bus_factor\n";
  for (const auto& p : report.points) {
    const auto it = bus_factor.find(p.group);
    // Groups and labels carry the records' names (a memory kernel's kind), which may hold a comma.
    points += fmt::format("{},{},{},{},{},{},{}\n", csv_quote(p.group), csv_quote(p.label), p.bytes, p.measured, p.predicted,
                          p.fitted ? 1 : 0, it == bus_factor.end() ? 0.0 : it->second);
  }
  std::string curves = "group,bytes,predicted_s,regime\n";
  for (const auto& f : profile.collectives) {
    const std::string group = group_of(f);
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (const auto& p : report.points) {
      if (p.group == group && p.bytes > 0.0) {  // a log axis: positive sizes only
        lo = std::min(lo, p.bytes);
        hi = std::max(hi, p.bytes);
      }
    }
    if (!(hi > 0.0) || !(lo > 0.0)) continue;
    std::vector<double> sizes;
    for (double s = lo; s <= hi * (1 + 1e-12); s *= std::pow(2.0, 1.0 / 16)) sizes.push_back(s);
    for (const auto& r : f.regimes) {
      const double from = r.from.value();
      if (from > lo && from <= hi) {
        sizes.push_back(from * (1 - 1e-9));
        sizes.push_back(from);
      }
    }
    sizes.push_back(hi);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (double s : sizes) {
      std::size_t regime = 0;
      for (std::size_t r = 0; r < f.regimes.size(); ++r) {
        if (f.regimes[r].from.value() <= s) regime = r;
      }
      curves += fmt::format("{},{},{},{}\n", csv_quote(group), s, calibration::collective_seconds(f, s), regime);
    }
  }
  return {points, curves};
}

/// What a --plot folder held before: write_plots() leaves it so when it fails.
struct PlotFolder {
  std::filesystem::path created;      ///< the outermost folder this run creates (empty: it exists)
  std::set<std::string> entries;      ///< the folder's entries before, when it existed
};

PlotFolder plot_folder_before(const std::string& dir) {
  namespace fs = std::filesystem;
  PlotFolder pf;
  std::error_code ec;
  for (fs::path q = fs::absolute(dir, ec); !q.empty() && !fs::exists(q, ec); q = q.parent_path()) {
    pf.created = q;
    if (q == q.parent_path()) break;
  }
  if (pf.created.empty()) {
    for (const auto& e : fs::directory_iterator(dir, ec)) pf.entries.insert(e.path().filename().string());
  }
  return pf;
}

/// Undoes write_plots(): the folders it made, else what appeared in the folder (the data
/// files and any PNG the script wrote before it failed).
void remove_plots(const std::string& dir, const PlotFolder& before) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!before.created.empty()) {
    fs::remove_all(before.created, ec);
    return;
  }
  std::vector<fs::path> added;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (before.entries.count(e.path().filename().string()) == 0) added.push_back(e.path());
  }
  for (const fs::path& p : added) fs::remove_all(p, ec);
}

/// Writes the plot data into `dir` (made if need be; `before`: what it held) and runs
/// tools/plot_calibration.py on them. On failure, says why and leaves the folder as it was.
int write_plots(const std::string& dir, const PlotFolder& before, const std::string& python,
                const calibration::FitReport& report, const calibration::CalibrationProfile& profile) {
  const auto fail = [&](const std::string& why) {
    std::cerr << "error: --plot: " << why << "; nothing was written.\n";
    remove_plots(dir, before);
    return kExitInput;
  };
  if (std::error_code ec; !std::filesystem::create_directories(dir, ec) && ec) {
    return fail(fmt::format("cannot create the folder '{}': {}", dir, ec.message()));
  }
  const auto [points_csv, curves_csv] = plot_data(report, profile);
  const std::string points = dir + "/points.csv";
  const std::string curves = dir + "/curves.csv";
  for (const auto& [path, text] : {std::pair{points, points_csv}, std::pair{curves, curves_csv}}) {
    if (const std::string err = write_file_atomically(path, text); !err.empty()) return fail(err);
  }
  const int rc = run_plot_script(python, "plot_calibration.py", {points, curves, dir});
  if (rc != 0) {
    return fail(fmt::format("tools/plot_calibration.py {}",
                            rc < 0 ? std::string("could not be run") : fmt::format("exited with status {}", rc)));
  }
  return 0;
}

}  // namespace

int calibrate(const CalibrateArgs& args) {
  config::Diagnostics errors;
  calibration::Measurements m;
  // A file given twice would be read twice, its points counted as repeats (a spread of 0):
  // said, and read once.
  std::map<std::string, std::string> seen;  // canonical path -> as given
  const auto first_time = [&](const std::string& f) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(f, ec);
    const auto [it, added] = seen.try_emplace(ec ? f : canonical.string(), f);
    if (!added) {
      errors.add(config::Location{"<command line>", 0, 0}, "",
                 fmt::format("{} is given twice{}: its measurements would count as repeats of themselves", f,
                             it->second == f ? std::string() : fmt::format(" (as {} too)", it->second)),
                 "give each file once");
    }
    return added;
  };
  for (const std::string& f : args.results) {
    std::string text;
    if (first_time(f) && read_file(f, text, errors)) calibration::read_results(f, text, m, errors);
  }
  for (const std::string& f : args.nccl_tests) {
    std::string text;
    if (first_time(f) && read_file(f, text, errors)) calibration::read_nccl_tests(f, text, m, errors);
  }
  if (errors.ok()) calibration::check_series_across_files(m, errors);
  if (args.results.empty() && args.nccl_tests.empty()) {
    errors.add(config::Location{"<command line>", 0, 0}, "",
               "nothing to fit: name microbenchmark results (RESULTS.jsonl) or --nccl-tests logs");
  }
  const bool inputs_read = errors.ok();
  // The profile is written last, after the fit: a path that cannot be a file is found now,
  // so that nothing is fitted, printed or written for it (renaming onto a folder fails
  // with a system message that does not say so).
  if (std::error_code ec;
      !args.output.empty() && (args.output.back() == '/' || std::filesystem::is_directory(args.output, ec))) {
    errors.add(config::Location{"<command line>", 0, 0}, "-o",
               fmt::format("'{}' names a folder; the profile is one JSON file", args.output),
               fmt::format("name a file, e.g. -o {}{}profile.json", args.output, args.output.back() == '/' ? "" : "/"));
  }
  const PlotFolder plots_before = args.plot_dir.empty() ? PlotFolder{} : plot_folder_before(args.plot_dir);
  if (std::error_code ec; !args.plot_dir.empty() && std::filesystem::exists(args.plot_dir, ec) &&
                          !std::filesystem::is_directory(args.plot_dir, ec)) {
    errors.add(config::Location{"<command line>", 0, 0}, "--plot",
               fmt::format("'{}' is a file; --plot names the folder to write the plots into", args.plot_dir));
  }
  const hardware::Catalog catalog = builtin_catalog();
  // An unknown --node is said as such first: the GPU is looked up through it when neither
  // --gpu nor the results name one, and a missing node would be misreported as a missing GPU.
  const bool node_known = args.node.empty() || catalog.nodes.count(args.node) > 0;
  if (!node_known) {
    errors.add(config::Location{"<command line>", 0, 0}, "--node", unknown_name_message("node", args.node, catalog.nodes),
               did_you_mean(args.node, catalog.nodes));
  }
  calibration::FitTarget target;
  target.gpu_name = args.gpu;
  // (An unknown --gpu is said alone, below: "ran on h100-sxm, not on h100" treated the typo
  // as a GPU type.)
  if (m.device && !args.gpu.empty() && catalog.gpus.count(args.gpu) > 0) {
    // The profile is for the GPU the results ran on: --gpu may name it, not another.
    if (const auto measured = calibration::catalog_gpu_for(m.device->name); measured && *measured != args.gpu) {
      errors.add(config::Location{"<command line>", 0, 0}, "--gpu",
                 fmt::format("the results ran on '{}' ({}), not on {}", m.device->name, *measured, args.gpu),
                 fmt::format("leave --gpu out: the device names the GPU; or give results measured on {}", args.gpu));
    }
  }
  if (target.gpu_name.empty() && m.device) target.gpu_name = calibration::catalog_gpu_for(m.device->name).value_or("");
  if (target.gpu_name.empty() && !args.node.empty()) {  // the node's GPU
    const auto n = catalog.nodes.find(args.node);
    if (n != catalog.nodes.end()) target.gpu_name = n->second.gpu.name;
  }
  if (target.gpu_name.empty() && inputs_read && node_known) {
    // At the device record that names it (it was said at the command line).
    errors.add(m.device && !m.device->where.empty() ? located(m.device->where) : config::Location{"<command line>", 0, 0},
               "",
               m.device ? fmt::format("the device '{}' is not a catalog GPU type", m.device->name)
                        : std::string("the results name no device"),
               "name the catalog GPU with --gpu, e.g. --gpu h100-sxm");
  }
  if (!target.gpu_name.empty()) {
    const auto it = catalog.gpus.find(target.gpu_name);
    if (it == catalog.gpus.end()) {
      errors.add(config::Location{"<command line>", 0, 0}, "--gpu",
                 unknown_name_message("GPU", target.gpu_name, catalog.gpus), did_you_mean(target.gpu_name, catalog.gpus));
    } else if (node_known) {
      target.gpu = it->second;
      // --gpu names a catalog GPU for a device the catalog does not know by name (a PCIe
      // board, a renamed one): one of another SM count is another GPU (an H100 PCIe's 114 SMs
      // made an h100-sxm profile of 132 without a word).
      if (m.device && !calibration::catalog_gpu_for(m.device->name) && m.device->sm_count > 0 && target.gpu.sms > 0 &&
          m.device->sm_count != target.gpu.sms) {
        errors.add(config::Location{"<command line>", 0, 0}, args.gpu.empty() ? "" : "--gpu",
                   fmt::format("the results ran on '{}' with {} SMs; one {} has {}: another GPU", m.device->name,
                               m.device->sm_count, target.gpu_name, target.gpu.sms),
                   "name the GPU the results ran on, or add it to a catalog (catalogs:) and name it");
      }
      target.scaleup_line = target.gpu.scaleup_bandwidth.value();
      const hardware::NodeSpec* node = nullptr;
      std::string node_name;
      std::vector<std::string_view> with_gpu;  // catalog nodes of this GPU
      for (const auto& [name, spec] : catalog.nodes) {
        if (spec.gpu.name == target.gpu_name) with_gpu.push_back(name);
        if (args.node.empty() ? spec.gpu.name == target.gpu_name && !node : name == args.node) {
          node = &spec;
          node_name = name;
        }
      }
      if (args.node.empty() && with_gpu.size() > 1 && !m.collectives.empty()) {
        // The network parameters depend on the node's NICs and NVLink: never guess it.
        errors.add(config::Location{"<command line>", 0, 0}, "--node",
                   fmt::format("several catalog nodes have {} GPUs ({}); the network parameters depend on "
                               "the one the collectives ran on",
                               target.gpu_name, fmt::join(with_gpu, ", ")),
                   fmt::format("name it, e.g. --node {}", with_gpu.front()));
      } else if (!args.node.empty() && node && node->gpu.name != target.gpu_name) {
        errors.add(config::Location{"<command line>", 0, 0}, "--node",
                   fmt::format("node type '{}' has {} GPUs, not {}{}", args.node, node->gpu.name, target.gpu_name,
                               args.gpu.empty() && m.device ? fmt::format(" (the results ran on '{}')", m.device->name)
                                                            : std::string()),
                   args.gpu.empty() ? "name a node of that GPU" : "name a node of that GPU, or leave --gpu out");
      } else if (node && node->gpus > 0) {
        target.scaleup_line = node->scaleup_bandwidth.value_or(target.gpu.scaleup_bandwidth).value();
        target.nic_line_per_gpu = node->nic_bandwidth.value() * double(node->nics) / double(node->gpus);
        target.node = cluster::ResolvedNode{node_name, target.gpu_name, *node, target.gpu,
                                            node->scaleup_bandwidth.value_or(target.gpu.scaleup_bandwidth)};
      }
    }
  }
  // The fit reads one 'stream' launch: a second (two runs' results, in one file or two) was
  // dropped without a word.
  const calibration::LaunchPoint* first_stream = nullptr;
  for (const calibration::LaunchPoint& p : m.launch) {
    if (p.kind != "stream") continue;
    if (!first_stream) {
      first_stream = &p;
      continue;
    }
    errors.add(located(p.where), "",
               fmt::format("a second 'stream' launch record (the first at {}): the fit reads one", first_stream->where),
               "keep one run's results");
  }
  // Measurements no GPU of this type could make (a time in the wrong unit, a log of another
  // system) would be fitted and clamped into a profile that looks measured: refused.
  if (!target.gpu_name.empty() && errors.ok()) {
    const hardware::PeakFlops& peaks = target.gpu.peak_flops;
    const auto peak_of = [&](compute::Dtype d) -> std::optional<sim::FlopRate> {
      return d == compute::Dtype::fp32   ? peaks.fp32
             : d == compute::Dtype::tf32 ? peaks.tf32
             : d == compute::Dtype::bf16 ? peaks.bf16
             : d == compute::Dtype::fp16 ? peaks.fp16
                                         : peaks.fp8;
    };
    std::set<compute::Dtype> without_peak;  // said once, at its first record
    for (const calibration::GemmPoint& p : m.gemm) {
      const std::optional<sim::FlopRate> peak = peak_of(p.dtype);
      const double flops = 2.0 * static_cast<double>(p.shape.m) * static_cast<double>(p.shape.n) *
                           static_cast<double>(p.shape.k) * static_cast<double>(p.shape.batch);
      // A datatype the GPU has no peak for (FP8 on an A100) was fitted against another's, and
      // its efficiency written as measured.
      if (!peak || peak->value() <= 0.0) {
        if (without_peak.insert(p.dtype).second) {
          const std::size_t n = static_cast<std::size_t>(std::count_if(
              m.gemm.begin(), m.gemm.end(), [&](const calibration::GemmPoint& q) { return q.dtype == p.dtype; }));
          errors.add(located(p.where), "",
                     fmt::format("{} {} GEMM record{}, but one {} has no {} peak in the catalog: no {} tensor cores "
                                 "to measure",
                                 n, config::enum_name(p.dtype), n == 1 ? "" : "s", target.gpu_name,
                                 config::enum_name(p.dtype), config::enum_name(p.dtype)),
                     p.dtype == compute::Dtype::fp8
                         ? "FP8 GEMMs need compute capability 8.9 or higher, Ada, Hopper or Blackwell: leave them out, "
                           "or name the GPU they ran on with --gpu"
                         : "leave them out, or name the GPU they ran on with --gpu");
        }
        continue;
      }
      const auto refuse = [&](const char* against, const char* hint) {
        errors.add(located(p.where), "",
                   fmt::format("a {} GEMM of {}x{}x{} in {:g} s runs at {}, {} the {} dense peak of one {} ({}): "
                               "not a measurement of this GPU",
                               config::enum_name(p.dtype), p.shape.m, p.shape.n, p.shape.k, p.seconds,
                               sim::human(sim::FlopRate::of(flops / p.seconds)), against, config::enum_name(p.dtype),
                               target.gpu_name, sim::human(*peak)),
                   hint);
      };
      // Below 1e-5 of the peak and a millisecond or more: a time written in microseconds (a
      // 256^3 GEMM, launch included, runs near 0.3% of the peak; a 16^3 one, all launch, far
      // below it, but in microseconds).
      if (flops / p.seconds < 1e-5 * peak->value() && p.seconds >= 1e-3) {
        refuse("under a hundred-thousandth of", "check time_s: it is in seconds, not microseconds");
      }
      // 10% above the catalog's dense peak: past boost-clock and rounding slack.
      if (flops / p.seconds > 1.1 * peak->value()) {
        refuse("above", "check time_s (seconds) and the shape; or name the GPU it ran on with --gpu");
      }
    }
    // Attention calls as GEMMs: no peak of their datatype, or 10% above it, is no measurement
    // of this GPU (the fit clamped such calls to an efficiency of 1 and wrote the profile).
    for (const calibration::AttentionPoint& p : m.attention) {
      const std::optional<sim::FlopRate> peak = peak_of(p.dtype);
      if (!peak || peak->value() <= 0.0) {
        errors.add(located(p.where), "",
                   fmt::format("an {} attention call, but one {} has no {} peak in the catalog: no {} tensor cores to "
                               "measure",
                               config::enum_name(p.dtype), target.gpu_name, config::enum_name(p.dtype),
                               config::enum_name(p.dtype)),
                   "leave it out, or name the GPU it ran on with --gpu");
        continue;
      }
      const double rate_share = calibration::attention_peak_seconds(p, target.gpu.peak_flops) / p.seconds;
      if (rate_share > 1.1) {
        errors.add(located(p.where), "",
                   fmt::format("an attention call ({} pass, {}x{}x{}x{}{}) in {:g} s runs at {:.3g} times the {} dense "
                               "peak of one {} ({}): not a measurement of this GPU",
                               p.backward ? "backward" : "forward", p.shape.batch_heads, p.shape.q_len, p.shape.kv_len,
                               p.shape.head_dim, p.shape.causal ? ", causal" : "", p.seconds, rate_share,
                               config::enum_name(p.dtype), target.gpu_name, sim::human(*peak)),
                   "check time_s (seconds) and the shape; or name the GPU it ran on with --gpu");
      }
    }
    // A held GEMM's window above 10% over the peak: as a sweep's point (a window in ms read as s
    // would compare it with the sweep at a rate no GPU runs).
    for (const calibration::SustainedPoint& p : m.sustained) {
      const std::optional<sim::FlopRate> peak = peak_of(p.dtype);
      if (!peak || peak->value() <= 0.0) {
        errors.add(located(p.where), "",
                   fmt::format("a held {} GEMM, but one {} has no {} peak in the catalog: no {} tensor cores to measure",
                               config::enum_name(p.dtype), target.gpu_name, config::enum_name(p.dtype),
                               config::enum_name(p.dtype)),
                   "leave it out, or name the GPU it ran on with --gpu");
        continue;
      }
      if (p.flops() <= 1.1 * peak->value()) continue;
      errors.add(located(p.where), "",
                 fmt::format("a held {} GEMM of {}x{}x{}, {} calls in {:g} s, runs at {}, above the {} dense peak of "
                             "one {} ({}): not a measurement of this GPU",
                             config::enum_name(p.dtype), p.shape.m, p.shape.n, p.shape.k, p.calls, p.window_s,
                             sim::human(sim::FlopRate::of(p.flops())), config::enum_name(p.dtype), target.gpu_name,
                             sim::human(*peak)),
                 "check window_s (seconds) and calls; or name the GPU it ran on with --gpu");
    }
    // A copy past the last-level cache (calibration::kPastCacheBytes, as fit_compute() takes
    // them) runs from HBM: faster than 10% above its rate is no measurement of this GPU (a
    // copy at 10 TB/s made an H100 profile of 3 times its HBM).
    const double hbm = target.gpu.hbm_bandwidth.value();
    for (const calibration::MemoryPoint& p : m.memory) {
      const bool device = p.kind == "d2d_copy" || p.kind == "triad";
      const double buffer = p.kind == "triad" ? p.moved / 3.0 : p.moved / 2.0;
      if (!device || hbm <= 0.0 || buffer < calibration::kPastCacheBytes) continue;
      const auto refuse = [&](const char* against, const char* hint) {
        errors.add(located(p.where), "",
                   fmt::format("a {} moving {} in {:g} s runs at {}, {} the HBM bandwidth of one {} ({}): not a "
                               "measurement of this GPU",
                               p.kind, sim::human(sim::Bytes::of(p.moved)), p.seconds,
                               sim::human(sim::Bandwidth::of(p.moved / p.seconds)), against, target.gpu_name,
                               sim::human(sim::Bandwidth::of(hbm))),
                   hint);
      };
      // Under 1% of it (33 GB/s on an H100, below a PCIe link): no copy from HBM is that
      // slow; a time in milliseconds or microseconds is. (At 1e-4, times in milliseconds
      // passed: an H100 profile of 2.9 GB/s HBM, every GEMM then memory-bound and its
      // efficiency never fitted.)
      if (p.moved / p.seconds < 1e-2 * hbm) {
        refuse("under a hundredth of", "check time_s: it is in seconds, not milliseconds or microseconds");
      }
      if (p.moved / p.seconds > 1.1 * hbm) {
        refuse("above", "check time_s (seconds) and moved_bytes; or name the GPU it ran on with --gpu");
      }
    }
    // A kernel launch costs microseconds (4-6 us per launch and wait on recent drivers): a
    // millisecond or more is a time in the wrong unit, which would add itself to every kernel.
    // (The fit reads the 'stream' kind; a round trip through a busy host may take longer.)
    for (const calibration::LaunchPoint& p : m.launch) {
      if (p.kind == "stream" && p.seconds >= 1e-3) {
        errors.add(located(p.where), "",
                   fmt::format("a '{}' launch of {:g} s: a kernel launch takes microseconds, not milliseconds or "
                               "more; not a measurement of this GPU",
                               p.kind, p.seconds),
                   "check time_s: it is in seconds, not microseconds");
      }
    }
    // A GPU moves at most its scale-up line rate (or its NIC share) each way; in-network
    // reduction (NVLS, SHARP) at most doubles the bus bandwidth that buys. An all-to-all over
    // nodes sends (n - g) / n of its buffer through the NICs, which bounds its bus bandwidth
    // (n - 1) / n x S / t at the NIC share x (n - 1) / (n - g) (another op's log relabelled as
    // one was fitted at the bound, efficiency 1.0).
    const double line = std::max(target.scaleup_line, target.nic_line_per_gpu);
    std::set<std::string> said;  // an nccl-tests line holds two points (out of place, in place)
    bool nvls_said = false;
    for (const calibration::CollectivePoint& p : m.collectives) {
      const double busbw = p.bytes / p.seconds * network::bus_factor(p.op, p.ranks);
      double bound = line;
      double slack = 2.0;  // in-network reduction at most doubles a reducing collective's
      const std::int64_t g = p.nodes > 1 ? p.ranks / p.nodes : p.ranks;
      if (p.op == network::Op::all_to_all && p.nodes > 1 && p.ranks > g && target.nic_line_per_gpu > 0.0) {
        // No reduction to do in the network: 10% above the NICs, as the GEMM and HBM bounds.
        // Each of the g ranks on a node has the node's NICs over g (all of them when the
        // test runs fewer ranks than GPUs per node).
        const double nics = target.node ? target.nic_line_per_gpu * static_cast<double>(target.node->spec.gpus)
                                        : target.nic_line_per_gpu * static_cast<double>(g);
        bound = nics / static_cast<double>(g) * static_cast<double>(p.ranks - 1) / static_cast<double>(p.ranks - g);
        slack = 1.1;
      }
      // Above NVLink's line rate inside one node, an all-reduce was reduced in the switch
      // (NVLS: NCCL's default on Hopper NVSwitch nodes), which a ring's efficiency cannot
      // describe: on a known node with NVLink SHARP the fit takes the series for
      // nvls_efficiency (calibration::invert_network); without the node it cannot model NVLS
      // (fitted as a ring, it set scaleup_efficiency to its bound, 1.0, and every other NVLink
      // collective ran at line rate), and a node without NVLink SHARP (an A100's NVSwitch, a
      // mesh) cannot have reduced in its switch. Said once, at its first line.
      const std::string no_nvls = target.node ? cluster::nvls_unavailable(*target.node) : std::string();
      if (p.op == network::Op::all_reduce && p.nodes <= 1 && p.ranks > 1 && target.scaleup_line > 0.0 &&
          busbw > calibration::kNvlsAboveLine * target.scaleup_line && busbw <= slack * bound &&
          (!target.node || !no_nvls.empty()) && !nvls_said) {
        nvls_said = true;
        errors.add(located(p.where), "",
                   target.node
                       ? fmt::format("all_reduce of {} B on {} ranks of one node: a bus bandwidth of {}, above the "
                                     "{} scale-up line rate of one {}: not a measurement of a {} node, which has no "
                                     "NVLink SHARP to reduce in: {}",
                                     p.bytes, p.ranks, sim::human(sim::Bandwidth::of(busbw)),
                                     sim::human(sim::Bandwidth::of(target.scaleup_line)), target.gpu_name,
                                     target.node->name, no_nvls)
                       : fmt::format("all_reduce of {} B on {} ranks of one node: a bus bandwidth of {}, above the "
                                     "{} NVLink line rate of one {}: NCCL reduced in the NVSwitch (NVLS), which "
                                     "only a known node lets the fit model",
                                     p.bytes, p.ranks, sim::human(sim::Bandwidth::of(busbw)),
                                     sim::human(sim::Bandwidth::of(target.scaleup_line)), target.gpu_name),
                   target.node ? std::string("check which GPU and node the log ran on: --gpu, --node")
                               : std::string("name the node it ran on (--node) to fit network.nvls_efficiency from it, "
                                             "or rerun all_reduce_perf with NCCL_NVLS_ENABLE=0 for the NVLink "
                                             "efficiency"));
      }
      if (bound > 0.0 && p.ranks > 1 && busbw > slack * bound && said.insert(p.where).second) {
        errors.add(located(p.where), "",
                   fmt::format("{} of {} B on {} ranks in {:g} s: a bus bandwidth of {}, {} ({}): not "
                               "a measurement of these GPUs",
                               config::enum_name(p.op), p.bytes, p.ranks, p.seconds,
                               sim::human(sim::Bandwidth::of(busbw)),
                               bound == line ? fmt::format("more than twice one {}'s line rate", target.gpu_name)
                                             : fmt::format("above the most an all-to-all over {} nodes reaches through "
                                                           "the NICs of one {} rank",
                                                           p.nodes, target.gpu_name),
                               sim::human(sim::Bandwidth::of(bound))),
                   "check the time column's unit (nccl-tests prints microseconds); or name the GPU with --gpu");
      }
    }
  }
  std::string python;
  if (!args.plot_dir.empty()) {
    std::string why;
    if (const auto found = find_plot_python(why)) {
      python = *found;
    } else {
      errors.add(config::Location{"<command line>", 0, 0}, "--plot", why);
    }
  }
  if (!errors.ok()) {
    std::cerr << errors.format();
    std::cerr << fmt::format("{} error{}; nothing was written.\n", errors.items().size(),
                             errors.items().size() == 1 ? "" : "s");
    return kExitInput;
  }

  calibration::FitReport report;
  calibration::CalibrationProfile profile;
  try {
    profile = calibration::fit_profile(m, target, report);
  } catch (const sim::TimeRangeError& e) {
    // The readers reject times past the clock's range; a fit that still reaches one comes
    // from the measurements, which main()'s handler would blame on a scenario.
    std::cerr << fmt::format("{}: error: fitting the measurements gave {}; look for an implausibly long or short "
                             "time in them\n1 error; nothing was written.\n",
                             fmt::join(inputs_of(args), ", "), e.what());
    return kExitInput;
  }
  if (!profile.compute && profile.collectives.empty()) {
    // A profile with nothing fitted would change nothing, yet say "measured": refused.
    std::cerr << fmt::format("{}: error: nothing could be fitted: no GEMM, attention, memory or launch record, and no "
                             "collective series of two sizes or more (sustained records check a GEMM sweep, they fit "
                             "nothing){}\n",
                             fmt::join(inputs_of(args), ", "), report.notes.empty() ? "" : ":");
    for (const std::string& n : report.notes) std::cerr << "  " << n << "\n";
    std::cerr << "1 error; nothing was written.\n";
    return kExitInput;
  }
  if (target.node && !m.collectives.empty()) {
    report.notes.push_back(fmt::format("the network model ran on nodes of type {} ({} GPUs, {} NICs of {})",
                                       target.node->name, target.node->spec.gpus, target.node->spec.nics,
                                       sim::human(target.node->spec.nic_bandwidth)));
  }
  profile.source = args.source.empty() ? fmt::format("fitted by clustersim calibrate from {}", fmt::join(inputs_of(args), ", "))
                                       : args.source;
  if (profile.compute) {
    profile.compute->source = profile.source;
    if (!report.kept_builtin.empty()) {
      profile.compute->source += fmt::format("; not measured, the built-in profile's: {}", fmt::join(report.kept_builtin, ", "));
    }
  }
  // The plots first: when they fail, nothing is left (the profile is not written).
  if (!args.plot_dir.empty()) {
    if (const int rc = write_plots(args.plot_dir, plots_before, python, report, profile); rc != 0) return rc;
  }
  const std::string err = write_file_atomically(args.output, config::json_text(calibration::to_json(profile), 2) + "\n");
  if (!err.empty()) {
    std::cerr << "error: " << err << "; nothing was written.\n";
    if (!args.plot_dir.empty()) remove_plots(args.plot_dir, plots_before);
    return kExitInput;
  }
  std::cout << report_text(report);
  std::cout << fmt::format("\nprofile for {} written to {}\n", target.gpu_name, args.output);
  if (!args.plot_dir.empty()) {
    // ("plots/" printed "plots//")
    std::cout << fmt::format("plots written to {}/ (measured vs fitted, one PNG per group)\n", folder(args.plot_dir));
  }
  // The network model fitted on these logs missing them by more than their own size, in
  // sample: no set of its parameters fits them all (logs of two systems, a log relabelled).
  // Written, as a fit, and said on stderr (it went without a word).
  // Off by a factor: predicted / measured past 2 or under 1/2 (an error under -50% is a model
  // twice too fast, which |error| > 100% never caught).
  const auto factor = [](const calibration::FitPoint& p) {
    return std::max(p.predicted / p.measured, p.measured / p.predicted);
  };
  const calibration::FitPoint* worst = nullptr;
  for (const calibration::FitPoint& p : report.points) {
    if (!p.group.starts_with("network/") || !p.fitted || !(p.measured > 0.0) || !(p.predicted > 0.0)) continue;
    if (!worst || factor(p) > factor(*worst)) worst = &p;
  }
  if (worst && factor(*worst) > 2.0) {
    std::cerr << fmt::format("warning: the fitted network model misses its own measurements by a factor of up to "
                             "{:.2f} ({:+.1f}%, {} at {}): no one set of network parameters fits them; check that the "
                             "logs come from one system and GPU type\n",
                             factor(*worst), 100.0 * worst->error(), worst->group, worst->label);
  }
  // An efficiency far from the GPU type's built-in one, from a log that fits well by itself:
  // the log may come from another GPU or a contended system (an A100 log named an H100's
  // fitted the H100's NVLink at 0.519 of its rate, against 0.822 built in, without a word).
  // Written as fitted; said on stderr.
  if (profile.network) {
    const network::NetworkConfig defaults;
    const auto built = calibration::builtin_network(target.gpu_name);
    struct Built {
      const char* key;
      std::optional<double> fitted;
      std::optional<double> builtin;  // the GPU type's built-in calibration's, where it sets one
      double fallback;                // else the network model's default
    };
    for (const Built& b : {Built{"scaleup_efficiency", profile.network->scaleup_efficiency,
                                 built ? built->network.scaleup_efficiency : std::nullopt, defaults.scaleup_efficiency},
                           Built{"scaleout_efficiency", profile.network->scaleout_efficiency,
                                 built ? built->network.scaleout_efficiency : std::nullopt,
                                 defaults.scaleout_efficiency}}) {
      const double reference = b.builtin.value_or(b.fallback);
      if (!b.fitted || !(reference > 0.0) || std::abs(*b.fitted / reference - 1.0) < 0.25) continue;
      std::cerr << fmt::format("warning: the fitted {} {:.3g} is {:.0f}% {} {} {:.3g} ({}): is the log from another "
                               "GPU type, or a system under other load? The profile is written as fitted\n",
                               b.key, *b.fitted, 100.0 * std::abs(*b.fitted / reference - 1.0),
                               *b.fitted < reference ? "below" : "above",
                               b.builtin ? fmt::format("{}'s built-in", target.gpu_name)
                                         : std::string("the network model's default"),
                               reference,
                               b.builtin ? std::string(calibration::kBuiltinNetworkFile)
                                         : std::string("models/network/config.hpp"));
    }
  }
  return 0;
}

}  // namespace clustersim::tools
