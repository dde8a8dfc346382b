// The vector path of the layer and RMS norm kernels (rows of whole 16-byte vectors, every
// pointer 16-byte aligned) and its fallback to the scalar kernels, checked against the CPU
// reference.
//
// - Which launches take the vector path is host code (norm_vectors_per_thread): those tests run
//   anywhere.
// - On the GPU every candidate of kernel.layer_norm / kernel.rms_norm runs directly (initialize +
//   run on poisoned outputs) with its buffers either 16-byte aligned or shifted by one element,
//   and is compared with the CPU backend: fp32 within rel L2 1e-6, fp16/bf16 within their storage
//   precision, NaN exactly where the reference has NaN. The aligned BERT-like rows must take the
//   vector path in at least one candidate, the others must not.
// GPU tests skip with the reason where no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "gpu/family_testing.h"
#include "gpu/fused_step_testing.h"
#include "host/models/state_dicts.h"
#include "gpu/seeded_arrays.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/kernels/normalization_kernel.h"
#include "backends/cuda/kernels/pointwise_rows.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

using testing::expect_matches;
using testing::Fill;
using testing::Match;
using testing::OnGpu;
using testing::random_array;
using testing::scalar_scale;

// ---------------------------------------------------------------- host-only: path choice

// A fake device address with the given remainder modulo 16 (never dereferenced).
const void* address(uintptr_t remainder) { return reinterpret_cast<const void*>(uintptr_t{0x10000} + remainder); }

NormArgs layer_rows(int64_t rows, int64_t size) {
  NormArgs a;
  a.rows = rows;
  a.size = size;
  a.scale = address(0);
  a.bias = address(0);
  return a;
}

RowLaunch launch_of(int64_t size, const std::string& variant) {
  auto r = row_launch(size, variant);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : RowLaunch{};
}

TEST(NormVectorPath, BertRowsCacheWholeVectorsPerLane) {
  const RowLaunch warp = launch_of(768, "warp");
  // 768 fp16 = 96 vectors of 8 = 3 per lane; 768 fp32 = 192 vectors of 4 = 6 per lane.
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, layer_rows(4096, 768), warp), 3);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kBFloat16, layer_rows(4096, 768), warp), 3);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, layer_rows(4096, 768), warp), 6);
  // The warp variant's longest rows (1024) still fit: as many values per lane as the scalar kernel.
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, layer_rows(1, 1024),
                                    launch_of(1024, "warp")),
            4);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, layer_rows(1, 1024),
                                    launch_of(1024, "warp")),
            8);
}

TEST(NormVectorPath, BlockRowsCacheAtMostSixteenValuesPerThread) {
  const NormArgs rows = layer_rows(6, 4096);  // 512 fp16 vectors
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, rows, launch_of(4096, "block128")), 0)
      << "4 vectors (32 values) per thread are more than a block row caches";
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, rows, launch_of(4096, "block256")), 2);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, rows, launch_of(4096, "block256")), 4);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, rows, launch_of(4096, "block1024")), 1);
}

TEST(NormVectorPath, OtherRowsTakeTheScalarKernels) {
  const RowLaunch warp = launch_of(768, "warp");
  const NormArgs bert = layer_rows(4096, 768);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, layer_rows(4, 772), warp), 0)
      << "772 is not a multiple of 8";
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, layer_rows(4, 772), warp), 7)
      << "193 fp32 vectors: 7 rounds over a warp, the last with lane 0 only";
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, layer_rows(4, 770), warp), 0)
      << "770 is not a multiple of 4";
  EXPECT_EQ(norm_vectors_per_thread(address(2), address(0), DataType::kFloat16, bert, warp), 0) << "x unaligned";
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(8), DataType::kFloat16, bert, warp), 0) << "y unaligned";
  NormArgs scale = bert;
  scale.scale = address(4);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat32, scale, warp), 0) << "scale unaligned";
  NormArgs bias = bert;
  bias.bias = address(2);
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kBFloat16, bias, warp), 0) << "bias unaligned";
  NormArgs plain = bert;
  plain.scale = plain.bias = nullptr;
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, plain, warp), 3)
      << "no affine parameters: nothing more to align";
  NormArgs group = bert;
  group.groups = 8;
  group.channels_per_group = 4;
  group.spatial = 192;
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat16, group, warp), 0)
      << "group norm indexes the affine parameters by channel";
  EXPECT_EQ(norm_vectors_per_thread(address(0), address(0), DataType::kFloat64, bert, warp), 0);
}

// ---------------------------------------------------------------- on the GPU

void set_nan(HostArray& array, int64_t index) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const size_t width = data_type_size(array.dtype());
  convert_elements(DataType::kFloat64, &nan, array.dtype(), static_cast<char*>(array.data()) + index * width, 1);
}

class NormOnGpu : public OnGpu {
 protected:
  // Device memory for `bytes` starting `offset` bytes past a 256-byte aligned allocation.
  struct OffsetBuffer {
    DeviceBuffer base;
    void* ptr = nullptr;
    OffsetBuffer(size_t bytes, size_t offset) : base(device_memory(bytes + offset + 16)) {
      ptr = static_cast<char*>(base.data()) + offset;
    }
  };

  // Runs every candidate of `family_name` for the last layer of `net` with every buffer placed
  // `offset_elements` past a 16-byte boundary and compares each with the CPU backend. Returns how
  // many candidates took the vector path.
  int check_every_candidate(const std::string& family_name, const Network& net, const NamedArrays& inputs,
                            int64_t offset_elements) {
    auto cpu = create_backend("cpu");
    EXPECT_TRUE(cpu.is_ok());
    auto expected = (*cpu)->execute(net, views_of(inputs));
    EXPECT_TRUE(expected.is_ok()) << expected.status().message();
    if (!expected.is_ok()) return 0;

    const Node& node = net.node(net.num_nodes() - 1);
    std::vector<const TensorDesc*> in_descs;
    for (Tensor t : node.inputs) in_descs.push_back(t.valid() ? &net.tensor(t).desc : nullptr);
    std::vector<TensorDesc> out_descs;
    for (Tensor t : node.outputs) out_descs.push_back(net.tensor(t).desc);
    StepInstance step{NodeInstance{node, in_descs, out_descs}, {}, {}, {}, {}, out_descs, {}};
    step.input_layouts.assign(in_descs.size(), Layout::kLinear);
    step.output_layouts.assign(out_descs.size(), Layout::kLinear);

    const TacticFamily* f = tactic_families().find(family_name);
    EXPECT_NE(f, nullptr) << family_name;
    if (!f) return 0;
    const Status can = f->can_implement(step, device_);
    EXPECT_TRUE(can.is_ok()) << can.message();
    const RunContext ctx{stream_, nullptr, nullptr, &device_};
    auto candidates = f->candidates(step, ctx, 8);
    EXPECT_TRUE(candidates.is_ok() && !candidates->empty());
    if (!candidates.is_ok()) return 0;

    const TensorDesc& out = out_descs[0];
    const size_t width = data_type_size(out.dtype);
    const size_t offset = static_cast<size_t>(offset_elements) * width;
    std::vector<std::unique_ptr<OffsetBuffer>> memory;
    StepBuffers buffers;
    for (Tensor t : node.inputs) {
      if (!t.valid()) {
        buffers.inputs.push_back({});
        continue;
      }
      const HostArray& host = inputs.at(net.tensor(t).name);
      memory.push_back(std::make_unique<OffsetBuffer>(host.byte_size(), offset));
      EXPECT_EQ(cudaMemcpy(memory.back()->ptr, host.data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
      buffers.inputs.push_back({host.dtype(), host.shape(), Layout::kLinear, memory.back()->ptr});
    }
    const size_t bytes = static_cast<size_t>(out.shape.element_count().value()) * width;
    OffsetBuffer y(bytes, offset);
    buffers.outputs = {{out.dtype, out.shape, Layout::kLinear, y.ptr}};

    const int64_t size = out.shape[out.shape.rank() - 1];
    NormArgs args;  // the rows and pointers as the tactic passes them (layer and RMS norm over the last axis)
    args.size = size;
    args.rows = out.shape.element_count().value() / size;
    args.scale = buffers.inputs.size() > 1 ? buffers.inputs[1].data : nullptr;
    args.bias = family_name == "kernel.layer_norm" && buffers.inputs.size() > 2 ? buffers.inputs[2].data : nullptr;

    int vectorized = 0;
    for (auto& tactic : *candidates) {
      SCOPED_TRACE(tactic->name());
      const std::string variant = tactic->name().substr(tactic->name().find('#') + 1);
      if (norm_vectors_per_thread(buffers.inputs[0].data, y.ptr, out.dtype, args, launch_of(size, variant)) > 0)
        ++vectorized;
      EXPECT_EQ(cudaMemset(y.ptr, 0xFF, bytes), cudaSuccess);  // NaN: never a correct output here
      const Status init = tactic->initialize(step, ctx);
      EXPECT_TRUE(init.is_ok()) << init.message();
      const Status ran = tactic->run(step, buffers, ctx);
      EXPECT_TRUE(ran.is_ok()) << ran.message();
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      HostArray got = HostArray::zeros(out.dtype, out.shape).value();
      EXPECT_EQ(cudaMemcpy(got.data(), y.ptr, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      expect_matches(tactic->name(), got, expected->at("y"), Match::kClose);
    }
    return vectorized;
  }
};

struct Rows {
  DataType type;
  int64_t rows, size;
};

std::string describe(const Rows& r) {
  return std::string(data_type_name(r.type)) + " " + std::to_string(r.rows) + "x" + std::to_string(r.size);
}

Network layer_norm_net(const Rows& r, bool affine) {
  Network n;
  Tensor x = n.add_input("x", r.type, {r.rows, r.size});
  Tensor g = affine ? n.add_input("g", r.type, {r.size}) : Tensor{};
  Tensor b = affine ? n.add_input("b", r.type, {r.size}) : Tensor{};
  n.mark_output(n.layer_norm(x, g, b, LayerNormAttributes().set_epsilon(1e-5)), "y");
  EXPECT_TRUE(n.status().is_ok()) << n.status().message();
  return n;
}

NamedArrays layer_norm_inputs(const Rows& r, Fill fill, bool affine) {
  NamedArrays in;
  in["x"] = random_array(r.type, {r.rows, r.size}, 31, fill);
  if (affine) {
    in["g"] = random_array(r.type, {r.size}, 32);
    in["b"] = random_array(r.type, {r.size}, 33);
  }
  return in;
}

bool whole_vectors(const Rows& r) { return r.size % (16 / static_cast<int64_t>(data_type_size(r.type))) == 0; }

TEST_F(NormOnGpu, LayerNormRowsOfWholeVectorsTakeTheVectorPath) {
  const Rows cases[] = {{DataType::kFloat16, 4096, 768}, {DataType::kBFloat16, 300, 768},
                        {DataType::kFloat32, 300, 768},  {DataType::kFloat16, 1, 768},
                        {DataType::kFloat32, 1, 768},    {DataType::kFloat16, 37, 776},
                        {DataType::kFloat32, 37, 1020},  {DataType::kFloat16, 6, 4096},
                        {DataType::kBFloat16, 5, 16},    {DataType::kFloat32, 5, 4}};
  for (const Rows& r : cases) {
    SCOPED_TRACE(describe(r));
    const int vectorized = check_every_candidate("kernel.layer_norm", layer_norm_net(r, true),
                                                 layer_norm_inputs(r, Fill::kMixed, true), 0);
    EXPECT_GT(vectorized, 0) << "no candidate took the vector path";
  }
}

TEST_F(NormOnGpu, LargeCommonOffsetKeepsItsPrecision) {
  // Values around 1000 with unit spread: the statistics see x - x[0], exact in fp32, so the fp32
  // results keep rel L2 1e-6 on the vector path as on the scalar one.
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (int64_t offset : {0, 1}) {
      const Rows r{type, 64, 768};
      SCOPED_TRACE(describe(r) + " at element offset " + std::to_string(offset));
      const int vectorized = check_every_candidate("kernel.layer_norm", layer_norm_net(r, true),
                                                   layer_norm_inputs(r, Fill::kOffset, true), offset);
      if (offset == 0) EXPECT_GT(vectorized, 0);
      else EXPECT_EQ(vectorized, 0);
    }
  }
}

TEST_F(NormOnGpu, UnalignedBuffersAndPartialVectorsFallBack) {
  const Rows cases[] = {{DataType::kFloat16, 40, 770}, {DataType::kFloat32, 40, 770}, {DataType::kBFloat16, 40, 100},
                        {DataType::kFloat16, 1, 7}};
  for (const Rows& r : cases) {
    SCOPED_TRACE(describe(r));
    ASSERT_FALSE(whole_vectors(r));
    EXPECT_EQ(check_every_candidate("kernel.layer_norm", layer_norm_net(r, true),
                                    layer_norm_inputs(r, Fill::kMixed, true), 0),
              0);
  }
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    const Rows r{type, 40, 768};
    SCOPED_TRACE(describe(r) + " one element past a 16-byte boundary");
    EXPECT_EQ(check_every_candidate("kernel.layer_norm", layer_norm_net(r, true),
                                    layer_norm_inputs(r, Fill::kMixed, true), 1),
              0);
  }
}

TEST_F(NormOnGpu, LayerNormWithoutAffineAndRmsNorm) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    const Rows r{type, 100, 768};
    SCOPED_TRACE(describe(r));
    EXPECT_GT(check_every_candidate("kernel.layer_norm", layer_norm_net(r, false),
                                    layer_norm_inputs(r, Fill::kMixed, false), 0),
              0);
    Network rms;
    Tensor x = rms.add_input("x", type, {r.rows, r.size});
    rms.mark_output(rms.rms_norm(x, rms.add_input("g", type, {r.size})), "y");
    NamedArrays in;
    in["x"] = random_array(type, {r.rows, r.size}, 34);
    in["g"] = random_array(type, {r.size}, 35);
    EXPECT_GT(check_every_candidate("kernel.rms_norm", rms, in, 0), 0);
  }
}

TEST_F(NormOnGpu, NanPoisonsOnlyItsOwnRow) {
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    const Rows r{type, 9, 768};
    SCOPED_TRACE(describe(r));
    NamedArrays in = layer_norm_inputs(r, Fill::kMixed, true);
    set_nan(in["x"], 3 * 768 + 500);  // inside a vector in the middle of row 3
    set_nan(in["x"], 7 * 768);        // row 7's first element: the shift itself
    EXPECT_GT(check_every_candidate("kernel.layer_norm", layer_norm_net(r, true), in, 0), 0);
  }
}

// ---------------------------------------------------------------- a quantized copy

// x -> layer norm "ln" (output "y"), read by an add "r" (output "r") and then by a per-tensor
// quantize "q" (output "codes"): BERT's LayerNorm, whose output is the next block's residual and,
// quantized, its GEMMs' operand. A `late_scale` is computed by a layer after the layer norm.
Network norm_then_quantize(const Rows& r, DataType code, bool per_channel = false, bool late_scale = false) {
  Network n;
  Tensor x = n.add_input("x", r.type, {r.rows, r.size});
  Tensor y = n.layer_norm(x, n.add_input("g", r.type, {r.size}), n.add_input("b", r.type, {r.size}),
                          LayerNormAttributes().set_epsilon(1e-5).set_name("ln"));
  n.mark_output(n.elementwise(y, x, ElementwiseAttributes().set_op(ElementwiseOp::kAdd).set_name("r")), "r");
  HostArray scale = HostArray::zeros(DataType::kFloat32, {per_channel ? r.size : 1}).value();
  for (int64_t i = 0; i < scale.element_count(); ++i) scale.data_as<float>()[i] = code == DataType::kInt8 ? 0.02f : 0.006f;
  Tensor s = n.add_constant(std::move(scale));
  if (late_scale) s = n.mul(s, n.add_constant(scalar_scale(1.0f)));
  n.mark_output(n.quantize(y, s, QuantizeAttributes().set_output_type(code).set_name("q")), "codes");
  n.mark_output(y, "y");
  EXPECT_TRUE(n.status().is_ok()) << n.status().message();
  return n;
}

// The planner gives a layer norm the per-tensor quantize that reads its output beside other
// readers: one step writes the value and its codes, in the layer norm's place (ahead of the add).
// A per-channel quantize, or one whose scale a later layer computes, stays a step of its own.
TEST(NormLowering, AQuantizeBesideOtherReadersIsASecondOutputOfTheStep) {
  const Rows r{DataType::kFloat16, 32, 768};
  const auto lower = [&](bool per_channel, bool late_scale) {
    return testing::fused_step::lower(norm_then_quantize(r, DataType::kInt8, per_channel, late_scale),
                                      {{"x", {r.rows, r.size}}, {"g", {r.size}}, {"b", {r.size}}}, 90);
  };
  const auto fused = lower(false, false);
  EXPECT_EQ(fused.layers_of("ln"), (std::vector<std::string>{"ln", "q"}));
  EXPECT_EQ(fused.step_of("q"), nullptr);
  ASSERT_NE(fused.step_of("ln"), nullptr);
  EXPECT_EQ(fused.step_of("ln")->outputs.size(), 2u);
  const auto position = [&](const std::string& anchor) {
    for (size_t i = 0; i < fused.steps.size(); ++i)
      if (fused.net.node(fused.steps[i].anchor).name == anchor) return i;
    return fused.steps.size();
  };
  EXPECT_LT(position("ln"), position("r"));
  for (const auto& apart : {lower(true, false), lower(false, true)}) {
    EXPECT_EQ(apart.layers_of("ln"), (std::vector<std::string>{"ln"}));
    EXPECT_EQ(apart.layers_of("q"), (std::vector<std::string>{"q"}));
  }
}

// A plan read from an engine file is checked when it becomes a step: a "copy" that is not the
// quantize of the anchor's output 0, written as output 1 beside it, is refused, not run.
TEST(NormLowering, APlanWhoseCopyIsNoCopyIsRefused) {
  const Rows r{DataType::kFloat16, 32, 768};
  const auto l = testing::fused_step::lower(norm_then_quantize(r, DataType::kInt8),
                                            {{"x", {r.rows, r.size}}, {"g", {r.size}}, {"b", {r.size}}}, 90);
  ASSERT_NE(l.step_of("ln"), nullptr);
  ASSERT_NE(l.step_of("r"), nullptr);
  const PlannedStep& planned = *l.step_of("ln");
  ASSERT_TRUE(instantiate(l.net, planned, l.desc).is_ok());
  PlannedStep other_value = planned;  // output 0 names another tensor (the add's)
  other_value.outputs[0] = l.step_of("r")->outputs[0];
  PlannedStep more_layers = planned;  // the copy and another fused layer
  more_layers.fused.push_back(l.step_of("r")->anchor);
  for (const PlannedStep& lie : {other_value, more_layers}) {
    const auto inst = instantiate(l.net, lie, l.desc);
    ASSERT_FALSE(inst.is_ok());
    EXPECT_NE(inst.status().message().find("as a copy of its output"), std::string::npos) << inst.status().message();
  }
}

// The examples' BERT encoder with Q/DQ on every linear layer (int8 and fp8, fp16 compute): every
// LayerNorm whose output a linear layer reads quantized (the embeddings' and each layer's two but
// the last, which is the network output) writes that quantize as a copy, so the only quantize
// steps left are the attention outputs' (one per layer).
TEST(NormLowering, EveryQuantizedBertLayerNormOutputIsACopy) {
  bert_encoder::Config cfg = testing::small_bert();
  cfg.layers = 3;
  testing::TempDir dir;
  const Weights weights = Weights::with_unit_placeholders(
      testing::write_weights(dir, testing::random_state_dict(testing::bert_state_dict(cfg), 5), "weights.safetensors"));
  for (const DataType format : {DataType::kInt8, DataType::kFloat8E4M3}) {
    SCOPED_TRACE(data_type_name(format));
    cfg.quantization = format;
    Network defined;
    ASSERT_TRUE(bert_encoder::define(defined, weights, 4, 16, DataType::kFloat16, cfg).is_ok())
        << defined.status().to_string();
    const auto l = testing::fused_step::lower(std::move(defined), {{bert_encoder::kInputIds, {4, 16}},
                                                                   {bert_encoder::kAttentionMask, {4, 16}}}, 90);
    int copies = 0, quantize_steps = 0;
    for (const PlannedStep& step : l.steps) {
      const OpKind kind = l.net.node(step.anchor).kind;
      copies += kind == OpKind::kLayerNorm && step.outputs.size() == 2;
      quantize_steps += kind == OpKind::kQuantize;
    }
    EXPECT_EQ(copies, 2 * cfg.layers) << testing::fused_step::joined(l.log);
    EXPECT_EQ(quantize_steps, cfg.layers) << testing::fused_step::joined(l.log);
  }
}

// On the GPU the codes are, bit for bit, what the reference's quantize gives for the values the
// step wrote (y, checked against the reference layer norm as every norm is): on the vector path
// (rows of 768), the cached scalar one (770) and the streamed one (20000), int8 and fp8, with
// values that saturate and a NaN row.
TEST_F(NormOnGpu, AQuantizedCopyHoldsTheCodesOfTheWrittenValues) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  auto cpu = create_backend("cpu");
  auto gpu = create_backend("cuda");
  ASSERT_TRUE(cpu.is_ok() && gpu.is_ok());
  const Rows cases[] = {{DataType::kFloat16, 256, 768}, {DataType::kBFloat16, 40, 768}, {DataType::kFloat32, 40, 768},
                        {DataType::kFloat16, 40, 770},  {DataType::kFloat32, 3, 20000}};
  for (const Rows& r : cases) {
    for (DataType code : {DataType::kInt8, DataType::kFloat8E4M3}) {
      SCOPED_TRACE(describe(r) + " -> " + std::string(data_type_name(code)));
      const Network net = norm_then_quantize(r, code);
      NamedArrays in = layer_norm_inputs(r, Fill::kMixed, true);
      in["g"] = random_array(r.type, {r.size}, 36, Fill::kPositive);  // up to 9: some codes saturate
      set_nan(in["x"], 2 * r.size + 5);
      auto got = (*gpu)->execute(net, views_of(in));
      ASSERT_TRUE(got.is_ok()) << got.status().message();
      auto want = (*cpu)->execute(net, views_of(in));
      ASSERT_TRUE(want.is_ok()) << want.status().message();
      expect_matches("y", got->at("y"), want->at("y"), Match::kClose);
      expect_matches("r", got->at("r"), want->at("r"), Match::kClose);

      Network quantize;  // the reference's quantize of the values the GPU wrote
      Tensor y = quantize.add_input("y", r.type, {r.rows, r.size});
      quantize.mark_output(quantize.quantize(y, quantize.add_constant(scalar_scale(code == DataType::kInt8 ? 0.02f : 0.006f)),
                                             QuantizeAttributes().set_output_type(code)),
                           "codes");
      NamedArrays written;
      written["y"] = HostArray::copy_of(got->at("y").view()).value();
      auto codes = (*cpu)->execute(quantize, views_of(written));
      ASSERT_TRUE(codes.is_ok()) << codes.status().message();
      expect_matches("codes", got->at("codes"), codes->at("codes"), Match::kBitExact);
    }
  }
}

}  // namespace
}  // namespace tensoracle::backends::cuda
