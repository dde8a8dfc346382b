// Two streams (step_schedule.h): which steps go to the auxiliary stream, where they fork and
// join, and how the memory plan keeps their tensors alive over the span they may run in (host
// code: runs anywhere). Then engines with branches on the GPU: the plan uses the auxiliary
// stream, and every run (captured graph, replays, other batch sizes) matches the CPU reference
// and the one-stream engine.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "backends/cuda/memory_plan.h"
#include "backends/cuda/step_schedule.h"
#include "tensoracle/build.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"
#include "gpu/engine_on_device.h"
#include "gpu/seeded_arrays.h"

namespace tensoracle::backends::cuda {
namespace {

// x = relu(x0); a = relu(x); b = relu(a); d = sigmoid(reshape(x)) (a branch read through
// views); y = relu(b + reshape(d)).
struct Branch {
  Network net;
  std::vector<PlannedStep> steps;  // one per layer except the reshapes (views), in graph order
  std::map<uint32_t, uint32_t> views;  // reshape output -> its input
  Tensor x, a, b, d;
};

Branch branch() {
  Branch g;
  Network& net = g.net;
  Tensor x0 = net.add_input("x0", DataType::kFloat32, {4, 8});
  g.x = net.relu(x0);
  g.a = net.relu(g.x);
  g.b = net.relu(g.a);
  g.d = net.activation(net.reshape(g.x, ReshapeAttributes().set_shape({32})),
                       ActivationAttributes().set_kind(ActivationKind::kSigmoid));
  Tensor sum = net.add(g.b, net.reshape(g.d, ReshapeAttributes().set_shape({4, 8})));
  net.mark_output(net.relu(sum), "y");
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind == OpKind::kReshape) {
      g.views[node.outputs[0].id] = node.inputs[0].id;
      continue;
    }
    PlannedStep step;
    step.anchor = i;
    step.inputs = node.inputs;
    step.outputs = node.outputs;
    step.input_layouts.assign(step.inputs.size(), Layout::kLinear);
    step.output_layouts.assign(step.outputs.size(), Layout::kLinear);
    g.steps.push_back(step);
  }
  return g;
}

TEST(StepSchedule, AStepThatDoesNotNeedTheStepBeforeItGoesToTheAuxiliaryStream) {
  Branch g = branch();
  ASSERT_TRUE(g.net.status().is_ok()) << g.net.status().to_string();
  ASSERT_EQ(g.steps.size(), 6u);  // x, a, b, d, sum, y
  const auto deps = step_dependencies(g.net, g.steps);
  EXPECT_EQ(deps[3], std::vector<size_t>{0});          // d reads x through a view
  EXPECT_EQ(deps[4], (std::vector<size_t>{2, 3}));     // the sum reads d through a view

  choose_streams(g.net, g.steps, 1);
  std::vector<int> streams;
  for (const PlannedStep& s : g.steps) streams.push_back(s.stream);
  EXPECT_EQ(streams, (std::vector<int>{0, 0, 0, 1, 0, 0}));

  auto schedule = schedule_steps(g.net, g.steps);
  ASSERT_TRUE(schedule.is_ok()) << schedule.status().to_string();
  EXPECT_TRUE(schedule->uses_auxiliary);
  EXPECT_EQ(schedule->fork_after[3], 0);  // after x
  EXPECT_TRUE(schedule->forks[0]);
  EXPECT_EQ(schedule->joins[4], std::vector<size_t>{3});
  EXPECT_EQ(schedule->spans[3].first, 1u);  // may run beside a and b
  EXPECT_EQ(schedule->spans[3].last, 3u);

  choose_streams(g.net, g.steps, 0);
  for (const PlannedStep& s : g.steps) EXPECT_EQ(s.stream, kMainStream);
  auto one = schedule_steps(g.net, g.steps);
  ASSERT_TRUE(one.is_ok());
  EXPECT_FALSE(one->uses_auxiliary);
}

TEST(StepSchedule, TheBranchOutputNeverSharesMemoryWithTheStepsBesideIt) {
  Branch g = branch();
  choose_streams(g.net, g.steps, 1);
  auto schedule = schedule_steps(g.net, g.steps);
  ASSERT_TRUE(schedule.is_ok());
  const std::vector<uint64_t> bytes(g.net.num_tensors(), 128);
  const auto overlap = [](const MemoryPlan& m, Tensor p, Tensor q) {
    return m.offsets[p.id] >= 0 && m.offsets[q.id] >= 0 && m.offsets[p.id] < m.offsets[q.id] + 128 &&
           m.offsets[q.id] < m.offsets[p.id] + 128;
  };
  // One stream: d is written after a's last reader, so it may take a's bytes.
  const MemoryPlan serial = plan_memory(g.net, g.steps, bytes, 0, g.views);
  EXPECT_TRUE(overlap(serial, g.a, g.d)) << "the test's premise: liveness alone lets them share";
  // Two streams: d may run while a and b do; its output and its input x stay apart from theirs.
  const MemoryPlan plan = plan_memory(g.net, g.steps, bytes, 0, g.views, schedule->spans, 512);
  EXPECT_FALSE(overlap(plan, g.a, g.d));
  EXPECT_FALSE(overlap(plan, g.b, g.d));
  EXPECT_FALSE(overlap(plan, g.x, g.b));
  EXPECT_EQ(plan.aux_workspace_bytes, 512u);
}

TEST(StepSchedule, AStreamOtherThanMainOrAuxiliaryIsACorruptPlan) {
  Branch g = branch();
  g.steps[2].stream = 2;
  auto schedule = schedule_steps(g.net, g.steps);
  ASSERT_FALSE(schedule.is_ok());
  EXPECT_NE(schedule.status().message().find("stream 2"), std::string::npos) << schedule.status().to_string();
}

// ---------------------------------------------------------------- on the GPU

using testing::seeded;

// A ResNet bottleneck whose shortcut is a strided 1x1 convolution, twice, then three sibling
// projections of one tensor combined (p0 * p1 + p2): branches for the auxiliary stream.
Status blocks(Network& net, DataType type) {
  Tensor x = net.relu(net.add_input("x", type, {-1, 16, 16, 16}));
  unsigned seed = 20;
  const auto conv = [&](Tensor in, int64_t k, int64_t kernel, int64_t stride) {
    const int64_t c = net.tensor(in).desc.shape[1];
    seed += 2;
    Tensor w = net.add_constant(seeded(type, {k, c, kernel, kernel}, seed), "w" + std::to_string(seed));
    Tensor b = net.add_constant(seeded(type, {k}, seed + 1), "b" + std::to_string(seed));
    return net.convolution(in, w, b, ConvolutionAttributes().set_stride({stride, stride}).set_padding({kernel / 2, kernel / 2}));
  };
  // Layers in torchvision's order: the shortcut after the block's first two convolutions, so
  // the third fuses the residual add and the shortcut is free to run beside the first two.
  for (int block = 0; block < 2; ++block) {
    Tensor first = net.relu(conv(x, 16, 1, 1));
    Tensor second = net.relu(conv(first, 16, 3, 2));
    Tensor shortcut = conv(x, 32, 1, 2);
    Tensor third = conv(second, 32, 1, 1);
    x = net.relu(net.add(third, shortcut));
  }
  Tensor flat = net.reshape(x, ReshapeAttributes().set_shape({-1, 32 * 4 * 4}));
  const auto project = [&]() {
    ++seed;
    Tensor w = net.add_constant(seeded(type, {64, 32 * 4 * 4}, seed), "p" + std::to_string(seed));
    return net.matmul(flat, w, MatMulAttributes().set_transpose_b(true));
  };
  Tensor p0 = project();
  Tensor p1 = project();
  Tensor p2 = project();
  net.mark_output(net.add(net.mul(p0, p1), p2), "y");
  return net.status();
}

TEST(TwoStreams, BranchesRunBesideTheMainStreamAndMatchTheCpuAndOneStream) {
  TO_SKIP_WITHOUT_GPU();
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    std::map<int, Engine> engines;
    // The one-stream engine replays the two-stream engine's tactics, so the two differ only in
    // their streams.
    const std::string record = ::testing::TempDir() + "/two_streams_" + std::string(data_type_name(type)) + ".engine";
    for (int aux : {1, 0}) {
      EngineBuild build;
      build.name = "blocks";
      build.graph_version = "1";
      build.graph = [type](Network& net, const Weights&) { return blocks(net, type); };
      build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
      build.backend = "cuda";
      build.settings.auxiliary_streams = aux;
      if (aux == 0) {
        build.settings.deterministic_replay = true;
        build.settings.tactic_record = record;
      }
      build.add_input("x", {ShapeRange{{1, 16, 16, 16}, {2, 16, 16, 16}, {4, 16, 16, 16}}});
      build.quiet = true;
      auto bytes = build_serialized_engine(build);
      ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      if (aux == 1) {
        std::FILE* f = std::fopen(record.c_str(), "wb");
        ASSERT_NE(f, nullptr) << record;
        ASSERT_EQ(std::fwrite(bytes->data(), 1, bytes->size(), f), bytes->size());
        std::fclose(f);
      }
      auto engine = Engine::deserialize(bytes->data(), bytes->size(), "blocks");
      ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
      auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
      int auxiliary = 0;
      for (const auto& layer : plan.at("layers")) auxiliary += layer.at("stream").get<int>() == 1;
      if (aux == 1) EXPECT_GE(auxiliary, 1) << plan.at("layers").dump(1);
      else EXPECT_EQ(auxiliary, 0);
      engines.emplace(aux, std::move(engine).value());
    }
    Network reference_net;
    ASSERT_TRUE(blocks(reference_net, type).is_ok());
    auto cpu = backends::create_backend("cpu").value();
    auto two = engines.at(1).create_execution();
    auto one = engines.at(0).create_execution();
    ASSERT_TRUE(two.is_ok() && one.is_ok());
    // The same shapes several times (a captured graph, then replays), then other batch sizes.
    for (int64_t n : {2, 2, 2, 4, 1, 2}) {
      HostArray x = seeded(type, {n, 16, 16, 16}, 600 + static_cast<unsigned>(n));
      auto got = two->run_on_host({{"x", x.view()}});
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      auto serial = one->run_on_host({{"x", x.view()}});
      ASSERT_TRUE(serial.is_ok()) << serial.status().to_string();
      auto want = cpu->execute(reference_net, {{"x", x.view()}});
      ASSERT_TRUE(want.is_ok()) << want.status().to_string();
      auto cmp = compare_outputs(got->at("y").view(), want->at("y").view());
      ASSERT_TRUE(cmp.is_ok());
      EXPECT_LE(cmp->rel_l2_error, type == DataType::kFloat16 ? 3e-3 : 1e-6) << "n=" << n;
      // The streams change when steps run, not what they compute.
      auto same = compare_outputs(got->at("y").view(), serial->at("y").view());
      ASSERT_TRUE(same.is_ok());
      EXPECT_EQ(same->max_abs_error, 0.0) << "n=" << n;
    }
  }
}

}  // namespace
}  // namespace tensoracle::backends::cuda
