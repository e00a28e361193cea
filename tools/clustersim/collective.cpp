#include "tools/clustersim/collective.hpp"

#include <utility>

#include <fmt/format.h>

namespace clustersim::tools {

std::vector<std::int64_t> first_ranks(std::int64_t n) {
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  return ranks;
}

bool time_collective(const fabric::Fabric& fab, const network::NetworkConfig& cfg, network::Op op,
                     const std::vector<std::int64_t>& ranks, sim::Bytes size, network::Algorithm algo,
                     CollectiveTiming& out, std::string& why) {
  if (algo == network::Algorithm::automatic) algo = network::choose_algorithm(fab, cfg, op, ranks, size);
  network::Schedule schedule;
  if (!network::plan(op, algo, ranks, size, fab.gpus_per_node, network::in_network(fab, cfg), schedule, why)) {
    return false;
  }
  if (cfg.model == network::Model::flow && network::most_transfers(schedule) > network::kMaxFlowTransfers) {
    why = fmt::format("{} {} on {} ranks puts {} transfers on the fabric at once; the flow model runs each as a flow "
                      "and supports at most {} (memory and time grow with them): use --model analytical",
                      config::enum_name(algo), config::enum_name(op), ranks.size(), network::most_transfers(schedule),
                      network::kMaxFlowTransfers);
    return false;
  }
  network::LinkLoad load;
  const sim::Time t = cfg.model == network::Model::flow ? network::flow_time(fab, cfg, schedule, &load)
                                                        : network::analytical_time(fab, cfg, schedule, &load);
  out.algorithm = algo;
  out.time = t;
  out.algbw_GBps = size.value() / t.seconds() / 1e9;
  out.busbw_GBps = out.algbw_GBps * network::bus_factor(op, static_cast<std::int64_t>(ranks.size()));
  out.load = std::move(load);
  return true;
}

}  // namespace clustersim::tools
