// The model catalog: every entry decodes and validates, and parameter counts match the
// published sizes.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/workload/model.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::workload;

namespace {

ModelCatalog catalog() {
  config::LoadState state;
  ModelCatalog c;
  config::Codec<ModelCatalog>::decode(YAML::Load(std::string(builtin_models_text())), c,
                                      config::Context(state, std::string(kBuiltinModelsFile)));
  if (state.diagnostics.ok()) config::check_required(c, "", state);
  INFO(state.diagnostics.format());
  REQUIRE(state.diagnostics.ok());
  return c;
}

}  // namespace

TEST_CASE("the model catalog decodes, validates and cites a source for every entry") {
  const ModelCatalog c = catalog();
  for (const char* name : {"gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "gpt-1t", "mixtral-8x7b", "deepseek-v3"}) {
    CAPTURE(name);
    REQUIRE(c.models.count(name) == 1);
    CHECK(validate(c.models.at(name)).empty());
    CHECK_FALSE(c.models.at(name).source.empty());
  }
}

TEST_CASE("parameter counts match the published model sizes") {
  const ModelCatalog c = catalog();
  struct Row {
    const char* name;
    double total;   // published
    double active;
    double tolerance;
  };
  // Llama 3: 8.03B, 70.6B, 405.9B (released checkpoints); GPT-3 175B (Brown et al.);
  // Megatron's 1T row: 1008B; Mixtral 8x7B: 46.7B total, 12.9B active (Jiang et al.);
  // DeepSeek-V3: 671B total, 37B active (its low-rank MLA projections counted: 671.0B and
  // 37.6B; as multi-head attention of width 7168 it came to 672.1B and 38.7B).
  const Row rows[] = {
      {"llama3-8b", 8.03e9, 8.03e9, 0.01},      {"llama3-70b", 70.6e9, 70.6e9, 0.01},
      {"llama3-405b", 405.9e9, 405.9e9, 0.01},  {"gpt3-175b", 175e9, 175e9, 0.01},
      {"gpt-1t", 1008e9, 1008e9, 0.01},         {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01},
      {"deepseek-v3", 671e9, 37e9, 0.02},
  };
  for (const Row& r : rows) {
    CAPTURE(r.name);
    const ParameterCount p = parameters(c.models.at(r.name));
    CHECK(p.total == Rel(r.total).epsilon(r.tolerance));
    CHECK(p.active == Rel(r.active).epsilon(r.tolerance));
  }
}

TEST_CASE("training FLOPs per token: 6 N (without the input embedding, with the output layer) + 12 L h s") {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.ffn_hidden = 32;
  m.ffn = Mlp::gelu;
  m.vocab = 10;
  m.seq_len = 4;
  m.tied_embeddings = true;
  // Per layer: attention 4 h^2 = 256, MLP 2 h f = 512, norms 2h = 16; final norm 8;
  // embedding 80 (tied): N = 2 x 784 + 8 + 80 = 1656.
  CHECK(parameters(m).total == 1656);
  // The tied output layer multiplies by the 80-entry table too:
  // 6 x (1656 - 80 + 80) + 12 x 2 x 8 x 4 = 9936 + 768
  CHECK(training_flops_per_token(m, 4) == 9936 + 768);
  m.tied_embeddings = false;  // an untied output layer is a parameter of its own: N = 1736
  CHECK(training_flops_per_token(m, 4) == 6 * (1736 - 80) + 768);
  m.tied_embeddings = true;
  m.kv_heads = 3;
  CHECK(validate(m) == "heads 2 is not a multiple of kv_heads 3");
}

TEST_CASE("the catalog's modern models train without dropout; GPT-3 and Megatron's GPT with it") {
  // Llama 3's, Mixtral's and DeepSeek-V3's reference code has no dropout layer (their released
  // configs: attention_dropout 0.0); GPT-3 and Megatron-LM's GPT train with dropout 0.1.
  const ModelCatalog c = catalog();
  for (const char* name : {"llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "deepseek-v3"}) {
    CAPTURE(name);
    CHECK_FALSE(c.models.at(name).dropout);
  }
  CHECK(c.models.at("gpt3-175b").dropout);
  CHECK(c.models.at("gpt-1t").dropout);
}

TEST_CASE("head widths other than hidden / heads: parameters and attention FLOPs follow d and d_v") {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;
  m.head_dim = 6;
  m.v_head_dim = 4;
  m.ffn_hidden = 32;
  m.ffn = Mlp::gelu;
  m.vocab = 10;
  m.seq_len = 4;
  m.tied_embeddings = true;
  CHECK(validate(m).empty());
  // Attention: Q h a d = 96, K and V h kv (d + d_v) = 80, output a d_v h = 64: 240.
  CHECK(attention_parameters(m) == 240);
  // Per layer 240 + MLP 2 h f = 512 + norms 16 = 768; 2 layers + final norm 8 + embedding 80.
  CHECK(parameters(m).total == 2 * 768 + 8 + 80);
  // 6 N (tied output layer counted) + 6 L s a (d + d_v) = 6 x 1624 + 6 x 2 x 4 x 2 x 10.
  CHECK(training_flops_per_token(m, 4) == 6 * 1624 + 960);
  // hidden need not divide among the heads when head_dim is given (Gemma 7B: 3072, 16 x 256).
  m.hidden = 9;
  CHECK(validate(m).empty());
  m.head_dim = 0;
  CHECK_FALSE(validate(m).empty());
}

TEST_CASE("multi-head latent attention: DeepSeek-V3's low-rank projections, per layer") {
  // DeepSeek-V2 (arXiv 2405.04434) equations 9-10 and 14-15 with DeepSeek-V3's config
  // (h 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, q/k heads 128 + 64 RoPE, v 128)
  // and the latent norms:
  //   Q   7168 x 1536 + 1536 + 1536 x 128 x 192                = 48,760,320
  //   KV  7168 x (512 + 64) + 512 + 512 x 128 x (128 + 128)    = 20,906,496
  //   O   128 x 128 x 7168                                     = 117,440,512
  const ModelCatalog c = catalog();
  CHECK(attention_parameters(c.models.at("deepseek-v3")) == 48'760'320.0 + 20'906'496.0 + 117'440'512.0);
  ModelSpec m = c.models.at("deepseek-v3");
  m.kv_heads = 8;
  CHECK(validate(m) ==
        "kv_lora_rank (multi-head latent attention) gives every head its own key and value: kv_heads 8 must equal heads "
        "128");
  m = c.models.at("deepseek-v3");
  m.kv_lora_rank = 0;
  CHECK(validate(m) == "rope_head_dim (a decoupled RoPE key) needs kv_lora_rank");
}

TEST_CASE("a model's relations: every one that does not hold, each at its own key with a mend") {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1000;
  m.heads = 16;  // 1000 / 16 is not whole, and no head_dim
  m.kv_heads = 3;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 2048;
  m.rope_head_dim = 32;  // without kv_lora_rank
  m.top_k = 2;           // without experts
  m.dense_layers = 8;    // without experts, and above layers
  const std::vector<ModelProblem> p = model_problems(m);
  std::vector<std::string> keys;
  for (const ModelProblem& x : p) {
    keys.push_back(x.key);
    CHECK_FALSE(x.hint.empty());
  }
  CHECK(keys == std::vector<std::string>{"heads", "kv_heads", "rope_head_dim", "top_k", "dense_layers"});
  CHECK(p[3].message == "top_k and dense_layers need experts: the model has none (experts: 0)");
  CHECK(validate(m) == p.front().message);

  // A mixture of experts: top_k within 1..experts, an expert width.
  ModelSpec moe = m;
  moe.hidden = 1024;
  moe.kv_heads = 8;
  moe.rope_head_dim = 0;
  moe.dense_layers = 1;
  moe.experts = 8;
  moe.top_k = 9;
  const std::vector<ModelProblem> q = model_problems(moe);
  REQUIRE(q.size() == 2);
  CHECK(q[0].key == "top_k");
  CHECK(q[0].hint == "top_k: 2");
  CHECK(q[1].key == "expert_ffn_hidden");
  moe.top_k = 2;
  moe.expert_ffn_hidden = 512;
  CHECK(model_problems(moe).empty());
  // Without its sizes (a required key missing, said by the field table) nothing is checked,
  // and nothing is divided by 0 heads.
  moe.heads = 0;
  CHECK(model_problems(moe).empty());
}
