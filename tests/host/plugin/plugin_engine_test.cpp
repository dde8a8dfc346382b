// Engines that contain plugins, on the cpu backend: built, recorded, restored and run through the
// plugin's CPU implementation; refused with the plugin named when it is missing, of another
// version, misbehaving, or without a CPU implementation; a changed library is a cache miss.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "host/cache/cache_testing.h"
#include "host/engine/engine_surgery.h"
#include "host/plugin/plugin_testing.h"
#include "tensoracle/engine.h"

namespace tensoracle {
namespace {

using testing::float_bytes;
using testing::kScaleAdd;
using testing::scale_add_build;
using testing::test_plugins;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

HostArray filled(int64_t rows, float step, float offset) {
  HostArray array = HostArray::zeros(DataType::kFloat32, {rows, 4}).value();
  // Multiples of 1/4 of small size: every product and sum below is exact in fp32.
  for (int64_t i = 0; i < array.element_count(); ++i)
    array.data_as<float>()[i] = step * static_cast<float>(i % 7) + offset;
  return array;
}

TEST(PluginEngine, ABuiltEngineRecordsThePluginAndRunsItsCpuImplementation) {
  const PluginRegistry plugins = test_plugins();
  auto bytes = build_serialized_engine(scale_add_build(plugins, 2.5f));
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "scale_add.engine", plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();

  const auto& needed = engine->file().required_plugins();
  ASSERT_EQ(needed.size(), 1u);
  EXPECT_EQ(needed[0].name, "test::scale_add");
  EXPECT_EQ(needed[0].version, "1.0.0");
  EXPECT_EQ(needed[0].library, plugins.libraries()[0]->file_name);
  EXPECT_EQ(needed[0].library_sha256, plugins.libraries()[0]->sha256);

  // The output's shape copies x's, so every batch of the profile runs.
  for (int64_t batch : {1, 3, 8}) {
    const HostArray x = filled(batch, 0.5f, -1.5f);
    const HostArray b = filled(batch, -0.25f, 2.75f);
    auto execution = engine->create_execution();
    ASSERT_TRUE(execution.is_ok()) << execution.status().to_string();
    auto outputs = execution->run_on_host({{"x", x.view()}, {"b", b.view()}});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
    const HostArray& y = outputs->at("y");
    ASSERT_EQ(y.shape(), (Dims{batch, 4}));
    int positive = 0;
    for (int64_t i = 0; i < y.element_count(); ++i) {
      const float expected = std::max(0.0f, x.data_as<float>()[i] * 2.5f + b.data_as<float>()[i]);
      EXPECT_EQ(y.data_as<float>()[i], expected) << "element " << i << " at batch " << batch;
      positive += expected > 0 ? 1 : 0;
    }
    EXPECT_GT(positive, 0);  // the relu does not hide the plugin's result
  }
}

// Issue 15: test::scale_add's configure refuses x and b of different shapes, and a caller that
// changes the batch sets x, then b. The plugin must be configured once both are set, not for the
// [new x, old b] the execution passes through.
TEST(PluginEngine, InputShapesSetOneAtATimeConfigureThePluginOnlyWhenTheEngineRuns) {
  const PluginRegistry plugins = test_plugins();
  auto bytes = build_serialized_engine(scale_add_build(plugins, 2.5f));
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "scale_add.engine", plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto execution = engine->create_execution();  // x and b start at the profile's opt, [2, 4]
  ASSERT_TRUE(execution.is_ok()) << execution.status().to_string();

  const HostArray x = filled(3, 0.5f, -1.5f);
  const HostArray b = filled(3, -0.25f, 2.75f);
  HostArray y = HostArray::zeros(DataType::kFloat32, {3, 4}).value();
  ASSERT_TRUE(execution->bind("x", const_cast<void*>(x.view().data)).is_ok());
  ASSERT_TRUE(execution->bind("b", const_cast<void*>(b.view().data)).is_ok());
  ASSERT_TRUE(execution->bind("y", y.data()).is_ok());

  // x at the new batch while b is still at [2, 4]: the network's shape inference accepts it (the
  // output copies x's shape), and nothing asks the plugin yet.
  const Status x_set = execution->set_input_shape("x", {3, 4});
  ASSERT_TRUE(x_set.is_ok()) << x_set.to_string();
  EXPECT_EQ(execution->tensor_shape("y").value(), (Dims{3, 4}));

  // Run in between, the plugin sees the mismatch and the error names it and its configure call.
  const Status mismatched = execution->enqueue();
  ASSERT_FALSE(mismatched.is_ok());
  EXPECT_TRUE(contains(mismatched.message(), "layer 'scale_add': plugin 'test::scale_add 1.0.0' configure: x and b must "
                                             "have the same shape"))
      << mismatched.message();

  // b follows; the same execution now runs at the new batch.
  const Status b_set = execution->set_input_shape("b", {3, 4});
  ASSERT_TRUE(b_set.is_ok()) << b_set.to_string();
  const Status ran = execution->enqueue();
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  for (int64_t i = 0; i < y.element_count(); ++i)
    EXPECT_EQ(y.data_as<float>()[i], std::max(0.0f, x.data_as<float>()[i] * 2.5f + b.data_as<float>()[i])) << "element " << i;

  // Back to batch 1 the other way round (b first), then both at once with set_input_shapes.
  ASSERT_TRUE(execution->set_input_shape("b", {1, 4}).is_ok());
  ASSERT_TRUE(execution->set_input_shape("x", {1, 4}).is_ok());
  const Status ran_at_1 = execution->enqueue();
  EXPECT_TRUE(ran_at_1.is_ok()) << ran_at_1.to_string();
  ASSERT_TRUE(execution->set_input_shapes({{"x", {3, 4}}, {"b", {3, 4}}}).is_ok());
  const Status ran_at_3 = execution->enqueue();
  EXPECT_TRUE(ran_at_3.is_ok()) << ran_at_3.to_string();
}

// docs/precision.md: the precision pass never converts a plugin layer. scale_add keeps its fp32
// inputs and output; the relu after it computes in fp16 (its values are fp16 numbers, so the
// result is the fp32 engine's).
TEST(PluginEngine, PrecisionFp16LeavesThePluginLayerInItsDeclaredTypes) {
  const PluginRegistry plugins = test_plugins();
  EngineBuild build = scale_add_build(plugins, 2.5f);
  build.settings.precision = DataType::kFloat16;
  auto prepared = prepare_build(build);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  const Network& net = prepared->network;
  bool saw_plugin = false, saw_fp16_relu = false;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind == OpKind::kPlugin) {
      saw_plugin = true;
      for (Tensor t : node.inputs) EXPECT_EQ(net.tensor(t).desc.dtype, DataType::kFloat32);
      EXPECT_EQ(net.tensor(node.outputs[0]).desc.dtype, DataType::kFloat32);
    }
    if (node.kind == OpKind::kActivation) saw_fp16_relu = net.tensor(node.outputs[0]).desc.dtype == DataType::kFloat16;
  }
  EXPECT_TRUE(saw_plugin);
  EXPECT_TRUE(saw_fp16_relu);
  EXPECT_NE(std::find(prepared->log.begin(), prepared->log.end(), "precision: 1 layer(s) kept: plugin"), prepared->log.end());

  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "scale_add.engine", plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  const HostArray x = filled(2, 0.5f, -1.5f);
  const HostArray b = filled(2, -0.25f, 2.75f);
  auto execution = engine->create_execution();
  ASSERT_TRUE(execution.is_ok()) << execution.status().to_string();
  auto outputs = execution->run_on_host({{"x", x.view()}, {"b", b.view()}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  const HostArray& y = outputs->at("y");
  ASSERT_EQ(y.dtype(), DataType::kFloat32);
  for (int64_t i = 0; i < y.element_count(); ++i)
    EXPECT_EQ(y.data_as<float>()[i], std::max(0.0f, x.data_as<float>()[i] * 2.5f + b.data_as<float>()[i])) << i;
}

TEST(PluginEngine, TheParametersAreTheEnginesNotTheBuildsThatLoadsIt) {
  const PluginRegistry plugins = test_plugins();
  const std::string bytes = build_serialized_engine(scale_add_build(plugins, -3.0f)).value();
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "negative.engine", plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  const HostArray x = filled(2, -0.5f, -0.25f);
  const HostArray b = filled(2, 0.0f, 0.5f);
  auto outputs = engine->create_execution()->run_on_host({{"x", x.view()}, {"b", b.view()}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  for (int64_t i = 0; i < x.element_count(); ++i)
    EXPECT_EQ(outputs->at("y").data_as<float>()[i], std::max(0.0f, x.data_as<float>()[i] * -3.0f + 0.5f));
}

TEST(PluginEngine, AComputedOutputShapeComesFromThePlugin) {
  EngineBuild build = scale_add_build(test_plugins());
  build.inputs.clear();
  build.graph = [](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {2, 3, 4});
    std::vector<Tensor> y = net.plugin({x}, PluginIdentity{"flatten", "1.0.0", "test"}, "");
    if (!y.empty()) net.mark_output(y[0], "y");
    return net.status();
  };
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "flatten.engine", build.plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  HostArray x = HostArray::zeros(DataType::kFloat32, {2, 3, 4}).value();
  for (int64_t i = 0; i < 24; ++i) x.data_as<float>()[i] = static_cast<float>(i);
  auto outputs = engine->create_execution()->run_on_host({{"x", x.view()}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  ASSERT_EQ(outputs->at("y").shape(), (Dims{2, 12}));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(outputs->at("y").data_as<float>()[i], static_cast<float>(i));
}

TEST(PluginEngine, OpeningWithoutThePluginNamesItAndTheLibraryItWasBuiltWith) {
  const PluginRegistry plugins = test_plugins();
  const std::string bytes = build_serialized_engine(scale_add_build(plugins)).value();
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "scale_add.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kUnsupported);
  const std::string message = engine.status().message();
  EXPECT_TRUE(contains(message, "engine 'scale_add.engine' cannot run here")) << message;
  EXPECT_TRUE(contains(message, "needs plugin 'test::scale_add' version 1.0.0, which is not loaded")) << message;
  EXPECT_TRUE(contains(message, "'" + plugins.libraries()[0]->file_name + "' (sha256 " + plugins.libraries()[0]->sha256))
      << message;
  EXPECT_TRUE(contains(message, "--plugin")) << message;
}

TEST(PluginEngine, OpeningWithAnotherVersionOfThePluginNamesBothVersions) {
  const std::string bytes = build_serialized_engine(scale_add_build(test_plugins())).value();
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "scale_add.engine", test_plugins(TEST_PLUGINS_V2_LIBRARY));
  ASSERT_FALSE(engine.is_ok());
  EXPECT_TRUE(contains(engine.status().message(),
                       "needs plugin 'test::scale_add' version 1.0.0, the loaded one is version 2.0.0"))
      << engine.status().message();
}

TEST(PluginEngine, OpeningWithTheSameVersionFromAChangedLibraryIsRefused) {
  const std::string bytes = build_serialized_engine(scale_add_build(test_plugins())).value();
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "scale_add.engine", test_plugins(TEST_PLUGINS_CHANGED_LIBRARY));
  ASSERT_FALSE(engine.is_ok());
  EXPECT_TRUE(contains(engine.status().message(), "is loaded from a different library")) << engine.status().message();
}

TEST(PluginEngine, AChangedLibraryIsACacheMissThatSaysSo) {
  testing::TempDir dir;
  // The same file name in two folders: only the library's bytes differ.
  for (const char* folder : {"a", "b"}) std::filesystem::create_directory(dir / folder);
  const std::string original = dir / "a/libplugins.so";
  const std::string changed = dir / "b/libplugins.so";
  std::filesystem::copy_file(TEST_PLUGINS_LIBRARY, original);
  std::filesystem::copy_file(TEST_PLUGINS_CHANGED_LIBRARY, changed);
  CacheOptions cache;
  cache.directory = dir / "cache";

  auto first = open_engine(scale_add_build(test_plugins(original)), CachePolicy::kReuse, cache);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_TRUE(first->built);
  auto again = open_engine(scale_add_build(test_plugins(original)), CachePolicy::kReuse, cache);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_TRUE(again->cache_hit);
  auto other = open_engine(scale_add_build(test_plugins(changed)), CachePolicy::kReuse, cache);
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  EXPECT_FALSE(other->cache_hit);
  EXPECT_NE(other->key, first->key);
  EXPECT_TRUE(contains(other->explanation, "differs in: plugins[0].library_sha256")) << other->explanation;
}

TEST(PluginEngine, APluginLayerWhosePluginIsNotLoadedFailsTheGraphNamingIt) {
  auto bytes = build_serialized_engine(scale_add_build(PluginRegistry()));
  ASSERT_FALSE(bytes.is_ok());
  const std::string message = bytes.status().message();
  EXPECT_TRUE(contains(message, "layer 'scale_add' (plugin): plugin 'test::scale_add' version 1.0.0 is not loaded")) << message;
}

// scale_add takes fp32 only: an fp16 input is cast for it (format_negotiation.h), an int32 one
// cannot be, and the refusal names the plugin, the input and what it allows.
TEST(PluginEngine, APluginInputOfAnotherFloatTypeIsCastAndOfAnIntegerTypeRefused) {
  for (const DataType type : {DataType::kFloat16, DataType::kInt32}) {
    EngineBuild build = scale_add_build(test_plugins());
    build.inputs.clear();
    build.graph = [type](Network& net, const Weights&) {
      Tensor x = net.add_input("x", type, {2, 4});
      Tensor b = net.add_input("b", DataType::kFloat32, {2, 4});
      std::vector<Tensor> y = net.plugin({x, b}, kScaleAdd, float_bytes(1.0f), "scale_add");
      if (!y.empty()) net.mark_output(y[0], "y");
      return net.status();
    };
    auto bytes = build_serialized_engine(build);
    if (type == DataType::kFloat16) {
      EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      continue;
    }
    ASSERT_FALSE(bytes.is_ok());
    EXPECT_TRUE(contains(bytes.status().message(),
                         "plugin 'test::scale_add 1.0.0' input 0 'x' (int32[2,4], written LINEAR): no combination it "
                         "allows can be served; it allows fp32/LINEAR (types convert only among fp32, fp16 and bf16)"))
        << bytes.status().message();
  }
}

// A one-input plugin layer of `identity` on x [2, 4].
EngineBuild one_plugin_build(const PluginIdentity& identity, const std::string& parameters) {
  EngineBuild build = scale_add_build(test_plugins());
  build.inputs.clear();
  build.graph = [identity, parameters](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {2, 4});
    std::vector<Tensor> y = net.plugin({x}, identity, parameters, "odd");
    if (!y.empty()) net.mark_output(y[0], "y");
    return net.status();
  };
  return build;
}

TEST(PluginEngine, APluginWithoutACpuImplementationIsRefusedByTheCpuBackendNamingIt) {
  auto bytes = build_serialized_engine(one_plugin_build({"gpu_only", "1.0.0", "test"}, ""));
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(bytes.status().message(),
                       "layer 'odd': plugin 'test::gpu_only 1.0.0' has no CPU implementation, which the cpu backend runs"))
      << bytes.status().message();
}

// Builds the misbehaving plugin (which builds fine: only running it misbehaves) and runs it.
Status run_misbehaving(const std::string& how) {
  const EngineBuild build = one_plugin_build({"misbehave", "1.0.0", "test"}, how);
  TO_ASSIGN_OR_RETURN(const std::string bytes, build_serialized_engine(build));
  TO_ASSIGN_OR_RETURN(Engine engine, Engine::deserialize(bytes.data(), bytes.size(), "misbehave.engine", build.plugins));
  TO_ASSIGN_OR_RETURN(Execution execution, engine.create_execution());
  const HostArray x = filled(2, 1.0f, 0.0f);
  return execution.run_on_host({{"x", x.view()}}).status();
}

TEST(PluginEngine, APluginThatThrowsOrFailsWhileRunningBecomesAnErrorNamingIt) {
  ASSERT_TRUE(run_misbehaving("behave").is_ok());
  const Status thrown = run_misbehaving("throw_configure");
  EXPECT_EQ(thrown.code(), StatusCode::kInternal);
  EXPECT_TRUE(contains(thrown.message(), "layer 'odd': plugin 'test::misbehave 1.0.0' configure: threw an exception")) << thrown.message();
  EXPECT_TRUE(contains(thrown.message(), "configure exploded")) << thrown.message();
  const Status failed = run_misbehaving("fail_run");
  EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(failed.message(), "plugin 'test::misbehave 1.0.0' run_on_host: the input is not to my liking")) << failed.message();
  const Status odd_throw = run_misbehaving("throw_run");
  EXPECT_TRUE(contains(odd_throw.message(), "run_on_host: threw an exception that is not a std::exception")) << odd_throw.message();
}

TEST(PluginEngine, ARecordedPluginLayerWhosePluginIsNotLoadedIsRefusedByTheBuilder) {
  // A plugin layer defined from recorded attributes, with no plugin loaded, never reaches an engine.
  EngineBuild build = one_plugin_build({"misbehave", "1.0.0", "test"}, "behave");
  build.plugins = PluginRegistry();
  build.graph = [](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {2, 4});
    PluginAttributes attrs;
    attrs.plugin = "test::misbehave";
    attrs.version = "1.0.0";
    attrs.output_types = {DataType::kFloat32};
    attrs.output_shapes = {Dims{2, 4}};
    net.mark_output(net.plugin({x}, attrs)[0], "y");
    return net.status();
  };
  auto bytes = build_serialized_engine(build);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_TRUE(contains(bytes.status().message(), "plugin 'test::misbehave' version 1.0.0 is not loaded")) << bytes.status().message();
}

// Engines are untrusted: a plugin layer the environment section does not list, or a plugin layer
// whose recorded outputs lie, is refused before any plugin is made.
TEST(PluginEngine, AnEngineWhosePluginLayerIsNotAmongTheRecordedPluginsIsCorrupt) {
  const PluginRegistry plugins = test_plugins();
  const std::string good = build_serialized_engine(scale_add_build(plugins)).value();
  const std::string unlisted = testing::edit_section_json(good, engine_layout::SectionKind::kEnvironment,
                                                          [](nlohmann::json& e) { e["plugins"] = nlohmann::json::array(); });
  auto engine = Engine::deserialize(unlisted.data(), unlisted.size(), "unlisted.engine", plugins);
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(engine.status().message(), "layer 'scale_add' uses plugin 'test::scale_add' version 1.0.0, which the "
                                                  "engine's environment section does not list"))
      << engine.status().message();
}

TEST(PluginEngine, AnEngineWhosePluginLayerCopiesANonexistentInputIsCorrupt) {
  const PluginRegistry plugins = test_plugins();
  const std::string good = build_serialized_engine(scale_add_build(plugins)).value();
  const std::string lying = testing::edit_section_json(good, engine_layout::SectionKind::kPlan, [](nlohmann::json& plan) {
    for (auto& layer : plan["network"]["layers"])
      if (layer.value("kind", "") == "plugin") layer["attributes"]["output_copy_inputs"] = nlohmann::json::array({7});
  });
  auto engine = Engine::deserialize(lying.data(), lying.size(), "lying.engine", plugins);
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(engine.status().message(), "output 0 copies the shape of input 7, which does not exist (2 inputs)"))
      << engine.status().message();
}

}  // namespace
}  // namespace tensoracle
