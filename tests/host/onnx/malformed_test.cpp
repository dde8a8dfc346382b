// Hostile ONNX files (every file tensoracle reads is untrusted): each is refused with an error naming the file and the fault,
// never a crash. The files are built here as protobuf messages, then broken.
#include <gtest/gtest.h>

#include "host/onnx/onnx_test_models.h"
#include "tensoracle/onnx.h"

namespace tensoracle::testing {
namespace {

// x + w -> y, with w a [2] initializer.
onnx::ModelProto valid_model() {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {2});
  add_initializer(m, "w", {2}, {1.0f, 2.0f});
  add_node(m, "Add", {"x", "w"}, {"y"}, "add");
  add_output(m, "y");
  return m;
}

Status import_error(const onnx::ModelProto& m) {
  TempDir dir;
  auto imported = network_from_onnx(write_model(dir, m));
  EXPECT_FALSE(imported.is_ok());
  return imported.status();
}

TEST(OnnxMalformed, TheValidModelImports) {
  TempDir dir;
  EXPECT_TRUE(network_from_onnx(write_model(dir, valid_model())).is_ok());
}

TEST(OnnxMalformed, TruncatedProtobufIsCorruptData) {
  TempDir dir;
  std::string bytes;
  ASSERT_TRUE(valid_model().SerializeToString(&bytes));
  // Cut inside the initializer's raw data, so the last field's length runs past the end.
  for (size_t keep : {bytes.size() - 3, bytes.size() / 2, size_t{7}}) {
    write_bytes(dir.file("cut.onnx"), bytes.substr(0, keep));
    auto imported = network_from_onnx(dir.file("cut.onnx"));
    ASSERT_FALSE(imported.is_ok()) << keep;
    EXPECT_EQ(imported.status().code(), StatusCode::kCorruptData) << imported.status().message();
    EXPECT_NE(imported.status().message().find("cut.onnx"), std::string::npos);
  }
}

TEST(OnnxMalformed, NotAFileIsNamed) {
  auto imported = network_from_onnx("/nonexistent/model.onnx");
  ASSERT_FALSE(imported.is_ok());
  EXPECT_NE(imported.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(OnnxMalformed, CycleIsRefusedNamingItsNodes) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {2});
  add_node(m, "Add", {"x", "b"}, {"a"}, "first");
  add_node(m, "Relu", {"a"}, {"b"}, "second");
  add_output(m, "b");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("cycle"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("'first'"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, MissingInitializerNamesTheNodeAndTheValue) {
  onnx::ModelProto m = valid_model();
  m.mutable_graph()->clear_initializer();
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("node 'add' (Add) reads 'w'"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, ValueProducedTwiceIsRefused) {
  onnx::ModelProto m = valid_model();
  add_node(m, "Relu", {"x"}, {"w"}, "clobber");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("'w' is produced twice"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, InitializerDimsThatOverflowAreRefused) {
  onnx::ModelProto m = valid_model();
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("initializer 'w'"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("more elements than int64 can count"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, NegativeDimsAndRankBeyondTheMaximumAreRefused) {
  onnx::ModelProto negative = valid_model();
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
  EXPECT_NE(import_error(negative).message().find("dim 0 is -2"), std::string::npos);
  onnx::ModelProto deep = valid_model();
  for (int i = 0; i < 9; ++i) deep.mutable_graph()->mutable_initializer(0)->add_dims(1);
  EXPECT_NE(import_error(deep).message().find("rank 10 exceeds"), std::string::npos);
}

TEST(OnnxMalformed, InputDimBeyondTheBoundIsRefused) {
  onnx::ModelProto m = valid_model();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(
      int64_t{1} << 62);
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("graph input 'x': dim 0"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, RawDataOfTheWrongSizeIsRefused) {
  onnx::ModelProto m = valid_model();
  m.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(7, '\0'));
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("raw_data holds 7 bytes"), std::string::npos) << error.message();
}

TEST(OnnxMalformed, UnknownAndUnsupportedDataTypesAreNamed) {
  for (int32_t code : {int32_t{onnx::TensorProto::STRING}, int32_t{onnx::TensorProto::COMPLEX64}, int32_t{99}}) {
    onnx::ModelProto m = valid_model();
    m.mutable_graph()->mutable_initializer(0)->set_data_type(code);
    const Status error = import_error(m);
    EXPECT_EQ(error.code(), StatusCode::kUnsupported) << error.message();
    EXPECT_NE(error.message().find("initializer 'w': data type"), std::string::npos) << error.message();
  }
  onnx::ModelProto input = valid_model();
  input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  EXPECT_NE(import_error(input).message().find("graph input 'x': data type STRING"), std::string::npos);
}

// Found by the fuzz target: a variadic op whose first step fails (shapes that do not broadcast)
// read the invalid tensor it returned.
TEST(OnnxMalformed, AVariadicOpWhoseFirstStepFailsIsRefused) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {2});
  add_input(m, "y", {3});
  add_input(m, "z", {2});
  add_node(m, "Sum", {"x", "y", "z"}, {"s"}, "sum");
  add_output(m, "s");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("ONNX node 'sum' (op Sum, domain ai.onnx, opset 17)"), std::string::npos)
      << error.message();
}

// Found by the fuzz target: names become layer and tensor names, which engine files store as JSON.
TEST(OnnxMalformed, ANameThatIsNotUtf8IsRefused) {
  onnx::ModelProto m = valid_model();
  m.mutable_graph()->mutable_node(0)->set_output(0, "y\xff");
  m.mutable_graph()->mutable_output(0)->set_name("y\xff");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("node 'add' is named 'y\xff', which is not valid UTF-8"), std::string::npos)
      << error.message();
  onnx::ModelProto node_name = valid_model();
  node_name.mutable_graph()->mutable_node(0)->set_name("add\xc0\xaf");  // an overlong '/'
  TempDir dir;
  auto imported = network_from_onnx(write_model(dir, node_name));
  ASSERT_TRUE(imported.is_ok()) << imported.status().message();  // the layer takes a generated name
  EXPECT_TRUE(imported->network.find_node("Add_0").is_ok());
}

TEST(OnnxMalformed, OldOpsetsAndMissingOpsetsAreRefused) {
  onnx::ModelProto old = valid_model();
  old.mutable_opset_import(0)->set_version(11);
  EXPECT_NE(import_error(old).message().find("opset 11 is older than 13"), std::string::npos);
  onnx::ModelProto none = valid_model();
  none.clear_opset_import();
  EXPECT_NE(import_error(none).message().find("imports no opset"), std::string::npos);
}

TEST(OnnxMalformed, AnOutputNobodyProducesIsRefused) {
  onnx::ModelProto m = valid_model();
  add_output(m, "ghost");
  EXPECT_NE(import_error(m).message().find("graph output 'ghost'"), std::string::npos);
}

// Shapes read from a model's values are bounded before anything is built: 2e9 pads of a static
// input would make an 8 GB tensor (a fuzzer-found Pad with 1e8 pads ran it out of memory).
TEST(OnnxMalformed, AHugeOutputShapeFromPadsIsRefused) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {1, 4});
  add_int64_initializer(m, "pads", {4}, {0, 0, 0, 2000000000});
  add_node(m, "Pad", {"x", "pads"}, {"y"}, "pad");
  add_output(m, "y");
  EXPECT_NE(import_error(m).message().find("ONNX node 'pad' (op Pad, domain ai.onnx, opset 17): the output "
                                           "fp32[1,2000000004] of layer 'pad' would hold 8000000016 bytes, over the "
                                           "4294967296 this importer allows one tensor"),
            std::string::npos)
      << import_error(m).message();
}

// The fuzzer's out-of-memory (a 585-byte model): GatherND into a graph input with a declared dim
// of 2^31 made its table of offsets, 2^31 int64 values (16 GiB), at import. The dim is untrusted:
// it is refused, naming the node, the dim and its size, before anything is allocated.
TEST(OnnxMalformed, AHugeDeclaredDimIndexedByGatherNdIsRefusedBeforeItsTableIsMade) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {int64_t{1} << 31, 2});
  add_int64_initializer(m, "pairs", {1, 1}, {0});
  add_node(m, "GatherND", {"x", "pairs"}, {"y"}, "gather");
  add_output(m, "y");
  const Status error = import_error(m);
  EXPECT_EQ(error.code(), StatusCode::kUnsupported) << error.message();
  EXPECT_NE(error.message().find("ONNX node 'gather' (op GatherND, domain ai.onnx, opset 17): dim 0 of input 0 (data) "
                                 "has size 2147483648"),
            std::string::npos)
      << error.message();
}

TEST(OnnxMalformed, AHugeDeclaredDimGatheredByGatherElementsIsRefusedBeforeItsTableIsMade) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {2, int64_t{1} << 31});
  add_int64_initializer(m, "index", {1, 1}, {0});
  add_int_attribute(add_node(m, "GatherElements", {"x", "index"}, {"y"}, "gather"), "axis", 1);
  add_output(m, "y");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("dim 1 of input 0 (data) has size 2147483648"), std::string::npos) << error.message();
}

// Found by the same fuzzer run: Expand of a dim of 1 to 2^31 made 2^31 int64 gather indices.
TEST(OnnxMalformed, AHugeExpandIsRefusedBeforeItsIndicesAreMade) {
  onnx::ModelProto m = onnx_model();
  add_input(m, "x", {1});
  add_int64_initializer(m, "shape", {1}, {int64_t{1} << 31});
  add_node(m, "Expand", {"x", "shape"}, {"y"}, "expand");
  add_output(m, "y");
  const Status error = import_error(m);
  EXPECT_NE(error.message().find("ONNX node 'expand' (op Expand, domain ai.onnx, opset 17): broadcasting dim 0 of "),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("to 2147483648"), std::string::npos) << error.message();
}

}  // namespace
}  // namespace tensoracle::testing
