// The sweep's grid (parameter texts, point order, load options), --set into list elements,
// the CSV layout, and compare's choice of the best value of a row.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "tools/clustersim/compare.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/sweep.hpp"

using namespace clustersim;

namespace {

std::vector<std::string> values_of(const std::string& text) {
  tools::SweepParam p;
  std::string why;
  REQUIRE_MESSAGE(tools::parse_sweep_param(text, p, why), why);
  return p.values;
}

std::string error_of(const std::string& text) {
  tools::SweepParam p;
  std::string why;
  CHECK_FALSE(tools::parse_sweep_param(text, p, why));
  return why;
}

}  // namespace

TEST_CASE("sweep parameters: lists, doubling and stepped ranges") {
  using V = std::vector<std::string>;
  CHECK(values_of("fabric.topology=fat_tree, dragonfly,torus") == V{"fat_tree", "dragonfly", "torus"});
  // a:b:x2 doubles from a while <= b: 1024, 2048, 4096, 8192.
  CHECK(values_of("cluster.nodes=1024:8192:x2") == V{"1024", "2048", "4096", "8192"});
  CHECK(values_of("cluster.nodes=1000:5000:x2") == V{"1000", "2000", "4000"});
  // a:b:+s steps; units carry over when both ends have the same one.
  CHECK(values_of("x=1:10:+3") == V{"1", "4", "7", "10"});
  CHECK(values_of("x=0.1:0.3:+0.1") == V{"0.1", "0.2", "0.3"});
  CHECK(values_of("checkpoint.write_bandwidth=1TB/s:4TB/s:x2") == V{"1TB/s", "2TB/s", "4TB/s"});
  // Commas inside braces do not split; "1:7" (no step) is one value, not a range.
  CHECK(values_of("cluster.node={gpu: h100-sxm, gpus: 1},dgx-h100") == V{"{gpu: h100-sxm, gpus: 1}", "dgx-h100"});
  CHECK(values_of("fabric.oversubscription=1:7") == V{"1:7"});
  CHECK(values_of("fabric.oversubscription=1:1,1:3") == V{"1:1", "1:3"});

  CHECK(error_of("cluster.nodes").find("expected KEY=v1,v2") != std::string::npos);
  CHECK(error_of("=1,2").find("expected KEY=v1,v2") != std::string::npos);
  CHECK(error_of("x=1,,2").find("an empty value") != std::string::npos);
  // Each bad range says which condition fails, with the range likely meant.
  CHECK(error_of("x=8:1:x2").find("the range descends (8 > 1); a range goes up from its first value (e.g. 1:8:x2)") !=
        std::string::npos);
  CHECK(error_of("x=1:8:x1").find("expected a factor above 1 (e.g. 1:8:x2)") != std::string::npos);
  // Read downwards, x0.5 is x2 and +-2 is +2: the example goes up.
  CHECK(error_of("x=8:1:x0.5").find("(e.g. 1:8:x2)") != std::string::npos);
  CHECK(error_of("x=8:2:+-2").find("(e.g. 2:8:+2)") != std::string::npos);
  CHECK(error_of("x=0:8:x2").find("cannot start at 0; start it above 0, or step by adding (e.g. 0:8:+1)") !=
        std::string::npos);
  CHECK(error_of("x=1:8:+0").find("expected a step above 0 (e.g. 1:8:+1)") != std::string::npos);
  CHECK(error_of("x=1GiB:8GB:x2").find("different units") != std::string::npos);
  CHECK(error_of("x=a:b:x2").find("expected a range") != std::string::npos);
  CHECK(error_of("x=1:1e9:+1").find("more than 100000 values") != std::string::npos);
}

TEST_CASE("sweep grid: the cartesian product in parameter order, the last varying fastest") {
  tools::SweepSpec spec;
  spec.sets = {"network.model=analytical"};
  spec.replications = 3;
  spec.params = {{"a", {"1", "2", "3"}, false, "--param", {}, {}}, {"b", {"x", "y"}, false, "--param", {}, {}}};
  // points = 3 x 2; point i = (i / 2, i % 2).
  CHECK(spec.points() == 6);
  CHECK(spec.values_of(0) == std::vector<std::string>{"1", "x"});
  CHECK(spec.values_of(1) == std::vector<std::string>{"1", "y"});
  CHECK(spec.values_of(4) == std::vector<std::string>{"3", "x"});
  CHECK(spec.options_of(5).sets ==
        std::vector<std::string>{"network.model=analytical", "simulation.replications=3", "a=3", "b=y"});
  tools::SweepSpec none;
  CHECK(none.points() == 1);
}

TEST_CASE("sweep block: zipped keys are one axis, first; grid keys follow in file order") {
  scenario::LoadOptions o;
  o.check_memory = false;
  const auto loaded = scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_block.yaml", o);
  tools::SweepSpec spec;
  spec.params = tools::sweep_block_params(loaded.config);
  REQUIRE(spec.params.size() == 4);
  CHECK(spec.params[0].key == "name");
  CHECK(spec.params[1].key == "fabric");
  CHECK(spec.params[1].values == std::vector<std::string>{"{topology: fat_tree, radix: 16}", "{topology: torus, dims: [4, 4]}"});
  CHECK(spec.params[2].key == "cluster.nodes");  // file order, not alphabetical
  CHECK(spec.params[3].key == "network.model");
  CHECK(spec.axes() == std::vector<std::vector<std::size_t>>{{0, 1}, {2}, {3}});
  CHECK(spec.points() == 2 * 2 * 2);
  // Point 5 = (zip 1, nodes 0, model 1): the torus design, with its name, on 8 nodes, flow.
  CHECK(spec.values_of(5) == std::vector<std::string>{"torus", "{topology: torus, dims: [4, 4]}", "8", "flow"});
  // The point loads as that design.
  const auto point = scenario::load_scenario(loaded.file, spec.options_of(5));
  CHECK(point.config.name == "torus");
  CHECK(point.config.fabric->topology == fabric::Topology::torus);
  CHECK(point.config.cluster.nodes == 8);
  CHECK(point.config.network.model == network::Model::flow);
  // A --param after the block is one more axis, varying fastest.
  tools::SweepParam extra;
  std::string why;
  REQUIRE(tools::parse_sweep_param("simulation.seed=1,2,3", extra, why));
  spec.params.push_back(extra);
  CHECK(spec.points() == 24);
  CHECK(spec.values_of(23) == std::vector<std::string>{"torus", "{topology: torus, dims: [4, 4]}", "16", "flow", "3"});
}

TEST_CASE("--set reaches into a list element by index") {
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml";
  scenario::LoadOptions o;
  o.sets = {"workload.jobs[0].parallelism.tp=4", "workload.jobs[0].parallelism.dp=8"};
  const scenario::LoadedScenario s = scenario::load_scenario(file, o);
  CHECK(s.jobs.at(0).config.parallelism.tp == 4);
  CHECK(s.jobs.at(0).config.parallelism.dp == 8);

  o.sets = {"workload.jobs[1].gpus=4", "workload.jobs.x=1"};
  try {
    (void)scenario::load_scenario(file, o);
    FAIL("expected an input error");
  } catch (const config::InputError& e) {
    const std::string text = e.diagnostics().format();
    CHECK(text.find("workload.jobs: has 1 entry; there is no index 1") != std::string::npos);
    CHECK(text.find("workload.jobs: is a list; expected an index such as [0], got 'x'") != std::string::npos);
  }
}

TEST_CASE("sweep: an invalid point is an error record, and the CSV row carries its message") {
  tools::SweepSpec spec;
  spec.scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml";
  spec.params = {{"workload.jobs[0].parallelism.tp", {"2", "3"}, false, "--param", {}, {}}};
  const config::Json ok = tools::run_point(spec, 0);
  const config::Json bad = tools::run_point(spec, 1);
  CHECK(ok["status"] == "ok");
  CHECK(ok["results"]["mfu"].get<double>() > 0.0);
  CHECK(bad["status"] == "error");
  CHECK(bad["error"].get<std::string>().find("tp x cp x pp x dp") != std::string::npos);

  tools::SweepColumns cols{{"workload.jobs[0].parallelism.tp"}, false};
  CHECK(cols.header() ==
        "point,workload.jobs[0].parallelism.tp,status,gpus,job_gpus,step_time_s,tokens_per_s,mfu,memory_per_gpu_bytes,"
        "time_to_train_s,fabric_capex_usd,fabric_power_w,bisection_bandwidth_Bps,it_power_w,capex_usd,"
        "usd_per_gpu_hour,total_cost_usd,usd_per_million_tokens,error,wall_s\n");
  const std::string row = cols.row(bad);
  CHECK(row.rfind("1,3,error,,,,,,,,,,,,,,,,\"", 0) == 0);
  // gpus is the cluster's, job_gpus the first job's, whose figures the row holds (64 of the
  // cluster's 128: per-GPU throughput from gpus read half the true one).
  CHECK(ok["results"]["gpus"] == 128);
  CHECK(ok["results"]["job_gpus"] == 64);
  CHECK(ok["results"]["capex_usd"].get<double>() > ok["results"]["fabric_capex_usd"].get<double>());
  CHECK(ok["results"]["usd_per_million_tokens"].get<double>() > 0.0);
}

TEST_CASE("sweep: a point's error from a parameter's value is located at the value") {
  // The points' values are --set overrides, whose diagnostics name the command line: a
  // record said "fabric.tiers: does not apply ..." with no file, line or column.
  tools::SweepSpec spec;
  spec.scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_tiers_torus.yaml";
  spec.params = tools::sweep_block_params(scenario::load_scenario(spec.scenario, {}).config);
  REQUIRE(spec.points() == 4);  // {fat_tree, torus} x tiers {2, 3}
  CHECK(tools::run_point(spec, 1)["status"] == "ok");
  const config::Json torus_3 = tools::run_point(spec, 3);
  CHECK(torus_3["params"]["fabric.tiers"] == "3");
  CHECK(torus_3["error"] == spec.scenario +
                                ":9:23: sweep.grid fabric.tiers=3: fabric.tiers: does not apply to a torus fabric "
                                "(remove it)");

  // A --param's value is on the command line: its error names the parameter and value.
  tools::SweepSpec by_param;
  by_param.scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_small.yaml";
  by_param.params = {{"fabric.tiers", {"2", "5"}, false, "--param", {}, {}}};
  CHECK(tools::run_point(by_param, 1)["error"] == "--param fabric.tiers=5: fabric.tiers: must be at most 3, got 5");
}

TEST_CASE("sweep: a row carries the schedule (utilisation, queue waits) and the checkpoint GPU-hours") {
  // The shared cluster's evaluation jobs wait behind the pre-training under fifo; EASY
  // backfilling starts them in the gaps.
  tools::SweepSpec spec;
  spec.scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/shared-cluster.yaml";
  spec.replications = 3;
  spec.params = {{"scheduler.policy", {"fifo", "backfill"}, false, "--param", {}, {}}};
  const config::Json fifo_row = tools::run_point(spec, 0);
  const config::Json& fifo = fifo_row["results"];
  const config::Json backfill = tools::run_point(spec, 1)["results"];
  REQUIRE(fifo.contains("mean_queue_wait_s"));
  CHECK(fifo["mean_queue_wait_s"].get<double>() > 2.0 * backfill["mean_queue_wait_s"].get<double>());
  CHECK(fifo["utilisation"].get<double>() > 0.0);
  CHECK(fifo["utilisation"].get<double>() <= 1.0);
  CHECK(fifo["jobs_never_started"] == 0);
  CHECK(fifo["checkpoint_gpu_hours"].get<double>() > 0.0);
  REQUIRE(fifo_row["jobs"].size() > 1);  // every job's figures, beside the first's columns
  CHECK(fifo_row["jobs"][1].contains("queue_wait_s"));
  CHECK(fifo_row["jobs"][1].contains("end_s"));
}

TEST_CASE("compare: the best value of a row, by its direction") {
  tools::CompareRow lower{"step time", "step_time_s", "s", tools::Better::lower, {2.0, 1.0, std::nullopt, 1.0}, {}};
  tools::mark_best(lower);
  CHECK(lower.best == std::vector<bool>{false, true, false, true});  // ties are all best
  tools::CompareRow higher{"MFU", "mfu", "fraction", tools::Better::higher, {0.4, 0.5}, {}};
  tools::mark_best(higher);
  CHECK(higher.best == std::vector<bool>{false, true});
  tools::CompareRow alone{"MFU", "mfu", "fraction", tools::Better::higher, {0.4, std::nullopt}, {}};
  tools::mark_best(alone);  // nothing to compare against
  CHECK(alone.best == std::vector<bool>{false, false});
  tools::CompareRow none{"GPUs", "gpus", "count", tools::Better::none, {8.0, 16.0}, {}};
  tools::mark_best(none);
  CHECK(none.best == std::vector<bool>{false, false});
  // 1.5 us apart, both printed "5.615 s": both best; 5.616 s too (0.013% slower, within
  // kTieShare); 5.62 s (0.084%) is not.
  tools::CompareRow close{"step time", "step_time_s", "s", tools::Better::lower, {5.6152836, 5.6152851, 5.616, 5.62}, {}};
  tools::mark_best(close);
  CHECK(close.best == std::vector<bool>{true, true, true, false});
  // One figure in two units marks the same designs when within kTieShare: 2.9e-4 apart,
  // "2.445 USD" twice, "38.14" and "38.15 MUSD" (the second row marked only the first).
  tools::CompareRow per_token{"USD per million tokens", "usd_per_million_tokens", "USD", tools::Better::lower,
                              {2.444579, 2.445295}, {}};
  tools::CompareRow total{"total cost", "total_cost_usd", "USD", tools::Better::lower, {38135439.0, 38146600.0}, {}};
  tools::mark_best(per_token);
  tools::mark_best(total);
  CHECK(per_token.best == std::vector<bool>{true, true});
  CHECK(total.best == per_token.best);
  // Intervals alone mark nothing: the designs share their failure draws, so two intervals
  // that overlap do not make two values alike.
  tools::CompareRow noisy{"ETTR", "ettr", "fraction", tools::Better::higher, {0.9050, 0.9059, 0.890}, {},
                          {0.006, 0.006, 0.006}};
  tools::mark_best(noisy);
  CHECK(noisy.best == std::vector<bool>{false, true, false});
  // The replications, paired: the first design's differences from the best (-0.005, -0.005,
  // +0.005, -0.001: mean -0.0015, 95% half-width 3.18 x 0.0047 / 2 = 0.0075) hold 0; the
  // third's (-0.1 each time) do not, nor does a design without samples.
  noisy.values = {0.9045, 0.906, 0.806};
  noisy.samples = {{0.895, 0.905, 0.925, 0.893}, {0.90, 0.91, 0.92, 0.894}, {0.80, 0.81, 0.82, 0.794}};
  tools::mark_best(noisy);
  CHECK(noisy.best == std::vector<bool>{true, true, false});
  noisy.samples = {{}, {0.90, 0.91, 0.92, 0.894}, {0.80, 0.81, 0.82, 0.794}};
  tools::mark_best(noisy);
  CHECK(noisy.best == std::vector<bool>{false, true, false});
}

TEST_CASE("compare --ecmp-seeds: each hashed design shows its run of median step time, and the spread") {
  // Llama 3 405B on 16,384 GPUs over a hashed 3-tier Clos: the step depends on the draw of
  // ECMP collisions. The same scenario routed by destination has no draw to make.
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-16k.yaml";
  std::vector<double> steps;
  for (int k = 0; k < 3; ++k) {
    scenario::LoadOptions o;
    o.sets = {"network.model=analytical", fmt::format("fabric.ecmp_seed={}", k)};
    steps.push_back(tools::compute_run(scenario::load_scenario(file, o)).jobs.at(0).step_time_s);
  }
  std::vector<double> sorted = steps;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(sorted.front() < sorted.back());  // the draws differ, or the test shows nothing

  tools::CompareArgs args;
  args.files = {file};
  args.sets = {"network.model=analytical"};
  args.ecmp_seeds = 3;
  const tools::Comparison c = tools::compare(args);
  const auto row = [&](std::string_view key) {
    const auto it = std::find_if(c.rows.begin(), c.rows.end(), [&](const tools::CompareRow& r) { return r.key == key; });
    REQUIRE(it != c.rows.end());
    return *it;
  };
  CHECK(*row("step_time_s").values[0] == sorted[1]);
  CHECK(*row("step_time_min_s").values[0] == sorted[0]);
  CHECK(*row("step_time_max_s").values[0] == sorted[2]);
  REQUIRE(c.ecmp_seed.at(0));
  CHECK(steps.at(static_cast<std::size_t>(*c.ecmp_seed[0])) == sorted[1]);

  // Routed by destination: one run, no seed, no spread (no fastest and slowest seed: it
  // printed its one step as both).
  args.sets.push_back("fabric.path_selection=destination");
  const tools::Comparison d = tools::compare(args);
  CHECK(!d.ecmp_seed.at(0));
  const auto spread_of = [&](std::string_view key) {
    const auto it = std::find_if(d.rows.begin(), d.rows.end(), [&](const tools::CompareRow& r) { return r.key == key; });
    return it == d.rows.end() || it->values.empty() ? std::optional<double>() : it->values[0];
  };
  CHECK(!spread_of("step_time_min_s"));
  CHECK(!spread_of("step_time_max_s"));
  const auto step = std::find_if(d.rows.begin(), d.rows.end(), [](const tools::CompareRow& r) { return r.key == "step_time_s"; });
  REQUIRE(step != d.rows.end());
  CHECK(step->values[0]);
}

TEST_CASE("compare: the breakdown plot's data has one row per design, a sweep block's points included") {
  // Eight designs from one file: the plot's rows had been one per file, the base scenario's
  // step under the first point's name.
  tools::CompareArgs args;
  args.files = {std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/sweep_block.yaml"};
  const tools::Comparison c = tools::compare(args);
  REQUIRE(c.names.size() == 8);
  const std::string csv = tools::compare_breakdown_csv(c);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 9);  // the header and 8 designs
  const auto step = std::find_if(c.rows.begin(), c.rows.end(), [](const tools::CompareRow& r) { return r.key == "step_time_s"; });
  REQUIRE(step != c.rows.end());
  for (std::size_t i = 0; i < c.names.size(); ++i) {
    REQUIRE(c.steps.at(i));
    CHECK(c.steps[i]->step_time_s == *step->values[i]);
    CHECK(csv.find(fmt::format("{},train,{},", c.names[i], c.steps[i]->step_time_s)) != std::string::npos);
  }
}

TEST_CASE("EASY backfill does not start the head job later than FIFO when a node is in repair") {
  // The head job needs every node; while one is in repair its reservation counts the node's
  // return (after the mean replace time). Without that it had none, a 26 h job backfilled
  // ahead of it, and it started 15 h later than under FIFO (means over 20 replications).
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/backfill_repair.yaml";
  const auto head_start = [&](const char* policy) {
    scenario::LoadOptions o;
    o.sets = {fmt::format("scheduler.policy={}", policy)};
    const tools::RunResult r = tools::compute_run(scenario::load_scenario(file, o));
    REQUIRE(r.reliability);
    return r.reliability->jobs.at(1).start_s.mean;
  };
  const double fifo = head_start("fifo");
  const double backfill = head_start("backfill");
  CHECK(fifo > 8 * 3600.0);  // B waits for A: the case tests something
  CHECK(backfill <= fifo * 1.02);
}

TEST_CASE("run_info counts the engine events scheduled, not only those processed") {
  // A training step and a long run: every processed event was scheduled, and a long run
  // cancels some (a finish a failure pre-empts), so it schedules more than it processes.
  // events_scheduled was written to JSON and never set: 0 beside thousands processed.
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/backfill_repair.yaml";
  const tools::RunResult r = tools::compute_run(scenario::load_scenario(file, {}));
  REQUIRE(r.reliability);
  CHECK(r.info.events_processed > 0);
  CHECK(r.info.events_scheduled >= r.info.events_processed);
  CHECK(r.reliability->events_scheduled > r.reliability->events);
  CHECK(r.info.events_scheduled ==
        r.reliability->events_scheduled + std::accumulate(r.jobs.begin(), r.jobs.end(), std::uint64_t{0},
                                                          [](std::uint64_t s, const auto& j) { return s + j.events_scheduled; }));
}
