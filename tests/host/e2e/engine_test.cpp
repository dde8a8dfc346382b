// The engine API in process: build_serialized_engine -> Engine -> Execution, open_engine through
// the cache, declaration and I/O checks, profiles, model package loading.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/registry.h"
#include "host/cache/cache_testing.h"
#include "tensoracle/engine.h"
#include "tensoracle/package.h"
#include "tiny_transformer/tiny_transformer.h"
#include "tinynet/tinynet.h"

namespace tensoracle {
namespace {

using testing::TempDir;

std::string weights_of(const std::string& example) {
  return std::string(TENSORACLE_FIXTURES_DIR) + "/examples/" + example + "/weights.safetensors";
}

EngineBuild tinynet_build() {
  EngineBuild build;
  build.name = "tinynet";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights& w) { return tinynet::define(net, w, {-1, 3, -1, -1}); };
  build.weights_path = weights_of("tinynet");
  build.add_input("image", {ShapeRange{{1, 3, 16, 16}, {2, 3, 16, 16}, {4, 3, 24, 24}}});
  build.quiet = true;
  return build;
}

// Input values that are not all zeros, fixed by a seed.
HostArray image(const Dims& shape, unsigned seed) {
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  float* p = a.data_as<float>();
  unsigned s = seed;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return a;
}

// The engine's output for `input` equals the CPU backend running the network directly.
void expect_matches_direct_execution(const Engine& engine, const EngineBuild& build, const HostArray& input) {
  auto exec = engine.create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  ASSERT_TRUE(exec->set_input_shape("image", input.shape()).is_ok());
  auto out_shape = exec->tensor_shape("probs");
  ASSERT_TRUE(out_shape.is_ok());
  EXPECT_EQ(*out_shape, Dims({input.shape()[0], 10}));
  HostArray out = HostArray::zeros(DataType::kFloat32, *out_shape).value();
  ASSERT_TRUE(exec->bind("image", const_cast<void*>(input.data())).is_ok());
  ASSERT_TRUE(exec->bind("probs", out.data()).is_ok());
  ASSERT_TRUE(exec->enqueue(nullptr).is_ok());

  auto weights = Weights::open(build.weights_path);
  ASSERT_TRUE(weights.is_ok());
  Network net;
  ASSERT_TRUE(build.graph(net, *weights).is_ok());
  auto backend = backends::create_backend("cpu");
  auto direct = (*backend)->execute(net, {{"image", input.view()}});
  ASSERT_TRUE(direct.is_ok()) << direct.status().to_string();
  const HostArray& expected = direct->at("probs");
  ASSERT_EQ(expected.byte_size(), out.byte_size());
  EXPECT_EQ(std::memcmp(expected.data(), out.data(), out.byte_size()), 0);
}

TEST(Engine, SerializedEngineRunsAnyShapeInItsProfileWithoutTheSafetensors) {
  const EngineBuild build = tinynet_build();
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "tinynet.engine");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->backend(), "cpu");
  EXPECT_EQ(engine->input_names(), std::vector<std::string>{"image"});
  EXPECT_EQ(engine->output_names(), std::vector<std::string>{"probs"});
  EXPECT_EQ(engine->num_profiles(), 1u);
  expect_matches_direct_execution(*engine, build, image({2, 3, 16, 16}, 1));
  expect_matches_direct_execution(*engine, build, image({3, 3, 20, 24}, 2));
}

TEST(Engine, ShapesOutsideTheProfileNameInputDimValueAndRange) {
  auto bytes = build_serialized_engine(tinynet_build());
  ASSERT_TRUE(bytes.is_ok());
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok());
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok());
  Status s = exec->set_input_shape("image", {2, 3, 16, 25});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("input 'image': dim 3 is 25, outside the range [16, 24] of optimization profile 0"), std::string::npos)
      << s.message();
  s = exec->set_input_shape("image", {2, 3, 16});
  EXPECT_NE(s.message().find("rank 3, the engine expects rank 4"), std::string::npos) << s.message();
  EXPECT_EQ(exec->set_input_shape("tokens", {2, 8}).code(), StatusCode::kNotFound);
  EXPECT_FALSE(engine->create_execution(1).is_ok());
}

// Two inputs that share their batch dim: one at a time they cannot change it, together they can,
// and a refused change leaves the shapes as they were.
TEST(Engine, InputsThatShareADimChangeTogether) {
  EngineBuild build;
  build.name = "pair";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) {
    Tensor a = net.add_input("a", DataType::kFloat32, {-1, 4});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, 4});
    net.mark_output(net.add(a, b), "sum");
    return net.status();
  };
  build.weights_path = weights_of("tinynet");
  build.add_input("a", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.add_input("b", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.quiet = true;
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok());
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok());

  Status alone = exec->set_input_shape("a", {5, 4});
  EXPECT_EQ(alone.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(alone.message().find("input 'a' shape [5,4]"), std::string::npos) << alone.message();
  EXPECT_EQ(exec->tensor_shape("a").value(), Dims({2, 4}));

  ASSERT_TRUE(exec->set_input_shapes({{"a", {5, 4}}, {"b", {5, 4}}}).is_ok());
  EXPECT_EQ(exec->tensor_shape("sum").value(), Dims({5, 4}));
  EXPECT_EQ(exec->set_input_shapes({{"a", {9, 4}}, {"b", {9, 4}}}).code(), StatusCode::kInvalidArgument);

  HostArray a = image({3, 4}, 1), b = image({3, 4}, 2);
  auto out = exec->run_on_host({{"a", a.view()}, {"b", b.view()}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_EQ(out->at("sum").shape(), Dims({3, 4}));
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(out->at("sum").data_as<float>()[i], a.data_as<float>()[i] + b.data_as<float>()[i]) << i;
}

// Declarations are matched to the network's inputs by name: their order does not matter (flags
// and maps of arrays come in any order), and the engine's I/O table follows the network's order.
TEST(Engine, InputsMayBeDeclaredInAnyOrder) {
  EngineBuild build;
  build.name = "pair";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) {
    Tensor a = net.add_input("a", DataType::kFloat32, {-1, 4});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, 4});
    net.mark_output(net.sub(a, b), "difference");
    return net.status();
  };
  build.weights_path = weights_of("tinynet");
  build.quiet = true;
  build.add_input("b", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.add_input("a", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->input_names(), (std::vector<std::string>{"a", "b"}));
  HostArray a = image({3, 4}, 1), b = image({3, 4}, 2);
  auto out = engine->create_execution()->run_on_host({{"a", a.view()}, {"b", b.view()}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(out->at("difference").data_as<float>()[i], a.data_as<float>()[i] - b.data_as<float>()[i]) << i;

  build.inputs.clear();
  build.add_input("a", {ShapeRange::fixed({2, 4})});
  build.add_input("a", {ShapeRange::fixed({2, 4})});
  build.add_input("c", {ShapeRange::fixed({2, 4})});
  auto refused = build_serialized_engine(build);
  ASSERT_FALSE(refused.is_ok());
  const std::string m = refused.status().message();
  EXPECT_NE(m.find("input 'a' is declared twice"), std::string::npos) << m;
  EXPECT_NE(m.find("input 'c' is declared, but the network has no input of that name (its inputs: a, b)"), std::string::npos) << m;
  EXPECT_NE(m.find("input 'b' of the network is not declared"), std::string::npos) << m;
}

TEST(Engine, EnqueueNamesUnboundTensors) {
  auto bytes = build_serialized_engine(tinynet_build());
  ASSERT_TRUE(bytes.is_ok());
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok());
  auto exec = engine->create_execution();
  HostArray in = image({2, 3, 16, 16}, 3);
  ASSERT_TRUE(exec->bind("image", in.data()).is_ok());
  Status s = exec->enqueue(nullptr);
  EXPECT_NE(s.message().find("no buffer bound for 'probs'"), std::string::npos) << s.message();
  EXPECT_EQ(exec->bind("probs", nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(Engine, DeclarationMismatchesAreAllNamed) {
  EngineBuild build = tinynet_build();
  build.inputs.clear();
  build.add_input("image", {ShapeRange::fixed({2, 3, 16})}, DataType::kFloat16);
  auto bytes = build_serialized_engine(build);
  ASSERT_FALSE(bytes.is_ok());
  const std::string m = bytes.status().message();
  EXPECT_NE(m.find("input 'image': declared fp16, the network takes fp32"), std::string::npos) << m;
  EXPECT_NE(m.find("has rank 3"), std::string::npos) << m;

  build.inputs.clear();
  auto no_declaration = build_serialized_engine(build);
  EXPECT_NE(no_declaration.status().message().find("input 'image' is fp32[-1,3,-1,-1]; declare its shape range"), std::string::npos)
      << no_declaration.status().message();
}

TEST(Engine, IoMismatchesNameEveryDifference) {
  IoTable engine{{IoTensor{"image", true, DataType::kFloat32, TensorFormat::kLinear, {ShapeRange::fixed({1, 3, 8, 8})}},
                  IoTensor{"probs", false, DataType::kFloat32, TensorFormat::kLinear, {ShapeRange::fixed({1, 10})}}}};
  IoTable declared = engine;
  EXPECT_TRUE(io_mismatches(engine, declared).empty());
  declared.tensors[0].dtype = DataType::kFloat16;
  declared.tensors[1].profiles[0] = ShapeRange::fixed({1, 11});
  declared.tensors.push_back(IoTensor{"extra", false, DataType::kFloat32, TensorFormat::kLinear, {ShapeRange::fixed({1})}});
  const auto found = io_mismatches(engine, declared);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_NE(found[0].find("input 'image': type fp32 in the engine, declared fp16"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("output 'probs': shape ranges"), std::string::npos) << found[1];
  EXPECT_NE(found[2].find("output 'extra': declared, but the engine has no such tensor"), std::string::npos) << found[2];
}

TEST(Engine, OpenEngineFollowsThePolicies) {
  TempDir cache;
  CacheOptions options;
  options.directory = cache.path();
  const EngineBuild build = tinynet_build();

  auto absent = open_engine(build, CachePolicy::kRequireCached, options);
  EXPECT_FALSE(absent.is_ok());

  auto first = open_engine(build, CachePolicy::kReuse, options);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_TRUE(first->built);
  EXPECT_FALSE(first->cache_hit);
  auto reused = open_engine(build, CachePolicy::kRequireCached, options);
  ASSERT_TRUE(reused.is_ok()) << reused.status().to_string();
  EXPECT_TRUE(reused->cache_hit);
  EXPECT_FALSE(reused->built);
  EXPECT_EQ(reused->key, first->key);
  auto rebuilt = open_engine(build, CachePolicy::kRebuild, options);
  ASSERT_TRUE(rebuilt.is_ok());
  EXPECT_TRUE(rebuilt->built);
  expect_matches_direct_execution(reused->engine, build, image({4, 3, 24, 24}, 4));

  // Another graph version is another key; the miss names the field.
  EngineBuild bumped = build;
  bumped.graph_version = "2";
  auto miss = open_engine(bumped, CachePolicy::kReuse, options);
  ASSERT_TRUE(miss.is_ok());
  EXPECT_NE(miss->key, first->key);
  EXPECT_NE(miss->explanation.find("graph_version"), std::string::npos) << miss->explanation;
}

TEST(Engine, KeyManifestRecordsSettingsAndTf32Off) {
  auto prepared = prepare_build(tinynet_build());
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  const auto& settings = prepared->manifest.builder_settings;
  EXPECT_EQ(settings.at("tf32"), "off");
  EXPECT_EQ(settings.at("optimization_level"), "3");
  EXPECT_EQ(prepared->manifest.profiles.size(), 1u);
  EXPECT_EQ(prepared->manifest.profiles[0].at("image").max, Dims({4, 3, 24, 24}));
  EXPECT_EQ(prepared->manifest.environment.backend, "cpu");
  EXPECT_FALSE(prepared->manifest.weights_hash.empty());
}

TEST(Engine, DeterministicReplayNeedsARecordWhoseHashEntersTheKey) {
  EngineBuild build = tinynet_build();
  build.settings.deterministic_replay = true;
  auto missing = prepare_build(build);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("tactic record"), std::string::npos) << missing.status().message();

  build.settings.tactic_record = weights_of("tinynet");  // any file: its hash is what counts here
  auto prepared = prepare_build(build);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  EXPECT_EQ(prepared->manifest.builder_settings.at("deterministic_replay"), "on");
  EXPECT_EQ(prepared->manifest.builder_settings.at("tactic_record_sha256").size(), 64u);
}

TEST(Engine, ProgressReportsEachLayer) {
  EngineBuild build = tinynet_build();
  std::vector<std::string> messages;
  build.progress = [&](const std::string& m) { messages.push_back(m); };
  ASSERT_TRUE(build_serialized_engine(build).is_ok());
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.front().find("tactic cpu.reference"), std::string::npos) << messages.front();
}

TEST(ModelPackage, LoadsTheExamplePackagesWithTheirDefaults) {
  auto package = ModelPackage::load(TINY_TRANSFORMER_PACKAGE);
  ASSERT_TRUE(package.is_ok()) << package.status().to_string();
  EXPECT_EQ(package->name(), "tiny_transformer");
  auto graph = package->graph("tiny_transformer");
  ASSERT_TRUE(graph.is_ok());
  EXPECT_EQ(graph->default_inputs.size(), 1u);
  EXPECT_EQ(graph->default_inputs[0].profiles[0], ShapeRange::fixed({2, 8}));
  auto build = package->engine_build("tiny_transformer");
  ASSERT_TRUE(build.is_ok());
  build->quiet = true;
  auto bytes = build_serialized_engine(*build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->tensor("tokens")->dtype, DataType::kInt64);
}

TEST(ModelPackage, ALibraryWithoutTheEntryPointIsNamed) {
  // The CLI is an executable, not a package: dlopen may refuse it or find no entry point.
  auto package = ModelPackage::load(TENSORACLE_CLI_PATH);
  ASSERT_FALSE(package.is_ok());
  EXPECT_NE(package.status().message().find(TENSORACLE_CLI_PATH), std::string::npos) << package.status().message();
}

TEST(BuildSpecs, InputSpecsParseFixedAndRanges) {
  auto fixed = parse_input_spec("image:1x3x32x32");
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(fixed->first, "image");
  EXPECT_EQ(fixed->second, ShapeRange::fixed({1, 3, 32, 32}));
  auto range = parse_input_spec("image:1x3x32x32:8x3x32x32:32x3x32x32");
  ASSERT_TRUE(range.is_ok());
  EXPECT_EQ(range->second.max, Dims({32, 3, 32, 32}));
  EXPECT_NE(parse_input_spec("image:1x3:2").status().message().find("NAME:DIMS or NAME:MIN:OPT:MAX"), std::string::npos);
  EXPECT_NE(parse_input_spec("image:1xAx3").status().message().find("'A' is not a non-negative dimension"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
