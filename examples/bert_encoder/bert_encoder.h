// bert_encoder: Hugging Face transformers' BertModel (post-LN encoder, absolute position
// embeddings, GELU (erf) feed-forward) defined against its state_dict names
// ("embeddings.word_embeddings.weight", "encoder.layer.3.attention.self.query.weight", ...).
// The output is the last hidden state; the pooler is not part of the graph. Token type ids are
// all zero (row 0 of the token type embedding). The PyTorch reference is made by
// scripts/gen-model-references.py; docs/models.md describes the package.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace bert_encoder {

// BertConfig() by default (bert-base); smaller values give the same structure at a size a CPU
// test can run (the state_dict names do not change). vocab, type_vocab and intermediate describe
// the model; the graph takes those sizes from the weights' shapes.
struct Config {
  int64_t vocab = 30522;
  int64_t max_positions = 512;
  int64_t type_vocab = 2;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t layers = 12;
  double layer_norm_eps = 1e-12;
  // int8 or fp8e4m3: explicit quantization (docs/quantization.md) of every linear layer (query,
  // key, value, attention output, intermediate, output): Q/DQ on its input (per tensor, scale
  // "<layer>.input_scale") and weight (per output channel, "<layer>.weight_scale"); attention,
  // norms and the rest compute in `precision`.
  std::optional<tensoracle::DataType> quantization;
  // With quantization: the linear layers whose names one of these ECMAScript regular expressions
  // finds stay unquantized and compute in `precision` (e.g. R"(layer\.\d+\.output\.dense$)": the
  // feed-forward's second layer, whose input in a trained model has outlier channels that one
  // per-tensor int8 scale cannot hold together with the others).
  std::vector<std::string> unquantized;
};

inline constexpr const char* kInputIds = "input_ids";            // int64 [N, L], token ids in [0, vocab)
inline constexpr const char* kAttentionMask = "attention_mask";  // int64 [N, L]: non-zero keeps, 0 pads
inline constexpr const char* kOutput = "last_hidden_state";      // fp32 [N, L, hidden]

// Defines the network for `length` tokens per sequence (1 <= length <= max_positions; fixed,
// since the position embeddings are sliced to it); `batch` may be -1 (dynamic). `precision`
// (fp32, fp16 or bf16) is the type every layer computes in: every weight is cast to it right after
// it is read, the padding mask is built in it, and the output is cast back to fp32, so the
// engine's I/O does not depend on the precision. With config.quantization the weights must also
// hold the scales (tensoracle calibrate writes them; docs/quantization.md).
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights, int64_t batch, int64_t length,
                          tensoracle::DataType precision = tensoracle::DataType::kFloat32, const Config& config = {});

}  // namespace bert_encoder
