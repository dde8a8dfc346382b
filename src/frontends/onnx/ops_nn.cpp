// Compute ops: MatMul, Gemm, Conv, pooling, the normalizations, Softmax, the reductions, TopK.
#include "frontends/onnx/op_table.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::onnx_import {
namespace {

Status convert_matmul(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor a, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor b, ctx.input(1));
  return ctx.set_output(0, ctx.net().matmul(a, b, MatMulAttributes().set_name(ctx.layer_name())));
}

// Y = alpha * A' B' + beta * C.
Status convert_gemm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.0));
  TO_ASSIGN_OR_RETURN(const double beta, ctx.attribute_float("beta", 1.0));
  TO_ASSIGN_OR_RETURN(const int64_t trans_a, ctx.attribute_int("transA", 0));
  TO_ASSIGN_OR_RETURN(const int64_t trans_b, ctx.attribute_int("transB", 0));
  TO_ASSIGN_OR_RETURN(const Tensor a, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor b, ctx.input(1));
  if (ctx.desc(a).shape.rank() != 2 || ctx.desc(b).shape.rank() != 2)
    return ctx.invalid("A is {} and B is {}; Gemm takes matrices", ctx.desc(a).to_string(), ctx.desc(b).to_string());
  Network& net = ctx.net();
  const std::string& name = ctx.layer_name();
  Tensor y = net.matmul(a, b, MatMulAttributes().set_transpose_a(trans_a != 0).set_transpose_b(trans_b != 0).set_name(name));
  const DataType dtype = ctx.desc(a).dtype;
  if (alpha != 1.0) {
    TO_ASSIGN_OR_RETURN(const Tensor scale, float_scalar(ctx, dtype, alpha, name + "/alpha"));
    y = net.elementwise(y, scale, ElementwiseAttributes().set_op(ElementwiseOp::kMul).set_name(name + "/times_alpha"));
  }
  if (ctx.has_input(2) && beta != 0.0) {
    TO_ASSIGN_OR_RETURN(Tensor c, ctx.input(2));
    if (beta != 1.0) {
      TO_ASSIGN_OR_RETURN(const Tensor scale, float_scalar(ctx, dtype, beta, name + "/beta"));
      c = net.elementwise(c, scale, ElementwiseAttributes().set_op(ElementwiseOp::kMul).set_name(name + "/times_beta"));
    }
    y = net.elementwise(y, c, ElementwiseAttributes().set_op(ElementwiseOp::kAdd).set_name(name + "/plus_c"));
  }
  return ctx.set_output(0, y);
}

// The spatial attributes shared by Conv and the pools.
struct Window {
  std::vector<int64_t> kernel, stride, dilation, pre, post;
};

// Reads kernel_shape, strides, dilations, pads and auto_pad for `n` spatial dims of `x`.
Result<Window> read_window(NodeContext& ctx, Tensor x, size_t n, std::vector<int64_t> kernel, bool has_dilations) {
  Window w;
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_attr, ctx.attribute_ints("kernel_shape"));
  if (!kernel_attr.empty() && !kernel.empty() && kernel_attr != kernel)
    return ctx.invalid("kernel_shape [{}] differs from the weight's [{}]", fmt::join(kernel_attr, ","), fmt::join(kernel, ","));
  w.kernel = kernel.empty() ? kernel_attr : kernel;
  if (w.kernel.size() != n) return ctx.invalid("kernel_shape has {} dims, the input {} spatial dims", w.kernel.size(), n);
  TO_ASSIGN_OR_RETURN(w.stride, ctx.attribute_ints("strides"));
  if (w.stride.empty()) w.stride.assign(n, 1);
  w.dilation.assign(n, 1);
  if (has_dilations || ctx.has_attribute("dilations")) {
    TO_ASSIGN_OR_RETURN(std::vector<int64_t> d, ctx.attribute_ints("dilations"));
    if (!d.empty()) w.dilation = d;
  }
  if (w.stride.size() != n || w.dilation.size() != n)
    return ctx.invalid("strides [{}] or dilations [{}] do not have {} values", fmt::join(w.stride, ","),
                       fmt::join(w.dilation, ","), n);
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ctx.attribute_ints("pads"));
  TO_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.attribute_string("auto_pad", "NOTSET"));
  w.pre.assign(n, 0);
  w.post.assign(n, 0);
  if (auto_pad == "NOTSET") {
    if (!pads.empty()) {
      if (pads.size() != 2 * n) return ctx.invalid("pads has {} values, expected {}", pads.size(), 2 * n);
      w.pre.assign(pads.begin(), pads.begin() + static_cast<long>(n));
      w.post.assign(pads.begin() + static_cast<long>(n), pads.end());
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const Dims shape = ctx.desc(x).shape;
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = shape[shape.rank() - n + i];
      if (in < 0) return ctx.refuse("auto_pad {} on a dynamic spatial dim is not supported", auto_pad);
      const int64_t out = (in + w.stride[i] - 1) / w.stride[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + (w.kernel[i] - 1) * w.dilation[i] + 1 - in);
      const int64_t small = total / 2;
      w.pre[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.post[i] = total - w.pre[i];
    }
  } else if (auto_pad != "VALID") {
    return ctx.invalid("auto_pad is '{}', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad);
  }
  for (int64_t p : w.pre)
    if (p < 0) return ctx.invalid("negative padding {}", p);
  for (int64_t p : w.post)
    if (p < 0) return ctx.invalid("negative padding {}", p);
  return w;
}

size_t spatial_rank(NodeContext& ctx, Tensor x) {
  const size_t rank = ctx.desc(x).shape.rank();
  return rank >= 2 ? rank - 2 : 0;
}

Status convert_conv(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor weight, ctx.input(1));
  TO_ASSIGN_OR_RETURN(const Tensor bias, ctx.optional_input(2));
  const size_t n = spatial_rank(ctx, x);
  const Dims wshape = ctx.desc(weight).shape;
  if (wshape.rank() != n + 2) return ctx.invalid("weight {} for an input {}", ctx.desc(weight).to_string(), ctx.desc(x).to_string());
  std::vector<int64_t> kernel(wshape.begin() + 2, wshape.end());
  for (int64_t k : kernel)
    if (k < 0) return ctx.refuse("a weight with dynamic kernel dims is not supported");
  TO_ASSIGN_OR_RETURN(const Window w, read_window(ctx, x, n, kernel, true));
  TO_ASSIGN_OR_RETURN(const int64_t group, ctx.attribute_int("group", 1));
  return ctx.set_output(0, ctx.net().convolution(x, weight, bias,
                                                 ConvolutionAttributes()
                                                     .set_stride(w.stride)
                                                     .set_dilation(w.dilation)
                                                     .set_pre_padding(w.pre)
                                                     .set_post_padding(w.post)
                                                     .set_groups(group)
                                                     .set_name(ctx.layer_name())));
}

// ConvTranspose on [N, C, H, W] (the deconvolution layer is 2D). The padding comes from `pads`,
// or from `output_shape` / auto_pad SAME_* (ONNX's rule: the total padding split with the odd
// one at the end for SAME_UPPER, at the start otherwise).
Status convert_conv_transpose(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor weight, ctx.input(1));
  TO_ASSIGN_OR_RETURN(const Tensor bias, ctx.optional_input(2));
  const Dims xs = ctx.desc(x).shape;
  const Dims ws = ctx.desc(weight).shape;
  if (xs.rank() != 4 || ws.rank() != 4)
    return ctx.refuse("only 2D ConvTranspose is supported (input {}, weight {})", ctx.desc(x).to_string(),
                      ctx.desc(weight).to_string());
  const size_t n = 2;
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ctx.attribute_ints("kernel_shape"));
  const std::vector<int64_t> weight_kernel{ws[2], ws[3]};
  if (!kernel.empty() && kernel != weight_kernel)
    return ctx.invalid("kernel_shape [{}] differs from the weight's [{}]", fmt::join(kernel, ","), fmt::join(weight_kernel, ","));
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> stride, ctx.attribute_ints("strides"));
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, ctx.attribute_ints("dilations"));
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding, ctx.attribute_ints("output_padding"));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ctx.attribute_ints("pads"));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> output_shape, ctx.attribute_ints("output_shape"));
  TO_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.attribute_string("auto_pad", "NOTSET"));
  TO_ASSIGN_OR_RETURN(const int64_t group, ctx.attribute_int("group", 1));
  stride = per_dim(stride, n, 1);
  dilation = per_dim(dilation, n, 1);
  output_padding = per_dim(output_padding, n, 0);
  if (stride.size() != n || dilation.size() != n || output_padding.size() != n)
    return ctx.invalid("strides, dilations and output_padding must have {} values", n);
  std::vector<int64_t> pre(n, 0), post(n, 0);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!output_shape.empty() || same) {
    std::vector<int64_t> wanted = output_shape;
    if (wanted.size() == n + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = xs[2 + i];
      if (in < 0) return ctx.refuse("output_shape or auto_pad {} on a dynamic spatial dim is not supported", auto_pad);
      if (wanted.size() < n) wanted.push_back(in * stride[i]);
      const int64_t total = stride[i] * (in - 1) + output_padding[i] + (weight_kernel[i] - 1) * dilation[i] + 1 - wanted[i];
      if (total < 0) return ctx.refuse("output_shape [{}] needs extra output padding; not supported", fmt::join(wanted, ","));
      const int64_t start = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pre[i] = start;
      post[i] = total - start;
    }
  } else if (auto_pad == "NOTSET") {
    if (!pads.empty()) {
      if (pads.size() != 2 * n) return ctx.invalid("pads has {} values, expected {}", pads.size(), 2 * n);
      pre.assign(pads.begin(), pads.begin() + static_cast<long>(n));
      post.assign(pads.begin() + static_cast<long>(n), pads.end());
    }
  } else if (auto_pad != "VALID") {
    return ctx.invalid("auto_pad is '{}', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad);
  }
  return ctx.set_output(0, ctx.net().deconvolution(x, weight, bias,
                                                   DeconvolutionAttributes()
                                                       .set_stride(stride)
                                                       .set_dilation(dilation)
                                                       .set_pre_padding(pre)
                                                       .set_post_padding(post)
                                                       .set_output_padding(output_padding)
                                                       .set_groups(group)
                                                       .set_name(ctx.layer_name())));
}

Status convert_pool(NodeContext& ctx, PoolingKind kind) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_RETURN_IF_ERROR(ctx.only_outputs(1));
  const size_t n = spatial_rank(ctx, x);
  TO_ASSIGN_OR_RETURN(const Window w, read_window(ctx, x, n, {}, kind == PoolingKind::kMax));
  for (int64_t d : w.dilation)
    if (d != 1) return ctx.refuse("dilations [{}] are not supported (only 1)", fmt::join(w.dilation, ","));
  TO_ASSIGN_OR_RETURN(const int64_t ceil_mode, ctx.attribute_int("ceil_mode", 0));
  PoolingAttributes attrs;
  attrs.set_kind(kind).set_window(w.kernel).set_stride(w.stride).set_pre_padding(w.pre).set_post_padding(w.post);
  attrs.set_ceil_mode(ceil_mode != 0).set_name(ctx.layer_name());
  if (kind == PoolingKind::kMax) {
    TO_ASSIGN_OR_RETURN(const int64_t storage_order, ctx.attribute_int("storage_order", 0));
    if (storage_order != 0) return ctx.refuse("storage_order {} is not supported (only 0)", storage_order);
  } else {
    TO_ASSIGN_OR_RETURN(const int64_t count_include_pad, ctx.attribute_int("count_include_pad", 0));
    attrs.set_count_include_pad(count_include_pad != 0);
  }
  return ctx.set_output(0, ctx.net().pooling(x, attrs));
}

Status convert_global_pool(NodeContext& ctx, PoolingKind kind) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, ctx.net().pooling(x, PoolingAttributes().set_kind(kind).set_global(true).set_name(ctx.layer_name())));
}

Status convert_batch_norm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double epsilon, ctx.attribute_float("epsilon", 1e-5));
  TO_ASSIGN_OR_RETURN(const double momentum, ctx.attribute_float("momentum", 0.9));
  (void)momentum;  // a training parameter
  TO_ASSIGN_OR_RETURN(const int64_t training, ctx.attribute_int("training_mode", 0));
  if (training != 0) return ctx.refuse("training_mode 1 is not supported (inference only)");
  TO_RETURN_IF_ERROR(ctx.only_outputs(1));
  Tensor in[5];
  for (int i = 0; i < 5; ++i) {
    TO_ASSIGN_OR_RETURN(in[i], ctx.input(i));
  }
  return ctx.set_output(0, ctx.net().batch_norm(in[0], in[1], in[2], in[3], in[4],
                                                BatchNormAttributes().set_epsilon(epsilon).set_name(ctx.layer_name())));
}

Status convert_layer_norm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", -1));
  TO_ASSIGN_OR_RETURN(const double epsilon, ctx.attribute_float("epsilon", 1e-5));
  TO_ASSIGN_OR_RETURN(const int64_t stash_type, ctx.attribute_int("stash_type", 1));
  (void)stash_type;  // the layer computes in fp64 whatever the stash type
  TO_RETURN_IF_ERROR(ctx.only_outputs(1));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor scale, ctx.input(1));
  TO_ASSIGN_OR_RETURN(const Tensor bias, ctx.optional_input(2));
  return ctx.set_output(0, ctx.net().layer_norm(x, scale, bias,
                                                LayerNormAttributes().set_axis(axis).set_epsilon(epsilon).set_name(ctx.layer_name())));
}

Status convert_instance_norm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double epsilon, ctx.attribute_float("epsilon", 1e-5));
  Tensor in[3];
  for (int i = 0; i < 3; ++i) {
    TO_ASSIGN_OR_RETURN(in[i], ctx.input(i));
  }
  return ctx.set_output(0, ctx.net().instance_norm(in[0], in[1], in[2],
                                                   InstanceNormAttributes().set_epsilon(epsilon).set_name(ctx.layer_name())));
}

Status convert_softmax(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", -1));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, ctx.net().softmax(x, SoftmaxAttributes().set_axis(axis).set_name(ctx.layer_name())));
}

}  // namespace

Result<std::optional<ReduceAttributes>> reduce_attributes(NodeContext& ctx, ReduceOp op) {
  TO_ASSIGN_OR_RETURN(const int64_t keep_dims, ctx.attribute_int("keepdims", 1));
  TO_ASSIGN_OR_RETURN(const int64_t noop_with_empty_axes, ctx.attribute_int("noop_with_empty_axes", 0));
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    TO_ASSIGN_OR_RETURN(axes, ctx.int_list_input(1));
  } else {
    TO_ASSIGN_OR_RETURN(axes, ctx.attribute_ints("axes"));
  }
  if (axes.empty() && noop_with_empty_axes != 0) return std::optional<ReduceAttributes>{};
  return std::optional<ReduceAttributes>{ReduceAttributes().set_op(op).set_axes(axes).set_keep_dims(keep_dims != 0)};
}

namespace {

Status convert_reduce(NodeContext& ctx, ReduceOp op) {
  TO_ASSIGN_OR_RETURN(const std::optional<ReduceAttributes> attrs, reduce_attributes(ctx, op));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  if (!attrs) return ctx.set_output(0, x);
  ReduceAttributes named = *attrs;
  return ctx.set_output(0, ctx.net().reduce(x, named.set_name(ctx.layer_name())));
}

Status convert_top_k(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", -1));
  TO_ASSIGN_OR_RETURN(const int64_t largest, ctx.attribute_int("largest", 1));
  TO_ASSIGN_OR_RETURN(const int64_t sorted, ctx.attribute_int("sorted", 1));
  if (sorted != 1) return ctx.refuse("sorted {} is not supported (only 1)", sorted);
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> k, ctx.int_list_input(1));
  if (k.size() != 1) return ctx.invalid("K has {} values, expected 1", k.size());
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const TopKOutputs out =
      ctx.net().top_k(x, TopKAttributes().set_k(k[0]).set_axis(axis).set_largest(largest != 0).set_name(ctx.layer_name()));
  TO_RETURN_IF_ERROR(ctx.set_output(0, out.values));
  return ctx.set_output(1, out.indices);
}

// ArgMax/ArgMin: the indices of a top-1 (ties keep the lower index: select_last_index 0).
Status convert_arg(NodeContext& ctx, bool largest) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", 0));
  TO_ASSIGN_OR_RETURN(const int64_t keep_dims, ctx.attribute_int("keepdims", 1));
  TO_ASSIGN_OR_RETURN(const int64_t last, ctx.attribute_int("select_last_index", 0));
  if (last != 0) return ctx.refuse("select_last_index {} is not supported (ties give the first index)", last);
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const int64_t rank = static_cast<int64_t>(ctx.desc(x).shape.rank());
  TO_ASSIGN_OR_RETURN(const int64_t a, normalize_axis(ctx, axis, rank, "axis"));
  const TopKOutputs top = ctx.net().top_k(
      x, TopKAttributes().set_k(1).set_axis(a).set_largest(largest).set_name(ctx.layer_name() + "/top1"));
  if (keep_dims != 0) return ctx.set_output(0, top.indices);
  std::vector<int64_t> out, from;
  const Dims shape = ctx.desc(x).shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == a) continue;
    out.push_back(shape[static_cast<size_t>(i)]);
    from.push_back(i);
  }
  TO_ASSIGN_OR_RETURN(const Tensor y, reshape_moving(ctx, top.indices, out, from, ctx.layer_name()));
  return ctx.set_output(0, y);
}

#define TO_REDUCE_(Onnx, Op) {#Onnx, [](NodeContext& c) { return convert_reduce(c, ReduceOp::k##Op); }}

}  // namespace

const std::vector<OpConverter>& nn_converters() {
  static const std::vector<OpConverter> converters = {
      {"MatMul", &convert_matmul},
      {"Gemm", &convert_gemm},
      {"Conv", &convert_conv},
      {"ConvTranspose", &convert_conv_transpose},
      {"MaxPool", [](NodeContext& c) { return convert_pool(c, PoolingKind::kMax); }},
      {"AveragePool", [](NodeContext& c) { return convert_pool(c, PoolingKind::kAverage); }},
      {"GlobalMaxPool", [](NodeContext& c) { return convert_global_pool(c, PoolingKind::kMax); }},
      {"GlobalAveragePool", [](NodeContext& c) { return convert_global_pool(c, PoolingKind::kAverage); }},
      {"BatchNormalization", &convert_batch_norm},
      {"LayerNormalization", &convert_layer_norm},
      {"InstanceNormalization", &convert_instance_norm},
      {"Softmax", &convert_softmax},
      TO_REDUCE_(ReduceSum, Sum), TO_REDUCE_(ReduceMean, Mean), TO_REDUCE_(ReduceMax, Max), TO_REDUCE_(ReduceMin, Min),
      TO_REDUCE_(ReduceProd, Prod),
      {"TopK", &convert_top_k},
      {"ArgMax", [](NodeContext& c) { return convert_arg(c, true); }},
      {"ArgMin", [](NodeContext& c) { return convert_arg(c, false); }},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
