// Shape computations folded at import (the chains torch.onnx.export writes for view/reshape,
// ConstantOfShape, Range), and the ops added with them: each model is imported, what is left of
// it checked (no layer of a folded chain remains), then run on the cpu backend.
#include <gtest/gtest.h>

#include "host/onnx/onnx_test_models.h"

namespace tensoracle::testing {
namespace {

// The layer kinds of an imported network, in order ("constant", "reshape", ...).
std::vector<std::string> layer_kinds(const Network& net) {
  std::vector<std::string> kinds;
  for (size_t i = 0; i < net.num_nodes(); ++i) kinds.emplace_back(op_kind_name(net.node(i).kind));
  return kinds;
}

std::vector<float> iota_floats(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// torch's x.view(x.size(0), -1) and x.view(b, h * w): Shape -> Gather -> Unsqueeze -> Concat,
// with Mul and a Cast on the way, feeding a Reshape.
TEST(OnnxFolding, TheTorchViewChainFoldsIntoOneReshape) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {2, 3, 4});
  add_int64_initializer(m, "i0", {}, {0});
  add_int64_initializer(m, "i1", {}, {1});
  add_int64_initializer(m, "i2", {}, {2});
  add_int64_initializer(m, "axes0", {1}, {0});
  add_node(m, "Shape", {"x"}, {"shape"}, "shape");
  add_node(m, "Gather", {"shape", "i0"}, {"batch"}, "gather_batch");
  add_node(m, "Gather", {"shape", "i1"}, {"h"}, "gather_h");
  add_node(m, "Gather", {"shape", "i2"}, {"w"}, "gather_w");
  add_node(m, "Mul", {"h", "w"}, {"hw"}, "mul");
  add_int_attribute(add_node(m, "Cast", {"hw"}, {"hw64"}, "cast"), "to", onnx::TensorProto::INT64);
  add_node(m, "Unsqueeze", {"batch", "axes0"}, {"batch1"}, "unsqueeze_batch");
  add_node(m, "Unsqueeze", {"hw64", "axes0"}, {"hw1"}, "unsqueeze_hw");
  add_int_attribute(add_node(m, "Concat", {"batch1", "hw1"}, {"target"}, "concat"), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "reshape");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(layer_kinds(model->network), std::vector<std::string>{"reshape"});
  const Network& net = model->network;
  EXPECT_EQ(net.tensor(net.outputs()[0]).desc.to_string(), "fp32[2,12]");
  const std::vector<float> x = iota_floats(24);
  auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{2, 3, 4}, x.data()}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->at("y").shape(), (Dims{2, 12}));
  for (int i = 0; i < 24; ++i) EXPECT_EQ(out->at("y").data_as<float>()[i], x[static_cast<size_t>(i)]);
}

// torch's expand_as / new_ones: ConstantOfShape(Shape(x)) -> Expand of a [1, 4] row; a Range of
// the same length used as gather indices (arange), both folded.
TEST(OnnxFolding, ConstantOfShapeRangeAndExpandOfAComputedShape) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {3, 4});
  add_initializer(m, "row", {1, 4}, {1, 2, 3, 4});
  add_int64_initializer(m, "zero", {}, {0});
  add_int64_initializer(m, "one", {}, {1});
  add_int64_initializer(m, "i1", {}, {1});
  add_node(m, "Shape", {"x"}, {"shape"}, "shape");
  add_node(m, "ConstantOfShape", {"shape"}, {"zeros"}, "zeros");  // float 0 by default
  add_node(m, "Expand", {"row", "shape"}, {"rows"}, "expand");
  add_node(m, "Add", {"rows", "zeros"}, {"rows0"}, "add_zeros");
  add_node(m, "Gather", {"shape", "i1"}, {"width"}, "width");
  add_node(m, "Range", {"zero", "width", "one"}, {"columns"}, "range");
  add_int_attribute(add_node(m, "Gather", {"x", "columns"}, {"gathered"}, "gather"), "axis", 1);
  add_node(m, "Mul", {"rows0", "gathered"}, {"y"}, "mul");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  // Everything that reads only constants is a constant now: the expanded rows plus zeros are
  // one [3, 4] constant, the range is the gather's constant indices.
  EXPECT_EQ(layer_kinds(model->network), (std::vector<std::string>{"constant", "gather", "constant", "elementwise"}));
  const std::vector<float> x = iota_floats(12);
  auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{3, 4}, x.data()}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(out->at("y").data_as<float>()[r * 4 + c], static_cast<float>((c + 1) * (r * 4 + c))) << r << "," << c;
}

// A chain that reads a network input's value (not only its shape) is not folded: its Reshape
// then refuses the computed shape, naming the input.
TEST(OnnxFolding, AChainThatReadsAComputedValueIsRefusedNamingIt) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {2, 3});
  add_value(m.mutable_graph()->mutable_input(), "n", {1}, onnx::TensorProto::INT64);
  add_int64_initializer(m, "rest", {1}, {-1});
  add_int_attribute(add_node(m, "Concat", {"n", "rest"}, {"target"}, "concat"), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "reshape");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_FALSE(model.is_ok());
  EXPECT_NE(model.status().message().find("ONNX node 'reshape' (op Reshape, domain ai.onnx, opset 17): input 1 "
                                          "'target' must be a constant"),
            std::string::npos)
      << model.status().message();
}

// A hostile ConstantOfShape cannot make the importer allocate without bound.
TEST(OnnxFolding, AHugeConstantOfShapeIsRefused) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {2});
  add_int64_initializer(m, "huge", {2}, {1 << 20, 1 << 20});
  add_node(m, "ConstantOfShape", {"huge"}, {"big"}, "big");
  add_node(m, "Add", {"x", "big"}, {"y"}, "add");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_FALSE(model.is_ok());
  EXPECT_NE(model.status().message().find("'big' (op ConstantOfShape, domain ai.onnx, opset 17): the output "
                                          "[1048576,1048576] of fp32 would hold 4398046511104 bytes"),
            std::string::npos)
      << model.status().message();
}

}  // namespace
}  // namespace tensoracle::testing
