// State dicts of the example models at reduced sizes with seeded weights, for the model graph
// tests and the canonical-form goldens.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "bert_encoder/bert_encoder.h"
#include "host/io/io_test_support.h"
#include "resnet50/resnet50.h"
#include "tensoracle/array.h"
#include "tensoracle/safetensors.h"

namespace tensoracle::testing {

using StateDictShapes = std::map<std::string, Dims>;

// torchvision resnet50's floating-point state_dict entries for `cfg` (the reference script drops
// the integer num_batches_tracked counters).
inline StateDictShapes resnet_state_dict(const resnet50::Config& cfg) {
  StateDictShapes shapes;
  auto conv_bn = [&](const std::string& conv, const std::string& bn, int64_t in, int64_t out, int64_t k) {
    shapes[conv + ".weight"] = {out, in, k, k};
    for (const char* p : {".weight", ".bias", ".running_mean", ".running_var"}) shapes[bn + p] = {out};
  };
  conv_bn("conv1", "bn1", 3, cfg.width, 7);
  int64_t in = cfg.width;
  for (size_t stage = 0; stage < cfg.blocks.size(); ++stage) {
    const int64_t mid = cfg.width << stage;
    for (int64_t i = 0; i < cfg.blocks[stage]; ++i) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      conv_bn(p + ".conv1", p + ".bn1", in, mid, 1);
      conv_bn(p + ".conv2", p + ".bn2", mid, mid, 3);
      conv_bn(p + ".conv3", p + ".bn3", mid, 4 * mid, 1);
      if (i == 0) conv_bn(p + ".downsample.0", p + ".downsample.1", in, 4 * mid, 1);
      in = 4 * mid;
    }
  }
  shapes["fc.weight"] = {cfg.num_classes, in};
  shapes["fc.bias"] = {cfg.num_classes};
  return shapes;
}

// BertModel's state_dict entries for `cfg`, the pooler included (the graph does not read it).
inline StateDictShapes bert_state_dict(const bert_encoder::Config& cfg) {
  const int64_t h = cfg.hidden;
  StateDictShapes shapes = {
      {"embeddings.word_embeddings.weight", {cfg.vocab, h}},
      {"embeddings.position_embeddings.weight", {cfg.max_positions, h}},
      {"embeddings.token_type_embeddings.weight", {cfg.type_vocab, h}},
      {"embeddings.LayerNorm.weight", {h}},
      {"embeddings.LayerNorm.bias", {h}},
      {"pooler.dense.weight", {h, h}},
      {"pooler.dense.bias", {h}},
  };
  auto linear = [&](const std::string& name, int64_t in, int64_t out) {
    shapes[name + ".weight"] = {out, in};
    shapes[name + ".bias"] = {out};
  };
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i);
    for (const char* proj : {".query", ".key", ".value"}) linear(p + ".attention.self" + proj, h, h);
    linear(p + ".attention.output.dense", h, h);
    linear(p + ".intermediate.dense", h, cfg.intermediate);
    linear(p + ".output.dense", cfg.intermediate, h);
    for (const char* norm : {".attention.output.LayerNorm", ".output.LayerNorm"}) {
      shapes[p + norm + ".weight"] = {h};
      shapes[p + norm + ".bias"] = {h};
    }
  }
  return shapes;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Seeded values of a plausible scale: variances and norm scales in [0.5, 1.5], matrices scaled by
// 1/sqrt(fan-in) so activations stay O(1), everything else in [-0.5, 0.5].
inline NamedArrays random_state_dict(const StateDictShapes& shapes, unsigned seed) {
  std::mt19937 rng(seed);
  NamedArrays arrays;
  for (const auto& [name, shape] : shapes) {
    HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
    float lo = -0.5f, hi = 0.5f;
    if (ends_with(name, "running_var") ||
        ((ends_with(name, "LayerNorm.weight") || ends_with(name, "bn1.weight") || ends_with(name, "bn2.weight") ||
          ends_with(name, "bn3.weight") || ends_with(name, "downsample.1.weight")))) {
      lo = 0.5f;
      hi = 1.5f;
    } else if (shape.rank() >= 2 && !ends_with(name, "embeddings.weight")) {
      int64_t fan_in = 1;
      for (size_t d = 1; d < shape.rank(); ++d) fan_in *= shape[d];
      hi = static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in)));
      lo = -hi;
    }
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < a.element_count(); ++i) a.data_as<float>()[i] = dist(rng);
    arrays.emplace(name, std::move(a));
  }
  return arrays;
}

inline Weights write_weights(const TempDir& dir, const NamedArrays& arrays, const std::string& file) {
  const std::string path = dir.file(file);
  EXPECT_TRUE(write_safetensors(path, views_of(arrays)).is_ok());
  return Weights::open(path).value();
}

// Two bottlenecks in layer1 (an identity shortcut) and one downsampling block per later stage.
inline resnet50::Config small_resnet() {
  resnet50::Config cfg;
  cfg.blocks = {2, 1, 1, 1};
  cfg.width = 4;
  cfg.num_classes = 10;
  return cfg;
}

// Two encoder layers of hidden size 16 over a 50-token vocabulary.
inline bert_encoder::Config small_bert() {
  bert_encoder::Config cfg;
  cfg.vocab = 50;
  cfg.max_positions = 16;
  cfg.hidden = 16;
  cfg.heads = 4;
  cfg.intermediate = 32;
  cfg.layers = 2;
  return cfg;
}

}  // namespace tensoracle::testing
