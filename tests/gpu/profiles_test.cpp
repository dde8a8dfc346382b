// Engines with several optimization profiles: the activation arena and every stream's workspace
// are sized for the largest shapes of every profile, not only the first (memory_plan.h). First
// the sizing itself on host code (runs anywhere), then an engine whose second profile is larger
// than its first, run at that profile's largest shapes on the GPU against the CPU reference.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/cuda/memory_plan.h"
#include "backends/registry.h"
#include "gpu/engine_on_device.h"
#include "gpu/seeded_arrays.h"
#include "tensoracle/build.h"

namespace tensoracle::backends::cuda {
namespace {

// x [B, L] (both dims dynamic) -> relu -> the 4 largest of each row, with their indices.
Status rows_top_k(Network& net) {
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, -1});
  TopKOutputs top = net.top_k(net.relu(x), TopKAttributes().set_k(4).set_axis(1));
  net.mark_output(top.values, "values");
  net.mark_output(top.indices, "indices");
  return net.status();
}

// Profile 0 stays small: rows of at most 1024 sort in shared memory (kernels/top_k.h), no
// workspace. Profile 1 reaches rows of 20000: each of 8 rows sorts in its own slice of the
// workspace (2^15 (key, index) pairs of 8 bytes: 256 KiB a row).
const ShapeRange kSmall{{1, 16}, {2, 256}, {4, 1024}};
const ShapeRange kLarge{{1, 1024}, {2, 4096}, {8, 20000}};

OptimizationProfile profile_of(const ShapeRange& x) { return {{"x", x}}; }

// The index of the first layer of `kind` (the network's size when there is none).
size_t layer_of(const Network& net, OpKind kind) {
  size_t i = 0;
  while (i < net.num_nodes() && net.node(i).kind != kind) ++i;
  return i;
}

// ---------------------------------------------------------------- the sizing (host code)

TEST(ProfileSizing, EveryTensorIsSizedForTheLargestShapesOfAnyProfile) {
  Network net;
  ASSERT_TRUE(rows_top_k(net).is_ok()) << net.status().to_string();
  auto bytes = max_tensor_bytes(net, {profile_of(kSmall), profile_of(kLarge)});
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  const Tensor x = net.inputs()[0];
  ASSERT_LT(layer_of(net, OpKind::kActivation), net.num_nodes());
  const Tensor relu = net.node(layer_of(net, OpKind::kActivation)).outputs[0];
  EXPECT_EQ((*bytes)[x.id], 8u * 20000 * 4);
  EXPECT_EQ((*bytes)[relu.id], 8u * 20000 * 4);
  // The order of the profiles does not matter.
  auto reversed = max_tensor_bytes(net, {profile_of(kLarge), profile_of(kSmall)});
  ASSERT_TRUE(reversed.is_ok());
  EXPECT_EQ(*reversed, *bytes);
  auto first_only = max_tensor_bytes(net, {profile_of(kSmall)});
  ASSERT_TRUE(first_only.is_ok());
  EXPECT_EQ((*first_only)[relu.id], 4u * 1024 * 4);
}

// A tactic whose workspace is the bytes of its step's input: it grows with the shapes.
class InputSizedTactic final : public CudaTactic {
 public:
  std::string name() const override { return "test.input_sized"; }
  size_t workspace_size(const StepInstance& step) const override {
    const TensorDesc& in = *step.anchor.inputs.at(0);
    const Result<int64_t> bytes = in.shape.byte_size(in.dtype);
    return bytes.is_ok() ? static_cast<size_t>(*bytes) : 0;
  }
  Status run(const StepInstance&, const StepBuffers&, const RunContext&) override { return Status::ok(); }
};

TEST(ProfileSizing, AStepsWorkspaceIsItsLargestNeedAtAnyProfilesCorners) {
  Network net;
  ASSERT_TRUE(rows_top_k(net).is_ok());
  PlannedStep top_k;
  top_k.anchor = layer_of(net, OpKind::kTopK);
  ASSERT_LT(top_k.anchor, net.num_nodes());
  top_k.inputs = net.node(top_k.anchor).inputs;
  top_k.outputs = net.node(top_k.anchor).outputs;
  top_k.input_layouts.assign(top_k.inputs.size(), Layout::kLinear);
  top_k.output_layouts.assign(top_k.outputs.size(), Layout::kLinear);

  auto corners = descs_at_corners(net, {profile_of(kSmall), profile_of(kLarge)});
  ASSERT_TRUE(corners.is_ok()) << corners.status().to_string();
  ASSERT_EQ(corners->size(), 6u);  // min, opt, max of each
  const InputSizedTactic tactic;
  auto bytes = largest_workspace(tactic, net, top_k, *corners);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, 8u * 20000 * 4) << "the second profile's max, not the first's (4 x 1024 x 4)";
  auto first_only = descs_at_corners(net, {profile_of(kSmall)});
  ASSERT_TRUE(first_only.is_ok());
  auto small = largest_workspace(tactic, net, top_k, *first_only);
  ASSERT_TRUE(small.is_ok());
  EXPECT_EQ(*small, 4u * 1024 * 4);
}

TEST(ProfileSizing, EachStreamSharesTheLargestWorkspaceOfItsSteps) {
  std::vector<PlannedStep> steps(4);
  steps[1].stream = kAuxiliaryStream;
  steps[3].stream = kAuxiliaryStream;
  const StreamWorkspaces w = stream_workspaces(steps, {100, 700, 300, 50});
  EXPECT_EQ(w.main, 300u);
  EXPECT_EQ(w.auxiliary, 700u);
  EXPECT_EQ(w.total(), 1000u);
}

// ---------------------------------------------------------------- on the GPU

EngineBuild rows_top_k_build() {
  EngineBuild build;
  build.name = "rows_top_k";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) { return rows_top_k(net); };
  // The graph has no constants; any weights file will do (none of it is used or hashed).
  build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
  build.add_input("x", {kSmall, kLarge});
  return build;
}

TEST(ProfileEngine, RunsTheLargestShapesOfALaterLargerProfile) {
  TO_SKIP_WITHOUT_GPU();
  auto engine = testing::build_cuda_engine(rows_top_k_build());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  ASSERT_EQ(engine->num_profiles(), 2u);
  Network net;
  ASSERT_TRUE(rows_top_k(net).is_ok());
  auto cpu = create_backend("cpu");
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();

  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("input seed " + std::to_string(seed));
  // Each profile at its largest shapes, then the large one at its smallest.
  const std::vector<std::pair<size_t, Dims>> runs = {{1, kLarge.max}, {0, kSmall.max}, {1, kLarge.min}};
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto& [profile, shape] = runs[r];
    SCOPED_TRACE("profile " + std::to_string(profile) + " at x " + shape.to_string());
    const HostArray x = testing::random_array(DataType::kFloat32, shape, seed + static_cast<uint32_t>(r));
    auto got = testing::run_on_device(*engine, {{"x", x.view()}}, profile);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    auto want = (*cpu)->execute(net, {{"x", x.view()}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    for (const char* name : {"values", "indices"}) {
      const HostArray& g = got->at(name);
      const HostArray& w = want->at(name);
      ASSERT_EQ(g.shape(), w.shape()) << name;
      ASSERT_EQ(g.dtype(), w.dtype()) << name;
      EXPECT_EQ(std::memcmp(g.data(), w.data(), g.byte_size()), 0) << name << " differ from the CPU reference";
    }
  }
}

}  // namespace
}  // namespace tensoracle::backends::cuda
