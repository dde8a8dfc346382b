// tinynet as a model package (docs/model-packages.md): batch, height and width are dynamic, so
// one engine serves a range of image sizes.
#include "tensoracle/package.h"
#include "tensoracle/version.h"
#include "tinynet.h"

namespace {

tensoracle::Status define_tinynet(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return tinynet::define(net, weights, {-1, 3, -1, -1});
}

// TENSORACLE_EXAMPLE_WEIGHTS is set by examples/CMakeLists.txt to the fixture weights.
const TensoracleModelGraph kGraphs[] = {
    {"tinynet", "1", "small residual CNN: conv/bn/relu, max pool, residual block, global average pool, linear, softmax",
     TENSORACLE_EXAMPLE_WEIGHTS, "image:1x3x16x16:2x3x16x16:8x3x32x32", &define_tinynet},
};
const TensoracleModelPackage kPackage = {"tinynet", TENSORACLE_VERSION_STRING, 1, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
