// Transformer model architectures: the catalog (models/workload/models.yaml, compiled in),
// inline definitions, and the parameter and FLOP counts that follow from them.
//
// Parameters (biases ignored; h = hidden, L = layers, a = heads, kv = kv_heads,
// d = head_dim (query and key width per head, default h / a), d_v = v_head_dim (value
// width per head, default d), f = ffn_hidden, V = vocab):
//   attention per layer      h a d (Q) + h kv (d + d_v) (K, V) + a d_v h (output projection)
//     multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, section 2.1; DeepSeek-V3,
//     arXiv 2412.19437, section 2.1.1), with r_q = q_lora_rank, r_kv = kv_lora_rank and
//     d_r = rope_head_dim (the decoupled RoPE part of d, one key shared by all heads):
//       Q   h r_q + r_q (norm) + r_q a d                  (W^DQ, W^UQ and W^QR together)
//       KV  h (r_kv + d_r) + r_kv (norm) + r_kv a (d - d_r + d_v)   (W^DKV and W^KR; W^UK, W^UV)
//     each replacing its full-rank term when its rank is set
//   dense MLP per layer      2 h f (gelu: up, down) or 3 h f (swiglu: gate, up, down)
//   MoE MLP per layer        (experts + shared_experts) x (2 or 3) h f_e  +  h x experts (router)
//   norms                    2 h per layer + h (final)
//   embeddings               V h, and V h more for an untied output layer
// Active parameters (what one token touches) count top_k + shared_experts experts.
//
// Model FLOPs per token for training (forward + backward = 3 x forward), the standard
// definition used for MFU (Chowdhery et al., PaLM, 2022, appendix B):
//   6 N_active  +  6 L s a (d + d_v)   (attention scores Q K^T, 2 s a d, and values P V,
//                                       2 s a d_v, per token and layer forward, x 3 for
//                                       training: PaLM's 12 L h s when d = d_v = h / a;
//                                       PaLM does not halve it for causal masking)
// where N_active excludes the input embedding (a lookup, no multiply) but counts the output
// layer, tied to the embedding or not (it is a V x h multiply either way), and s is the
// sequence length. Recomputation is not counted here (it is hardware FLOPs, not model FLOPs).
//
// Dropout: `dropout` says whether the model trains with it (attention-probability and
// hidden dropout, as GPT-3 and Megatron-LM's GPT do). Its masks are activations kept for
// backward and bytes of the element-wise kernels (models/workload/costs.hpp); models trained
// without it (Llama 3, Mixtral, DeepSeek-V3: their reference code has no dropout layer)
// keep neither.
//
// LIMITATIONS: no multi-token prediction (DeepSeek-V3's MTP module, 14B parameters, is left
// out, as its 671B total does); no bias terms.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
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
  std::int64_t head_dim = 0;    ///< query and key width per head; 0: hidden / heads
  std::int64_t v_head_dim = 0;  ///< value width per head; 0: head_dim
  std::int64_t q_lora_rank = 0;    ///< multi-head latent attention: query compression rank; 0: full rank
  std::int64_t kv_lora_rank = 0;   ///< multi-head latent attention: key/value compression rank; 0: full rank
  std::int64_t rope_head_dim = 0;  ///< multi-head latent attention: the decoupled RoPE part of head_dim
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
  bool dropout = true;  ///< trains with dropout: its masks are kept and moved
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
        field("head_dim", &ModelSpec::head_dim,
              "query/key width of one attention head; 0: hidden / heads (set it where a model differs, as DeepSeek-V3's "
              "192)")
            .at_least(0)
            .at_most(1'000'000),
        field("v_head_dim", &ModelSpec::v_head_dim, "value width of one attention head; 0: = head_dim")
            .at_least(0)
            .at_most(1'000'000),
        field("q_lora_rank", &ModelSpec::q_lora_rank,
              "multi-head latent attention (DeepSeek-V2/V3): rank of the low-rank query projection; 0: full rank")
            .at_least(0)
            .at_most(10'000'000),
        field("kv_lora_rank", &ModelSpec::kv_lora_rank,
              "multi-head latent attention: rank of the joint key/value compression; 0: full-rank K and V projections")
            .at_least(0)
            .at_most(10'000'000),
        field("rope_head_dim", &ModelSpec::rope_head_dim,
              "multi-head latent attention: the part of head_dim carried by a decoupled RoPE key shared by all heads "
              "(DeepSeek's qk_rope_head_dim); needs kv_lora_rank")
            .at_least(0)
            .at_most(1'000'000),
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
        field("dropout", &ModelSpec::dropout,
              "trains with dropout (attention probabilities and hidden states, as GPT-3 and Megatron-LM): its 1-byte "
              "masks are kept for backward and moved by the element-wise kernels; false for models trained without "
              "(Llama 3, Mixtral, DeepSeek-V3)"),
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

/// A relation between a model's fields that does not hold: the field to change (a key of
/// the model's mapping), what is wrong, and how to mend it.
struct ModelProblem {
  std::string key;
  std::string message;
  std::string hint;
};

/// Checks the relations between fields that the field table cannot (heads divide hidden
/// unless head_dim is given, kv_heads divide heads, MLA and MoE keys together): every one
/// that does not hold, none when the model is whole.
std::vector<ModelProblem> model_problems(const ModelSpec& m);
/// The first of model_problems()' messages, or "".
std::string validate(const ModelSpec& m);

/// Key/value heads (kv_heads, or heads when 0).
std::int64_t kv_head_count(const ModelSpec& m);
/// Query/key width of one head: head_dim, or hidden / heads.
std::int64_t qk_head_dim(const ModelSpec& m);
/// Value width of one head: v_head_dim, or the query/key width.
std::int64_t value_head_dim(const ModelSpec& m);

/// Parameters of one layer's attention block, norms of its latent projections included (the
/// header's table; the layer's two norms of width h are not).
double attention_parameters(const ModelSpec& m);

struct ParameterCount {
  double total = 0.0;      ///< every parameter
  double active = 0.0;     ///< touched by one token (MoE: top_k + shared experts)
  double embedding = 0.0;  ///< the input embedding table
};

ParameterCount parameters(const ModelSpec& m);

/// Model FLOPs per trained token at sequence length `seq` (see the header comment).
double training_flops_per_token(const ModelSpec& m, std::int64_t seq);

}  // namespace clustersim::workload
