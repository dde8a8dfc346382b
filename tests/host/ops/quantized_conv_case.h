// The Q/DQ convolution pattern the cuda backend fuses into one quantized step (docs/quantization.md,
// "The fused patterns"; cudnn.qconv), as a network: shared by the op-harness cases (cuda vs the CPU
// reference) and the GPU tests that also check how it was planned.
//
//   y = [Q(., sy)]( act( conv(DQ(x_q, sx), DQ(w_q, sw[k]), bias) [+ r] ) )   the conv is "conv1"
//
// x_q is the network input "x" [N, C, H, W]; w_q a seeded constant [K, C/groups, R, S]; sw per
// tensor or per output channel (the weight's axis 0); r, when present, the network input "r" of
// the output's shape in the dequantized type (a residual).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <vector>

#include "host/ops/op_harness.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::testing {

struct QuantizedConvCase {
  DataType quantized = DataType::kInt8;   // int8 or fp8e4m3: x_q and w_q
  DataType product = DataType::kFloat32;  // the dequantize layers' output type
  std::vector<int64_t> x{1, 16, 8, 8};    // x_q's shape [N, C, H, W]
  int64_t k = 16;                         // output channels
  int64_t kernel = 3, stride = 1, pad = 1, groups = 1;
  bool per_channel = false;
  bool bias = false;
  bool residual = false;
  std::optional<ActivationKind> activation;
  bool requantize = false;
  DataType output = DataType::kInt8;  // of the trailing quantize

  // C::of(DataType::kInt8, kF32, {1, 16, 8, 8}, 32).per_output_channel().with_bias().then(kRelu)
  static QuantizedConvCase of(DataType quantized, DataType product, std::vector<int64_t> x, int64_t k) {
    QuantizedConvCase c;
    c.quantized = quantized;
    c.product = product;
    c.x = std::move(x);
    c.k = k;
    return c;
  }
  QuantizedConvCase window(int64_t size, int64_t step, int64_t padding) const {
    return with([&](auto& c) { c.kernel = size, c.stride = step, c.pad = padding; });
  }
  QuantizedConvCase in_groups(int64_t count) const { return with([&](auto& c) { c.groups = count; }); }
  QuantizedConvCase per_output_channel() const { return with([](auto& c) { c.per_channel = true; }); }
  QuantizedConvCase with_bias() const { return with([](auto& c) { c.bias = true; }); }
  QuantizedConvCase plus_residual() const { return with([](auto& c) { c.residual = true; }); }
  QuantizedConvCase then(ActivationKind kind) const { return with([&](auto& c) { c.activation = kind; }); }
  QuantizedConvCase quantized_to(DataType type) const {
    return with([&](auto& c) {
      c.requantize = true;
      c.output = type;
    });
  }

  std::string params() const {
    return fmt::format("{} {} x{} k{} r{} s{} p{}{}{}{}{}{}{}", data_type_name(quantized), data_type_name(product),
                       Dims(x).to_string(), k, kernel, stride, pad, groups > 1 ? fmt::format(" g{}", groups) : "",
                       per_channel ? " per-channel" : " per-tensor", bias ? " bias" : "", residual ? " residual" : "",
                       activation ? fmt::format(" {}", enum_name(*activation)) : std::string(),
                       requantize ? fmt::format(" q {}", data_type_name(output)) : std::string());
  }
  // The harness's range for floating inputs: fp8 x in [-2, 2], the residual in [-1, 1] (int8) or
  // [-2, 2] (fp8); int8 inputs always take the full range.
  double low() const { return quantized == DataType::kInt8 ? -1 : -2; }
  double high() const { return -low(); }
  std::vector<int64_t> y_shape() const {
    const int64_t h = (x[2] + 2 * pad - kernel) / stride + 1, w = (x[3] + 2 * pad - kernel) / stride + 1;
    return {x[0], k, h, w};
  }

  template <typename F>
  QuantizedConvCase with(F change) const {
    QuantizedConvCase c = *this;
    change(c);
    return c;
  }

  void build(Network& net) const {
    const auto scalar = [&](double v) {
      HostArray a = HostArray::zeros(DataType::kFloat32, Dims({})).value();
      convert_elements(DataType::kFloat64, &v, DataType::kFloat32, a.data(), 1);
      return net.add_constant(std::move(a));
    };
    const bool int8 = quantized == DataType::kInt8;
    const Tensor x_q = net.add_input("x", quantized, Dims(x));
    const Tensor w_q = net.add_constant(random_array(quantized, Dims({k, x[1] / groups, kernel, kernel}), 21, low(), high()));
    const Tensor sx = scalar(int8 ? 0.0123 : 0.37);
    const Tensor sw = per_channel ? net.add_constant(random_array(DataType::kFloat32, Dims({k}), 22, 0.001, 0.01))
                                  : scalar(int8 ? 0.0047 : 0.041);
    const Tensor xd = net.dequantize(x_q, sx, DequantizeAttributes().set_output_type(product).set_name("x_dq"));
    const Tensor wd = net.dequantize(w_q, sw, DequantizeAttributes().set_output_type(product).set_axis(0).set_name("w_dq"));
    const Tensor b = bias ? net.add_constant(random_array(product, Dims({k}), 23, -0.5, 0.5)) : Tensor{};
    Tensor y = net.convolution(xd, wd, b,
                               ConvolutionAttributes()
                                   .set_stride({stride, stride})
                                   .set_padding({pad, pad})
                                   .set_groups(groups)
                                   .set_name("conv1"));
    if (residual) y = net.add(y, net.add_input("r", product, Dims(y_shape())));
    if (activation) y = net.activation(y, ActivationAttributes().set_kind(*activation));
    if (requantize)
      y = net.quantize(y, scalar(output == DataType::kInt8 ? 0.05 : 0.02),
                       QuantizeAttributes().set_output_type(output).set_name("y_q"));
    net.mark_output(y, "y");
  }
};

}  // namespace tensoracle::testing
