// Transformer model architectures: the catalog (models/workload/models.yaml, compiled in),
// inline definitions, and the parameter and FLOP counts that follow from them.
//
// Parameters (biases ignored; h = hidden, L = layers, kv = kv_heads x head_dim,
// head_dim = h / heads, f = ffn_hidden, V = vocab):
//   attention per layer      h(h + 2 kv) for Q, K, V  +  h^2 for the output projection
//   dense MLP per layer      2 h f (gelu: up, down) or 3 h f (swiglu: gate, up, down)
//   MoE MLP per layer        (experts + shared_experts) x (2 or 3) h f_e  +  h x experts (router)
//   norms                    2 h per layer + h (final)
//   embeddings               V h, and V h more for an untied output layer
// Active parameters (what one token touches) count top_k + shared_experts experts.
//
// Model FLOPs per token for training (forward + backward = 3 x forward), the standard
// definition used for MFU (Chowdhery et al., PaLM, 2022, appendix B):
//   6 N_active  +  12 L h s  (attention scores and values: 2 x 2 L s h per token forward,
//                             x 3 for training; PaLM does not halve it for causal masking)
// where N_active excludes the input embedding (a lookup, no multiply) but counts the output
// layer, tied to the embedding or not (it is a V x h multiply either way), and s is the
// sequence length. Recomputation is not counted here (it is hardware FLOPs, not model FLOPs).
//
// LIMITATIONS: DeepSeek-V3's multi-head latent attention is treated as standard multi-head
// attention of the same width (a few percent on attention parameters and FLOPs); no
// multi-token prediction; no bias terms.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/config/decode.hpp"

namespace clustersim::workload {

enum class Mlp { gelu, swiglu };

constexpr std::array<std::pair<Mlp, std::string_view>, 2> enum_names(Mlp) {
  return {{{Mlp::gelu, "gelu"}, {Mlp::swiglu, "swiglu"}}};
}

struct ModelSpec {
  std::string name;  ///< for inline definitions; catalog entries are named by their key
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< 0: as many as heads
  std::int64_t ffn_hidden = 0;
  Mlp ffn = Mlp::swiglu;
  std::int64_t vocab = 0;
  std::int64_t seq_len = 0;
  bool tied_embeddings = false;
  std::int64_t experts = 0;  ///< 0: dense
  std::int64_t top_k = 0;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t shared_experts = 0;
  std::int64_t dense_layers = 0;
  std::string source;
  std::string notes;

  static auto fields() {
    using config::field;
    return std::tuple{
        field("name", &ModelSpec::name, "a name for an inline definition (catalog entries are named by their key)"),
        field("layers", &ModelSpec::layers, "transformer layers").require().at_least(1).at_most(100'000),
        field("hidden", &ModelSpec::hidden, "model (hidden) dimension").require().at_least(1).at_most(1'000'000),
        field("heads", &ModelSpec::heads, "attention heads").require().at_least(1).at_most(100'000),
        field("kv_heads", &ModelSpec::kv_heads, "key/value heads (grouped-query attention); 0: = heads")
            .at_least(0)
            .at_most(100'000),
        field("ffn_hidden", &ModelSpec::ffn_hidden, "hidden size of a dense MLP").require().at_least(1).at_most(10'000'000),
        field("ffn", &ModelSpec::ffn, "MLP kind: gelu (2 matrices) or swiglu (3)"),
        field("vocab", &ModelSpec::vocab, "vocabulary size").require().at_least(1).at_most(100'000'000),
        field("seq_len", &ModelSpec::seq_len, "training sequence length").require().at_least(1).at_most(100'000'000),
        field("tied_embeddings", &ModelSpec::tied_embeddings, "the output layer shares the input embedding"),
        field("experts", &ModelSpec::experts, "routed experts per MoE layer; 0: dense").at_least(0).at_most(100'000),
        field("top_k", &ModelSpec::top_k, "experts each token is routed to").at_least(0).at_most(100'000),
        field("expert_ffn_hidden", &ModelSpec::expert_ffn_hidden, "hidden size of one expert's MLP")
            .at_least(0)
            .at_most(10'000'000),
        field("shared_experts", &ModelSpec::shared_experts, "experts every token goes through").at_least(0).at_most(100'000),
        field("dense_layers", &ModelSpec::dense_layers, "leading layers with a dense MLP instead of experts")
            .at_least(0)
            .at_most(100'000),
        field("source", &ModelSpec::source, "where the architecture comes from"),
        field("notes", &ModelSpec::notes, "simplifications and caveats"),
    };
  }
};

struct ModelCatalog {
  std::map<std::string, ModelSpec> models;
  static auto fields() { return std::tuple{config::field("models", &ModelCatalog::models, "models by name")}; }
};

/// The built-in catalog's text and file name.
std::string_view builtin_models_text();
inline constexpr std::string_view kBuiltinModelsFile = "models/workload/models.yaml";

/// Checks the relations between fields that the field table cannot (heads divide hidden,
/// kv_heads divide heads, MoE keys together). Returns "" or what is wrong.
std::string validate(const ModelSpec& m);

struct ParameterCount {
  double total = 0.0;      ///< every parameter
  double active = 0.0;     ///< touched by one token (MoE: top_k + shared experts)
  double embedding = 0.0;  ///< the input embedding table
};

ParameterCount parameters(const ModelSpec& m);

/// Model FLOPs per trained token at sequence length `seq` (see the header comment).
double training_flops_per_token(const ModelSpec& m, std::int64_t seq);

}  // namespace clustersim::workload
