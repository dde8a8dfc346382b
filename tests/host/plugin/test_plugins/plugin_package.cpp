// A model package whose graph uses test::scale_add (test_plugins.cpp): y = relu(x * 2.5 + b), x
// [2, 4] an input, b [2, 4] the weight "b". The CLI tests build and run it with --plugin.
#include <cstring>

#include "tensoracle/package.h"
#include "tensoracle/version.h"

namespace {

tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights) {
  tensoracle::Tensor x = net.add_input("x", tensoracle::DataType::kFloat32, {2, 4});
  const float scale = 2.5f;
  std::string parameters(sizeof scale, '\0');
  std::memcpy(parameters.data(), &scale, sizeof scale);
  std::vector<tensoracle::Tensor> y =
      net.plugin({x, net.weight(weights, "b")}, tensoracle::PluginIdentity{"scale_add", "1.0.0", "test"}, parameters, "scale_add");
  if (!y.empty()) net.mark_output(net.relu(y[0]), "y");
  return net.status();
}

const TensoracleModelGraph kGraphs[] = {
    {"scale_add_net", "1", "relu(test::scale_add(x, b)): a graph with a plugin layer", nullptr, nullptr, &define},
};
const TensoracleModelPackage kPackage = {"plugin_package", TENSORACLE_VERSION_STRING, 1, kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
