#include "models/workload/model.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace clustersim::workload {

std::vector<ModelProblem> model_problems(const ModelSpec& m) {
  std::vector<ModelProblem> out;
  // A model missing its sizes (said by the field table: a required key) has no relations to
  // check yet, and dividing by its 0 heads would stop the process.
  if (m.heads < 1 || m.hidden < 1 || m.layers < 1) return out;
  const auto bad = [&](std::string key, std::string message, std::string hint) {
    out.push_back({std::move(key), std::move(message), std::move(hint)});
  };
  const bool heads_divide = m.head_dim > 0 || m.hidden % m.heads == 0;
  if (!heads_divide) {
    bad("heads", fmt::format("hidden {} is not a multiple of heads {}", m.hidden, m.heads),
        "heads that divide hidden, or head_dim if the heads are of another width");
  }
  const std::int64_t kv = kv_head_count(m);
  if (m.heads % kv != 0) {
    bad("kv_heads", fmt::format("heads {} is not a multiple of kv_heads {}", m.heads, kv),
        "kv_heads dividing heads: 1 for multi-query attention, heads for none shared");
  }
  // Multi-head latent attention up-projects every head's key and value from the shared latent
  // (DeepSeek-V2, section 2.1.2): there are as many key/value heads as query heads.
  if (m.kv_lora_rank > 0 && kv != m.heads) {
    bad("kv_heads",
        fmt::format("kv_lora_rank (multi-head latent attention) gives every head its own key and value: kv_heads "
                    "{} must equal heads {}",
                    kv, m.heads),
        "remove kv_heads, or kv_lora_rank for attention without latents");
  }
  if (m.rope_head_dim > 0 && m.kv_lora_rank == 0) {
    bad("rope_head_dim", "rope_head_dim (a decoupled RoPE key) needs kv_lora_rank",
        "set kv_lora_rank (multi-head latent attention), or remove rope_head_dim");
  } else if (heads_divide && m.rope_head_dim >= qk_head_dim(m)) {
    bad("rope_head_dim",
        fmt::format("rope_head_dim {} must be less than the query/key head width {}", m.rope_head_dim,
                    qk_head_dim(m)),
        fmt::format("at most {}", qk_head_dim(m) - 1));
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    bad("top_k", fmt::format("a mixture of experts needs 1 <= top_k <= experts ({}), got top_k {}", m.experts, m.top_k),
        fmt::format("top_k: {}", std::min<std::int64_t>(2, m.experts)));
  }
  if (m.experts > 0 && m.expert_ffn_hidden < 1) {
    bad("expert_ffn_hidden", "a mixture of experts needs expert_ffn_hidden, each expert's MLP width",
        "e.g. expert_ffn_hidden: 14336 (Mixtral 8x7B)");
  }
  if (m.experts == 0) {
    std::vector<const char*> given;
    if (m.top_k) given.push_back("top_k");
    if (m.expert_ffn_hidden) given.push_back("expert_ffn_hidden");
    if (m.shared_experts) given.push_back("shared_experts");
    if (m.dense_layers) given.push_back("dense_layers");
    if (!given.empty()) {
      bad(given.front(),
          fmt::format("{}{}{} need{} experts: the model has none (experts: 0)",
                      fmt::join(given.begin(), given.end() - 1, ", "), given.size() > 1 ? " and " : "", given.back(),
                      given.size() == 1 ? "s" : ""),
          fmt::format("set experts for a mixture of experts, or remove {}", given.size() == 1 ? "it" : "them"));
    }
  }
  if (m.dense_layers > m.layers) {
    bad("dense_layers", fmt::format("dense_layers {} exceeds layers {}", m.dense_layers, m.layers),
        fmt::format("at most {}", m.layers));
  }
  return out;
}

std::string validate(const ModelSpec& m) {
  const std::vector<ModelProblem> problems = model_problems(m);
  return problems.empty() ? std::string() : problems.front().message;
}

std::int64_t kv_head_count(const ModelSpec& m) { return m.kv_heads == 0 ? m.heads : m.kv_heads; }

std::int64_t qk_head_dim(const ModelSpec& m) { return m.head_dim > 0 ? m.head_dim : m.hidden / m.heads; }

std::int64_t value_head_dim(const ModelSpec& m) { return m.v_head_dim > 0 ? m.v_head_dim : qk_head_dim(m); }

double attention_parameters(const ModelSpec& m) {
  // The header's table: full-rank Q, K, V and output projections, or MLA's low-rank ones
  // (DeepSeek-V2, arXiv 2405.04434, equations 9-10 and 14-15, with an RMSNorm on each latent
  // as in DeepSeek-V3's released model: q_a_layernorm, kv_a_layernorm).
  const auto h = static_cast<double>(m.hidden);
  const auto a = static_cast<double>(m.heads);
  const auto kv = static_cast<double>(kv_head_count(m));
  const auto d = static_cast<double>(qk_head_dim(m));
  const auto dv = static_cast<double>(value_head_dim(m));
  const auto rq = static_cast<double>(m.q_lora_rank);
  const auto rkv = static_cast<double>(m.kv_lora_rank);
  const auto dr = static_cast<double>(m.rope_head_dim);
  const double q = m.q_lora_rank > 0 ? h * rq + rq + rq * a * d : h * a * d;
  const double k_v = m.kv_lora_rank > 0 ? h * (rkv + dr) + rkv + rkv * a * (d - dr + dv) : h * kv * (d + dv);
  return q + k_v + a * dv * h;
}

ParameterCount parameters(const ModelSpec& m) {
  const auto h = static_cast<double>(m.hidden);
  const auto L = static_cast<double>(m.layers);
  const double attention = attention_parameters(m);
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
  // Q K^T over head width d and P V over d_v: 6 L s a (d + d_v), PaLM's 12 L h s when d = d_v = h / a.
  const double attention = 6.0 * static_cast<double>(m.layers) * static_cast<double>(seq) *
                           static_cast<double>(m.heads) *
                           static_cast<double>(qk_head_dim(m) + value_head_dim(m));
  // A tied output layer reuses the embedding table but still multiplies by it.
  const double tied_output = m.tied_embeddings ? p.embedding : 0.0;
  return 6.0 * (p.active - p.embedding + tied_output) + attention;
}

}  // namespace clustersim::workload
