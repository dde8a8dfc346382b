#include "tiny_transformer.h"

#include <string>

namespace tiny_transformer {

using namespace tensoracle;

namespace {

struct Builder {
  Network& net;
  const Weights& w;
  const Config& cfg;

  // nn.Linear: x W^T + b.
  Tensor linear(Tensor x, const std::string& name) {
    Tensor y = net.matmul(x, net.weight(w, name + ".weight"), MatMulAttributes().set_transpose_b(true).set_name(name));
    return net.add(y, net.weight(w, name + ".bias"));
  }
  Tensor layer_norm(Tensor x, const std::string& name) {
    return net.layer_norm(x, net.weight(w, name + ".weight"), net.weight(w, name + ".bias"),
                          LayerNormAttributes().set_epsilon(1e-5).set_name(name));
  }
  // [N, L, d] -> [N, heads, L, d / heads]
  Tensor split_heads(Tensor x) {
    x = net.reshape(x, ReshapeAttributes().set_shape({0, 0, cfg.heads, cfg.d_model / cfg.heads}));
    return net.transpose(x, TransposeAttributes().set_perm({0, 2, 1, 3}));
  }
  Tensor attention(Tensor x, const std::string& name, int64_t length) {
    Tensor qkv = linear(x, name + ".qkv");
    auto part = [&](int64_t i) {
      return split_heads(net.slice(qkv, SliceAttributes().set_start({0, 0, i * cfg.d_model}).set_size({batch, length, cfg.d_model})));
    };
    Tensor y = net.attention(part(0), part(1), part(2), {}, AttentionAttributes().set_causal(true).set_name(name + ".sdpa"));
    y = net.transpose(y, TransposeAttributes().set_perm({0, 2, 1, 3}));
    y = net.reshape(y, ReshapeAttributes().set_shape({0, 0, cfg.d_model}));
    return linear(y, name + ".proj");
  }
  int64_t batch = 0;
};

}  // namespace

Status define(Network& net, const Weights& w, int64_t batch, int64_t length, const Config& cfg) {
  Builder b{net, w, cfg};
  b.batch = batch;
  Tensor tokens = net.add_input(kInput, DataType::kInt64, {batch, length});
  Tensor x = net.gather(net.weight(w, "embed.weight"), tokens, GatherAttributes().set_name("embed"));
  Tensor positions = net.slice(net.weight(w, "pos.weight"), SliceAttributes().set_start({0, 0}).set_size({length, cfg.d_model}));
  x = net.add(x, positions);
  for (int64_t i = 0; i < cfg.blocks; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    x = net.add(x, b.attention(b.layer_norm(x, p + ".ln1"), p + ".attn", length));
    Tensor h = net.gelu(b.linear(b.layer_norm(x, p + ".ln2"), p + ".fc1"));
    x = net.add(x, b.linear(h, p + ".fc2"));
  }
  net.mark_output(b.linear(b.layer_norm(x, "ln_f"), "head"), kOutput);
  return net.status();
}

}  // namespace tiny_transformer
