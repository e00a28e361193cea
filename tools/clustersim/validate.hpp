// `clustersim validate`: the simulator against published training throughput, failure
// counts and collective bus bandwidths.
//
// validation/cases.yaml lists the cases; each names a scenario (one job), the metric to
// compare, the published value and its source. Each case runs exactly as `clustersim run`
// would run its scenario, with the built-in calibration of its GPU type: nothing is tuned
// per case. The error of a case is predicted / published - 1; the summary is the median of
// the absolute errors (the target: at most 10%).
//
// Failure cases (metric failures:CAUSE) compare the failures of a cause over the scenario's
// horizon, cluster-wide, with a published count: within its Poisson band or not.
//
// A case's job may not fit in HBM by clustersim's memory model when the published run used
// memory optimisations clustersim does not model; it is still timed, and flagged.
//
// Collective cases (the file's `collectives` list) compare a collective's bus bandwidth
// (metric busbw_GBps, nccl-tests' busbw in GB/s) with a published measurement. A case
// names a scenario with a cluster and a fabric, the op, the GPU count (the first N GPUs in
// node order), the size, the algorithm (auto) and the network model; it is timed exactly
// as `clustersim collective` times it (tools/clustersim/collective.hpp), with the network
// model's parameters as the scenario leaves them (its defaults: nothing is tuned per case).
// Their median absolute error is reported on its own: it is neither part of the training
// throughput median nor of `--fail-above`.
//
// Bad input: every case's scenario is loaded (decoded and checked) and checked against its
// case before any case runs (load_validation), and every problem is reported at once, as a
// config error (exit code 2, nothing printed on stdout): the cases file's own (a key that
// does not decode, an unknown metric, a scenario file that is not there), each scenario's,
// at the scenario file's own file:line:column and key and prefixed with the case that names
// it and where ("case NAME (CASES:LINE:COLUMN): ..."; a scenario named by several cases is
// loaded and reported once), and each case's against its scenario (a failure metric without
// a failures section or component, more ranks than GPUs, no fabric, an algorithm that cannot
// run the collective), at the case's key. Only when all of them load does any case run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/config/decode.hpp"
#include "models/network/collective.hpp"
#include "models/network/config.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/units.hpp"
#include "tools/clustersim/collective.hpp"

namespace clustersim::tools {

struct ValidationCase {
  std::string name;
  std::string scenario;  ///< relative to the cases file
  std::string metric;
  double published = 0.0;
  std::string source;
  std::string hardware;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("name", &ValidationCase::name, "the case's name").require(),
        field("scenario", &ValidationCase::scenario, "scenario file, relative to the cases file").require(),
        field("metric", &ValidationCase::metric,
              "tflops_per_gpu, megatron_tflops_per_gpu, mfu, tokens_per_s, step_time_s, or failures:CAUSE "
              "(failures:total)")
            .require(),
        field("published", &ValidationCase::published, "the published value of the metric").require(),
        field("source", &ValidationCase::source, "paper, table and row").require(),
        field("hardware", &ValidationCase::hardware, "the machines the measurement ran on"),
        field("notes", &ValidationCase::notes, "what had to be assumed"),
    };
  }
};

/// A published collective measurement (nccl-tests' bus bandwidth, or the same quantity).
struct CollectiveCase {
  std::string name;
  std::string scenario;  ///< relative to the cases file; needs a fabric
  std::string metric;    ///< busbw_GBps
  network::Op op = network::Op::all_reduce;
  std::int64_t gpus = 0;  ///< ranks: the first `gpus` GPUs in node order
  sim::Bytes size;
  network::Algorithm algo = network::Algorithm::automatic;
  network::Model model = network::Model::analytical;
  double published = 0.0;  ///< GB/s
  std::string source;
  std::string hardware;
  std::string notes;
  /// The measurement a built-in calibration was fitted on: reported, left out of the median.
  bool in_sample = false;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("name", &CollectiveCase::name, "the case's name").require(),
        field("scenario", &CollectiveCase::scenario, "scenario file with a cluster and a fabric, relative to the cases file")
            .require(),
        field("metric", &CollectiveCase::metric, "busbw_GBps (nccl-tests' bus bandwidth, GB/s)").require(),
        field("op", &CollectiveCase::op, "the collective").require(),
        field("gpus", &CollectiveCase::gpus, "ranks: the first N GPUs in node order").require().at_least(2),
        field("size", &CollectiveCase::size, "bytes each rank holds (nccl-tests' size column)")
            .require()
            .at_least(sim::Bytes::of(kMinCollectiveBytes)),
        field("algo", &CollectiveCase::algo, "algorithm, or auto (the fastest of NCCL's algorithms by the analytical model)"),
        field("model", &CollectiveCase::model, "network model"),
        field("published", &CollectiveCase::published, "the published bus bandwidth (GB/s)").require(),
        field("source", &CollectiveCase::source, "where the measurement is published").require(),
        field("hardware", &CollectiveCase::hardware, "the machines the measurement ran on"),
        field("notes", &CollectiveCase::notes, "what had to be assumed"),
        field("in_sample", &CollectiveCase::in_sample,
              "true when the GPU type's calibration was fitted on this measurement: reported, but left out of "
              "the median (it checks the fit, not a prediction)"),
    };
  }
};

struct ValidationCases {
  std::vector<ValidationCase> cases;
  std::vector<CollectiveCase> collectives;
  static auto fields() {
    return std::tuple{config::field("cases", &ValidationCases::cases, "validation cases"),
                      config::field("collectives", &ValidationCases::collectives, "collective bus bandwidth cases")};
  }
};

struct CaseResult {
  ValidationCase spec;
  double predicted = 0.0;
  double error = 0.0;  ///< predicted / published - 1
  double step_time_s = 0.0;
  double mfu = 0.0;
  double memory_bytes = 0.0;
  double hbm_bytes = 0.0;
  bool failures = false;  ///< a failure count (failures:CAUSE), judged by its Poisson band
};

struct CollectiveResult {
  CollectiveCase spec;
  std::string node;  ///< the scenario's node type
  std::int64_t nodes = 0;  ///< nodes the ranks span
  network::Algorithm algorithm = network::Algorithm::ring;  ///< the one run (auto resolved)
  double time_s = 0.0;
  double algbw_GBps = 0.0;
  double predicted = 0.0;  ///< busbw, GB/s
  double error = 0.0;      ///< predicted / published - 1
};

/// |predicted - published| <= 2 sqrt(published): within the Poisson band of a count.
bool within_band(const CaseResult& r);

/// A cases file, decoded, with every case's scenario loaded and checked against its case:
/// all the runs need, nothing run yet.
struct LoadedValidation {
  std::string file;  ///< the cases file
  ValidationCases cases;
  config::LoadState state;  ///< where each value of the cases file was written
  /// By scenario path (resolved from the cases file's folder): the training cases' scenarios,
  /// loaded with the memory check off (a job that does not fit in HBM is timed and flagged) ...
  std::map<std::string, scenario::LoadedScenario> training;
  /// ... and the collective cases', loaded as `clustersim collective` loads them.
  std::map<std::string, scenario::LoadedScenario> collectives;
};

/// Decodes `cases_file`, loads the scenario of every case of both lists (each distinct file
/// once per list) and checks each case against it. Throws config::InputError with every
/// problem found (see the header comment), having run nothing; a file without any case is
/// one, and so is one without a training throughput case when `gated` (--fail-above judges
/// their median).
LoadedValidation load_validation(const std::string& cases_file, bool gated = false);

/// Runs every case of `cases` (its `cases` list); cases that share a scenario run it once.
std::vector<CaseResult> run_validation(const LoadedValidation& cases);
/// The same, loading `cases_file` first: throws config::InputError when any case, of either
/// list, does not load (load_validation).
std::vector<CaseResult> run_validation(const std::string& cases_file);

/// Runs every collective case of `cases` (its `collectives` list).
std::vector<CollectiveResult> run_collective_validation(const LoadedValidation& cases);
/// The same, loading `cases_file` first: throws config::InputError when any case, of either
/// list, does not load (load_validation).
std::vector<CollectiveResult> run_collective_validation(const std::string& cases_file);

/// Median of |error| over the throughput results (failure counts are judged by their band);
/// 0 when there are none.
double median_abs_error(const std::vector<CaseResult>& results);
/// Median of |error| over the collective results (0 when there are none).
double median_abs_error(const std::vector<CollectiveResult>& results);

/// Decimals (1 to 6) that print `percent` apart from a `limit` it exceeds (9.467% against
/// 9.46%: 3); 1 when it does not exceed it.
int digits_apart(double percent, double limit);

/// The tables: training throughput (with its median), failures, collective bus bandwidth
/// (with its own median); a table without cases is left out. The footer names `cases_file`.
/// The training median is set against `fail_above` (percent) when it is 0 or more, the gate
/// `validate --fail-above` applies, else against the project's 10% target; either way the
/// line says whether the median meets it.
std::string validation_table(const std::vector<CaseResult>& results,
                             const std::vector<CollectiveResult>& collectives = {},
                             const std::string& cases_file = "validation/cases.yaml", double fail_above = -1.0);
/// {"cases": [...], "median_abs_error": training throughput median, "collectives": {"metric",
/// "cases": [...], "median_abs_error": collective median}}; a median is null when it has no
/// case.
config::Json validation_json(const std::vector<CaseResult>& results,
                             const std::vector<CollectiveResult>& collectives = {});

}  // namespace clustersim::tools
