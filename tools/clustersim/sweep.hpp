// `clustersim sweep`: one scenario run at every point of a parameter grid.
//
// A point is the scenario with each parameter applied as a `--set KEY=VALUE` override, after
// the command's own `--set`s (and `--replications`, which is `simulation.replications`). The
// grid is the cartesian product of the parameters in command-line order, the last varying
// fastest; point i has the mixed-radix digits of i as its value indices. Each point loads
// its scenario and runs `compute_run` (tools/clustersim/report.hpp) on a worker thread; the
// points share nothing, so the results do not depend on the number of threads or ranks.
//
// Files (in --out DIR), a line per point:
//   sweep.jsonl  one JSON record a line: {"point", "params", "status", "results", "jobs",
//                "error", "wall_s"}; the source of truth.
//   sweep.csv    point, the parameters, status, the key results (units in the column names:
//                step_time_s, fabric_capex_usd, ...; the first job's), error, wall_s (last).
//   sweep.base.json  what every point shares: the base scenario (file, the command's --set,
//                seed, replications, clustersim version and the git commit CMake configured
//                it at: a rebuild without a new configure keeps the old commit) and a
//                fingerprint of all it resolved to (the merged scenario, node, GPU and
//                calibration profile); and the grid (each axis's key and values).
// While the sweep runs, each file is a journal: a point's line is appended as the point
// finishes (completion order), whole, with one append write(2), then the next file's, so a
// kill loses no finished point. When the last point is done, rank 0 rewrites both files in
// point order (each atomically: a temporary file renamed over it), so a finished sweep's
// files are the same bytes whatever the threads, the ranks or the resumes, but for wall_s
// (measured, not computed). Resuming (the same command and --out again) reads sweep.jsonl,
// drops a partial last line, checks that every record is a point of this grid and that
// sweep.base.json has this run's fingerprint (another --set, seed, replications, an edited
// scenario file or another clustersim is an input error, not a silent mix), rewrites both
// files from the records in point order (atomically) and runs only the points that are
// missing. Another grid whose points include every finished one (values added to any
// axis, axes in another order) resumes too, with a note naming both grids: a record is the
// point of the new grid with its parameters' values, rewritten under that point's number
// where it moved (an error row's message keeps the places the earlier run named). A point whose scenario is invalid (parallelism that does not divide, a job that
// does not fit in memory) is a finished point with status "error" and the diagnostics as its
// message (one a parameter's value caused is located at that value in the sweep block, or
// names its --param: locate_point_errors); it is not run again on resume.
//
// MPI (built when CMake finds MPI; CLUSTERSIM_HAVE_MPI): started by mpirun or srun, rank 0
// resumes, broadcasts the missing points, the ranks take them round-robin (each with
// --jobs threads, default 1), send each record to rank 0 as it finishes, and rank 0 writes
// them. Started any other way, the sweep is the threaded one.
//
// The scenario's `sweep:` block (scenario::SweepConfig) gives parameters too: its zipped
// keys first, as one axis whose values go together, then its grid keys, then the --params.
//
// LIMITATIONS: the CSV holds the first job's results (sweep.jsonl has every job's); a
// parameter indexes lists as `workload.jobs[0].parallelism.tp`; rank 0 holds every finished
// record (its JSON line and CSV row) in memory until the end, to write them in point order;
// wall_s, a point's measured run time, differs from run to run.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/config/decode.hpp"
#include "models/scenario/scenario.hpp"

namespace clustersim::tools {

/// One axis of the grid: a scenario key and its values, as --set texts.
struct SweepParam {
  std::string key;
  std::vector<std::string> values;
  bool zipped = false;          ///< varies with the other zipped parameters, as one axis
  std::string origin = "--param";  ///< where it was given, for messages ("sweep.grid", ...)
  std::vector<config::Location> where;  ///< of each value in a sweep block; empty for --param
  std::string range;  ///< the --param's range a:b:xF or a:b:+S its values came from, if any
};

/// The parameters of a scenario's `sweep:` block: the zipped keys, then the grid keys.
std::vector<SweepParam> sweep_block_params(const scenario::Scenario& sc);
/// The points of the scenario's sweep block; 0 when it has none.
std::int64_t sweep_block_points(const scenario::Scenario& sc);

/// Parses "KEY=v1,v2,..." (commas inside {}, [] or () do not split) or a range
/// "KEY=a:b:xF" (a, a*F, ... up to b; F > 1) or "KEY=a:b:+S" (a, a+S, ... up to b). Range
/// ends may carry the same unit suffix ("1GiB:8GiB:x2"). A single "1:7" is one value. Returns
/// false with `why` on a malformed text or more than 100,000 values.
bool parse_sweep_param(std::string_view text, SweepParam& out, std::string& why);

struct SweepSpec {
  std::string scenario;                    ///< file; empty: the built-in quickstart
  std::vector<std::string> sets;           ///< applied to every point, before the parameters
  std::optional<std::uint64_t> seed;       ///< overrides simulation.seed
  std::optional<std::int64_t> replications;  ///< overrides simulation.replications
  std::vector<SweepParam> params;

  /// The grid's axes, each a list of indices into `params`: the zipped parameters make one
  /// axis (where the first of them is), every other parameter one of its own.
  [[nodiscard]] std::vector<std::vector<std::size_t>> axes() const;
  /// Points in the grid: the product of the axes' value counts (1 with no parameter).
  [[nodiscard]] std::int64_t points() const;
  /// The parameter values of point `index` (0 <= index < points()).
  [[nodiscard]] std::vector<std::string> values_of(std::int64_t index) const;
  /// Their positions in each parameter's list of values.
  [[nodiscard]] std::vector<std::size_t> value_indices(std::int64_t index) const;
  /// The load options of point `index`: sets, replications, then KEY=VALUE of each parameter.
  [[nodiscard]] scenario::LoadOptions options_of(std::int64_t index) const;
};

/// A --set whose key a parameter sets at every point (the same key, or one inside it) would
/// change nothing: one diagnostic each, added to `bad`.
/// Whether the YAML value `text` (a whole section's value, as --set KEY=VALUE gives it)
/// writes `rest`, a dotted path below KEY ("model", or "[0].gpus": an index counts as
/// written). `if_unreadable`: the answer when `text` is not YAML (said where it is applied).
bool value_writes(const std::string& text, std::string_view rest, bool if_unreadable);

void check_sets_against_params(const SweepSpec& spec, config::Diagnostics& bad);

/// The diagnostics of point `index` with each one a parameter's value caused (written on
/// the command line, as the points' --set overrides are) said as that parameter's: at the
/// value in the sweep block (file:line:column) and prefixed "sweep.grid KEY=VALUE: ", or
/// "--param KEY=VALUE: " for a --param. A diagnostic belongs to the parameter whose key
/// is the longest prefix of its path; the others are kept as they are.
config::Diagnostics locate_point_errors(const SweepSpec& spec, std::int64_t index, const config::Diagnostics& errors);

/// Loads and runs one point. Never throws: an invalid scenario or an internal error gives
/// a record with status "error" and the message (located by locate_point_errors).
/// Thread-safe (shares nothing).
config::Json run_point(const SweepSpec& spec, std::int64_t index);

/// The CSV layout: the parameters' keys, and whether the failure columns (ettr,
/// goodput_tokens_per_s) are present.
struct SweepColumns {
  std::vector<std::string> params;
  bool failures = false;

  [[nodiscard]] std::string header() const;  ///< with the newline
  [[nodiscard]] std::string row(const config::Json& record) const;  ///< with the newline
};

struct SweepOptions {
  int jobs = 0;                   ///< worker threads (per rank under MPI); 0: the hardware's (1 under MPI)
  std::string out_dir = "sweep-out";
  bool progress = true;           ///< a bar on a terminal (stderr), plain lines otherwise
};

struct SweepSummary {
  std::int64_t points = 0;   ///< in the grid
  std::int64_t resumed = 0;  ///< finished by an earlier run, not run again
  std::int64_t run = 0;      ///< run now (all ranks)
  std::int64_t errors = 0;   ///< error rows among all points
  int threads = 0;           ///< per rank
  int ranks = 1;
  bool writer = true;        ///< this process wrote the files (rank 0)
  bool aborted = false;      ///< rank 0 found bad input and ran nothing (ranks other than 0)
  double wall_s = 0.0;
};

/// Runs the sweep into options.out_dir. Throws config::InputError on a bad scenario,
/// parameter or output folder (nothing is run then).
SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& log);

/// Two numbers joined by one ':' ("0:7", "1.5:8"): what a range without its step looks like.
bool looks_like_range_without_step(std::string_view v);

}  // namespace clustersim::tools
