#include "deformable.h"

#include <cstring>
#include <string>
#include <vector>

#include "dcnv2/dcnv2_parameters.h"
#include "deformable/custom_plugin/deform_sample_parameters.h"

namespace deformable {

using namespace tensoracle;

namespace {

constexpr int64_t kKernel = 3, kPadding = 1;  // the deformable convolution: 3x3, stride 1, padding 1
constexpr int64_t kTaps = kKernel * kKernel;

struct Builder {
  Network& net;
  const Weights& w;
  DataType precision;
  Status error = Status::ok();  // the first error of a step the network does not check (stacked)

  Tensor to(Tensor x, DataType type) { return !x.valid() || net.tensor(x).desc.dtype == type ? x : net.cast(x, type); }
  Tensor param(const std::string& name) { return to(net.weight(w, name), precision); }
  Tensor constant(HostArray array, const std::string& name) { return to(net.add_constant(std::move(array), name), precision); }

  Tensor conv(Tensor x, const std::string& name, int64_t padding) {
    return net.convolution(x, param(name + ".weight"), param(name + ".bias"),
                           ConvolutionAttributes().set_padding({padding, padding}).set_name(name));
  }

  // deform_conv2d(x, offset, weight, bias, padding 1, mask) from standard layers, for x
  // [N, C, H, W] (H, W > 1), one deformable group and one convolution group.
  //
  // grid_sample with align_corners samples pixel (g + 1) / 2 * (S - 1) and reads zero outside the
  // image, the bilinear rule deform_conv2d uses. Tap t = (ky, kx) of output pixel (oy, ox) samples
  // (oy - 1 + ky + dy, ox - 1 + kx + dx), so its grid point (x, y) is
  //   (dx, dy) · [[0, 2/(H-1)], [2/(W-1), 0]] swapped into (x, y) order + base[t, oy, ox],
  //   base = (2 (ox - 1 + kx) / (W-1) - 1, 2 (oy - 1 + ky) / (H-1) - 1),
  // one matmul and one add over every tap. The taps are stacked along the grid's height, so a
  // single grid_sample gives [N, C, T*H, W], whose reshape [N, C*T, H*W] is the column matrix
  // (channel-major, then tap: the order of the weight's [K, C, 3, 3]) once the mask multiplies it.
  Tensor deform_conv_composed(Tensor x, Tensor offset, Tensor mask, const Dims& x_shape) {
    const int64_t n = x_shape[0], c = x_shape[1], h = x_shape[2], wd = x_shape[3];
    HostArray scale = HostArray::zeros(DataType::kFloat32, Dims{2, 2}).value();
    scale.data_as<float>()[1] = static_cast<float>(2.0 / static_cast<double>(h - 1));   // dy -> y
    scale.data_as<float>()[2] = static_cast<float>(2.0 / static_cast<double>(wd - 1));  // dx -> x
    HostArray base = HostArray::zeros(DataType::kFloat32, Dims{kTaps, h, wd, 2}).value();
    float* b = base.data_as<float>();
    for (int64_t t = 0; t < kTaps; ++t)
      for (int64_t oy = 0; oy < h; ++oy)
        for (int64_t ox = 0; ox < wd; ++ox) {
          float* point = b + ((t * h + oy) * wd + ox) * 2;
          point[0] = static_cast<float>(2.0 * static_cast<double>(ox - kPadding + t % kKernel) / static_cast<double>(wd - 1) - 1.0);
          point[1] = static_cast<float>(2.0 * static_cast<double>(oy - kPadding + t / kKernel) / static_cast<double>(h - 1) - 1.0);
        }
    // offset [N, 2T, H, W] holds (dy, dx) per tap: [N, T, 2, H, W] -> [N, T, H, W, 2].
    Tensor yx = net.transpose(net.reshape(offset, ReshapeAttributes().set_shape({n, kTaps, 2, h, wd})),
                              TransposeAttributes().set_perm({0, 1, 3, 4, 2}));
    Tensor grid = net.add(net.matmul(yx, constant(std::move(scale), "dcn.grid_scale")), constant(std::move(base), "dcn.grid_base"));
    grid = net.reshape(grid, ReshapeAttributes().set_shape({n, kTaps * h, wd, 2}));
    Tensor sampled = net.grid_sample(x, grid, GridSampleAttributes().set_align_corners(true).set_name("dcn.sample"));
    Tensor modulated = net.mul(sampled, net.reshape(mask, ReshapeAttributes().set_shape({n, 1, kTaps * h, wd})));
    return apply_weight(net.reshape(modulated, ReshapeAttributes().set_shape({n, c * kTaps, h * wd})), x_shape);
  }

  // The deformable convolution's weight and bias applied to the column matrix [N, C*T, H*W].
  Tensor apply_weight(Tensor columns, const Dims& x_shape) {
    const int64_t n = x_shape[0], c = x_shape[1], h = x_shape[2], wd = x_shape[3];
    Tensor weight = net.reshape(param("dcn.weight"), ReshapeAttributes().set_shape({-1, c * kTaps}));
    Tensor y = net.matmul(weight, columns, MatMulAttributes().set_name("dcn.matmul"));  // [N, K, H*W]
    y = net.add(y, net.reshape(param("dcn.bias"), ReshapeAttributes().set_shape({-1, 1})));
    return net.reshape(y, ReshapeAttributes().set_shape({n, -1, h, wd}));
  }

  // The offset and mask convolutions as one (mmcv's conv_offset): their weights and biases
  // stacked along the output channels, so its 27 channels are the 18 offsets, then the 9 mask
  // logits (deformable::deform_sample's offset_mask). The stacking is done here, on the host.
  Tensor offset_mask_conv(Tensor x) {
    Tensor weight = stacked("offset.weight", "mask.weight", "offset_mask.weight");
    Tensor bias = stacked("offset.bias", "mask.bias", "offset_mask.bias");
    if (!weight.valid() || !bias.valid()) return Tensor{};
    return net.convolution(x, weight, bias, ConvolutionAttributes().set_padding({kPadding, kPadding}).set_name("offset_mask"));
  }
  Tensor stacked(const std::string& first, const std::string& second, const std::string& name) {
    Result<ArrayView> a = w.view(first), b = w.view(second);
    for (const auto* view : {&a, &b})
      if (!view->is_ok()) return fail(view->status());
    if (a->dtype != DataType::kFloat32 || b->dtype != DataType::kFloat32 || a->shape.rank() != b->shape.rank() ||
        a->shape.rank() == 0)
      return fail(Status(StatusCode::kInvalidArgument, "deformable: " + first + " " + a->shape.to_string() + " and " + second +
                                                           " " + b->shape.to_string() + " must be fp32 of one rank"));
    Dims shape = a->shape;
    shape[0] += b->shape[0];
    HostArray out = HostArray::zeros(DataType::kFloat32, shape).value();
    if (out.byte_size() != a->byte_size() + b->byte_size())
      return fail(Status(StatusCode::kInvalidArgument, "deformable: " + first + " " + a->shape.to_string() + " and " +
                                                           second + " " + b->shape.to_string() + " differ beyond dim 0"));
    std::memcpy(out.data(), a->data, a->byte_size());
    std::memcpy(static_cast<char*>(out.data()) + a->byte_size(), b->data, b->byte_size());
    return constant(std::move(out), name);
  }
  Tensor fail(const Status& status) {
    if (error.is_ok()) error = status;
    return Tensor{};
  }

  Tensor deform_conv_custom_plugin(Tensor x, const Dims& x_shape) {
    Tensor offset_mask = offset_mask_conv(x);
    if (!offset_mask.valid()) return Tensor{};
    std::vector<Tensor> columns =
        net.plugin({x, offset_mask}, kDeformSampleIdentity, encode_deform_sample(precision), "dcn.sample");
    return columns.empty() ? Tensor{} : apply_weight(columns[0], x_shape);
  }

  Tensor deform_conv_plugin(Tensor x, Tensor offset, Tensor mask) {
    tensoracle_plugins::Dcnv2Parameters p;
    p.padding = {kPadding, kPadding};
    p.type = precision == DataType::kFloat16 ? tensoracle_plugins::Dcnv2Type::kFloat16
                                             : tensoracle_plugins::Dcnv2Type::kFloat32;
    std::vector<Tensor> y = net.plugin({x, offset, mask, param("dcn.weight"), param("dcn.bias")},
                                       tensoracle_plugins::kDcnv2Identity, tensoracle_plugins::encode(p), "dcn");
    return y.empty() ? Tensor{} : y[0];
  }
};

}  // namespace

Status define(Network& net, const Weights& w, Dims input_shape, DataType precision, Form form) {
  if (precision != DataType::kFloat32 && precision != DataType::kFloat16)
    return Status(StatusCode::kInvalidArgument,
                  "deformable: precision " + std::string(data_type_name(precision)) + " is not fp32 or fp16");
  if (input_shape.rank() != 4 || !input_shape.is_static() || input_shape[2] < 2 || input_shape[3] < 2)
    return Status(StatusCode::kInvalidArgument, "deformable: the image shape " + input_shape.to_string() +
                                                    " must be static [N, C, H, W] with H, W >= 2");
  Builder b{net, w, precision};
  Tensor x = b.to(net.add_input(kInput, DataType::kFloat32, input_shape), precision);
  x = net.relu(b.conv(x, "stem", 1));
  const Dims stem_shape{input_shape[0], 16, input_shape[2], input_shape[3]};
  Tensor d;
  if (form == Form::kCustomPlugin) {
    d = b.deform_conv_custom_plugin(x, stem_shape);
  } else {
    Tensor offset = b.conv(x, "offset", 1);
    Tensor mask = net.activation(b.conv(x, "mask", 1), ActivationAttributes().set_kind(ActivationKind::kSigmoid));
    d = form == Form::kPlugin ? b.deform_conv_plugin(x, offset, mask) : b.deform_conv_composed(x, offset, mask, stem_shape);
  }
  if (!b.error.is_ok()) return b.error;
  if (!net.status().is_ok()) return net.status();
  Tensor out = b.conv(net.relu(d), "head", 0);
  net.mark_output(b.to(out, DataType::kFloat32), kOutput);
  return net.status();
}

}  // namespace deformable
