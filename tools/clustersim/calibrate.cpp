#include "tools/clustersim/calibrate.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/wait.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/calibration/fit.hpp"
#include "models/hardware/catalog.hpp"
#include "tools/clustersim/report.hpp"

namespace clustersim::tools {
namespace {

constexpr int kExitInput = 2;

bool read_file(const std::string& path, std::string& out, config::Diagnostics& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) {
    errors.add(config::Location{path, 0, 0}, "",
               fmt::format("cannot read: {}", in ? "is a directory" : std::strerror(errno)));
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  out = buf.str();
  return true;
}

hardware::Catalog builtin_catalog() {
  hardware::Catalog catalog;
  config::LoadState state;
  config::Codec<hardware::Catalog>::decode(YAML::Load(std::string(hardware::builtin_catalog_text())), catalog,
                                           config::Context(state, std::string(hardware::kBuiltinCatalogFile)));
  return catalog;
}

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{:.2f}us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f}ms", s * 1e3);
  return fmt::format("{:.3f}s", s);
}

std::string report_text(const calibration::FitReport& report) {
  std::string out = "# clustersim calibrate: fit report (error = predicted / measured - 1)\n";
  std::string group;
  for (const auto& p : report.points) {
    if (p.group != group) {
      group = p.group;
      out += fmt::format("\n## {}\n# {:>22} {:>12} {:>12} {:>8}\n", group, "point", "measured", "predicted", "error");
    }
    out += fmt::format("  {:>22} {:>12} {:>12} {:>+7.1f}%{}\n", p.label, seconds_text(p.measured),
                       seconds_text(p.predicted), 100 * p.error(), p.fitted ? "" : "  (cross-check)");
  }
  out += "\n## summary (|error|)\n";
  std::vector<std::string> groups;
  for (const auto& p : report.points) {
    if (groups.empty() || groups.back() != p.group) groups.push_back(p.group);
  }
  const auto line = [&](const std::string& name, const calibration::ErrorSummary& s) {
    if (s.count == 0) return;
    out += fmt::format("  {:<34} {:>4} points  median {:>5.1f}%  worst {:>5.1f}% ({})\n", name, s.count,
                       100 * s.median, 100 * s.worst, s.worst_label);
  };
  for (const std::string& g : groups) line(g, calibration::summarize(report.points, g));
  line("collectives at >= 1 MiB", calibration::summarize(report.points, "collective/", 1048576.0));
  line("all points", calibration::summarize(report.points));
  out += "\n## fitted parameters and notes\n";
  for (const std::string& n : report.notes) out += "  " + n + "\n";
  return out;
}

int write_plots(const std::string& dir, const calibration::FitReport& report) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string csv = "group,label,bytes,measured_s,predicted_s,fitted\n";
  for (const auto& p : report.points) {
    csv += fmt::format("{},{},{},{},{},{}\n", p.group, p.label, p.bytes, p.measured, p.predicted, p.fitted ? 1 : 0);
  }
  const std::string points = dir + "/points.csv";
  if (const std::string err = write_file_atomically(points, csv); !err.empty()) {
    std::cerr << "error: --plot: " << err << "\n";
    return kExitInput;
  }
  const std::string script = std::string(CLUSTERSIM_TOOLS_DIR) + "/plot_calibration.py";
  const std::string cmd = fmt::format("python3 '{}' '{}' '{}'", script, points, dir);
  const int status = std::system(cmd.c_str());
  const int rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc != 0) {
    std::cout << fmt::format("--plot: skipped, no PNGs written ({}); the points are in {}\n",
                             rc == 3 ? "python3-matplotlib is not installed" : fmt::format("plot script exit status {}", rc),
                             points);
  } else {
    std::cout << fmt::format("plots written to {}/\n", dir);
  }
  return 0;
}

}  // namespace

int calibrate(const CalibrateArgs& args) {
  config::Diagnostics errors;
  calibration::Measurements m;
  for (const std::string& f : args.results) {
    std::string text;
    if (read_file(f, text, errors)) calibration::read_results(f, text, m, errors);
  }
  for (const std::string& f : args.nccl_tests) {
    std::string text;
    if (read_file(f, text, errors)) calibration::read_nccl_tests(f, text, m, errors);
  }
  if (args.results.empty() && args.nccl_tests.empty()) {
    errors.add(config::Location{"<command line>", 0, 0}, "",
               "nothing to fit: name microbenchmark results (RESULTS.jsonl) or --nccl-tests logs");
  }
  const hardware::Catalog catalog = builtin_catalog();
  calibration::FitTarget target;
  target.gpu_name = args.gpu;
  if (target.gpu_name.empty() && m.device) target.gpu_name = calibration::catalog_gpu_for(m.device->name).value_or("");
  if (target.gpu_name.empty() && errors.ok()) {
    errors.add(config::Location{"<command line>", 0, 0}, "",
               m.device ? fmt::format("the device '{}' is not a catalog GPU type", m.device->name)
                        : std::string("the results name no device"),
               "name the catalog GPU with --gpu, e.g. --gpu h100-sxm");
  }
  if (!target.gpu_name.empty()) {
    const auto it = catalog.gpus.find(target.gpu_name);
    if (it == catalog.gpus.end()) {
      std::vector<std::string_view> names;
      for (const auto& e : catalog.gpus) names.push_back(e.first);
      errors.add(config::Location{"<command line>", 0, 0}, "--gpu",
                 fmt::format("unknown GPU type '{}'; the catalog has {}", target.gpu_name, fmt::join(names, ", ")));
    } else {
      target.gpu = it->second;
      target.scaleup_line = target.gpu.scaleup_bandwidth.value();
      const hardware::NodeSpec* node = nullptr;
      for (const auto& [name, spec] : catalog.nodes) {
        if (args.node.empty() ? spec.gpu.name == target.gpu_name && !node : name == args.node) node = &spec;
      }
      if (!args.node.empty() && !node) {
        errors.add(config::Location{"<command line>", 0, 0}, "--node", fmt::format("unknown node type '{}'", args.node));
      } else if (node && node->gpus > 0) {
        target.scaleup_line = node->scaleup_bandwidth.value_or(target.gpu.scaleup_bandwidth).value();
        target.nic_line_per_gpu = node->nic_bandwidth.value() * double(node->nics) / double(node->gpus);
      }
    }
  }
  if (!errors.ok()) {
    std::cerr << errors.format();
    std::cerr << fmt::format("{} error{}; nothing was written.\n", errors.items().size(),
                             errors.items().size() == 1 ? "" : "s");
    return kExitInput;
  }

  calibration::FitReport report;
  calibration::CalibrationProfile profile = calibration::fit_profile(m, target, report);
  std::vector<std::string> inputs = args.results;
  inputs.insert(inputs.end(), args.nccl_tests.begin(), args.nccl_tests.end());
  profile.source = args.source.empty() ? fmt::format("fitted by clustersim calibrate from {}", fmt::join(inputs, ", "))
                                       : args.source;
  if (profile.compute) profile.compute->source = profile.source;
  const std::string err = write_file_atomically(args.output, calibration::to_json(profile).dump(2) + "\n");
  if (!err.empty()) {
    std::cerr << "error: " << err << "\n";
    return kExitInput;
  }
  std::cout << report_text(report);
  std::cout << fmt::format("\nprofile for {} written to {}\n", target.gpu_name, args.output);
  if (!args.plot_dir.empty()) return write_plots(args.plot_dir, report);
  return 0;
}

}  // namespace clustersim::tools
