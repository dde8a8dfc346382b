// Shape computations on dynamic dims (src/frontends/onnx/shape_value.h): the Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains exporters write for a dynamic batch or sequence import as
// reshapes that copy (0) or infer (-1) the dynamic dims, and run at any size of the declared
// range; what would need a dynamic dim's value at import is refused naming the dim.
#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>

#include "host/onnx/onnx_test_models.h"

namespace tensoracle::testing {
namespace {

// The shapes of the reshape layers of an imported network, in order ("0,0,2,4").
std::vector<std::string> reshape_shapes(const Network& net) {
  std::vector<std::string> shapes;
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (const auto* a = net.node(i).attributes<ReshapeAttributes>()) shapes.push_back(fmt::format("{}", fmt::join(a->shape, ",")));
  return shapes;
}

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

void add_scalar_indices(onnx::ModelProto& m, const std::vector<int64_t>& indices) {
  for (int64_t i : indices) add_int64_initializer(m, "i" + std::to_string(i), {}, {i});
  add_int64_initializer(m, "axes0", {1}, {0});
}

// shape[index] as a 1-D value of one element: Gather then Unsqueeze, as torch writes x.size(i).
std::string size_of(onnx::ModelProto& m, const std::string& shape, int64_t index) {
  const std::string scalar = shape + "_" + std::to_string(index);
  add_node(m, "Gather", {shape, "i" + std::to_string(index)}, {scalar}, "gather_" + scalar);
  add_node(m, "Unsqueeze", {scalar, "axes0"}, {scalar + "_1d"}, "unsqueeze_" + scalar);
  return scalar + "_1d";
}

std::string import_error(const onnx::ModelProto& m) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  return model.is_ok() ? "imported" : model.status().message();
}

// BERT's self-attention reshapes: q = x W is split into heads, (B, S, 8) -> (B, S, 2, 4), moved
// to (B, 2, S, 4) and back, and merged with the shape of the transposed tensor: view(
// context.size()[:-2] + (8,)). Both reshapes copy B and S; the model runs at two sizes.
onnx::ModelProto attention_reshapes() {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "seq", "8"});
  std::vector<float> w(64, 0.0f);
  for (int i = 0; i < 8; ++i) w[static_cast<size_t>(i * 8 + i)] = 2.0f;
  add_initializer(m, "w", {8, 8}, w);
  add_scalar_indices(m, {0, 1});
  add_int64_initializer(m, "heads", {2}, {2, 4});
  add_int64_initializer(m, "hidden", {1}, {8});
  add_int64_initializer(m, "start0", {1}, {0});
  add_int64_initializer(m, "end2", {1}, {-2});
  add_node(m, "MatMul", {"x", "w"}, {"q"}, "q");
  add_node(m, "Shape", {"x"}, {"sx"}, "shape_x");
  add_int_attribute(add_node(m, "Concat", {size_of(m, "sx", 0), size_of(m, "sx", 1), "heads"}, {"split"}, "split"), "axis", 0);
  add_node(m, "Reshape", {"q", "split"}, {"q4"}, "split_heads");
  onnx::NodeProto* t1 = add_node(m, "Transpose", {"q4"}, {"qt"}, "to_heads");
  onnx::NodeProto* t2 = add_node(m, "Transpose", {"qt"}, {"context"}, "from_heads");
  for (onnx::NodeProto* t : {t1, t2}) add_ints_attribute(t, "perm", {0, 2, 1, 3});
  add_node(m, "Shape", {"context"}, {"sc"}, "shape_context");
  add_node(m, "Slice", {"sc", "start0", "end2"}, {"lead"}, "lead");
  add_int_attribute(add_node(m, "Concat", {"lead", "hidden"}, {"merged"}, "merged"), "axis", 0);
  add_node(m, "Reshape", {"context", "merged"}, {"y"}, "merge_heads");
  add_output(m, "q4");
  add_output(m, "y");
  return m;
}

TEST(OnnxDynamicShapes, AttentionHeadReshapesCopyTheDynamicBatchAndSequence) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, attention_reshapes()));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(reshape_shapes(model->network), (std::vector<std::string>{"0,0,2,4", "0,0,8"}));
  for (const Dims& shape : {Dims{2, 3, 8}, Dims{3, 5, 8}}) {
    const std::vector<float> x = iota_floats(*shape.element_count());
    auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, shape, x.data()}}},
                            {{"x", ShapeRange{{1, 1, 8}, {2, 3, 8}, {4, 6, 8}}}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_EQ(out->at("q4").shape(), (Dims{shape[0], shape[1], 2, 4}));
    ASSERT_EQ(out->at("y").shape(), shape);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out->at("y").data_as<float>()[i], 2 * x[i]) << i;
  }
}

// torch's x.view(x.size(0), -1) with a dynamic batch: [0, -1].
TEST(OnnxDynamicShapes, FlattenByTheBatchAndMinusOne) {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "3", "4"});
  add_scalar_indices(m, {0});
  add_int64_initializer(m, "rest", {1}, {-1});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_int_attribute(add_node(m, "Concat", {size_of(m, "s", 0), "rest"}, {"target"}, "concat"), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "flatten");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(reshape_shapes(model->network), std::vector<std::string>{"0,-1"});
  for (int64_t batch : {2, 5}) {
    const std::vector<float> x = iota_floats(batch * 12);
    auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{batch, 3, 4}, x.data()}}},
                            {{"x", ShapeRange{{1, 3, 4}, {2, 3, 4}, {8, 3, 4}}}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_EQ(out->at("y").shape(), (Dims{batch, 12}));
  }
}

// (B, S, 8) -> (B*S, 8) through Mul of the two dims: the inferred dim is known to be B*S, so a
// later reshape to Shape(.)[0] x (2, 4) copies it.
TEST(OnnxDynamicShapes, AProductOfDimsIsTrackedThroughTheReshapeThatInfersIt) {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "seq", "8"});
  add_scalar_indices(m, {0, 1});
  add_int64_initializer(m, "hidden", {1}, {8});
  add_int64_initializer(m, "heads", {2}, {2, 4});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Mul", {size_of(m, "s", 0), size_of(m, "s", 1)}, {"tokens"}, "tokens");
  add_int_attribute(add_node(m, "Concat", {"tokens", "hidden"}, {"flat_shape"}, "flat_shape"), "axis", 0);
  add_node(m, "Reshape", {"x", "flat_shape"}, {"flat"}, "flat");
  add_node(m, "Relu", {"flat"}, {"r"}, "relu");
  add_node(m, "Shape", {"r"}, {"sr"}, "shape_r");
  add_int_attribute(add_node(m, "Concat", {size_of(m, "sr", 0), "heads"}, {"split_shape"}, "split_shape"), "axis", 0);
  add_node(m, "Reshape", {"r", "split_shape"}, {"y"}, "split");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(reshape_shapes(model->network), (std::vector<std::string>{"-1,8", "0,2,4"}));
  const std::vector<float> x = iota_floats(3 * 2 * 8);
  auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{3, 2, 8}, x.data()}}},
                          {{"x", ShapeRange{{1, 1, 8}, {2, 2, 8}, {4, 4, 8}}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->at("y").shape(), (Dims{6, 2, 4}));
}

// Expand(x, [B, 3, 4]) of x (B, 1, 4): B is x's own dim, the 1 broadcasts to 3.
TEST(OnnxDynamicShapes, ExpandToTheInputsOwnDynamicDims) {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "1", "4"});
  add_scalar_indices(m, {0});
  add_int64_initializer(m, "rest", {2}, {3, 4});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_int_attribute(add_node(m, "Concat", {size_of(m, "s", 0), "rest"}, {"target"}, "concat"), "axis", 0);
  add_node(m, "Expand", {"x", "target"}, {"y"}, "expand");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<float> x = iota_floats(8);
  auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{2, 1, 4}, x.data()}}},
                          {{"x", ShapeRange{{1, 1, 4}, {2, 1, 4}, {4, 1, 4}}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->at("y").shape(), (Dims{2, 3, 4}));
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(out->at("y").data_as<float>()[(b * 3 + r) * 4 + c], x[static_cast<size_t>(b * 4 + c)]);
}

// What needs a dynamic dim's value at import (a generated tensor's size, a broadcast of a static
// 1 to it, a difference of dims) is refused naming the node and the dim.
TEST(OnnxDynamicShapes, WhatNeedsTheValueOfADynamicDimIsRefusedNamingIt) {
  const auto model_with = [](const std::function<void(onnx::ModelProto&)>& tail) {
    onnx::ModelProto m = onnx_model(17);
    add_symbolic_input(m, "x", {"batch", "4"});
    add_scalar_indices(m, {0, 1});
    add_node(m, "Shape", {"x"}, {"s"}, "shape");
    tail(m);
    return m;
  };
  EXPECT_NE(import_error(model_with([](onnx::ModelProto& m) {
              add_node(m, "ConstantOfShape", {"s"}, {"zeros"}, "zeros");
              add_node(m, "Add", {"x", "zeros"}, {"y"}, "add");
              add_output(m, "y");
            })).find("ONNX node 'zeros' (op ConstantOfShape, domain ai.onnx, opset 17): input 0 's' depends on the "
                     "dynamic dim 'batch' of input 'x'"),
            std::string::npos);
  EXPECT_NE(import_error(model_with([](onnx::ModelProto& m) {
              add_int64_initializer(m, "zero", {}, {0});
              add_int64_initializer(m, "one", {}, {1});
              add_node(m, "Gather", {"s", "i0"}, {"n"}, "n");
              add_node(m, "Range", {"one", "n", "one"}, {"positions"}, "positions");
              add_output(m, "positions");
            })).find("ONNX node 'positions' (op Range, domain ai.onnx, opset 17): a Range of dynamic size is "
                     "supported from 0 in steps of 1 only"),
            std::string::npos);
  EXPECT_NE(import_error(model_with([](onnx::ModelProto& m) {
              add_initializer(m, "rows", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
              add_node(m, "Expand", {"rows", "s"}, {"y"}, "expand");
              add_output(m, "y");
            })).find("ONNX node 'expand' (op Expand, domain ai.onnx, opset 17): shape element 0 is the dynamic dim "
                     "'batch' of input 'x', which the input's dim at its place is not known to equal"),
            std::string::npos);
  EXPECT_NE(import_error(model_with([](onnx::ModelProto& m) {
              add_node(m, "Gather", {"s", "i0"}, {"n"}, "n");
              add_node(m, "Sub", {"n", "i1"}, {"n_minus_1"}, "n_minus_1");
              add_output(m, "n_minus_1");
            })).find("ONNX node 'n_minus_1' (op Sub, domain ai.onnx, opset 17): Sub of the dynamic dim 'batch' of "
                     "input 'x' and 1 is not a product of dims"),
            std::string::npos);
  EXPECT_NE(import_error(model_with([](onnx::ModelProto& m) {
              add_output(m, "s");
            })).find("graph output 's' depends on the dynamic dim 'batch' of input 'x'"),
            std::string::npos);
}

// Sizes that are a dynamic dim become tensors through an iota of the dim: torch.arange(x.size(0))
// (Range), position_ids[:, :x.size(0)] (Slice of a constant to a dynamic end) and the expand of a
// row to the batch, run at two sizes.
TEST(OnnxDynamicShapes, RangeSliceAndExpandToADynamicSizeReadTheDimAtRunTime) {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "4"});
  add_scalar_indices(m, {0});
  add_int64_initializer(m, "zero", {}, {0});
  add_int64_initializer(m, "one", {}, {1});
  add_int64_initializer(m, "start", {1}, {0});
  add_int64_initializer(m, "axis1", {1}, {1});
  std::vector<int64_t> table(16);
  for (int64_t i = 0; i < 16; ++i) table[static_cast<size_t>(i)] = 100 + i;
  add_int64_initializer(m, "table", {1, 16}, table);
  add_initializer(m, "row", {1, 4}, {1, 2, 3, 4});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Gather", {"s", "i0"}, {"n"}, "n");
  add_node(m, "Range", {"zero", "n", "one"}, {"positions"}, "positions");
  add_node(m, "Unsqueeze", {"n", "axes0"}, {"n1"}, "n1");
  add_node(m, "Slice", {"table", "start", "n1", "axis1"}, {"prefix"}, "prefix");
  add_node(m, "Expand", {"row", "s"}, {"rows"}, "rows");
  add_node(m, "Add", {"x", "rows"}, {"y"}, "add");
  for (const char* out : {"positions", "prefix", "y"}) add_output(m, out);
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  for (int64_t batch : {3, 7}) {
    const std::vector<float> x = iota_floats(batch * 4);
    auto out = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{batch, 4}, x.data()}}},
                            {{"x", ShapeRange{{1, 4}, {4, 4}, {8, 4}}}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_EQ(out->at("positions").shape(), (Dims{batch}));
    ASSERT_EQ(out->at("prefix").shape(), (Dims{1, batch}));
    ASSERT_EQ(out->at("y").shape(), (Dims{batch, 4}));
    for (int64_t i = 0; i < batch; ++i) {
      EXPECT_EQ(out->at("positions").data_as<int64_t>()[i], i);
      EXPECT_EQ(out->at("prefix").data_as<int64_t>()[i], 100 + i);
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(out->at("y").data_as<float>()[i * 4 + c], x[static_cast<size_t>(i * 4 + c)] + static_cast<float>(c + 1));
    }
  }
}

// A reshape copies a dim only at its own place and infers one: moving two dynamic dims is refused.
TEST(OnnxDynamicShapes, AReshapeThatMovesTwoDynamicDimsIsRefused) {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "seq", "8"});
  add_scalar_indices(m, {0, 1});
  add_int64_initializer(m, "hidden", {1}, {8});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  const std::string seq = size_of(m, "s", 1), batch = size_of(m, "s", 0);
  add_int_attribute(add_node(m, "Concat", {seq, batch, "hidden"}, {"swapped"}, "swapped"), "axis", 0);
  add_node(m, "Reshape", {"x", "swapped"}, {"y"}, "swap");
  add_output(m, "y");
  EXPECT_NE(import_error(m).find("ONNX node 'swap' (op Reshape, domain ai.onnx, opset 17): shape elements 0 and 1 (the "
                                 "dynamic dim 'seq' of input 'x' and the dynamic dim 'batch' of input 'x') are not the "
                                 "input's dims at their places"),
            std::string::npos)
      << import_error(m);
}

}  // namespace
}  // namespace tensoracle::testing
