#include "backends/cuda/cudnn/conv_problem.h"

#include "core/errors.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

bool conv_type(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16; }

}  // namespace

ConvElement conv_element(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return ConvElement::kFloat16;
    case DataType::kBFloat16: return ConvElement::kBFloat16;
    default: return ConvElement::kFloat32;
  }
}

DirectConvLaunch direct_conv_launch(const ConvProblem& p, const void* x, const void* w, void* y,
                                    const EpilogueLaunch& epilogue) {
  DirectConvLaunch a;
  a.element = conv_element(p.dtype);
  a.transposed = p.transposed;
  a.n = p.n;
  a.c = p.c;
  a.k = p.k;
  a.groups = p.groups;
  for (int d = 0; d < 3; ++d) {
    const size_t i = static_cast<size_t>(d);
    a.in[d] = p.in[i];
    a.out[d] = p.out[i];
    a.kernel[d] = p.kernel[i];
    a.stride[d] = p.stride[i];
    a.dilation[d] = p.dilation[i];
    a.pre[d] = p.pre[i];
  }
  const auto x_strides = p.x_strides(), y_strides = p.y_strides(), w_strides = p.w_strides();
  a.x.data = x;
  a.w.data = w;
  for (int d = 0; d < 5; ++d) {
    a.x.stride[d] = x_strides[static_cast<size_t>(d)];
    a.w.stride[d] = w_strides[static_cast<size_t>(d)];
    a.y_stride[d] = y_strides[static_cast<size_t>(d)];
  }
  a.y = y;
  a.epilogue = epilogue;
  return a;
}

std::array<int64_t, 5> canonical_strides(const Dims& shape, Layout layout) {
  const std::vector<int64_t> own = element_strides(shape, layout);
  std::array<int64_t, 5> out{0, 0, 0, 0, 0};
  const size_t rank = shape.rank();
  for (size_t d = 0; d < rank; ++d) {
    const size_t to = d < 2 ? d : d + (5 - rank);  // spatial dims go to the end
    out[to] = shape[d] == 1 ? 0 : own[d];
  }
  return out;
}

std::array<int64_t, 5> ConvProblem::x_strides() const { return canonical_strides(x_shape, x_layout); }
std::array<int64_t, 5> ConvProblem::y_strides() const { return canonical_strides(y_shape, y_layout); }
std::array<int64_t, 5> ConvProblem::w_strides() const { return canonical_strides(w_shape, w_layout); }

Status pad_channels_applicable(const ConvProblem& p) {
  if (p.dtype != DataType::kFloat16 && p.dtype != DataType::kBFloat16)
    return unsupported("channel padding is for fp16/bf16, the data is {}", data_type_name(p.dtype));
  if (p.transposed) return unsupported("channel padding is for convolutions, not deconvolutions");
  if (p.spatial_rank != 2) return unsupported("channel padding needs rank-4 tensors, the input is {}", p.x_shape.to_string());
  if (p.groups != 1) return unsupported("channel padding needs one group, the layer has {}", p.groups);
  if (p.c % kPadChannelsTo == 0 || p.c > 32)
    return unsupported("channel padding is for C up to 32 and not a multiple of {}, C is {}", kPadChannelsTo, p.c);
  return Status::ok();
}

ConvProblem with_padded_channels(const ConvProblem& p, int64_t multiple) {
  ConvProblem padded = p;
  padded.c = (p.c + multiple - 1) / multiple * multiple;
  padded.x_shape = Dims{p.n, padded.c, p.in[1], p.in[2]};
  padded.w_shape = Dims{p.k, padded.c, p.kernel[1], p.kernel[2]};
  padded.x_layout = Layout::kNhwc;
  padded.w_layout = Layout::kNhwc;
  return padded;
}

PadChannelsLaunch pad_channels_launch(const ConvProblem& q, int64_t multiple) {
  const auto geometry = [](PadChannelsTensor& t, const std::array<int64_t, 5>& strides, int64_t a, int64_t c, int64_t b1,
                           int64_t b2) {
    t.shape[0] = a, t.shape[1] = c, t.shape[2] = b1, t.shape[3] = b2;
    t.stride[0] = strides[0], t.stride[1] = strides[1], t.stride[2] = strides[3], t.stride[3] = strides[4];
  };
  PadChannelsLaunch launch;
  launch.padded_channels = with_padded_channels(q, multiple).c;
  geometry(launch.x, q.x_strides(), q.n, q.c, q.in[1], q.in[2]);          // [N, C, H, W]
  geometry(launch.w, q.w_strides(), q.k, q.c, q.kernel[1], q.kernel[2]);  // [K, C, R, S]
  return launch;
}

Result<ConvProblem> conv_problem(const StepInstance& step) {
  const Node& node = step.anchor.node;
  const std::string& name = node.name;
  if (node.kind != OpKind::kConvolution && node.kind != OpKind::kDeconvolution)
    return unsupported("layer '{}': {} is not a convolution", name, op_kind_name(node.kind));
  const auto& ins = step.anchor.inputs;
  if (ins.size() < 2 || !ins[0] || !ins[1] || step.anchor.outputs.empty())
    return invalid_argument("layer '{}': a convolution needs an input and a weight", name);
  ConvProblem p;
  p.transposed = node.kind == OpKind::kDeconvolution;
  p.dtype = ins[0]->dtype;
  p.x_shape = ins[0]->shape;
  p.w_shape = ins[1]->shape;
  p.y_shape = step.anchor.outputs[0].shape;
  p.has_bias = ins.size() > 2 && ins[2] != nullptr;
  if (!conv_type(p.dtype))
    return unsupported("layer '{}': {} convolutions are not supported (fp32, fp16 and bf16 are)", name,
                       data_type_name(p.dtype));
  for (size_t i = 1; i < ins.size(); ++i)
    if (ins[i] && ins[i]->dtype != p.dtype)
      return unsupported("layer '{}': input {} is {}, the data is {}", name, i, data_type_name(ins[i]->dtype),
                         data_type_name(p.dtype));
  if (step.anchor.outputs[0].dtype != p.dtype)
    return unsupported("layer '{}': output type {} differs from the input's {}", name,
                       data_type_name(step.anchor.outputs[0].dtype), data_type_name(p.dtype));
  const size_t rank = p.x_shape.rank();
  if (rank < 3 || rank > 5 || p.w_shape.rank() != rank || p.y_shape.rank() != rank)
    return unsupported("layer '{}': input {} / weight {} / output {}: ranks 3 to 5 expected", name, p.x_shape.to_string(),
                       p.w_shape.to_string(), p.y_shape.to_string());
  if (!p.x_shape.is_static() || !p.w_shape.is_static() || !p.y_shape.is_static())
    return invalid_argument("layer '{}': shapes must be concrete in a step", name);
  for (const Dims* d : {&p.x_shape, &p.w_shape, &p.y_shape})
    if (!d->element_count().is_ok())
      return unsupported("layer '{}': shape {} overflows 64-bit indexing", name, d->to_string());

  // Layouts: x, y and (not transposed) the weight linear or, at rank 4, nhwc; the bias linear.
  const auto layout_at = [](const std::vector<Layout>& v, size_t i) { return i < v.size() ? v[i] : Layout::kLinear; };
  p.x_layout = layout_at(step.input_layouts, 0);
  p.y_layout = layout_at(step.output_layouts, 0);
  p.w_layout = layout_at(step.input_layouts, 1);
  if (p.transposed && p.w_layout != Layout::kLinear)
    return unsupported("layer '{}': a deconvolution's weight must be linear, the step gives it {}", name,
                       layout_name(p.w_layout));
  for (size_t i = 2; i < ins.size(); ++i)
    if (layout_at(step.input_layouts, i) != Layout::kLinear)
      return unsupported("layer '{}': input {} must be linear, the step gives it {}", name, i,
                         layout_name(layout_at(step.input_layouts, i)));
  for (Layout l : {p.x_layout, p.y_layout, p.w_layout}) {
    if (l != Layout::kLinear && l != Layout::kNhwc)
      return unsupported("layer '{}': convolutions take linear or nhwc tensors, the step gives {}", name, layout_name(l));
    if (l == Layout::kNhwc && rank != 4)
      return unsupported("layer '{}': nhwc needs rank-4 tensors, the input is {}", name, p.x_shape.to_string());
  }

  const size_t s = rank - 2, skip = 3 - s;
  p.spatial_rank = static_cast<int>(s);
  std::vector<int64_t> stride, dilation, pre, post, outpad(s, 0);
  const auto read = [&](const auto& a) {  // the fields convolutions and deconvolutions share
    p.groups = a.groups;
    stride = a.strides(s);
    dilation = a.dilations(s);
    pre = a.pre_paddings(s);
    post = a.post_paddings(s);
  };
  if (const auto* deconv = node.attributes<DeconvolutionAttributes>()) {
    read(*deconv);
    outpad = deconv->output_paddings(s);
  } else if (const auto* conv = node.attributes<ConvolutionAttributes>()) {
    read(*conv);
  } else {
    return graph::wrong_attributes(node, OpKind::kConvolution);
  }
  p.n = p.x_shape[0];
  p.c = p.x_shape[1];
  p.k = p.y_shape[1];
  if (p.groups < 1 || p.c % p.groups != 0 || p.k % p.groups != 0)
    return invalid_argument("layer '{}': channels {} -> {} do not split into {} groups", name, p.c, p.k, p.groups);
  for (const auto* v : {&stride, &dilation, &pre, &post, &outpad})
    if (v->size() != s) return invalid_argument("layer '{}': spatial attributes must have {} entries", name, s);
  for (size_t i = 0; i < s; ++i) {
    p.in[skip + i] = p.x_shape[2 + i];
    p.out[skip + i] = p.y_shape[2 + i];
    p.kernel[skip + i] = p.w_shape[2 + i];
    p.stride[skip + i] = stride[i];
    p.dilation[skip + i] = dilation[i];
    p.pre[skip + i] = pre[i];
    p.post[skip + i] = post[i];
    p.output_padding[skip + i] = outpad[i];
  }
  return p;
}

}  // namespace tensoracle::backends::cuda
