#include "models/workload/model.hpp"

#include <fmt/format.h>

namespace clustersim::workload {

std::string validate(const ModelSpec& m) {
  if (m.hidden % m.heads != 0) return fmt::format("hidden {} is not a multiple of heads {}", m.hidden, m.heads);
  const std::int64_t kv = m.kv_heads == 0 ? m.heads : m.kv_heads;
  if (m.heads % kv != 0) return fmt::format("heads {} is not a multiple of kv_heads {}", m.heads, kv);
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts || m.expert_ffn_hidden < 1)) {
    return fmt::format("a mixture of experts needs 1 <= top_k <= experts ({}) and expert_ffn_hidden", m.experts);
  }
  if (m.experts == 0 && (m.top_k || m.expert_ffn_hidden || m.shared_experts || m.dense_layers)) {
    return "top_k, expert_ffn_hidden, shared_experts and dense_layers need experts";
  }
  if (m.dense_layers > m.layers) return fmt::format("dense_layers {} exceeds layers {}", m.dense_layers, m.layers);
  return {};
}

ParameterCount parameters(const ModelSpec& m) {
  const auto h = static_cast<double>(m.hidden);
  const auto L = static_cast<double>(m.layers);
  const double head_dim = h / static_cast<double>(m.heads);
  const double kv = static_cast<double>(m.kv_heads == 0 ? m.heads : m.kv_heads) * head_dim;
  const double attention = h * (h + 2 * kv) + h * h;
  const double mats = m.ffn == Mlp::gelu ? 2.0 : 3.0;
  const double dense_mlp = mats * h * static_cast<double>(m.ffn_hidden);
  const double norms = 2 * h;
  ParameterCount p;
  p.embedding = static_cast<double>(m.vocab) * h;
  const double output = m.tied_embeddings ? 0.0 : p.embedding;
  if (m.experts == 0) {
    p.total = L * (attention + dense_mlp + norms) + h + p.embedding + output;
    p.active = p.total;
    return p;
  }
  const double expert = mats * h * static_cast<double>(m.expert_ffn_hidden);
  const double router = h * static_cast<double>(m.experts);
  const auto dense_layers = static_cast<double>(m.dense_layers);
  const double moe_layers = L - dense_layers;
  const double shared = static_cast<double>(m.shared_experts) * expert;
  p.total = L * (attention + norms) + dense_layers * dense_mlp +
            moe_layers * (static_cast<double>(m.experts) * expert + shared + router) + h + p.embedding + output;
  p.active = L * (attention + norms) + dense_layers * dense_mlp +
             moe_layers * (static_cast<double>(m.top_k) * expert + shared + router) + h + p.embedding + output;
  return p;
}

double training_flops_per_token(const ModelSpec& m, std::int64_t seq) {
  const ParameterCount p = parameters(m);
  const double attention = 12.0 * static_cast<double>(m.layers) * static_cast<double>(m.hidden) * static_cast<double>(seq);
  // A tied output layer reuses the embedding table but still multiplies by it.
  const double tied_output = m.tied_embeddings ? p.embedding : 0.0;
  return 6.0 * (p.active - p.embedding + tied_output) + attention;
}

}  // namespace clustersim::workload
