#include "tinynet.h"

#include <string>
#include <vector>

namespace tinynet {

using namespace tensoracle;

namespace {

struct Builder {
  Network& net;
  const Weights& w;
  DataType precision;

  Tensor to(Tensor x, DataType type) { return !x.valid() || net.tensor(x).desc.dtype == type ? x : net.cast(x, type); }
  // A weight in the network's precision (the planner folds the cast of a constant).
  Tensor param(const std::string& name) { return to(net.weight(w, name), precision); }

  // conv (no bias) -> batch norm, with PyTorch's module names; `copies` > 1 computes it that
  // many times (a power of two) and averages them: the same values for that much more work.
  Tensor conv_bn(Tensor x, const std::string& conv, const std::string& bn, int copies = 1) {
    std::vector<Tensor> ys;
    for (int i = 0; i < copies; ++i) {
      const std::string suffix = i ? "#" + std::to_string(i) : "";
      Tensor y = net.convolution(x, param(conv + ".weight"), {},
                                 ConvolutionAttributes().set_padding({1, 1}).set_name(conv + suffix));
      ys.push_back(net.batch_norm(y, param(bn + ".weight"), param(bn + ".bias"), param(bn + ".running_mean"),
                                  param(bn + ".running_var"), BatchNormAttributes().set_epsilon(1e-5).set_name(bn + suffix)));
    }
    for (size_t width = ys.size(); width > 1; width /= 2)
      for (size_t i = 0; i < width / 2; ++i) ys[i] = net.add(ys[2 * i], ys[2 * i + 1]);
    if (copies == 1) return ys.front();
    HostArray scale = HostArray::zeros(DataType::kFloat32, Dims{}).value();
    *scale.data_as<float>() = 1.0f / static_cast<float>(copies);
    return net.mul(ys.front(), to(net.add_constant(std::move(scale), conv + ".average"), precision));
  }
};

}  // namespace

Status define(Network& net, const Weights& w, Dims input_shape, DataType precision, Variant variant) {
  if (precision != DataType::kFloat32 && precision != DataType::kFloat16 && precision != DataType::kBFloat16)
    return Status(StatusCode::kInvalidArgument,
                  "tinynet: precision " + std::string(data_type_name(precision)) + " is not fp32, fp16 or bf16");
  Builder b{net, w, precision};
  Tensor x = b.to(net.add_input(kInput, DataType::kFloat32, std::move(input_shape)), precision);
  const auto max_pool = [&](Tensor t) {
    return net.pooling(t, PoolingAttributes().set_kind(PoolingKind::kMax).set_window({2, 2}).set_name("pool"));
  };
  const int copies = variant == Variant::kRedundant ? 4 : 1;
  x = b.conv_bn(x, "conv1", "bn1", copies);
  x = variant == Variant::kRecomposed ? net.relu(max_pool(x)) : max_pool(net.relu(x));

  Tensor y = net.relu(b.conv_bn(x, "block.conv1", "block.bn1", copies));
  y = b.conv_bn(y, "block.conv2", "block.bn2", copies);
  x = net.relu(net.add(x, y));
  if (variant == Variant::kRecomposed) {
    x = net.reduce(x, ReduceAttributes().set_op(ReduceOp::kMean).set_axes({2, 3}).set_name("gap"));
  } else {
    x = net.pooling(x, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true).set_name("gap"));
    x = net.reshape(x, ReshapeAttributes().set_shape({0, -1}));
  }
  // nn.Linear: y = x W^T + b.
  Tensor logits = net.add(net.matmul(x, b.param("fc.weight"), MatMulAttributes().set_transpose_b(true).set_name("fc")),
                          b.param("fc.bias"));
  net.mark_output(b.to(net.softmax(logits, SoftmaxAttributes().set_axis(-1)), DataType::kFloat32), kOutput);
  return net.status();
}

}  // namespace tinynet
