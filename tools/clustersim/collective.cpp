#include "tools/clustersim/collective.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace clustersim::tools {

std::vector<std::int64_t> first_ranks(std::int64_t n) {
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  return ranks;
}

double float_unit(network::Op op, std::int64_t ranks) {
  const bool per_rank = op == network::Op::all_gather || op == network::Op::reduce_scatter || op == network::Op::all_to_all;
  return 4.0 * (per_rank ? static_cast<double>(ranks) : 1.0);
}

double buffer_bytes_per_rank(network::Op op, std::int64_t ranks, double size) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case network::Op::all_gather: return size / n + size;      // its share in, the whole out
    case network::Op::reduce_scatter: return size + size / n;  // the whole in, its share out
    case network::Op::send_recv: return 2.0 * size;            // every rank sends and receives
    default: return 2.0 * size;                                 // all_reduce, broadcast, all_to_all
  }
}

namespace {
std::string too_many_flows(network::Op op, network::Algorithm algo, std::size_t ranks, std::size_t transfers) {
  return fmt::format("{} {} on {} ranks puts {} transfers on the fabric at once; the flow model (--model flow) runs "
                     "each as a flow and supports at most {}, as memory and time grow with them: use --model analytical",
                     config::enum_name(algo), config::enum_name(op), ranks, transfers, network::kMaxFlowTransfers);
}
}  // namespace

bool time_collective(const fabric::Fabric& fab, const network::NetworkConfig& cfg, network::Op op,
                     const std::vector<std::int64_t>& ranks, sim::Bytes size, network::Algorithm algo,
                     CollectiveTiming& out, std::string& why) {
  // A direct all-to-all's n(n-1) transfers beyond the flow model's limit are refused before
  // they are planned (planning 4,096 ranks' alone took 7 s and 2 GB); under auto the
  // hierarchical one runs instead where it can.
  const auto n = static_cast<std::size_t>(ranks.size());
  const bool automatic = algo == network::Algorithm::automatic;
  if (cfg.model == network::Model::flow && op == network::Op::all_to_all && n * (n - 1) > network::kMaxFlowTransfers &&
      (algo == network::Algorithm::direct || algo == network::Algorithm::automatic)) {
    const std::vector<network::Algorithm> allowed = network::algorithms_for(op, ranks, fab.gpus_per_node);
    if (algo == network::Algorithm::direct ||
        std::find(allowed.begin(), allowed.end(), network::Algorithm::hierarchical) == allowed.end()) {
      why = too_many_flows(op, network::Algorithm::direct, n, n * (n - 1));
      return false;
    }
    algo = network::Algorithm::hierarchical;
    out.note = fmt::format("--algo auto, --model flow: a direct {} on {} ranks would put {} transfers on the fabric "
                           "at once, past the flow model's {}: the hierarchical one ran, whichever is faster (--model "
                           "analytical chooses among both)",
                           config::enum_name(op), n, n * (n - 1), network::kMaxFlowTransfers);
  }
  if (algo == network::Algorithm::automatic) algo = network::choose_algorithm(fab, cfg, op, ranks, size);
  network::Schedule schedule;
  const network::InNetwork in = network::in_network(fab, cfg);
  if (!network::plan(op, algo, ranks, size, fab.gpus_per_node, in, schedule, why)) {
    if (automatic) {
      // auto found none that plans: say why of each (the first candidate's reason alone
      // read as if that algorithm had been asked for).
      std::vector<std::string> each;
      for (const network::Algorithm a : network::algorithms_for(op, ranks, fab.gpus_per_node, in)) {
        std::string because;
        if (!network::plan(op, a, ranks, size, fab.gpus_per_node, in, schedule, because)) {
          each.push_back(fmt::format("{}: {}", config::enum_name(a), because));
        }
      }
      why = fmt::format("no {} algorithm can be planned on {} ranks ({})", config::enum_name(op), n,
                        fmt::join(each, "; "));
    }
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
