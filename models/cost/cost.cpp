#include "models/cost/cost.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace clustersim::cost {

NodePricing price_node(const std::string& node_name, const std::string& gpu_name, std::int64_t gpus_per_node,
                       const fabric::PricingTable& table, const EconomicsConfig& economics) {
  NodePricing p;
  const auto server = table.servers.find(node_name);
  const auto gpu = table.gpus.find(gpu_name);
  if (gpu != table.gpus.end()) p.gpu_price = gpu->second.price;
  if (server != table.servers.end()) {
    p.includes_nics = server->second.includes_nics;
    p.nodes_per_rack = server->second.nodes_per_rack;
  }
  if (economics.node_price) {
    p.node_price = *economics.node_price;
    p.includes_nics = true;
    p.basis = "economics.node_price";
  } else if (server != table.servers.end()) {
    p.node_price = server->second.price;
    p.basis = fmt::format("priced table, servers.{} ({})", node_name, server->second.date);
  } else if (gpu != table.gpus.end() && table.host_per_gpu) {
    const auto g = static_cast<double>(gpus_per_node);
    p.node_price = (gpu->second.price + table.host_per_gpu->price) * g;
    p.includes_nics = true;
    p.basis = fmt::format("{} x ({} {} + host parts {})", gpus_per_node, gpu_name, sim::human(gpu->second.price),
                          sim::human(table.host_per_gpu->price));
  } else {
    p.unpriced = fmt::format("no price for node type '{}' nor for GPU type '{}' in the priced table", node_name,
                             gpu_name);
  }
  if (economics.nodes_per_rack) p.nodes_per_rack = *economics.nodes_per_rack;
  return p;
}

double fleet_utilization(const std::vector<std::pair<std::int64_t, double>>& jobs, std::int64_t total_gpus) {
  if (jobs.empty() || total_gpus <= 0) return 1.0;
  double busy = 0.0;
  for (const auto& [gpus, u] : jobs) busy += static_cast<double>(gpus) * std::clamp(u, 0.0, 1.0);
  return std::clamp(busy / static_cast<double>(total_gpus), 0.0, 1.0);
}

double scheduled_utilization(double schedule_utilisation, const std::vector<std::pair<double, double>>& jobs) {
  double weight = 0.0;
  double busy = 0.0;
  for (const auto& [w, u] : jobs) {
    if (!(w > 0.0)) continue;
    weight += w;
    busy += w * std::clamp(u, 0.0, 1.0);
  }
  if (weight <= 0.0 || !std::isfinite(schedule_utilisation)) return 0.0;
  return std::clamp(schedule_utilisation * busy / weight, 0.0, 1.0);
}

namespace {

PowerSplit power_at(const CostInputs& in, double u, sim::Power network) {
  const EconomicsConfig& e = in.economics;
  const auto gpus = static_cast<double>(in.nodes * in.gpus_per_node);
  PowerSplit p;
  p.gpus = in.gpu_tdp * (gpus * (e.gpu_idle_fraction + (1.0 - e.gpu_idle_fraction) * u));
  p.hosts = in.host_power * (static_cast<double>(in.nodes) * (e.host_idle_fraction + (1.0 - e.host_idle_fraction) * u));
  p.spares = (in.gpu_tdp * (static_cast<double>(in.gpus_per_node) * e.gpu_idle_fraction) +
              in.host_power * e.host_idle_fraction) *
             static_cast<double>(in.spare_nodes);
  p.network = network;
  p.it = p.gpus + p.hosts + p.spares + p.network;
  p.facility = p.it * e.pue;
  return p;
}

}  // namespace

CostResult compute_cost(const CostInputs& in) {
  const EconomicsConfig& e = in.economics;
  CostResult r;
  r.gpus = in.nodes * in.gpus_per_node;
  r.spare_nodes = in.spare_nodes;
  r.utilization = std::clamp(in.utilization, 0.0, 1.0);
  r.utilization_basis = in.utilization_basis;
  r.node_price_basis = in.node.basis;
  r.life_years = e.life.seconds() / (kHoursPerYear * 3600.0);

  // Capex.
  bool priced = true;
  const auto n = static_cast<double>(in.nodes);
  if (in.node.node_price) {
    const sim::Money node = *in.node.node_price;
    const double g = static_cast<double>(in.gpus_per_node);
    if (in.node.gpu_price && *in.node.gpu_price * g <= node) {
      r.capex_lines.push_back({"gpus", in.node.basis, r.gpus, *in.node.gpu_price * (n * g)});
      r.capex_lines.push_back({"hosts", in.node.basis, in.nodes, (node - *in.node.gpu_price * g) * n});
    } else {
      r.capex_lines.push_back({"servers", in.node.basis, in.nodes, node * n});
    }
    if (in.spare_nodes > 0) {
      r.capex_lines.push_back({"spares", "scheduler.spare_nodes; " + in.node.basis, in.spare_nodes,
                               node * static_cast<double>(in.spare_nodes)});
    }
  } else {
    priced = false;
    r.unpriced.push_back(in.node.unpriced + " (set economics.node_price)");
  }
  sim::Power network;
  if (in.fabric) {
    for (const fabric::CostLine& line : in.fabric->costs) {
      // The catalog's host power covers the NICs (system rating minus GPUs); a node that
      // gives no host power has nothing to cover them, and its NICs draw with the network.
      if (line.part != "nics" || in.host_power.value() <= 0.0) network += line.power;
      if (line.part == "nics" && in.node.includes_nics) continue;
      r.capex_lines.push_back({line.part, line.model, line.count, line.capex});
    }
    if (!in.fabric->capex) {
      priced = false;
      for (const std::string& u : in.fabric->unpriced) r.unpriced.push_back("network: " + u);
    } else if (in.spare_nodes > 0 && in.nodes > 0) {
      // Hot spares sit on the fabric, ready to take a failed node's place: their NICs, switch
      // ports, optics and cables, priced as the fabric's share per node (the fabric itself is
      // built for cluster.nodes). Before, spares were priced as servers alone.
      sim::Money network_capex;
      for (const CapexLine& l : r.capex_lines) {
        if (l.category == "switches" || l.category == "nics" || l.category == "transceivers" || l.category == "cables") {
          network_capex += l.capex;
        }
      }
      r.capex_lines.push_back({"spares_network",
                               fmt::format("scheduler.spare_nodes x the fabric's capex per node ({} nodes; ESTIMATE: "
                                           "pro rata)",
                                           in.nodes),
                               in.spare_nodes,
                               network_capex * (static_cast<double>(in.spare_nodes) / static_cast<double>(in.nodes))});
    }
  } else {
    r.unpriced.push_back("network: the scenario has no fabric section (no switches, optics or cables counted)");
  }
  if (e.other_capex.value() > 0.0) r.capex_lines.push_back({"other", "economics.other_capex", 1, e.other_capex});
  if (priced) {
    sim::Money total;
    for (const CapexLine& l : r.capex_lines) total += l.capex;
    r.capex = total;
  }

  // Power, energy and opex.
  r.average = power_at(in, r.utilization, network);
  r.peak = power_at(in, 1.0, network);
  r.energy_per_year_kwh = r.average.facility.value() * kHoursPerYear / 1000.0;
  r.opex_per_year = sim::Money::of(r.energy_per_year_kwh * e.energy_price.value());

  // Depreciation and the cost of a GPU-hour.
  if (r.capex && r.life_years > 0.0) {
    r.depreciation_per_year = *r.capex / r.life_years;
    r.cost_per_year = *r.depreciation_per_year + r.opex_per_year;
    r.tco = *r.capex + r.opex_per_year * r.life_years;
    if (r.gpus > 0) r.usd_per_gpu_hour = r.cost_per_year->value() / (static_cast<double>(r.gpus) * kHoursPerYear);
  }

  // Racks.
  r.nodes_per_rack = std::max<std::int64_t>(1, in.node.nodes_per_rack);
  r.racks = (in.nodes + in.spare_nodes + r.nodes_per_rack - 1) / r.nodes_per_rack;
  // A node without a host power draws its NICs in the rack too (as in the network's total).
  sim::Power nic_per_node;
  if (in.fabric && in.host_power.value() <= 0.0 && in.nodes > 0) {
    for (const fabric::CostLine& line : in.fabric->costs) {
      if (line.part == "nics") nic_per_node += line.power / static_cast<double>(in.nodes);
    }
  }
  r.rack_power = (in.gpu_tdp * static_cast<double>(in.gpus_per_node) + in.host_power + nic_per_node) *
                 static_cast<double>(std::min(r.nodes_per_rack, std::max<std::int64_t>(in.nodes, 1)));
  return r;
}

TrainingCost training_cost(const CostInputs& in, const CostResult& c, std::int64_t job_gpus, double busy_share,
                           double time_to_train_s, double train_tokens) {
  const EconomicsConfig& e = in.economics;
  TrainingCost t;
  t.time_to_train_s = time_to_train_s;
  t.busy_share = std::clamp(busy_share, 0.0, 1.0);
  const auto g = static_cast<double>(job_gpus);
  t.gpu_hours = g * time_to_train_s / 3600.0;
  const double u = t.busy_share;
  const double share = c.gpus > 0 ? g / static_cast<double>(c.gpus) : 0.0;  // of the network and the spares
  const double gpn = static_cast<double>(std::max<std::int64_t>(1, in.gpus_per_node));
  const double it_w = in.gpu_tdp.value() * g * (e.gpu_idle_fraction + (1.0 - e.gpu_idle_fraction) * u) +
                      in.host_power.value() * g / gpn * (e.host_idle_fraction + (1.0 - e.host_idle_fraction) * u) +
                      share * (c.average.network.value() + c.average.spares.value());
  t.energy_kwh = e.pue * it_w * time_to_train_s / 3.6e6;
  if (c.depreciation_per_year && c.gpus > 0) {
    const double depreciation_per_gpu_hour =
        c.depreciation_per_year->value() / (static_cast<double>(c.gpus) * kHoursPerYear);
    t.cost_usd = t.gpu_hours * depreciation_per_gpu_hour + t.energy_kwh * e.energy_price.value();
    if (train_tokens > 0.0) t.usd_per_million_tokens = *t.cost_usd / (train_tokens / 1e6);
  }
  return t;
}

namespace {

config::Json money(const std::optional<sim::Money>& m) { return m ? config::Json(m->value()) : config::Json(nullptr); }
config::Json number(const std::optional<double>& v) { return v ? config::Json(*v) : config::Json(nullptr); }

config::Json power_json(const PowerSplit& p) {
  return {{"gpus_w", p.gpus.value()},
          {"hosts_w", p.hosts.value()},
          {"spares_w", p.spares.value()},
          {"network_w", p.network.value()},
          {"it_w", p.it.value()},
          {"facility_w", p.facility.value()}};
}

}  // namespace

config::Json to_json(const CostResult& c) {
  config::Json j;
  config::Json by_category = config::Json::object();
  config::Json lines = config::Json::array();
  for (const CapexLine& l : c.capex_lines) {
    by_category[l.category] = by_category.value(l.category, 0.0) + l.capex.value();
    lines.push_back({{"category", l.category}, {"item", l.item}, {"count", l.count}, {"capex_usd", l.capex.value()}});
  }
  j["capex_usd"] = money(c.capex);
  j["spare_nodes"] = c.spare_nodes;
  j["capex_by_category_usd"] = std::move(by_category);
  j["capex_lines"] = std::move(lines);
  j["unpriced"] = c.unpriced;
  j["node_price_basis"] = c.node_price_basis;
  j["utilization"] = c.utilization;
  // The same figure by what it is (the GPUs' busy share the energy and cost use; the
  // schedule's own utilisation is under `schedule`): `utilization` read as that.
  j["gpu_busy_share"] = c.utilization;
  j["utilization_basis"] = c.utilization_basis;
  j["power_average"] = power_json(c.average);
  j["power_peak"] = power_json(c.peak);
  j["peak_facility_power_w"] = c.peak.facility.value();
  j["energy_per_year_kwh"] = c.energy_per_year_kwh;
  j["opex_per_year_usd"] = c.opex_per_year.value();
  j["life_years"] = c.life_years;
  j["depreciation_per_year_usd"] = money(c.depreciation_per_year);
  j["cost_per_year_usd"] = money(c.cost_per_year);
  j["tco_usd"] = money(c.tco);
  j["usd_per_gpu_hour"] = number(c.usd_per_gpu_hour);
  j["nodes_per_rack"] = c.nodes_per_rack;
  j["racks"] = c.racks;
  j["rack_power_w"] = c.rack_power.value();
  return j;
}

config::Json to_json(const TrainingCost& t) {
  return {{"time_to_train_s", t.time_to_train_s},
          {"gpu_hours", t.gpu_hours},
          {"total_cost_usd", number(t.cost_usd)},
          {"usd_per_million_tokens", number(t.usd_per_million_tokens)},
          {"energy_kwh", t.energy_kwh},
          {"busy_share", t.busy_share}};
}

}  // namespace clustersim::cost
