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
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/engine_on_device.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/plugin_registry.h"

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

}  // namespace
}  // namespace tensoracle::testing
