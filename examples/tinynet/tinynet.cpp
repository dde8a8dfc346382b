#include "tinynet.h"

#include <string>

namespace tinynet {

using namespace tensoracle;

namespace {

// conv (no bias) -> batch norm, with PyTorch's module names.
Tensor conv_bn(Network& net, const Weights& w, Tensor x, const std::string& conv, const std::string& bn) {
  Tensor y = net.convolution(x, net.weight(w, conv + ".weight"), {},
                             ConvolutionAttributes().set_padding({1, 1}).set_name(conv));
  return net.batch_norm(y, net.weight(w, bn + ".weight"), net.weight(w, bn + ".bias"), net.weight(w, bn + ".running_mean"),
                        net.weight(w, bn + ".running_var"), BatchNormAttributes().set_epsilon(1e-5).set_name(bn));
}

}  // namespace

Status define(Network& net, const Weights& w, Dims input_shape) {
  Tensor x = net.add_input(kInput, DataType::kFloat32, std::move(input_shape));
  x = net.relu(conv_bn(net, w, x, "conv1", "bn1"));
  x = net.pooling(x, PoolingAttributes().set_kind(PoolingKind::kMax).set_window({2, 2}).set_name("pool"));
  Tensor y = net.relu(conv_bn(net, w, x, "block.conv1", "block.bn1"));
  y = conv_bn(net, w, y, "block.conv2", "block.bn2");
  x = net.relu(net.add(x, y));
  x = net.pooling(x, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true).set_name("gap"));
  x = net.reshape(x, ReshapeAttributes().set_shape({0, -1}));
  // nn.Linear: y = x W^T + b.
  Tensor logits = net.add(net.matmul(x, net.weight(w, "fc.weight"), MatMulAttributes().set_transpose_b(true).set_name("fc")),
                          net.weight(w, "fc.bias"));
  net.mark_output(net.softmax(logits, SoftmaxAttributes().set_axis(-1)), kOutput);
  return net.status();
}

}  // namespace tinynet
