// The BERT-base encoder as a model package (docs/models.md): one graph per precision (fp32, fp16,
// bf16, and int8 / fp8 through explicit Q/DQ), each for 128 tokens with a dynamic batch. There
// are no default weights (they are too big to commit): pass the weights.safetensors that
// scripts/gen-model-references.py writes (or any Hugging Face BertModel state_dict saved as
// safetensors) with --weights; the quantized graphs also need the scales (docs/quantization.md).
#include "tensoracle/package.h"

#include "bert_encoder.h"
#include "tensoracle/version.h"

namespace {

using tensoracle::DataType;

template <DataType kPrecision>
tensoracle::Status define_bert(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return bert_encoder::define(net, weights, -1, 128, kPrecision);
}

// Explicitly quantized (docs/quantization.md): the weights must hold the scales too.
template <DataType kFormat, DataType kPrecision>
tensoracle::Status define_quantized(tensoracle::Network& net, const tensoracle::Weights& weights) {
  bert_encoder::Config config;
  config.quantization = kFormat;
  return bert_encoder::define(net, weights, -1, 128, kPrecision, config);
}

constexpr const char* kInputs = "input_ids:1x128:8x128:32x128;attention_mask:1x128:8x128:32x128";
const TensoracleModelGraph kGraphs[] = {
    {"bert_encoder", "1", "Hugging Face BertModel (bert-base), last hidden state, 128 tokens, fp32", nullptr, kInputs,
     &define_bert<DataType::kFloat32>},
    {"bert_encoder_fp16", "1", "Hugging Face BertModel (bert-base), 128 tokens, fp16 layers, fp32 output", nullptr,
     kInputs, &define_bert<DataType::kFloat16>},
    {"bert_encoder_bf16", "1", "Hugging Face BertModel (bert-base), 128 tokens, bf16 layers, fp32 output", nullptr,
     kInputs, &define_bert<DataType::kBFloat16>},
    {"bert_encoder_int8", "1",
     "Hugging Face BertModel (bert-base), 128 tokens, int8 Q/DQ on every linear layer (weights per channel), fp32 "
     "between; calibrate this one",
     nullptr, kInputs, &define_quantized<DataType::kInt8, DataType::kFloat32>},
    {"bert_encoder_fp8", "1",
     "Hugging Face BertModel (bert-base), 128 tokens, fp8 e4m3 Q/DQ on every linear layer (weights per channel), "
     "fp32 between; calibrate this one",
     nullptr, kInputs, &define_quantized<DataType::kFloat8E4M3, DataType::kFloat32>},
    {"bert_encoder_int8_fp16", "1", "bert_encoder_int8 with fp16 between the quantized layers (the same scales)",
     nullptr, kInputs, &define_quantized<DataType::kInt8, DataType::kFloat16>},
    {"bert_encoder_fp8_fp16", "1", "bert_encoder_fp8 with fp16 between the quantized layers (the same scales)",
     nullptr, kInputs, &define_quantized<DataType::kFloat8E4M3, DataType::kFloat16>},
};
const TensoracleModelPackage kPackage = {"bert_encoder", TENSORACLE_VERSION_STRING,
                                         sizeof kGraphs / sizeof kGraphs[0], kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
