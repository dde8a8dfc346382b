// The backend interface on the cpu backend: supports, plan and restore as the builder and the
// engine reader use them, and the refusals that name a backend (an engine of a backend this build
// lacks, a tactic record of another backend).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "engine/engine_validation.h"
#include "host/cache/cache_testing.h"
#include "tensoracle/engine.h"

namespace tensoracle {
namespace {

using nlohmann::json;

// y = relu(x @ w) with x [batch, 4] and w a 4x3 constant.
Network small_network() {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 4});
  HostArray w = HostArray::zeros(DataType::kFloat32, {4, 3}).value();
  for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  net.mark_output(net.relu(net.matmul(x, net.add_constant(std::move(w), "w"))), "y");
  return net;
}

std::vector<OptimizationProfile> one_profile() { return {{{"x", ShapeRange{{1, 4}, {2, 4}, {8, 4}}}}}; }

EngineBuild small_build(const std::string& backend = std::string(backends::kReferenceBackend)) {
  EngineBuild build;
  build.name = "small";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) {
    net = small_network();
    return net.status();
  };
  build.weights = Weights();
  build.add_input("x", {ShapeRange{{1, 4}, {2, 4}, {8, 4}}});
  build.backend = backend;
  build.quiet = true;
  return build;
}

std::unique_ptr<backends::Backend> reference() { return backends::create_backend(backends::kReferenceBackend).value(); }

TEST(CpuBackendInterface, SupportsEveryLayerOfTheNetwork) {
  const Network net = small_network();
  auto cpu = reference();
  for (size_t i = 0; i < net.num_nodes(); ++i) EXPECT_TRUE(cpu->supports(net, i).is_ok()) << net.node(i).name;
}

TEST(CpuBackendInterface, PlansOneReferenceTacticPerLayerAndStoresConstantsAsBlobs) {
  const Network net = small_network();
  const std::vector<OptimizationProfile> profiles = one_profile();
  const BuilderSettings settings;
  std::vector<std::string> progress;
  backends::PlanRequest request{net, profiles, settings, [&](const std::string& m) { progress.push_back(m); }};
  auto plan = reference()->plan(request);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();

  const json doc = json::parse(plan->json);
  EXPECT_EQ(doc.at("backend"), backends::kReferenceBackend);
  ASSERT_EQ(doc.at("layers").size(), 2u);  // matmul, relu: the constant is a blob, not a layer
  for (const json& layer : doc.at("layers")) EXPECT_EQ(layer.at("tactic"), "cpu.reference") << layer.dump();
  ASSERT_EQ(plan->blobs.size(), 1u);
  EXPECT_EQ(plan->blobs[0].view.byte_size(), 4u * 3u * sizeof(float));
  EXPECT_EQ(plan->blobs[0].name.rfind("const/", 0), 0u) << plan->blobs[0].name;
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_NE(progress[0].find("tactic cpu.reference"), std::string::npos) << progress[0];
}

TEST(CpuBackendInterface, PlanRefusesALayerItCannotRunNamingIt) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2});
  auto outs = net.plugin({x}, PluginAttributes().set_plugin("dcn").set_output_types({DataType::kFloat32}).set_output_shapes({{2}}));
  net.mark_output(outs[0], "y");
  const std::vector<OptimizationProfile> profiles{{{"x", ShapeRange::fixed({2})}}};
  const BuilderSettings settings;
  auto plan = reference()->plan(backends::PlanRequest{net, profiles, settings});
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kNotFound);  // no plugin is loaded
  EXPECT_NE(plan.status().message().find("layer 'plugin_0': plugin 'dcn'"), std::string::npos) << plan.status().message();
}

// The engine reader's path: the engine names its backend, the registry makes it, the engine layer
// checks the sections, the backend checks and restores its plan.
TEST(CpuBackendInterface, RestoresAnEngineThroughTheRegistry) {
  auto bytes = build_serialized_engine(small_build());
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto file = EngineFile::from_bytes(bytes->data(), bytes->size(), "small.engine");
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  auto backend = backends::create_backend(file->environment().backend);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  auto validated = validate_engine(*file);
  ASSERT_TRUE(validated.is_ok()) << validated.status().to_string();
  EXPECT_TRUE((*backend)->check_plan(*file, validated->plan).is_ok());
  auto restored = (*backend)->restore(*file, validated->plan);
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  auto execution = (*restored)->create_execution();
  ASSERT_TRUE(execution.is_ok()) << execution.status().to_string();
  auto shapes = (*execution)->output_shapes({{"x", Dims{3, 4}}});
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().to_string();
  EXPECT_EQ(shapes->at("y"), (Dims{3, 3}));

  // The same engine through Engine: identical to running the network on the backend directly.
  auto engine = Engine::from_file(*file);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok());
  HostArray x = HostArray::zeros(DataType::kFloat32, {3, 4}).value();
  for (int64_t i = 0; i < x.element_count(); ++i) x.data_as<float>()[i] = 0.1f * static_cast<float>(i) - 0.4f;
  auto ran = exec->run_on_host({{"x", x.view()}});
  ASSERT_TRUE(ran.is_ok()) << ran.status().to_string();
  auto direct = reference()->execute(small_network(), {{"x", x.view()}});
  ASSERT_TRUE(direct.is_ok());
  const HostArray& got = ran->at("y");
  const HostArray& want = direct->at("y");
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.byte_size()), 0);
  double sum = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) sum += want.data_as<float>()[i];
  EXPECT_GT(sum, 0) << "the check needs a non-zero output";
}

// An engine whose recorded backend is `backend`, otherwise the small cpu engine.
std::string engine_of_backend(const std::string& backend) {
  auto prepared = prepare_build(small_build());
  EXPECT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  auto writer = plan_engine(small_build(), *prepared);
  EXPECT_TRUE(writer.is_ok()) << writer.status().to_string();
  Environment environment = prepared->manifest.environment;
  environment.backend = backend;
  writer->set_environment(environment);
  return writer->to_bytes().value();
}

TEST(EngineReader, RefusesAnEngineOfABackendThisBuildLacksNamingTheOnesItHas) {
  const std::string bytes = engine_of_backend("tpu");
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "tpu.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kUnsupported);
  const std::string message = engine.status().message();
  EXPECT_NE(message.find("'tpu.engine'"), std::string::npos) << message;
  EXPECT_NE(message.find("'tpu' backend"), std::string::npos) << message;
  for (const std::string& name : backends::backend_names()) EXPECT_NE(message.find(name), std::string::npos) << message;
}

TEST(Builder, RefusesATacticRecordOfAnotherBackend) {
  testing::TempDir dir;
  const std::string record = dir / "record.engine";
  std::ofstream(record, std::ios::binary) << engine_of_backend("tpu");
  EngineBuild build = small_build();
  build.settings.deterministic_replay = true;
  build.settings.tactic_record = record;
  auto bytes = build_serialized_engine(build);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_NE(bytes.status().message().find("is a 'tpu' engine; replay needs a 'cpu' engine"), std::string::npos)
      << bytes.status().message();
}

TEST(Builder, RefusesABackendThisBuildLacksBeforeDefiningTheGraph) {
  EngineBuild build = small_build("tpu");
  bool defined = false;
  build.graph = [&](Network& net, const Weights&) {
    defined = true;
    net = small_network();
    return Status::ok();
  };
  auto bytes = build_serialized_engine(build);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bytes.status().message().find("engine 'small'"), std::string::npos) << bytes.status().message();
  EXPECT_NE(bytes.status().message().find("'tpu'"), std::string::npos) << bytes.status().message();
  EXPECT_FALSE(defined);
}

}  // namespace
}  // namespace tensoracle
