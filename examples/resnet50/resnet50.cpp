#include "resnet50.h"

#include <cmath>
#include <string>
#include <vector>

#include "quantization/qdq.h"
#include "tensoracle/float_formats.h"

namespace resnet50 {

using namespace tensoracle;

namespace {

// The fp32 values of a weight the network has read (empty when it could not: the network's
// sticky error then names the weight).
std::vector<float> values_of(const Network& net, Tensor t) {
  if (!t.valid()) return {};
  const Node& node = net.node(static_cast<size_t>(net.tensor(t).producer));
  std::vector<float> v(static_cast<size_t>(node.constant->view.element_count()));
  convert_elements(node.constant->view.dtype, node.constant->view.data, DataType::kFloat32, v.data(), v.size());
  return v;
}

HostArray fp32_array(Dims shape, const std::vector<float>& values) {
  auto a = HostArray::zeros(DataType::kFloat32, std::move(shape));
  if (a.is_ok()) std::copy(values.begin(), values.end(), a->data_as<float>());
  return a.is_ok() ? *std::move(a) : HostArray();
}

struct Builder {
  Network& net;
  const Weights& w;
  DataType precision;
  std::optional<DataType> quantization;

  // A weight in the network's precision (the planner folds the cast of a constant).
  Tensor param(const std::string& name) { return to(net.weight(w, name), precision); }
  Tensor to(Tensor x, DataType type) { return !x.valid() || net.tensor(x).desc.dtype == type ? x : net.cast(x, type); }

  // conv (no bias) -> batch norm, as torchvision's convNxN + BatchNorm2d(eps 1e-5) pairs.
  Tensor conv_bn(Tensor x, const std::string& conv, const std::string& bn, int64_t kernel, int64_t stride) {
    const int64_t pad = kernel / 2;
    const auto attrs = ConvolutionAttributes().set_stride({stride, stride}).set_padding({pad, pad}).set_name(conv);
    if (quantization) return quantized_conv_bn(x, conv, bn, attrs);
    return plain_conv_bn(x, conv, bn, attrs);
  }

  Tensor plain_conv_bn(Tensor x, const std::string& conv, const std::string& bn, const ConvolutionAttributes& attrs) {
    Tensor y = net.convolution(x, param(conv + ".weight"), {}, attrs);
    return net.batch_norm(y, param(bn + ".weight"), param(bn + ".bias"), param(bn + ".running_mean"),
                          param(bn + ".running_var"), BatchNormAttributes().set_epsilon(1e-5).set_name(bn));
  }

  // The batch norm folded into the convolution (in fp64, rounded once to fp32):
  // w' = w * s, b' = beta - mean * s, s = gamma / sqrt(var + eps); then Q/DQ on input and w'.
  Tensor quantized_conv_bn(Tensor x, const std::string& conv, const std::string& bn, const ConvolutionAttributes& attrs) {
    const Tensor weight = net.weight(w, conv + ".weight");
    const std::vector<float> wv = values_of(net, weight), gamma = values_of(net, net.weight(w, bn + ".weight")),
                             beta = values_of(net, net.weight(w, bn + ".bias")),
                             mean = values_of(net, net.weight(w, bn + ".running_mean")),
                             var = values_of(net, net.weight(w, bn + ".running_var"));
    if (!net.status().is_ok()) return {};
    const Dims shape = net.tensor(weight).desc.shape;
    if (shape.rank() != 4) return plain_conv_bn(x, conv, bn, attrs);  // whose shape inference names the weight
    const size_t channels = static_cast<size_t>(shape[0]);
    if (gamma.size() != channels || beta.size() != channels || mean.size() != channels || var.size() != channels)
      return plain_conv_bn(x, conv, bn, attrs);  // whose shape inference names the mismatch
    const size_t per_channel = wv.size() / channels;
    std::vector<float> folded(wv.size()), bias(channels);
    for (size_t k = 0; k < channels; ++k) {
      const double s = static_cast<double>(gamma[k]) / std::sqrt(static_cast<double>(var[k]) + 1e-5);
      for (size_t i = 0; i < per_channel; ++i)
        folded[k * per_channel + i] = static_cast<float>(static_cast<double>(wv[k * per_channel + i]) * s);
      bias[k] = static_cast<float>(static_cast<double>(beta[k]) - static_cast<double>(mean[k]) * s);
    }
    Tensor wf = net.add_constant(fp32_array(shape, folded), conv + ".folded_weight");
    Tensor bf = to(net.add_constant(fp32_array({static_cast<int64_t>(channels)}, bias), conv + ".folded_bias"), precision);
    examples::QuantizedInputs q{net, w, *quantization, precision};
    return net.convolution(q.activation(x, conv), q.weight(wf, conv), bf, attrs);
  }

  // nn.Linear: y = x W^T + b (Q/DQ on x and W when quantized).
  Tensor linear(Tensor x, const std::string& name) {
    Tensor weight;
    if (quantization) {
      examples::QuantizedInputs q{net, w, *quantization, precision};
      weight = q.weight(net.weight(w, name + ".weight"), name);
      x = q.activation(x, name);
    } else {
      weight = param(name + ".weight");
    }
    return net.add(net.matmul(x, weight, MatMulAttributes().set_transpose_b(true).set_name(name)),
                   param(name + ".bias"));
  }

  // torchvision Bottleneck: 1x1 -> 3x3 (stride) -> 1x1 (x4 channels), plus the identity or the
  // downsample (1x1 conv with the stride + batch norm) when the shape changes.
  Tensor bottleneck(Tensor x, const std::string& p, int64_t stride, bool downsample) {
    Tensor y = net.relu(conv_bn(x, p + ".conv1", p + ".bn1", 1, 1));
    y = net.relu(conv_bn(y, p + ".conv2", p + ".bn2", 3, stride));
    y = conv_bn(y, p + ".conv3", p + ".bn3", 1, 1);
    Tensor identity = downsample ? conv_bn(x, p + ".downsample.0", p + ".downsample.1", 1, stride) : x;
    return net.relu(net.add(y, identity));
  }
};

}  // namespace

Status define(Network& net, const Weights& w, Dims input_shape, DataType precision, const Config& cfg) {
  if (precision != DataType::kFloat32 && precision != DataType::kFloat16 && precision != DataType::kBFloat16)
    return Status(StatusCode::kInvalidArgument,
                  "resnet50: precision " + std::string(data_type_name(precision)) + " is not fp32, fp16 or bf16");
  if (cfg.quantization && *cfg.quantization != DataType::kInt8 && *cfg.quantization != DataType::kFloat8E4M3)
    return Status(StatusCode::kInvalidArgument, "resnet50: quantization " +
                                                    std::string(data_type_name(*cfg.quantization)) +
                                                    " is not int8 or fp8e4m3");
  Builder b{net, w, precision, cfg.quantization};
  Tensor x = b.to(net.add_input(kInput, DataType::kFloat32, std::move(input_shape)), precision);
  x = net.relu(b.conv_bn(x, "conv1", "bn1", 7, 2));
  x = net.pooling(x, PoolingAttributes()
                         .set_kind(PoolingKind::kMax)
                         .set_window({3, 3})
                         .set_stride({2, 2})
                         .set_padding({1, 1})
                         .set_name("maxpool"));
  for (size_t stage = 0; stage < cfg.blocks.size(); ++stage) {
    for (int64_t i = 0; i < cfg.blocks[stage]; ++i) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      // The first block of every stage but the first halves the resolution; the first block of
      // every stage changes the channel count (layer1's from width to 4 * width).
      const int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      x = b.bottleneck(x, p, stride, i == 0);
    }
  }
  // AdaptiveAvgPool2d((1, 1)) + flatten.
  x = net.pooling(x, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true).set_name("avgpool"));
  x = net.reshape(x, ReshapeAttributes().set_shape({0, -1}).set_name("flatten"));
  net.mark_output(b.to(b.linear(x, "fc"), DataType::kFloat32), kOutput);
  return net.status();
}

}  // namespace resnet50
