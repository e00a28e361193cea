// What `clustersim run` reports, in each output format, and how it is written.
//
// The result document (JSON) holds the tool's version and commit, the scenario file, the
// seed, the fully resolved scenario and every modelled result; everything that differs
// from one run to the next (wall time, event counts) is under "run_info", so that the same
// scenario and seed give byte-identical documents outside it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "models/cluster/cluster.hpp"
#include "models/config/decode.hpp"
#include "models/cost/cost.hpp"
#include "models/cost/monitoring.hpp"
#include "models/fabric/metrics.hpp"
#include "models/scenario/scenario.hpp"
#include "models/reliability/longrun.hpp"
#include "models/workload/step.hpp"

namespace clustersim::tools {

struct RunInfo {
  double wall_time_s = 0.0;
  std::uint64_t events_processed = 0;
  std::uint64_t events_scheduled = 0;
};

/// What a run computed, once, for every output format.
struct RunResult {
  cluster::Inventory inventory;
  std::optional<fabric::FabricMetrics> fabric;
  std::vector<workload::StepResult> jobs;  ///< one step of each job, in scenario order
  std::optional<reliability::LongRunResult> reliability;  ///< when the scenario has failures
  cost::CostResult cost;                                  ///< capex, opex, power (models/cost/cost.hpp)
  std::vector<std::optional<cost::TrainingCost>> training;  ///< per job; none without train_tokens
  cost::MonitoringLoad monitoring;
  RunInfo info;
};

/// The cost model's inputs for a run whose steps (and long run, if any) are computed: the
/// node's price, the fabric's priced parts and the fleet's busy share from the jobs' steps.
cost::CostInputs cost_inputs(const scenario::LoadedScenario& loaded, const RunResult& r);

/// Fills r.cost, r.training and r.monitoring from the rest of `r` (compute_run calls it).
void add_economics(const scenario::LoadedScenario& loaded, RunResult& r);

/// A job's time to train in seconds: the long run's (ETTR included) when the scenario has
/// failures, else train_tokens / throughput; NaN when the job has no train_tokens.
double time_to_train_s(const scenario::LoadedScenario& loaded, const RunResult& r, std::size_t job);


/// What the training-step model needs for one of the scenario's jobs (which must outlive it).
/// With `links`, each collective's busiest link too (StepInputs::want_links).
workload::StepInputs step_inputs(const scenario::LoadedScenario& loaded, const scenario::ResolvedJob& job,
                                 bool trace = false, bool links = false);

/// What the long-horizon model needs: the scenario's failure sections, its jobs with the
/// throughput of their simulated `steps`, and the fabric's switch and cable counts.
reliability::LongRunInputs long_run_inputs(const scenario::LoadedScenario& loaded,
                                           const std::vector<workload::StepResult>& steps,
                                           const std::optional<fabric::FabricMetrics>& fabric);

/// Computes everything `run` reports. With `trace`, each job's step keeps its timeline.
/// With `progress`, a long run (failures, a queue) that takes more than a second shows its
/// progress on stderr, when stderr is a terminal (one line, rewritten, erased at the end).
/// With `links`, each job's collectives name their busiest link (what `run` reports).
RunResult compute_run(const scenario::LoadedScenario& loaded, bool trace = false, bool progress = false,
                      bool links = false);

/// Whether the scenario's routes depend on fabric.ecmp_seed (Fabric::seed_matters()): a Clos
/// that hashes over two uplinks or more somewhere, a dragonfly of four groups or more that
/// picks Valiant groups.
bool routes_hashed(const scenario::LoadedScenario& loaded);

/// A run over several draws of the flow hash: the run of median first-job step time.
struct EcmpDraws {
  RunResult run;                                   ///< the median draw's (the lower median of an even count; of draws tied with it, the first seed's)
  std::optional<std::int64_t> seed;                ///< its fabric.ecmp_seed; none when one run was made
  std::optional<std::pair<double, double>> steps;  ///< fastest and slowest first-job step; none without a job
};

/// Runs `loaded` with fabric.ecmp_seed = its own + 0 .. draws - 1 when its routes are
/// hashed (routes_hashed) and draws > 1, else once.
EcmpDraws run_ecmp_draws(const scenario::LoadedScenario& loaded, std::int64_t draws);

/// One job's step as JSON (the keys under "jobs" in the result document).
config::Json job_json(const scenario::ResolvedJob& job, const workload::StepResult& step);

/// The jobs' steps as Chrome trace-event JSON (one process per pipeline stage of each job;
/// opens in Perfetto or chrome://tracing).
config::Json trace_json(const scenario::LoadedScenario& loaded, const RunResult& result);

config::Json result_document(const scenario::LoadedScenario& loaded, const RunResult& result);

/// The result as aligned text with units, for people.
std::string result_table(const scenario::LoadedScenario& loaded, const RunResult& result);

/// `s` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or line break.
std::string csv_quote(std::string_view s);
/// A folder as messages print it before "/file": without its trailing slashes ("out/" gave
/// "out//results.json"); "/" stays.
std::string folder(std::string dir);

/// "2,048" style thousands separators for counts people read (rounded to a whole number).
std::string grouped(double v);
/// Four significant digits below 10,000, grouped digits above (no exponent): 137, 299,008.
std::string readable(double v);

/// The result as CSV rows "section,metric,value,unit".
std::string result_csv(const scenario::LoadedScenario& loaded, const RunResult& result);

/// The fabric's metrics as aligned text with units (the `topology` command).
std::string topology_table(const scenario::LoadedScenario& loaded, const fabric::FabricMetrics& m);

/// The nodes one rack holds, as the cost model and the fabric's cabling pack them
/// (economics.nodes_per_rack, else the priced server's, else 1).
std::int64_t nodes_per_rack(const scenario::LoadedScenario& loaded);

/// The failure timeline (replication 0) as CSV: time_s,time_d,kind,cause,job,node,gpu,element
/// (a switch or cable unit by the fabric's names, e.g. leaf#3).
std::string timeline_csv(const scenario::LoadedScenario& loaded, const reliability::LongRunResult& r);
/// Failures per physical GPU (replication 0), for the health heat map: gpu,node,local,failures.
std::string gpu_failures_csv(const reliability::LongRunResult& r, std::int64_t gpus_per_node);

/// The share done and the time left, on one terminal line of stderr rewritten in place, once
/// the work has taken a second; erased when done. Nothing when stderr is not a terminal.
class TerminalProgress {
 public:
  explicit TerminalProgress(std::string what);
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;
  ~TerminalProgress();

  /// Shows `done`, the share of the work done (0 to 1).
  void operator()(double done);
  /// Erases the line, if shown (before a message on stderr; the destructor does it too).
  void erase();

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  bool enabled_;
  bool shown_ = false;
  std::size_t width_ = 0;
  Clock::time_point start_;
  Clock::time_point last_;
};

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename, so that a
/// reader never sees a half-written file. Returns an error message, empty on success.
std::string write_file_atomically(const std::string& path, const std::string& text);
/// Writes every (path, text) all or nothing: each to path.tmp first, then, once all are
/// written, renamed into place; on a failure the .tmp files are removed, no target changes,
/// and the error is returned (empty on success). A symbolic link's target is replaced (the
/// link stays). A stream is written straight, once the temporary files are ready and before
/// their renames (what it took stays if a rename then fails): a character device, a pipe or
/// FIFO (one nobody reads is an error), our standard output or error, anything under /dev
/// or /proc; a block device or a socket is refused.
std::string write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

/// The scenario reference: plain text, or markdown (scenarios/REFERENCE.md).
std::string reference_text(const std::vector<config::FieldDoc>& docs);
std::string reference_markdown(const std::vector<config::FieldDoc>& docs, const std::vector<config::FieldDoc>& catalog);

/// Which calibration the scenario runs on (the profile it names, or its GPU type's built-in
/// one) and what it makes of the links: "built-in for h100-sxm: collectives reach 82.2% of
/// the scale-up and 94.0% of the scale-out line rate, 8.4us per call".
std::string calibration_summary(const scenario::LoadedScenario& loaded);

}  // namespace clustersim::tools
