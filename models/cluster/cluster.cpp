#include "models/cluster/cluster.hpp"

#include <fmt/format.h>

namespace clustersim::cluster {

std::string ResolvedNode::label() const {
  if (name != "inline") return name;
  if (gpu_name == "inline") return fmt::format("inline: {} GPU{}", spec.gpus, spec.gpus == 1 ? "" : "s");
  return fmt::format("inline: {} x {}", spec.gpus, gpu_name);
}

std::string nvls_unavailable(const ResolvedNode& node) {
  const hardware::ScaleUp s = node.spec.scaleup;
  const std::string& arch = node.gpu.architecture;
  if (node.spec.gpus < 2) return "its nodes hold one GPU each, so there is no scale-up domain to reduce in";
  if (s != hardware::ScaleUp::nvswitch && s != hardware::ScaleUp::nvlink_switch_tray) {
    return fmt::format("the node's scale-up is {}, not an NVSwitch", config::enum_name(s));
  }
  if (node.gpu.vendor != "nvidia" || arch == "volta" || arch == "turing" || arch == "ampere") {
    return fmt::format("its GPUs are {} ({} {}): NVLink SHARP came with Hopper's NVSwitch", node.gpu_name,
                       node.gpu.vendor, arch);
  }
  return {};
}

Inventory make_inventory(const ResolvedNode& node, std::int64_t nodes) {
  Inventory inv;
  inv.node_type = node.name;
  inv.gpu_type = node.gpu_name;
  inv.nodes = nodes;
  inv.gpus_per_node = node.spec.gpus;
  inv.gpus = nodes * node.spec.gpus;
  inv.nics = nodes * node.spec.nics;
  const auto g = static_cast<double>(inv.gpus);
  inv.hbm_total = node.gpu.hbm_capacity * g;
  inv.hbm_bandwidth_total = node.gpu.hbm_bandwidth * g;
  inv.scaleout_bandwidth_total = node.spec.nic_bandwidth * static_cast<double>(inv.nics);
  const hardware::PeakFlops& p = node.gpu.peak_flops;
  const std::pair<const char*, const std::optional<sim::FlopRate>*> dtypes[] = {
      {"fp64", &p.fp64}, {"fp32", &p.fp32}, {"tf32", &p.tf32},
      {"bf16", &p.bf16}, {"fp16", &p.fp16}, {"fp8", &p.fp8}};
  for (const auto& [name, rate] : dtypes) {
    if (*rate) inv.peak_flops_total[name] = **rate * g;
  }
  inv.gpu_power = node.gpu.tdp * g;
  inv.host_power = node.spec.host_power * static_cast<double>(nodes);
  inv.it_power = inv.gpu_power + inv.host_power;
  return inv;
}

config::Json to_json(const Inventory& inv) {
  config::Json j;
  j["node_type"] = inv.node_type;
  j["gpu_type"] = inv.gpu_type;
  j["nodes"] = inv.nodes;
  j["gpus_per_node"] = inv.gpus_per_node;
  j["gpus"] = inv.gpus;
  j["nics"] = inv.nics;
  j["hbm_total_bytes"] = inv.hbm_total.value();
  j["hbm_bandwidth_total_Bps"] = inv.hbm_bandwidth_total.value();
  j["scaleout_bandwidth_total_Bps"] = inv.scaleout_bandwidth_total.value();
  config::Json flops = config::Json::object();
  for (const auto& [dtype, rate] : inv.peak_flops_total) flops[dtype] = rate.value();
  j["peak_flops_total_per_s"] = flops;
  j["gpu_power_w"] = inv.gpu_power.value();
  j["host_power_w"] = inv.host_power.value();
  // The nodes' power at full load (GPUs and hosts); the network's is the fabric's, and the
  // whole IT power (nodes and network) is cost.peak.it_w. it_power_w is kept for scripts.
  j["node_power_w"] = inv.it_power.value();
  j["it_power_w"] = inv.it_power.value();
  return j;
}

}  // namespace clustersim::cluster
