// tiny_transformer as a model package (docs/model-packages.md). Its graph fixes batch and
// sequence length (the position slice and head split are defined for one length), so its
// engine has one fixed shape: tokens int64[2, 8].
#include "tensoracle/package.h"
#include "tensoracle/version.h"
#include "tiny_transformer.h"

namespace {

tensoracle::Status define_tiny_transformer(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return tiny_transformer::define(net, weights, 2, 8);
}

// TENSORACLE_EXAMPLE_WEIGHTS is set by examples/CMakeLists.txt to the fixture weights.
const TensoracleModelGraph kGraphs[] = {
    {"tiny_transformer", "1", "two-block pre-LN causal transformer (vocab 50, d_model 32, 4 heads), tokens [2, 8]",
     TENSORACLE_EXAMPLE_WEIGHTS, "tokens:2x8", &define_tiny_transformer},
};
const TensoracleModelPackage kPackage = {"tiny_transformer", TENSORACLE_VERSION_STRING, 1, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
