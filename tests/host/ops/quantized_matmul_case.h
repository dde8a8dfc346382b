// The Q/DQ matmul pattern the cuda backend fuses into one quantized GEMM (docs/cuda-backend.md,
// "Q/DQ fusion"), as a network: shared by the op-harness cases (cuda vs the CPU reference) and
// the GPU tests that also check how it was planned.
//
//   y = [Q(., sy)]( act( DQ(x_q, sx) · DQ(w_q, sw) [+ bias] [+ residual] ) )   the matmul is "fc1"
//
// x_q is the network input "x" ([rows, K] or [batch, rows, K]); w_q is a seeded constant [K, N]
// (or [N, K] read with transpose_b); sw is per-tensor or per output channel (N values); the
// residual is a seeded constant of the product's shape and type (a constant "residual").
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "host/ops/op_harness.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::testing {

struct QuantizedMatmulCase {
  DataType quantized = DataType::kInt8;  // int8 or fp8e4m3: x_q and w_q
  DataType product = DataType::kFloat32;  // the dequantize layers' output type
  std::vector<int64_t> x{1, 64};          // x_q's shape: [..., rows, K]
  int64_t n = 32;
  bool weight_nk = false;  // w_q stored [N, K] and read with transpose_b (else [K, N])
  bool per_channel = false;
  bool bias = false;
  bool residual = false;
  std::optional<ActivationKind> activation;  // relu or gelu_tanh
  bool requantize = false;
  DataType output = DataType::kInt8;  // of the trailing quantize

  // Q(DataType::kInt8, kF32, {32, 64}, 48).per_output_channel().with_bias().then(kRelu)
  static QuantizedMatmulCase of(DataType quantized, DataType product, std::vector<int64_t> x, int64_t n) {
    QuantizedMatmulCase c;
    c.quantized = quantized;
    c.product = product;
    c.x = std::move(x);
    c.n = n;
    return c;
  }
  QuantizedMatmulCase stored_nk() const { return with([](auto& c) { c.weight_nk = true; }); }
  QuantizedMatmulCase per_output_channel() const { return with([](auto& c) { c.per_channel = true; }); }
  QuantizedMatmulCase with_bias() const { return with([](auto& c) { c.bias = true; }); }
  QuantizedMatmulCase with_residual() const { return with([](auto& c) { c.residual = true; }); }
  QuantizedMatmulCase then(ActivationKind kind) const { return with([&](auto& c) { c.activation = kind; }); }
  QuantizedMatmulCase quantized_to(DataType type) const {
    return with([&](auto& c) {
      c.requantize = true;
      c.output = type;
    });
  }

  int64_t k() const { return x.back(); }
  std::string params() const {
    return fmt::format("{} {} x{} n{}{}{}{}{}{}{}", data_type_name(quantized), data_type_name(product), Dims(x).to_string(), n,
                       weight_nk ? " w[n,k]" : "", per_channel ? " per-channel" : " per-tensor", bias ? " bias" : "",
                       residual ? " residual" : "",
                       activation ? fmt::format(" {}", enum_name(*activation)) : std::string(),
                       requantize ? fmt::format(" q {}", data_type_name(output)) : std::string());
  }
  // Quantized values: int8 codes in [-127, 127]; fp8 values in [-2, 2] (x: the harness's range).
  double low() const { return quantized == DataType::kInt8 ? -127 : -2; }
  double high() const { return -low(); }

  template <typename F>
  QuantizedMatmulCase with(F change) const {
    QuantizedMatmulCase c = *this;
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
    const Tensor w_q = net.add_constant(random_array(quantized, weight_nk ? Dims({n, k()}) : Dims({k(), n}), 11, low(), high()));
    const Tensor sx = scalar(int8 ? 0.0123 : 0.37);
    const Tensor sw = per_channel ? net.add_constant(random_array(DataType::kFloat32, Dims({n}), 12, 0.001, 0.01))
                                  : scalar(int8 ? 0.0047 : 0.041);
    const Tensor xd = net.dequantize(x_q, sx, DequantizeAttributes().set_output_type(product).set_name("x_dq"));
    const Tensor wd = net.dequantize(w_q, sw, DequantizeAttributes().set_output_type(product).set_axis(weight_nk ? 0 : 1).set_name("w_dq"));
    Tensor y = net.matmul(xd, wd, MatMulAttributes().set_transpose_b(weight_nk).set_name("fc1"));
    if (bias) y = net.add(y, net.add_constant(random_array(product, Dims({n}), 13, -0.5, 0.5)));
    if (residual) {
      std::vector<int64_t> shape(x.begin(), x.end() - 1);
      shape.push_back(n);
      y = net.add(y, net.add_constant(random_array(product, Dims(shape), 14, -0.5, 0.5), "residual"));
    }
    if (activation) y = net.activation(y, ActivationAttributes().set_kind(*activation));
    if (requantize) y = net.quantize(y, scalar(output == DataType::kInt8 ? 0.02 : 0.01),
                                      QuantizeAttributes().set_output_type(output).set_name("y_q"));
    net.mark_output(y, "y");
  }
};

}  // namespace tensoracle::testing
