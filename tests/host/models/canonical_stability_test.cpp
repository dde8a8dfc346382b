// The canonical form (and so the structural hash, part of every engine's cache key) of the
// example models and of a graph holding every op kind with non-default attributes, against
// goldens in tests/fixtures/graph/ recorded by this test before attributes became typed structs.
// A difference means cached engines of existing graphs would stop matching: either fix the
// change, or (for a deliberate format change) bump the canonical form's version line and
// re-record with TENSORACLE_WRITE_GOLDENS=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "host/models/state_dicts.h"
#include "tensoracle/network.h"
#include "tiny_transformer/tiny_transformer.h"
#include "tinynet/tinynet.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

void expect_golden(const Network& net, const std::string& name) {
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  auto text = canonical_form(net);
  ASSERT_TRUE(text.is_ok()) << text.status().to_string();
  const fs::path path = fs::path(TENSORACLE_FIXTURES_DIR) / "graph" / (name + ".canonical.txt");
  if (std::getenv("TENSORACLE_WRITE_GOLDENS") != nullptr) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << *text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "no golden " << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(*text, golden.str()) << name << ": the canonical form changed";
}

Weights fixture_weights(const std::string& example) {
  return Weights::open((fs::path(TENSORACLE_FIXTURES_DIR) / "examples" / example / "weights.safetensors").string())
      .value();
}

TEST(CanonicalStability, TinyNet) {
  Network net;
  ASSERT_TRUE(tinynet::define(net, fixture_weights("tinynet")).is_ok()) << net.status().to_string();
  expect_golden(net, "tinynet");
}

TEST(CanonicalStability, TinyTransformer) {
  Network net;
  ASSERT_TRUE(tiny_transformer::define(net, fixture_weights("tiny_transformer"), 2, 8).is_ok())
      << net.status().to_string();
  expect_golden(net, "tiny_transformer");
}

TEST(CanonicalStability, ResNet50Small) {
  testing::TempDir dir;
  Weights w = testing::write_weights(
      dir, testing::random_state_dict(testing::resnet_state_dict(testing::small_resnet()), 1), "resnet.safetensors");
  for (DataType precision : {DataType::kFloat32, DataType::kFloat16}) {
    Network net;
    ASSERT_TRUE(resnet50::define(net, w, {-1, 3, -1, -1}, precision, testing::small_resnet()).is_ok())
        << net.status().to_string();
    expect_golden(net, "resnet50_small_" + std::string(data_type_name(precision)));
  }
}

TEST(CanonicalStability, BertEncoderSmall) {
  testing::TempDir dir;
  Weights w = testing::write_weights(
      dir, testing::random_state_dict(testing::bert_state_dict(testing::small_bert()), 1), "bert.safetensors");
  for (DataType precision : {DataType::kFloat32, DataType::kBFloat16}) {
    Network net;
    ASSERT_TRUE(bert_encoder::define(net, w, -1, 6, precision, testing::small_bert()).is_ok())
        << net.status().to_string();
    expect_golden(net, "bert_small_" + std::string(data_type_name(precision)));
  }
}

HostArray filled(DataType type, const Dims& shape, double start) {
  HostArray a = HostArray::zeros(type, shape).value();
  std::vector<double> values(static_cast<size_t>(a.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = start + 0.25 * static_cast<double>(i % 7);
  convert_elements(DataType::kFloat64, values.data(), type, a.data(), values.size());
  return a;
}

// One layer of every op kind, each with attributes other than its defaults where it has any,
// all reaching an output so that all of them are in the canonical form.
Network every_op() {
  Network n;
  const DataType f32 = DataType::kFloat32;
  Tensor x = n.add_input("x", f32, {2, 4, 8, 8});
  Tensor w = n.add_constant(filled(f32, {6, 2, 3, 3}, -0.5));
  Tensor b = n.add_constant(filled(f32, {6}, 0.1));
  Tensor conv = n.convolution(x, w, b,
                              ConvolutionAttributes().set_stride({2, 1}).set_dilation({1, 2}).set_pre_padding({1, 2})
                                  .set_post_padding({0, 2}).set_groups(2));
  Tensor deconv = n.deconvolution(x, n.add_constant(filled(f32, {4, 3, 2, 2}, 0.2)), {},
                                  DeconvolutionAttributes().set_stride({2, 2}).set_padding({1, 0})
                                      .set_output_padding({1, 0}).set_dilation({1, 1}).set_groups(1));
  std::vector<Tensor> outs{conv, deconv};
  Tensor m = n.add_input("m", f32, {3, 5});
  outs.push_back(n.matmul(m, n.add_input("m2", f32, {4, 5}), MatMulAttributes().set_transpose_b(true)));
  outs.push_back(n.elementwise(m, m, ElementwiseAttributes().set_op(ElementwiseOp::kPow)));
  outs.push_back(n.elementwise(m, m, ElementwiseAttributes().set_op(ElementwiseOp::kLessEqual)));
  outs.push_back(n.unary(m, UnaryAttributes().set_op(UnaryOp::kRsqrt)));
  for (ActivationKind kind : {ActivationKind::kLeakyRelu, ActivationKind::kClip, ActivationKind::kHardSwish,
                              ActivationKind::kSoftplus, ActivationKind::kGeluTanh})
    outs.push_back(n.activation(m, ActivationAttributes().set_kind(kind)));
  outs.push_back(n.activation(m, ActivationAttributes().set_kind(ActivationKind::kClip).set_alpha(-2).set_beta(0.5)));
  outs.push_back(n.softmax(x, SoftmaxAttributes().set_axis(1)));
  outs.push_back(n.reduce(x, ReduceAttributes().set_op(ReduceOp::kMean).set_axes({1, -1}).set_keep_dims(true)));
  outs.push_back(n.reduce(x, ReduceAttributes().set_op(ReduceOp::kProd)));
  Tensor s8 = n.add_constant(filled(f32, {8}, 0.5));
  outs.push_back(n.layer_norm(x, s8, s8, LayerNormAttributes().set_axis(3).set_epsilon(1e-3)));
  outs.push_back(n.rms_norm(x, {}, RmsNormAttributes().set_axis(-1).set_epsilon(2e-6)));
  Tensor s4 = n.add_constant(filled(f32, {4}, 0.5));
  outs.push_back(n.group_norm(x, s4, s4, GroupNormAttributes().set_groups(2).set_epsilon(1e-4)));
  outs.push_back(n.instance_norm(x, s4, {}, InstanceNormAttributes().set_epsilon(3e-5)));
  outs.push_back(n.batch_norm(x, s4, s4, s4, n.add_constant(filled(f32, {4}, 1.0)),
                              BatchNormAttributes().set_epsilon(1e-3)));
  outs.push_back(n.pooling(x, PoolingAttributes().set_kind(PoolingKind::kAverage).set_window({3, 2}).set_padding({1, 1})
                                  .set_count_include_pad(false).set_ceil_mode(true)));
  outs.push_back(n.pooling(x, PoolingAttributes().set_window({2, 2})));
  outs.push_back(n.pooling(x, PoolingAttributes().set_global(true)));
  outs.push_back(n.resize(x, ResizeAttributes().set_mode(ResizeMode::kLinear)
                                 .set_coordinates(ResizeCoordinates::kHalfPixel).set_output_size({5, 11})));
  outs.push_back(n.resize(x, ResizeAttributes().set_scales({2.0, 1.5})));
  outs.push_back(n.reshape(x, ReshapeAttributes().set_shape({0, -1, 4})));
  outs.push_back(n.transpose(x, TransposeAttributes().set_perm({0, 2, 3, 1})));
  outs.push_back(n.concat({x, x}, ConcatAttributes().set_axis(-2)));
  outs.push_back(n.slice(x, SliceAttributes().set_start({1, 0, 7, 0}).set_size({1, 2, 3, 4}).set_stride({1, 2, -2, 1})));
  outs.push_back(n.slice(x, SliceAttributes().set_start({0, 0, 0, 0}).set_size({1, 1, 1, 1})));
  outs.push_back(n.pad(x, PadAttributes().set_pre({1, 2}).set_post({0, 3}).set_mode(PadMode::kReflect).set_value(0.5)));
  HostArray ids = HostArray::zeros(DataType::kInt64, {3}).value();
  ids.data_as<int64_t>()[1] = 2;
  outs.push_back(n.gather(x, n.add_constant(std::move(ids)), GatherAttributes().set_axis(2)));
  outs.push_back(n.grid_sample(x, n.add_constant(filled(f32, {2, 3, 3, 2}, -0.7)),
                               GridSampleAttributes().set_mode(GridSampleMode::kNearest)
                                   .set_padding(GridSamplePadding::kBorder).set_align_corners(true)));
  Tensor cond = n.elementwise(m, m, ElementwiseAttributes().set_op(ElementwiseOp::kGreater));
  outs.push_back(n.select(cond, m, m));
  TopKOutputs top = n.top_k(x, TopKAttributes().set_k(3).set_axis(1).set_largest(false));
  outs.push_back(top.values);
  outs.push_back(top.indices);
  Tensor q = n.add_input("q", f32, {2, 5, 4});
  outs.push_back(n.attention(q, q, q, {}, AttentionAttributes().set_causal(true).set_scale(0.25)));
  outs.push_back(n.attention(q, q, q, n.add_input("mask", DataType::kBool, {5, 5})));
  Tensor qx = n.quantize(x, s4, QuantizeAttributes().set_output_type(DataType::kFloat8E4M3).set_axis(1));
  outs.push_back(n.dequantize(qx, n.add_constant(filled(f32, {}, 0.5)),
                              DequantizeAttributes().set_output_type(DataType::kFloat16).set_axis(0)));
  outs.push_back(n.cast(m, DataType::kBFloat16));
  std::vector<Tensor> plugin = n.plugin(
      {x, m}, PluginAttributes().set_plugin("example.dcn").set_version("2").set_params("7b226b223a337d")  // {"k":3} in hex
                  .set_output_types({DataType::kFloat16, DataType::kInt32})
                  .set_output_shapes({Dims{2, 4}, Dims{3, -1, 1}}));
  outs.insert(outs.end(), plugin.begin(), plugin.end());
  outs.push_back(n.iota(x, IotaAttributes().set_axis(2)));
  for (size_t i = 0; i < outs.size(); ++i) n.mark_output(outs[i], "out" + std::to_string(i));
  return n;
}

TEST(CanonicalStability, EveryOpKind) {
  const Network net = every_op();
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  std::set<OpKind> kinds;
  for (size_t i = 0; i < net.num_nodes(); ++i) kinds.insert(net.node(i).kind);
  for (OpKind kind : all_op_kinds()) EXPECT_TRUE(kinds.count(kind)) << op_kind_name(kind);
  expect_golden(net, "every_op");
}

}  // namespace
}  // namespace tensoracle
