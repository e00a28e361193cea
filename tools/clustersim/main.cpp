// clustersim: the command line.
//
// Exit codes: 0 success; 2 bad input (scenario errors, bad options, unwritable output),
// reported as diagnostics with nothing written; 3 an internal error (a bug: please report it).
#include <algorithm>
#include <array>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include <signal.h>  // kill(pid, 0): is a staging folder's process still there
#include <unistd.h>  // getpid: the plots' staging folder

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/config/diagnostics.hpp"
#include "models/network/network.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/check.hpp"
#include "sim/time.hpp"
#include "tools/clustersim/calibrate.hpp"
#include "tools/clustersim/collective.hpp"
#include "tools/clustersim/compare.hpp"
#include "tools/clustersim/plan.hpp"
#include "tools/clustersim/plotting.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/sweep.hpp"
#include "tools/clustersim/validate.hpp"
#include "tools/clustersim/version.hpp"

namespace {

using namespace clustersim;
using tools::folder;

constexpr int kExitInput = 2;
constexpr int kExitInternal = 3;

struct ScenarioArgs {
  std::string file;  // empty: the built-in quickstart
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
};

/// --seed: a decimal integer from 0 to 2^64-1, rewritten without its leading zeros. CLI11
/// alone wraps -1, saturates values past 2^64-1, and reads "010" as octal 8 and "0x10" as
/// 16: each silently another seed.
std::string check_seed(std::string& v) {
  std::uint64_t seed = 0;
  const char* end = v.data() + v.size();
  const auto [stop, ec] = std::from_chars(v.data(), end, seed);
  if (v.empty() || ec != std::errc() || stop != end) {
    return !v.empty() && v.front() == '-'
               ? std::string("the seed must not be negative")
               : fmt::format("expected an integer from 0 to 18446744073709551615, got '{}'", v);
  }
  v = std::to_string(seed);
  return {};
}

/// A file or folder option: given, it must name something. An empty value (a script's unset
/// variable) would otherwise mean "not given" and silently write nothing, or fail later
/// with an error that names no file.
std::string check_path(const std::string& v) {
  return v.empty() ? std::string("expected a file or folder name, got an empty string") : std::string();
}

/// A count option (threads, replications, seeds, ranks): a decimal whole number from lo to
/// hi, rewritten without leading zeros; a transform, not a check, so that CLI11 converts the
/// rewritten text: it read "010" as octal 8 and "0x10" as 16. CLI11's Range says "Value 1.5
/// not in range 1 to 64", which reads as if 1.5 were too small.
/// `range`, when given, says the range in words (where its top is not known yet: "2 to
/// the scenario's GPUs" read "2 to 100000000").
CLI::Validator whole_in(std::int64_t lo, std::int64_t hi, std::string range = {}) {
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        std::int64_t x = 0;
        const char* end = v.data() + v.size();
        const auto [stop, ec] = std::from_chars(v.data(), end, x);
        if (v.empty() || ec != std::errc() || stop != end || x < lo || x > hi) {
          return range.empty() ? fmt::format("expected an integer from {} to {}, got '{}'", lo, hi, v)
                               : fmt::format("expected an integer from {}, got '{}'", range, v);
        }
        v = std::to_string(x);
        return {};
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

/// A list option given an empty string ("") fell back to its default without a word.
std::string check_list(const std::string& v) {
  return v.empty() ? std::string("expected a comma list, got an empty string") : std::string();
}

/// `seeded`: the command draws at random, and --seed is listed in its help; otherwise
/// (topology, collective) --seed is hidden, kept only to say why it changes nothing
/// (refuse_seed()).
void add_scenario_options(CLI::App& cmd, ScenarioArgs& args, bool file_optional, bool seeded = true) {
  auto* opt = cmd.add_option("scenario", args.file,
                             file_optional ? "scenario YAML file (default: the built-in quickstart)"
                                           : "scenario YAML file");
  opt->check(check_path);
  if (!file_optional) opt->required();
  cmd.add_option("--set", args.sets, "override a key: --set cluster.nodes=128 (repeatable; a key set twice takes the last value)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  auto* seed = cmd.add_option("--seed", args.seed, "override simulation.seed (an integer from 0 to 2^64-1)")
                   ->transform(CLI::Validator(check_seed, ""));
  if (!seeded) seed->group("");
}

/// topology and collective draw nothing at random: the only seed they read is the fabric's
/// ECMP hash salt. --seed (simulation.seed) there was accepted and changed nothing.
bool refuse_seed(const ScenarioArgs& args, std::string_view command) {
  if (!args.seed) return false;
  std::cerr << fmt::format("error: {} --seed: {} draws nothing at random, so simulation.seed changes nothing; "
                           "where the fabric hashes flows (a Clos, a Valiant or UGAL dragonfly), the hash's salt is "
                           "fabric.ecmp_seed (--set fabric.ecmp_seed={})\n",
                           command, command, *args.seed);
  return true;
}

scenario::LoadedScenario load(const ScenarioArgs& args) {
  const scenario::LoadOptions options{args.sets, args.seed, true};
  return args.file.empty() ? scenario::load_default_scenario(options) : scenario::load_scenario(args.file, options);
}

/// The count of errors closing a report; with `more`, that the load stopped at a stage whose
/// errors keep later checks from running (config::InputError::more_checks()), so the count
/// is not all there may be.
std::string error_count(std::size_t count, bool more = false) {
  return fmt::format("{} error{}; nothing was run.{}\n", count, count == 1 ? "" : "s",
                     !more           ? ""
                     : count == 1    ? " More checks run once it is fixed, and may find more."
                                     : " More checks run once these are fixed, and may find more.");
}

int report_input_error(const config::InputError& e) {
  std::cerr << e.diagnostics().format();
  std::cerr << error_count(e.diagnostics().items().size(), e.more_checks());
  return kExitInput;
}

/// Errors in a command's own options, every one of them at once (as a scenario's), then
/// their count.
/// With `scenario`, the scenario's own errors after them, in one count.
int report_option_errors(const std::vector<std::string>& errors, const config::InputError* scenario = nullptr) {
  for (const std::string& e : errors) std::cerr << "error: " << e << "\n";
  std::size_t count = errors.size();
  if (scenario) {
    std::cerr << scenario->diagnostics().format();
    count += scenario->diagnostics().items().size();
  }
  std::cerr << error_count(count, scenario && scenario->more_checks());
  return kExitInput;
}

/// The scenario's errors of value and key (an unresolved load, which builds nothing), to say
/// with a command's option errors rather than after their fix; nullopt when it decodes.
std::optional<config::InputError> scenario_value_errors(const ScenarioArgs& args) {
  scenario::LoadOptions o{args.sets, args.seed, false, false};
  o.resolve = false;
  try {
    (void)(args.file.empty() ? scenario::load_default_scenario(o) : scenario::load_scenario(args.file, o));
  } catch (const config::InputError& e) {
    return e;
  }
  return std::nullopt;
}

/// A scenario whose values compose into a duration the clock cannot hold: input, not a bug.
int report_time_range(const sim::TimeRangeError& e, const std::string& input) {
  std::cerr << fmt::format(
      "{}: error: {}\n  Some values of the scenario make a duration too long to simulate: look for very small "
      "rates (bandwidths, peak FLOP rates) or very long latencies (network.step_latency, network.call_overhead).\n"
      "1 error; nothing was run.\n",
      input, e.what());
  return kExitInput;
}

/// The interpreter for --plot (tools/clustersim/plotting.hpp), or an error on stderr.
std::optional<std::string> plot_python(const std::string& option) {
  std::string why;
  auto python = tools::find_plot_python(why);
  if (!python) std::cerr << fmt::format("error: {}: {}\n", option, why);
  return python;
}

/// Runs `tools/plot.py args...`; false, with a message, when it fails.
bool plot(const std::string& python, const std::vector<std::string>& args) {
  const int rc = tools::run_plot_script(python, "plot.py", args);
  if (rc == 0) return true;
  std::cerr << fmt::format("error: tools/plot.py {} {}\n", args.front(),
                           rc < 0 ? std::string("could not be run") : fmt::format("exited with status {}", rc));
  return false;
}

/// The folders a command creates for its outputs, removed again (when still empty) unless
/// keep() is called: a command that fails leaves nothing behind.
class NewFolders {
 public:
  NewFolders() = default;
  NewFolders(const NewFolders&) = delete;
  NewFolders& operator=(const NewFolders&) = delete;
  ~NewFolders() {
    std::error_code ec;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) std::filesystem::remove(*it, ec);
  }
  /// create_directories(dir), remembering each level it creates.
  void create(const std::filesystem::path& dir, std::error_code& ec) {
    // Every level known to be missing before (one whose existence cannot be told is left
    // alone), recorded if it exists afterwards: a creation that fails part-way leaves the
    // levels it made to be removed too.
    std::vector<std::filesystem::path> missing;
    for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
      std::error_code probe;
      if (!std::filesystem::exists(p, probe) && !probe) missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    std::filesystem::create_directories(dir, ec);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      std::error_code probe;
      if (std::filesystem::is_directory(*it, probe)) created_.push_back(*it);
    }
  }
  void keep() { created_.clear(); }

 private:
  std::vector<std::filesystem::path> created_;  // outermost first
};

/// The staging folder of this process's plots inside `dir`, .clustersim-plots-PID (two
/// commands plotting into one folder at once each had the other's removed under it). Those
/// of processes that are gone (a command stopped mid-plot) and the former fixed-name one are
/// removed here: nothing else would.
std::filesystem::path plot_staging(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    constexpr std::string_view kPrefix = ".clustersim-plots-";
    if (name == ".clustersim-plots") {
      stale.push_back(it->path());
    } else if (name.rfind(kPrefix, 0) == 0) {
      long pid = 0;
      const char* first = name.data() + kPrefix.size();
      const auto [end, err] = std::from_chars(first, name.data() + name.size(), pid);
      if (err == std::errc() && end == name.data() + name.size() && pid > 0 &&
          ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH) {
        stale.push_back(it->path());
      }
    }
  }
  for (const auto& p : stale) std::filesystem::remove_all(p, ec);
  return dir / fmt::format(".clustersim-plots-{}", static_cast<long>(::getpid()));
}

/// Why the plot files `names` could not move into `dir`: one of them is there as a folder
/// (or anything but a file), which a rename would fail on after the other outputs were
/// written. Empty when they can.
std::string plot_destination_blocked(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(dir / name, ec);
    if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_symlink(st)) {
      return fmt::format("cannot write '{}': {}", (dir / name).string(),
                         std::filesystem::is_directory(st) ? "it is a folder" : "it is not a regular file");
    }
  }
  return {};
}

/// Moves the files `names` drawn in `staging` into `dir` (those the script wrote), then
/// removes `staging`. An error message when a move fails, else empty.
std::string move_plots_in(const std::filesystem::path& staging, const std::filesystem::path& dir,
                          const std::vector<std::string>& names) {
  std::string err;
  for (const std::string& name : names) {
    std::error_code ec;
    if (!std::filesystem::exists(staging / name, ec)) continue;
    std::filesystem::rename(staging / name, dir / name, ec);
    if (ec && err.empty()) err = fmt::format("cannot write '{}': {}", (dir / name).string(), ec.message());
  }
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  return err;
}

/// Draws plots into folder `dir` (made if missing, through `folders`): the `data` files
/// (name, contents) are written to a staging folder inside it, tools/plot.py runs with
/// plot_args(staging), and the data and the `drawn` files move into `dir` when everything
/// succeeded. A folder that cannot be written, or a plot that fails, leaves `dir` as it was:
/// false, with the error on stderr and then `failed` ("nothing was written.").
bool draw_plots(const std::string& python, const std::filesystem::path& dir,
                const std::vector<std::pair<std::string, std::string>>& data, const std::vector<std::string>& drawn,
                const std::function<std::vector<std::string>(const std::filesystem::path&)>& plot_args,
                NewFolders& folders, const std::string& failed = "nothing was written.") {
  std::error_code made;
  folders.create(dir, made);
  if (made || !std::filesystem::is_directory(dir, made)) {
    std::cerr << fmt::format("error: --plot: cannot create the folder '{}': {}\n{}\n", dir.string(),
                             made ? made.message() : std::string("not a folder"), failed);
    return false;
  }
  std::vector<std::string> names;
  for (const auto& [name, contents] : data) names.push_back(name);
  names.insert(names.end(), drawn.begin(), drawn.end());
  const std::filesystem::path staging = plot_staging(dir);
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  std::string err = plot_destination_blocked(dir, names);
  if (err.empty()) {
    std::vector<std::pair<std::string, std::string>> staged;
    for (const auto& [name, contents] : data) staged.emplace_back((staging / name).string(), contents);
    err = tools::write_files_atomically(staged);
  }
  const bool ok = err.empty() && plot(python, plot_args(staging));
  if (ok) err = move_plots_in(staging, dir, names);
  std::filesystem::remove_all(staging, ec);
  if (!ok || !err.empty()) {
    if (!err.empty()) std::cerr << "error: --plot: " << err << "\n";
    std::cerr << failed << "\n";
    return false;
  }
  return true;
}

/// --plot DIR (or --out DIR) given a file: said before anything runs (it read "cannot create
/// the folder '.../.clustersim-plots'").
bool plot_folder_is_file(const std::string& dir, const char* option = "--plot") {
  std::error_code is;
  if (dir.empty() || !std::filesystem::exists(dir, is) || std::filesystem::is_directory(dir, is)) return false;
  std::cerr << fmt::format("error: {} '{}' is a file, not a folder (name a folder, new or existing)\n", option, dir);
  return true;
}

/// Which of `names` are in `dir` already: files an earlier command wrote, said not to be this
/// one's when it draws nothing.
std::vector<std::string> already_there(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<std::string> there;
  for (const std::string& name : names) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(std::filesystem::path(dir) / name, ec))) {
      there.push_back(name);
    }
  }
  return there;
}

int cmd_run(const ScenarioArgs& args, const std::string& format, const std::string& out_dir,
            const std::string& trace_file, bool with_plots) {
  const auto start = std::chrono::steady_clock::now();
  if (with_plots && out_dir.empty()) {
    std::cerr << "error: --plot draws the files --out writes: give --out DIR as well\n";
    return kExitInput;
  }
  const scenario::LoadedScenario loaded = load(args);
  if (!trace_file.empty() && loaded.jobs.empty()) {
    std::cerr << fmt::format("error: --trace {}: the scenario has no workload jobs to trace\n", trace_file);
    return kExitInput;
  }
  std::optional<std::string> python;
  if (with_plots && !(python = plot_python("--plot"))) return kExitInput;
  // The folders of every output first: one that cannot be created fails before any file is
  // written (before, a bad --trace path left --out's results.json behind). Those this run
  // created go again if it fails (before, a bad --trace left an empty --out folder).
  NewFolders folders;
  for (const std::string& dir : {out_dir, std::filesystem::path(trace_file).parent_path().string()}) {
    std::error_code ec;
    if (!dir.empty()) folders.create(dir, ec);
    if (ec) {
      const std::string what = dir == out_dir ? "--out" : "--trace: the trace's folder";
      std::error_code is;
      if (std::filesystem::exists(dir, is) && !std::filesystem::is_directory(dir, is)) {
        std::cerr << fmt::format("error: {} '{}' is a file, not a folder (name a folder, new or existing)\n", what, dir);
      } else {
        std::cerr << fmt::format("error: {} '{}' cannot be created: {}\n", what, dir, ec.message());
      }
      return kExitInput;
    }
  }
  if (std::error_code ec; !trace_file.empty() && std::filesystem::is_directory(trace_file, ec)) {
    std::cerr << fmt::format("error: --trace {}: is a directory (give a file name, e.g. {}/step.json)\n", trace_file,
                             trace_file);
    return kExitInput;
  }
  tools::RunResult result = tools::compute_run(loaded, !trace_file.empty(), /*progress=*/true, /*links=*/true);
  result.info.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const config::Json doc = tools::result_document(loaded, result);
  // Every output file or none (a trace that cannot be written left results.json behind).
  std::vector<std::pair<std::string, std::string>> files;
  if (!out_dir.empty()) {
    files.emplace_back(out_dir + "/results.json", config::json_text(doc, 2) + "\n");
    if (result.reliability) {
      files.emplace_back(out_dir + "/failures.csv", tools::timeline_csv(loaded, *result.reliability));
      files.emplace_back(out_dir + "/gpu_failures.csv",
                         tools::gpu_failures_csv(*result.reliability, loaded.node.spec.gpus));
    }
  }
  if (!trace_file.empty()) files.emplace_back(trace_file, config::json_text(tools::trace_json(loaded, result)) + "\n");
  // The plots first, in a staging folder inside --out from copies of the outputs: if they
  // fail, nothing is written and what the folder held is untouched (results.json, an
  // earlier run's plots); if they succeed, they move in beside the outputs.
  // What `plot.py run` writes, beside the outputs it draws from.
  constexpr std::array<const char*, 4> kPlotFiles{"breakdown.csv", "breakdown.png", "timeline.png", "gpu_health.png"};
  std::vector<std::string> plotted;
  const std::filesystem::path staging = python ? plot_staging(out_dir) : std::filesystem::path();
  if (python) {
    // Each plot beside the data it draws: breakdown.csv is written by the script.
    if (!result.jobs.empty()) plotted.emplace_back("breakdown.png");
    if (result.reliability) {
      plotted.emplace_back("timeline.png");
      plotted.emplace_back("gpu_health.png");
    }
    if (!plotted.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(staging, ec);
      std::vector<std::pair<std::string, std::string>> copies;
      for (const auto& [path, text] : files) {
        if (path == trace_file) continue;
        copies.emplace_back((staging / std::filesystem::path(path).filename()).string(), text);
      }
      std::string err = tools::write_files_atomically(copies);
      // What this run moves in: its plots, and breakdown.csv beside breakdown.png.
      std::vector<std::string> moving = plotted;
      if (!result.jobs.empty()) moving.emplace_back("breakdown.csv");
      if (err.empty()) err = plot_destination_blocked(out_dir, moving);
      const bool drawn = err.empty() && plot(*python, {"run", staging.string()});
      if (!drawn) {
        if (!err.empty()) std::cerr << "error: " << err << "\n";
        std::filesystem::remove_all(staging, ec);
        std::cerr << "nothing was written.\n";
        return kExitInput;
      }
    }
  }
  if (const std::string err = tools::write_files_atomically(files); !err.empty()) {
    std::error_code ec;
    if (!staging.empty()) std::filesystem::remove_all(staging, ec);
    std::cerr << "error: " << err << "\n";
    return kExitInput;
  }
  if (!plotted.empty()) {
    // Checked before anything was written (plot_destination_blocked): a failure here is the
    // file system's own (the disk full, the folder's rights changed meanwhile).
    if (const std::string err = move_plots_in(staging, out_dir, {kPlotFiles.begin(), kPlotFiles.end()}); !err.empty()) {
      std::cerr << "error: " << err << "\n";
      return kExitInput;
    }
  }
  if (!out_dir.empty()) {
    // An earlier run's outputs that this one does not write (its failures.csv beside a run
    // without failures, its plots beside new results) would be read as this run's.
    std::vector<std::string> produced = plotted;
    if (std::find(plotted.begin(), plotted.end(), "breakdown.png") != plotted.end()) produced.emplace_back("breakdown.csv");
    for (const auto& [path, text] : files) {
      if (path != trace_file) produced.push_back(std::filesystem::path(path).filename().string());
    }
    std::vector<std::string> removed;
    std::vector<const char*> ours{"failures.csv", "gpu_failures.csv"};
    ours.insert(ours.end(), kPlotFiles.begin(), kPlotFiles.end());
    for (const char* name : ours) {
      if (std::find(produced.begin(), produced.end(), name) != produced.end()) continue;
      // Only a file: a folder of that name is not an output of ours.
      std::error_code ec;
      const std::filesystem::path stale = std::filesystem::path(out_dir) / name;
      if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(stale, ec))) continue;
      if (std::filesystem::remove(stale, ec)) removed.emplace_back(name);
    }
    if (!removed.empty()) {
      std::cerr << fmt::format("note: removed {} from {}: an earlier run's, which this run does not write\n",
                               fmt::join(removed, ", "), out_dir);
    }
  }
  if (!out_dir.empty() && result.reliability && result.reliability->timeline_dropped > 0) {
    std::cerr << fmt::format("note: failures.csv holds the first {} events of replication 0; {} later ones were "
                             "not kept\n",
                             reliability::kMaxTimeline, result.reliability->timeline_dropped);
  }
  if (format == "json") {
    std::cout << config::json_text(doc, 2) << "\n";
  } else if (format == "csv") {
    std::cout << tools::result_csv(loaded, result);
  } else {
    std::cout << tools::result_table(loaded, result);
    if (!out_dir.empty()) {
      std::cout << fmt::format("results written to {}/results.json{}\n", folder(out_dir),
                               result.reliability ? " (and failures.csv, gpu_failures.csv)" : "");
    }
    if (!trace_file.empty()) std::cout << fmt::format("trace written to {} (open in https://ui.perfetto.dev)\n", trace_file);
    if (const std::int64_t points = tools::sweep_block_points(loaded.config); points > 0) {
      std::cout << fmt::format("this scenario's sweep block has {} points: `clustersim sweep {}` runs them, `clustersim "
                               "compare {}` puts them side by side (this run is the scenario as written)\n",
                               points, loaded.file, loaded.file);
    }
    if (python && plotted.empty()) std::cout << "--plot: nothing to plot (no workload jobs, no failures)\n";
    if (!plotted.empty()) {
      // plot.py writes the breakdown's figures beside its PNG.
      const bool breakdown = std::find(plotted.begin(), plotted.end(), "breakdown.png") != plotted.end();
      std::cout << fmt::format("plots written to {}/: {}{}\n", folder(out_dir), fmt::join(plotted, ", "),
                               breakdown ? " (the breakdown's data: breakdown.csv)" : "");
    }
  }
  folders.keep();
  return 0;
}

/// --fail-above's percentage; an error message when it is not one. NaN or a negative number
/// would turn the gate off without a word.
std::optional<std::string> parse_fail_above(const std::string& text, double& percent) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return fmt::format("--fail-above: expected a number of percent, without '%', got '{}'", text);
  }
  if (!(std::isfinite(x) && x >= 0.0)) return std::string("--fail-above: must be a percentage, 0 or more");
  percent = x == 0.0 ? 0.0 : x;  // -0 is 0 ("exceeds -0%")
  return std::nullopt;
}

int cmd_validate(const std::string& cases_file, const std::string& format, const std::string& fail_above_text,
                 const std::string& plot_dir) {
  double fail_above = -1.0;
  if (!fail_above_text.empty()) {
    if (auto error = parse_fail_above(fail_above_text, fail_above)) {
      // The cases file's errors are said with it, in one count, rather than after its fix
      // (those of a gate too: a file without throughput cases, which --fail-above asks for).
      const std::vector<std::string> errors{*error + "; see clustersim validate --help"};
      try {
        (void)tools::load_validation(cases_file, true);
      } catch (const config::InputError& e) {
        return report_option_errors(errors, &e);
      }
      return report_option_errors(errors);
    }
  }
  std::optional<std::string> python;
  if (!plot_dir.empty() && !(python = plot_python("--plot"))) return kExitInput;
  if (plot_folder_is_file(plot_dir)) return kExitInput;  // said before the cases run
  // Every case's scenario is loaded and checked once, before any case runs.
  const tools::LoadedValidation loaded = tools::load_validation(cases_file, fail_above >= 0.0);
  const std::vector<tools::CollectiveResult> collectives = tools::run_collective_validation(loaded);
  const std::vector<tools::CaseResult> results = tools::run_validation(loaded);
  const std::string json = config::json_text(tools::validation_json(results, collectives), 2) + "\n";
  NewFolders folders;
  if (python) {
    const auto plot_args = [&](const std::filesystem::path& staging) {
      std::vector<std::string> a{"validation", (staging / "validation.json").string(), "--cases", cases_file};
      if (fail_above >= 0.0) a.insert(a.end(), {"--fail-above", fmt::format("{}", fail_above)});
      a.insert(a.end(), {"-o", (staging / "validation.png").string()});
      return a;
    };
    if (!draw_plots(*python, plot_dir, {{"validation.json", json}}, {"validation.png"}, plot_args, folders)) {
      return kExitInput;
    }
    folders.keep();
  }
  if (format == "json") {
    std::cout << json;
    if (python) std::cerr << fmt::format("plot written to {}/: validation.png (data: validation.json)\n", folder(plot_dir));
  } else {
    std::cout << tools::validation_table(results, collectives, cases_file, fail_above);
    if (python) {
      std::cout << fmt::format("plot written to {}/: validation.png (data: validation.json)\n", folder(plot_dir));
    }
  }
  const double median = 100.0 * tools::median_abs_error(results);
  if (fail_above >= 0.0 && median > fail_above) {
    // Enough digits that the two numbers differ as they do (9.467% exceeds 9.46%).
    const int digits = tools::digits_apart(median, fail_above);
    std::cerr << (median < 1e6 ? fmt::format("validation: median absolute error {:.{}f}% exceeds {:g}%\n", median,
                                             digits, fail_above)
                               : fmt::format("validation: median absolute error {:.3g}% exceeds {:g}%\n", median,
                                             fail_above));
    return 1;
  }
  return 0;
}

int cmd_check(const ScenarioArgs& args) {
  // A scenario with a sweep block whose base does not hold by itself (a job larger than its
  // cluster, with cluster.nodes a parameter) is one sweep and compare take, point by point:
  // said as a note, with its points below, when one of them holds.
  std::optional<scenario::LoadedScenario> whole;
  std::optional<config::InputError> base_error;
  try {
    whole = load(args);
  } catch (const config::InputError& e) {
    base_error = e;
  }
  scenario::LoadOptions unresolved{args.sets, args.seed, false, false};
  unresolved.resolve = false;
  bool sweep_block = false;
  unresolved.sweep_block = &sweep_block;
  // The unresolved load checks less (no inert keys, no memory, no jobs): where it fails too,
  // the full load's errors are the ones to report (it said only its own, and the rest waited
  // for the next run), but for a scenario with a sweep block, whose points may set what its
  // base lacks (tp 2 beside sequence_parallel), judged as sweep judges it.
  const auto unresolved_load = [&] {
    try {
      return args.file.empty() ? scenario::load_default_scenario(unresolved) : scenario::load_scenario(args.file, unresolved);
    } catch (const config::InputError&) {
      if (sweep_block) throw;
      throw *base_error;
    }
  };
  const scenario::LoadedScenario loaded = whole ? std::move(*whole) : unresolved_load();
  if (base_error && tools::sweep_block_params(loaded.config).empty()) throw *base_error;
  if (!base_error) {
    std::cout << fmt::format("{}: OK ({} node{} of {}, {} GPUs)\n", loaded.file, loaded.config.cluster.nodes,
                             loaded.config.cluster.nodes == 1 ? "" : "s",
                             loaded.node.label(), loaded.config.cluster.nodes * loaded.node.spec.gpus);
  }
  // A sweep block's values were checked each against its key as the scenario loaded; a point
  // may still not hold together (a job larger than the point's cluster). `sweep` makes such a
  // point an error row and `compare` refuses it: said here, point by point, as notes (the
  // scenario itself is valid). Loading a point builds its fabric: a large grid is left to sweep.
  constexpr std::int64_t kMaxCheckedPoints = 64;
  tools::SweepSpec spec;
  spec.scenario = args.file;
  spec.sets = args.sets;
  spec.seed = args.seed;
  spec.params = tools::sweep_block_params(loaded.config);
  const std::int64_t points = spec.params.empty() ? 0 : spec.points();  // stops counting past sweep's limit
  if (points > kMaxCheckedPoints) {
    std::cerr << fmt::format("note: the sweep block has more than {} points, not loaded one by one here; "
                             "`clustersim sweep` reports each that does not hold as an error row\n",
                             kMaxCheckedPoints);
  } else if (points > 0) {
    std::int64_t failing = 0;
    for (std::int64_t i = 0; i < points; ++i) {
      try {
        if (args.file.empty()) {
          (void)scenario::load_default_scenario(spec.options_of(i));
        } else {
          (void)scenario::load_scenario(args.file, spec.options_of(i));
        }
      } catch (const std::exception& e) {  // as sweep's error rows: an input error or any other
        ++failing;
        std::vector<std::string> parts;
        const std::vector<std::string> values = spec.values_of(i);
        for (std::size_t k = 0; k < values.size(); ++k) parts.push_back(spec.params[k].key + "=" + values[k]);
        std::string why = e.what();
        if (const auto* input = dynamic_cast<const config::InputError*>(&e); input && !input->diagnostics().ok()) {
          const config::Diagnostic& first = input->diagnostics().items().front();
          const std::size_t more = input->diagnostics().items().size() - 1;
          why = fmt::format("{}{}{}{}", first.path.empty() ? "" : first.path + ": ", first.message,
                            first.hint.empty() ? "" : " (" + first.hint + ")",
                            more ? fmt::format("; and {} more", more) : std::string());
        }
        std::cerr << fmt::format("note: sweep point {} ({}) does not hold: {}\n", i, fmt::join(parts, " "), why);
      }
    }
    if (failing > 0) {
      std::cerr << fmt::format("note: {} of the sweep block's {} points would be error rows of `clustersim sweep`, "
                               "and `clustersim compare` refuses them\n",
                               failing, points);
    }
    if (base_error) {
      if (failing == points) throw *base_error;
      const config::Diagnostic& first = base_error->diagnostics().items().front();
      std::cout << fmt::format("{}: OK as a sweep ({} of its {} points hold); `clustersim run` refuses its base, "
                               "which does not hold by itself: {}{}\n",
                               loaded.file, points - failing, points, first.path.empty() ? "" : first.path + ": ",
                               first.message);
    }
  }
  if (base_error && points > kMaxCheckedPoints) throw *base_error;  // too many to load here: the base's errors stand
  return 0;
}

/// A scenario's sweep block is run by `sweep` and `compare`; the other commands take the
/// scenario as written, and say so on stderr (stdout may be JSON or DOT), as run does.
void note_sweep_block(const std::string& file, std::int64_t points, std::string_view command) {
  if (points <= 0) return;
  std::cerr << fmt::format("note: this scenario's sweep block ({} points) is not applied by {}, which takes the "
                           "scenario as written; `clustersim sweep {}` runs the points\n",
                           points, command, file);
}

int cmd_topology(const ScenarioArgs& args, const std::string& format) {
  if (refuse_seed(args, "topology")) return kExitInput;
  const scenario::LoadedScenario loaded = load(args);
  if (!loaded.fabric) {
    std::cerr << fmt::format("{}: the scenario has no fabric section; add one, e.g.\n"
                             "  fabric: {{topology: fat_tree, radix: 64, link_latency: 700ns}}\n",
                             loaded.file);
    return kExitInput;
  }
  note_sweep_block(loaded.file, tools::sweep_block_points(loaded.config), "topology");
  if (format == "dot") {
    constexpr std::size_t kMaxDotVertices = 2000;
    const std::size_t vertices = static_cast<std::size_t>(loaded.fabric->switch_count() + loaded.fabric->nodes);
    if (vertices > kMaxDotVertices) {
      std::cerr << fmt::format("error: the fabric has {} switches and nodes; --format dot draws at most {} "
                               "(use --format json, or --set cluster.nodes=... for a smaller instance)\n",
                               vertices, kMaxDotVertices);
      return kExitInput;
    }
    std::cout << fabric::to_dot(*loaded.fabric);
    return 0;
  }
  const fabric::FabricMetrics m = fabric::measure(*loaded.fabric, loaded.pricing, loaded.config.network.sharp);
  if (format == "json") {
    config::Json j = fabric::to_json(m);
    const std::int64_t per_rack = tools::nodes_per_rack(loaded);
    j["nodes_per_rack"] = per_rack;
    j["racks"] = (m.nodes + per_rack - 1) / per_rack;  // as the table counts them
    std::cout << config::json_text(j, 2) << "\n";
  } else {
    std::cout << tools::topology_table(loaded, m);
  }
  return 0;
}

// "1KiB:8GiB" (doubling) or "1MiB,64MiB,1GiB"; bare numbers are bytes. Each size from 1 B
// to 1 PiB (tools/clustersim/collective.hpp).
bool parse_sizes(const std::string& text, std::vector<sim::Bytes>& out, std::string& why) {
  const sim::Bytes max = sim::Bytes::of(tools::kMaxCollectiveBytes);
  // Each size is said as written ("2PiB"; its bytes in decimal units read 2.251799813685248PB).
  const auto in_range = [&](sim::Bytes b, std::string_view given) {
    if (b.value() >= tools::kMinCollectiveBytes && b <= max) return true;
    why = fmt::format("'{}': each size must be from 1B to 1PiB, got {}", text, given);
    return false;
  };
  // A size that does not parse: which one, in a list; one past what any quantity may be
  // (1e30) is past --sizes' own bound too, said as such.
  const auto unparsed = [&](const sim::Parsed<sim::Bytes>& p, std::string_view given) {
    if (p.beyond || (!given.empty() && given.front() == '-')) {  // -5 is below 1 B, not only below 0
      why = fmt::format("'{}': each size must be from 1B to 1PiB, got {}", text, given);
    } else if (given.empty()) {
      why = fmt::format("'{}': a size is missing (nothing before or after a comma or a colon); expected a size such "
                        "as 80GiB or 1.5TB",
                        text);
    } else {
      why = std::string_view(text) == given ? p.error : fmt::format("'{}': {}", text, p.error);
    }
  };
  const auto whole = [&](sim::Bytes b) {  // 1.5 was said as "2 B" (printed to the byte)
    if (b.value() == std::floor(b.value())) return true;
    why = fmt::format("'{}': a size is a whole number of bytes, got {:g} B", text, b.value());
    return false;
  };
  const auto colon = text.find(':');
  if (colon != std::string::npos && text.find(',') != std::string::npos) {
    why = fmt::format("'{}': give either a range a:b[:step] or a comma list of sizes, not both", text);
    return false;
  }
  if (colon != std::string::npos) {
    // a:b doubles; a:b:xF multiplies by F, a:b:+S adds S (nccl-tests' -f and -i).
    const auto second = text.find(':', colon + 1);
    const std::string step = second == std::string::npos ? "x2" : text.substr(second + 1);
    const std::string lo_text = text.substr(0, colon);
    const std::string hi_text =
        text.substr(colon + 1, second == std::string::npos ? std::string::npos : second - colon - 1);
    const auto lo = sim::parse_byte_count(lo_text);
    const auto hi = sim::parse_byte_count(hi_text);
    if (!lo || !hi) {
      if (!lo) unparsed(lo, lo_text);
      else unparsed(hi, hi_text);
      return false;
    }
    if (!in_range(*lo.value, lo_text) || !in_range(*hi.value, hi_text) || !whole(*lo.value) || !whole(*hi.value)) {
      return false;
    }
    if (*hi.value < *lo.value) {
      why = fmt::format("'{}': expected a range a:b with a <= b (did you mean '{}:{}{}'?)", text, hi_text, lo_text,
                        second == std::string::npos ? std::string() : ":" + step);
      return false;
    }
    double factor = 0.0;
    std::optional<sim::Bytes> increment;
    if (step.size() > 1 && step[0] == 'x') {
      const auto f = sim::parse_count(step.substr(1));
      if (!f || !(f.value->value() > 1.0) || f.value->value() != std::floor(f.value->value())) {
        why = fmt::format("'{}': a step xF multiplies by a whole F of at least 2, got '{}'", text, step);
        return false;
      }
      factor = f.value->value();
    } else if (step.size() > 1 && step[0] == '+') {
      const auto by = sim::parse_byte_count(step.substr(1));
      if (!by || !(by.value->value() >= 1.0) || !whole(*by.value)) {
        why = fmt::format("'{}': a step +S adds a whole size of at least 1 B, got '{}'", text, step);
        return false;
      }
      increment = *by.value;
    } else {
      why = fmt::format("'{}': expected a step xF (multiply, as x2) or +S (add, as +1MiB) after the range, got '{}'",
                        text, step);
      return false;
    }
    constexpr std::size_t kMaxSizes = 10'000;
    for (double s = lo.value->value(); s <= hi.value->value();
         s = increment ? s + increment->value() : s * factor) {
      if (out.size() == kMaxSizes) {
        why = fmt::format("'{}': more than {} sizes; take a larger step", text, kMaxSizes);
        return false;
      }
      out.push_back(sim::Bytes::of(s));
    }
    return true;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const auto p = sim::parse_byte_count(item);
    if (!p) {
      unparsed(p, item);
      return false;
    }
    if (!in_range(*p.value, item) || !whole(*p.value)) return false;
    out.push_back(*p.value);
    start = comma + 1;
  }
  return true;
}

struct CollectiveArgs {
  std::string op = "all_reduce";
  std::optional<std::int64_t> gpus;  // unset: all
  // Unset: 1KiB:1GiB, from which the sizes under one float of the op are left out without a
  // note (a default the command then refused in part read as the user's mistake).
  std::optional<std::string> sizes;
  std::string algo = "auto";
  std::string model;
  std::string format = "table";
  std::string plot_dir;  // --plot: collective.png and its collective.csv there
};

int cmd_collective(const ScenarioArgs& args, const CollectiveArgs& c) {
  if (refuse_seed(args, "collective")) return kExitInput;
  std::optional<std::string> python;
  if (!c.plot_dir.empty() && !(python = plot_python("--plot"))) return kExitInput;
  if (plot_folder_is_file(c.plot_dir)) return kExitInput;
  const scenario::LoadedScenario loaded = load(args);
  if (!loaded.fabric) {
    // The fabric holds the nodes' NVLink (or mesh) links too: one node needs one as well.
    std::cerr << fmt::format(
        "{}: the scenario has no fabric section; collectives need one ({}add e.g. fabric: {{topology: rail_clos, "
        "radix: 64, link_latency: 700ns}})\n",
        loaded.file,
        loaded.config.cluster.nodes == 1 ? "it holds the node's NVLink too, and on one node no traffic leaves it: "
                                         : "");
    return kExitInput;
  }
  note_sweep_block(loaded.file, tools::sweep_block_points(loaded.config), "collective");
  const fabric::Fabric& fab = *loaded.fabric;
  network::NetworkConfig cfg = loaded.config.network;
  if (!c.model.empty()) cfg.model = c.model == "flow" ? network::Model::flow : network::Model::analytical;
  const std::int64_t n = c.gpus.value_or(fab.gpus());
  if (n < 2 || n > fab.gpus()) {
    std::cerr << fmt::format("error: --gpus {}: the cluster has {} GPUs; choose 2 to {}\n", n, fab.gpus(), fab.gpus());
    return kExitInput;
  }
  std::vector<sim::Bytes> sizes;
  std::string why;
  if (!parse_sizes(c.sizes.value_or("1KiB:1GiB"), sizes, why)) {
    std::cerr << fmt::format("error: --sizes: {}\n", why);
    return kExitInput;
  }
  network::Op op = network::Op::all_reduce;
  for (const auto& [value, name] : enum_names(network::Op{})) {
    if (name == c.op) op = value;
  }
  network::Algorithm algo = network::Algorithm::automatic;
  for (const auto& [value, name] : enum_names(network::Algorithm{})) {
    if (name == c.algo) algo = value;
  }
  // Whole floats, as nccl-tests times them (common.cu, getCollByteCount: count = size / 4,
  // split among the ranks for all-gather, reduce-scatter and all-to-all): a size rounds down
  // to a multiple of 4 B, of 4 B per rank for those. Before, 6 B was timed as 1.5 floats
  // and 1 B as none. (Recent nccl-tests also align the per-rank count to 16 B.)
  const double unit = tools::float_unit(op, n);
  const bool per_rank = unit > 4.0;  // n >= 2 ranks here
  std::vector<sim::Bytes> whole_sizes;
  std::vector<std::string> changed, dropped, repeated;
  std::vector<double> rounded_onto;  // whole sizes some given size was rounded down to
  for (const sim::Bytes& size : sizes) {
    const double whole = std::floor(size.value() / unit) * unit;
    if (whole < unit) {
      dropped.push_back(fmt::format("{:.0f}", size.value()));
      continue;
    }
    if (whole != size.value()) {
      changed.push_back(fmt::format("{:.0f} -> {:.0f}", size.value(), whole));
      rounded_onto.push_back(whole);
    }
    // A size given twice, or rounding onto one already timed, is timed once (and said so: the
    // table had one row fewer than the list, silently).
    if (std::none_of(whole_sizes.begin(), whole_sizes.end(), [&](sim::Bytes b) { return b.value() == whole; })) {
      whole_sizes.push_back(sim::Bytes::of(whole));
    } else {
      const bool rounded = std::find(rounded_onto.begin(), rounded_onto.end(), whole) != rounded_onto.end();
      const std::string text = fmt::format("{:.0f} B{}", whole, rounded ? " (after rounding)" : "");
      if (std::find(repeated.begin(), repeated.end(), text) == repeated.end()) repeated.push_back(text);
    }
  }
  const std::string floats = per_rank ? fmt::format("4 B per rank, {:.0f} B on {} GPUs", unit, n) : "4 B";
  if (whole_sizes.empty()) {
    std::cerr << fmt::format("error: --sizes: every size is under one float ({}) for {}; give sizes of at least "
                             "{:.0f} B\n",
                             floats, c.op, unit);
    return kExitInput;
  }
  if (!dropped.empty() && c.sizes) {
    std::cerr << fmt::format("note: --sizes: {} B under one float ({}) not timed\n", fmt::join(dropped, ", "), floats);
  }
  if (!changed.empty()) {
    std::cerr << fmt::format("note: --sizes: rounded down to whole floats ({}): {} B\n", floats,
                             fmt::join(changed, ", "));
  }
  if (!repeated.empty()) {
    std::cerr << fmt::format("note: --sizes: given more than once, timed once: {}\n", fmt::join(repeated, ", "));
  }
  sizes = std::move(whole_sizes);
  // nccl-tests allocates each rank's send and receive buffers (out of place): sizes whose
  // buffers pass the GPU's HBM cannot run there. Timed all the same, and said.
  {
    const double hbm = loaded.node.gpu.hbm_capacity.value();
    std::vector<std::string> past;
    for (const sim::Bytes& size : sizes) {
      if (tools::buffer_bytes_per_rank(op, n, size.value()) > hbm) past.push_back(fmt::format("{:.0f}", size.value()));
    }
    if (!past.empty()) {
      std::cerr << fmt::format("note: --sizes: {} B: one rank's send and receive buffers pass the {}'s {:.4g} GB of "
                               "HBM (nccl-tests could not allocate them); timed all the same\n",
                               fmt::join(past, ", "), loaded.node.gpu_name, hbm / 1e9);
    }
  }
  const std::vector<std::int64_t> ranks = tools::first_ranks(n);

  config::Json rows = config::Json::array();
  const char* model_name = cfg.model == network::Model::flow ? "flow" : "analytical";
  std::string table = fmt::format(
      "# clustersim collective: {} on {} GPUs ({} node{} of {}), {} model, scenario {}\n"
      "# calibration: {}\n",
      c.op, n, (n + fab.gpus_per_node - 1) / fab.gpus_per_node, n > fab.gpus_per_node ? "s" : "", loaded.node.label(), model_name, loaded.file,
      tools::calibration_summary(loaded));
  // The table's cells, laid out once every size is timed: a column widens for its widest
  // cell (a PiB's size, or a time of hours in microseconds, overflowed nccl-tests' widths).
  std::vector<std::array<std::string, 7>> cells;
  std::string csv = "op,algo,model,gpus,size_bytes,time_s,algbw_GBps,busbw_GBps,count,type\n";
  network::LinkLoad last_load;
  sim::Time last_time;
  std::vector<std::string> notes;  // said once each, after the sizes are timed
  tools::TerminalProgress shown(fmt::format("collective ({} sizes)", sizes.size()));
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    shown(static_cast<double>(k) / static_cast<double>(sizes.size()));
    const sim::Bytes size = sizes[k];
    tools::CollectiveTiming timing;
    bool timed = false;
    try {
      timed = tools::time_collective(fab, cfg, op, ranks, size, algo, timing, why);
    } catch (const sim::LimitError& e) {
      shown.erase();
      // The flow model's flow count, or either model's routed paths (queue pairs).
      const bool paths = dynamic_cast<const network::PathLimitError*>(&e) != nullptr;
      std::cerr << fmt::format("error: --model {}: {} of {:.0f} B on {} GPUs: {}{}\n", model_name, c.op, size.value(),
                               n, e.what(), paths ? "" : " (use --model analytical)");
      return kExitInput;
    } catch (const sim::TimeRangeError& e) {  // said with the size it happened at
      shown.erase();
      throw sim::TimeRangeError(fmt::format("{} of {:.0f} B on {} GPUs: {}", c.op, size.value(), n, e.what()));
    }
    if (!timed) {
      shown.erase();
      // An all-to-all's transfers grow as n^2: past the planning limits the way on is fewer
      // ranks: 4,096 plan both algorithms; under the flow model, whose flows are fewer still,
      // the largest power of two whose direct all-to-all it runs.
      std::string fewer;
      if (op == network::Op::all_to_all && n > 4096) {
        std::int64_t flow_ranks = 2;
        while (static_cast<std::size_t>(2 * flow_ranks) * static_cast<std::size_t>(2 * flow_ranks - 1) <=
               network::kMaxFlowTransfers) {
          flow_ranks *= 2;
        }
        fewer = cfg.model == network::Model::flow
                    ? fmt::format(" (time it on fewer GPUs: --gpus {} runs both algorithms under the flow model; "
                                  "--model analytical plans them on up to 4096)",
                                  flow_ranks)
                    : std::string(" (time it on fewer GPUs: --gpus 4096 plans both algorithms)");
      }
      std::cerr << fmt::format("error: --algo {}: {}{}\n", c.algo, why, fewer);
      return kExitInput;
    }
    if (!timing.note.empty() && std::find(notes.begin(), notes.end(), timing.note) == notes.end()) {
      notes.push_back(timing.note);
    }
    last_load = std::move(timing.load);
    last_time = timing.time;
    const sim::Time t = timing.time;
    const double algbw = timing.algbw_GBps;
    const double busbw = timing.busbw_GBps;
    const std::string_view algo_name = config::enum_name(timing.algorithm);
    // count: elements per rank's buffer, as nccl-tests prints it (the send count of all-gather
    // and all-to-all, the receive count of reduce-scatter: size / 4 / n for those).
    const auto count = static_cast<std::int64_t>(size.value() / unit);
    // Under a nanosecond (no latency, no call overhead, a few bytes) the time reads 0 and no
    // bandwidth is defined: null in JSON, empty in CSV, '-' in the table (it printed inf).
    const bool instant = t.ns() == 0;
    const auto json_rate = [&](double r) { return instant ? config::Json(nullptr) : config::Json(r); };
    const auto cell_rate = [&](double r) { return instant ? std::string("-") : fmt::format("{:.2f}", r); };
    const auto csv_rate = [&](double r) { return instant ? std::string() : fmt::format("{}", r); };
    rows.push_back({{"op", c.op}, {"algo", algo_name}, {"model", model_name}, {"gpus", n},
                    {"size_bytes", static_cast<std::int64_t>(size.value())},  // whole bytes (parse_sizes), <= 1 PiB
                    {"time_s", t.seconds()}, {"algbw_GBps", json_rate(algbw)},
                    {"busbw_GBps", json_rate(busbw)}, {"count", count}, {"type", "float"}});
    cells.push_back({fmt::format("{:.0f}", size.value()), fmt::format("{}", count), "float", std::string(algo_name),
                     fmt::format("{:.2f}", t.seconds() * 1e6), cell_rate(algbw), cell_rate(busbw)});
    csv += fmt::format("{},{},{},{},{:.0f},{},{},{},{},float\n", c.op, algo_name, model_name, n, size.value(),
                       t.seconds(), csv_rate(algbw), csv_rate(busbw), count);
  }
  shown.erase();
  for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
  {
    const std::array<std::string, 7> header{"size(B)", "count", "type", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)"};
    std::array<std::size_t, 7> width{12, 12, 6, 17, 12, 12, 12};
    for (const auto& row : cells) {
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    const auto line = [&](std::string_view lead, const std::array<std::string, 7>& row) {
      std::string out(lead);
      for (std::size_t i = 0; i < row.size(); ++i) out += fmt::format("{}{:>{}}", i == 0 ? "" : " ", row[i], width[i]);
      return out + "\n";
    };
    table += line("# ", header);
    for (const auto& row : cells) table += line("  ", row);
  }
  NewFolders folders;  // a --plot folder made here goes again if the plot fails
  if (python) {
    const auto plot_args = [](const std::filesystem::path& staging) {
      return std::vector<std::string>{"collective", (staging / "collective.csv").string(), "-o",
                                      (staging / "collective.png").string()};
    };
    if (!draw_plots(*python, c.plot_dir, {{"collective.csv", csv}}, {"collective.png"}, plot_args, folders)) {
      return kExitInput;
    }
    folders.keep();
  }
  if (c.format == "json") {
    std::cout << config::json_text(rows, 2) << "\n";
  } else if (c.format == "csv") {
    std::cout << csv;
  } else {
    table += fmt::format("# busiest links at {} (utilisation of line rate x efficiency over the collective):\n",
                         fmt::format("{:.0f} B", sizes.back().value()));  // as the size column
    if (last_time.ns() == 0) {
      table += "#   none: the collective took under a nanosecond (no latency and no call overhead)\n";
    } else {
      for (const auto& [link, u] : network::hottest_links(fab, cfg, last_load, last_time, 5)) {
        table += fmt::format("#   {:>5.1f}%  {}\n", u * 100, fabric::describe_link(fab, link));
      }
      // Times are whole nanoseconds, each step's rounded: over a few of them a share can pass 100%.
      if (last_time.ns() < 1000) table += "#   (times are whole nanoseconds: under a microsecond, utilisations are off by the rounding of each step)\n";
    }
    if (python) table += fmt::format("plot written to {}/: collective.png (data: collective.csv)\n", folder(c.plot_dir));
    std::cout << table;
  }
  if (python && c.format != "table") {
    std::cerr << fmt::format("plot written to {}/: collective.png (data: collective.csv)\n", folder(c.plot_dir));
  }
  return 0;
}

int cmd_describe(const std::string& section, const std::string& format) {
  std::vector<config::FieldDoc> docs;
  if (format == "markdown") {
    if (!section.empty()) {
      std::cerr << fmt::format("error: describe {} --format markdown: the markdown reference is the whole one "
                               "(scenarios/REFERENCE.md); drop '{}', or print one section as text\n",
                               section, section);
      return kExitInput;
    }
    std::vector<config::FieldDoc> catalog;
    scenario::describe("", docs);
    scenario::describe("catalog", catalog);
    std::cout << tools::reference_markdown(docs, catalog);
    return 0;
  }
  if (!scenario::describe(section, docs)) {
    std::vector<config::FieldDoc> top;
    scenario::describe("", top);
    std::vector<std::string_view> names{"catalog"};
    for (const auto& d : top) {
      if (d.path.find('.') == std::string::npos) names.push_back(d.path);
    }
    const auto near = sim::closest_match(section, names);
    // A key's name rather than a section's ('jobs', 'gpu'): the keys of that name, which
    // describe takes as sections too (it listed the sections, suggesting none).
    std::vector<std::string> keys;
    if (!near) {
      std::vector<config::FieldDoc> catalog;
      scenario::describe("catalog", catalog);
      const auto singular = [](std::string_view w) { return w.size() > 1 && w.back() == 's' ? w.substr(0, w.size() - 1) : w; };
      for (const auto* list : {&top, &catalog}) {
        for (const config::FieldDoc& d : *list) {
          const std::size_t dot = d.path.rfind('.');
          std::string_view last = std::string_view(d.path).substr(dot == std::string::npos ? 0 : dot + 1);
          if (last.ends_with("[]")) last.remove_suffix(2);
          if (singular(last) != singular(section) || keys.size() >= 3) continue;
          const std::string path = list == &catalog ? std::string("catalog") : d.path;  // its keys, one section
          if (std::find(keys.begin(), keys.end(), path) == keys.end()) keys.push_back(path);
        }
      }
    }
    std::string hint;
    if (near) {
      hint = fmt::format(" (did you mean '{}'?)", *near);
    } else if (!keys.empty()) {
      std::vector<std::string> commands;
      for (const std::string& k : keys) {
        // Quoted where a shell would read <name> as a redirection or [] as a pattern.
        commands.push_back("clustersim describe " +
                           (k.find_first_of("<>[]") == std::string::npos ? k : "'" + k + "'"));
      }
      hint = fmt::format(" ({} of that name: {})", keys.size() == 1 ? "a key" : "keys", fmt::join(commands, ", "));
    }
    std::cerr << fmt::format("error: no section '{}'; sections are {}{}\n", section, fmt::join(names, ", "), hint);
    return kExitInput;
  }
  std::cout << tools::reference_text(docs);
  return 0;
}

struct SweepArgs {
  std::vector<std::string> params;
  std::optional<std::int64_t> replications;
  int jobs = 0;
  std::string out_dir = "sweep-out";
  bool quiet = false;
  bool plot = false;  // --plot: DIR/sweep.png from DIR/sweep.csv
};

int cmd_sweep(const ScenarioArgs& args, const SweepArgs& s) {
  tools::SweepSpec spec;
  spec.scenario = args.file;
  spec.sets = args.sets;
  spec.seed = args.seed;
  spec.replications = s.replications;
  // The scenario's sweep block, then the --params. The grid's base is judged at its points
  // (prepare() says whether it holds by itself).
  scenario::LoadOptions o{spec.sets, spec.seed, false, false};
  o.resolve = false;
  scenario::Scenario base;
  std::optional<config::InputError> base_error;  // said with the --params' own errors
  try {
    base = (args.file.empty() ? scenario::load_default_scenario(o) : scenario::load_scenario(args.file, o)).config;
  } catch (const config::InputError& e) {
    base_error = e;
  }
  spec.params = tools::sweep_block_params(base);
  const bool base_fails = base.failures.has_value();
  std::vector<std::string> bad_params;
  std::vector<std::string> keys;  // of every --param, in order
  for (const std::string& text : s.params) {
    tools::SweepParam p;
    std::string why;
    const bool ok = tools::parse_sweep_param(text, p, why);
    keys.push_back(p.key);  // empty when the text has none
    if (!ok) {
      bad_params.push_back("--param " + why);
      continue;
    }
    // A value given twice would run its points twice (plan's --nodes merges them; a sweep's
    // point numbers follow the list as given, so it is refused).
    // Numbers are compared as numbers: 8 and 08, or 1e3 and 1000, are one point.
    const auto number = [](std::string_view t, double& x) {
      if (t.starts_with('+')) t.remove_prefix(1);  // +16 is 16 to the decoder
      const auto r = std::from_chars(t.data(), t.data() + t.size(), x);
      return !t.empty() && r.ec == std::errc{} && r.ptr == t.data() + t.size();
    };
    const auto same = [&](const std::string& a, const std::string& b) {
      double x = 0.0;
      double y = 0.0;
      return a == b || (number(a, x) && number(b, y) && x == y);
    };
    for (auto v = p.values.begin(); v != p.values.end(); ++v) {
      if (const auto first = std::find_if(p.values.begin(), v, [&](const std::string& w) { return same(w, *v); });
          first != v) {
        bad_params.push_back(*first == *v
                                 ? fmt::format("--param '{}': {} is given twice (its points would run twice)", text, *v)
                                 : fmt::format("--param '{}': {} is {} again (its points would run twice)", text, *v,
                                               *first));
        break;
      }
    }
    spec.params.push_back(std::move(p));
  }
  if (base_error) return report_option_errors(bad_params, &*base_error);
  if (!bad_params.empty()) {
    // With them, every --param key the scenario lacks (said only once the values were fixed,
    // by run_sweep): any value finds the key, and only that error is kept.
    for (const std::string& key : keys) {
      if (key.empty()) continue;
      scenario::Scenario copy = base;
      copy.sweep.reset();
      config::LoadState trial;
      config::apply_set(copy, key + "=0", trial);
      for (const config::Diagnostic& d : trial.diagnostics.items()) {
        if (d.message.find("unknown key") == std::string::npos) continue;
        bad_params.push_back(fmt::format("--param {}: {}{}{}", key, d.path.empty() ? "" : d.path + ": ", d.message,
                                         d.hint.empty() ? "" : " (" + d.hint + ")"));
      }
    }
    return report_option_errors(bad_params);
  }
  const auto grid_fails = [&] {
    return std::any_of(spec.params.begin(), spec.params.end(),
                       [](const tools::SweepParam& p) { return p.key.rfind("failures", 0) == 0; });
  };
  if (s.replications && !base_fails && !grid_fails()) {
    std::cerr << "error: --replications: neither the scenario nor the grid has failures: every replication would "
                 "give the same figures (add a failures section, or drop --replications)\n";
    return kExitInput;
  }
  if (spec.params.empty()) {
    // Allowed (a sweep of one point writes the same CSV and JSONL as a grid's), but said.
    std::cerr << "note: no --param and no sweep block in the scenario: one point, the scenario as written (add "
                 "--param KEY=v1,v2,... to vary a key)\n";
  }
  // --plot: the interpreter is found before the points run (not after an hour of them).
  std::optional<std::string> python;
  if (s.plot && !(python = plot_python("--plot"))) return kExitInput;
  tools::SweepOptions options;
  options.jobs = s.jobs;
  options.out_dir = s.out_dir;
  options.progress = !s.quiet;
  const tools::SweepSummary sum = tools::run_sweep(spec, options, std::cerr);
  if (sum.aborted) return kExitInput;
  if (sum.writer) {
    std::cout << fmt::format("sweep: {} point{} ({} resumed, {} run{}), {} error row{}, wall time {:.2f} s with {} thread{}{}\n"
                             "results in {}/sweep.csv and {}/sweep.jsonl\n",
                             sum.points, sum.points == 1 ? "" : "s", sum.resumed, sum.run, sum.run ? "" : ": nothing left to do", sum.errors,
                             sum.errors == 1 ? "" : "s", sum.wall_s, sum.threads, sum.threads == 1 ? "" : "s",
                             sum.ranks > 1 ? fmt::format(" on each of {} MPI ranks", sum.ranks) : std::string(),
                             folder(s.out_dir), folder(s.out_dir));
  }
  // The plot of the results written (sweep.csv, every point of the grid, resumed ones too),
  // after the summary: a plot that fails leaves the results as they are, and says so.
  if (python && sum.writer && sum.errors < sum.points) {
    NewFolders none;  // the folder is the sweep's, made by it
    const std::filesystem::path dir = s.out_dir;
    const auto plot_args = [&](const std::filesystem::path& staging) {
      return std::vector<std::string>{"sweep", (dir / "sweep.csv").string(), "-o", (staging / "sweep.png").string()};
    };
    if (!draw_plots(*python, dir, {}, {"sweep.png"}, plot_args, none,
                    fmt::format("no sweep.png was written; the sweep's results in {}/sweep.csv and sweep.jsonl stand.",
                                folder(s.out_dir)))) {
      return kExitInput;
    }
    std::cout << fmt::format("plot written to {}/sweep.png\n", folder(s.out_dir));
  }
  // A grid of nothing but error rows gave no figure: a script that goes on to read the
  // results must not take it for a success. Some error rows among results are a study's
  // answer (what does not fit), and exit 0.
  if (sum.points > 0 && sum.errors == sum.points) {
    if (sum.writer)
      std::cerr << fmt::format("error: every point of the sweep is an error row (the error column of {}/sweep.csv says "
                               "why); no figure was computed\n",
                               folder(s.out_dir));
    return 1;
  }
  return 0;
}

int cmd_compare(const tools::CompareArgs& args, const std::string& plot_dir) {
  std::optional<std::string> python;
  if (!plot_dir.empty() && !(python = plot_python("--plot"))) return kExitInput;
  if (plot_folder_is_file(plot_dir)) return kExitInput;  // said before the scenarios run
  const tools::Comparison c = tools::compare(args);
  // The plots first, drawn in a staging folder inside the --plot folder and moved in when
  // they all succeed: a folder that cannot be written, or a plot that fails, leaves the
  // --plot folder as it was, before any output.
  std::string breakdown;
  std::vector<std::string> plotted;
  NewFolders folders;  // a --plot folder made here goes again if the plots fail
  if (python) {
    breakdown = tools::compare_breakdown_csv(c);
    const bool any_job = breakdown.find('\n') + 1 < breakdown.size();
    plotted = {"compare.csv", "compare.png"};
    if (any_job) plotted.insert(plotted.end(), {"breakdown.csv", "breakdown.png"});
    std::vector<std::pair<std::string, std::string>> data{{"compare.csv", tools::compare_csv(c)}};
    if (any_job) data.emplace_back("breakdown.csv", breakdown);
    std::vector<std::string> drawn{"compare.png"};
    if (any_job) drawn.emplace_back("breakdown.png");
    const auto plot_args = [&](const std::filesystem::path& staging) {
      std::vector<std::string> a{"compare", (staging / "compare.csv").string(), "-o", (staging / "compare.png").string()};
      if (any_job) a.insert(a.end(), {"--breakdown", (staging / "breakdown.csv").string()});
      return a;
    };
    if (!draw_plots(*python, plot_dir, data, drawn, plot_args, folders)) return kExitInput;
  }
  if (args.format == "json") {
    std::cout << config::json_text(tools::compare_json(c), 2) << "\n";
  } else if (args.format == "csv") {
    std::cout << tools::compare_csv(c);
  } else {
    std::cout << tools::compare_table(c);
  }
  folders.keep();
  const bool any_job = plotted.size() > 2;
  if (python && !any_job) {
    // No design runs a job: no step to break down. A breakdown already in the folder (an
    // earlier compare's, or a run's --plot) is not this comparison's: said, left in place.
    const std::vector<std::string> there = already_there(plot_dir, {"breakdown.csv", "breakdown.png"});
    std::cerr << fmt::format("note: --plot: no breakdown.png, no design runs a job{}\n",
                             there.empty() ? ""
                                           : fmt::format(" (the {} in {} {} not this comparison's)", fmt::join(there, " and "),
                                                         plot_dir, there.size() == 1 ? "is" : "are"));
  }
  if (python) {
    // On stderr beside JSON or CSV, which stdout holds alone.
    (args.format == "table" ? std::cout : std::cerr)
        << fmt::format("plots written to {}/: compare.png{} (data: compare.csv{})\n", folder(plot_dir),
                       any_job ? ", breakdown.png" : "", any_job ? ", breakdown.csv" : "");
  }
  return 0;
}

struct PlanOptions {
  std::string plot_dir;  // --plot
  std::string deadline;
  std::string budget;
  std::string capex_budget;
  std::string topologies;
  std::string out_dir;
  std::string format = "table";
};

int cmd_plan(const ScenarioArgs& args, tools::PlanArgs p, const PlanOptions& o) {
  p.scenario = args.file;
  p.sets = args.sets;
  p.seed = args.seed;
  std::vector<std::string> errors;  // every option in error, at once
  const sim::Parsed<sim::Time> deadline = sim::parse_time(o.deadline);
  if (!deadline || deadline.value->ns() <= 0) {
    errors.push_back(fmt::format("--deadline {}: {}", o.deadline,
                                 deadline ? std::string("must be positive (e.g. --deadline 90d)") : deadline.error));
  } else {
    p.deadline = *deadline.value;
  }
  for (const auto& [option, text, out] : {std::tuple{"--budget", &o.budget, &p.budget},
                                          std::tuple{"--capex-budget", &o.capex_budget, &p.capex_budget}}) {
    if (text->empty()) continue;
    const sim::Parsed<sim::Money> money = sim::parse_money(*text);
    if (!money) {
      errors.push_back(fmt::format("{} {}: {}", option, *text, money.error));
      continue;
    }
    // A budget of nothing holds no design (it was searched, and every point refused).
    if (money.value->value() <= 0.0) {
      errors.push_back(fmt::format("{} {}: must be positive (e.g. {} 50MUSD)", option, *text, option));
      continue;
    }
    *out = *money.value;
  }
  std::vector<std::string_view> names;
  for (const auto& entry : enum_names(fabric::Topology{})) names.push_back(entry.second);
  for (std::size_t start = 0; !o.topologies.empty() && start <= o.topologies.size();) {
    const std::size_t comma = std::min(o.topologies.find(',', start), o.topologies.size());
    const std::string t = o.topologies.substr(start, comma - start);
    start = comma + 1;
    if (std::find(names.begin(), names.end(), t) == names.end()) {
      const auto near = sim::closest_match(t, names);
      errors.push_back(fmt::format("--topologies: unknown topology '{}'; expected {}{}", t, fmt::join(names, ", "),
                                   near ? fmt::format(" (did you mean '{}'?)", *near) : std::string()));
      continue;
    }
    p.topologies.push_back(t);
  }
  if (const std::string why = tools::node_counts_problem(p.nodes); !why.empty()) errors.push_back("--nodes: " + why);
  if (!errors.empty()) {
    const std::optional<config::InputError> scenario_errors = scenario_value_errors(args);
    return report_option_errors(errors, scenario_errors ? &*scenario_errors : nullptr);
  }
  std::optional<std::string> python;
  if (!o.plot_dir.empty() && !(python = plot_python("--plot"))) return kExitInput;
  // Said before the search runs (--out's was said after it, the plot written).
  if (plot_folder_is_file(o.plot_dir) || plot_folder_is_file(o.out_dir, "--out")) return kExitInput;
  const tools::Plan plan = tools::plan(p);
  note_sweep_block(args.file, plan.sweep_points, "plan");
  // --out first: a plot drawn and kept before --out failed was left behind.
  if (!o.out_dir.empty()) {
    const std::string err = tools::write_files_atomically(
        {{o.out_dir + "/plan.csv", tools::plan_csv(plan)}, {o.out_dir + "/plan.json", config::json_text(tools::plan_json(plan), 2) + "\n"}});
    if (!err.empty()) {
      std::cerr << "error: " << err << "\n";
      return kExitInput;
    }
  }
  // --plot: the feasible points' time against cost, the plan's front and the deadline. With
  // no priced feasible point there is nothing to draw: said, not an error (the plan's answer
  // stands).
  NewFolders folders;
  bool plotted = false;
  if (python) {
    const bool any = std::any_of(plan.points.begin(), plan.points.end(),
                                 [](const tools::PlanPoint& q) { return q.feasible && q.total_cost_usd; });
    if (!any) {
      const std::vector<std::string> there = already_there(o.plot_dir, {"pareto.png", "plan.csv", "pareto_front.csv"});
      std::cerr << fmt::format("note: --plot: no feasible point with a cost, nothing to plot{}\n",
                               there.empty() ? ""
                                             : fmt::format(" (the {} in {} {} not this plan's)", fmt::join(there, ", "),
                                                           o.plot_dir, there.size() == 1 ? "is" : "are"));
    } else {
      const auto plot_args = [&](const std::filesystem::path& staging) {
        std::vector<std::string> a{"pareto", (staging / "plan.csv").string(), "--label-format",
                                   "{nodes} nodes, {topology}, tp {tp} pp {pp}", "--x-mark",
                                   fmt::format("{}", plan.deadline_s), "--x-mark-label",
                                   fmt::format("deadline ({})", sim::human(sim::Time::from_seconds(plan.deadline_s)))};
        if (plan.budget_usd) {
          a.insert(a.end(), {"--y-mark", fmt::format("{}", *plan.budget_usd), "--y-mark-label",
                             fmt::format("budget ({})", sim::human(sim::Money::of(*plan.budget_usd)))});
        }
        if (plan.capex_budget_usd) {
          a.insert(a.end(), {"--excluded", "within_capex_budget", "--excluded-label",
                             fmt::format("over the capex budget of {}: no candidate",
                                         sim::human(sim::Money::of(*plan.capex_budget_usd)))});
        }
        a.insert(a.end(), {"-o", (staging / "pareto.png").string()});
        return a;
      };
      if (!draw_plots(*python, o.plot_dir, {{"plan.csv", tools::plan_csv(plan)}}, {"pareto.png", "pareto_front.csv"},
                      plot_args, folders,
                      o.out_dir.empty() ? std::string("nothing was written.")
                                        : fmt::format("no plot was written; the points in {}/plan.csv and plan.json stand.",
                                                      folder(o.out_dir)))) {
        return kExitInput;
      }
      folders.keep();
      plotted = true;
    }
  }
  if (o.format == "json" || o.format == "csv") {
    std::cout << (o.format == "json" ? config::json_text(tools::plan_json(plan), 2) + "\n" : tools::plan_csv(plan));
    // What the table says when no point is chosen (a script read "best": null and exit 0 alone).
    if (std::string why = tools::no_plan_text(plan, !o.out_dir.empty()); !why.empty()) {
      why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
      std::cerr << "note: " << why;
    }
  } else {
    std::cout << tools::plan_table(plan, !o.out_dir.empty());
    if (!o.out_dir.empty()) std::cout << fmt::format("points written to {}/plan.csv and {}/plan.json\n", folder(o.out_dir), folder(o.out_dir));
  }
  if (plotted) {
    // On stderr beside JSON or CSV, which stdout holds alone.
    (o.format == "json" || o.format == "csv" ? std::cerr : std::cout)
        << fmt::format("plot written to {}/: pareto.png (data: plan.csv; the front: pareto_front.csv)\n",
                       folder(o.plot_dir));
  }
  // No plan meets the deadline (and the budget): the search ran, and its answer is no, which a
  // script tells from the exit status (1, as sweep's grid of errors and validate's gate), its
  // points written all the same.
  return plan.best ? 0 : 1;
}

int run_main(int argc, char** argv) {
  CLI::App app{"clustersim: a discrete-event simulator of GPU clusters"};
  app.set_version_flag("--version", fmt::format("clustersim {} (commit {})", tools::kVersion, tools::kGitCommit));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  clustersim run                                  # the built-in quickstart scenario\n"
      "  clustersim run scenarios/quickstart.yaml --set cluster.nodes=64 --format json\n"
      "  clustersim check my-study.yaml\n"
      "  clustersim describe cluster");

  ScenarioArgs run_args;
  std::string run_format = "table";
  std::string out_dir;
  std::string trace_file;
  CLI::App* run = app.add_subcommand("run", "run a scenario and report its results");
  add_scenario_options(*run, run_args, true);
  run->add_option("--format", run_format, "output on stdout")->check(CLI::IsMember({"table", "json", "csv"}));
  run->add_option("--out", out_dir, "also write results.json (atomically) into this folder, and with failures failures.csv (the timeline) and gpu_failures.csv (per GPU)")->check(check_path);
  run->add_option("--trace", trace_file, "write one training step of each job as Chrome trace-event JSON (Perfetto)")
      ->check(check_path)
      ->type_name("FILE");
  bool run_plots = false;
  run->add_flag("--plot", run_plots,
                "also draw PNGs into the --out folder: breakdown.png (step time by activity), timeline.png "
                "(failures), gpu_health.png (failures per GPU, one pixel each); needs python3-matplotlib");
  run->footer(
      "Examples:\n"
      "  clustersim run\n"
      "  clustersim run scenarios/quickstart.yaml --seed 7 --out out/\n"
      "  clustersim run scenarios/quickstart.yaml --set cluster.node=dgx-a100 --format csv\n"
      "  clustersim run scenarios/llama3-405b-16k.yaml --trace step.json\n"
      "  clustersim run scenarios/llama3-405b-54d.yaml --out out/ --plot   # + breakdown, timeline, GPU heat map");

  ScenarioArgs check_args;
  CLI::App* check = app.add_subcommand(
      "check", "validate a scenario's input without running it (what only a run computes, such as a step time past "
               "the clock's 292 years, is reported by run)");
  add_scenario_options(*check, check_args, false);
  check->footer("Example:\n  clustersim check scenarios/quickstart.yaml --set cluster.nodes=2048");

  ScenarioArgs topo_args;
  std::string topo_format = "table";
  CLI::App* topology = app.add_subcommand("topology", "build a scenario's fabric and report its size, hops, "
                                                      "bisection bandwidth, cost and power");
  add_scenario_options(*topology, topo_args, false, /*seeded=*/false);
  topology->add_option("--format", topo_format, "table, json, or dot (Graphviz, small fabrics)")
      ->check(CLI::IsMember({"table", "json", "dot"}));
  topology->footer(
      "Examples:\n"
      "  clustersim topology scenarios/quickstart.yaml\n"
      "  clustersim topology scenarios/quickstart.yaml --set fabric.topology=fat_tree --format json\n"
      "  clustersim topology scenarios/quickstart.yaml --format dot | dot -Tsvg > fabric.svg   # Graphviz's dot");

  ScenarioArgs coll_args;
  CollectiveArgs coll;
  CLI::App* collective = app.add_subcommand(
      "collective", "time a collective on the scenario's fabric over a range of sizes, like nccl-tests");
  add_scenario_options(*collective, coll_args, false, /*seeded=*/false);
  std::vector<std::string> ops;
  for (const auto& entry : enum_names(network::Op{})) ops.emplace_back(entry.second);
  std::vector<std::string> algos;
  for (const auto& entry : enum_names(network::Algorithm{})) algos.emplace_back(entry.second);
  collective->add_option("--op", coll.op, "the collective")->check(CLI::IsMember(ops));
  collective->add_option("--gpus", coll.gpus, "ranks: the first N GPUs in node order (default: all)")
      ->transform(whole_in(2, 100'000'000, "2 to the scenario's GPUs"));
  collective->add_option("--sizes", coll.sizes,
                         "a:b (doubling), a:b:xF (times F), a:b:+S (plus S) or a comma list; units optional (bytes); "
                         "default 1KiB:1GiB");
  collective->add_option("--algo", coll.algo, "algorithm, or auto (the fastest of NCCL's algorithms by the analytical model; for an all-to-all, "
                         "of direct and hierarchical, which stands in for NCCL's PXN relay)")
      ->check(CLI::IsMember(algos));
  collective->add_option("--model", coll.model, "network model (default: the scenario's network.model)")
      ->check(CLI::IsMember({"analytical", "flow"}));
  collective->add_option("--format", coll.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  collective->add_option("--plot", coll.plot_dir,
                         "write collective.png (bus bandwidth and time against size, each point marked by the "
                         "algorithm that ran) and its data, collective.csv, into this folder (needs python3-matplotlib)");
  collective->footer(
      "Examples:\n"
      "  clustersim collective scenarios/quickstart.yaml --op all_reduce --gpus 64 --sizes 1KiB:8GiB\n"
      "  clustersim collective scenarios/fat-tree-k16.yaml --op all_gather --sizes 1MiB,1GiB --model flow\n"
      "  clustersim collective scenarios/quickstart.yaml --algo hierarchical --format json\n"
      "  clustersim collective scenarios/quickstart.yaml --gpus 64 --sizes 1KiB:8GiB --plot plots/   # plots/collective.png");

  std::string cases_file = "validation/cases.yaml";
  std::string validate_format = "table";
  std::string fail_above;  // checked by cmd_validate(), with the cases file's errors
  CLI::App* validate =
      app.add_subcommand("validate", "compare simulated training throughput, failure counts and collective bus "
                                     "bandwidth with published measurements");
  validate->add_option("--cases", cases_file, "the cases file (default: validation/cases.yaml)")
      ->check(check_path)
      ->type_name("FILE");
  validate->add_option("--format", validate_format, "table or json")->check(CLI::IsMember({"table", "json"}));
  std::string validate_plot;
  validate->add_option("--plot", validate_plot,
                       "write validation.png (each case's error as a bar: training throughput against the 10% target "
                       "and --fail-above's gate, failure counts with their Poisson bands, collective bus bandwidth) and "
                       "its data, validation.json, into this folder (needs python3-matplotlib)");
  validate->add_option("--fail-above", fail_above,
                       "exit with status 1 when the training throughput cases' median absolute error exceeds this "
                       "many percent (collective cases are reported, not gated)")
      ->type_name("PERCENT");
  validate->footer(
      "Examples:\n"
      "  clustersim validate\n"
      "  clustersim validate --format json > validation.json\n"
      "  clustersim validate --fail-above 10\n"
      "  clustersim validate --plot plots/   # plots/validation.png");

  tools::CalibrateArgs calibrate_args;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "fit a calibration profile to CUDA microbenchmark results or nccl-tests logs");
  calibrate->add_option("results", calibrate_args.results, "microbenchmark results (JSON lines: the records and their keys are in tools/microbench/README.md)")
      ->check(check_path)
      ->type_name("RESULTS.jsonl");
  // One log per --nccl-tests (repeatable): taking every word after it, it read a results
  // file that followed as a log.
  calibrate->add_option("--nccl-tests", calibrate_args.nccl_tests,
                        "an nccl-tests log (all_reduce_perf and friends, as printed); repeat for more")
      ->check(check_path)
      ->allow_extra_args(false)
      ->type_name("LOG");
  calibrate->add_option("-o,--output", calibrate_args.output, "the profile to write (JSON)")
      ->required()
      ->check(check_path)
      ->type_name("PROFILE.json");
  calibrate->add_option("--gpu", calibrate_args.gpu, "catalog GPU type (default: from the results' device name)");
  calibrate->add_option("--node", calibrate_args.node,
                        "catalog node type, for the NVLink and NIC line rates (default: the one node with that GPU; "
                        "required when several have it)");
  calibrate->add_option("--source", calibrate_args.source, "the profile's source text (device, date, driver)");
  calibrate->add_option("--plot", calibrate_args.plot_dir, "write PNGs of measured vs fitted into this folder")
      ->check(check_path)
      ->type_name("DIR");
  calibrate->footer(
      "Examples:\n"
      "  clustersim calibrate results.jsonl -o h100.json\n"
      "  clustersim calibrate --nccl-tests all_reduce_perf.log --gpu h100-sxm --node dgx-h100 -o net.json --plot plots/\n"
      "  tools/microbench/device-check.sh out/    # measure, fit and report on a GPU machine");

  ScenarioArgs sweep_args;
  SweepArgs sweep_opts;
  CLI::App* sweep = app.add_subcommand("sweep", "run a scenario at every point of a parameter grid, on threads "
                                                "(or MPI ranks); resumable");
  add_scenario_options(*sweep, sweep_args, false);
  sweep->add_option("--param", sweep_opts.params,
                    "a grid axis: KEY=v1,v2,... or KEY=a:b:x2 (doubling) or KEY=a:b:+s (repeatable; the grid is "
                    "their product, the last varying fastest)")
      ->type_name("KEY=VALUES")
      ->allow_extra_args(false);
  sweep->add_option("--replications", sweep_opts.replications,
                    "set simulation.replications of every point (failure replications)")
      ->transform(whole_in(1, 1'000'000));
  sweep->add_option("--jobs,-j", sweep_opts.jobs, "worker threads (default: the hardware's; 1 per MPI rank)")
      ->transform(whole_in(1, 4096));
  sweep->add_option("--out", sweep_opts.out_dir,
                    "folder of sweep.csv and sweep.jsonl (default: sweep-out); run again to resume")
      ->check(check_path)
      ->type_name("DIR");
  sweep->add_flag("--quiet,-q", sweep_opts.quiet, "no progress on stderr");
  sweep->add_flag("--plot", sweep_opts.plot,
                  "also draw --out's sweep.png: each figure that varies against the first parameter, a line per "
                  "combination of the others (needs python3-matplotlib)");
  sweep->footer(
      "Examples:\n"
      "  clustersim sweep scenarios/quickstart.yaml --param cluster.nodes=16:128:x2 --param fabric.topology=rail_clos,fat_tree\n"
      "  clustersim sweep scenarios/llama3-405b-16k.yaml --set network.model=analytical \\\n"
      "      --param network.qps_per_connection=1,4,16 --out out/qps   # again after a kill: resumes\n"
      "  mpirun -n 4 clustersim sweep study.yaml --param cluster.nodes=1024:8192:x2 --out out/");

  tools::CompareArgs compare_args;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "run scenarios and compare their cost, power, bandwidth and training figures");
  compare_cmd->add_option("scenarios", compare_args.files, "scenario YAML files")->required()->check(check_path);
  compare_cmd->add_option("--set", compare_args.sets, "override a key in every scenario (repeatable; a key set twice takes the last value)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  compare_cmd->add_option("--seed", compare_args.seed, "override simulation.seed")->transform(CLI::Validator(check_seed, ""));
  compare_cmd->add_option("--ecmp-seeds", compare_args.ecmp_seeds,
                          "run each design whose routes are hashed (ECMP, Valiant) with this many flow-hash draws "
                          "(fabric.ecmp_seed and the next ones); show the median step's run and the spread")
      ->transform(whole_in(1, 64));
  compare_cmd->add_option("--format", compare_args.format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  std::string compare_plot_dir;
  compare_cmd->add_option("--plot", compare_plot_dir,
                          "also write compare.png (a bar chart per figure) and breakdown.png (the first job's step "
                          "time by activity, where a design runs a job), with their CSVs, into this folder; needs "
                          "python3-matplotlib")
      ->check(check_path)
      ->type_name("DIR");
  compare_cmd->footer(
      "Examples:\n"
      "  clustersim compare scenarios/fat-tree-k16.yaml scenarios/dragonfly-1k.yaml scenarios/torus-8x8x8.yaml\n"
      "  clustersim compare scenarios/llama3-405b-16k.yaml scenarios/llama3-405b-54d.yaml --format csv\n"
      "  clustersim compare A.yaml B.yaml C.yaml --plot plots/   # plots/compare.png, plots/breakdown.png");

  ScenarioArgs plan_args;
  tools::PlanArgs plan_opts;
  PlanOptions plan_more;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "search cluster size, topology and parallelism for the cheapest ways to train the scenario's first job "
              "by a deadline; prints the Pareto front of time against cost");
  add_scenario_options(*plan_cmd, plan_args, false);
  plan_cmd->add_option("--deadline", plan_more.deadline, "time to train at most this (e.g. 90d)")
      ->required()
      ->type_name("TIME");
  plan_cmd->add_option("--budget", plan_more.budget,
                       "total cost of the training run (GPU-hours at the depreciation per GPU-hour, plus its GPUs' "
                       "energy) at most this (e.g. 40MUSD)")
      ->type_name("MONEY");
  plan_cmd->add_option("--capex-budget", plan_more.capex_budget,
                       "capex of the cluster (GPUs, hosts, spares, network) at most this (e.g. 500MUSD)")
      ->type_name("MONEY");
  plan_cmd->add_option("--nodes", plan_opts.nodes,
                       "cluster sizes: a list or a range a:b:x2 (default: the scenario's x 1/4, 1/2, 1, 2, 4)")
      ->type_name("NODES")
      ->check(check_list);
  plan_cmd->add_option("--topologies", plan_more.topologies,
                       "comma list (default: the scenario's, and the other Clos for a Clos)")
      ->type_name("LIST")
      ->check(check_list);
  plan_cmd->add_option("--replications", plan_opts.replications,
                       "failure replications per point, when the scenario has failures (default: the "
                       "scenario's simulation.replications when above 1, else 5)")
      ->transform(whole_in(1, 1000));
  plan_cmd->add_option("--jobs,-j", plan_opts.jobs, "worker threads (default: the hardware's)")->transform(whole_in(1, 4096));
  plan_cmd->add_option("--ecmp-seeds", plan_opts.ecmp_seeds,
                       "run each point whose routes are hashed (ECMP, Valiant) with this many flow-hash draws "
                       "(fabric.ecmp_seed and the next ones) and keep its median step")
      ->transform(whole_in(1, 64));
  plan_cmd->add_option("--plot", plan_more.plot_dir,
                       "write pareto.png (time to train against total cost: every feasible point, the plan's Pareto "
                       "front, the deadline), with plan.csv and pareto_front.csv, into this folder (needs "
                       "python3-matplotlib)");
  plan_cmd->add_option("--out", plan_more.out_dir, "also write plan.csv and plan.json into this folder")
      ->check(check_path)
      ->type_name("DIR");
  plan_cmd->add_option("--format", plan_more.format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  plan_cmd->footer(
      "Examples:\n"
      "  clustersim plan scenarios/llama3-405b-16k.yaml --deadline 90d\n"
      "  clustersim plan scenarios/llama3-405b-54d.yaml --deadline 90d --budget 50MUSD --out out/plan\n"
      "  clustersim plan study.yaml --deadline 30d --nodes 512:8192:x2 --topologies fat_tree,rail_clos\n"
      "Exit status: 0 with a plan that meets the deadline (and budget), 1 without one (the table says the\n"
      "nearest; --out writes the points all the same), 2 for input errors.");

  std::string section;
  std::string describe_format = "text";
  CLI::App* describe = app.add_subcommand("describe", "print the reference of every scenario key");
  describe->add_option("section", section, "a top-level section (cluster, simulation, ...) or 'catalog'");
  describe->add_option("--format", describe_format, "text, or markdown (scenarios/REFERENCE.md)")
      ->check(CLI::IsMember({"text", "markdown"}));
  describe->footer(
      "Examples:\n"
      "  clustersim describe cluster\n"
      "  clustersim describe catalog\n"
      "  clustersim describe --format markdown > scenarios/REFERENCE.md");

  // A first word that names no command: CLI11 alone says "A subcommand is required".
  // `clustersim help` is `clustersim --help`.
  // `clustersim help run` is `clustersim run --help`.
  if (argc == 2 && std::string_view(argv[1]) == "help") {
    std::cout << app.help();
    return 0;
  }
  if (argc == 3 && std::string_view(argv[1]) == "help") {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[2]) {
        std::cout << sub->help(argv[0]);
        return 0;
      }
    }
    argv[1] = argv[2];  // an unknown command: said below, with the nearest
  }
  if (argc > 3 && std::string_view(argv[1]) == "help") {
    std::cerr << "error: help takes one command name, e.g. clustersim help run\n";
    return kExitInput;
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const auto near = sim::closest_match(argv[1], std::vector<std::string_view>(names.begin(), names.end()));
      std::cerr << fmt::format("error: unknown command '{}'; expected one of {}{}\n", argv[1], fmt::join(names, ", "),
                               near ? fmt::format(" (did you mean '{}'?)", *near) : std::string());
      return kExitInput;
    }
  }
  // CLI11's own wording, in the shape of every other error here: "error: ...; see ...".
  const auto parse_error = [&app](const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help: printed, success
    const CLI::App* in = &app;
    for (const CLI::App* sub : app.get_subcommands()) in = sub;
    std::string message = e.what();
    constexpr std::string_view kTwice = "At Most 1 required but received ";
    if (const std::size_t at = message.find(kTwice); at != std::string::npos) {
      message = fmt::format("{}given {} times; give it once", message.substr(0, at), message.substr(at + kTwice.size()));
    }
    std::cerr << fmt::format("error: {}; see clustersim {}--help\n", message, in == &app ? std::string() : in->get_name() + " ");
    return kExitInput;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --gpus = abc": name what the option takes.
    const std::string_view what = e.what();
    constexpr std::string_view kPrefix = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.substr(0, kPrefix.size()) != kPrefix || eq == std::string_view::npos) return parse_error(e);
    const std::string name(what.substr(kPrefix.size(), eq - kPrefix.size()));
    const std::string value(what.substr(eq + 3));
    std::string type;
    bool flag = false;
    const CLI::App* in = &app;
    for (const CLI::App* sub : app.get_subcommands()) in = sub;
    for (const CLI::Option* o : in->get_options()) {
      if (o->get_name() == name || o->check_name(name)) {
        type = o->get_type_name();
        flag = o->get_expected_min() == 0;
      }
    }
    type = type.substr(0, type.find(':'));  // "PERCENT:PERCENT": the option's and its check's
    const std::string expected = flag              ? fmt::format("no value ({} alone), or true or false", name)
                                 : type == "INT"     ? "an integer"
                                 : type == "UINT"    ? "a non-negative integer"
                                 : type == "FLOAT"   ? "a number"
                                 : type == "PERCENT" ? "a number of percent, without '%'"
                                                     : "a value of type " + (type.empty() ? std::string("?") : type);
    std::cerr << fmt::format("error: {}: expected {}, got '{}'; see clustersim {}--help\n", name, expected, value,
                             in == &app ? std::string() : in->get_name() + " ");
    return kExitInput;
  } catch (const CLI::ParseError& e) {
    return parse_error(e);
  }
  // An option given an empty value ('--gpus ""', '--budget ""') is refused: CLI11 took it
  // as the option's default (all GPUs, no budget), which the user did not ask for.
  {
    std::vector<const CLI::App*> apps{&app};
    for (const CLI::App* sub : app.get_subcommands()) apps.push_back(sub);
    for (const CLI::App* a : apps) {
      for (const CLI::Option* o : a->get_options()) {
        const auto& given = o->results();
        if (std::any_of(given.begin(), given.end(), [](const std::string& r) { return r.empty(); })) {
          std::cerr << fmt::format("error: {}: an empty value; give one, or leave the option out\n", o->get_name());
          return kExitInput;
        }
      }
    }
  }

  try {
    if (*run) return cmd_run(run_args, run_format, out_dir, trace_file, run_plots);
    if (*check) return cmd_check(check_args);
    if (*topology) return cmd_topology(topo_args, topo_format);
    if (*collective) return cmd_collective(coll_args, coll);
    if (*describe) return cmd_describe(section, describe_format);
    if (*sweep) return cmd_sweep(sweep_args, sweep_opts);
    if (*compare_cmd) return cmd_compare(compare_args, compare_plot_dir);
    if (*plan_cmd) {
      plan_opts.replications_given = plan_cmd->get_option("--replications")->count() > 0;
      return cmd_plan(plan_args, plan_opts, plan_more);
    }
    if (*validate) return cmd_validate(cases_file, validate_format, fail_above, validate_plot);
    if (*calibrate) return tools::calibrate(calibrate_args);
  } catch (const config::InputError& e) {
    return report_input_error(e);
  } catch (const sim::LimitError& e) {  // commands that run outside compute_run
    std::cerr << fmt::format("error: {}\n1 error; nothing was run.\n", e.what());
    return kExitInput;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user named (an output folder, a file in it) that the system will not let
    // us look at or write: a symbolic link loop, a permission, a name too long.
    std::cerr << fmt::format("error: {}: {}\n", e.path1().empty() ? std::string("(a path)") : e.path1().string(),
                             e.code().message());
    return kExitInput;
  } catch (const sim::TimeRangeError& e) {
    // The input the command was given, to name in the message.
    const auto file_of = [](const ScenarioArgs& a) { return a.file.empty() ? std::string("(quickstart)") : a.file; };
    std::string input = "clustersim";
    if (*run) input = file_of(run_args);
    if (*check) input = file_of(check_args);
    if (*topology) input = file_of(topo_args);
    if (*collective) input = file_of(coll_args);
    if (*sweep) input = file_of(sweep_args);
    if (*plan_cmd) input = file_of(plan_args);
    if (*compare_cmd) input = fmt::format("{}", fmt::join(compare_args.files, ", "));
    if (*validate) input = cases_file;
    return report_time_range(e, input);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Keep freed memory for the next use instead of handing it back to the system: a long
  // run's replications each allocate and free their fleet's records (megabytes), and with
  // glibc's adaptive thresholds, depending on the heap's layout, every replication faulted
  // its pages in again (26,000 page faults and 15% of the time of the 54-day run).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
  try {
    const int code = run_main(argc, argv);
    // What went to stdout must have arrived: a full disk or a closed pipe behind '>' would
    // otherwise leave a truncated file and exit 0 (as --out, the error is exit status 2).
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;
    if (!std::cout || !flushed || std::ferror(stdout) != 0) {
      const int error = errno;
      std::cerr << fmt::format("error: cannot write the output to standard output{}\n",
                               error != 0 ? fmt::format(": {}", std::strerror(error))
                                          : std::string(" (a full disk? the output is incomplete)"));
      return code == 0 ? kExitInput : code;
    }
    return code;
  } catch (const clustersim::sim::InternalError& e) {
    std::cerr << e.what() << "\nThis is a bug in clustersim; please report it with the scenario.\n";
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\nThis is a bug in clustersim; please report it with the scenario.\n";
  }
  return kExitInternal;
}
