// Plugins inside cuda engines: the test plugin library's test::scale_add (its CUDA kernel,
// tests/host/plugin/test_plugins/scale_add_kernel.cu) runs as a step of a cuda engine between
// standard layers, restored from the engine's bytes with the library, and matches the cpu engine
// (its CPU implementation) exactly; a plugin whose enqueue fails is an error naming it. Input
// shapes set one at a time configure the plugin only when the engine runs (issue 15: the H200
// run of 2026-12-03 failed here, configuring for x's new shape beside b's old one).
//
// CubinPlugin: the cubin-backed build of the test library, whose scale_add kernel is not in the
// library but in the cubin bundle beside it (tests/host/plugin/test_plugins/scale_add_bundle_kernel.cu),
// fetched through Plugin::attach_kernels; a bundle without this GPU's architecture is refused.
//
// CudaPluginFormats: format negotiation on cuda with the format test plugins
// (tests/host/plugin/test_plugins/format_plugins.h). test::hwc8_pair takes x only fp16/HWC8: fed by
// an fp16 convolution whose output the planner stores channels-last, with C = 16 it reads the
// convolution's output in place (no reformat), and its fp16/HWC8 output feeds the next
// convolution in place too; with C = 12 the family pads x into HWC8 (zeroed padding, which the
// plugin checks: NaN otherwise) and unpads y. Both match the cpu engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backends/cuda/device_tensor.h"
#include "gpu/engine_on_device.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/tensor_format.h"

namespace tensoracle::testing {
namespace {

PluginRegistry test_plugins(const std::string& library = TEST_PLUGINS_LIBRARY, const PluginLibraryOptions& options = {}) {
  PluginRegistry registry;
  const Status loaded = registry.load_library(library, options);
  EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  return registry;
}

// y = relu(scale_add(x + 1, b; scale 2.5)): the plugin between two standard layers.
EngineBuild plugin_build(const std::string& backend, const PluginIdentity& plugin, bool two_inputs,
                         const PluginRegistry& plugins = test_plugins()) {
  EngineBuild build;
  build.name = "plugin_" + plugin.name + "_" + backend;
  build.graph_version = "1";
  build.graph = [plugin, two_inputs](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, 64});
    HostArray one = HostArray::zeros(DataType::kFloat32, {1}).value();
    one.data_as<float>()[0] = 1.0f;
    Tensor shifted = net.add(x, net.add_constant(std::move(one), "one"));
    std::vector<Tensor> inputs{shifted};
    if (two_inputs) inputs.push_back(net.add_input("b", DataType::kFloat32, {-1, 64}));
    float scale = 2.5f;
    std::string parameters(sizeof scale, '\0');
    std::memcpy(parameters.data(), &scale, sizeof scale);
    std::vector<Tensor> y = net.plugin(inputs, plugin, two_inputs ? parameters : std::string(), "the_plugin");
    if (!y.empty()) net.mark_output(net.relu(y[0]), "y");
    return net.status();
  };
  build.weights = Weights::none();
  build.add_input("x", {ShapeRange{{1, 64}, {8, 64}, {64, 64}}});
  if (two_inputs) build.add_input("b", {ShapeRange{{1, 64}, {8, 64}, {64, 64}}});
  build.backend = backend;
  build.quiet = true;
  build.plugins = plugins;
  return build;
}

HostArray filled(int64_t rows, float step, float offset) {
  HostArray array = HostArray::zeros(DataType::kFloat32, {rows, 64}).value();
  // Multiples of 1/4 of small size: the products and sums are exact in fp32, with or without FMA.
  for (int64_t i = 0; i < array.element_count(); ++i)
    array.data_as<float>()[i] = step * static_cast<float>(i % 11) + offset;
  return array;
}

Result<Engine> engine_for(const EngineBuild& build) {
  TO_ASSIGN_OR_RETURN(std::string bytes, build_serialized_engine(build));
  return Engine::deserialize(bytes.data(), bytes.size(), build.name + ".engine", build.plugins);
}

// The cuda engine of `plugins`' scale_add matches its cpu engine exactly at several batches.
void expect_scale_add_matches_the_cpu(const PluginRegistry& plugins) {
  const PluginIdentity scale_add{"scale_add", "1.0.0", "test"};
  auto cuda = engine_for(plugin_build("cuda", scale_add, true, plugins));
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
  auto cpu = engine_for(plugin_build("cpu", scale_add, true, plugins));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  for (int64_t batch : {1, 3, 64}) {
    const HostArray x = filled(batch, 0.5f, -2.5f);
    const HostArray b = filled(batch, -0.25f, 1.0f);
    const NamedArrayViews inputs{{"x", x.view()}, {"b", b.view()}};
    auto on_gpu = run_on_device(*cuda, inputs);
    ASSERT_TRUE(on_gpu.is_ok()) << on_gpu.status().to_string();
    auto reference = cpu->create_execution()->run_on_host(inputs);
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    const HostArray& got = on_gpu->at("y");
    const HostArray& want = reference->at("y");
    ASSERT_EQ(got.shape(), want.shape());
    int positive = 0;
    for (int64_t i = 0; i < got.element_count(); ++i) {
      EXPECT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << "element " << i << " at batch " << batch;
      positive += want.data_as<float>()[i] > 0 ? 1 : 0;
    }
    EXPECT_GT(positive, 0) << "the relu hides the plugin's result";
  }
}

TEST(CudaPlugin, ScaleAddRunsInACudaEngineAndMatchesTheCpuEngineExactly) {
  TO_SKIP_WITHOUT_GPU();
  expect_scale_add_matches_the_cpu(test_plugins());
}

TEST(CubinPlugin, ScaleAddWithItsKernelFromItsBundleRunsInACudaEngineAndMatchesTheCpuEngineExactly) {
  TO_SKIP_WITHOUT_GPU();
  // The bundle is found beside the library (<NAME>_bundle), as tensoracle_add_cubin_plugin builds it.
  expect_scale_add_matches_the_cpu(test_plugins(TEST_CUBIN_PLUGINS_LIBRARY));
}

TEST(CubinPlugin, ABundleWithoutThisGpusArchitectureIsRefusedNamingTheGpuAndTheBundlesArchitectures) {
  TO_SKIP_WITHOUT_GPU();
  cudaDeviceProp properties{};
  CUDA_OK(cudaGetDeviceProperties(&properties, 0));
  if (properties.major == 8) GTEST_SKIP() << "an sm_8x GPU can run the sm_80 bundle";
  const std::string sm = "sm_" + std::to_string(properties.major * 10 + properties.minor);
  const PluginRegistry sm80_only = test_plugins(TEST_CUBIN_PLUGINS_SM80_LIBRARY);
  auto engine = engine_for(plugin_build("cuda", PluginIdentity{"scale_add", "1.0.0", "test"}, true, sm80_only));
  ASSERT_FALSE(engine.is_ok());
  EXPECT_NE(engine.status().message().find("has no cubin this GPU (" + sm + ") can run; the bundle has sm_80"),
            std::string::npos)
      << engine.status().message();
}

TEST(CubinPlugin, ALibraryLoadedWithoutItsBundleIsRefusedOnCudaNamingTheLibrary) {
  TO_SKIP_WITHOUT_GPU();
  PluginLibraryOptions without;
  without.without_bundle = true;
  auto engine = engine_for(plugin_build("cuda", PluginIdentity{"scale_add", "1.0.0", "test"}, true,
                                        test_plugins(TEST_CUBIN_PLUGINS_LIBRARY, without)));
  ASSERT_FALSE(engine.is_ok());
  EXPECT_NE(engine.status().message().find("needs kernels from a cubin bundle, but its library '" +
                                           std::string(TEST_CUBIN_PLUGINS_LIBRARY) + "' was loaded without one"),
            std::string::npos)
      << engine.status().message();
}

// Issue 15: test::scale_add's configure refuses x and b of different shapes. Setting x, then b,
// to a new batch must not configure the plugin in between; an enqueue in between reports the
// plugin's refusal, and the same execution runs once b follows.
TEST(CudaPlugin, InputShapesSetOneAtATimeConfigureThePluginOnlyWhenTheEngineRuns) {
  TO_SKIP_WITHOUT_GPU();
  auto cuda = engine_for(plugin_build("cuda", PluginIdentity{"scale_add", "1.0.0", "test"}, true));
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
  auto cpu = engine_for(plugin_build("cpu", PluginIdentity{"scale_add", "1.0.0", "test"}, true));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  auto exec = cuda->create_execution();  // x and b start at the profile's opt, [8, 64]
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();

  const int64_t batch = 3;
  const HostArray x = filled(batch, 0.5f, -2.5f);
  const HostArray b = filled(batch, -0.25f, 1.0f);
  auto x_device = device_buffer_for(x.byte_size(), "x");
  auto b_device = device_buffer_for(b.byte_size(), "b");
  auto y_device = device_buffer_for(x.byte_size(), "y");
  ASSERT_TRUE(x_device.is_ok() && b_device.is_ok() && y_device.is_ok());
  CUDA_OK(cudaMemcpy(x_device->data(), x.data(), x.byte_size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(b_device->data(), b.data(), b.byte_size(), cudaMemcpyHostToDevice));
  ASSERT_TRUE(exec->bind("x", x_device->data()).is_ok());
  ASSERT_TRUE(exec->bind("b", b_device->data()).is_ok());
  ASSERT_TRUE(exec->bind("y", y_device->data()).is_ok());
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const Status x_set = exec->set_input_shape("x", {batch, 64});
  EXPECT_TRUE(x_set.is_ok()) << x_set.to_string();  // what the H200 run failed on
  const Status mismatched = exec->enqueue(stream);
  EXPECT_FALSE(mismatched.is_ok());
  EXPECT_NE(mismatched.message().find("plugin 'test::scale_add 1.0.0' configure: x and b must have the same shape"),
            std::string::npos)
      << mismatched.message();

  const Status b_set = exec->set_input_shape("b", {batch, 64});
  EXPECT_TRUE(b_set.is_ok()) << b_set.to_string();
  const Status ran = exec->enqueue(stream);
  EXPECT_TRUE(ran.is_ok()) << ran.to_string();
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaStreamDestroy(stream));
  ASSERT_TRUE(ran.is_ok());

  HostArray got = HostArray::zeros(DataType::kFloat32, {batch, 64}).value();
  CUDA_OK(cudaMemcpy(got.data(), y_device->data(), got.byte_size(), cudaMemcpyDeviceToHost));
  auto reference = cpu->create_execution()->run_on_host({{"x", x.view()}, {"b", b.view()}});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  const HostArray& want = reference->at("y");
  for (int64_t i = 0; i < got.element_count(); ++i)
    EXPECT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << "element " << i;
}

TEST(CudaPlugin, AnEnqueueErrorNamesTheLayerAndThePlugin) {
  TO_SKIP_WITHOUT_GPU();
  // test::gpu_only's enqueue reports that it has no CUDA implementation: when the builder times
  // the step, or else when the engine runs.
  const Status status = [&]() -> Status {
    TO_ASSIGN_OR_RETURN(Engine cuda, engine_for(plugin_build("cuda", PluginIdentity{"gpu_only", "1.0.0", "test"}, false)));
    const HostArray x = filled(2, 1.0f, 0.0f);
    return run_on_device(cuda, {{"x", x.view()}}).status();
  }();
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("layer 'the_plugin': plugin 'test::gpu_only 1.0.0' enqueue: no CUDA implementation"),
            std::string::npos)
      << status.message();
}

TEST(CudaPlugin, AnEngineOpenedWithoutItsPluginLibraryNamesIt) {
  TO_SKIP_WITHOUT_GPU();
  const EngineBuild build = plugin_build("cuda", PluginIdentity{"scale_add", "1.0.0", "test"}, true);
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "scale_add.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_NE(engine.status().message().find("needs plugin 'test::scale_add' version 1.0.0, which is not loaded"),
            std::string::npos)
      << engine.status().message();
}

// ---- format negotiation ----

// The one mapping between the cuda layouts and the public formats (no GPU needed).
TEST(CudaPluginFormats, ChannelsLastIsHwcAndHwc8WhenTheChannelsNeedNoPadding) {
  namespace cu = backends::cuda;
  using F = std::vector<TensorFormat>;
  EXPECT_EQ(cu::formats_of_layout(cu::Layout::kNhwc, {DataType::kFloat16, {1, 16, 4, 4}}), (F{TensorFormat::kHwc, TensorFormat::kHwc8}));
  EXPECT_EQ(cu::formats_of_layout(cu::Layout::kNhwc, {DataType::kFloat16, {1, 12, 4, 4}}), (F{TensorFormat::kHwc}));
  EXPECT_EQ(cu::formats_of_layout(cu::Layout::kNhwc, {DataType::kFloat32, {1, 16, 4, 4}}), (F{TensorFormat::kHwc}));
  EXPECT_EQ(cu::formats_of_layout(cu::Layout::kLinear, {DataType::kFloat16, {1, 16, 4, 4}}), (F{TensorFormat::kLinear}));
  EXPECT_EQ(cu::formats_of_layout(cu::Layout::kBshd, {DataType::kFloat16, {1, 16, 4, 4}}), F{});
  EXPECT_EQ(cu::element_strides({2, 12, 3, 5}, cu::Layout::kNhwc), format_strides(TensorFormat::kHwc, {2, 12, 3, 5}).value());
}

std::string engine_plan_text(const Engine& engine) { return std::string(engine.file().plan().as_string_view()); }

HostArray fp16_filled(const Dims& shape, int modulus, float step, float offset) {
  HostArray array = HostArray::zeros(DataType::kFloat16, shape).value();
  for (int64_t i = 0; i < array.element_count(); ++i)
    array.data_as<uint16_t>()[i] = float_to_fp16(step * static_cast<float>(i % modulus) + offset);
  return array;
}

// out = conv1x1(hwc8_pair(conv3x3(x), b)), fp16 x [N, C, 8, 8], fp32 b, fp16 out.
EngineBuild conv_pair_build(const std::string& backend, int64_t channels, const PluginRegistry& plugins) {
  EngineBuild build;
  build.name = "conv_pair_" + std::to_string(channels) + "_" + backend;
  build.graph_version = "1";
  build.graph = [channels](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat16, {-1, channels, 8, 8});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, channels, 8, 8});
    Tensor w1 = net.add_constant(fp16_filled({channels, channels, 3, 3}, 7, 0.125f, -0.375f), "w1");
    Tensor b1 = net.add_constant(fp16_filled({channels}, 3, 0.25f, -0.25f), "b1");
    Tensor c1 = net.convolution(x, w1, b1, ConvolutionAttributes().set_padding({1, 1}));
    std::vector<Tensor> y = net.plugin({c1, b}, PluginIdentity{"hwc8_pair", "1.0.0", "test"}, "", "pair");
    if (y.empty()) return net.status();
    Tensor w2 = net.add_constant(fp16_filled({channels, channels, 1, 1}, 5, 0.125f, -0.25f), "w2");
    Tensor b2 = net.add_constant(fp16_filled({channels}, 2, 0.5f, 0.0f), "b2");
    net.mark_output(net.convolution(y[0], w2, b2), "out");
    return net.status();
  };
  build.weights = Weights::none();
  for (const char* input : {"x", "b"})
    build.add_input(input, {ShapeRange{{1, channels, 8, 8}, {4, channels, 8, 8}, {4, channels, 8, 8}}});
  build.backend = backend;
  build.quiet = true;
  build.plugins = plugins;
  return build;
}

nlohmann::json cuda_plan_layer(const Engine& engine, const std::string& name) {
  const nlohmann::json plan = nlohmann::json::parse(engine.file().plan().as_string_view());
  for (const auto& layer : plan["layers"])
    if (layer["name"] == name) return layer;
  return nullptr;
}

class CudaPluginFormats : public ::testing::TestWithParam<int64_t> {};

TEST_P(CudaPluginFormats, Hwc8PairBetweenFp16ConvolutionsMatchesTheCpuEngine) {
  TO_SKIP_WITHOUT_GPU();
  const int64_t channels = GetParam();
  const PluginRegistry plugins = test_plugins(TEST_FORMAT_PLUGINS_LIBRARY);
  auto cuda = engine_for(conv_pair_build("cuda", channels, plugins));
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
  auto cpu = engine_for(conv_pair_build("cpu", channels, plugins));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();

  const nlohmann::json pair = cuda_plan_layer(*cuda, "pair");
  ASSERT_TRUE(pair.is_object()) << engine_plan_text(*cuda);
  EXPECT_EQ(pair["choice"]["formats"]["inputs"], nlohmann::json::array({"fp16/HWC8", "fp32/LINEAR"})) << pair.dump();
  if (channels % 8 == 0) {
    // The convolutions' channels-last fp16 tensors are HWC8 already: the plugin reads x and writes
    // y in place, so both stay nhwc and no conversion runs (plugin_family.h).
    EXPECT_EQ(pair["input_layouts"][0], "nhwc") << pair.dump();
    EXPECT_EQ(pair["output_layouts"][0], "nhwc") << pair.dump();
  }

  for (int64_t batch : {1, 4}) {
    const HostArray x = fp16_filled({batch, channels, 8, 8}, 13, 0.125f, -0.75f);
    HostArray b = HostArray::zeros(DataType::kFloat32, {batch, channels, 8, 8}).value();
    for (int64_t i = 0; i < b.element_count(); ++i) b.data_as<float>()[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
    const NamedArrayViews inputs{{"x", x.view()}, {"b", b.view()}};
    auto on_gpu = run_on_device(*cuda, inputs);
    ASSERT_TRUE(on_gpu.is_ok()) << on_gpu.status().to_string();
    auto reference = cpu->create_execution()->run_on_host(inputs);
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    const HostArray& got = on_gpu->at("out");
    const HostArray& want = reference->at("out");
    ASSERT_EQ(got.shape(), want.shape());
    int nonzero = 0;
    for (int64_t i = 0; i < got.element_count(); ++i) {
      const float g = fp16_to_float(got.data_as<uint16_t>()[i]), w = fp16_to_float(want.data_as<uint16_t>()[i]);
      // fp16 convolutions on two backends: a few fp16 ulps apart (accumulation order).
      ASSERT_TRUE(std::isfinite(g)) << "element " << i << " at batch " << batch << " (NaN: x's HWC8 padding was not zero)";
      EXPECT_NEAR(g, w, 0.02f + 0.01f * std::fabs(w)) << "element " << i << " at batch " << batch;
      nonzero += w != 0 ? 1 : 0;
    }
    EXPECT_GT(nonzero, got.element_count() / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Channels, CudaPluginFormats, ::testing::Values(16, 12),
                         [](const ::testing::TestParamInfo<int64_t>& channels) { return "C" + std::to_string(channels.param); });

// test::multi_format takes x fp32/LINEAR, fp16/LINEAR or fp16/HWC8 and y in x's type: on cuda an
// fp32 y beside an fp16 x is cast on the device, and the sum matches the cpu engine exactly.
TEST(CudaPluginFormats, ACastInputMatchesTheCpuEngineExactly) {
  TO_SKIP_WITHOUT_GPU();
  const PluginRegistry plugins = test_plugins(TEST_FORMAT_PLUGINS_LIBRARY);
  const auto build_for = [&](const std::string& backend) {
    EngineBuild build;
    build.name = "multi_format_" + backend;
    build.graph_version = "1";
    build.graph = [](Network& net, const Weights&) {
      Tensor x = net.add_input("x", DataType::kFloat16, {-1, 24});
      Tensor y = net.add_input("y", DataType::kFloat32, {-1, 24});
      std::vector<Tensor> z = net.plugin({x, y}, PluginIdentity{"multi_format", "1.0.0", "test"}, "", "multi");
      if (!z.empty()) net.mark_output(z[0], "z");
      return net.status();
    };
    build.weights = Weights::none();
    build.add_input("x", {ShapeRange{{1, 24}, {3, 24}, {3, 24}}});
    build.add_input("y", {ShapeRange{{1, 24}, {3, 24}, {3, 24}}});
    build.backend = backend;
    build.quiet = true;
    build.plugins = plugins;
    return build;
  };
  auto cuda = engine_for(build_for("cuda"));
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
  auto cpu = engine_for(build_for("cpu"));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  EXPECT_EQ(cuda_plan_layer(*cuda, "multi")["choice"]["formats"]["inputs"], nlohmann::json::array({"fp16/LINEAR", "fp16/LINEAR"}));
  const HostArray x = fp16_filled({3, 24}, 11, 0.25f, -1.0f);
  HostArray y = HostArray::zeros(DataType::kFloat32, {3, 24}).value();
  // Some values not fp16 numbers: the cast rounds them the same way on both backends.
  for (int64_t i = 0; i < y.element_count(); ++i) y.data_as<float>()[i] = 0.1f * static_cast<float>(i % 17) - 0.7f;
  const NamedArrayViews inputs{{"x", x.view()}, {"y", y.view()}};
  auto on_gpu = run_on_device(*cuda, inputs);
  ASSERT_TRUE(on_gpu.is_ok()) << on_gpu.status().to_string();
  auto reference = cpu->create_execution()->run_on_host(inputs);
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  for (int64_t i = 0; i < x.element_count(); ++i)
    EXPECT_EQ(on_gpu->at("z").data_as<float>()[i], reference->at("z").data_as<float>()[i]) << "element " << i;
}

}  // namespace
}  // namespace tensoracle::testing
