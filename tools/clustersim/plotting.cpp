#include "tools/clustersim/plotting.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

extern char** environ;

namespace clustersim::tools {
namespace {

/// Starts argv[0] (searched on PATH when it has no '/'), waits, returns the exit status
/// (-1: could not start or did not exit normally). quiet: stdout and stderr to /dev/null.
int spawn_and_wait(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool has_matplotlib(const std::string& python) {
  return spawn_and_wait({python, "-c", "import matplotlib"}, true) == 0;
}

}  // namespace

std::optional<std::string> find_plot_python(std::string& why) {
  // The scripts are the source tree's this binary was built from (there is no install): a
  // binary copied away from it, or a tree moved, found no script only after the run, and
  // lost its results with the plot.
  for (const char* script : {"plot.py", "plot_calibration.py"}) {
    std::error_code ec;
    const std::string path = std::string(CLUSTERSIM_TOOLS_DIR) + "/" + script;
    if (!std::filesystem::is_regular_file(path, ec)) {
      why = fmt::format("the plotting script {} is not there (the source tree this clustersim was built from); run "
                        "the clustersim built in the source tree, or rebuild it where the tree now is",
                        path);
      return std::nullopt;
    }
  }
  if (const char* forced = std::getenv("CLUSTERSIM_PYTHON"); forced && *forced) {
    if (has_matplotlib(forced)) return std::string(forced);
    why = fmt::format("CLUSTERSIM_PYTHON={} does not import matplotlib (install python3-matplotlib for it, or "
                      "unset CLUSTERSIM_PYTHON)",
                      forced);
    return std::nullopt;
  }
  const std::vector<std::string> candidates{"/usr/bin/python3", "python3"};
  for (const std::string& c : candidates) {
    if (has_matplotlib(c)) return c;
  }
  why = fmt::format("no Python with matplotlib: tried {}; install the Debian package python3-matplotlib "
                    "(apt-get install python3-matplotlib), or name an interpreter that has it with "
                    "CLUSTERSIM_PYTHON=/path/to/python3",
                    fmt::join(candidates, ", "));
  return std::nullopt;
}

int run_plot_script(const std::string& python, const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv{python, std::string(CLUSTERSIM_TOOLS_DIR) + "/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::cout.flush();  // our lines first, then the script's
  std::cerr.flush();
  return spawn_and_wait(argv, false);
}

}  // namespace clustersim::tools
