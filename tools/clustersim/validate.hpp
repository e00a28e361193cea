// `clustersim validate`: the simulator against published training throughput.
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
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "models/config/decode.hpp"

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

struct ValidationCases {
  std::vector<ValidationCase> cases;
  static auto fields() { return std::tuple{config::field("cases", &ValidationCases::cases, "validation cases")}; }
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

/// |predicted - published| <= 2 sqrt(published): within the Poisson band of a count.
bool within_band(const CaseResult& r);

/// Runs every case of `cases_file`. Throws config::InputError on a bad cases file or scenario.
std::vector<CaseResult> run_validation(const std::string& cases_file);

/// Median of |error| over the throughput results (failure counts are judged by their band).
double median_abs_error(const std::vector<CaseResult>& results);

std::string validation_table(const std::vector<CaseResult>& results);
config::Json validation_json(const std::vector<CaseResult>& results);

}  // namespace clustersim::tools
