// What a cluster costs to buy and to run: capex by category, energy opex at the GPUs'
// utilisation, straight-line depreciation, $/GPU-hour, peak facility power, rack power
// density, and the cost of a training run.
//
// Inputs: N nodes of G GPUs, and S hot spare nodes beside them (scheduler.spare_nodes,
// models/reliability/config.hpp) (TDP P_gpu each; host power P_host per node, everything but the
// GPUs at load, models/hardware/catalog.yaml), the fabric's priced parts
// (models/fabric/metrics.hpp), the node's price (below), the fleet-average GPU busy share u,
// and the scenario's `economics:` section (models/cost/config.hpp, defaults sourced there).
//
// Node price, in this order: economics.node_price; the priced table's server entry for the
// catalog node type (models/fabric/pricing.yaml `servers:`); G x (GPU price + host parts per
// GPU) from its `gpus:` and `host_per_gpu` entries; otherwise the servers are not priced
// and neither is anything that needs the capex. A server price includes its scale-out NICs
// unless its entry says includes_nics: false (then the fabric's NIC line is bought too).
//
// Capex (USD):
//   C_servers = N x price_node            (split into GPUs N G price_gpu and hosts, the rest,
//                                          when the GPU price is known)
//   C_network = sum of the fabric's lines: switches, transceivers, cables, and NICs only
//               when the servers do not include them
//   C_spares  = S x price_node            (category "spares": the hot spares, bought like
//                                          the cluster's nodes)
//   C_spares_network = S / N x C_network  (category "spares_network": a hot spare sits on the
//                                          fabric to take a failed node's place; the fabric
//                                          is built for the N nodes, so the spares' ports,
//                                          optics and cables are its share per node, an
//                                          ESTIMATE; their switch power is not added)
//   C = C_servers + C_spares + C_network + C_spares_network + economics.other_capex
// Power (W), at busy share u (0 idle, 1 every GPU computing all the time):
//   P_gpus(u)  = N G P_gpu (f_g + (1 - f_g) u)         f_g = economics.gpu_idle_fraction
//   P_hosts(u) = N P_host (f_h + (1 - f_h) u)          f_h = economics.host_idle_fraction
//   P_net      = switches + transceivers + cables, constant: a switch's power barely moves
//                with its traffic (Mahadevan et al., 'A Power Benchmarking Framework for
//                Network Devices', IFIP Networking 2009). NICs are not added when the node
//                has a host power: the catalog's includes them (system rating minus GPUs);
//                a node without one (P_host = 0) gets its NICs' power here.
//   P_spares   = S (G P_gpu f_g + P_host f_h), constant: a hot spare is powered on and idle
//   P_IT(u) = P_gpus + P_hosts + P_spares + P_net;   P_facility(u) = PUE x P_IT(u)
//   peak facility power = PUE x P_IT(1)   (the spares still idle)
// Energy and opex, with Y = 8,766 h (365.25 d) a year and price p per kWh:
//   E_year = P_facility(u) x Y;   opex = E_year x p
// Depreciation, straight line over the life L years, no residual value:
//   D = C / L;   cost per year = D + opex;   TCO = C + L x opex
//   $/GPU-hour = (D + opex) / (N G Y)    (the spares' cost is carried by the N G GPUs that
//                                         serve jobs)
// Racks: R = ceil((N + S) / nodes_per_rack); rack power density = nodes_per_rack x (G P_gpu +
// P_host, plus the node's NICs when P_host = 0), the IT power of a full rack at peak (kW per
// rack).
// Training run of a job on g GPUs for a time to train T (from the failure model's ETTR when
// the scenario has failures, else train_tokens / throughput), with its train_tokens K:
//   GPU-hours H = g T / 3600;   cost = H x $/GPU-hour;   cost per 1e6 tokens = cost / (K / 1e6)
//   energy = (g / (N G)) x P_facility(u) x T   (the job's share of the facility's draw)
// The fleet-average busy share u (of the N G GPUs; spares apart) is, by default, with
// u_j = (compute + compute slowed by overlapped collectives + optimizer) / step time of job
// j's critical stage (exposed communication and pipeline bubbles count as idle):
//   - when the long run has a schedule (a job queue or failures: models/reliability/
//     longrun.hpp), u = U x sum_j w_j u_j / sum_j w_j, where U is the schedule's utilisation
//     (busy GPU-hours / available GPU-hours) and w_j = g_j x (end_j - start_j) the GPU-time
//     job j spans (end_j: its finish, or the end of the run; 0 for a job that never starts),
//     so jobs queued behind others are not counted as running at once;
//   - else sum_j g_j u_j / (N G), every job running at once;
// GPUs in no job are idle; with no job at all the cluster is taken at full load (u = 1);
// economics.utilization overrides it.
//
// LIMITATIONS: list/street prices of one date (no volume discount, support contract, staff,
// facility construction or lease, storage or software unless put in other_capex); a busy GPU
// draws its TDP, an upper bound (an 8-GPU H100 node measured at most 8.4 kW of its 10.2 kW
// rating while training: Latif et al., 'Empirical Measurements of AI Training Power Demand on
// a GPU-Accelerated Node', arXiv 2412.08602, 2024), so opex and peak power lean high; power is
// linear in the busy share; without a schedule it does not see the failure model's downtime
// (GPUs of a stopped job draw as if training), with one the weights w_j span a job's
// downtime too; spares are priced as whole nodes with no fabric ports, optics or cables; NIC-side optics may also be in the host's rating (at most 8 x 8 W
// per DGX H100, 0.6%); the training cost charges the job's GPU-hours at the cluster's
// average $/GPU-hour (GPUs outside the job pay for themselves).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/config/decode.hpp"
#include "models/cost/config.hpp"
#include "models/fabric/metrics.hpp"
#include "models/fabric/pricing.hpp"
#include "sim/units.hpp"

namespace clustersim::cost {

inline constexpr double kHoursPerYear = 8766.0;  ///< 365.25 days

/// How one node is priced (see the header).
struct NodePricing {
  std::optional<sim::Money> node_price;
  std::optional<sim::Money> gpu_price;  ///< to split servers into GPUs and hosts
  bool includes_nics = true;
  std::int64_t nodes_per_rack = 1;
  std::string basis;     ///< where node_price came from, for people
  std::string unpriced;  ///< why there is no node_price
};

/// Resolves the node's price and rack count: economics overrides, then the table's server
/// entry for `node_name`, then G x (the table's `gpu_name` price + host_per_gpu).
NodePricing price_node(const std::string& node_name, const std::string& gpu_name, std::int64_t gpus_per_node,
                       const fabric::PricingTable& table, const EconomicsConfig& economics);

struct CostInputs {
  std::int64_t nodes = 0;        ///< serving jobs
  std::int64_t spare_nodes = 0;  ///< hot spares beside them (idle)
  std::int64_t gpus_per_node = 0;
  sim::Power gpu_tdp;
  sim::Power host_power;  ///< per node, at load
  NodePricing node;
  const fabric::FabricMetrics* fabric = nullptr;  ///< none: the scenario has no fabric
  double utilization = 1.0;                       ///< fleet-average GPU busy share, 0..1
  std::string utilization_basis;                  ///< for people: where u came from
  EconomicsConfig economics;
};

struct CapexLine {
  std::string category;  ///< gpus, hosts, servers, spares, switches, nics, transceivers, cables, spares_network, other
  std::string item;      ///< the priced class or basis
  std::int64_t count = 0;
  sim::Money capex;
};

struct PowerSplit {
  sim::Power gpus;
  sim::Power hosts;
  sim::Power spares;  ///< the idle hot spares
  sim::Power network;
  sim::Power it;        ///< gpus + hosts + spares + network
  sim::Power facility;  ///< PUE x it
};

struct CostResult {
  std::int64_t gpus = 0;  ///< serving jobs (spares apart)
  std::int64_t spare_nodes = 0;
  std::vector<CapexLine> capex_lines;
  std::optional<sim::Money> capex;  ///< absent when a part is not priced
  std::vector<std::string> unpriced;
  std::string node_price_basis;
  double utilization = 0.0;
  std::string utilization_basis;
  PowerSplit average;  ///< at the busy share u
  PowerSplit peak;     ///< at u = 1
  double energy_per_year_kwh = 0.0;
  sim::Money opex_per_year;  ///< energy
  double life_years = 0.0;
  std::optional<sim::Money> depreciation_per_year;
  std::optional<sim::Money> cost_per_year;  ///< depreciation + opex
  std::optional<sim::Money> tco;            ///< capex + life x opex
  std::optional<double> usd_per_gpu_hour;
  std::int64_t nodes_per_rack = 1;
  std::int64_t racks = 0;
  sim::Power rack_power;  ///< IT power of a full rack at peak
};

/// The cost model (see the header). Pure; O(fabric cost lines).
CostResult compute_cost(const CostInputs& in);

/// The fleet-average busy share from jobs (gpus_j, u_j) on a cluster of `total_gpus`:
/// sum_j g_j u_j / total_gpus, clamped to [0, 1]; 1 when there is no job.
double fleet_utilization(const std::vector<std::pair<std::int64_t, double>>& jobs, std::int64_t total_gpus);

/// The busy share under a schedule of utilisation `schedule_utilisation` (0..1) from jobs
/// (w_j GPU-seconds spanned, u_j): U x sum_j w_j u_j / sum_j w_j, clamped to [0, 1]; 0 when
/// no job spans any time.
double scheduled_utilization(double schedule_utilisation, const std::vector<std::pair<double, double>>& jobs);

/// What one job's training run costs, from its own GPUs alone, whatever the rest of the
/// cluster does: energy_kwh is the facility energy (PUE x IT) of its GPUs and their hosts at
/// the job's own busy share, plus its share (by GPUs) of the network's and the idle spares'
/// power, over the time to train; cost_usd is its GPU-hours at the cluster's depreciation
/// per GPU-hour plus that energy at the energy price. (Billed at the fleet-average $/GPU-hour
/// instead, a job looked cheaper on a cluster with idle GPUs beside it: their idle power
/// lowered the average.)
struct TrainingCost {
  double time_to_train_s = 0.0;
  double gpu_hours = 0.0;
  double busy_share = 0.0;                       ///< the job's GPUs' busy share (0..1)
  std::optional<double> cost_usd;                ///< absent when the capex is not priced
  std::optional<double> usd_per_million_tokens;  ///< absent without tokens or cost
  double energy_kwh = 0.0;                       ///< facility energy of its GPUs, hosts and share of the rest
};

/// The training run of a job on `job_gpus` GPUs, busy a share `busy_share` of the time,
/// lasting `time_to_train_s` for `train_tokens`, on the cluster of `in` and `c`.
TrainingCost training_cost(const CostInputs& in, const CostResult& c, std::int64_t job_gpus, double busy_share,
                           double time_to_train_s, double train_tokens);

/// JSON with base units in the keys (capex_usd, power_w, usd_per_gpu_hour, ...).
config::Json to_json(const CostResult& c);
config::Json to_json(const TrainingCost& t);

}  // namespace clustersim::cost
