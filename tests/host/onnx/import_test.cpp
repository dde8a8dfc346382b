// Importing ONNX models built in code: what becomes of inputs (symbolic dims), initializers and
// nodes, how refusals name the node, and how an imported model enters the engine key.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "backends/registry.h"
#include "host/cli_run.h"
#include "host/onnx/onnx_test_models.h"
#include "tensoracle/build.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"
#include "tensoracle/hashing.h"
#include "tensoracle/npy.h"
#include "tensoracle/onnx.h"
#include "passes/passes.h"

namespace tensoracle::testing {
namespace {

// relu(x + w) with x [N, 3] (N symbolic) and w [3].
onnx::ModelProto add_relu_model() {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {-1, 3});
  add_initializer(m, "w", {3}, {1.0f, -2.0f, 0.5f});
  add_node(m, "Add", {"x", "w"}, {"sum"}, "add");
  add_node(m, "Relu", {"sum"}, {"y"}, "relu");
  add_output(m, "y");
  return m;
}

// Self-attention as the TorchScript exporter writes Hugging Face's BERT (opset 20): heads split
// by Reshape + Transpose(0, 2, 1, 3), k^T as Transpose(0, 2, 3, 1), the scores scaled by a
// constant, an additive [N, 1, 1, L] mask, Softmax over the last axis, the product with v, heads
// merged back. q, k and v are graph inputs [N, L, heads * d].
onnx::ModelProto exported_attention_model() {
  constexpr int64_t kN = 2, kL = 6, kHeads = 2, kD = 4;
  onnx::ModelProto m = onnx_model(20);
  for (const char* name : {"q", "k", "v"}) add_input(m, name, {kN, kL, kHeads * kD});
  add_input(m, "mask", {kN, 1, 1, kL});
  add_int64_initializer(m, "split", {4}, {kN, kL, kHeads, kD});
  add_int64_initializer(m, "merged", {3}, {kN, kL, kHeads * kD});
  add_initializer(m, "scaling", {}, {0.5f});
  const auto transpose = [&](const std::string& in, const std::string& out, const std::vector<int64_t>& perm) {
    add_ints_attribute(add_node(m, "Transpose", {in}, {out}), "perm", perm);
  };
  for (const char* name : {"q", "k", "v"}) add_node(m, "Reshape", {name, "split"}, {std::string(name) + "4"});
  transpose("q4", "qh", {0, 2, 1, 3});
  transpose("k4", "kt", {0, 2, 3, 1});
  transpose("v4", "vh", {0, 2, 1, 3});
  add_node(m, "MatMul", {"qh", "kt"}, {"scores"});
  add_node(m, "Mul", {"scores", "scaling"}, {"scaled"});
  add_node(m, "Add", {"scaled", "mask"}, {"masked"});
  add_int_attribute(add_node(m, "Softmax", {"masked"}, {"probs"}), "axis", -1);
  add_node(m, "MatMul", {"probs", "vh"}, {"context"});
  transpose("context", "context_t", {0, 2, 1, 3});
  add_node(m, "Reshape", {"context_t", "merged"}, {"y"});
  add_output(m, "y");
  return m;
}

// The cuda planner's passes make the exported pattern one attention layer (the fused kernels a
// hand-written graph gets), computing what the imported layers compute.
TEST(OnnxImport, AnExportedAttentionBecomesOneAttentionLayer) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, exported_attention_model()));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  std::vector<std::string> log;
  auto optimized = passes::optimize_for_inference(model->network, &log);
  ASSERT_TRUE(optimized.is_ok()) << optimized.status().to_string();
  std::map<OpKind, int> kinds;
  for (size_t i = 0; i < optimized->num_nodes(); ++i) ++kinds[optimized->node(i).kind];
  EXPECT_EQ(kinds[OpKind::kAttention], 1);
  EXPECT_EQ(kinds[OpKind::kSoftmax], 0);
  EXPECT_EQ(kinds[OpKind::kMatMul], 0);
  EXPECT_EQ(kinds[OpKind::kTranspose], 4) << "q, k and v split by (0, 2, 1, 3), the context merged back";

  NamedArrays inputs;
  unsigned seed = 11;
  for (const char* name : {"q", "k", "v"}) {
    HostArray a = HostArray::zeros(DataType::kFloat32, {2, 6, 8}).value();
    for (int64_t i = 0; i < a.element_count(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      a.data_as<float>()[i] = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
    }
    inputs[name] = std::move(a);
  }
  HostArray mask = HostArray::zeros(DataType::kFloat32, {2, 1, 1, 6}).value();
  mask.data_as<float>()[5] = -1e4f;
  inputs["mask"] = std::move(mask);
  NamedArrayViews views;
  for (const auto& [name, array] : inputs) views[name] = array.view();
  auto cpu = backends::create_backend("cpu").value();
  auto before = cpu->execute(model->network, views);
  auto after = cpu->execute(*optimized, views);
  ASSERT_TRUE(before.is_ok() && after.is_ok());
  auto cmp = compare_outputs(after->at("y").view(), before->at("y").view());
  ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  EXPECT_LT(cmp->rel_l2_error, 1e-6);
}

TEST(OnnxImport, SymbolicDimsBecomeDynamicInputs) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, add_relu_model()));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ASSERT_EQ(model->inputs.size(), 1u);
  EXPECT_EQ(model->inputs[0].shape, (Dims{-1, 3}));
  EXPECT_EQ(model->inputs[0].dim_names, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(model->opset, 17);
  ASSERT_EQ(model->network.outputs().size(), 1u);
  EXPECT_EQ(model->network.tensor(model->network.outputs()[0]).name, "y");
  EXPECT_EQ(model->network.tensor(model->network.outputs()[0]).desc.to_string(), "fp32[-1,3]");
}

TEST(OnnxImport, TheEngineComputesTheModel) {
  TempDir dir;
  const std::string path = write_model(dir, add_relu_model());
  auto model = network_from_onnx(path);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const float x[6] = {0.0f, 1.0f, 2.0f, -3.0f, 4.0f, -1.0f};
  auto outputs = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{2, 3}, x}}},
                              {{"x", ShapeRange{{1, 3}, {2, 3}, {4, 3}}}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const HostArray& y = outputs->at("y");
  const float expected[6] = {1.0f, 0.0f, 2.5f, 0.0f, 2.0f, 0.0f};
  ASSERT_EQ(y.element_count(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.data_as<float>()[i], expected[i]) << i;
}

TEST(OnnxImport, TheFileHashAndImporterVersionEnterTheKey) {
  TempDir dir;
  const std::string path = write_model(dir, add_relu_model());
  auto model = network_from_onnx(path);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto build = onnx_engine_build(*model, "add_relu");
  ASSERT_TRUE(build.is_ok());
  build->add_input("x", std::vector<ShapeRange>{ShapeRange{{1, 3}, {2, 3}, {4, 3}}});
  auto prepared = prepare_build(*build);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().message();
  auto file_hash = sha256_file_hex(path);
  ASSERT_TRUE(file_hash.is_ok());
  EXPECT_EQ(prepared->manifest.source.at("onnx_sha256"), *file_hash);
  EXPECT_EQ(prepared->manifest.source.at("onnx_importer"), kOnnxImporterVersion);
  const std::string json = manifest_to_json(prepared->manifest);
  EXPECT_NE(json.find("\"onnx_sha256\": \"" + *file_hash + "\""), std::string::npos) << json;
  auto round_trip = manifest_from_json(json, "manifest");
  ASSERT_TRUE(round_trip.is_ok()) << round_trip.status().message();
  EXPECT_EQ(round_trip->source, prepared->manifest.source);
  // Another file (one byte of the producer differs) is another key, though the graph is the same.
  onnx::ModelProto other = add_relu_model();
  other.set_producer_name("tensoracle-tests-2");
  auto other_model = network_from_onnx(write_model(dir, other, "other.onnx"));
  ASSERT_TRUE(other_model.is_ok());
  auto other_build = onnx_engine_build(*other_model, "add_relu");
  ASSERT_TRUE(other_build.is_ok());
  other_build->add_input("x", std::vector<ShapeRange>{ShapeRange{{1, 3}, {2, 3}, {4, 3}}});
  auto other_prepared = prepare_build(*other_build);
  ASSERT_TRUE(other_prepared.is_ok());
  EXPECT_EQ(other_prepared->manifest.graph_hash, prepared->manifest.graph_hash);
  EXPECT_NE(cache_key(other_prepared->manifest), cache_key(prepared->manifest));
}

// docs/precision.md: an imported fp32 model built with precision fp16 computes in fp16 with fp32
// I/O, under another key whose difference is the setting.
TEST(OnnxImport, AModelBuiltWithPrecisionFp16ComputesInFp16WithFp32Io) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, add_relu_model()));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto build = onnx_engine_build(*model, "add_relu");
  ASSERT_TRUE(build.is_ok());
  build->add_input("x", std::vector<ShapeRange>{ShapeRange{{1, 3}, {2, 3}, {4, 3}}});
  build->quiet = true;
  auto fp32 = prepare_build(*build);
  ASSERT_TRUE(fp32.is_ok()) << fp32.status().message();
  build->settings.precision = DataType::kFloat16;
  auto fp16 = prepare_build(*build);
  ASSERT_TRUE(fp16.is_ok()) << fp16.status().message();
  EXPECT_NE(cache_key(fp16->manifest), cache_key(fp32->manifest));
  auto differences = manifest_differences(manifest_to_json(fp32->manifest), manifest_to_json(fp16->manifest));
  ASSERT_TRUE(differences.is_ok());
  std::string named;
  for (const std::string& d : *differences) named += d + "; ";
  EXPECT_NE(named.find("precision"), std::string::npos) << named;
  EXPECT_EQ(named.find("graph_hash"), std::string::npos) << named;
  // The add and the relu compute in fp16; the I/O table is fp32.
  auto sum = fp16->network.find_tensor("add");  // the importer names tensors after their layers
  ASSERT_TRUE(sum.is_ok()) << to_text(fp16->network);
  EXPECT_EQ(fp16->network.tensor(*sum).desc.dtype, DataType::kFloat16);
  for (const IoTensor& io : fp16->io_table.tensors) EXPECT_EQ(io.dtype, DataType::kFloat32) << io.name;
  ASSERT_FALSE(fp16->log.empty());
  EXPECT_EQ(fp16->log[0].rfind("precision: 2 layer(s) converted to fp16", 0), 0u) << fp16->log[0];

  auto bytes = build_serialized_engine(*build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().message();
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  auto execution = engine->create_execution();
  ASSERT_TRUE(execution.is_ok());
  // 0.1 is not an fp16 value: the result shows the rounding (x + 1 in fp16 is 1.0996094).
  const float x[6] = {0.1f, 1.0f, 2.0f, -3.0f, 4.0f, -1.0f};
  auto outputs = execution->run_on_host({{"x", ArrayView{DataType::kFloat32, Dims{2, 3}, x}}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const HostArray& y = outputs->at("y");
  ASSERT_EQ(y.dtype(), DataType::kFloat32);
  const float expected[6] = {1.0996094f, 0.0f, 2.5f, 0.0f, 2.0f, 0.0f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data_as<float>()[i], expected[i]) << i;
}

// The CLI's --precision on an ONNX model: `run --onnx` of the calibration fixture (a small CNN)
// in fp16 stays within the documented tolerance of its fp32 run.
TEST(OnnxImport, RunOnnxWithPrecisionFp16StaysNearFp32) {
  TempDir dir;
  const std::string fixtures = TENSORACLE_FIXTURES_DIR "/calibration/";
  const std::string cli = "TENSORACLE_CACHE_DIR=" + dir.file("cache") + " " + std::string(TENSORACLE_CLI_PATH) + " run --onnx " +
                          fixtures + "model.onnx --inputs " + fixtures + "batch0.npz --quiet";
  const CliRun fp32 = run_command(cli + " --outputs " + dir.file("fp32.npz") + " 2>&1");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.output;
  const CliRun fp16 = run_command(cli + " --precision fp16 --outputs " + dir.file("fp16.npz") + " 2>&1");
  ASSERT_EQ(fp16.exit_code, 0) << fp16.output;
  auto a = read_named_arrays(dir.file("fp32.npz"));
  auto b = read_named_arrays(dir.file("fp16.npz"));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_FALSE(a->empty());
  for (const auto& [name, reference] : *a) {
    ASSERT_TRUE(b->count(name)) << name;
    EXPECT_EQ(b->at(name).dtype(), DataType::kFloat32) << name;
    auto cmp = compare_outputs(b->at(name).view(), reference.view());
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().message();
    EXPECT_GT(cmp->rel_l2_error, 0.0) << name;
    EXPECT_LT(cmp->rel_l2_error, 5e-3) << name;
  }
}

TEST(OnnxImport, ADynamicInputNeedsADeclaredRange) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, add_relu_model()));
  ASSERT_TRUE(model.is_ok());
  auto build = onnx_engine_build(*model, "add_relu");
  ASSERT_TRUE(build.is_ok());
  auto prepared = prepare_build(*build);
  ASSERT_FALSE(prepared.is_ok());
  EXPECT_NE(prepared.status().message().find("input 'x' is fp32[-1,3]; declare its shape range"), std::string::npos)
      << prepared.status().message();
}

TEST(OnnxImport, AnUnsupportedOpIsRefusedNamingNodeOpDomainAndOpset) {
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_node(1)->set_op_type("Hardmax");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().message().find("ONNX node 'relu' (op Hardmax, domain ai.onnx, opset 17): the op is not supported"),
            std::string::npos)
      << model.status().message();
}

TEST(OnnxImport, AnUnknownAttributeAndAnotherDomainAreRefused) {
  TempDir dir;
  onnx::ModelProto attribute = add_relu_model();
  onnx::AttributeProto* a = attribute.mutable_graph()->mutable_node(1)->add_attribute();
  a->set_name("slope");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.5f);
  auto refused = network_from_onnx(write_model(dir, attribute));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("'relu' (op Relu, domain ai.onnx, opset 17): attribute 'slope' is not supported"),
            std::string::npos)
      << refused.status().message();
  onnx::ModelProto domain = add_relu_model();
  domain.mutable_graph()->mutable_node(1)->set_domain("com.example");
  auto other = network_from_onnx(write_model(dir, domain));
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("(op Relu, domain com.example, opset 17): the domain 'com.example' is not supported"),
            std::string::npos)
      << other.status().message();
}

TEST(OnnxImport, CheckListsEveryNodeAndWhatItDependsOn) {
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("BitShift");
  TempDir dir;
  auto report = check_onnx_model(write_model(dir, m));
  ASSERT_TRUE(report.is_ok()) << report.status().message();
  EXPECT_FALSE(report->importable());
  ASSERT_EQ(report->nodes.size(), 2u);
  EXPECT_EQ(report->nodes[0].op_type, "BitShift");
  EXPECT_FALSE(report->nodes[0].supported);
  EXPECT_FALSE(report->nodes[1].supported);
  EXPECT_EQ(report->nodes[1].reason, "reads 'sum' of the refused node 'add'");
  auto clean = check_onnx_model(write_model(dir, add_relu_model(), "clean.onnx"));
  ASSERT_TRUE(clean.is_ok());
  EXPECT_TRUE(clean->importable());
}

TEST(OnnxImport, ConstantShapeInputsAreReadAtImport) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {2, 3, 4});
  onnx::NodeProto* shape = add_node(m, "Constant", {}, {"shape"}, "shape");
  add_ints_attribute(shape, "value_ints", {0, -1});
  add_node(m, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(model->network.tensor(model->network.outputs()[0]).desc.to_string(), "fp32[2,12]");
  // A shape computed by the graph is refused, naming the input.
  onnx::ModelProto computed = m;
  computed.mutable_graph()->mutable_node(0)->set_op_type("Shape");
  computed.mutable_graph()->mutable_node(0)->clear_attribute();
  computed.mutable_graph()->mutable_node(0)->add_input("x");
  add_node(computed, "Relu", {"x"}, {"x2"}, "relu");
  computed.mutable_graph()->mutable_node(1)->set_input(1, "x2");
  auto refused = network_from_onnx(write_model(dir, computed, "computed.onnx"));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("input 1 'x2' must be a constant"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace tensoracle::testing
