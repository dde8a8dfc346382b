// tinynet as a model package (docs/model-packages.md): batch, height and width are dynamic, so
// one engine serves a range of image sizes. Besides the module ("tinynet") the package offers
// the forms the four-stage workflow example uses (examples/tinynet/pipeline.toml): fp16 and bf16
// layers (stage 2), a recomposition from other standard layers (stage 3) and a deliberately
// heavier equivalent (stage 4).
#include "tensoracle/package.h"
#include "tensoracle/version.h"
#include "tinynet.h"

namespace {

using tensoracle::DataType;
using tinynet::Variant;

template <DataType kPrecision, Variant kVariant>
tensoracle::Status define_tinynet(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return tinynet::define(net, weights, {-1, 3, -1, -1}, kPrecision, kVariant);
}

// TENSORACLE_EXAMPLE_WEIGHTS is set by examples/CMakeLists.txt to the fixture weights.
constexpr const char* kInputs = "image:1x3x16x16:2x3x16x16:8x3x32x32";
const TensoracleModelGraph kGraphs[] = {
    {"tinynet", "1", "small residual CNN: conv/bn/relu, max pool, residual block, global average pool, linear, softmax",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_tinynet<DataType::kFloat32, Variant::kModule>},
    {"tinynet_fp16", "1", "tinynet with fp16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_tinynet<DataType::kFloat16, Variant::kModule>},
    {"tinynet_bf16", "1", "tinynet with bf16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_tinynet<DataType::kBFloat16, Variant::kModule>},
    {"tinynet_recomposed", "1", "tinynet from other standard layers: max pool before the relu, the average pool as a mean",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_tinynet<DataType::kFloat32, Variant::kRecomposed>},
    {"tinynet_recomposed_fp16", "1", "tinynet_recomposed with fp16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_tinynet<DataType::kFloat16, Variant::kRecomposed>},
    {"tinynet_redundant", "1", "tinynet computing every convolution four times over (the same outputs for more work)",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_tinynet<DataType::kFloat32, Variant::kRedundant>},
};
const TensoracleModelPackage kPackage = {"tinynet", TENSORACLE_VERSION_STRING, sizeof(kGraphs) / sizeof(kGraphs[0]), kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
