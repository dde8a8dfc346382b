// A small, valid cpu engine built in process by the real builder: y = relu(conv(x, w) + b), x
// [batch, 3, 8, 8] with batch 1..4 (opt 2), w [channels, 3, 3, 3] and b [channels] constants,
// padding 1. The cache tests store it; the hostile-engine tests and the fuzz seeds rewrite its
// sections (engine_surgery.h).
#pragma once

#include <string>

#include "tensoracle/build.h"
#include "tensoracle/engine_file.h"

namespace tensoracle::testing {

inline EngineBuild small_cpu_build(int64_t channels = 4, const std::string& name = "small") {
  EngineBuild build;
  build.name = name;
  build.graph_version = "1";
  build.graph = [channels](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, 3, 8, 8});
    HostArray w = HostArray::zeros(DataType::kFloat32, {channels, 3, 3, 3}).value();
    for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = 0.125f * static_cast<float>(i % 7) - 0.375f;
    HostArray b = HostArray::zeros(DataType::kFloat32, {channels}).value();
    for (int64_t i = 0; i < channels; ++i) b.data_as<float>()[i] = 0.01f * static_cast<float>(i);
    ConvolutionAttributes conv;
    conv.pre_padding = {1, 1};
    conv.post_padding = {1, 1};
    conv.name = "conv";
    Tensor y = net.convolution(x, net.add_constant(std::move(w), "w"), net.add_constant(std::move(b), "b"), conv);
    net.mark_output(net.relu(y), "y");
    return net.status();
  };
  build.weights = Weights();
  build.add_input("x", {ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}});
  build.backend = "cpu";
  build.quiet = true;
  return build;
}

inline std::string small_cpu_engine_bytes(int64_t channels = 4) {
  return build_serialized_engine(small_cpu_build(channels)).value();
}

// For cache builders and benchmarks: y = x @ w, x [batch, k] (batch 1..4), w a k x k constant of
// about `weight_bytes` (k = sqrt(weight_bytes / 4)), so big weights come with small activations.
inline EngineWriter small_cpu_engine_writer(size_t weight_bytes = 300) {
  int64_t k = 1;
  while (4 * (k + 1) * (k + 1) <= static_cast<int64_t>(weight_bytes)) ++k;
  EngineBuild build;
  build.name = "matmul";
  build.graph_version = "1";
  build.graph = [k](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, k});
    HostArray w = HostArray::zeros(DataType::kFloat32, {k, k}).value();
    for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = static_cast<float>(i % 13) - 6.0f;
    net.mark_output(net.matmul(x, net.add_constant(std::move(w), "w")), "y");
    return net.status();
  };
  build.weights = Weights();
  build.add_input("x", {ShapeRange{{1, k}, {2, k}, {4, k}}});
  build.backend = "cpu";
  build.quiet = true;
  return plan_engine(build, prepare_build(build).value()).value();
}

}  // namespace tensoracle::testing
