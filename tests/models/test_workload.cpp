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
  // DeepSeek-V3: 671B total, 37B active (its MLA attention is modelled as MHA: looser).
  const Row rows[] = {
      {"llama3-8b", 8.03e9, 8.03e9, 0.01},      {"llama3-70b", 70.6e9, 70.6e9, 0.01},
      {"llama3-405b", 405.9e9, 405.9e9, 0.01},  {"gpt3-175b", 175e9, 175e9, 0.01},
      {"gpt-1t", 1008e9, 1008e9, 0.01},         {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01},
      {"deepseek-v3", 671e9, 37e9, 0.06},
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
