// What the Q/DQ convolution tests share (qconv_lowering_test.cpp without a GPU, qconv_test.cpp on
// one): the cases, their lowering, the inputs, and the bound a result is held to against the CPU
// reference (docs/quantization.md, "How close a fused kernel can be"): per element, the product
// type's tolerance (fp32 1e-5 + 1e-5|ref|, fp16 2e-3 + 2e-3|ref|, bf16 2e-2 + 2e-2|ref|) plus
// 2u·Σ|DQ(x)·DQ(w)| over the element's window (the reference's rounding of each dequantized
// operand, u of the product type) plus, for fp8, 2^-13·Σ|...| (tensor-core fp8 accumulation, not
// yet measured on cuDNN); a trailing quantize within one int8 code or one fp8 step (1/64 abs,
// 1/8 rel) plus that same bound divided by its scale.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "gpu/fused_step_testing.h"
#include "host/ops/quantized_conv_case.h"
#include "tensoracle/compare.h"

namespace tensoracle::testing::qconv {

using namespace fused_step;  // NOLINT(google-build-using-namespace): Lowered, joined, contains
using C = QuantizedConvCase;
constexpr DataType kI8 = DataType::kInt8, kF8 = DataType::kFloat8E4M3, kF32 = DataType::kFloat32,
                   kF16 = DataType::kFloat16, kBF16 = DataType::kBFloat16;
constexpr auto kRelu = ActivationKind::kRelu;

inline Network network_of(const C& c) {
  Network net;
  c.build(net);
  EXPECT_TRUE(net.status().is_ok()) << c.params() << ": " << net.status().to_string();
  return net;
}

inline std::map<std::string, Dims> input_shapes(const C& c) {
  std::map<std::string, Dims> shapes{{"x", Dims(c.x)}};
  if (c.residual) shapes["r"] = Dims(c.y_shape());
  return shapes;
}

inline Lowered lower(const C& c, int cc) { return fused_step::lower(network_of(c), input_shapes(c), cc); }

// The cases the fused path takes: their layers all in conv1's step at compute capability 9.0.
inline std::vector<C> fusable_cases() {
  return {
      C::of(kI8, kF32, {1, 16, 8, 8}, 16),
      C::of(kI8, kF32, {2, 16, 8, 8}, 32).per_output_channel().with_bias().then(kRelu),
      C::of(kI8, kF16, {1, 16, 8, 8}, 16).per_output_channel().with_bias().plus_residual().then(kRelu).quantized_to(kI8),
      C::of(kI8, kF32, {1, 3, 17, 17}, 8).window(3, 2, 1).per_output_channel().with_bias().then(kRelu).quantized_to(kI8),
      C::of(kI8, kBF16, {2, 64, 14, 14}, 64).window(1, 1, 0).per_output_channel().with_bias().quantized_to(kF8),
      C::of(kF8, kF16, {1, 16, 8, 8}, 16),
      C::of(kF8, kF16, {2, 32, 8, 8}, 32).per_output_channel().with_bias().then(kRelu),
      C::of(kF8, kBF16, {1, 16, 8, 8}, 16).with_bias().plus_residual().then(kRelu).quantized_to(kF8),
      C::of(kF8, kF32, {1, 3, 17, 17}, 16).window(3, 2, 1).per_output_channel().with_bias().then(kRelu).quantized_to(kI8),
      // An image stem: 3 channels, 7x7 stride 2, in fp16 / bf16: the explicit path is also
      // offered channel-padded (cudnn_qconv_family.cpp).
      C::of(kI8, kF16, {2, 3, 20, 20}, 16).window(7, 2, 3).per_output_channel().with_bias().then(kRelu),
      C::of(kF8, kBF16, {2, 3, 20, 20}, 16).window(7, 2, 3).with_bias().then(kRelu).quantized_to(kF8),
      // A ResNet-50 shape: layer3's 3x3 convolution at batch 8.
      C::of(kI8, kF16, {8, 256, 14, 14}, 256).per_output_channel().with_bias().then(kRelu).quantized_to(kI8),
      C::of(kF8, kF16, {8, 256, 14, 14}, 256).per_output_channel().with_bias().then(kRelu).quantized_to(kF8),
  };
}

// Two Q/DQ-fused convolutions in a row, as a ResNet bottleneck's inner ones: conv1 -> relu -> Q ->
// DQ -> conv2, the input "x" quantized [2, 32, 8, 8], the output "y" fp16.
inline Network chained_convolutions(DataType format) {
  Network net;
  const bool int8 = format == kI8;
  const auto scalar = [&](double v) {
    HostArray a = HostArray::zeros(kF32, Dims({})).value();
    convert_elements(DataType::kFloat64, &v, kF32, a.data(), 1);
    return net.add_constant(std::move(a));
  };
  const auto dq = [&](Tensor q, double scale, const std::string& name) {
    return net.dequantize(q, scalar(scale), DequantizeAttributes().set_output_type(kF16).set_name(name));
  };
  const Tensor x = dq(net.add_input("x", format, {2, 32, 8, 8}), 0.02, "x_dq");
  Tensor y = net.convolution(x, dq(net.add_constant(random_array(format, {32, 32, 3, 3}, 4, -2, 2)), int8 ? 0.001 : 0.05, "w1_dq"),
                             {}, ConvolutionAttributes().set_padding({1, 1}).set_name("conv1"));
  y = net.activation(y, ActivationAttributes().set_kind(kRelu));
  y = net.quantize(y, scalar(0.05), QuantizeAttributes().set_output_type(format).set_name("y1_q"));
  y = net.convolution(dq(y, 0.05, "y1_dq"),
                      dq(net.add_constant(random_array(format, {32, 32, 1, 1}, 5, -2, 2)), int8 ? 0.001 : 0.05, "w2_dq"), {},
                      ConvolutionAttributes().set_name("conv2"));
  net.mark_output(y, "y");
  return net;
}

inline NamedArrays seeded(const C& c) { return seeded_inputs(network_of(c), 77, c.low(), c.high()).value(); }

inline double unit_roundoff(DataType t) { return t == kF16 ? 0x1p-11 : t == kBF16 ? 0x1p-8 : 0x1p-24; }

// Σ|DQ(x)·DQ(w)| over each output element's window, in y's order [N, K, Ho, Wo] (groups 1).
inline std::vector<double> abs_product_sums(const C& c, const HostArray& x) {
  const int64_t n = c.x[0], ch = c.x[1], h = c.x[2], w = c.x[3], r = c.kernel;
  const std::vector<int64_t> y = c.y_shape();
  const bool int8 = c.quantized == kI8;
  const HostArray wq = random_array(c.quantized, Dims({c.k, ch, r, r}), 21, c.low(), c.high());
  const HostArray sw = random_array(kF32, Dims({c.k}), 22, 0.001, 0.01);
  const double sx = int8 ? 0.0123 : 0.37;
  std::vector<double> out(static_cast<size_t>(y[0] * y[1] * y[2] * y[3]), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c.k; ++k) {
      const double swk = c.per_channel ? load_as_double(kF32, sw.data(), k) : (int8 ? 0.0047 : 0.041);
      for (int64_t oh = 0; oh < y[2]; ++oh)
        for (int64_t ow = 0; ow < y[3]; ++ow) {
          double sum = 0;
          for (int64_t ci = 0; ci < ch; ++ci)
            for (int64_t i = 0; i < r; ++i)
              for (int64_t j = 0; j < r; ++j) {
                const int64_t ih = oh * c.stride - c.pad + i, iw = ow * c.stride - c.pad + j;
                if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                const double xv = load_as_double(c.quantized, x.data(), ((b * ch + ci) * h + ih) * w + iw) * sx;
                const double wv = load_as_double(c.quantized, wq.data(), ((k * ch + ci) * r + i) * r + j) * swk;
                sum += std::fabs(xv * wv);
              }
          out[static_cast<size_t>(((b * c.k + k) * y[2] + oh) * y[3] + ow)] = sum;
        }
    }
  return out;
}

inline Tolerance tolerance_of(DataType type) {
  switch (type) {
    case kF32: return {1e-5, 1e-5};
    case kF16: return {2e-3, 2e-3};
    case kBF16: return {2e-2, 2e-2};
    case kI8: return {1, 0};
    case kF8: return {1.0 / 64, 0.125};
    default: return {0, 0};
  }
}

// "" when every element of `got` is within the bound of the header, else the first ones outside.
// `sums` is abs_product_sums(c, x), computed once where several results are held to it (it is
// the costly part at ResNet-50's shapes).
inline std::string mismatch(const C& c, const std::vector<double>& sums, const HostArray& got, const HostArray& ref) {
  if (got.shape() != ref.shape() || got.dtype() != ref.dtype()) return "shape or type differs";
  const double per_sum = 2 * unit_roundoff(c.product) + (c.quantized == kF8 ? 0x1p-13 : 0.0);
  const double scale = c.requantize ? (c.output == kI8 ? 0.05 : 0.02) : 1.0;
  const Tolerance tol = tolerance_of(ref.dtype());
  std::string out;
  int shown = 0;
  for (int64_t i = 0; i < ref.element_count(); ++i) {
    const double g = load_as_double(got.dtype(), got.data(), i), e = load_as_double(ref.dtype(), ref.data(), i);
    const double bound = tol.atol + tol.rtol * std::fabs(e) + per_sum * sums[static_cast<size_t>(i)] / scale;
    if (std::isnan(g) != std::isnan(e) || std::fabs(g - e) > bound) {
      if (shown++ < 5) out += fmt::format(" [{}] got {} want {} (bound {:.3g});", i, g, e, bound);
    }
  }
  return shown ? fmt::format("{} element(s) outside:{}", shown, out) : "";
}

inline std::string mismatch(const C& c, const HostArray& x, const HostArray& got, const HostArray& ref) {
  return mismatch(c, abs_product_sums(c, x), got, ref);
}

inline NamedArrayViews views(const NamedArrays& arrays) {
  NamedArrayViews out;
  for (const auto& [name, a] : arrays) out.emplace(name, a.view());
  return out;
}

inline double rounded(double v, DataType t) {
  std::vector<unsigned char> cell(8);
  convert_elements(DataType::kFloat64, &v, t, cell.data(), 1);
  return load_as_double(t, cell.data(), 0);
}

// The fused path's arithmetic (qconv_kernels.h) on the host, the accumulator summed exactly (int8:
// as cuDNN's int32 sum; fp8: without cuDNN's fp32 rounding): round_T(acc·sx·sw[k] + bias[k]),
// + residual, relu, each rounded to the product type T, then the quantize. Groups 1.
inline HostArray emulated_fused(const C& c, const NamedArrays& inputs) {
  const int64_t ch = c.x[1], h = c.x[2], w = c.x[3], r = c.kernel;
  const std::vector<int64_t> y = c.y_shape();
  const bool int8 = c.quantized == kI8;
  const HostArray wq = random_array(c.quantized, Dims({c.k, ch, r, r}), 21, c.low(), c.high());
  const HostArray sw = random_array(kF32, Dims({c.k}), 22, 0.001, 0.01);
  const HostArray bias = random_array(c.product, Dims({c.k}), 23, -0.5, 0.5);
  const double sx = rounded(int8 ? 0.0123 : 0.37, kF32);
  const HostArray& x = inputs.at("x");
  std::vector<double> values(static_cast<size_t>(y[0] * y[1] * y[2] * y[3]));
  for (int64_t b = 0; b < y[0]; ++b)
    for (int64_t k = 0; k < c.k; ++k)
      for (int64_t oh = 0; oh < y[2]; ++oh)
        for (int64_t ow = 0; ow < y[3]; ++ow) {
          double acc = 0;  // exact: int8 products, or fp8 products (8-bit significands), summed in fp64
          for (int64_t ci = 0; ci < ch; ++ci)
            for (int64_t i = 0; i < r; ++i)
              for (int64_t j = 0; j < r; ++j) {
                const int64_t ih = oh * c.stride - c.pad + i, iw = ow * c.stride - c.pad + j;
                if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                acc += load_as_double(c.quantized, x.data(), ((b * ch + ci) * h + ih) * w + iw) *
                       load_as_double(c.quantized, wq.data(), ((k * ch + ci) * r + i) * r + j);
              }
          const double swk = c.per_channel ? load_as_double(kF32, sw.data(), k) : rounded(int8 ? 0.0047 : 0.041, kF32);
          const size_t at = static_cast<size_t>(((b * c.k + k) * y[2] + oh) * y[3] + ow);
          double p = acc * sx * swk + (c.bias ? load_as_double(c.product, bias.data(), k) : 0.0);
          p = rounded(p, c.product);
          if (c.residual) p = rounded(p + load_as_double(c.product, inputs.at("r").data(), at), c.product);
          if (c.activation == kRelu) p = rounded(p < 0 ? 0.0 : p, c.product);
          if (c.requantize) {
            const float v = static_cast<float>(p) / static_cast<float>(c.output == kI8 ? 0.05 : 0.02);
            p = c.output == kI8 ? std::clamp<double>(std::nearbyint(v), -128, 127) : rounded(std::clamp(v, -448.0f, 448.0f), kF8);
          }
          values[at] = p;
        }
  const DataType out_type = c.requantize ? c.output : c.product;
  HostArray out = HostArray::zeros(out_type, Dims(y)).value();
  convert_elements(DataType::kFloat64, values.data(), out_type, out.data(), values.size());
  return out;
}

}  // namespace tensoracle::testing::qconv
