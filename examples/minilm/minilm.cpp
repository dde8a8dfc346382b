#include "minilm.h"

#include <utility>

namespace minilm {

bert_encoder::Config config(std::optional<tensoracle::DataType> quantization, std::vector<std::string> unquantized) {
  bert_encoder::Config cfg;  // vocabulary, positions, token types and eps are bert-base's
  cfg.hidden = 384;
  cfg.heads = 12;
  cfg.intermediate = 1536;
  cfg.layers = 6;
  cfg.quantization = quantization;
  cfg.unquantized = std::move(unquantized);
  return cfg;
}

tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights, int64_t batch,
                          tensoracle::DataType precision, std::optional<tensoracle::DataType> quantization,
                          std::vector<std::string> unquantized) {
  return bert_encoder::define(net, weights, batch, kLength, precision, config(quantization, std::move(unquantized)));
}

}  // namespace minilm
