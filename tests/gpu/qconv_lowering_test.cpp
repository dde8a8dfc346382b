// Q/DQ fusion into cuDNN convolutions ("cudnn.qconv", src/backends/cuda/cudnn/qconv_plan.h),
// without a GPU:
// - QuantizedConvLowering: which layers the planner puts into conv1's step, the build-log line
//   naming the layer and the reason where it keeps Q/DQ explicit, the channels-last quantized
//   tensors between fused convolutions, the examples' ResNet-50.
// - QuantizedConvArithmetic: the fused path's arithmetic emulated on the host is within the bound
//   of qconv_testing.h, and a 1 % error is not.
#include <algorithm>

#include "backends/cuda/plan_layouts.h"
#include "gpu/qconv_testing.h"
#include "host/models/state_dicts.h"
#include "resnet50/resnet50.h"

namespace tensoracle::testing {
namespace {

using namespace qconv;  // NOLINT(google-build-using-namespace): the shared test helpers

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

// A convolution without bias: the step's input list keeps the omitted bias as an invalid tensor,
// and the step's description of it is "no buffer" (a null description), never a read past the
// network's tensors (which the tactic timer once made).
TEST(QuantizedConvLowering, AnOmittedBiasIsANullInputDescription) {
  const Lowered l = lower(C::of(kI8, kF32, {1, 16, 8, 8}, 16), 90);
  const cu::PlannedStep* step = l.step_of("conv1");
  ASSERT_NE(step, nullptr);
  auto inst = cu::instantiate(l.net, *step, l.desc);
  ASSERT_TRUE(inst.is_ok()) << inst.status().to_string();
  ASSERT_TRUE(inst->fuses_quantization());
  ASSERT_EQ(inst->quantization.inputs.size(), step->inputs.size());
  bool omitted = false;
  for (size_t i = 0; i < step->inputs.size(); ++i) {
    const TensorDesc* d = inst->quantization.inputs[i];
    if (!step->inputs[i].valid()) {
      omitted = true;
      EXPECT_EQ(d, nullptr) << "input " << i;
    } else {
      EXPECT_EQ(d, &l.desc[step->inputs[i].id]) << "input " << i;
    }
  }
  EXPECT_TRUE(omitted) << "conv1's step lists no omitted bias";
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
// every quantized convolution input is channels-last but the stem's (so the fused path packs no
// copy of them; the quantize kernels of the block inputs write channels-last too), the max pool's
// output included, though only quantize steps read it. Width 16 instead of 64 keeps the seeded
// weights small; every channel count stays a multiple of 16.
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
    // Every convolution reads channels-last, the stem too: the image's cast and quantize are one
    // pointwise step that writes the quantized image channels-last.
    EXPECT_EQ(linear_inputs, std::vector<std::string>{}) << what;
    const cu::PlannedStep& image = steps.front();
    ASSERT_TRUE(image.is_pointwise_chain(*net)) << what;
    ASSERT_EQ(image.fused.size(), 2u) << what;
    EXPECT_EQ(net->node(image.fused[1]).kind, OpKind::kQuantize) << what;
    EXPECT_EQ(image.output_layouts[0], cu::Layout::kNhwc) << what;
    // The pool reads and writes channels-last (mixed, it would run a strided kernel: 0.39 ms
    // against 0.045 ms at width 64 on an H100, docs/perf/gpu-log.md 2026-12-06).
    const auto pool = std::find_if(steps.begin(), steps.end(),
                                   [&](const cu::PlannedStep& s) { return net->node(s.anchor).kind == OpKind::kPooling; });
    ASSERT_NE(pool, steps.end());
    EXPECT_EQ(pool->input_layouts[0], cu::Layout::kNhwc) << what;
    EXPECT_EQ(pool->output_layouts[0], cu::Layout::kNhwc) << what;
    for (const std::string& line : log)
      if ((line.find("kept explicit") != std::string::npos || line.find("not fused") != std::string::npos) &&
          (line.rfind("conv", 0) == 0 || line.rfind("layer", 0) == 0))
        ADD_FAILURE() << data_type_name(format) << ": " << line;
  }
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
}  // namespace
}  // namespace tensoracle::testing
