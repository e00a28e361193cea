// Plots: the simulator writes the data (CSV), a Python script in tools/ draws the PNGs with
// matplotlib (Debian package python3-matplotlib). This finds an interpreter that has it and
// runs the script; `calibrate --plot`, `run --plot` and `compare --plot` share it.
//
// Interpreter lookup, first that imports matplotlib wins: $CLUSTERSIM_PYTHON when set (and
// then only it), /usr/bin/python3 (Debian's, where python3-matplotlib installs), python3 on
// PATH (which may be a pyenv or venv interpreter without Debian's dist-packages).
//
// LIMITATIONS: each lookup starts the interpreter once per candidate (about 0.3 s with
// matplotlib); the scripts are read from the source tree (CLUSTERSIM_TOOLS_DIR), so an
// installed binary needs the tools/ folder beside its sources.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace clustersim::tools {

/// The interpreter to run plot scripts with, or nothing, with `why` saying what was tried
/// and what to install.
std::optional<std::string> find_plot_python(std::string& why);

/// Runs `python tools/SCRIPT args...` (SCRIPT relative to the tools folder), its output on
/// ours; returns its exit status, or -1 when it could not be started.
int run_plot_script(const std::string& python, const std::string& script, const std::vector<std::string>& args);

}  // namespace clustersim::tools
