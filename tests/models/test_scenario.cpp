// Scenario loading end to end: the built-in catalog and scenario, overrides, inventory
// arithmetic, determinism of the resolved scenario.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "models/cluster/cluster.hpp"
#include "models/scenario/scenario.hpp"

using namespace clustersim;
using clustersim::test::Rel;

namespace {
const std::string kSource = CLUSTERSIM_SOURCE_DIR;
}

TEST_CASE("the built-in catalog decodes cleanly and every entry cites a source") {
  scenario::LoadedScenario s = scenario::load_default_scenario({});
  const std::vector<std::string> gpus{"a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm", "h200-sxm",
                                      "b200",          "gb200",         "mi300x"};
  const std::vector<std::string> nodes{"dgx-a100", "dgx-a100-40gb", "dgx-h100",
                                       "dgx-h200", "hgx-b200",      "gb200-nvl72"};
  for (const auto& g : gpus) {
    CAPTURE(g);
    REQUIRE(s.catalog.gpus.count(g) == 1);
    const auto& spec = s.catalog.gpus.at(g);
    CHECK_FALSE(spec.source.empty());
    CHECK(spec.peak_flops.bf16.has_value());
    CHECK(spec.hbm_capacity.value() > 0);
  }
  for (const auto& n : nodes) {
    CAPTURE(n);
    REQUIRE(s.catalog.nodes.count(n) == 1);
    CHECK_FALSE(s.catalog.nodes.at(n).source.empty());
    CHECK(s.catalog.gpus.count(s.catalog.nodes.at(n).gpu.name) == 1);
  }
  // Datasheet spot checks (NVIDIA H100 datasheet): 989.4 TFLOPS dense BF16, 80 GB, 700 W.
  const auto& h100 = s.catalog.gpus.at("h100-sxm");
  CHECK(h100.peak_flops.bf16->value() == Rel(989.4e12));
  CHECK(h100.hbm_capacity.value() == 80e9);
  CHECK(h100.tdp.value() == 700.0);
  CHECK(s.catalog.nodes.at("gb200-nvl72").gpus == 72);
}

TEST_CASE("inventory = node count x per-node figures") {
  scenario::LoadedScenario s = scenario::load_default_scenario({{"cluster.nodes=2048"}, std::nullopt});
  const cluster::Inventory inv = cluster::make_inventory(s.node, s.config.cluster.nodes);
  // 2048 DGX H100 nodes x 8 GPUs = 16,384 GPUs; x 80 GB = 1.31072 PB; x 700 W + 2048 x 4600 W.
  CHECK(inv.gpus == 16384);
  CHECK(inv.nics == 16384);
  CHECK(inv.hbm_total.value() == Rel(16384 * 80e9));
  CHECK(inv.gpu_power.value() == Rel(16384 * 700.0));
  CHECK(inv.it_power.value() == Rel(16384 * 700.0 + 2048 * 4600.0));
  CHECK(inv.peak_flops_total.at("bf16").value() == Rel(16384 * 989.4e12));
  // 16,384 NICs x 400 Gb/s / 8 = 819.2 TB/s
  CHECK(inv.scaleout_bandwidth_total.value() == Rel(819.2e12));
}

TEST_CASE("an inline node takes the GPU's scale-up bandwidth unless it sets its own") {
  scenario::LoadedScenario s = scenario::load_default_scenario(
      {{"cluster.node={gpu: a100-sxm-80gb, gpus: 4, nics: 2, nic_bandwidth: 200Gbps}"}, std::nullopt});
  CHECK(s.node.name == "inline");
  CHECK(s.node.gpu_name == "a100-sxm-80gb");
  CHECK(s.node.scaleup_bandwidth.value() == Rel(300e9));
  CHECK(cluster::make_inventory(s.node, s.config.cluster.nodes).gpus == 64);
}

TEST_CASE("extends, then the file, then --set, then --seed") {
  const std::string path = kSource + "/tests/config_errors/../../scenarios/quickstart.yaml";
  scenario::LoadedScenario s = scenario::load_scenario(path, {{"cluster.nodes=4", "cluster.nodes=5"}, 99});
  CHECK(s.config.cluster.nodes == 5);
  CHECK(s.config.simulation.seed == 99);
}

TEST_CASE("anchors and aliases repeat a value; an alias inside its own anchor is an error, not a loop") {
  const scenario::LoadedScenario s = scenario::load_scenario(kSource + "/tests/scenarios/aliases.yaml", {});
  REQUIRE(s.config.workload.jobs.size() == 2);
  CHECK(s.config.workload.jobs[1].parallelism.tp == 8);
  CHECK(s.config.workload.jobs[1].parallelism.dp == 4);
  config::LoadState state;
  CHECK(config::check_aliases("a: &x [1, 2]\nb: [*x, *x]\n", "f.yaml", state));
  CHECK_FALSE(config::check_aliases("a: &x [1, *x]\n", "f.yaml", state));
  REQUIRE(state.diagnostics.items().size() == 1);
  CHECK(state.diagnostics.items()[0].where.line == 1);
  CHECK(state.diagnostics.items()[0].where.column == 11);  // the star
  // Seven levels of ten aliases: 10^7 nodes, past the limit, found without expanding them.
  std::string bomb = "l0: &l0 x\n";
  for (int i = 1; i <= 7; ++i) {
    bomb += fmt::format("l{0}: &l{0} [*l{1}", i, i - 1);
    for (int k = 1; k < 10; ++k) bomb += fmt::format(", *l{}", i - 1);
    bomb += "]\n";
  }
  CHECK_FALSE(config::check_aliases(bomb, "f.yaml", state));
  CHECK(state.diagnostics.items().size() == 2);
}

TEST_CASE("a file that extends itself through a link to a folder is a cycle, said at once") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("clustersim_test_extends_link_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "x.yaml") << "extends: sub/x.yaml\ncluster: {node: dgx-h100, nodes: 2}\n";
  fs::create_directory_symlink(".", dir / "sub");
  try {
    scenario::load_scenario((dir / "x.yaml").string(), {});
    FAIL("expected an InputError");
  } catch (const config::InputError& e) {
    REQUIRE(e.diagnostics().items().size() == 1);
    const config::Diagnostic& d = e.diagnostics().items()[0];
    CHECK(d.path == "extends");
    CHECK(d.message.find("extends itself through a cycle") != std::string::npos);
    CHECK(d.where.file == (dir / "x.yaml").string());  // the first file, not one 40 links deep
  }
  fs::remove_all(dir);
}

TEST_CASE("errors are thrown together as InputError") {
  try {
    scenario::load_default_scenario({{"cluster.nodes=0", "simulation.seed=-1", "cluster.node=dgx-h100"}, std::nullopt});
    FAIL("expected an InputError");
  } catch (const config::InputError& e) {
    CHECK(e.diagnostics().items().size() == 2);
    CHECK(e.diagnostics().items()[0].path == "cluster.nodes");
    CHECK(e.diagnostics().items()[1].path == "simulation.seed");
  }
}

TEST_CASE("the resolved scenario is the same on every load") {
  const auto a = config::to_json(scenario::load_default_scenario({}).config).dump();
  const auto b = config::to_json(scenario::load_default_scenario({}).config).dump();
  CHECK(a == b);
  CHECK(a.find("\"node\":\"dgx-h100\"") != std::string::npos);
}

TEST_CASE("the quickstart file and the built-in default are the same scenario") {
  const auto file = config::to_json(scenario::load_scenario(kSource + "/scenarios/quickstart.yaml", {}).config);
  const auto builtin = config::to_json(scenario::load_default_scenario({}).config);
  CHECK(file == builtin);
}

TEST_CASE("count expands a job into named copies; jobs that do not fit together queue") {
  // 16 nodes of 8 GPUs: a 96-GPU job and 6 one-node copies need 144 GPUs, more than 128:
  // they queue. Nominal placements follow one another and wrap back to GPU 0.
  scenario::LoadedScenario s = scenario::load_default_scenario(
      {{"workload.jobs=[{name: big, model: llama3-8b, gpus: 96, parallelism: {tp: 8, dp: 12}, global_batch: 96},"
        " {name: hp, model: llama3-8b, gpus: 8, parallelism: {tp: 8}, global_batch: 8, count: 6}]",
        "simulation.horizon=1d"},
       std::nullopt});
  REQUIRE(s.jobs.size() == 7);
  CHECK(s.jobs[0].config.name == "big");
  CHECK(s.jobs[1].config.name == "hp-0");
  CHECK(s.jobs[6].config.name == "hp-5");
  CHECK(s.jobs[6].entry == 1);
  CHECK(s.jobs[6].copy == 5);
  // big on GPUs 0-95; hp-0 .. hp-3 on 96-127; hp-4 wraps to 0, hp-5 follows at 8.
  CHECK(s.jobs[4].first_gpu == 120);
  CHECK(s.jobs[5].first_gpu == 0);
  CHECK(s.jobs[6].first_gpu == 8);
  CHECK(scenario::jobs_queue(s));
  // Without the last two copies everything fits at once: no queue.
  scenario::LoadedScenario fits = scenario::load_default_scenario(
      {{"workload.jobs=[{name: big, model: llama3-8b, gpus: 96, parallelism: {tp: 8, dp: 12}, global_batch: 96},"
        " {name: hp, model: llama3-8b, gpus: 8, parallelism: {tp: 8}, global_batch: 8, count: 4}]"},
       std::nullopt});
  CHECK_FALSE(scenario::jobs_queue(fits));
}

TEST_CASE("fabric.ecmp_seed reaches the fabric; where nothing is hashed it is refused, or dropped when inherited") {
  CHECK(scenario::load_default_scenario({}).fabric->ecmp_seed == 0);
  CHECK(scenario::load_default_scenario({{"fabric.ecmp_seed=5"}, std::nullopt}).fabric->ecmp_seed == 5);
  const std::string file = kSource + "/tests/scenarios/ecmp_seed.yaml";
  CHECK(scenario::load_scenario(file, {}).fabric->ecmp_seed == 4);
  // The file's seed, under a torus chosen on the command line: dropped, like the Clos keys.
  const scenario::LoadedScenario torus =
      scenario::load_scenario(file, {{"fabric.topology=torus", "fabric.dims=[4, 4]"}, std::nullopt});
  CHECK(torus.config.fabric->ecmp_seed == 0);
  CHECK(torus.fabric->ecmp_seed == 0);
  // Written beside the torus: an error at the key.
  try {
    scenario::load_default_scenario(
        {{"fabric.topology=torus", "fabric.dims=[4, 4]", "fabric.ecmp_seed=2"}, std::nullopt});
    FAIL("expected an InputError");
  } catch (const config::InputError& e) {
    REQUIRE(e.diagnostics().items().size() == 1);
    CHECK(e.diagnostics().items()[0].path == "fabric.ecmp_seed");
    CHECK(e.diagnostics().items()[0].message == "does not apply to a torus fabric");
  }
  // A Valiant dragonfly hashes its intermediate group: the seed applies.
  const scenario::LoadedScenario valiant = scenario::load_default_scenario(
      {{"fabric.topology=dragonfly", "fabric.routers_per_group=4", "fabric.hosts_per_router=4",
        "fabric.global_links_per_router=2", "fabric.routing=valiant", "fabric.ecmp_seed=7"},
       std::nullopt});
  CHECK(valiant.fabric->ecmp_seed == 7);
}
