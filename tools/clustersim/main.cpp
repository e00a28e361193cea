// clustersim: the command line.
//
// Exit codes: 0 success; 2 bad input (scenario errors, bad options, unwritable output),
// reported as diagnostics with nothing written; 3 an internal error (a bug: please report it).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "models/config/diagnostics.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/check.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/version.hpp"

namespace {

using namespace clustersim;

constexpr int kExitInput = 2;
constexpr int kExitInternal = 3;

struct ScenarioArgs {
  std::string file;  // empty: the built-in quickstart
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
};

void add_scenario_options(CLI::App& cmd, ScenarioArgs& args, bool file_optional) {
  auto* opt = cmd.add_option("scenario", args.file,
                             file_optional ? "scenario YAML file (default: the built-in quickstart)"
                                           : "scenario YAML file");
  if (!file_optional) opt->required();
  cmd.add_option("--set", args.sets, "override a key: --set cluster.nodes=128 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd.add_option("--seed", args.seed, "override simulation.seed");
}

scenario::LoadedScenario load(const ScenarioArgs& args) {
  const scenario::LoadOptions options{args.sets, args.seed};
  return args.file.empty() ? scenario::load_default_scenario(options) : scenario::load_scenario(args.file, options);
}

int report_input_error(const config::InputError& e) {
  const auto& items = e.diagnostics().items();
  std::cerr << e.diagnostics().format();
  std::cerr << fmt::format("{} error{}; nothing was run.\n", items.size(), items.size() == 1 ? "" : "s");
  return kExitInput;
}

int cmd_run(const ScenarioArgs& args, const std::string& format, const std::string& out_dir) {
  const auto start = std::chrono::steady_clock::now();
  const scenario::LoadedScenario loaded = load(args);
  tools::RunInfo info;
  // No model schedules events yet: the run is the resolved inventory.
  info.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const config::Json doc = tools::result_document(loaded, info);
  if (!out_dir.empty()) {
    const std::string err = tools::write_file_atomically(out_dir + "/results.json", doc.dump(2) + "\n");
    if (!err.empty()) {
      std::cerr << "error: " << err << "\n";
      return kExitInput;
    }
  }
  if (format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << tools::result_csv(loaded);
  } else {
    std::cout << tools::result_table(loaded, info);
    if (!out_dir.empty()) std::cout << fmt::format("results written to {}/results.json\n", out_dir);
  }
  return 0;
}

int cmd_check(const ScenarioArgs& args) {
  const scenario::LoadedScenario loaded = load(args);
  std::cout << fmt::format("{}: OK ({} nodes of {}, {} GPUs)\n", loaded.file, loaded.config.cluster.nodes,
                           loaded.node.name, loaded.config.cluster.nodes * loaded.node.spec.gpus);
  return 0;
}

int cmd_topology(const ScenarioArgs& args, const std::string& format) {
  const scenario::LoadedScenario loaded = load(args);
  if (!loaded.fabric) {
    std::cerr << fmt::format("{}: the scenario has no fabric section; add one, e.g.\n"
                             "  fabric: {{topology: fat_tree, radix: 64, link_latency: 700ns}}\n",
                             loaded.file);
    return kExitInput;
  }
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
  const fabric::FabricMetrics m = fabric::measure(*loaded.fabric, loaded.pricing);
  if (format == "json") {
    std::cout << fabric::to_json(m).dump(2) << "\n";
  } else {
    std::cout << tools::topology_table(loaded, m);
  }
  return 0;
}

int cmd_describe(const std::string& section, const std::string& format) {
  std::vector<config::FieldDoc> docs;
  if (format == "markdown") {
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
    std::cerr << fmt::format("error: no section '{}'; sections are {}{}\n", section, fmt::join(names, ", "),
                             near ? fmt::format(" (did you mean '{}'?)", *near) : std::string());
    return kExitInput;
  }
  std::cout << tools::reference_text(docs);
  return 0;
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
  CLI::App* run = app.add_subcommand("run", "run a scenario and report its results");
  add_scenario_options(*run, run_args, true);
  run->add_option("--format", run_format, "output on stdout")->check(CLI::IsMember({"table", "json", "csv"}));
  run->add_option("--out", out_dir, "also write results.json (atomically) into this folder");
  run->footer(
      "Examples:\n"
      "  clustersim run\n"
      "  clustersim run scenarios/quickstart.yaml --seed 7 --out out/\n"
      "  clustersim run scenarios/quickstart.yaml --set cluster.node=dgx-a100 --format csv");

  ScenarioArgs check_args;
  CLI::App* check = app.add_subcommand("check", "validate a scenario without running it");
  add_scenario_options(*check, check_args, false);
  check->footer("Example:\n  clustersim check scenarios/quickstart.yaml --set cluster.nodes=2048");

  ScenarioArgs topo_args;
  std::string topo_format = "table";
  CLI::App* topology = app.add_subcommand("topology", "build a scenario's fabric and report its size, hops, "
                                                      "bisection bandwidth, cost and power");
  add_scenario_options(*topology, topo_args, false);
  topology->add_option("--format", topo_format, "table, json, or dot (Graphviz, small fabrics)")
      ->check(CLI::IsMember({"table", "json", "dot"}));
  topology->footer(
      "Examples:\n"
      "  clustersim topology scenarios/quickstart.yaml\n"
      "  clustersim topology scenarios/quickstart.yaml --set fabric.topology=fat_tree --format json\n"
      "  clustersim topology scenarios/quickstart.yaml --format dot | dot -Tsvg > fabric.svg");

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitInput;
  }

  try {
    if (*run) return cmd_run(run_args, run_format, out_dir);
    if (*check) return cmd_check(check_args);
    if (*topology) return cmd_topology(topo_args, topo_format);
    if (*describe) return cmd_describe(section, describe_format);
  } catch (const config::InputError& e) {
    return report_input_error(e);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const clustersim::sim::InternalError& e) {
    std::cerr << e.what() << "\nThis is a bug in clustersim; please report it with the scenario.\n";
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\nThis is a bug in clustersim; please report it with the scenario.\n";
  }
  return kExitInternal;
}
