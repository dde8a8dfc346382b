// The sdk_consumer model package: one graph, "affine_relu": y = relu(sdk::affine(x; a = 1.5,
// b = -0.25) + w), x an fp32 input [2, 8], w the weight "w" [2, 8]. It needs the sdk_affine plugin
// library (--plugin) and weights (--weights).
#include <cstring>
#include <string>

#include "tensoracle/package.h"
#include "tensoracle/version.h"

namespace {

tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights) {
  tensoracle::Tensor x = net.add_input("x", tensoracle::DataType::kFloat32, {2, 8});
  const float ab[2] = {1.5f, -0.25f};
  std::vector<tensoracle::Tensor> y = net.plugin({x}, tensoracle::PluginIdentity{"affine", "1.0.0", "sdk"},
                                                 std::string(reinterpret_cast<const char*>(ab), sizeof ab), "affine");
  if (!y.empty()) net.mark_output(net.relu(net.add(y[0], net.weight(weights, "w"))), "y");
  return net.status();
}

const TensoracleModelGraph kGraphs[] = {
    {"affine_relu", "1", "relu(sdk::affine(x; 1.5, -0.25) + w): a graph with a plugin layer", nullptr, nullptr, &define},
};
const TensoracleModelPackage kPackage = {"sdk_consumer", TENSORACLE_VERSION_STRING, 1, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
