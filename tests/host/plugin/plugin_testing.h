// Shared by the plugin tests: the test plugin libraries (test_plugins/, built by CMake), and a
// small network around test::scale_add: y = relu(scale_add(x, b; scale)), x and b [batch, 4].
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tensoracle/build.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle::testing {

inline const PluginIdentity kScaleAdd{"scale_add", "1.0.0", "test"};

inline PluginRegistry test_plugins(const std::string& library = TEST_PLUGINS_LIBRARY) {
  PluginRegistry registry;
  const Status loaded = registry.load_library(library);
  EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  return registry;
}

inline std::string float_bytes(float value) {
  std::string bytes(sizeof value, '\0');
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

inline EngineBuild scale_add_build(PluginRegistry plugins, float scale = 2.5f) {
  EngineBuild build;
  build.name = "scale_add_net";
  build.graph_version = "1";
  build.graph = [scale](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, 4});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, 4});
    std::vector<Tensor> y = net.plugin({x, b}, kScaleAdd, float_bytes(scale), "scale_add");
    if (!y.empty()) net.mark_output(net.relu(y[0]), "y");
    return net.status();
  };
  build.weights = Weights::none();
  build.add_input("x", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.add_input("b", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.backend = "cpu";
  build.quiet = true;
  build.plugins = std::move(plugins);
  return build;
}

}  // namespace tensoracle::testing
