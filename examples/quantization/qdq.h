// Explicit quantization for the example graphs (docs/quantization.md): a quantize -> dequantize
// pair in front of a convolution's or linear layer's input (one scale per tensor) and weight (one
// scale per output channel, axis 0 of a [K, C, R, S] convolution weight and of a [out, in]
// linear weight used with transpose_b). The scales are weights named "<layer>.input_scale" and
// "<layer>.weight_scale"; `tensoracle calibrate` computes them.
#pragma once

#include <string>

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace examples {

struct QuantizedInputs {
  tensoracle::Network& net;
  const tensoracle::Weights& weights;
  tensoracle::DataType format;     // int8 or fp8e4m3
  tensoracle::DataType precision;  // what the dequantized values (and the layer) compute in

  // Q -> DQ of an activation, per tensor.
  tensoracle::Tensor activation(tensoracle::Tensor x, const std::string& layer) {
    return pair(x, layer + ".input_scale", layer + ".input", 0, false);
  }
  // Q -> DQ of a weight (a constant), per output channel.
  tensoracle::Tensor weight(tensoracle::Tensor w, const std::string& layer) {
    return pair(w, layer + ".weight_scale", layer + ".weight", 0, true);
  }

 private:
  tensoracle::Tensor pair(tensoracle::Tensor x, const std::string& scale_name, const std::string& name, int64_t axis,
                          bool per_channel) {
    using namespace tensoracle;
    const Tensor scale = net.weight(weights, scale_name);
    QuantizeAttributes q;
    q.set_output_type(format).set_name(name + "_quantize");
    DequantizeAttributes dq;
    dq.set_output_type(precision).set_name(name + "_dequantize");
    if (per_channel) {
      q.set_axis(axis);
      dq.set_axis(axis);
    }
    return net.dequantize(net.quantize(x, scale, q), scale, dq);
  }
};

}  // namespace examples
