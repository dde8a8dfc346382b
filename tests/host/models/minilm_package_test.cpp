// The all-MiniLM-L6-v2 package (examples/minilm) on the CPU reference backend, with seeded random
// weights of the real model's shapes under BertModel's state_dict names (CI has no copy of the
// trained weights; scripts/minilm-quality.py measures those on the GPU machine): it offers one
// graph per precision for 128 tokens and a batch of 1 to 32, and each of them builds; the fp32
// one gives a last hidden state of hidden size 384.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "host/io/io_test_support.h"
#include "host/models/state_dicts.h"
#include "minilm/minilm.h"
#include "tensoracle/engine.h"
#include "tensoracle/package.h"

namespace tensoracle {
namespace {

const std::vector<std::string> kGraphs = {"minilm",           "minilm_fp16",      "minilm_bf16",
                                          "minilm_int8",      "minilm_fp8",       "minilm_int8_mixed",
                                          "minilm_int8_mixed_fp16", "minilm_int8_fp16", "minilm_fp8_fp16"};

bool quantized(const std::string& graph) {
  return graph.find("int8") != std::string::npos || graph.find("fp8") != std::string::npos;
}

TEST(MiniLMPackage, ConfigIsAllMiniLML6V2) {
  const bert_encoder::Config cfg = minilm::config();
  EXPECT_EQ(cfg.hidden, 384);
  EXPECT_EQ(cfg.heads, 12);
  EXPECT_EQ(cfg.intermediate, 1536);
  EXPECT_EQ(cfg.layers, 6);
  EXPECT_EQ(cfg.vocab, 30522);
  EXPECT_EQ(cfg.layer_norm_eps, 1e-12);
  // The model's safetensors hold 22,713,216 parameters besides its position_ids buffer (the
  // pooler's 147,840 included, which the graph does not read).
  int64_t elements = 0;
  for (const auto& entry : testing::bert_state_dict(cfg)) elements += entry.second.element_count().value();
  EXPECT_EQ(elements, 22713216);
}

TEST(MiniLMPackage, OffersEveryPrecisionFor128TokensAndABatchOfOneTo32) {
  auto package = ModelPackage::load(MINILM_PACKAGE);
  ASSERT_TRUE(package.is_ok()) << package.status().to_string();
  EXPECT_EQ(package->name(), "minilm");
  std::vector<std::string> names;
  for (const ModelGraphInfo& graph : package->graphs()) {
    names.push_back(graph.name);
    EXPECT_TRUE(graph.default_weights.empty()) << graph.name << ": the trained weights are not committed";
    ASSERT_EQ(graph.default_inputs.size(), 2u) << graph.name;
    for (const InputDeclaration& input : graph.default_inputs) {
      ASSERT_EQ(input.profiles.size(), 1u);
      EXPECT_EQ(input.profiles[0].min, Dims({1, minilm::kLength})) << graph.name << " " << input.name;
      EXPECT_EQ(input.profiles[0].max, Dims({32, minilm::kLength})) << graph.name << " " << input.name;
    }
  }
  EXPECT_EQ(names, kGraphs);
}

TEST(MiniLMPackage, EveryGraphBuildsWithWeightsOfTheModelsShapes) {
  testing::TempDir dir;
  const Weights weights = testing::write_weights(
      dir, testing::random_state_dict(testing::bert_state_dict(minilm::config()), 19), "minilm.safetensors");
  auto package = ModelPackage::load(MINILM_PACKAGE);
  ASSERT_TRUE(package.is_ok()) << package.status().to_string();
  for (const std::string& graph : kGraphs) {
    SCOPED_TRACE(graph);
    auto build = package->engine_build(graph);
    ASSERT_TRUE(build.is_ok()) << build.status().to_string();
    // Unit scales stand in for a calibration's (quantized_models_test calibrates the same graph
    // function at a small size).
    build->weights = quantized(graph) ? Weights::with_unit_placeholders(weights) : weights;
    build->quiet = true;
    auto bytes = build_serialized_engine(*build);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    auto engine = Engine::deserialize(bytes->data(), bytes->size());
    ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
    EXPECT_EQ(engine->tensor(bert_encoder::kOutput)->dtype, DataType::kFloat32);
    if (graph != "minilm") continue;

    // One sentence of five tokens, padded to 128.
    HostArray ids = HostArray::zeros(DataType::kInt64, {1, minilm::kLength}).value();
    HostArray mask = HostArray::zeros(DataType::kInt64, {1, minilm::kLength}).value();
    const int64_t tokens[] = {101, 7592, 2088, 999, 102};
    for (int64_t i = 0; i < 5; ++i) {
      ids.data_as<int64_t>()[i] = tokens[i];
      mask.data_as<int64_t>()[i] = 1;
    }
    auto exec = engine->create_execution();
    ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
    auto out = exec->run_on_host({{bert_encoder::kInputIds, ids.view()}, {bert_encoder::kAttentionMask, mask.view()}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const HostArray& hidden = out->at(bert_encoder::kOutput);
    EXPECT_EQ(hidden.shape(), Dims({1, minilm::kLength, 384}));
    for (int64_t i = 0; i < hidden.element_count(); ++i)
      ASSERT_TRUE(std::isfinite(hidden.data_as<float>()[i])) << "element " << i;
  }
}

}  // namespace
}  // namespace tensoracle
