// Q/DQ fusion into cuBLASLt matmuls ("cublaslt.qmatmul", src/backends/cuda/cublaslt/qmatmul_plan.h).
//
// - QuantizedMatmulLowering (no GPU needed): which layers the planner puts into one fused step,
//   and the build-log line naming the layer and the reason where it keeps Q/DQ explicit.
// - QuantizedMatmulOnGpu: the whole cuda backend (planning, tactic timing between the fused and
//   the explicit path, execution) against the CPU reference's explicit Q/DQ semantics, and the
//   plan shows the fused family took the layer. Bounds (docs/cuda-backend.md "Q/DQ fusion"):
//   fp32 1e-5 abs + rel (int8 is exact in int32; only where the scales multiply differs; fp8
//   1.2e-4, its tensor cores' accumulation), fp16
//   2e-3, bf16 2e-2 (the reference rounds each dequantized operand to that type first), a
//   trailing int8 quantize within 1 code, fp8 within one fp8 step (1/8 relative, 1/64 abs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/plan_lowering.h"
#include "backends/cuda/planned_step.h"
#include "backends/cuda/planner.h"
#include "backends/plan_network.h"
#include "backends/registry.h"
#include "gpu/gpu_testing.h"
#include "host/ops/quantized_matmul_case.h"
#include "passes/passes.h"
#include "tensoracle/compare.h"

namespace tensoracle::testing {
namespace {

namespace cu = backends::cuda;
using Q = QuantizedMatmulCase;
constexpr DataType kI8 = DataType::kInt8, kF8 = DataType::kFloat8E4M3, kF32 = DataType::kFloat32,
                   kF16 = DataType::kFloat16, kBF16 = DataType::kBFloat16;

Network network_of(const Q& c) {
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

// What lowering made of a case's network on a device of compute capability `cc`.
struct Lowered {
  Network net;
  std::vector<TensorDesc> desc;
  std::vector<cu::PlannedStep> steps;
  std::vector<std::string> log;

  // The names of the layers the step anchored at `anchor` computes.
  std::vector<std::string> layers_of(const std::string& anchor) const {
    for (const cu::PlannedStep& s : steps)
      if (net.node(s.anchor).name == anchor) {
        std::vector<std::string> names;
        for (size_t n : s.nodes()) names.push_back(net.node(n).name);
        return names;
      }
    return {};
  }
  const cu::PlannedStep* step_of(const std::string& anchor) const {
    for (const cu::PlannedStep& s : steps)
      if (net.node(s.anchor).name == anchor) return &s;
    return nullptr;
  }
  bool logged(const std::string& text) const {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
};

Lowered lower(const Q& c, int cc) {
  Lowered out;
  auto optimized = passes::optimize_for_inference(network_of(c), &out.log);
  EXPECT_TRUE(optimized.is_ok()) << optimized.status().to_string();
  if (!optimized.is_ok()) return out;
  out.net = std::move(optimized).value();
  auto desc = backends::infer_tensor_descs(out.net, {{"x", Dims(c.x)}});
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

TEST(QuantizedMatmulLowering, Int8TakesBothDequantizesTheEpilogueAndTheTrailingQuantize) {
  const Q c = Q::of(kI8, kF32, {32, 64}, 48).per_output_channel().with_bias().then(ActivationKind::kRelu).quantized_to(kI8);
  const Lowered l = lower(c, 90);
  const std::vector<std::string> layers = l.layers_of("fc1");
  for (const char* name : {"x_dq", "w_dq", "y_q"})
    EXPECT_TRUE(contains(layers, name)) << name << " is not in the fused step of fc1; the step computes "
                                        << ::testing::PrintToString(layers) << "; build log:" << joined(l.log);
  EXPECT_EQ(layers.size(), 6u) << "fc1 + x_dq + w_dq + add + relu + y_q expected, got " << ::testing::PrintToString(layers)
                               << joined(l.log);
  EXPECT_FALSE(l.logged("kept explicit")) << joined(l.log);
  EXPECT_TRUE(l.logged("transpose_dequantized_weights: 1 quantized weight(s) stored transposed")) << joined(l.log);
}

TEST(QuantizedMatmulLowering, Fp8TakesTheEpilogueAndTheTrailingQuantize) {
  const Q c = Q::of(kF8, kF16, {1, 64}, 32).with_bias().then(ActivationKind::kGeluTanh).quantized_to(kF8);
  const Lowered l = lower(c, 90);
  const std::vector<std::string> layers = l.layers_of("fc1");
  EXPECT_EQ(layers.size(), 6u) << "fc1 + x_dq + w_dq + add + gelu_tanh + y_q expected, got "
                               << ::testing::PrintToString(layers) << joined(l.log);
  EXPECT_TRUE(contains(layers, "y_q")) << joined(l.log);
}

// A shape cuBLASLt's int8 kernels cannot take stays explicit, and the log says which layer and why.
TEST(QuantizedMatmulLowering, Int8WithKNotAMultipleOf4StaysExplicitAndTheLogSaysWhy) {
  const Lowered l = lower(Q::of(kI8, kF32, {4, 30}, 16).with_bias(), 90);
  EXPECT_FALSE(contains(l.layers_of("fc1"), "x_dq")) << ::testing::PrintToString(l.layers_of("fc1"));
  EXPECT_FALSE(l.layers_of("x_dq").empty()) << "x_dq should be a step of its own";
  EXPECT_TRUE(l.logged("fc1: Q/DQ kept explicit:") && l.logged("K = 30 and N = 16 must be multiples of 4"))
      << "build log:" << joined(l.log);
}

TEST(QuantizedMatmulLowering, Fp8NeedsComputeCapability89) {
  const Lowered l = lower(Q::of(kF8, kF16, {32, 64}, 32), 80);
  EXPECT_FALSE(contains(l.layers_of("fc1"), "x_dq"));
  EXPECT_TRUE(l.logged("fc1: Q/DQ kept explicit:") && l.logged("fp8 e4m3 needs compute capability 8.9 or newer, this GPU is 8.0"))
      << "build log:" << joined(l.log);
}

TEST(QuantizedMatmulLowering, Fp8PerChannelWeightScalesFuseThroughTheEpilogueKernel) {
  const Lowered l = lower(Q::of(kF8, kF16, {32, 64}, 32).per_output_channel().with_bias(), 90);
  EXPECT_TRUE(contains(l.layers_of("fc1"), "w_dq")) << joined(l.log);
  EXPECT_EQ(l.layers_of("fc1").size(), 4u) << ::testing::PrintToString(l.layers_of("fc1")) << joined(l.log);
}

TEST(QuantizedMatmulLowering, Fp8PerChannelActivationScalesStayExplicit) {
  Network net;
  const Tensor x = net.dequantize(net.add_input("x", kF8, {4, 32}), net.add_constant(random_array(kF32, {32}, 3, 0.1, 0.2)),
                                  DequantizeAttributes().set_output_type(kF16).set_axis(1).set_name("x_dq"));
  const Tensor w = net.dequantize(net.add_constant(random_array(kF8, {16, 32}, 4, -2, 2)), net.add_constant(random_array(kF32, {}, 5, 0.1, 0.2)),
                                  DequantizeAttributes().set_output_type(kF16).set_name("w_dq"));
  net.mark_output(net.matmul(x, w, MatMulAttributes().set_transpose_b(true).set_name("fc1")), "y");
  std::vector<std::string> log;
  cu::DeviceInfo device;
  device.cc_major = 9;
  const auto desc = backends::infer_tensor_descs(net, {{"x", Dims({4, 32})}}).value();
  const auto steps = cu::lower_to_steps(net, desc, device, &log);
  const bool explained = std::any_of(log.begin(), log.end(), [](const std::string& line) {
    return line.find("fc1: Q/DQ kept explicit:") != std::string::npos && line.find("per-channel") != std::string::npos;
  });
  EXPECT_TRUE(explained) << "build log:" << joined(log);
  EXPECT_EQ(steps.size(), 3u) << "x_dq, w_dq and fc1 as steps of their own";
}

TEST(QuantizedMatmulLowering, Int8PerChannelWeightScalesFuse) {
  const Lowered l = lower(Q::of(kI8, kF16, {1, 64}, 32).per_output_channel(), 90);
  EXPECT_TRUE(contains(l.layers_of("fc1"), "w_dq")) << joined(l.log);
}

// The examples' form (examples/quantization/qdq.h): Q -> DQ in the graph on the activation and
// on an fp32 weight [N, K] (nn.Linear's layout, per output channel), then the bias.
TEST(QuantizedMatmulLowering, AWeightQuantizedInTheGraphFoldsAndTheLinearLayerFuses) {
  for (const DataType format : {kI8, kF8}) {
    Network net;
    const auto constant = [&](Dims shape, double low, double high) {
      return net.add_constant(random_array(kF32, std::move(shape), 21, low, high));
    };
    const Tensor sx = constant({}, 0.01, 0.02), sw = constant({32}, 0.001, 0.01);
    Tensor x = net.add_input("x", kF32, {8, 64});
    x = net.dequantize(net.quantize(x, sx, QuantizeAttributes().set_output_type(format).set_name("x_q")), sx,
                       DequantizeAttributes().set_name("x_dq"));
    const Tensor w = net.dequantize(net.quantize(constant({32, 64}, -0.5, 0.5), sw,
                                                 QuantizeAttributes().set_output_type(format).set_axis(0).set_name("w_q")),
                                    sw, DequantizeAttributes().set_axis(0).set_name("w_dq"));
    Tensor y = net.matmul(x, w, MatMulAttributes().set_transpose_b(true).set_name("fc1"));
    net.mark_output(net.add(y, constant({32}, -1, 1)), "y");
    Lowered l;
    auto optimized = passes::optimize_for_inference(net, &l.log);
    ASSERT_TRUE(optimized.is_ok()) << optimized.status().to_string();
    l.net = std::move(optimized).value();
    l.desc = backends::infer_tensor_descs(l.net, {{"x", Dims({8, 64})}}).value();
    cu::DeviceInfo device;
    device.cc_major = 9;
    l.steps = cu::lower_to_steps(l.net, l.desc, device, &l.log);
    const std::vector<std::string> layers = l.layers_of("fc1");
    EXPECT_TRUE(contains(layers, "w_dq") && contains(layers, "x_dq"))
        << data_type_name(format) << ": " << ::testing::PrintToString(layers) << joined(l.log);
    EXPECT_TRUE(l.logged("fold_constant_quantize: 1 quantize layer(s) of constants folded")) << joined(l.log);
    EXPECT_TRUE(l.layers_of("w_q").empty()) << "w_q still runs as a step: " << joined(l.log);
  }
}

// ---- on the GPU ----

HostArray seeded_input(const Q& c) {
  NamedArrays inputs = seeded_inputs(network_of(c), 77, c.low(), c.high()).value();
  return std::move(inputs.at("x"));
}

// fp8 with an fp32 output: Hopper's fp8 tensor-core MMA is reported to keep about 14 bits while
// it accumulates within a k-block (cuBLASLt adds the blocks in fp32), so 2^-13 relative there.
Tolerance tolerance_of(DataType type, DataType quantized) {
  switch (type) {
    case kF32: return quantized == kF8 ? Tolerance{1e-4, 1.2e-4} : Tolerance{1e-5, 1e-5};
    case kF16: return {2e-3, 2e-3};
    case kBF16: return {2e-2, 2e-2};
    case kI8: return {1, 0};
    case kF8: return {1.0 / 64, 0.125};
    default: return {0, 0};
  }
}

class QuantizedMatmulOnGpu : public ::testing::TestWithParam<Q> {};

TEST_P(QuantizedMatmulOnGpu, FusedAndMatchesTheCpuReference) {
  TO_SKIP_WITHOUT_GPU();
  const Q& c = GetParam();
  const Network net = network_of(c);
  const HostArray x = seeded_input(c);

  // How it was planned: fc1's step is the fused family's, taking the dequantize layers.
  const OptimizationProfile profile{{"x", ShapeRange{Dims(c.x), Dims(c.x), Dims(c.x)}}};
  auto plan = cu::make_cuda_plan(net, {profile}, cu::PlanOptions{}, nullptr);
  ASSERT_TRUE(plan.is_ok()) << c.params() << ": " << plan.status().to_string();
  const cu::PlannedStep* fc1 = nullptr;
  for (const cu::PlannedStep& s : plan->steps)
    if (plan->network.node(s.anchor).name == "fc1") fc1 = &s;
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->family, "cublaslt.qmatmul") << c.params() << ": fc1 ran as " << fc1->tactic
                                             << " (not Q/DQ-fused); build log:" << joined(plan->log);
  std::cout << "[ info ] " << c.params() << ": fc1 -> " << fc1->tactic << " " << fc1->time_ms << " ms, " << fc1->nodes().size()
            << " layers in the step\n";

  auto cuda = backends::create_backend("cuda").value();
  auto cpu = backends::create_backend(backends::kReferenceBackend).value();
  const NamedArrayViews inputs{{"x", x.view()}};
  auto got = cuda->execute(net, inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto want = cpu->execute(net, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const HostArray& y = got->at("y");
  const HostArray& ref = want->at("y");
  ASSERT_EQ(y.dtype(), ref.dtype());
  const Tolerance tol = tolerance_of(ref.dtype(), c.quantized);
  auto cmp = compare_outputs(y.view(), ref.view(), tol.atol, tol.rtol);
  ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
      << c.params() << " (" << fc1->tactic << "): " << cmp->tolerance_check->outside_count << " of " << ref.element_count()
      << " elements outside atol " << tol.atol << " rtol " << tol.rtol << "; max abs error " << cmp->max_abs_error
      << ", rel L2 " << cmp->rel_l2_error;
}

// Every candidate of the family -- the explicit path and the fused one, at each heuristic rank --
// run directly on device copies of the fused step's inputs, against the CPU reference's value of
// the tensor the step writes.
TEST_P(QuantizedMatmulOnGpu, EveryCandidateOfBothPathsMatchesTheCpuReference) {
  TO_SKIP_WITHOUT_GPU();
  const Q& c = GetParam();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  const Lowered l = lower(c, device->compute_capability());
  const cu::PlannedStep* planned = l.step_of("fc1");
  ASSERT_NE(planned, nullptr);
  ASSERT_TRUE(contains(l.layers_of("fc1"), "x_dq")) << c.params() << ": fc1 is not Q/DQ-fused; build log:" << joined(l.log);
  auto step = cu::instantiate(l.net, *planned, l.desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();

  // The reference: the optimized network with the step's output marked.
  const HostArray x = seeded_input(c);
  Network reference_net = l.net;
  const Tensor written = planned->outputs[0];
  const bool is_y = reference_net.outputs()[0].id == written.id;
  if (!is_y) reference_net.mark_output(written, "step_output");
  auto cpu = backends::create_backend(backends::kReferenceBackend).value();
  auto want = cpu->execute(reference_net, {{"x", x.view()}});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const HostArray& ref = want->at(is_y ? "y" : "step_output");

  // Device copies of the step's inputs: the network input x or the constants.
  std::vector<DeviceBuffer> held;
  const auto upload = [&](Tensor t) -> void* {
    const int64_t producer = l.net.tensor(t).producer;
    const ArrayView view = producer >= 0 ? l.net.node(static_cast<size_t>(producer)).constant->view : x.view();
    DeviceBuffer b = DeviceBuffer::allocate(std::max<size_t>(view.byte_size(), 1), "step input").value();
    EXPECT_EQ(cudaMemcpy(b.data(), view.data, view.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    held.push_back(std::move(b));
    return held.back().data();
  };
  cu::StepBuffers buffers;
  for (Tensor t : planned->inputs) buffers.inputs.push_back({l.desc[t.id].dtype, l.desc[t.id].shape, cu::Layout::kLinear, upload(t)});
  for (Tensor t : planned->extra_inputs)
    buffers.extra_inputs.push_back({l.desc[t.id].dtype, l.desc[t.id].shape, cu::Layout::kLinear, upload(t)});
  const TensorDesc& out = l.desc[written.id];
  HostArray got = HostArray::zeros(out.dtype, out.shape).value();
  DeviceBuffer out_buffer = DeviceBuffer::allocate(std::max<size_t>(got.byte_size(), 1), "step output").value();
  buffers.outputs.push_back({out.dtype, out.shape, cu::Layout::kLinear, out_buffer.data()});

  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  const cu::TacticFamily* family = cu::tactic_families().find("cublaslt.qmatmul");
  ASSERT_NE(family, nullptr);
  auto candidates = family->candidates(*step, ctx, 8);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  bool explicit_seen = false, fused_seen = false;
  for (const auto& tactic : *candidates) {
    explicit_seen |= tactic->name().find("#explicit") != std::string::npos;
    fused_seen |= tactic->name().find("#fused") != std::string::npos;
    DeviceBuffer workspace = DeviceBuffer::allocate(std::max<size_t>(tactic->workspace_size(*step), 1), "workspace").value();
    buffers.workspace = workspace.data();
    buffers.workspace_bytes = tactic->workspace_size(*step);
    CUDA_OK(cudaMemset(out_buffer.data(), 0xFF, got.byte_size()));
    const Status ran = tactic->run(*step, buffers, ctx);
    ASSERT_TRUE(ran.is_ok()) << tactic->name() << ": " << ran.to_string();
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got.data(), out_buffer.data(), got.byte_size(), cudaMemcpyDeviceToHost));
    const Tolerance tol = tolerance_of(ref.dtype(), c.quantized);
    auto cmp = compare_outputs(got.view(), ref.view(), tol.atol, tol.rtol);
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
        << c.params() << " candidate " << tactic->name() << ": " << cmp->tolerance_check->outside_count << " of "
        << ref.element_count() << " elements outside atol " << tol.atol << " rtol " << tol.rtol << "; max abs error "
        << cmp->max_abs_error << ", rel L2 " << cmp->rel_l2_error;
  }
  EXPECT_TRUE(explicit_seen && fused_seen) << c.params() << ": the family offered only one path";
}

std::vector<Q> gpu_cases() {
  const auto relu = ActivationKind::kRelu, gelu = ActivationKind::kGeluTanh;
  return {
      // fp8 per-tensor: without / with bias, relu, gelu; without / with a trailing quantize.
      Q::of(kF8, kF16, {1, 64}, 32),
      Q::of(kF8, kF16, {32, 128}, 64).with_bias(),
      Q::of(kF8, kBF16, {32, 64}, 48).with_bias().then(relu),
      Q::of(kF8, kF16, {1, 256}, 128).with_bias().then(gelu),
      Q::of(kF8, kF16, {32, 64}, 32).with_bias().then(gelu).quantized_to(kF8),
      Q::of(kF8, kBF16, {1, 64}, 32).with_bias().then(relu).quantized_to(kF8),
      Q::of(kF8, kF16, {32, 64}, 32).quantized_to(kI8),
      Q::of(kF8, kF32, {32, 64}, 32),
      Q::of(kF8, kF32, {32, 64}, 32).with_bias(),  // fp32 + bias: the epilogue kernel
      // fp8 with per-channel weight scales: the fp32 accumulator through the epilogue kernel.
      Q::of(kF8, kF16, {1, 64}, 32).per_output_channel(),
      Q::of(kF8, kBF16, {32, 128}, 64).stored_nk().per_output_channel().with_bias().then(gelu).quantized_to(kF8),
      // int8: per-tensor and per-channel weights, batch 1 and 32 rows.
      Q::of(kI8, kF32, {1, 64}, 32),
      Q::of(kI8, kF32, {32, 64}, 48).per_output_channel(),
      Q::of(kI8, kF16, {32, 128}, 64).per_output_channel().with_bias().then(relu),
      Q::of(kI8, kBF16, {1, 64}, 32).with_bias().then(gelu),
      Q::of(kI8, kF16, {2, 16, 64}, 32).stored_nk().per_output_channel().with_bias().quantized_to(kI8),
      Q::of(kI8, kF32, {32, 64}, 32).with_bias().then(relu).quantized_to(kF8),
      // A BERT-base shape: [32 rows, 768] x [768, 3072].
      Q::of(kI8, kF16, {32, 768}, 3072).per_output_channel().with_bias().then(gelu),
      Q::of(kF8, kF16, {32, 768}, 3072).with_bias().then(gelu),
  };
}

std::string case_name(const ::testing::TestParamInfo<Q>& info) {
  std::string name = info.param.params();
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, QuantizedMatmulOnGpu, ::testing::ValuesIn(gpu_cases()), case_name);

}  // namespace
}  // namespace tensoracle::testing
