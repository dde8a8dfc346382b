// Q/DQ fusion into cuDNN convolutions ("cudnn.qconv", src/backends/cuda/cudnn/qconv_plan.h).
//
// - QuantizedConvLowering (no GPU needed): which layers the planner puts into conv1's step, and
//   the build-log line naming the layer and the reason where it keeps Q/DQ explicit.
// - QuantizedConvArithmetic (no GPU needed): the fused path's arithmetic emulated on the host is
//   within the bound below, and a 1 % error is not.
// - QuantizedConvOnGpu: the whole cuda backend against the CPU reference's explicit Q/DQ
//   semantics, with the plan showing that the fused path ran; and every candidate of both paths
//   run directly on the step. Bounds (docs/quantization.md, "How close a fused kernel can be"):
//   per element, the product type's tolerance (fp32 1e-5 + 1e-5|ref|, fp16 2e-3 + 2e-3|ref|,
//   bf16 2e-2 + 2e-2|ref|) plus 2u·Σ|DQ(x)·DQ(w)| over the element's window (the reference's
//   rounding of each dequantized operand, u of the product type) plus, for fp8, 2^-13·Σ|...|
//   (tensor-core fp8 accumulation, not yet measured on cuDNN); a trailing quantize within one
//   int8 code or one fp8 step (1/64 abs, 1/8 rel) plus that same bound divided by its scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/plan_layouts.h"
#include "backends/cuda/plan_lowering.h"
#include "backends/cuda/planned_step.h"
#include "backends/cuda/planner.h"
#include "backends/plan_network.h"
#include "backends/registry.h"
#include "gpu/gpu_testing.h"
#include "host/models/state_dicts.h"
#include "host/ops/quantized_conv_case.h"
#include "passes/passes.h"
#include "resnet50/resnet50.h"
#include "tensoracle/compare.h"

namespace tensoracle::testing {
namespace {

namespace cu = backends::cuda;
using C = QuantizedConvCase;
constexpr DataType kI8 = DataType::kInt8, kF8 = DataType::kFloat8E4M3, kF32 = DataType::kFloat32,
                   kF16 = DataType::kFloat16, kBF16 = DataType::kBFloat16;
constexpr auto kRelu = ActivationKind::kRelu;

Network network_of(const C& c) {
  Network net;
  c.build(net);
  EXPECT_TRUE(net.status().is_ok()) << c.params() << ": " << net.status().to_string();
  return net;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "\n  " + l;
  return out;
}

std::map<std::string, Dims> input_shapes(const C& c) {
  std::map<std::string, Dims> shapes{{"x", Dims(c.x)}};
  if (c.residual) shapes["r"] = Dims(c.y_shape());
  return shapes;
}

struct Lowered {
  Network net;
  std::vector<TensorDesc> desc;
  std::vector<cu::PlannedStep> steps;
  std::vector<std::string> log;

  const cu::PlannedStep* step_of(const std::string& anchor) const {
    for (const cu::PlannedStep& s : steps)
      if (net.node(s.anchor).name == anchor) return &s;
    return nullptr;
  }
  std::vector<std::string> layers_of(const std::string& anchor) const {
    std::vector<std::string> names;
    if (const cu::PlannedStep* s = step_of(anchor))
      for (size_t n : s->nodes()) names.push_back(net.node(n).name);
    return names;
  }
  bool logged(const std::string& text) const {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
};

Lowered lower(const C& c, int cc) {
  Lowered out;
  auto optimized = passes::optimize_for_inference(network_of(c), &out.log);
  EXPECT_TRUE(optimized.is_ok()) << optimized.status().to_string();
  if (!optimized.is_ok()) return out;
  out.net = std::move(optimized).value();
  auto desc = backends::infer_tensor_descs(out.net, input_shapes(c));
  EXPECT_TRUE(desc.is_ok()) << desc.status().to_string();
  if (!desc.is_ok()) return out;
  cu::DeviceInfo device;
  device.cc_major = cc / 10;
  device.cc_minor = cc % 10;
  out.desc = std::move(desc).value();
  out.steps = cu::lower_to_steps(out.net, out.desc, device, &out.log);
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The cases the fused path takes: their layers all in conv1's step at compute capability 9.0.
std::vector<C> fusable_cases() {
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
      // A ResNet-50 shape: layer3's 3x3 convolution at batch 8.
      C::of(kI8, kF16, {8, 256, 14, 14}, 256).per_output_channel().with_bias().then(kRelu).quantized_to(kI8),
      C::of(kF8, kF16, {8, 256, 14, 14}, 256).per_output_channel().with_bias().then(kRelu).quantized_to(kF8),
  };
}

TEST(QuantizedConvLowering, TakesBothDequantizesTheEpilogueAndTheTrailingQuantize) {
  for (const C& c : fusable_cases()) {
    const Lowered l = lower(c, 90);
    const std::vector<std::string> layers = l.layers_of("conv1");
    for (const char* name : {"x_dq", "w_dq"})
      EXPECT_TRUE(contains(layers, name)) << c.params() << ": " << name << " is not in conv1's step "
                                          << ::testing::PrintToString(layers) << "; build log:" << joined(l.log);
    const size_t expected = 3u + (c.residual ? 1 : 0) + (c.activation ? 1 : 0) + (c.requantize ? 1 : 0);
    EXPECT_EQ(layers.size(), expected) << c.params() << ": " << ::testing::PrintToString(layers) << joined(l.log);
    EXPECT_FALSE(l.logged("kept explicit") || l.logged("not fused")) << c.params() << joined(l.log);
  }
}

// A depthwise convolution would need its one channel per group padded: the layers stay explicit
// and the log names the layer and why.
TEST(QuantizedConvLowering, GroupsThatNeedChannelPaddingStayExplicitAndTheLogSaysWhy) {
  const Lowered l = lower(C::of(kI8, kF32, {1, 8, 6, 6}, 8).in_groups(8).with_bias().then(kRelu), 90);
  EXPECT_FALSE(contains(l.layers_of("conv1"), "x_dq")) << ::testing::PrintToString(l.layers_of("conv1"));
  EXPECT_FALSE(l.layers_of("x_dq").empty()) << "x_dq should be a step of its own";
  EXPECT_TRUE(l.logged("conv1: Q/DQ kept explicit:") && l.logged("8 groups of 1 -> 1 channels"))
      << "build log:" << joined(l.log);
}

TEST(QuantizedConvLowering, Fp8NeedsComputeCapability89) {
  const Lowered l = lower(C::of(kF8, kF16, {1, 16, 8, 8}, 16), 80);
  EXPECT_FALSE(contains(l.layers_of("conv1"), "x_dq"));
  EXPECT_TRUE(l.logged("conv1: Q/DQ kept explicit:") && l.logged("fp8 e4m3 needs compute capability 8.9 or newer, this GPU is 8.0"))
      << "build log:" << joined(l.log);
}

TEST(QuantizedConvLowering, Int8NeedsComputeCapability80) {
  const Lowered l = lower(C::of(kI8, kF32, {1, 16, 8, 8}, 16), 75);
  EXPECT_FALSE(contains(l.layers_of("conv1"), "x_dq"));
  EXPECT_TRUE(l.logged("conv1: Q/DQ kept explicit:") && l.logged("compute capability 8.0+, this GPU is 7.5"))
      << "build log:" << joined(l.log);
}

TEST(QuantizedConvLowering, PerChannelActivationScalesStayExplicit) {
  Network net;
  const Tensor x = net.dequantize(net.add_input("x", kI8, {1, 8, 6, 6}), net.add_constant(random_array(kF32, {8}, 3, 0.01, 0.02)),
                                  DequantizeAttributes().set_axis(1).set_name("x_dq"));
  const Tensor w = net.dequantize(net.add_constant(random_array(kI8, {8, 8, 3, 3}, 4)), net.add_constant(random_array(kF32, {}, 5, 0.01, 0.02)),
                                  DequantizeAttributes().set_name("w_dq"));
  net.mark_output(net.convolution(x, w, {}, ConvolutionAttributes().set_padding({1, 1}).set_name("conv1")), "y");
  std::vector<std::string> log;
  cu::DeviceInfo device;
  device.cc_major = 9;
  const auto desc = backends::infer_tensor_descs(net, {{"x", Dims({1, 8, 6, 6})}}).value();
  const auto steps = cu::lower_to_steps(net, desc, device, &log);
  const bool explained = std::any_of(log.begin(), log.end(), [](const std::string& line) {
    return line.find("conv1: Q/DQ kept explicit:") != std::string::npos && line.find("per-channel") != std::string::npos;
  });
  EXPECT_TRUE(explained) << "build log:" << joined(log);
  EXPECT_EQ(steps.size(), 3u) << "x_dq, w_dq and conv1 as steps of their own";
}

// Two Q/DQ-fused convolutions in a row, as a ResNet bottleneck's inner ones: conv1 -> relu -> Q ->
// DQ -> conv2, the input "x" quantized [2, 32, 8, 8], the output "y" fp16.
Network chained_convolutions(DataType format) {
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

// The int8/fp8 tensor between two fused convolutions is stored channels-last, and so is the
// second one's weight, so that the fused path needs no packing copy for them (qconv_plan.h:
// pack_x, pack_w); the network's input and output stay linear.
TEST(QuantizedConvLowering, TheQuantizedTensorBetweenTwoFusedConvolutionsIsChannelsLast) {
  for (const DataType format : {kI8, kF8}) {
    const Network net = chained_convolutions(format);
    std::vector<std::string> log;
    cu::DeviceInfo device;
    device.cc_major = 9;
    const auto desc = backends::infer_tensor_descs(net, {{"x", Dims({2, 32, 8, 8})}}).value();
    std::vector<cu::PlannedStep> steps = cu::lower_to_steps(net, desc, device, &log);
    cu::assign_layouts(net, steps, desc, device, log);
    const cu::PlannedStep* conv1 = nullptr;
    const cu::PlannedStep* conv2 = nullptr;
    for (const cu::PlannedStep& s : steps) {
      if (net.node(s.anchor).name == "conv1") conv1 = &s;
      if (net.node(s.anchor).name == "conv2") conv2 = &s;
    }
    ASSERT_TRUE(conv1 && conv2) << joined(log);
    const std::string what = fmt::format("{}: build log:{}", data_type_name(format), joined(log));
    EXPECT_EQ(conv1->outputs[0], conv2->inputs[0]) << "conv1's step should write y1_q, conv2's read it; " << what;
    EXPECT_EQ(conv1->output_layouts[0], cu::Layout::kNhwc) << what;
    EXPECT_EQ(conv2->input_layouts[0], cu::Layout::kNhwc) << what;
    EXPECT_EQ(conv2->input_layouts[1], cu::Layout::kNhwc) << "conv2's quantized weight; " << what;
    EXPECT_EQ(conv1->input_layouts[0], cu::Layout::kLinear) << "the network input; " << what;
    EXPECT_EQ(conv2->output_layouts[0], cu::Layout::kLinear) << "the network output; " << what;
  }
}

// The examples' ResNet-50 (examples/resnet50, Q/DQ on every convolution, weights per channel) at
// batch 32 in fp16: every convolution's Q/DQ is fused (no "kept explicit" line names one), and
// every quantized convolution input is channels-last but three (so the fused path packs no copy
// of them; the quantize kernels of the block inputs write channels-last too). Width 16
// instead of 64 keeps the seeded weights small; every channel count stays a multiple of 16.
TEST(QuantizedConvLowering, EveryResNet50ConvolutionIsFused) {
  resnet50::Config cfg;
  cfg.width = 16;
  TempDir dir;
  const Weights weights = write_weights(dir, random_state_dict(resnet_state_dict(cfg), 3), "weights.safetensors");
  const Weights with_scales = Weights::with_unit_placeholders(weights);
  for (const DataType format : {kI8, kF8}) {
    cfg.quantization = format;
    Network defined;
    ASSERT_TRUE(resnet50::define(defined, with_scales, {32, 3, 224, 224}, kF16, cfg).is_ok()) << defined.status().to_string();
    std::vector<std::string> log;
    auto net = passes::optimize_for_inference(defined, &log);
    ASSERT_TRUE(net.is_ok()) << net.status().to_string();
    const auto desc = backends::infer_tensor_descs(*net, {{resnet50::kInput, Dims({32, 3, 224, 224})}}).value();
    cu::DeviceInfo device;
    device.cc_major = 9;
    std::vector<cu::PlannedStep> steps = cu::lower_to_steps(*net, desc, device, &log);
    cu::assign_layouts(*net, steps, desc, device, log);
    int convolutions = 0, fused = 0;
    std::vector<std::string> linear_inputs;
    for (const cu::PlannedStep& s : steps) {
      if (net->node(s.anchor).kind != OpKind::kConvolution) continue;
      ++convolutions;
      bool dequantizes = false;
      for (size_t n : s.fused) dequantizes |= net->node(n).kind == OpKind::kDequantize;
      fused += dequantizes;
      if (s.input_layouts[0] != cu::Layout::kNhwc) linear_inputs.push_back(net->node(s.anchor).name);
    }
    const std::string what = fmt::format("{}: build log:{}", data_type_name(format), joined(log));
    EXPECT_EQ(convolutions, 53) << what;
    EXPECT_EQ(fused, convolutions) << what;
    // Linear: the stem's (the image, quantized from the network input) and the two that read the
    // max pool's output through their quantize kernels (no layer there prefers channels-last).
    EXPECT_EQ(linear_inputs, (std::vector<std::string>{"conv1", "layer1.0.conv1", "layer1.0.downsample.0"})) << what;
    for (const std::string& line : log)
      if ((line.find("kept explicit") != std::string::npos || line.find("not fused") != std::string::npos) &&
          (line.rfind("conv", 0) == 0 || line.rfind("layer", 0) == 0))
        ADD_FAILURE() << data_type_name(format) << ": " << line;
  }
}

// ---- on the GPU ----

NamedArrays seeded(const C& c) { return seeded_inputs(network_of(c), 77, c.low(), c.high()).value(); }

double unit_roundoff(DataType t) { return t == kF16 ? 0x1p-11 : t == kBF16 ? 0x1p-8 : 0x1p-24; }

// Σ|DQ(x)·DQ(w)| over each output element's window, in y's order [N, K, Ho, Wo] (groups 1).
std::vector<double> abs_product_sums(const C& c, const HostArray& x) {
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

Tolerance tolerance_of(DataType type) {
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
std::string mismatch(const C& c, const HostArray& x, const HostArray& got, const HostArray& ref) {
  if (got.shape() != ref.shape() || got.dtype() != ref.dtype()) return "shape or type differs";
  const std::vector<double> sums = abs_product_sums(c, x);
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

NamedArrayViews views(const NamedArrays& arrays) {
  NamedArrayViews out;
  for (const auto& [name, a] : arrays) out.emplace(name, a.view());
  return out;
}

double rounded(double v, DataType t) {
  std::vector<unsigned char> cell(8);
  convert_elements(DataType::kFloat64, &v, t, cell.data(), 1);
  return load_as_double(t, cell.data(), 0);
}

// The fused path's arithmetic (qconv_kernels.h) on the host, the accumulator summed exactly (int8:
// as cuDNN's int32 sum; fp8: without cuDNN's fp32 rounding): round_T(acc·sx·sw[k] + bias[k]),
// + residual, relu, each rounded to the product type T, then the quantize. Groups 1.
HostArray emulated_fused(const C& c, const NamedArrays& inputs) {
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

// The bound the GPU tests apply holds for the documented fused arithmetic (emulated on the host)
// against the CPU reference, and does not hold for a 1 % error of an unquantized output: so a GPU
// failure means the kernels differ from that arithmetic, not that the bound is too tight.
TEST(QuantizedConvArithmetic, TheFusedArithmeticIsWithinTheBound) {
  for (const C& c : fusable_cases()) {
    if (Dims(c.x).element_count().value() * c.k > 64 * 1024) continue;  // the large shapes: too slow on the host
    const NamedArrays inputs = seeded(c);
    auto want = backends::create_backend(backends::kReferenceBackend).value()->execute(network_of(c), views(inputs));
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    const HostArray& ref = want->at("y");
    const HostArray fused = emulated_fused(c, inputs);
    const std::string why = mismatch(c, inputs.at("x"), fused, ref);
    EXPECT_TRUE(why.empty()) << c.params() << ": " << why;
    if (c.requantize) continue;
    std::vector<double> values(static_cast<size_t>(fused.element_count()));
    convert_elements(fused.dtype(), fused.data(), DataType::kFloat64, values.data(), values.size());
    for (double& v : values) v *= 1.01;
    HostArray off = HostArray::zeros(fused.dtype(), fused.shape()).value();
    convert_elements(DataType::kFloat64, values.data(), off.dtype(), off.data(), values.size());
    EXPECT_FALSE(mismatch(c, inputs.at("x"), off, ref).empty()) << c.params() << ": the bound does not see a 1 % error";
  }
}

class QuantizedConvOnGpu : public ::testing::TestWithParam<C> {};

TEST_P(QuantizedConvOnGpu, FusedAndMatchesTheCpuReference) {
  TO_SKIP_WITHOUT_GPU();
  const C& c = GetParam();
  const Network net = network_of(c);
  const NamedArrays inputs = seeded(c);
  // Level 0 (the fused path's first engine, untimed) is what execute() below runs; the timed
  // choice is printed beside it.
  OptimizationProfile profile;
  for (const auto& [name, shape] : input_shapes(c)) profile[name] = ShapeRange{shape, shape, shape};
  const auto conv1_of = [](const cu::CudaPlan& p) -> const cu::PlannedStep* {
    for (const cu::PlannedStep& s : p.steps)
      if (p.network.node(s.anchor).name == "conv1") return &s;
    return nullptr;
  };
  cu::PlanOptions level0;
  level0.optimization_level = 0;
  auto plan = cu::make_cuda_plan(net, {profile}, level0, nullptr);
  ASSERT_TRUE(plan.is_ok()) << c.params() << ": " << plan.status().to_string();
  const cu::PlannedStep* conv1 = conv1_of(*plan);
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(conv1->family, "cudnn.qconv") << c.params() << ": conv1 runs as " << conv1->tactic << joined(plan->log);
  EXPECT_NE(conv1->tactic.find("#fused"), std::string::npos)
      << c.params() << ": conv1 runs " << conv1->tactic << " (not the fused path); build log:" << joined(plan->log);
  auto timed = cu::make_cuda_plan(net, {profile}, cu::PlanOptions{}, nullptr);
  ASSERT_TRUE(timed.is_ok()) << c.params() << ": " << timed.status().to_string();
  const cu::PlannedStep* timed_conv1 = conv1_of(*timed);
  ASSERT_NE(timed_conv1, nullptr);
  std::cout << "[ info ] " << c.params() << ": conv1 runs " << conv1->tactic << "; timed choice " << timed_conv1->tactic
            << " " << timed_conv1->time_ms << " ms" << joined(timed->log) << "\n";

  auto cuda = backends::create_backend("cuda").value();
  auto cpu = backends::create_backend(backends::kReferenceBackend).value();
  auto got = cuda->execute(net, views(inputs));
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto want = cpu->execute(net, views(inputs));
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const std::string why = mismatch(c, inputs.at("x"), got->at("y"), want->at("y"));
  EXPECT_TRUE(why.empty()) << c.params() << " (" << conv1->tactic << "): " << why;
}

// Every candidate of the family -- the explicit path's engines and the fused path's -- run
// directly on device copies of the step's inputs, against the CPU reference.
TEST_P(QuantizedConvOnGpu, EveryCandidateOfBothPathsMatchesTheCpuReference) {
  TO_SKIP_WITHOUT_GPU();
  const C& c = GetParam();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  const Lowered l = lower(c, device->compute_capability());
  const cu::PlannedStep* planned = l.step_of("conv1");
  ASSERT_NE(planned, nullptr);
  ASSERT_TRUE(contains(l.layers_of("conv1"), "x_dq")) << c.params() << ": conv1 is not Q/DQ-fused; build log:" << joined(l.log);
  ASSERT_EQ(l.net.outputs()[0].id, planned->outputs[0].id) << "conv1's step should write y";
  auto step = cu::instantiate(l.net, *planned, l.desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  const NamedArrays inputs = seeded(c);
  auto cpu = backends::create_backend(backends::kReferenceBackend).value();
  auto want = cpu->execute(l.net, views(inputs));
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const HostArray& ref = want->at("y");

  std::vector<DeviceBuffer> held;
  const auto upload = [&](Tensor t) -> void* {
    const int64_t producer = l.net.tensor(t).producer;
    const ArrayView view = producer >= 0 ? l.net.node(static_cast<size_t>(producer)).constant->view
                                         : inputs.at(l.net.tensor(t).name).view();
    DeviceBuffer b = DeviceBuffer::allocate(std::max<size_t>(view.byte_size(), 1), "step input").value();
    EXPECT_EQ(cudaMemcpy(b.data(), view.data, view.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    held.push_back(std::move(b));
    return held.back().data();
  };
  cu::StepBuffers buffers;
  for (Tensor t : planned->inputs) buffers.inputs.push_back({l.desc[t.id].dtype, l.desc[t.id].shape, cu::Layout::kLinear, upload(t)});
  for (Tensor t : planned->extra_inputs)
    buffers.extra_inputs.push_back({l.desc[t.id].dtype, l.desc[t.id].shape, cu::Layout::kLinear, upload(t)});
  const TensorDesc& out = l.desc[planned->outputs[0].id];
  HostArray got = HostArray::zeros(out.dtype, out.shape).value();
  DeviceBuffer out_buffer = DeviceBuffer::allocate(std::max<size_t>(got.byte_size(), 1), "step output").value();
  buffers.outputs.push_back({out.dtype, out.shape, cu::Layout::kLinear, out_buffer.data()});

  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  const cu::TacticFamily* family = cu::tactic_families().find("cudnn.qconv");
  ASSERT_NE(family, nullptr);
  auto candidates = family->candidates(*step, ctx, 8);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  bool explicit_seen = false, fused_seen = false;
  for (const auto& tactic : *candidates) {
    ASSERT_TRUE(tactic->initialize(*step, ctx).is_ok()) << tactic->name() << ": " << tactic->initialize(*step, ctx).to_string();
    explicit_seen |= tactic->name().find("#explicit") != std::string::npos;
    fused_seen |= tactic->name().find("#fused") != std::string::npos;
    const size_t bytes = tactic->workspace_size(*step);
    DeviceBuffer workspace = DeviceBuffer::allocate(std::max<size_t>(bytes, 1), "workspace").value();
    buffers.workspace = workspace.data();
    buffers.workspace_bytes = bytes;
    CUDA_OK(cudaMemset(out_buffer.data(), 0xFF, got.byte_size()));
    const Status ran = tactic->run(*step, buffers, ctx);
    ASSERT_TRUE(ran.is_ok()) << tactic->name() << ": " << ran.to_string();
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got.data(), out_buffer.data(), got.byte_size(), cudaMemcpyDeviceToHost));
    const std::string why = mismatch(c, inputs.at("x"), got, ref);
    EXPECT_TRUE(why.empty()) << c.params() << " candidate " << tactic->name() << ": " << why;
  }
  EXPECT_TRUE(explicit_seen && fused_seen) << c.params() << ": the family offered only one path";
}

// The channels-last path on the GPU: conv2 reads the int8/fp8 tensor conv1's step wrote
// channels-last and its KRSC weight without packing them. The intermediate quantize may land one
// code away from the reference's, so y is held to a relative L2 of 1e-2 (a layout error is ~1).
TEST(QuantizedConvChainOnGpu, TwoFusedConvolutionsInARowMatchTheCpuReference) {
  TO_SKIP_WITHOUT_GPU();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  for (const DataType format : {kI8, kF8}) {
    if (format == kF8 && device->compute_capability() < 89) continue;
    const Network net = chained_convolutions(format);
    const NamedArrays inputs = seeded_inputs(net, 5, -2, 2).value();
    const Dims shape{2, 32, 8, 8};
    cu::PlanOptions level0;
    level0.optimization_level = 0;
    auto plan = cu::make_cuda_plan(net, {{{"x", ShapeRange{shape, shape, shape}}}}, level0, nullptr);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    for (const cu::PlannedStep& s : plan->steps) {
      if (plan->network.node(s.anchor).name != "conv2") continue;
      EXPECT_EQ(s.family, "cudnn.qconv") << s.tactic << joined(plan->log);
      EXPECT_NE(s.tactic.find("#fused"), std::string::npos) << s.tactic << joined(plan->log);
      EXPECT_EQ(s.input_layouts[0], cu::Layout::kNhwc) << joined(plan->log);
    }
    auto got = backends::create_backend("cuda").value()->execute(net, views(inputs));
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    auto want = backends::create_backend(backends::kReferenceBackend).value()->execute(net, views(inputs));
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    auto cmp = compare_outputs(got->at("y").view(), want->at("y").view(), 0, 0);
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_LE(cmp->rel_l2_error, 1e-2) << data_type_name(format) << ": max abs error " << cmp->max_abs_error;
  }
}

std::string case_name(const ::testing::TestParamInfo<C>& info) {
  std::string name = info.param.params();
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, QuantizedConvOnGpu, ::testing::ValuesIn(fusable_cases()), case_name);

}  // namespace
}  // namespace tensoracle::testing
