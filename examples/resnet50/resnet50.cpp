#include "resnet50.h"

#include <string>

namespace resnet50 {

using namespace tensoracle;

namespace {

struct Builder {
  Network& net;
  const Weights& w;
  DataType precision;

  // A weight in the network's precision (the planner folds the cast of a constant).
  Tensor param(const std::string& name) { return to(net.weight(w, name), precision); }
  Tensor to(Tensor x, DataType type) { return !x.valid() || net.tensor(x).desc.dtype == type ? x : net.cast(x, type); }

  // conv (no bias) -> batch norm, as torchvision's convNxN + BatchNorm2d(eps 1e-5) pairs.
  Tensor conv_bn(Tensor x, const std::string& conv, const std::string& bn, int64_t kernel, int64_t stride) {
    const int64_t pad = kernel / 2;
    Tensor y =
        net.convolution(x, param(conv + ".weight"), {},
                        ConvolutionAttributes().set_stride({stride, stride}).set_padding({pad, pad}).set_name(conv));
    return net.batch_norm(y, param(bn + ".weight"), param(bn + ".bias"), param(bn + ".running_mean"),
                          param(bn + ".running_var"), BatchNormAttributes().set_epsilon(1e-5).set_name(bn));
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
  Builder b{net, w, precision};
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
  // nn.Linear: y = x W^T + b.
  Tensor logits = net.add(net.matmul(x, b.param("fc.weight"), MatMulAttributes().set_transpose_b(true).set_name("fc")),
                          b.param("fc.bias"));
  net.mark_output(b.to(logits, DataType::kFloat32), kOutput);
  return net.status();
}

}  // namespace resnet50
