// `clustersim calibrate`: fits a calibration profile (models/calibration/) to microbenchmark
// results and nccl-tests logs, prints the fit report and writes the profile.
#pragma once

#include <string>
#include <vector>

namespace clustersim::tools {

struct CalibrateArgs {
  std::vector<std::string> results;     ///< microbenchmark JSON lines files
  std::vector<std::string> nccl_tests;  ///< nccl-tests logs
  std::string output;                   ///< profile.json
  std::string gpu;                      ///< catalog GPU (default: from the device name)
  std::string node;                     ///< catalog node for line rates (default: the first with that GPU)
  std::string source;                   ///< the profile's source text
  std::string plot_dir;                 ///< --plot: PNGs of measured vs fitted
};

/// Runs the command; returns the exit code (0, or 2 for bad input with diagnostics on stderr).
int calibrate(const CalibrateArgs& args);

}  // namespace clustersim::tools
