// Q/DQ fusion into cuDNN convolutions ("cudnn.qconv", src/backends/cuda/cudnn/qconv_plan.h) on
// the GPU: the whole cuda backend against the CPU reference's explicit Q/DQ semantics, with the
// plan showing that the fused path ran; every candidate of both paths run directly on the step;
// two fused convolutions in a row (the channels-last path). Bounds: qconv_testing.h. Without a
// GPU these skip; qconv_lowering_test.cpp has what runs anywhere.
#include <iostream>

#include "backends/cuda/cudnn/cudnn_conv_graph.h"
#include "backends/cuda/plan_layouts.h"
#include "backends/cuda/planner.h"
#include "gpu/gpu_testing.h"
#include "gpu/qconv_testing.h"
#include "host/models/state_dicts.h"
#include "resnet50/resnet50.h"

namespace tensoracle::testing {
namespace {

using namespace qconv;  // NOLINT(google-build-using-namespace): the shared test helpers

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
  const NamedArrays inputs = seeded(c);
  auto want = backends::create_backend(backends::kReferenceBackend).value()->execute(l.net, views(inputs));
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const HostArray& ref = want->at("y");
  const std::vector<double> sums = abs_product_sums(c, inputs.at("x"));
  expect_every_candidate_matches(l, *planned, "cudnn.qconv", inputs, c.params(),
                                 [&](const HostArray& got) { return mismatch(c, sums, got, ref); });
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

// An image stem in fp16 (3 input channels): the explicit path is also offered with its
// dequantized operands channel-padded to 8; the choice records it and replays to the same tactic,
// and a choice that pads another way, or pads another path, is refused.
TEST(QuantizedConvStemOnGpu, PaddedExplicitChoiceIsOfferedAndReplays) {
  TO_SKIP_WITHOUT_GPU();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  const C c = C::of(kI8, kF16, {2, 3, 20, 20}, 16).window(7, 2, 1).per_output_channel().with_bias().then(kRelu);
  const Lowered l = lower(c, device->compute_capability());
  const cu::PlannedStep* planned = l.step_of("conv1");
  ASSERT_NE(planned, nullptr);
  auto step = cu::instantiate(l.net, *planned, l.desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  const cu::TacticFamily* family = cu::tactic_families().find("cudnn.qconv");
  ASSERT_NE(family, nullptr);
  auto candidates = family->candidates(*step, ctx, 8);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  const cu::CudaTactic* padded = nullptr;
  for (const auto& tactic : *candidates)
    if (tactic->name().find("+pad8") != std::string::npos && padded == nullptr) padded = tactic.get();
  ASSERT_NE(padded, nullptr) << "no channel-padded explicit candidate for a 3-channel fp16 stem";
  const nlohmann::json choice = padded->choice();
  EXPECT_EQ(choice.at("path"), "explicit");
  EXPECT_EQ(choice.at("pad_channels"), 8);

  auto replayed = family->replay(*step, choice);
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().to_string();
  EXPECT_EQ((*replayed)->name(), padded->name());
  const Status initialized = (*replayed)->initialize(*step, ctx);
  EXPECT_TRUE(initialized.is_ok()) << initialized.to_string();
  nlohmann::json other_padding = choice;
  other_padding["pad_channels"] = 4;
  EXPECT_FALSE(family->replay(*step, other_padding).is_ok());
  nlohmann::json other_path = choice;
  other_path["path"] = "fused";
  EXPECT_FALSE(family->replay(*step, other_path).is_ok());
}

// The graph path (qconv_plan.h) on the examples' int8 ResNet-50 steps, laid out channels-last
// as the planner stores them (width 16 keeps the seeded weights small): the accumulator graph
// the fused path runs builds for every step, and cuDNN's answer for the whole-step graph is
// printed per step kind, so the build's choice between the paths can be read against it.
TEST(QuantizedConvGraphPathOnGpu, CudnnAnswersForEveryResNet50Step) {
  TO_SKIP_WITHOUT_GPU();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  resnet50::Config cfg;
  cfg.width = 16;
  cfg.quantization = kI8;
  TempDir dir;
  const Weights weights = write_weights(dir, random_state_dict(resnet_state_dict(cfg), 3), "weights.safetensors");
  Network defined;
  ASSERT_TRUE(resnet50::define(defined, Weights::with_unit_placeholders(weights), {8, 3, 64, 64}, kF16, cfg).is_ok())
      << defined.status().to_string();
  std::vector<std::string> log;
  auto net = passes::optimize_for_inference(defined, &log);
  ASSERT_TRUE(net.is_ok()) << net.status().to_string();
  const auto desc = backends::infer_tensor_descs(*net, {{resnet50::kInput, Dims({8, 3, 64, 64})}}).value();
  std::vector<cu::PlannedStep> steps = cu::lower_to_steps(*net, desc, *device, &log);
  cu::assign_layouts(*net, steps, desc, *device, log);
  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  std::map<std::string, int> answers;
  int steps_seen = 0;
  for (const cu::PlannedStep& planned : steps) {
    if (net->node(planned.anchor).kind != OpKind::kConvolution) continue;
    auto step = cu::instantiate(*net, planned, desc);
    ASSERT_TRUE(step.is_ok()) << step.status().to_string();
    auto plan = cu::plan_quantized_conv(*step, device->compute_capability());
    ASSERT_TRUE(plan.is_ok()) << net->node(planned.anchor).name << ": " << plan.status().to_string();
    ++steps_seen;
    auto accumulator = cu::CudnnConvGraph::build_quantized(*plan, /*whole_step=*/false, ctx.cudnn);
    ASSERT_TRUE(accumulator.is_ok()) << net->node(planned.anchor).name << ": " << accumulator.status().to_string();
    EXPECT_TRUE((*accumulator)->plans(1).is_ok()) << net->node(planned.anchor).name;
    auto whole = cu::CudnnConvGraph::build_quantized(*plan, /*whole_step=*/true, ctx.cudnn);
    Status offered = whole.status();
    if (whole.is_ok()) offered = (*whole)->plans(1).status();
    const std::string kind = fmt::format("{} epilogue op(s), {}, output {}", plan->epilogue.ops.size(),
                                         plan->requantize ? "requantized" : "not requantized",
                                         planned.output_layouts[0] == cu::Layout::kNhwc ? "nhwc" : "linear");
    ++answers[kind + ": " + (offered.is_ok() ? std::string("offered") : offered.message())];
  }
  EXPECT_EQ(steps_seen, 53);
  for (const auto& [answer, count] : answers) std::cout << "[ info ] " << count << " step(s), " << answer << "\n";
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
