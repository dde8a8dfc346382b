// ResNet-50 as a model package (docs/models.md): one graph per precision, each with a dynamic
// batch at 224x224. There are no default weights (they are too big to commit): pass the
// weights.safetensors that scripts/gen-model-references.py writes (or any torchvision ResNet-50
// state_dict converted to safetensors) with --weights.
#include "tensoracle/package.h"

#include "resnet50.h"
#include "tensoracle/version.h"

namespace {

using tensoracle::DataType;

template <DataType kPrecision>
tensoracle::Status define_resnet50(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return resnet50::define(net, weights, {-1, 3, 224, 224}, kPrecision);
}

constexpr const char* kInputs = "image:1x3x224x224:8x3x224x224:32x3x224x224";
const TensoracleModelGraph kGraphs[] = {
    {"resnet50", "1", "torchvision ResNet-50 (v1.5), fp32", nullptr, kInputs, &define_resnet50<DataType::kFloat32>},
    {"resnet50_fp16", "1", "torchvision ResNet-50 (v1.5), fp16 layers, fp32 I/O", nullptr, kInputs,
     &define_resnet50<DataType::kFloat16>},
    {"resnet50_bf16", "1", "torchvision ResNet-50 (v1.5), bf16 layers, fp32 I/O", nullptr, kInputs,
     &define_resnet50<DataType::kBFloat16>},
};
const TensoracleModelPackage kPackage = {"resnet50", TENSORACLE_VERSION_STRING, 3, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
