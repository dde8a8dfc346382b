// What the tests of Q/DQ-fused cuda steps share (qmatmul_test.cpp, qconv_testing.h): a network
// lowered to steps for a device of a given compute capability, the questions asked of it (which
// layers a step computes, what the build log says), and every candidate of a tactic family run
// directly on device copies of one step's inputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "backends/cuda/plan_lowering.h"
#include "backends/cuda/planned_step.h"
#include "backends/plan_network.h"
#include "gpu/gpu_testing.h"
#include "passes/passes.h"

namespace tensoracle::testing::fused_step {

namespace cu = backends::cuda;

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "\n  " + l;
  return out;
}

inline bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What lowering made of a network: its optimized form, the tensors' descriptions, the steps and
// the build log.
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
  // The names of the layers the step anchored at `anchor` computes.
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

inline Lowered lower(Network network, const std::map<std::string, Dims>& input_shapes, int cc) {
  Lowered out;
  auto optimized = passes::optimize_for_inference(network, &out.log);
  EXPECT_TRUE(optimized.is_ok()) << optimized.status().to_string();
  if (!optimized.is_ok()) return out;
  out.net = std::move(optimized).value();
  auto desc = backends::infer_tensor_descs(out.net, input_shapes);
  EXPECT_TRUE(desc.is_ok()) << desc.status().to_string();
  if (!desc.is_ok()) return out;
  cu::DeviceInfo device;
  device.cc_major = cc / 10;
  device.cc_minor = cc % 10;
  out.desc = std::move(desc).value();
  out.steps = cu::lower_to_steps(out.net, out.desc, device, &out.log);
  return out;
}

// Runs every candidate `family` offers for `planned` (at most 8) on device copies of the step's
// inputs -- the constants of `l.net`, network inputs from `network_inputs` -- into a poisoned
// output buffer, and hands each result to `mismatch` ("" when it is right). Each of `paths`
// (a fused family's: "#explicit" and "#fused", in the tactic names) must be among the candidates.
// `fp8_fast_accumulation`: the step as a build that allows it instantiates it (StepInstance).
inline void expect_every_candidate_matches(const Lowered& l, const cu::PlannedStep& planned, const std::string& family,
                                           const NamedArrays& network_inputs, const std::string& label,
                                           const std::function<std::string(const HostArray&)>& mismatch,
                                           bool fp8_fast_accumulation = false,
                                           const std::vector<std::string>& paths = {"#explicit", "#fused"}) {
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  auto step = cu::instantiate(l.net, planned, l.desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  step->fp8_fast_accumulation = fp8_fast_accumulation;

  std::vector<DeviceBuffer> held;
  const auto upload = [&](Tensor t) -> cu::DeviceTensor {
    if (!t.valid()) return {};  // an omitted optional input (a convolution without bias)
    const int64_t producer = l.net.tensor(t).producer;
    const ArrayView view = producer >= 0 ? l.net.node(static_cast<size_t>(producer)).constant->view
                                         : network_inputs.at(l.net.tensor(t).name).view();
    DeviceBuffer b = DeviceBuffer::allocate(std::max<size_t>(view.byte_size(), 1), "step input").value();
    EXPECT_EQ(cudaMemcpy(b.data(), view.data, view.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    held.push_back(std::move(b));
    return {l.desc[t.id].dtype, l.desc[t.id].shape, cu::Layout::kLinear, held.back().data()};
  };
  cu::StepBuffers buffers;
  for (Tensor t : planned.inputs) buffers.inputs.push_back(upload(t));
  for (Tensor t : planned.extra_inputs) buffers.extra_inputs.push_back(upload(t));
  const TensorDesc& out = l.desc[planned.outputs[0].id];
  HostArray got = HostArray::zeros(out.dtype, out.shape).value();
  DeviceBuffer out_buffer = DeviceBuffer::allocate(std::max<size_t>(got.byte_size(), 1), "step output").value();
  buffers.outputs.push_back({out.dtype, out.shape, cu::Layout::kLinear, out_buffer.data()});

  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  const cu::TacticFamily* tactics = cu::tactic_families().find(family);
  ASSERT_NE(tactics, nullptr) << family;
  auto candidates = tactics->candidates(*step, ctx, 8);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  std::string names;
  for (const auto& tactic : *candidates) names += " " + tactic->name();
  std::cout << "[ info ] " << label << ": candidates" << names << "\n";
  for (const auto& tactic : *candidates) {
    const Status initialized = tactic->initialize(*step, ctx);
    ASSERT_TRUE(initialized.is_ok()) << tactic->name() << ": " << initialized.to_string();
    if (fp8_fast_accumulation && tactic->name().find("#fused") != std::string::npos) {
      // "#fused_fast3", "#fused_vector_fast0": every fused path takes the mode.
      EXPECT_NE(tactic->name().find("_fast"), std::string::npos) << label << ": " << tactic->name() << " accumulates in fp32";
    }
    const size_t bytes = tactic->workspace_size(*step);
    // As the runtime and the tactic timer give it: no pointer at all when the tactic asks for no
    // bytes (a graph-path candidate refused such a step at every build until 8b06b3a).
    DeviceBuffer workspace = bytes ? DeviceBuffer::allocate(bytes, "workspace").value() : DeviceBuffer();
    buffers.workspace = workspace.data();
    buffers.workspace_bytes = bytes;
    const Status prepared = tactic->prepare_constants(*step, buffers, ctx);
    ASSERT_TRUE(prepared.is_ok()) << tactic->name() << ": " << prepared.to_string();
    // Twice: a second run must find what the first left in the workspace as usable as it found
    // it (a stream-K kernel's barriers count up in there).
    for (int run = 1; run <= 2; ++run) {
      CUDA_OK(cudaMemset(out_buffer.data(), 0xFF, got.byte_size()));
      const Status ran = tactic->run(*step, buffers, ctx);
      ASSERT_TRUE(ran.is_ok()) << tactic->name() << " run " << run << ": " << ran.to_string();
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaMemcpy(got.data(), out_buffer.data(), got.byte_size(), cudaMemcpyDeviceToHost));
      const std::string why = mismatch(got);
      EXPECT_TRUE(why.empty()) << label << " candidate " << tactic->name() << " run " << run << ": " << why;
    }
  }
  for (const std::string& path : paths)
    EXPECT_NE(names.find(path), std::string::npos) << label << ": no candidate of the path " << path << " among" << names;
}

}  // namespace tensoracle::testing::fused_step
