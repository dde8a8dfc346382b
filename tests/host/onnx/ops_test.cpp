// The Q/DQ import (int8 and fp8 e4m3fn, per-tensor and per-axis scales, zero points) and the
// einsum patterns of attention exports, each imported and run on the cpu backend against values
// worked out here; the node tests (tests/onnx) cover every op against onnx's reference.
#include <gtest/gtest.h>

#include <cmath>

#include "host/onnx/onnx_test_models.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {
namespace {

void set_axis(onnx::NodeProto* node, int64_t axis) { add_int_attribute(node, "axis", axis); }

// q = QuantizeLinear(x, scale, zero of `type`), y = DequantizeLinear(q, scale, zero): both outputs.
onnx::ModelProto qdq_model(int32_t type, const std::vector<int64_t>& scale_dims, const std::vector<float>& scales,
                           int64_t axis) {
  onnx::ModelProto m = onnx_model(19);
  add_input(m, "x", {2, 3});
  add_initializer(m, "scale", scale_dims, scales);
  add_raw_initializer(m, "zero", type, scale_dims, std::string(scales.size(), '\0'));
  set_axis(add_node(m, "QuantizeLinear", {"x", "scale", "zero"}, {"q"}, "quantize"), axis);
  set_axis(add_node(m, "DequantizeLinear", {"q", "scale", "zero"}, {"y"}, "dequantize"), axis);
  add_output(m, "q");
  add_output(m, "y");
  return m;
}

Result<NamedArrays> run_model(const onnx::ModelProto& m, const NamedArrayViews& inputs) {
  TempDir dir;
  TO_ASSIGN_OR_RETURN(const ImportedModel model, network_from_onnx(write_model(dir, m)));
  return run_imported(model, inputs);
}

const float kX[6] = {0.2f, -1.3f, 2.5f, 3.5f, 100.0f, -0.74f};

TEST(OnnxQuantize, Int8PerTensorRoundsHalfToEvenAndSaturates) {
  auto out = run_model(qdq_model(onnx::TensorProto::INT8, {}, {0.5f}, 1), {{"x", ArrayView{DataType::kFloat32, Dims{2, 3}, kX}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->at("q").dtype(), DataType::kInt8);
  // x / 0.5 = 0.4, -2.6, 5, 7, 200 (saturates to 127), -1.48.
  const int8_t expected_q[6] = {0, -3, 5, 7, 127, -1};
  const float expected_y[6] = {0.0f, -1.5f, 2.5f, 3.5f, 63.5f, -0.5f};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out->at("q").data_as<int8_t>()[i], expected_q[i]) << i;
    EXPECT_EQ(out->at("y").data_as<float>()[i], expected_y[i]) << i;
  }
}

TEST(OnnxQuantize, Int8PerAxisScalesEachColumn) {
  auto out = run_model(qdq_model(onnx::TensorProto::INT8, {3}, {0.1f, 1.0f, 2.0f}, 1),
                       {{"x", ArrayView{DataType::kFloat32, Dims{2, 3}, kX}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  // Columns scaled by 0.1, 1, 2: 2, -1.3 -> -1, 1.25 -> 1; 35, 100, -0.37 -> 0.
  const int8_t expected_q[6] = {2, -1, 1, 35, 100, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out->at("q").data_as<int8_t>()[i], expected_q[i]) << i;
  EXPECT_FLOAT_EQ(out->at("y").data_as<float>()[3], 3.5f);
  EXPECT_FLOAT_EQ(out->at("y").data_as<float>()[2], 2.0f);
}

TEST(OnnxQuantize, Fp8E4m3fnSaturatesAt448) {
  auto out = run_model(qdq_model(onnx::TensorProto::FLOAT8E4M3FN, {}, {0.125f}, 1),
                       {{"x", ArrayView{DataType::kFloat32, Dims{2, 3}, kX}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->at("q").dtype(), DataType::kFloat8E4M3);
  for (int i = 0; i < 6; ++i) {
    const float scaled = kX[i] / 0.125f;
    const uint8_t code = out->at("q").data_as<uint8_t>()[i];
    EXPECT_EQ(code, float_to_fp8e4m3(scaled, Fp8Overflow::kSaturate)) << i;
    EXPECT_EQ(out->at("y").data_as<float>()[i], fp8e4m3_to_float(code) * 0.125f) << i;
  }
  EXPECT_EQ(fp8e4m3_to_float(out->at("q").data_as<uint8_t>()[4]), 448.0f);  // 800 saturates
}

TEST(OnnxQuantize, WhatTheSymmetricLayersCannotExpressIsRefused) {
  TempDir dir;
  onnx::ModelProto nonzero = qdq_model(onnx::TensorProto::INT8, {}, {0.5f}, 1);
  nonzero.mutable_graph()->mutable_initializer(1)->set_raw_data(std::string(1, '\3'));
  auto refused = network_from_onnx(write_model(dir, nonzero));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("ONNX node 'quantize' (op QuantizeLinear, domain ai.onnx, opset 19): a "
                                            "non-zero zero point is not supported"),
            std::string::npos)
      << refused.status().message();
  onnx::ModelProto uint8 = qdq_model(onnx::TensorProto::INT8, {}, {0.5f}, 1);
  uint8.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  auto default_type = network_from_onnx(write_model(dir, uint8, "uint8.onnx"));
  ASSERT_FALSE(default_type.is_ok());
  EXPECT_NE(default_type.status().message().find("without a zero point the quantized type is uint8"), std::string::npos)
      << default_type.status().message();
  onnx::ModelProto uint8_zero = qdq_model(onnx::TensorProto::UINT8, {}, {0.5f}, 1);
  auto unsigned_zero = network_from_onnx(write_model(dir, uint8_zero, "uint8_zero.onnx"));
  ASSERT_FALSE(unsigned_zero.is_ok());
  EXPECT_NE(unsigned_zero.status().message().find("quantized type uint8 is not supported"), std::string::npos)
      << unsigned_zero.status().message();
}

// Attention as exporters write it with einsum: scores = einsum("bhid,bhjd->bhij", q, k), then
// out = einsum("bhij,bhjd->bhid", scores, v).
TEST(OnnxEinsum, TheAttentionPatternsAreMatrixProducts) {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "q", {1, 2, 3, 4});
  add_input(m, "k", {1, 2, 5, 4});
  add_input(m, "v", {1, 2, 5, 4});
  auto equation = [](onnx::NodeProto* node, const std::string& text) { add_string_attribute(node, "equation", text); };
  equation(add_node(m, "Einsum", {"q", "k"}, {"scores"}, "scores"), "bhid,bhjd->bhij");
  equation(add_node(m, "Einsum", {"scores", "v"}, {"out"}, "out"), "bhij, bhjd -> bhid");
  add_output(m, "scores");
  add_output(m, "out");
  std::vector<float> q(24), k(40), v(40);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(static_cast<float>(i));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
  auto out = run_model(m, {{"q", ArrayView{DataType::kFloat32, Dims{1, 2, 3, 4}, q.data()}},
                           {"k", ArrayView{DataType::kFloat32, Dims{1, 2, 5, 4}, k.data()}},
                           {"v", ArrayView{DataType::kFloat32, Dims{1, 2, 5, 4}, v.data()}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->at("scores").shape(), (Dims{1, 2, 3, 5}));
  ASSERT_EQ(out->at("out").shape(), (Dims{1, 2, 3, 4}));
  const float* scores = out->at("scores").data_as<float>();
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        double dot = 0;
        for (int d = 0; d < 4; ++d) dot += static_cast<double>(q[(h * 3 + i) * 4 + d]) * k[(h * 5 + j) * 4 + d];
        EXPECT_NEAR(scores[(h * 3 + i) * 5 + j], dot, 1e-5) << h << i << j;
      }
      for (int d = 0; d < 4; ++d) {
        double sum = 0;
        for (int j = 0; j < 5; ++j) sum += static_cast<double>(scores[(h * 3 + i) * 5 + j]) * v[(h * 5 + j) * 4 + d];
        EXPECT_NEAR(out->at("out").data_as<float>()[(h * 3 + i) * 4 + d], sum, 1e-4) << h << i << d;
      }
    }
  }
}

}  // namespace
}  // namespace tensoracle::testing
