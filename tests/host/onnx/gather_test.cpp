// GatherElements and GatherND (ops_gather_elements.cpp): one gather of the flattened data by
// exact int64 offsets. Values against the ONNX definitions worked out here (the node tests cover
// the static cases against onnx's reference), GatherND over a dynamic batch and sequence at two
// sizes, and what the offsets cannot express refused naming the node and the reason.
#include <gtest/gtest.h>

#include "host/onnx/onnx_test_models.h"

namespace tensoracle::testing {
namespace {

std::string import_error(const onnx::ModelProto& m) {
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  return model.is_ok() ? "imported" : model.status().message();
}

// mask [batch, seq] read at (b, s) for every b and s: torch's mask[batch_idx, kv_idx] as the
// dynamo exporter writes it (GatherND with index pairs), built here from constants of the
// largest size and sliced by Range to the run's sizes.
TEST(OnnxGather, GatherNdOverADynamicBatchAndSequenceReadsEveryPair) {
  onnx::ModelProto m = onnx_model(18);
  add_symbolic_input(m, "mask", {"batch", "seq"});
  add_node(m, "Shape", {"mask"}, {"s"}, "shape");
  add_int64_initializer(m, "i0", {}, {0});
  add_int64_initializer(m, "i1", {}, {1});
  add_int64_initializer(m, "zero", {}, {0});
  add_int64_initializer(m, "one", {}, {1});
  add_int64_initializer(m, "b_axes", {2}, {1, 2});  // [batch] -> [batch, 1, 1]
  add_int64_initializer(m, "s_axes", {2}, {0, 2});  // [seq] -> [1, seq, 1]
  add_node(m, "Gather", {"s", "i0"}, {"nb"}, "nb");
  add_node(m, "Gather", {"s", "i1"}, {"ns"}, "ns");
  add_node(m, "Range", {"zero", "nb", "one"}, {"b"}, "b");
  add_node(m, "Range", {"zero", "ns", "one"}, {"q"}, "q");
  add_node(m, "Unsqueeze", {"b", "b_axes"}, {"b3"}, "b3");
  add_node(m, "Unsqueeze", {"q", "s_axes"}, {"q3"}, "q3");
  // Each index broadcast to [batch, seq, 1] by adding the other one times 0.
  add_node(m, "Mul", {"q3", "zero"}, {"qz"}, "qz");
  add_node(m, "Mul", {"b3", "zero"}, {"bz"}, "bz");
  add_node(m, "Add", {"b3", "qz"}, {"b_full"}, "b_full");
  add_node(m, "Add", {"q3", "bz"}, {"q_full"}, "q_full");
  add_int_attribute(add_node(m, "Concat", {"b_full", "q_full"}, {"pairs"}, "pairs"), "axis", -1);
  add_node(m, "GatherND", {"mask", "pairs"}, {"y"}, "gather");
  add_output(m, "y");
  TempDir dir;
  auto model = network_from_onnx(write_model(dir, m));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  for (const Dims& shape : {Dims{2, 3}, Dims{3, 5}}) {
    std::vector<float> mask(static_cast<size_t>(*shape.element_count()));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<float>(i * 7 % 11);
    auto out = run_imported(*model, {{"mask", ArrayView{DataType::kFloat32, shape, mask.data()}}},
                            {{"mask", ShapeRange{{1, 1}, {2, 4}, {4, 8}}}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_EQ(out->at("y").shape(), shape);
    for (size_t i = 0; i < mask.size(); ++i) EXPECT_EQ(out->at("y").data_as<float>()[i], mask[i]) << i;
  }
}

TEST(OnnxGather, WhatTheOffsetsCannotExpressIsRefusedNamingIt) {
  onnx::ModelProto nd = onnx_model(13);
  add_input(nd, "x", {2, 3});
  add_int64_initializer(nd, "pairs", {2, 1}, {0, 1});
  add_int_attribute(add_node(nd, "GatherND", {"x", "pairs"}, {"y"}, "by_batch"), "batch_dims", 1);
  add_output(nd, "y");
  EXPECT_NE(import_error(nd).find("ONNX node 'by_batch' (op GatherND, domain ai.onnx, opset 13): batch_dims 1 is not "
                                  "supported (only 0)"),
            std::string::npos);

  onnx::ModelProto dynamic_data = onnx_model(13);
  add_symbolic_input(dynamic_data, "x", {"batch", "3"});
  add_int64_initializer(dynamic_data, "index", {1, 1}, {0});
  add_int_attribute(add_node(dynamic_data, "GatherElements", {"x", "index"}, {"y"}, "pick"), "axis", 1);
  add_output(dynamic_data, "y");
  EXPECT_NE(import_error(dynamic_data).find("ONNX node 'pick' (op GatherElements, domain ai.onnx, opset 13): dim 0 of "
                                            "input 0 (data) is dynamic"),
            std::string::npos);

  onnx::ModelProto dynamic_indices = onnx_model(13);
  add_input(dynamic_indices, "x", {4, 3});
  add_value(dynamic_indices.mutable_graph()->mutable_input(), "index", {-1, 2}, onnx::TensorProto::INT64);
  add_int_attribute(add_node(dynamic_indices, "GatherElements", {"x", "index"}, {"y"}, "pick"), "axis", 1);
  add_output(dynamic_indices, "y");
  EXPECT_NE(import_error(dynamic_indices).find("ONNX node 'pick' (op GatherElements, domain ai.onnx, opset 13): dim 0 "
                                               "of input 1 (indices) is dynamic; only the gathered axis 1 may be"),
            std::string::npos);
}

}  // namespace
}  // namespace tensoracle::testing
