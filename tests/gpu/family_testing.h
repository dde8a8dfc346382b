// Shared by the tests of the cuda tactic families (pointwise, data movement, normalization):
// one-layer networks as steps, the families by name, and the OnGpu fixture that runs every
// candidate of a family, or the whole cuda backend, and compares the result with the CPU
// reference.
//
//   class Chains : public OnGpu {};
//   TEST_F(Chains, ReluOfAdd) {
//     check_every_candidate("kernel.pointwise", std::move(net), inputs, Match::kClose);
//     check_backend(net, inputs, Match::kBitExact);
//   }
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernels/reformat.h"
#include "backends/cuda/pointwise_program.h"
#include "backends/registry.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {

namespace cu = backends::cuda;

// The last node of `net` as a step with concrete shapes (the networks here are static). A
// pointwise node gets its one-instruction program, as the planner would give it.
struct OneLayer {
  Network net;
  std::vector<const TensorDesc*> inputs;  // nullptr: an omitted optional input
  std::vector<TensorDesc> outputs;

  explicit OneLayer(Network n) : net(std::move(n)) {
    const Node& node = net.node(net.num_nodes() - 1);
    for (Tensor t : node.inputs) inputs.push_back(t.valid() ? &net.tensor(t).desc : nullptr);
    for (Tensor t : node.outputs) outputs.push_back(net.tensor(t).desc);
  }
  const Node& node() const { return net.node(net.num_nodes() - 1); }
  cu::StepInstance step(cu::Layout layout = cu::Layout::kLinear) const {
    cu::StepInstance step{backends::NodeInstance{node(), inputs, outputs}, {}, {}, {}, {}, outputs, {}};
    step.input_layouts.assign(inputs.size(), layout);
    step.output_layouts.assign(outputs.size(), layout);
    if (is_pointwise(node().kind)) {
      std::vector<int> operands;
      for (const TensorDesc* d : inputs) {
        operands.push_back(static_cast<int>(step.program.inputs.size()));
        step.program.inputs.push_back(*d);
      }
      auto r = cu::append_pointwise_node(step.program, node(), static_cast<int64_t>(net.num_nodes() - 1), outputs[0],
                                         operands);
      EXPECT_TRUE(r.is_ok()) << r.status().message();
    }
    return step;
  }
};

// One fp32 value, as a quantize layer's scale.
inline HostArray scalar_scale(float value) {
  HostArray scale = HostArray::zeros(DataType::kFloat32, {1}).value();
  scale.data_as<float>()[0] = value;
  return scale;
}

// The registered family `name` (a test failure when there is none).
inline const cu::TacticFamily& family(const std::string& name) {
  const cu::TacticFamily* f = cu::tactic_families().find(name);
  EXPECT_NE(f, nullptr) << name << " is not registered";
  return *f;
}

// The names of the candidates `f` offers for `step` (at most 8), without a device.
inline std::vector<std::string> candidate_names(const cu::TacticFamily& f, const cu::StepInstance& step) {
  std::vector<std::string> names;
  auto candidates = f.candidates(step, cu::RunContext{}, 8);
  EXPECT_TRUE(candidates.is_ok()) << candidates.status().message();
  if (candidates.is_ok())
    for (const auto& c : *candidates) names.push_back(c->name());
  return names;
}

// How a GPU result must agree with the CPU reference.
enum class Match {
  kBitExact,  // the same bytes: data movement, integer and boolean results, exact arithmetic
  kClose,     // floating results: NaN exactly where the reference has it, as many non-finite
              // values, relative L2 within the type's bound (integers are still bit-exact)
};

// fp32 within rel L2 1e-6 of the fp64 reference (no TF32 anywhere); fp16 and bf16 within their
// storage precision.
inline double rel_l2_bound(DataType type) {
  return type == DataType::kFloat16 ? 2e-3 : type == DataType::kBFloat16 ? 1e-2 : 1e-6;
}

// Every check names `what`. A reference of all zeros fails too: it would prove nothing.
inline void expect_matches(const std::string& what, const HostArray& got, const HostArray& want, Match match) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto cmp = compare_outputs(got.view(), want.view());
  ASSERT_TRUE(cmp.is_ok()) << what << ": " << cmp.status().message();
  if (match == Match::kBitExact || !is_floating_point(got.dtype())) {
    const bool same = std::memcmp(got.data(), want.data(), got.byte_size()) == 0;
    EXPECT_TRUE(same) << what << ": not bit-identical (max abs error " << cmp->max_abs_error << ", "
                      << cmp->candidate_non_finite.total() << " vs " << cmp->reference_non_finite.total() << " non-finite)";
  } else {
    int64_t nan_mismatches = 0;
    for (int64_t i = 0; i < want.element_count(); ++i)
      if (std::isnan(load_as_double(got.dtype(), got.data(), i)) != std::isnan(load_as_double(want.dtype(), want.data(), i)))
        ++nan_mismatches;
    EXPECT_EQ(nan_mismatches, 0) << what << ": NaN where the reference has none, or the reverse (or unwritten)";
    EXPECT_EQ(cmp->candidate_non_finite.total(), cmp->reference_non_finite.total()) << what << ": unwritten or NaN outputs";
    EXPECT_LE(cmp->rel_l2_error, rel_l2_bound(got.dtype())) << what << " (max abs error " << cmp->max_abs_error << ")";
  }
  EXPECT_GT(cmp->l2_reference, 0.0) << what << ": the reference is all zeros, the test proves nothing";
}

// A stream and the device's properties; skips where no GPU is usable.
class OnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    TO_SKIP_WITHOUT_GPU();
    auto device = cu::current_device();
    ASSERT_TRUE(device.is_ok()) << device.status().to_string();
    device_ = *device;
    CUDA_OK(cudaStreamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // `bytes` of device memory (at least one byte, so every tensor has an address).
  static DeviceBuffer device_memory(size_t bytes) {
    auto buffer = DeviceBuffer::allocate(std::max<size_t>(bytes, 1), "a test tensor");
    EXPECT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    return buffer.is_ok() ? std::move(buffer).value() : DeviceBuffer();
  }

  // A device copy of `host` in `layout` (made with launch_reformat for other layouts than linear).
  DeviceBuffer upload(const HostArray& host, cu::Layout layout) {
    DeviceBuffer linear = device_memory(host.byte_size());
    EXPECT_EQ(cudaMemcpy(linear.data(), host.data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    if (layout == cu::Layout::kLinear) return linear;
    DeviceBuffer laid_out = device_memory(host.byte_size());
    const Status s = cu::launch_reformat({host.dtype(), host.shape(), cu::Layout::kLinear, linear.data()},
                                         {host.dtype(), host.shape(), layout, laid_out.data()}, stream_);
    EXPECT_TRUE(s.is_ok()) << s.message();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    return laid_out;
  }

  // The linear host copy of a device tensor.
  HostArray download(const cu::DeviceTensor& t) {
    HostArray host = HostArray::zeros(t.dtype, t.shape).value();
    DeviceBuffer linear = device_memory(host.byte_size());
    const void* src = t.data;
    if (t.layout != cu::Layout::kLinear) {
      const Status s = cu::launch_reformat(t, {t.dtype, t.shape, cu::Layout::kLinear, linear.data()}, stream_);
      EXPECT_TRUE(s.is_ok()) << s.message();
      src = linear.data();
    }
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(host.data(), src, host.byte_size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

  // Runs every candidate of `family_name` (at most 8) for the network's last layer, with tensors
  // in `layout`, on outputs poisoned with 0xFF bytes (NaN, or -1: never a correct output here),
  // and compares each output with the CPU backend.
  void check_every_candidate(const std::string& family_name, Network net, const NamedArrays& inputs, Match match,
                             cu::Layout layout = cu::Layout::kLinear) {
    auto cpu = backends::create_backend(backends::kReferenceBackend);
    ASSERT_TRUE(cpu.is_ok());
    auto expected = (*cpu)->execute(net, views_of(inputs));
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();

    const OneLayer layer(std::move(net));
    const cu::StepInstance step = layer.step(layout);
    const cu::TacticFamily& f = family(family_name);
    const Status can = f.can_implement(step, device_);
    ASSERT_TRUE(can.is_ok()) << can.message();
    const cu::RunContext ctx{stream_, nullptr, nullptr, &device_};
    auto candidates = f.candidates(step, ctx, 8);
    ASSERT_TRUE(candidates.is_ok()) << candidates.status().message();
    ASSERT_FALSE(candidates->empty());

    std::vector<DeviceBuffer> in_memory;
    cu::StepBuffers buffers;
    for (Tensor t : layer.node().inputs) {
      if (!t.valid()) {
        buffers.inputs.push_back({});
        continue;
      }
      const HostArray& host = inputs.at(layer.net.tensor(t).name);
      in_memory.push_back(upload(host, layout));
      buffers.inputs.push_back({host.dtype(), host.shape(), layout, in_memory.back().data()});
    }
    for (auto& tactic : *candidates) {
      SCOPED_TRACE(tactic->name());
      std::vector<DeviceBuffer> out_memory;
      buffers.outputs.clear();
      for (const TensorDesc& d : layer.outputs) {
        const size_t bytes = static_cast<size_t>(d.shape.element_count().value()) * data_type_size(d.dtype);
        out_memory.push_back(device_memory(bytes));
        CUDA_OK(cudaMemset(out_memory.back().data(), 0xFF, bytes));
        buffers.outputs.push_back({d.dtype, d.shape, layout, out_memory.back().data()});
      }
      buffers.workspace_bytes = tactic->workspace_size(step);
      DeviceBuffer workspace = buffers.workspace_bytes ? device_memory(buffers.workspace_bytes) : DeviceBuffer();
      buffers.workspace = workspace.data();
      const Status init = tactic->initialize(step, ctx);
      ASSERT_TRUE(init.is_ok()) << init.message();
      const Status ran = tactic->run(step, buffers, ctx);
      ASSERT_TRUE(ran.is_ok()) << ran.message();
      CUDA_OK(cudaStreamSynchronize(stream_));
      for (size_t o = 0; o < layer.outputs.size(); ++o) {
        const std::string& name = layer.net.tensor(layer.node().outputs[o]).name;
        expect_matches(tactic->name() + " output '" + name + "'", download(buffers.outputs[o]), expected->at(name), match);
      }
    }
  }

  // Runs `net` through the cuda backend (planned, fused, run once) and compares every output with
  // the CPU backend.
  void check_backend(const Network& net, const NamedArrays& inputs, Match match) {
    check_backend(net, inputs, [match](const std::string& what, const HostArray& got, const HostArray& want) {
      expect_matches(what, got, want, match);
    });
  }
  // The same, each output compared by `compare(what, got, want)`.
  void check_backend(const Network& net, const NamedArrays& inputs,
                     const std::function<void(const std::string&, const HostArray&, const HostArray&)>& compare) {
    auto cpu = backends::create_backend(backends::kReferenceBackend);
    auto gpu = backends::create_backend("cuda");
    ASSERT_TRUE(cpu.is_ok());
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
    auto want = (*cpu)->execute(net, views_of(inputs));
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    auto got = (*gpu)->execute(net, views_of(inputs));
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    for (const auto& [name, array] : *want) {
      ASSERT_TRUE(got->count(name)) << name;
      compare("cuda backend output '" + name + "'", got->at(name), array);
    }
  }

  cudaStream_t stream_ = nullptr;
  cu::DeviceInfo device_;
};

}  // namespace tensoracle::testing
