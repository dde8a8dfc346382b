// cuda engines end to end on a GPU: build (fusion, timing, memory plan) -> serialize -> reload ->
// execute on caller-owned device buffers and a caller stream, with dynamic shapes inside the
// profile, CUDA graph replay, and per-layer profiles; every output equals the CPU reference.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "tensoracle/build.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"
#include "tensoracle/float_formats.h"
#include "gpu/gpu_testing.h"
#include "gpu/seeded_arrays.h"

namespace tensoracle {
namespace {

using testing::seeded;

// x [N, 64] -> relu(x W1^T + b1) -> W2^T + b2 -> softmax, plus a residual pointwise chain.
Status mlp(Network& net, DataType type) {
  Tensor x = net.add_input("x", type, {-1, 64});
  Tensor w1 = net.add_constant(seeded(type, {128, 64}, 1), "w1");
  Tensor b1 = net.add_constant(seeded(type, {128}, 2), "b1");
  Tensor w2 = net.add_constant(seeded(type, {64, 128}, 3), "w2");
  Tensor b2 = net.add_constant(seeded(type, {64}, 4), "b2");
  Tensor h = net.relu(net.add(net.matmul(x, w1, MatMulAttributes().set_transpose_b(true)), b1));
  Tensor y = net.add(net.matmul(h, w2, MatMulAttributes().set_transpose_b(true)), b2);
  Tensor z = net.mul(net.add(y, x), net.activation(x, ActivationAttributes().set_kind(ActivationKind::kSigmoid)));
  net.mark_output(net.softmax(z), "probs");
  return net.status();
}

EngineBuild mlp_build(DataType type) {
  EngineBuild build;
  build.name = "mlp";
  build.graph_version = "1";
  build.graph = [type](Network& net, const Weights&) { return mlp(net, type); };
  // The graph makes its own constants; any weights file will do (none of it is used or hashed).
  build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
  build.backend = "cuda";
  build.add_input("x", {ShapeRange{{1, 64}, {8, 64}, {32, 64}}});
  build.quiet = true;
  return build;
}

HostArray cpu_reference(DataType type, const HostArray& x) {
  Network net;
  EXPECT_TRUE(mlp(net, type).is_ok());
  auto cpu = backends::create_backend("cpu").value();
  auto out = cpu->execute(net, {{"x", x.view()}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return std::move(out->at("probs"));
}

class CudaEngine : public ::testing::Test {
 protected:
  void SetUp() override { TO_SKIP_WITHOUT_GPU(); }
};

TEST_F(CudaEngine, BuildsReloadsAndRunsEveryShapeOfItsProfileOnCallerBuffers) {
  auto bytes = build_serialized_engine(mlp_build(DataType::kFloat32));
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "mlp");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->backend(), "cuda");

  // The plan records fused steps: the first matmul absorbed its bias and relu.
  auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
  bool fused = false;
  for (const auto& layer : plan.at("layers")) fused |= layer.at("kind") == "matmul" && layer.at("graph_layers").size() >= 3;
  EXPECT_TRUE(fused) << plan.at("layers").dump(1);

  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* x_dev = nullptr;
  void* y_dev = nullptr;
  CUDA_OK(cudaMalloc(&x_dev, 32 * 64 * 4));
  CUDA_OK(cudaMalloc(&y_dev, 32 * 64 * 4));
  ASSERT_TRUE(exec->bind("x", x_dev).is_ok());
  ASSERT_TRUE(exec->bind("probs", y_dev).is_ok());
  for (int64_t n : {8, 1, 32, 8}) {  // opt, min, max, and back (graphs re-captured per shape)
    ASSERT_TRUE(exec->set_input_shape("x", {n, 64}).is_ok());
    HostArray x = seeded(DataType::kFloat32, {n, 64}, 100 + static_cast<unsigned>(n));
    CUDA_OK(cudaMemcpy(x_dev, x.data(), x.byte_size(), cudaMemcpyHostToDevice));
    for (int repeat = 0; repeat < 3; ++repeat) {  // capture, then replay
      CUDA_OK(cudaMemset(y_dev, 0xFF, 32 * 64 * 4));  // poison: NaN everywhere
      Status s = exec->enqueue(stream);
      ASSERT_TRUE(s.is_ok()) << s.to_string();
      CUDA_OK(cudaStreamSynchronize(stream));
      HostArray y = HostArray::zeros(DataType::kFloat32, {n, 64}).value();
      CUDA_OK(cudaMemcpy(y.data(), y_dev, y.byte_size(), cudaMemcpyDeviceToHost));
      auto cmp = compare_outputs(y.view(), cpu_reference(DataType::kFloat32, x).view(), 1e-6, 1e-5);
      ASSERT_TRUE(cmp.is_ok());
      EXPECT_EQ(cmp->candidate_non_finite.nan, 0) << "n=" << n;
      EXPECT_LE(cmp->rel_l2_error, 1e-6) << "n=" << n << " repeat " << repeat;
    }
  }
  auto profile = exec->profile_layers(stream, 5);
  ASSERT_TRUE(profile.is_ok()) << profile.status().to_string();
  EXPECT_FALSE(profile->empty());
  for (const LayerTiming& t : *profile) EXPECT_GT(t.median_ms, 0.0) << t.layers;
  cudaFree(x_dev);
  cudaFree(y_dev);
  cudaStreamDestroy(stream);
}

TEST_F(CudaEngine, Fp16AndBf16EnginesStayCloseToTheirCpuReference) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    auto bytes = build_serialized_engine(mlp_build(type));
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    auto engine = Engine::deserialize(bytes->data(), bytes->size(), "mlp");
    ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
    auto exec = engine->create_execution();
    ASSERT_TRUE(exec.is_ok());
    HostArray x = seeded(type, {8, 64}, 7);
    void* x_dev = nullptr;
    void* y_dev = nullptr;
    CUDA_OK(cudaMalloc(&x_dev, x.byte_size()));
    CUDA_OK(cudaMalloc(&y_dev, x.byte_size()));
    CUDA_OK(cudaMemcpy(x_dev, x.data(), x.byte_size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(y_dev, 0xFF, x.byte_size()));
    ASSERT_TRUE(exec->bind("x", x_dev).is_ok());
    ASSERT_TRUE(exec->bind("probs", y_dev).is_ok());
    ASSERT_TRUE(exec->enqueue(nullptr).is_ok());  // the legacy default stream: no graph, still correct
    CUDA_OK(cudaDeviceSynchronize());
    HostArray y = HostArray::zeros(type, {8, 64}).value();
    CUDA_OK(cudaMemcpy(y.data(), y_dev, y.byte_size(), cudaMemcpyDeviceToHost));
    auto cmp = compare_outputs(y.view(), cpu_reference(type, x).view());
    ASSERT_TRUE(cmp.is_ok());
    EXPECT_LE(cmp->rel_l2_error, type == DataType::kFloat16 ? 2e-3 : 2e-2) << data_type_name(type);
    cudaFree(x_dev);
    cudaFree(y_dev);
  }
}

TEST_F(CudaEngine, ReplayingTheRecordedTacticsRebuildsTheSamePlan) {
  EngineBuild timed = mlp_build(DataType::kFloat16);
  timed.settings.optimization_level = 3;
  auto first = build_serialized_engine(timed);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const std::string record = ::testing::TempDir() + "/mlp_record.engine";
  {
    FILE* f = std::fopen(record.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(first->data(), 1, first->size(), f);
    std::fclose(f);
  }
  EngineBuild replayed = timed;
  replayed.settings.deterministic_replay = true;
  replayed.settings.tactic_record = record;
  auto second = build_serialized_engine(replayed);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  auto layers_of = [](const std::string& bytes) {
    auto engine = Engine::deserialize(bytes.data(), bytes.size(), "mlp");
    auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
    nlohmann::json out = nlohmann::json::array();
    for (const auto& l : plan.at("layers")) out.push_back({l.at("name"), l.at("tactic"), l.at("choice")});
    return out;
  };
  EXPECT_EQ(layers_of(*first), layers_of(*second));
}

// h = x W^T is read through two reshapes (a softmax over [N, 2, 64] and the final sum) while a
// larger tensor is allocated in between: the views must keep h's bytes alive until their last reader.
Status viewed(Network& net) {
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 64});
  Tensor w = net.add_constant(seeded(DataType::kFloat32, {128, 64}, 5), "w");
  Tensor wide = net.add_constant(seeded(DataType::kFloat32, {128, 64}, 6), "wide");
  Tensor h = net.matmul(x, w, MatMulAttributes().set_transpose_b(true));
  Tensor split = net.reshape(h, ReshapeAttributes().set_shape({-1, 2, 64}));
  Tensor big = net.relu(net.matmul(x, wide, MatMulAttributes().set_transpose_b(true)));
  Tensor folded = net.reshape(net.softmax(split), ReshapeAttributes().set_shape({-1, 128}));
  Tensor again = net.reshape(split, ReshapeAttributes().set_shape({-1, 128}));  // a view of a view
  Tensor pooled = net.softmax(net.reshape(big, ReshapeAttributes().set_shape({-1, 2, 64})), SoftmaxAttributes().set_axis(1));
  net.mark_output(net.add(net.add(folded, again), net.reshape(pooled, ReshapeAttributes().set_shape({-1, 128}))), "y");
  return net.status();
}

TEST_F(CudaEngine, ReshapesOfIntermediatesAreViewsWithoutAStep) {
  EngineBuild build;
  build.name = "views";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) { return viewed(net); };
  build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
  build.backend = "cuda";
  build.add_input("x", {ShapeRange{{1, 64}, {4, 64}, {16, 64}}});
  build.quiet = true;
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "views");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
  for (const auto& layer : plan.at("layers")) EXPECT_NE(layer.at("kind"), "reshape") << layer.dump();

  Network reference_net;
  ASSERT_TRUE(viewed(reference_net).is_ok());
  auto cpu = backends::create_backend("cpu").value();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  for (int64_t n : {4, 16, 1}) {
    HostArray x = seeded(DataType::kFloat32, {n, 64}, 200 + static_cast<unsigned>(n));
    auto got = exec->run_on_host({{"x", x.view()}});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    auto want = cpu->execute(reference_net, {{"x", x.view()}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    auto cmp = compare_outputs(got->at("y").view(), want->at("y").view());
    ASSERT_TRUE(cmp.is_ok());
    EXPECT_LE(cmp->rel_l2_error, 1e-6) << "n=" << n;
  }
}

// Multi-head attention as models write it: projections reshaped to [N, S, heads, 16] and
// transposed to [N, heads, S, 16] for attention, the result transposed and reshaped back.
Status heads(Network& net, DataType type) {
  Tensor x = net.add_input("x", type, {-1, 24, 64});
  const auto project = [&](unsigned seed, const char* name) {
    Tensor w = net.add_constant(seeded(type, {64, 64}, seed), name);
    return net.matmul(x, w, MatMulAttributes().set_transpose_b(true));
  };
  const auto split = [&](Tensor t) {
    return net.transpose(net.reshape(t, ReshapeAttributes().set_shape({0, 0, 4, 16})), TransposeAttributes().set_perm({0, 2, 1, 3}));
  };
  Tensor mask = net.add_input("mask", type, {1, 1, 1, 24});
  Tensor o = net.attention(split(project(7, "wq")), split(project(8, "wk")), split(project(9, "wv")), mask);
  Tensor merged = net.reshape(net.transpose(o, TransposeAttributes().set_perm({0, 2, 1, 3})), ReshapeAttributes().set_shape({0, 0, 64}));
  Tensor wo = net.add_constant(seeded(type, {64, 64}, 10), "wo");
  net.mark_output(net.matmul(merged, wo, MatMulAttributes().set_transpose_b(true)), "y");
  return net.status();
}

// In fp16 the transposes around attention are views (cuDNN SDPA reads and writes the bshd
// layout); in fp32 (no SDPA) they stay steps. Both match the CPU reference.
TEST_F(CudaEngine, HeadTransposesAroundAttentionAreViewsWhereSdpaReadsBshd) {
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    EngineBuild build;
    build.name = "heads";
    build.graph_version = "1";
    build.graph = [type](Network& net, const Weights&) { return heads(net, type); };
    build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
    build.backend = "cuda";
    build.add_input("x", {ShapeRange{{1, 24, 64}, {2, 24, 64}, {4, 24, 64}}});
    build.add_input("mask", Dims{1, 1, 1, 24});
    build.quiet = true;
    auto bytes = build_serialized_engine(build);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    auto engine = Engine::deserialize(bytes->data(), bytes->size(), "heads");
    ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
    auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
    int transposes = 0;
    for (const auto& layer : plan.at("layers")) {
      transposes += layer.at("kind") == "transpose";
      if (layer.at("kind") == "attention" && type == DataType::kFloat16) {
        EXPECT_EQ(layer.at("tactic").get<std::string>().rfind("cudnn.sdpa", 0), 0u) << layer.dump();
        EXPECT_EQ(layer.at("input_layouts")[0], "bshd") << layer.dump();
        EXPECT_EQ(layer.at("output_layouts")[0], "bshd") << layer.dump();
      }
    }
    EXPECT_EQ(transposes, type == DataType::kFloat16 ? 0 : 4) << plan.at("layers").dump(1);

    Network reference_net;
    ASSERT_TRUE(heads(reference_net, type).is_ok());
    auto cpu = backends::create_backend("cpu").value();
    auto exec = engine->create_execution();
    ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
    for (int64_t n : {2, 4, 1}) {
      HostArray x = seeded(type, {n, 24, 64}, 300 + static_cast<unsigned>(n));
      HostArray mask = seeded(type, {1, 1, 1, 24}, 400 + static_cast<unsigned>(n));
      const NamedArrayViews inputs{{"x", x.view()}, {"mask", mask.view()}};
      auto got = exec->run_on_host(inputs);
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      auto want = cpu->execute(reference_net, inputs);
      ASSERT_TRUE(want.is_ok()) << want.status().to_string();
      auto cmp = compare_outputs(got->at("y").view(), want->at("y").view());
      ASSERT_TRUE(cmp.is_ok());
      EXPECT_LE(cmp->rel_l2_error, type == DataType::kFloat16 ? 2e-3 : 1e-6) << "n=" << n;
    }
  }
}

// Three fp16 convolutions with constant weights, channels-last between them: 3x3, 1x1, and a
// 3x3 whose weight another layer (a reduction) also reads.
Status convolutions(Network& net) {
  Tensor x = net.add_input("x", DataType::kFloat16, {-1, 8, 12, 12});
  Tensor w1 = net.add_constant(seeded(DataType::kFloat16, {16, 8, 3, 3}, 11), "w1");
  Tensor b1 = net.add_constant(seeded(DataType::kFloat16, {16}, 12), "b1");
  Tensor w2 = net.add_constant(seeded(DataType::kFloat16, {16, 16, 1, 1}, 13), "w2");
  Tensor shared = net.add_constant(seeded(DataType::kFloat16, {16, 16, 3, 3}, 14), "shared");
  Tensor h = net.relu(net.convolution(net.relu(x), w1, b1, ConvolutionAttributes().set_padding({1, 1})));
  Tensor y = net.convolution(net.convolution(h, w2, Tensor{}), shared, Tensor{}, ConvolutionAttributes().set_padding({1, 1}));
  net.mark_output(net.add(y, net.reduce(shared, ReduceAttributes().set_axes({0, 2, 3}).set_keep_dims(true))), "y");
  return net.status();
}

// The constant weights of channels-last convolutions are stored KRSC (the plan says nhwc; the
// engine reorders them when it loads), except one that another layer reads as it is; the
// reloaded engine still matches the CPU reference.
TEST_F(CudaEngine, ConstantWeightsOfChannelsLastConvolutionsAreStoredKrsc) {
  EngineBuild build;
  build.name = "convolutions";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) { return convolutions(net); };
  build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
  build.backend = "cuda";
  build.add_input("x", {ShapeRange{{1, 8, 12, 12}, {2, 8, 12, 12}, {4, 8, 12, 12}}});
  build.quiet = true;
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "convolutions");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto plan = nlohmann::json::parse(std::string(engine->file().plan().as_string_view()));
  std::vector<std::string> weight_layouts;
  for (const auto& layer : plan.at("layers"))
    if (layer.at("kind") == "convolution") weight_layouts.push_back(layer.at("input_layouts")[1]);
  EXPECT_EQ(weight_layouts, (std::vector<std::string>{"nhwc", "nhwc", "linear"})) << plan.at("layers").dump(1);

  Network reference_net;
  ASSERT_TRUE(convolutions(reference_net).is_ok());
  auto cpu = backends::create_backend("cpu").value();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  for (int64_t n : {2, 4, 1}) {
    HostArray x = seeded(DataType::kFloat16, {n, 8, 12, 12}, 500 + static_cast<unsigned>(n));
    auto got = exec->run_on_host({{"x", x.view()}});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    auto want = cpu->execute(reference_net, {{"x", x.view()}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    auto cmp = compare_outputs(got->at("y").view(), want->at("y").view());
    ASSERT_TRUE(cmp.is_ok());
    EXPECT_LE(cmp->rel_l2_error, 2e-3) << "n=" << n;
  }
}

// A GEMM of BERT's width and a ResNet-like convolution in fp16: cuBLASLt and cuDNN choose other
// algorithms at other batch sizes, whose workspace need is not monotonic in the batch. The
// profile's opt is its max (the workflow's timing batch), so the steps are timed at the largest
// shapes; every batch of the profile must still run (sized at min, opt and max; in between, a
// configuration within the planned workspace) and match the CPU.
Status gemm_and_conv(Network& net) {
  Tensor x = net.add_input("x", DataType::kFloat16, {-1, 128, 768});
  Tensor w = net.add_constant(seeded(DataType::kFloat16, {768, 768}, 11), "w");
  net.mark_output(net.matmul(x, w), "y");
  Tensor image = net.add_input("image", DataType::kFloat16, {-1, 256, 14, 14});
  Tensor k = net.add_constant(seeded(DataType::kFloat16, {256, 256, 3, 3}, 12), "k");
  net.mark_output(net.relu(net.convolution(image, k, Tensor{}, ConvolutionAttributes().set_padding({1, 1}))), "z");
  return net.status();
}

TEST_F(CudaEngine, EveryBatchOfAProfileTimedAtItsMaxRunsWithinThePlannedWorkspace) {
  EngineBuild build;
  build.name = "gemm_and_conv";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) { return gemm_and_conv(net); };
  build.weights_path = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors";
  build.backend = "cuda";
  build.add_input("x", {ShapeRange{{1, 128, 768}, {32, 128, 768}, {32, 128, 768}}});
  build.add_input("image", {ShapeRange{{1, 256, 14, 14}, {32, 256, 14, 14}, {32, 256, 14, 14}}});
  build.quiet = true;
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "gemm_and_conv");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  Network reference_net;
  ASSERT_TRUE(gemm_and_conv(reference_net).is_ok());
  auto cpu = backends::create_backend("cpu").value();
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 31, 32}) {
    HostArray x = seeded(DataType::kFloat16, {n, 128, 768}, 600 + static_cast<unsigned>(n));
    HostArray image = seeded(DataType::kFloat16, {n, 256, 14, 14}, 700 + static_cast<unsigned>(n));
    auto got = exec->run_on_host({{"x", x.view()}, {"image", image.view()}});
    ASSERT_TRUE(got.is_ok()) << "n=" << n << ": " << got.status().to_string();
    auto want = cpu->execute(reference_net, {{"x", x.view()}, {"image", image.view()}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    for (const char* name : {"y", "z"}) {
      auto cmp = compare_outputs(got->at(name).view(), want->at(name).view());
      ASSERT_TRUE(cmp.is_ok());
      EXPECT_EQ(cmp->candidate_non_finite.nan, 0) << name << " n=" << n;
      EXPECT_LE(cmp->rel_l2_error, 2e-3) << name << " n=" << n;
    }
  }
}

TEST_F(CudaEngine, RefusesAShapeOutsideItsProfile) {
  auto bytes = build_serialized_engine(mlp_build(DataType::kFloat32));
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "mlp");
  ASSERT_TRUE(engine.is_ok());
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok());
  Status s = exec->set_input_shape("x", {33, 64});
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("33"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tensoracle
