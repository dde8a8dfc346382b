// The BERT-base encoder as a model package (docs/models.md): one graph per precision, each for
// 128 tokens with a dynamic batch. There are no default weights (they are too big to commit):
// pass the weights.safetensors that scripts/gen-model-references.py writes (or any Hugging Face
// BertModel state_dict saved as safetensors) with --weights.
#include "tensoracle/package.h"

#include "bert_encoder.h"
#include "tensoracle/version.h"

namespace {

using tensoracle::DataType;

template <DataType kPrecision>
tensoracle::Status define_bert(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return bert_encoder::define(net, weights, -1, 128, kPrecision);
}

constexpr const char* kInputs = "input_ids:1x128:8x128:32x128;attention_mask:1x128:8x128:32x128";
const TensoracleModelGraph kGraphs[] = {
    {"bert_encoder", "1", "Hugging Face BertModel (bert-base), last hidden state, 128 tokens, fp32", nullptr, kInputs,
     &define_bert<DataType::kFloat32>},
    {"bert_encoder_fp16", "1", "Hugging Face BertModel (bert-base), 128 tokens, fp16 layers, fp32 output", nullptr,
     kInputs, &define_bert<DataType::kFloat16>},
    {"bert_encoder_bf16", "1", "Hugging Face BertModel (bert-base), 128 tokens, bf16 layers, fp32 output", nullptr,
     kInputs, &define_bert<DataType::kBFloat16>},
};
const TensoracleModelPackage kPackage = {"bert_encoder", TENSORACLE_VERSION_STRING, 3, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
