// tiny_transformer: a two-block pre-LN causal transformer (token + position embeddings, layer
// norm, multi-head attention, GELU MLP, residuals) defined against PyTorch state_dict names.
// The PyTorch module it mirrors is in scripts/gen-example-models.py.
#pragma once

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace tiny_transformer {

struct Config {
  int64_t vocab = 50;
  int64_t max_len = 16;
  int64_t d_model = 32;
  int64_t heads = 4;
  int64_t blocks = 2;
};

inline constexpr const char* kInput = "tokens";   // int64 [N, L], L <= max_len
inline constexpr const char* kOutput = "logits";  // fp32 [N, L, vocab]

tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights, int64_t batch, int64_t length,
                          const Config& config = {});

}  // namespace tiny_transformer
