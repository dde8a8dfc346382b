#include "bert_encoder.h"

#include <algorithm>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "quantization/qdq.h"

namespace bert_encoder {

using namespace tensoracle;

namespace {

// torch.finfo(dtype).min: what Hugging Face adds to the scores of padded keys.
double lowest(DataType type) {
  switch (type) {
    case DataType::kFloat16:
      return -65504.0;
    case DataType::kBFloat16:
      return -3.3895313892515355e38;  // 0xFF7F
    default:
      return static_cast<double>(std::numeric_limits<float>::lowest());
  }
}

struct Builder {
  Network& net;
  const Weights& w;
  const Config& cfg;
  DataType precision;
  std::vector<std::regex> unquantized;  // cfg.unquantized, compiled

  Tensor to(Tensor x, DataType type) { return !x.valid() || net.tensor(x).desc.dtype == type ? x : net.cast(x, type); }
  // A weight in the network's precision (the planner folds the cast of a constant).
  Tensor param(const std::string& name) { return to(net.weight(w, name), precision); }
  // A [1] constant in the network's precision (built in fp32, where every value used is exact).
  Tensor scalar(double value) {
    HostArray a = HostArray::zeros(DataType::kFloat32, {1}).value();
    a.data_as<float>()[0] = static_cast<float>(value);
    return to(net.add_constant(std::move(a)), precision);
  }

  bool kept_unquantized(const std::string& name) const {
    return std::any_of(unquantized.begin(), unquantized.end(),
                       [&](const std::regex& pattern) { return std::regex_search(name, pattern); });
  }
  // nn.Linear: x W^T + b (Q/DQ on x and W when quantized).
  Tensor linear(Tensor x, const std::string& name) {
    Tensor weight;
    if (cfg.quantization && !kept_unquantized(name)) {
      examples::QuantizedInputs q{net, w, *cfg.quantization, precision};
      weight = q.weight(net.weight(w, name + ".weight"), name);
      x = q.activation(x, name);
    } else {
      weight = param(name + ".weight");
    }
    Tensor y = net.matmul(x, weight, MatMulAttributes().set_transpose_b(true).set_name(name));
    return net.add(y, param(name + ".bias"));
  }
  Tensor layer_norm(Tensor x, const std::string& name) {
    return net.layer_norm(x, param(name + ".weight"), param(name + ".bias"),
                          LayerNormAttributes().set_epsilon(cfg.layer_norm_eps).set_name(name));
  }
  // [N, L, hidden] <-> [N, heads, L, hidden / heads]
  Tensor split_heads(Tensor x) {
    x = net.reshape(x, ReshapeAttributes().set_shape({0, 0, cfg.heads, cfg.hidden / cfg.heads}));
    return net.transpose(x, TransposeAttributes().set_perm({0, 2, 1, 3}));
  }
  Tensor merge_heads(Tensor x) {
    x = net.transpose(x, TransposeAttributes().set_perm({0, 2, 1, 3}));
    return net.reshape(x, ReshapeAttributes().set_shape({0, 0, cfg.hidden}));
  }

  // Hugging Face 5.x (create_bidirectional_mask, eager attention): the 2D mask becomes bool, then
  // torch.where(mask, 0, finfo(dtype).min) in the model's dtype, broadcast as [N, 1, 1, L].
  Tensor additive_mask(Tensor mask, int64_t length) {
    Tensor keep = net.cast(mask, DataType::kBool);
    Tensor additive = net.select(keep, scalar(0.0), scalar(lowest(precision)), SelectAttributes().set_name("mask"));
    return net.reshape(additive, ReshapeAttributes().set_shape({0, 1, 1, length}));
  }

  // BertLayer: self-attention, dense + residual + LayerNorm, GELU feed-forward, dense + residual
  // + LayerNorm (post-LN).
  Tensor layer(Tensor x, Tensor mask, const std::string& p) {
    const std::string self = p + ".attention.self";
    Tensor context = net.attention(split_heads(linear(x, self + ".query")), split_heads(linear(x, self + ".key")),
                                   split_heads(linear(x, self + ".value")), mask, AttentionAttributes().set_name(self));
    Tensor attended = net.add(linear(merge_heads(context), p + ".attention.output.dense"), x);
    attended = layer_norm(attended, p + ".attention.output.LayerNorm");
    Tensor h = net.gelu(linear(attended, p + ".intermediate.dense"));
    return layer_norm(net.add(linear(h, p + ".output.dense"), attended), p + ".output.LayerNorm");
  }
};

}  // namespace

Status define(Network& net, const Weights& w, int64_t batch, int64_t length, DataType precision, const Config& cfg) {
  if (precision != DataType::kFloat32 && precision != DataType::kFloat16 && precision != DataType::kBFloat16)
    return Status(StatusCode::kInvalidArgument,
                  "bert_encoder: precision " + std::string(data_type_name(precision)) + " is not fp32, fp16 or bf16");
  if (length < 1 || length > cfg.max_positions)
    return Status(StatusCode::kInvalidArgument, "bert_encoder: sequence length " + std::to_string(length) +
                                                    " is outside [1, " + std::to_string(cfg.max_positions) + "]");
  if (cfg.heads < 1 || cfg.hidden % cfg.heads != 0)
    return Status(StatusCode::kInvalidArgument, "bert_encoder: hidden size " + std::to_string(cfg.hidden) +
                                                    " is not a multiple of " + std::to_string(cfg.heads) + " heads");
  if (cfg.quantization && *cfg.quantization != DataType::kInt8 && *cfg.quantization != DataType::kFloat8E4M3)
    return Status(StatusCode::kInvalidArgument, "bert_encoder: quantization " +
                                                    std::string(data_type_name(*cfg.quantization)) +
                                                    " is not int8 or fp8e4m3");
  Builder b{net, w, cfg, precision, {}};
  for (const std::string& pattern : cfg.unquantized) {
    try {
      b.unquantized.emplace_back(pattern);
    } catch (const std::regex_error& e) {
      return Status(StatusCode::kInvalidArgument,
                    "bert_encoder: unquantized pattern '" + pattern + "' is not a regular expression: " + e.what());
    }
  }
  Tensor ids = net.add_input(kInputIds, DataType::kInt64, {batch, length});
  Tensor mask = b.additive_mask(net.add_input(kAttentionMask, DataType::kInt64, {batch, length}), length);

  // BertEmbeddings: (word + token type 0) + absolute position, then LayerNorm.
  Tensor x = net.gather(b.param("embeddings.word_embeddings.weight"), ids,
                        GatherAttributes().set_name("embeddings.word_embeddings"));
  Tensor token_type = net.slice(b.param("embeddings.token_type_embeddings.weight"),
                                SliceAttributes().set_start({0, 0}).set_size({1, cfg.hidden}));
  Tensor positions = net.slice(b.param("embeddings.position_embeddings.weight"),
                               SliceAttributes().set_start({0, 0}).set_size({length, cfg.hidden}));
  x = net.add(net.add(x, token_type), positions);
  x = b.layer_norm(x, "embeddings.LayerNorm");

  for (int64_t i = 0; i < cfg.layers; ++i) x = b.layer(x, mask, "encoder.layer." + std::to_string(i));
  net.mark_output(b.to(x, DataType::kFloat32), kOutput);
  return net.status();
}

}  // namespace bert_encoder
