// `clustersim validate`'s collective cases (validation/cases.yaml, `collectives`): they run,
// each is timed as `clustersim collective` times it, and their median stays apart from the
// training throughput median; a case whose scenario does not load is a config error, all at once.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "tests/approx.hpp"
#include "tools/clustersim/collective.hpp"
#include "tools/clustersim/validate.hpp"

using namespace clustersim;
using clustersim::test::Rel;

namespace {

const std::string kCases = std::string(CLUSTERSIM_SOURCE_DIR) + "/validation/cases.yaml";

}  // namespace

TEST_CASE("validate: every collective case runs, with a finite positive prediction") {
  const std::vector<tools::CollectiveResult> results = tools::run_collective_validation(kCases);
  REQUIRE(results.size() >= 4);
  for (const tools::CollectiveResult& r : results) {
    CAPTURE(r.spec.name);
    CHECK(r.spec.metric == "busbw_GBps");
    CHECK(std::isfinite(r.predicted));
    CHECK(r.predicted > 0.0);
    CHECK(std::isfinite(r.time_s));
    CHECK(r.time_s > 0.0);
    // busbw = algbw x bus factor, algbw = S / t (nccl-tests doc/PERFORMANCE.md).
    CHECK(r.algbw_GBps == Rel(r.spec.size.value() / r.time_s / 1e9).epsilon(1e-12));
    CHECK(r.predicted == Rel(r.algbw_GBps * network::bus_factor(r.spec.op, r.spec.gpus)).epsilon(1e-12));
    // error = predicted / published - 1.
    CHECK(r.error == Rel(r.predicted / r.spec.published - 1.0).epsilon(1e-12));
    CHECK(r.algorithm != network::Algorithm::automatic);  // auto is resolved to what ran
    CHECK(r.nodes >= 1);
    CHECK(!r.spec.source.empty());
  }
}

TEST_CASE("validate: a collective case is timed exactly as `clustersim collective` times it") {
  // Same scenario, the first `gpus` GPUs, the case's size, algorithm and model, through the
  // function `collective` prints from: the same busbw, bit for bit.
  const std::vector<tools::CollectiveResult> results = tools::run_collective_validation(kCases);
  REQUIRE(!results.empty());
  for (const tools::CollectiveResult& r : results) {
    CAPTURE(r.spec.name);
    const scenario::LoadedScenario s =
        scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/validation/" + r.spec.scenario, {});
    REQUIRE(s.fabric);
    network::NetworkConfig cfg = s.config.network;
    cfg.model = r.spec.model;
    tools::CollectiveTiming t;
    std::string why;
    REQUIRE(tools::time_collective(*s.fabric, cfg, r.spec.op, tools::first_ranks(r.spec.gpus), r.spec.size,
                                   r.spec.algo, t, why));
    CHECK(t.busbw_GBps == r.predicted);
    CHECK(t.algorithm == r.algorithm);
    CHECK(s.node.name == r.node);
  }
}

TEST_CASE("validate: the collective table and JSON keep their own median, apart from training") {
  // Two training results (|errors| 0.02 and 0.04: median 0.03) and three collective results
  // (|errors| 0.1, 0.3, 0.2: median 0.2). Neither median may see the other's cases.
  std::vector<tools::CaseResult> training(2);
  training[0].spec.name = "t0";
  training[0].spec.metric = "tflops_per_gpu";
  training[0].error = 0.02;
  training[1].spec.name = "t1";
  training[1].spec.metric = "tflops_per_gpu";
  training[1].error = -0.04;
  std::vector<tools::CollectiveResult> coll(3);
  const double errors[] = {0.1, -0.3, 0.2};
  for (std::size_t i = 0; i < coll.size(); ++i) {
    coll[i].spec.name = "c" + std::to_string(i);
    coll[i].spec.metric = "busbw_GBps";
    coll[i].spec.gpus = 16;
    coll[i].spec.size = sim::Bytes::of(8589934592.0);
    coll[i].spec.published = 100.0;
    coll[i].predicted = 100.0 * (1.0 + errors[i]);
    coll[i].error = errors[i];
    coll[i].algorithm = network::Algorithm::ring;
  }
  CHECK(tools::median_abs_error(training) == Rel(0.03));
  CHECK(tools::median_abs_error(coll) == Rel(0.2));

  const config::Json j = tools::validation_json(training, coll);
  CHECK(j.at("median_abs_error").get<double>() == Rel(0.03));
  CHECK(j.at("cases").size() == 2);
  CHECK(j.at("collectives").at("metric") == "busbw_GBps");
  CHECK(j.at("collectives").at("cases").size() == 3);
  CHECK(j.at("collectives").at("median_abs_error").get<double>() == Rel(0.2));
  CHECK(j.at("collectives").at("cases").at(1).at("size_bytes").get<double>() == 8589934592.0);
  // No collective cases: the key is there, its median null; the training keys as before.
  const config::Json none = tools::validation_json(training);
  CHECK(none.at("collectives").at("cases").empty());
  CHECK(none.at("collectives").at("median_abs_error").is_null());
  CHECK(none.at("median_abs_error").get<double>() == Rel(0.03));

  const std::string table = tools::validation_table(training, coll);
  CHECK(table.find("Collective bus bandwidth") != std::string::npos);
  CHECK(table.find("median absolute error 3.0% over 2 cases (target: at most 10%: met)") != std::string::npos);
  // Against the gate validate --fail-above applies, when one is given, and said when exceeded.
  CHECK(tools::validation_table(training, coll, "cases.yaml", 2.5).find("(--fail-above 2.5%: exceeded)") !=
        std::string::npos);
  CHECK(tools::validation_table(training, coll, "cases.yaml", 3.5).find("(--fail-above 3.5%: met)") != std::string::npos);
  // An exceeded gate that one decimal would print as the median itself takes more digits.
  CHECK(tools::validation_table(training, coll, "cases.yaml", 2.99).find("median absolute error 3.00% over 2 cases "
                                                                          "(--fail-above 2.99%: exceeded)") != std::string::npos);
  CHECK(table.find("median absolute error 20.0% over 3 collective cases") != std::string::npos);
  CHECK(table.find("8GiB") != std::string::npos);
  CHECK(tools::validation_table(training).find("Collective bus bandwidth") == std::string::npos);

  // Collective cases alone: no training table and a null training median (not 0%).
  const config::Json only = tools::validation_json({}, coll);
  CHECK(only.at("median_abs_error").is_null());
  const std::string only_table = tools::validation_table({}, coll, "my-cases.yaml");
  CHECK(only_table.find("Training throughput") == std::string::npos);
  CHECK(only_table.rfind("Collective bus bandwidth", 0) == 0);
  CHECK(only_table.find("sources and assumptions: my-cases.yaml") != std::string::npos);

  // A case a calibration was fitted on (in_sample) is listed, marked, and left out of the
  // median: of 0.1 and 0.2 the median is 0.15; with every case in sample there is none.
  coll[1].spec.in_sample = true;
  CHECK(tools::median_abs_error(coll) == Rel(0.15));
  const std::string marked = tools::validation_table({}, coll);
  CHECK(marked.find("in sample\n") != std::string::npos);
  CHECK(marked.find("median absolute error 15.0% over 2 collective cases") != std::string::npos);
  CHECK(marked.find("1 in sample, a calibration fitted on it, left out") != std::string::npos);
  const config::Json marked_json = tools::validation_json({}, coll);
  CHECK(marked_json.at("collectives").at("cases").at(1).at("in_sample") == true);
  CHECK(marked_json.at("collectives").at("median_abs_error").get<double>() == Rel(0.15));
  for (auto& c : coll) c.spec.in_sample = true;
  CHECK(tools::validation_json({}, coll).at("collectives").at("median_abs_error").is_null());
  CHECK(tools::validation_table({}, coll).find("no collective case out of sample") != std::string::npos);
}

TEST_CASE("validate: scenarios that do not load are all reported, each with its case, before any case runs") {
  // A training case and a collective case whose scenario files exist but do not load (a job
  // on more GPUs than the cluster has; a node the catalog lacks), a second training case
  // naming the first bad scenario, and a case that does not fit its loaded scenario.
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/config_errors/";
  const std::string cases = dir + "validate_bad_scenarios.yaml";
  std::vector<config::Diagnostic> items;
  try {
    (void)tools::load_validation(cases);
  } catch (const config::InputError& e) {
    items = e.diagnostics().items();
  }
  REQUIRE(items.size() == 3);  // the shared bad scenario once
  // At the scenario's own file, line, column and key, said which case names it and where.
  CHECK(items[0].where.file == dir + "validate_bad_scenarios_training.yaml");
  CHECK(items[0].where.line == 10);
  CHECK(items[0].where.column == 13);
  CHECK(items[0].path == "workload.jobs[0].gpus");
  CHECK(items[0].message.starts_with("case bad-training (" + cases + ":12:15, and 1 more case): the job needs 64 GPUs"));
  // A case that loads but does not fit its scenario: at the case's key.
  CHECK(items[1].where.file == cases);
  CHECK(items[1].where.line == 23);
  CHECK(items[1].path == "cases[3].metric");
  CHECK(items[1].message.find("needs a failures section") != std::string::npos);
  CHECK(items[2].where.file == dir + "validate_bad_scenarios_collective.yaml");
  CHECK(items[2].where.line == 4);
  CHECK(items[2].where.column == 17);
  CHECK(items[2].path == "cluster.node");
  CHECK(items[2].message.starts_with("case bad-collective (" + cases + ":36:15): unknown node type 'a3-megaa'"));
  CHECK(items[2].hint == "did you mean 'a3-mega'?");
  // Neither list runs while the other has a bad case.
  CHECK_THROWS_AS((void)tools::run_validation(cases), config::InputError);
  CHECK_THROWS_AS((void)tools::run_collective_validation(cases), config::InputError);
}

TEST_CASE("validate: cases loaded once run as the cases file does") {
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/validate_one_collective.yaml";
  const tools::LoadedValidation loaded = tools::load_validation(file);
  CHECK(loaded.training.empty());
  REQUIRE(loaded.collectives.size() == 1);
  const std::vector<tools::CollectiveResult> once = tools::run_collective_validation(loaded);
  const std::vector<tools::CollectiveResult> by_file = tools::run_collective_validation(file);
  REQUIRE(once.size() == 1);
  REQUIRE(by_file.size() == 1);
  CHECK(once[0].predicted == by_file[0].predicted);
  CHECK(once[0].time_s == by_file[0].time_s);
  CHECK(tools::run_validation(loaded).empty());
}
