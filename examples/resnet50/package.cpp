// ResNet-50 as a model package (docs/models.md): one graph per precision (fp32, fp16, bf16, and
// int8 / fp8 through explicit Q/DQ), each with a dynamic batch at 224x224. There are no default
// weights (they are too big to commit): pass the weights.safetensors that
// scripts/gen-model-references.py writes (or any torchvision ResNet-50 state_dict converted to
// safetensors) with --weights; the quantized graphs also need the scales (docs/quantization.md).
#include "tensoracle/package.h"

#include "resnet50.h"
#include "tensoracle/version.h"

namespace {

using tensoracle::DataType;

template <DataType kPrecision>
tensoracle::Status define_resnet50(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return resnet50::define(net, weights, {-1, 3, 224, 224}, kPrecision);
}

// Explicitly quantized (docs/quantization.md): the weights must hold the scales too.
template <DataType kFormat, DataType kPrecision>
tensoracle::Status define_quantized(tensoracle::Network& net, const tensoracle::Weights& weights) {
  resnet50::Config config;
  config.quantization = kFormat;
  return resnet50::define(net, weights, {-1, 3, 224, 224}, kPrecision, config);
}

constexpr const char* kInputs = "image:1x3x224x224:8x3x224x224:32x3x224x224";
const TensoracleModelGraph kGraphs[] = {
    {"resnet50", "1", "torchvision ResNet-50 (v1.5), fp32", nullptr, kInputs, &define_resnet50<DataType::kFloat32>},
    {"resnet50_fp16", "1", "torchvision ResNet-50 (v1.5), fp16 layers, fp32 I/O", nullptr, kInputs,
     &define_resnet50<DataType::kFloat16>},
    {"resnet50_bf16", "1", "torchvision ResNet-50 (v1.5), bf16 layers, fp32 I/O", nullptr, kInputs,
     &define_resnet50<DataType::kBFloat16>},
    {"resnet50_int8", "1",
     "torchvision ResNet-50 (v1.5), batch norms folded, int8 Q/DQ on every conv and fc (weights per channel), fp32 "
     "between; calibrate this one",
     nullptr, kInputs, &define_quantized<DataType::kInt8, DataType::kFloat32>},
    {"resnet50_fp8", "1",
     "torchvision ResNet-50 (v1.5), batch norms folded, fp8 e4m3 Q/DQ on every conv and fc (weights per channel), "
     "fp32 between; calibrate this one",
     nullptr, kInputs, &define_quantized<DataType::kFloat8E4M3, DataType::kFloat32>},
    {"resnet50_int8_fp16", "1", "resnet50_int8 with fp16 between the quantized layers (the same scales)", nullptr,
     kInputs, &define_quantized<DataType::kInt8, DataType::kFloat16>},
    {"resnet50_fp8_fp16", "1", "resnet50_fp8 with fp16 between the quantized layers (the same scales)", nullptr,
     kInputs, &define_quantized<DataType::kFloat8E4M3, DataType::kFloat16>},
};
const TensoracleModelPackage kPackage = {"resnet50", TENSORACLE_VERSION_STRING, sizeof kGraphs / sizeof kGraphs[0],
                                         kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
