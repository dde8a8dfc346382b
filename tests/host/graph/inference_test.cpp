// Shape and type inference of every layer, including dynamic (-1) dims and the errors for bad
// attributes. Expected shapes follow the formulas in docs/ops.md.
#include <gtest/gtest.h>

#include <functional>

#include "tensoracle/network.h"

namespace tensoracle {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

Tensor constant(Network& net, DataType type, Dims shape) {
  return net.add_constant(HostArray::zeros(type, std::move(shape)).value());
}

struct InferCase {
  const char* name;
  std::function<Tensor(Network&)> build;
  const char* expected;  // TensorDesc::to_string(), or the fragment the error must contain
  bool error = false;
};

class Inference : public ::testing::TestWithParam<InferCase> {};

TEST_P(Inference, ProducesDocumentedShapeOrError) {
  const InferCase& c = GetParam();
  Network net;
  Tensor out = c.build(net);
  if (c.error) {
    EXPECT_FALSE(out.valid());
    EXPECT_NE(net.status().message().find(c.expected), std::string::npos) << net.status().message();
    return;
  }
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  EXPECT_EQ(net.tensor(out).desc.to_string(), c.expected);
}

Tensor image(Network& n, Dims d = {2, 4, 9, 10}) { return n.add_input("x", kF32, std::move(d)); }

const InferCase kCases[] = {
    {"conv2d_stride_pad_dilation",
     [](Network& n) {
       return n.convolution(image(n), constant(n, kF32, {6, 2, 3, 3}), constant(n, kF32, {6}),
                            ConvolutionAttributes().set_stride({2, 1}).set_padding({1, 2}).set_dilation({1, 2}).set_groups(2));
     },
     "fp32[2,6,5,10]"},
    {"conv1d", [](Network& n) { return n.convolution(n.add_input("x", kF32, {1, 3, 11}), constant(n, kF32, {5, 3, 4}), {}); },
     "fp32[1,5,8]"},
    {"conv3d_dynamic_batch_and_depth",
     [](Network& n) { return n.convolution(n.add_input("x", kF32, {-1, 2, -1, 5, 5}), constant(n, kF32, {4, 2, 3, 3, 3}), {}); },
     "fp32[-1,4,-1,3,3]"},
    {"conv_group_mismatch",
     [](Network& n) { return n.convolution(image(n), constant(n, kF32, {6, 3, 3, 3}), {}, ConvolutionAttributes().set_groups(2)); },
     "input channels 4", true},
    {"deconv_output_padding",
     [](Network& n) {
       return n.deconvolution(n.add_input("x", kF32, {1, 4, 5, 5}), constant(n, kF32, {4, 3, 3, 3}), {},
                              DeconvolutionAttributes().set_stride({2, 2}).set_padding({1, 1}).set_output_padding({1, 1}));
     },
     "fp32[1,3,10,10]"},
    {"matmul_broadcast_transpose",
     [](Network& n) {
       return n.matmul(n.add_input("a", kF32, {3, 1, 5, 4}), n.add_input("b", kF32, {2, 6, 5}),
                       MatMulAttributes().set_transpose_a(true).set_transpose_b(true));
     },
     "fp32[3,2,4,6]"},
    {"matmul_vector", [](Network& n) { return n.matmul(n.add_input("a", kF32, {5}), n.add_input("b", kF32, {2, 5, 3})); },
     "fp32[2,3]"},
    {"broadcast_dynamic",
     [](Network& n) { return n.add(n.add_input("a", kF32, {-1, 1, 4}), n.add_input("b", kF32, {3, 1})); },
     "fp32[-1,3,4]"},
    {"broadcast_mismatch", [](Network& n) { return n.add(n.add_input("a", kF32, {2, 3}), n.add_input("b", kF32, {4})); },
     "do not broadcast", true},
    {"comparison_gives_bool",
     [](Network& n) {
       return n.elementwise(n.add_input("a", kF32, {2}), n.add_input("b", kF32, {2}),
                            ElementwiseAttributes().set_op(ElementwiseOp::kLess));
     },
     "bool[2]"},
    {"reduce_negative_axes_keepdims",
     [](Network& n) {
       return n.reduce(image(n), ReduceAttributes().set_op(ReduceOp::kMean).set_axes({-1, 1}).set_keep_dims(true));
     },
     "fp32[2,1,9,1]"},
    {"reduce_all", [](Network& n) { return n.reduce(image(n), ReduceAttributes()); }, "fp32[]"},
    {"reduce_axis_out_of_range", [](Network& n) { return n.reduce(image(n), ReduceAttributes().set_axes({4})); },
     "axis 4 is out of range", true},
    {"max_pool_ceil_mode",
     [](Network& n) {
       return n.pooling(image(n), PoolingAttributes().set_window({3, 3}).set_stride({2, 2}).set_ceil_mode(true));
     },
     "fp32[2,4,4,5]"},
    {"global_pool", [](Network& n) { return n.pooling(image(n), PoolingAttributes().set_global(true)); }, "fp32[2,4,1,1]"},
    {"resize_scales",
     [](Network& n) { return n.resize(image(n), ResizeAttributes().set_scales({2.0, 1.5})); }, "fp32[2,4,18,15]"},
    {"reshape_zero_and_minus_one",
     [](Network& n) { return n.reshape(image(n), ReshapeAttributes().set_shape({0, -1, 5})); }, "fp32[2,72,5]"},
    {"reshape_dynamic_resolves_minus_one_beside_copied_dims",
     [](Network& n) { return n.reshape(n.add_input("x", kF32, {-1, 4, 6}), ReshapeAttributes().set_shape({0, -1})); },
     "fp32[-1,24]"},
    {"reshape_dynamic_keeps_unresolvable_minus_one",
     [](Network& n) { return n.reshape(n.add_input("x", kF32, {-1, 4, 6}), ReshapeAttributes().set_shape({-1, 6})); },
     "fp32[-1,6]"},
    {"reshape_count_mismatch",
     [](Network& n) { return n.reshape(image(n), ReshapeAttributes().set_shape({7, -1})); }, "720 elements", true},
    {"transpose", [](Network& n) { return n.transpose(image(n), TransposeAttributes().set_perm({0, 2, 3, 1})); },
     "fp32[2,9,10,4]"},
    {"transpose_not_a_permutation",
     [](Network& n) { return n.transpose(image(n), TransposeAttributes().set_perm({0, 2, 2, 1})); }, "not a permutation",
     true},
    {"concat_negative_axis",
     [](Network& n) {
       return n.concat({n.add_input("a", kF32, {2, 3}), n.add_input("b", kF32, {2, 5})}, ConcatAttributes().set_axis(-1));
     },
     "fp32[2,8]"},
    {"slice_negative_stride",
     [](Network& n) {
       return n.slice(image(n), SliceAttributes().set_start({0, 3, 8, 0}).set_size({2, 2, 3, 5}).set_stride({1, -1, -3, 2}));
     },
     "fp32[2,2,3,5]"},
    {"slice_out_of_bounds",
     [](Network& n) { return n.slice(image(n), SliceAttributes().set_start({0, 0, 0, 8}).set_size({2, 4, 9, 3})); },
     "outside [0, 10)", true},
    {"pad_trailing_dims",
     [](Network& n) { return n.pad(image(n), PadAttributes().set_pre({1, 2}).set_post({0, 3}).set_mode(PadMode::kReflect)); },
     "fp32[2,4,10,15]"},
    {"pad_reflect_too_wide",
     [](Network& n) { return n.pad(image(n), PadAttributes().set_pre({10}).set_post({0}).set_mode(PadMode::kReflect)); },
     "reflect padding 10", true},
    {"gather_embedding",
     [](Network& n) { return n.gather(constant(n, kF32, {100, 16}), n.add_input("ids", DataType::kInt64, {2, 7})); },
     "fp32[2,7,16]"},
    {"gather_float_indices",
     [](Network& n) { return n.gather(constant(n, kF32, {100, 16}), n.add_input("ids", kF32, {2})); }, "indices", true},
    {"grid_sample",
     [](Network& n) { return n.grid_sample(image(n), n.add_input("g", kF32, {2, 3, 5, 2})); }, "fp32[2,4,3,5]"},
    {"select",
     [](Network& n) {
       return n.select(n.add_input("c", DataType::kBool, {3, 1}), n.add_input("a", kF32, {4}), n.add_input("b", kF32, {1}));
     },
     "fp32[3,4]"},
    {"top_k_indices_are_int64",
     [](Network& n) { return n.top_k(image(n), TopKAttributes().set_k(3).set_axis(1)).indices; }, "int64[2,3,9,10]"},
    {"top_k_too_large", [](Network& n) { return n.top_k(image(n), TopKAttributes().set_k(11)).values; }, "k 11", true},
    {"attention_broadcast_mask",
     [](Network& n) {
       return n.attention(n.add_input("q", kF32, {2, 4, 5, 8}), n.add_input("k", kF32, {2, 4, 7, 8}),
                          n.add_input("v", kF32, {2, 4, 7, 3}), n.add_input("m", DataType::kBool, {5, 7}));
     },
     "fp32[2,4,5,3]"},
    {"attention_head_dim_mismatch",
     [](Network& n) {
       return n.attention(n.add_input("q", kF32, {5, 8}), n.add_input("k", kF32, {7, 6}), n.add_input("v", kF32, {7, 3}), {});
     },
     "head dim", true},
    {"quantize_per_channel",
     [](Network& n) {
       return n.quantize(image(n), constant(n, kF32, {4}), QuantizeAttributes().set_output_type(DataType::kFloat8E4M3));
     },
     "fp8e4m3[2,4,9,10]"},
    {"quantize_bad_scale", [](Network& n) { return n.quantize(image(n), constant(n, kF32, {3})); }, "scale", true},
    {"dequantize",
     [](Network& n) {
       return n.dequantize(n.add_input("q", DataType::kInt8, {4, 2}), constant(n, kF32, {}),
                           DequantizeAttributes().set_output_type(DataType::kFloat16));
     },
     "fp16[4,2]"},
    {"layer_norm_bad_scale",
     [](Network& n) { return n.layer_norm(image(n), constant(n, kF32, {9}), {}); }, "must have shape [10]", true},
    {"group_norm_groups",
     [](Network& n) { return n.group_norm(image(n), {}, {}, GroupNormAttributes().set_groups(3)); }, "groups 3", true},
    {"batch_norm_needs_statistics",
     [](Network& n) {
       Tensor c = constant(n, kF32, {4});
       return n.batch_norm(image(n), c, c, c, {});
     },
     "required input", true},
    {"plugin_declared_outputs",
     [](Network& n) {
       return n.plugin({image(n)}, PluginAttributes().set_plugin("dcn").set_output_types({DataType::kFloat16}).set_output_shapes({{2, 8}}))[0];
     },
     "fp16[2,8]"},
    // Every axis attribute is checked when the layer is defined (backends never see a bad one).
    {"softmax_axis_out_of_range", [](Network& n) { return n.softmax(image(n), SoftmaxAttributes().set_axis(4)); },
     "layer 'softmax_0' (softmax): axis 4 is out of range", true},
    {"softmax_negative_axis_out_of_range",
     [](Network& n) { return n.softmax(image(n), SoftmaxAttributes().set_axis(-5)); }, "axis -5 is out of range", true},
    {"layer_norm_axis_out_of_range",
     [](Network& n) { return n.layer_norm(image(n), {}, {}, LayerNormAttributes().set_axis(4)); }, "axis 4 is out of range", true},
    {"rms_norm_axis_out_of_range",
     [](Network& n) { return n.rms_norm(image(n), {}, RmsNormAttributes().set_axis(-7)); }, "axis -7 is out of range", true},
    {"concat_axis_out_of_range",
     [](Network& n) { return n.concat({image(n)}, ConcatAttributes().set_axis(4)); }, "axis 4 is out of range", true},
    {"gather_axis_out_of_range",
     [](Network& n) { return n.gather(image(n), constant(n, DataType::kInt64, {2}), GatherAttributes().set_axis(-5)); },
     "axis -5 is out of range", true},
    {"top_k_axis_out_of_range",
     [](Network& n) { return n.top_k(image(n), TopKAttributes().set_axis(9)).values; }, "axis 9 is out of range", true},
    {"quantize_per_channel_axis_out_of_range",
     [](Network& n) { return n.quantize(image(n), constant(n, kF32, {4}), QuantizeAttributes().set_axis(4)); },
     "axis 4 is out of range", true},
    {"dequantize_per_channel_axis_out_of_range",
     [](Network& n) {
       return n.dequantize(n.add_input("q", DataType::kInt8, {4, 2}), constant(n, kF32, {4}), DequantizeAttributes().set_axis(-3));
     },
     "axis -3 is out of range", true},
    {"reduce_axis_twice",
     [](Network& n) { return n.reduce(image(n), ReduceAttributes().set_axes({1, -3})); }, "name dim 1 twice", true},
};

INSTANTIATE_TEST_SUITE_P(Layers, Inference, ::testing::ValuesIn(kCases),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

}  // namespace
}  // namespace tensoracle
