// The CUDA computing kernels -- pointwise programs, softmax, reduce, the norms and Q/DQ --
// checked against the CPU reference.
//
// - Program building, launch planning and family decisions are host code: those tests run
//   anywhere.
// - Every candidate of a family runs directly (initialize + run on poisoned outputs) on a
//   one-layer network and is compared with the CPU backend: integer, bool and Q/DQ results bit
//   for bit, fp32 within rel L2 1e-6, fp16/bf16 within their storage precision.
// - Fused chains go through create_backend("cuda") -> execute, which plans and fuses them.
// GPU tests skip with the reason where no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "gpu/family_testing.h"
#include "gpu/fused_step_testing.h"
#include "gpu/seeded_arrays.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/kernels/pointwise_launch.h"
#include "backends/cuda/kernels/quantize_kernel.h"
#include "backends/cuda/kernels/reformat.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

using testing::candidate_names;
using testing::family;
using testing::Fill;
using testing::Match;
using testing::OneLayer;
using testing::OnGpu;
using testing::random_array;
using testing::scalar_scale;

// ---------------------------------------------------------------- inputs

// named("x", array_x, "y", array_y, ...)
NamedArrays named() { return {}; }
template <typename... Rest>
NamedArrays named(const std::string& name, HostArray array, Rest&&... rest) {
  NamedArrays out = named(std::forward<Rest>(rest)...);
  out[name] = std::move(array);
  return out;
}

// ---------------------------------------------------------------- steps of one-layer networks

Network one_layer(DataType type, Dims shape, const std::function<Tensor(Network&, Tensor)>& layer) {
  Network n;
  n.mark_output(layer(n, n.add_input("x", type, shape)), "y");
  EXPECT_TRUE(n.status().is_ok()) << n.status().message();
  return n;
}

DeviceInfo hopper() {
  DeviceInfo d;
  d.cc_major = 9;
  d.sm_count = 132;
  return d;
}

// ---------------------------------------------------------------- host-only: programs

TEST(PointwiseProgram, ActivationDefaultsComeFromTheGraphAsTheCpuReadsThem) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat32, {4});
  n.activation(x, ActivationAttributes().set_kind(ActivationKind::kLeakyRelu));
  n.activation(x, ActivationAttributes().set_kind(ActivationKind::kClip).set_beta(3.0));
  PointwiseProgram p;
  p.inputs.push_back(n.tensor(x).desc);
  ASSERT_TRUE(append_pointwise_node(p, n.node(0), 0, n.tensor(x).desc, {0}).is_ok());
  ASSERT_TRUE(append_pointwise_node(p, n.node(1), 1, n.tensor(x).desc, {1}).is_ok());
  EXPECT_EQ(p.instrs[0].code, PointwiseCode::kLeakyRelu);
  EXPECT_DOUBLE_EQ(p.instrs[0].alpha, 0.01);
  EXPECT_EQ(p.instrs[1].code, PointwiseCode::kClip);
  EXPECT_DOUBLE_EQ(p.instrs[1].alpha, 0.0);
  EXPECT_DOUBLE_EQ(p.instrs[1].beta, 3.0);
  EXPECT_EQ(p.instrs[1].node, 1);
  EXPECT_EQ(p.to_string(), "leaky_relu(r0; 0.01, 0):fp32 -> clip(r1; 0, 3):fp32");
}

TEST(PointwiseProgram, EveryGraphOpMapsToItsCode) {
  Network n;
  Tensor a = n.add_input("a", DataType::kFloat32, {2});
  Tensor c = n.add_input("c", DataType::kBool, {2});
  n.elementwise(a, a, ElementwiseAttributes().set_op(ElementwiseOp::kGreaterEqual));
  n.unary(a, UnaryAttributes().set_op(UnaryOp::kRound));
  n.select(c, a, a);
  n.cast(a, DataType::kInt8);
  const PointwiseCode expected[] = {PointwiseCode::kGreaterEqual, PointwiseCode::kRound, PointwiseCode::kSelect,
                                    PointwiseCode::kCast};
  PointwiseProgram p;
  p.inputs = {n.tensor(a).desc, n.tensor(c).desc};
  for (size_t i = 0; i < 4; ++i) {
    const Node& node = n.node(i);
    std::vector<int> operands;
    for (Tensor t : node.inputs) operands.push_back(t == c ? 1 : 0);
    auto r = append_pointwise_node(p, node, static_cast<int64_t>(i), n.tensor(node.outputs[0]).desc, operands);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(*r, static_cast<int>(2 + i));
    EXPECT_EQ(p.instrs[i].code, expected[i]);
    EXPECT_EQ(p.instrs[i].type, n.tensor(node.outputs[0]).desc.dtype);
  }
  EXPECT_EQ(p.instrs[2].a, 1);  // the condition register
  EXPECT_FALSE(append_pointwise_node(p, n.node(0), 0, n.tensor(a).desc, {7, 0}).is_ok())
      << "a register not yet computed";
}

// A quantize layer joins a program as kQuantize where its scale is one value that a program
// input holds; per-channel scales, a scale computed inside the program, and a value that is not
// fp32/fp16/bf16 are refused (such a quantize is a step of its own).
TEST(PointwiseProgram, APerTensorQuantizeIsAnInstructionAndOtherQuantizesAreNot) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat16, {8, 16});
  Tensor one = n.add_input("one", DataType::kFloat32, {1});
  Tensor per_channel = n.add_input("channels", DataType::kFloat32, {16});
  Tensor q = n.quantize(x, one, QuantizeAttributes().set_output_type(DataType::kFloat8E4M3));
  Tensor qc = n.quantize(x, per_channel, QuantizeAttributes().set_output_type(DataType::kInt8).set_axis(1));
  ASSERT_TRUE(n.status().is_ok()) << n.status().message();
  const Node& per_tensor_node = n.node(static_cast<size_t>(n.tensor(q).producer));
  const Node& per_channel_node = n.node(static_cast<size_t>(n.tensor(qc).producer));

  PointwiseProgram p;
  p.inputs = {n.tensor(x).desc, n.tensor(one).desc, n.tensor(per_channel).desc};
  auto r = append_pointwise_node(p, per_tensor_node, 0, n.tensor(q).desc, {0, 1});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(p.instrs.back().code, PointwiseCode::kQuantize);
  EXPECT_EQ(p.instrs.back().type, DataType::kFloat8E4M3);
  EXPECT_EQ(p.instrs.back().b, 1);
  EXPECT_NE(p.to_string().find("quantize(r0, r1):fp8e4m3"), std::string::npos) << p.to_string();

  const auto refused = [&](const Node& node, const TensorDesc& out, std::vector<int> operands) {
    PointwiseProgram copy = p;
    auto result = append_pointwise_node(copy, node, 1, out, operands);
    return !result.is_ok() && result.status().code() == StatusCode::kUnsupported;
  };
  EXPECT_TRUE(refused(per_channel_node, n.tensor(qc).desc, {0, 2})) << "a per-channel scale";
  EXPECT_TRUE(refused(per_tensor_node, n.tensor(q).desc, {0, 3})) << "a scale the program computes";
  EXPECT_TRUE(refused(per_tensor_node, n.tensor(q).desc, {3, 1})) << "quantizing an fp8 value again";
}

// The planner ends a pointwise step with the quantize layer that alone reads its result, so the
// step writes the codes and the value before them never reaches memory; it does not where the
// value is read elsewhere too or where the quantize is per channel.
TEST(PointwiseLowering, AQuantizeThatAloneReadsAChainEndsItsStep) {
  const auto lowered = [](bool gelu_is_an_output, bool per_channel) {
    Network n;
    Tensor x = n.add_input("x", DataType::kFloat16, {32, 3072});
    Tensor g = n.activation(x, ActivationAttributes().set_kind(ActivationKind::kGeluErf).set_name("gelu"));
    HostArray scale = HostArray::zeros(DataType::kFloat32, {per_channel ? 3072 : 1}).value();
    for (int64_t i = 0; i < scale.element_count(); ++i) scale.data_as<float>()[i] = 0.01f;
    n.mark_output(n.quantize(g, n.add_constant(std::move(scale)),
                             QuantizeAttributes().set_output_type(DataType::kInt8).set_name("q")),
                  "y");
    if (gelu_is_an_output) n.mark_output(g, "g");
    return testing::fused_step::lower(std::move(n), {{"x", {32, 3072}}}, 90);
  };
  const auto fused = lowered(false, false);
  EXPECT_EQ(fused.layers_of("gelu"), (std::vector<std::string>{"gelu", "q"}));
  EXPECT_EQ(fused.step_of("q"), nullptr);
  for (const auto& apart : {lowered(true, false), lowered(false, true)}) {
    EXPECT_EQ(apart.layers_of("gelu"), (std::vector<std::string>{"gelu"}));
    EXPECT_EQ(apart.layers_of("q"), (std::vector<std::string>{"q"}));
  }
}

PointwiseProgram add_program(DataType type, Dims a, Dims b) {
  PointwiseProgram p;
  p.inputs = {{type, a}, {type, b}};
  PointwiseInstr add{PointwiseCode::kAdd, 0, 1};
  add.type = type;
  p.instrs.push_back(add);
  return p;
}

TEST(PointwiseLaunch, SameShapedTensorsTakeTheFlatPath) {
  auto launch = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {2, 3, 4}, {2, 3, 4}), {},
                                         {DataType::kFloat16, {2, 3, 4}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  EXPECT_EQ(launch->merged_rank(), 1);
  EXPECT_FALSE(launch->computes_in_fp64());
}

TEST(PointwiseLaunch, ABiasOverRowsMergesToTwoDims) {
  auto launch = PointwiseLaunch::prepare(add_program(DataType::kFloat32, {8, 4, 16}, {16}), {},
                                         {DataType::kFloat32, {8, 4, 16}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  EXPECT_EQ(launch->merged_rank(), 2);
}

TEST(PointwiseLaunch, WideIntegersComputeInFp64) {
  auto launch =
      PointwiseLaunch::prepare(add_program(DataType::kInt32, {5}, {1}), {}, {DataType::kInt32, {5}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  EXPECT_TRUE(launch->computes_in_fp64());
}

TEST(PointwiseLaunch, RefusesProgramsBeyondTheKernelsLimits) {
  PointwiseProgram wide;
  for (int i = 0; i < 17; ++i) wide.inputs.push_back({DataType::kFloat32, {4}});
  wide.instrs.push_back(PointwiseInstr{PointwiseCode::kAdd, 0, 1});
  EXPECT_EQ(PointwiseLaunch::check(wide).code(), StatusCode::kUnsupported);

  PointwiseProgram deep;
  deep.inputs.push_back({DataType::kFloat32, {4}});
  for (int i = 0; i < 33; ++i) deep.instrs.push_back(PointwiseInstr{PointwiseCode::kRelu, i});
  EXPECT_EQ(PointwiseLaunch::check(deep).code(), StatusCode::kUnsupported);
  deep.instrs.resize(32);
  EXPECT_TRUE(PointwiseLaunch::check(deep).is_ok());
}

TEST(PointwiseLaunch, AnInputThatDoesNotBroadcastIsAnError) {
  auto launch = PointwiseLaunch::prepare(add_program(DataType::kFloat32, {3}, {4}), {}, {DataType::kFloat32, {4}},
                                         Layout::kLinear);
  EXPECT_FALSE(launch.is_ok());
}

// The vector kernel's choice (pointwise_kernel.h) needs only pointer values, not memory.
const void* at(uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(PointwiseVectorPath, ContiguousSameTypedTensorsAtAlignedPointersTakeTheFlatVector) {
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    SCOPED_TRACE(data_type_name(type));
    auto launch = PointwiseLaunch::prepare(add_program(type, {3, 5, 7}, {3, 5, 7}), {}, {type, {3, 5, 7}},
                                           Layout::kLinear);
    ASSERT_TRUE(launch.is_ok()) << launch.status().message();
    const void* aligned[] = {at(0x1000), at(0x2010)};
    EXPECT_EQ(launch->vector_path(aligned, at(0x3000)), PointwiseVector::kFlat);
    const void* one_off[] = {at(0x1000), at(0x2010 + data_type_size(type))};
    EXPECT_EQ(launch->vector_path(one_off, at(0x3000)), PointwiseVector::kStrided)
        << "a misaligned input is read lane by lane";
    EXPECT_EQ(plan_vector_input(launch->args(), PointwiseVector::kStrided, 1, one_off[1]), PointwiseInput::kGather);
    EXPECT_EQ(launch->vector_path(aligned, at(0x3000 + data_type_size(type))), PointwiseVector::kNone)
        << "misaligned output";
  }
}

TEST(PointwiseVectorPath, AScalarInputIsReadOneElementAtATimeSoItsAlignmentDoesNotMatter) {
  auto launch = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {100}, {1}), {}, {DataType::kFloat16, {100}},
                                         Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  const void* in[] = {at(0x1000), at(0x2002)};
  EXPECT_EQ(launch->vector_path(in, at(0x3000)), PointwiseVector::kFlat);
  EXPECT_EQ(plan_vector_input(launch->args(), PointwiseVector::kFlat, 1, in[1]), PointwiseInput::kBroadcast);
}

// The input modes the strided vector kernel gets for `inputs` (at aligned pointers).
std::vector<PointwiseInput> strided_modes(const PointwiseLaunch& launch, const std::vector<const void*>& inputs) {
  std::vector<PointwiseInput> modes;
  for (int k = 0; k < launch.num_inputs(); ++k)
    modes.push_back(plan_vector_input(launch.args(), PointwiseVector::kStrided, k, inputs[static_cast<size_t>(k)]));
  return modes;
}

TEST(PointwiseVectorPath, RowsOfWholeVectorsLoadOrBroadcastAndRaggedRowsGather) {
  const std::vector<const void*> in = {at(0x1000), at(0x2000)};
  auto bias = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {4, 6, 16}, {16}), {},
                                       {DataType::kFloat16, {4, 6, 16}}, Layout::kLinear);
  ASSERT_TRUE(bias.is_ok()) << bias.status().message();
  EXPECT_EQ(bias->merged_rank(), 2);
  EXPECT_EQ(bias->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*bias, in), (std::vector<PointwiseInput>{PointwiseInput::kVector, PointwiseInput::kVector}));
  // One value per row (stride 0 along the row) is one value for a whole vector.
  auto per_row = PointwiseLaunch::prepare(add_program(DataType::kFloat32, {6, 12}, {6, 1}), {},
                                          {DataType::kFloat32, {6, 12}}, Layout::kLinear);
  ASSERT_TRUE(per_row.is_ok()) << per_row.status().message();
  EXPECT_EQ(per_row->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*per_row, in),
            (std::vector<PointwiseInput>{PointwiseInput::kVector, PointwiseInput::kBroadcast}));
  // 12 fp16 columns are not whole 8-element vectors: a vector's lanes span two rows.
  auto ragged = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {6, 12}, {12}), {},
                                         {DataType::kFloat16, {6, 12}}, Layout::kLinear);
  ASSERT_TRUE(ragged.is_ok()) << ragged.status().message();
  EXPECT_EQ(ragged->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*ragged, in), (std::vector<PointwiseInput>{PointwiseInput::kGather, PointwiseInput::kGather}));
  // A misaligned pointer gathers that input only.
  const std::vector<const void*> off = {at(0x1000), at(0x2002)};
  EXPECT_EQ(strided_modes(*bias, off), (std::vector<PointwiseInput>{PointwiseInput::kVector, PointwiseInput::kGather}));
}

TEST(PointwiseVectorPath, AnOuterStrideOffSixteenBytesGathers) {
  // [5, 8] fp16 read with row stride 12 elements (24 bytes): every row after the first starts
  // off the 16-byte grid, however aligned the pointer. No layout makes such a tensor today, so
  // the arguments are written by hand.
  PointwiseKernelArgs args;
  args.num_inputs = 1;
  args.rank = 2;
  args.count = 40;
  args.shape[0] = 5;
  args.shape[1] = 8;
  args.out_type = args.lane_type = args.in_type[0] = DataType::kFloat16;
  args.in_stride[0][0] = 12;
  args.in_stride[0][1] = 1;
  EXPECT_EQ(plan_vector_input(args, PointwiseVector::kStrided, 0, at(0x1000)), PointwiseInput::kGather);
  args.in_stride[0][0] = 16;
  EXPECT_EQ(plan_vector_input(args, PointwiseVector::kStrided, 0, at(0x1000)), PointwiseInput::kVector);
  args.in_type[0] = DataType::kFloat32;  // another type than the lanes': lane by lane
  EXPECT_EQ(plan_vector_input(args, PointwiseVector::kStrided, 0, at(0x1000)), PointwiseInput::kGather);
}

TEST(PointwiseVectorPath, BertGeluIsOneFlatInstructionWithNothingKept) {
  PointwiseProgram gelu;
  gelu.inputs = {{DataType::kFloat16, {4096, 3072}}};
  PointwiseInstr instr{PointwiseCode::kGeluErf, 0};
  instr.type = DataType::kFloat16;
  gelu.instrs.push_back(instr);
  auto launch = PointwiseLaunch::prepare(gelu, {}, {DataType::kFloat16, {4096, 3072}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  const void* in[] = {at(0x1000)};
  EXPECT_EQ(launch->vector_path(in, at(0x3000)), PointwiseVector::kFlat);
  EXPECT_EQ(launch->args().kept, 0);
}

TEST(PointwiseVectorPath, BertEmbeddingSumIsRankThreeWithEveryInputLoadedInVectors) {
  // word[B, S, 768] + pos[1, S, 768] + type[1, 1, 768]: two broadcast dims, so rank 3.
  const DataType h = DataType::kFloat16;
  PointwiseProgram sum;
  sum.inputs = {{h, {32, 128, 768}}, {h, {1, 128, 768}}, {h, {1, 1, 768}}};
  PointwiseInstr first{PointwiseCode::kAdd, 0, 1}, second{PointwiseCode::kAdd, 3, 2};
  first.type = second.type = h;
  sum.instrs = {first, second};
  auto launch = PointwiseLaunch::prepare(sum, {}, {h, {32, 128, 768}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  EXPECT_EQ(launch->merged_rank(), 3);
  EXPECT_EQ(launch->args().kept, 0) << "inputs are loaded where they are read, never kept";
  const std::vector<const void*> in = {at(0x10000), at(0x20000), at(0x30000)};
  EXPECT_EQ(launch->vector_path(in.data(), at(0x40000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*launch, in), std::vector<PointwiseInput>(3, PointwiseInput::kVector));
}

TEST(PointwiseVectorPath, AChannelsLastOutputIsWalkedInItsStorageOrder) {
  // ResNet's input: fp32 NCHW cast to fp16 NHWC. Walking the output's order (N, H*W, C) writes it
  // contiguously; the NCHW planes are gathered lane by lane (C = 3 is no whole vector).
  PointwiseProgram cast;
  cast.inputs = {{DataType::kFloat32, {32, 3, 224, 224}}};
  PointwiseInstr instr{PointwiseCode::kCast, 0};
  instr.type = DataType::kFloat16;
  cast.instrs.push_back(instr);
  auto launch = PointwiseLaunch::prepare(cast, {Layout::kLinear}, {DataType::kFloat16, {32, 3, 224, 224}},
                                         Layout::kNhwc);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  ASSERT_EQ(launch->merged_rank(), 3);
  const PointwiseKernelArgs& a = launch->args();
  EXPECT_EQ(std::vector<int64_t>(a.shape, a.shape + 3), (std::vector<int64_t>{32, 224 * 224, 3}));
  EXPECT_EQ(std::vector<int64_t>(a.out_stride, a.out_stride + 3), (std::vector<int64_t>{3 * 224 * 224, 3, 1}));
  EXPECT_EQ(std::vector<int64_t>(a.in_stride[0], a.in_stride[0] + 3),
            (std::vector<int64_t>{3 * 224 * 224, 1, 224 * 224}));
  const std::vector<const void*> in = {at(0x1000)};
  EXPECT_EQ(launch->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*launch, in), std::vector<PointwiseInput>{PointwiseInput::kGather});
  // Both tensors channels-last: one flat walk.
  auto both = PointwiseLaunch::prepare(cast, {Layout::kNhwc}, {DataType::kFloat16, {32, 3, 224, 224}}, Layout::kNhwc);
  ASSERT_TRUE(both.is_ok()) << both.status().message();
  EXPECT_EQ(both->merged_rank(), 1);
}

TEST(PointwiseVectorPath, RankFiveBroadcastsOddCountsAndHugeCounts) {
  const std::vector<const void*> in = {at(0x1000), at(0x2000)};
  auto rank5 = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {2, 3, 4, 5, 8}, {2, 1, 4, 1, 8}), {},
                                        {DataType::kFloat16, {2, 3, 4, 5, 8}}, Layout::kLinear);
  ASSERT_TRUE(rank5.is_ok()) << rank5.status().message();
  EXPECT_EQ(rank5->merged_rank(), 5);
  EXPECT_EQ(rank5->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*rank5, in), std::vector<PointwiseInput>(2, PointwiseInput::kVector));
  // 5 * 823 * 3 = 12345 elements, rows of 3: a partial last vector, every lane gathered.
  auto odd = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {5, 823, 3}, {3}), {},
                                      {DataType::kFloat16, {5, 823, 3}}, Layout::kLinear);
  ASSERT_TRUE(odd.is_ok()) << odd.status().message();
  EXPECT_EQ(odd->vector_path(in.data(), at(0x3000)), PointwiseVector::kStrided);
  EXPECT_EQ(strided_modes(*odd, in), std::vector<PointwiseInput>(2, PointwiseInput::kGather));
  // 2^31 elements do not fit the strided kernel's 32-bit coordinates; flat ones still vectorize.
  auto huge = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {65536, 32768}, {32768}), {},
                                       {DataType::kFloat16, {65536, 32768}}, Layout::kLinear);
  ASSERT_TRUE(huge.is_ok()) << huge.status().message();
  EXPECT_EQ(huge->vector_path(in.data(), at(0x3000)), PointwiseVector::kNone);
  auto huge_flat = PointwiseLaunch::prepare(add_program(DataType::kFloat16, {65536, 32768}, {65536, 32768}), {},
                                            {DataType::kFloat16, {65536, 32768}}, Layout::kLinear);
  ASSERT_TRUE(huge_flat.is_ok()) << huge_flat.status().message();
  EXPECT_EQ(huge_flat->vector_path(in.data(), at(0x3000)), PointwiseVector::kFlat);
}

TEST(PointwiseVectorPath, WideIntegersFp8AndFp64StayOnTheInterpreterButFloatCastsVectorize) {
  const void* in[] = {at(0x1000), at(0x2000)};
  PointwiseProgram mixed = add_program(DataType::kFloat16, {64}, {64});
  mixed.instrs.push_back(PointwiseInstr{PointwiseCode::kCast, 2});  // to fp32
  auto cast = PointwiseLaunch::prepare(mixed, {}, {DataType::kFloat32, {64}}, Layout::kLinear);
  ASSERT_TRUE(cast.is_ok()) << cast.status().message();
  EXPECT_EQ(cast->vector_path(in, at(0x3000)), PointwiseVector::kStrided) << "fp16 inputs gathered into fp32 lanes";
  auto wide = PointwiseLaunch::prepare(add_program(DataType::kInt32, {64}, {64}), {}, {DataType::kInt32, {64}},
                                       Layout::kLinear);
  ASSERT_TRUE(wide.is_ok()) << wide.status().message();
  EXPECT_EQ(wide->vector_path(in, at(0x3000)), PointwiseVector::kNone);
  PointwiseProgram from_fp8 = add_program(DataType::kFloat8E4M3, {64}, {64});
  from_fp8.instrs.push_back(PointwiseInstr{PointwiseCode::kCast, 2});  // to fp32
  from_fp8.instrs[0].type = DataType::kFloat32;
  auto fp8 = PointwiseLaunch::prepare(from_fp8, {}, {DataType::kFloat32, {64}}, Layout::kLinear);
  ASSERT_TRUE(fp8.is_ok()) << fp8.status().message();
  EXPECT_EQ(fp8->vector_path(in, at(0x3000)), PointwiseVector::kNone);
}

// BERT's erf GELU followed by its quantize (the FFN's second GEMM reads int8 or fp8): one program
// whose lanes are the GELU's fp16 and whose output is one code per lane; the scale, an fp32
// scalar, is broadcast whatever its alignment.
TEST(PointwiseVectorPath, AChainEndingInAQuantizeRunsInLanesOfTheValueItQuantizes) {
  for (DataType lanes : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
      SCOPED_TRACE(std::string(data_type_name(lanes)) + " -> " + std::string(data_type_name(out)));
      PointwiseProgram p;
      p.inputs = {{lanes, {4096, 3072}}, {DataType::kFloat32, {1}}};
      PointwiseInstr gelu{PointwiseCode::kGeluErf, 0};
      gelu.type = lanes;
      PointwiseInstr quantize{PointwiseCode::kQuantize, 2, 1};
      quantize.type = out;
      p.instrs = {gelu, quantize};
      auto launch = PointwiseLaunch::prepare(p, {}, {out, {4096, 3072}}, Layout::kLinear);
      ASSERT_TRUE(launch.is_ok()) << launch.status().message();
      EXPECT_EQ(launch->args().lane_type, lanes);
      const void* in[] = {at(0x1000), at(0x2004)};
      EXPECT_EQ(launch->vector_path(in, at(0x3000)), PointwiseVector::kFlat);
      EXPECT_EQ(plan_vector_input(launch->args(), PointwiseVector::kFlat, 0, in[0]), PointwiseInput::kVector);
      EXPECT_EQ(plan_vector_input(launch->args(), PointwiseVector::kFlat, 1, in[1]), PointwiseInput::kBroadcast);
      EXPECT_EQ(launch->args().kept, 0);
    }
  }
  // A cast to int8 is not a quantize: it truncates, and stays on the interpreter.
  PointwiseProgram cast = add_program(DataType::kFloat16, {64}, {64});
  cast.instrs.push_back(PointwiseInstr{PointwiseCode::kCast, 2});
  cast.instrs.back().type = DataType::kInt8;
  auto launch = PointwiseLaunch::prepare(cast, {}, {DataType::kInt8, {64}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  const void* in[] = {at(0x1000), at(0x2000)};
  EXPECT_EQ(launch->vector_path(in, at(0x3000)), PointwiseVector::kNone);
}

TEST(PointwiseVectorPath, ProgramsKeepingMoreThanEightComputedRegistersStayOnTheInterpreter) {
  // m negations of x, then their sum: every negation is read long after it was computed.
  for (int m : {8, 9}) {
    PointwiseProgram p;
    p.inputs.push_back({DataType::kFloat32, {64}});
    for (int k = 0; k < m; ++k) p.instrs.push_back(PointwiseInstr{PointwiseCode::kNeg, 0});
    p.instrs.push_back(PointwiseInstr{PointwiseCode::kAdd, 1, 2});
    for (int k = 3; k <= m; ++k) p.instrs.push_back(PointwiseInstr{PointwiseCode::kAdd, p.output_register(), k});
    auto launch = PointwiseLaunch::prepare(p, {}, {DataType::kFloat32, {64}}, Layout::kLinear);
    ASSERT_TRUE(launch.is_ok()) << launch.status().message();
    const void* in[] = {at(0x1000)};
    EXPECT_EQ(launch->args().kept, m);
    EXPECT_EQ(launch->vector_path(in, at(0x3000)), m <= kMaxPointwiseKept ? PointwiseVector::kFlat : PointwiseVector::kNone)
        << m << " kept registers";
  }
  // Inputs read again need no slot: r9 + r0 + r1 + ... reloads each input.
  PointwiseProgram sum;
  for (int k = 0; k < 10; ++k) sum.inputs.push_back({DataType::kFloat32, {64}});
  for (int k = 0; k + 1 < 10; ++k) sum.instrs.push_back(PointwiseInstr{PointwiseCode::kAdd, k, 9 + k});
  auto launch = PointwiseLaunch::prepare(sum, {}, {DataType::kFloat32, {64}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  EXPECT_EQ(launch->args().kept, 0);
  const std::vector<const void*> in(10, at(0x1000));
  EXPECT_EQ(launch->vector_path(in.data(), at(0x3000)), PointwiseVector::kFlat);
}

// ---------------------------------------------------------------- host-only: families

TEST(PointwiseFamilies, EveryLayerKindHasItsFamily) {
  const std::pair<OpKind, const char*> expected[] = {{OpKind::kElementwise, "kernel.pointwise"},
                                                     {OpKind::kUnary, "kernel.pointwise"},
                                                     {OpKind::kActivation, "kernel.pointwise"},
                                                     {OpKind::kCast, "kernel.pointwise"},
                                                     {OpKind::kSelect, "kernel.pointwise"},
                                                     {OpKind::kSoftmax, "kernel.softmax"},
                                                     {OpKind::kReduce, "kernel.reduce"},
                                                     {OpKind::kLayerNorm, "kernel.layer_norm"},
                                                     {OpKind::kRmsNorm, "kernel.rms_norm"},
                                                     {OpKind::kGroupNorm, "kernel.group_norm"},
                                                     {OpKind::kInstanceNorm, "kernel.instance_norm"},
                                                     {OpKind::kBatchNorm, "kernel.batch_norm"},
                                                     {OpKind::kQuantize, "kernel.quantize"},
                                                     {OpKind::kDequantize, "kernel.dequantize"}};
  for (const auto& [kind, name] : expected) {
    bool found = false;
    for (const auto& f : tactic_families().for_kind(kind)) found |= f->name() == name;
    EXPECT_TRUE(found) << name << " for " << op_kind_name(kind);
  }
}

TEST(PointwiseFamilies, BertRowsOfferAWarpPerRowFirstAndReplayEachVariant) {
  const OneLayer layer(one_layer(DataType::kFloat16, {128, 768}, [](Network& n, Tensor x) { return n.softmax(x); }));
  const StepInstance step = layer.step();
  const TacticFamily& f = family("kernel.softmax");
  ASSERT_TRUE(f.can_implement(step, hopper()).is_ok());
  const std::vector<std::string> names = candidate_names(f, step);
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "kernel.softmax#warp");
  auto replayed = f.replay(step, nlohmann::json{{"variant", "block256"}});
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().message();
  EXPECT_EQ((*replayed)->name(), "kernel.softmax#block256");
  EXPECT_FALSE(f.replay(step, nlohmann::json{{"variant", "block3"}}).is_ok());
}

TEST(PointwiseFamilies, LongRowsGoToABlockPerRow) {
  const OneLayer layer(one_layer(DataType::kFloat32, {8, 4096},
                                 [](Network& n, Tensor x) { return n.layer_norm(x, Tensor{}, Tensor{}); }));
  const std::vector<std::string> names = candidate_names(family("kernel.layer_norm"), layer.step());
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "kernel.layer_norm#block512");
  for (const std::string& n : names) EXPECT_NE(n, "kernel.layer_norm#warp");
}

TEST(PointwiseFamilies, OnlyBatchNormAndPointwiseTakeNhwc) {
  const OneLayer softmax(
      one_layer(DataType::kFloat16, {2, 3, 4, 5}, [](Network& n, Tensor x) { return n.softmax(x); }));
  const Status refused = family("kernel.softmax").can_implement(softmax.step(Layout::kNhwc), hopper());
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("layout nhwc"), std::string::npos) << refused.message();

  Network bn;
  Tensor x = bn.add_input("x", DataType::kFloat16, {2, 3, 4, 5});
  std::vector<Tensor> p;
  for (const char* name : {"scale", "bias", "mean", "var"}) p.push_back(bn.add_input(name, DataType::kFloat16, {3}));
  bn.mark_output(bn.batch_norm(x, p[0], p[1], p[2], p[3]), "y");
  const OneLayer batch_norm(std::move(bn));
  StepInstance step = batch_norm.step(Layout::kLinear);
  step.input_layouts[0] = step.output_layouts[0] = Layout::kNhwc;
  EXPECT_TRUE(family("kernel.batch_norm").can_implement(step, hopper()).is_ok());

  const OneLayer relu(one_layer(DataType::kFloat16, {2, 3, 4, 5}, [](Network& n, Tensor t) { return n.relu(t); }));
  EXPECT_TRUE(family("kernel.pointwise").can_implement(relu.step(Layout::kNhwc), hopper()).is_ok());
}

TEST(PointwiseFamilies, Fp8NeedsAda) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat32, {4, 8});
  Tensor s = n.add_input("s", DataType::kFloat32, {1});
  n.mark_output(n.quantize(x, s, QuantizeAttributes().set_output_type(DataType::kFloat8E4M3).set_name("q8")), "y");
  const OneLayer layer(std::move(n));
  DeviceInfo ampere;
  ampere.cc_major = 8;
  ampere.cc_minor = 6;
  const Status refused = family("kernel.quantize").can_implement(layer.step(), ampere);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("layer 'q8'"), std::string::npos) << refused.message();
  EXPECT_TRUE(family("kernel.quantize").can_implement(layer.step(), hopper()).is_ok());
}

TEST(PointwiseFamilies, ReduceRefusesTypesTheReferenceRefuses) {
  const OneLayer layer(one_layer(DataType::kInt32, {4, 8}, [](Network& n, Tensor x) {
    return n.reduce(x, ReduceAttributes().set_op(ReduceOp::kSum).set_axes({1}));
  }));
  EXPECT_TRUE(family("kernel.reduce").can_implement(layer.step(), hopper()).is_ok());
  const OneLayer norm(
      one_layer(DataType::kFloat32, {4, 8}, [](Network& n, Tensor x) { return n.layer_norm(x, Tensor{}, Tensor{}); }));
  StepInstance with_epilogue = norm.step();
  with_epilogue.program.inputs.push_back(norm.outputs[0]);
  with_epilogue.program.instrs.push_back(PointwiseInstr{PointwiseCode::kRelu, 0});
  EXPECT_EQ(family("kernel.layer_norm").can_implement(with_epilogue, hopper()).code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------- on the GPU


// ---- pointwise chains through the backend (the planner fuses them into one program)

// Inputs for Q/DQ with the awkward values: ties, saturation, NaN, infinities.
HostArray quantize_input(DataType type, Dims shape, uint32_t seed) {
  HostArray x = random_array(type, shape, seed);
  const double specials[] = {2.5,
                             -3.5,
                             0.5,
                             1e6,
                             -1e6,
                             std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             0.0};
  const size_t n = std::min<size_t>(std::size(specials), static_cast<size_t>(x.element_count()));
  convert_elements(DataType::kFloat64, specials, type, x.data(), n);
  return x;
}

class Chains : public OnGpu {};

TEST_F(Chains, AddReluMulCastToFp16IsBitExact) {
  Network n;
  Tensor a = n.add_input("a", DataType::kFloat32, {64, 96});
  Tensor b = n.add_input("b", DataType::kFloat32, {96});  // broadcast over rows
  Tensor c = n.add_input("c", DataType::kFloat32, {64, 1});
  n.mark_output(n.cast(n.mul(n.relu(n.add(a, b)), c), DataType::kFloat16), "y");
  check_backend(n,
                named("a", random_array(DataType::kFloat32, {64, 96}, 1), "b",
                      random_array(DataType::kFloat32, {96}, 2), "c", random_array(DataType::kFloat32, {64, 1}, 3)),
                Match::kBitExact);
}

TEST_F(Chains, TranscendentalChainsInFp32AndBf16) {
  for (DataType type : {DataType::kFloat32, DataType::kBFloat16, DataType::kFloat16}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor x = n.add_input("x", type, {3, 5, 7, 11});
    Tensor s = n.add_input("s", type, {5, 1, 1});
    Tensor g = n.activation(n.mul(x, s), ActivationAttributes().set_kind(ActivationKind::kGeluTanh));
    Tensor e = n.unary(n.activation(g, ActivationAttributes().set_kind(ActivationKind::kSigmoid)),
                       UnaryAttributes().set_op(UnaryOp::kLog));
    Tensor t = n.activation(n.sub(e, n.unary(x, UnaryAttributes().set_op(UnaryOp::kErf))),
                            ActivationAttributes().set_kind(ActivationKind::kSoftplus).set_alpha(2.0));
    n.mark_output(n.activation(t, ActivationAttributes().set_kind(ActivationKind::kHardSwish)), "y");
    check_backend(n, named("x", random_array(type, {3, 5, 7, 11}, 4), "s", random_array(type, {5, 1, 1}, 5)),
                  Match::kClose);
  }
}

TEST_F(Chains, IntegerDivisionTruncatesAndDividingByZeroGivesZero) {
  for (DataType type : {DataType::kInt8, DataType::kInt32, DataType::kInt64}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor a = n.add_input("a", type, {40, 25});
    Tensor b = n.add_input("b", type, {25});
    n.mark_output(n.add(n.div(a, b), n.elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kMin))), "y");
    HostArray divisor = random_array(type, {25}, 7);
    std::memset(static_cast<char*>(divisor.data()) + 3 * data_type_size(type), 0, data_type_size(type));  // b[3] = 0
    check_backend(n, named("a", random_array(type, {40, 25}, 6), "b", std::move(divisor)), Match::kBitExact);
  }
}

TEST_F(Chains, BoolLogicAndSelect) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat16, {4, 1, 33});
  Tensor y = n.add_input("y", DataType::kFloat16, {6, 33});
  Tensor m = n.add_input("m", DataType::kBool, {6, 1});
  Tensor less = n.elementwise(x, y, ElementwiseAttributes().set_op(ElementwiseOp::kLess));
  Tensor keep = n.elementwise(less, m, ElementwiseAttributes().set_op(ElementwiseOp::kOr));
  Tensor both = n.elementwise(keep, n.elementwise(y, y, ElementwiseAttributes().set_op(ElementwiseOp::kEqual)),
                              ElementwiseAttributes().set_op(ElementwiseOp::kAnd));
  n.mark_output(n.select(both, x, n.unary(y, UnaryAttributes().set_op(UnaryOp::kNeg))), "y_out");
  n.mark_output(n.cast(keep, DataType::kInt32), "mask");
  check_backend(n,
                named("x", random_array(DataType::kFloat16, {4, 1, 33}, 8), "y",
                      random_array(DataType::kFloat16, {6, 33}, 9), "m", random_array(DataType::kBool, {6, 1}, 10)),
                Match::kBitExact);
}

TEST_F(Chains, CastsSaturateRoundAndSendNaNToZero) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat32, {12});
  n.mark_output(n.cast(x, DataType::kInt8), "i8");
  n.mark_output(n.cast(x, DataType::kUInt8), "u8");
  n.mark_output(n.cast(x, DataType::kBool), "b");
  n.mark_output(n.cast(x, DataType::kFloat8E4M3), "f8");
  n.mark_output(n.cast(x, DataType::kBFloat16), "bf");
  n.mark_output(n.unary(x, UnaryAttributes().set_op(UnaryOp::kRound)), "round");
  HostArray values = HostArray::zeros(DataType::kFloat32, {12}).value();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float v[12] = {2.5f, -2.5f, 3.5f, 300.f, -300.f, nan, inf, -inf, 0.0f, 1e-3f, 464.f, -127.9f};
  std::memcpy(values.data(), v, sizeof v);
  NamedArrays inputs;
  inputs["x"] = std::move(values);
  auto cpu = create_backend("cpu");
  auto gpu = create_backend("cuda");
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
  auto want = (*cpu)->execute(n, views_of(inputs));
  auto got = (*gpu)->execute(n, views_of(inputs));
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << (got.is_ok() ? want.status().message() : got.status().message());
  // Bit-identical, except that any NaN matches any NaN: the payload a NaN carries is not part of the contract.
  for (const auto& [name, array] : *want) {
    const HostArray& actual = got->at(name);
    ASSERT_EQ(actual.byte_size(), array.byte_size()) << name;
    const size_t width = data_type_size(array.dtype());
    for (int64_t i = 0; i < array.element_count(); ++i) {
      const double a = load_as_double(array.dtype(), actual.data(), i);
      const double b = load_as_double(array.dtype(), array.data(), i);
      if (std::isnan(a) && std::isnan(b)) continue;
      EXPECT_EQ(std::memcmp(static_cast<const char*>(actual.data()) + i * width,
                            static_cast<const char*>(array.data()) + i * width, width),
                0)
          << name << "[" << i << "] is " << a << ", want " << b;
    }
  }
}

// A quantized output's codes against the reference's, element by element: NaN matches NaN, and
// otherwise the codes, ordered as the values they stand for, are at most `max_steps` apart in at
// most `max_off` elements (0 and 0: bit-identical).
void expect_codes_near(const std::string& what, const HostArray& got, const HostArray& want, int max_steps,
                       int64_t max_off) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.element_count(), want.element_count()) << what;
  const auto ordered = [&](const HostArray& a, int64_t i) {
    const uint8_t b = static_cast<const uint8_t*>(a.data())[i];
    if (a.dtype() == DataType::kInt8) return static_cast<int>(static_cast<int8_t>(b));
    return b & 0x80 ? -static_cast<int>(b & 0x7F) : static_cast<int>(b & 0x7F);  // e4m3: sign and magnitude
  };
  int64_t off = 0, worst = 0, first = -1;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (std::isnan(load_as_double(want.dtype(), want.data(), i)) && std::isnan(load_as_double(got.dtype(), got.data(), i)))
      continue;
    const int64_t steps = std::abs(ordered(got, i) - ordered(want, i));
    if (steps == 0) continue;
    if (off++ == 0) first = i;
    worst = std::max(worst, steps);
  }
  EXPECT_LE(worst, max_steps) << what << ": first difference at element " << first;
  EXPECT_LE(off, max_off) << what << ": " << off << " of " << want.element_count() << " elements differ";
}

// check_backend's comparison by expect_codes_near.
auto codes_near(int max_steps, int64_t max_off) {
  return [max_steps, max_off](const std::string& what, const HostArray& got, const HostArray& want) {
    expect_codes_near(what, got, want, max_steps, max_off);
  };
}

// Activation `kind` of an input "x", then a quantize to `out` by a constant scalar `scale`.
Network activation_then_quantize(DataType type, const Dims& shape, ActivationKind kind, DataType out, float scale) {
  Network n;
  Tensor a = n.activation(n.add_input("x", type, shape), ActivationAttributes().set_kind(kind));
  n.mark_output(n.quantize(a, n.add_constant(scalar_scale(scale)), QuantizeAttributes().set_output_type(out)), "y");
  EXPECT_TRUE(n.status().is_ok()) << n.status().message();
  return n;
}

// A chain ending in a per-tensor quantize is one step whose program writes the codes (the vector
// kernel in lanes of the value quantized, pointwise_kernel.h). Exact arithmetic before the
// quantize -- add a broadcast row, relu, multiply -- gives the reference's codes bit for bit: on the
// flat path, a strided one (the broadcast row) and a ragged one (rows of 5: lane by lane), at a
// length with a tail, with values that saturate (|x / s| beyond 127 or 448).
TEST_F(Chains, ExactChainsEndingInAQuantizeGiveTheReferenceCodes) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
      for (Dims shape : {Dims{4099}, Dims{64, 96}, Dims{33, 5}}) {
        SCOPED_TRACE(std::string(data_type_name(type)) + " -> " + std::string(data_type_name(out)) + " " +
                     shape.to_string());
        const Dims row{shape[shape.rank() - 1]};
        Network n;
        Tensor x = n.add_input("x", type, shape);
        Tensor b = n.add_input("b", type, row);
        Tensor s = n.add_input("s", DataType::kFloat32, {1});
        Tensor v = n.mul(n.relu(n.add(x, b)), n.add_constant(random_array(type, {1}, 31, Fill::kNearOne)));
        n.mark_output(n.quantize(v, s, QuantizeAttributes().set_output_type(out)), "y");
        const float scale = out == DataType::kInt8 ? 0.1f : 0.03f;  // values up to ~16: some codes saturate
        check_backend(n,
                      named("x", quantize_input(type, shape, 32), "b", random_array(type, row, 33), "s",
                            scalar_scale(scale)),
                      codes_near(0, 0));
      }
    }
  }
}

// One activation then a quantize runs the activation's own kernel with the quantize after it
// (pointwise_kernel.cu: pointwise_activation_kernel): relu is exact, so the codes are the
// reference's bit for bit, the last 4099 % lanes elements included.
TEST_F(Chains, ReluThenQuantizeGivesTheReferenceCodes) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
      SCOPED_TRACE(std::string(data_type_name(type)) + " -> " + std::string(data_type_name(out)));
      const Network n = activation_then_quantize(type, {4099}, ActivationKind::kRelu, out,
                                                 out == DataType::kInt8 ? 0.05f : 0.015f);
      check_backend(n, named("x", quantize_input(type, {4099}, 35)), codes_near(0, 0));
    }
  }
}

// BERT's erf GELU then its quantize, at its FFN width: the GELU's fp32 erff against the
// reference's fp64 erf can move a value across a rounding boundary of its type (then the code
// by one), never further.
TEST_F(Chains, GeluThenQuantizeIsOneStepWithinOneCode) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
      SCOPED_TRACE(std::string(data_type_name(type)) + " -> " + std::string(data_type_name(out)));
      const Dims shape{128, 3072};
      const Network n = activation_then_quantize(type, shape, ActivationKind::kGeluErf, out,
                                                 out == DataType::kInt8 ? 0.01f : 0.003f);
      HostArray values = random_array(type, shape, 34, Fill::kGrid);  // GELU of [-1.2, 1.2]: up to 120 / 400 codes
      check_backend(n, named("x", std::move(values)), codes_near(1, shape[0] * shape[1] / 1000));
    }
  }
}

// ---- one-layer candidates

class Kernels : public OnGpu {};

TEST_F(Kernels, PointwiseOnNhwcTensors) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat16, {2, 8, 5, 7});
  n.mark_output(n.activation(x, ActivationAttributes().set_kind(ActivationKind::kSilu)), "y");
  check_every_candidate("kernel.pointwise", std::move(n),
                        named("x", random_array(DataType::kFloat16, {2, 8, 5, 7}, 11)), Match::kClose, Layout::kNhwc);
}

TEST_F(Kernels, SoftmaxRowsAndColumns) {
  struct Case {
    DataType type;
    Dims shape;
    int64_t axis;
  };
  const Case cases[] = {{DataType::kFloat32, {512, 128}, -1},   {DataType::kFloat16, {64, 768}, -1},
                        {DataType::kBFloat16, {16, 4096}, 1},   {DataType::kFloat32, {4, 20000}, -1},
                        {DataType::kFloat32, {2, 50, 3, 7}, 1}, {DataType::kFloat32, {3, 1000}, -1},
                        {DataType::kFloat16, {2, 3, 1}, -1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.to_string());
    check_every_candidate(
        "kernel.softmax",
        one_layer(c.type, c.shape,
                  [&](Network& n, Tensor x) { return n.softmax(x, SoftmaxAttributes().set_axis(c.axis)); }),
        named("x", random_array(c.type, c.shape, 12)), Match::kClose);
  }
}

TEST_F(Kernels, ReduceOverAnyAxes) {
  struct Case {
    DataType type;
    Dims shape;
    ReduceOp op;
    std::vector<int64_t> axes;
    bool keep;
    Fill fill;
  };
  const Case cases[] = {
      {DataType::kFloat32, {8, 300, 5}, ReduceOp::kSum, {1}, false, Fill::kMixed},
      {DataType::kFloat32, {8, 300, 5}, ReduceOp::kMean, {2}, true, Fill::kMixed},
      {DataType::kFloat16, {8, 300, 5}, ReduceOp::kMax, {0, 2}, false, Fill::kMixed},
      {DataType::kBFloat16, {6, 7, 8}, ReduceOp::kMin, {}, true, Fill::kMixed},
      {DataType::kFloat32, {3, 20000}, ReduceOp::kSum, {1}, false, Fill::kOffset},
      {DataType::kFloat32, {20000, 3}, ReduceOp::kMean, {0}, false, Fill::kOffset},
      {DataType::kFloat32, {4, 9, 6}, ReduceOp::kProd, {1, 2}, false, Fill::kNearOne},
      {DataType::kInt32, {5, 77, 3}, ReduceOp::kSum, {1}, false, Fill::kMixed},
      {DataType::kInt64, {5, 77, 3}, ReduceOp::kMax, {0, 1}, false, Fill::kMixed},
      {DataType::kInt32, {5, 7}, ReduceOp::kProd, {1}, true, Fill::kPositive},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.to_string() + " " + std::string(enum_name(c.op)));
    check_every_candidate("kernel.reduce",
                          one_layer(c.type, c.shape,
                                    [&](Network& n, Tensor x) {
                                      return n.reduce(
                                          x, ReduceAttributes().set_op(c.op).set_axes(c.axes).set_keep_dims(c.keep));
                                    }),
                          named("x", random_array(c.type, c.shape, 13, c.fill)), Match::kClose);
  }
}

TEST_F(Kernels, LayerAndRmsNormOnBertRows) {
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (int64_t hidden : {64, 768, 1024, 4096, 20000}) {
      SCOPED_TRACE(std::string(data_type_name(type)) + " hidden " + std::to_string(hidden));
      const Dims shape{6, hidden};
      Network ln;
      Tensor x = ln.add_input("x", type, shape);
      ln.mark_output(ln.layer_norm(x, ln.add_input("g", type, {hidden}), ln.add_input("b", type, {hidden}),
                                   LayerNormAttributes().set_epsilon(1e-5)),
                     "y");
      check_every_candidate("kernel.layer_norm", std::move(ln),
                            named("x", random_array(type, shape, 14, Fill::kOffset), "g",
                                  random_array(type, {hidden}, 15), "b", random_array(type, {hidden}, 16)),
                            Match::kClose);
      Network rms;
      Tensor r = rms.add_input("x", type, shape);
      rms.mark_output(rms.rms_norm(r, rms.add_input("g", type, {hidden})), "y");
      check_every_candidate("kernel.rms_norm", std::move(rms),
                            named("x", random_array(type, shape, 17), "g", random_array(type, {hidden}, 18)), Match::kClose);
    }
  }
}

TEST_F(Kernels, LayerNormOverTwoTrailingDimsWithoutAffine) {
  check_every_candidate("kernel.layer_norm",
                        one_layer(DataType::kFloat32, {3, 4, 50},
                                  [](Network& n, Tensor x) {
                                    return n.layer_norm(x, Tensor{}, Tensor{}, LayerNormAttributes().set_axis(1));
                                  }),
                        named("x", random_array(DataType::kFloat32, {3, 4, 50}, 19)), Match::kClose);
}

TEST_F(Kernels, GroupAndInstanceNorm) {
  struct Case {
    DataType type;
    Dims shape;
    int64_t groups;
  };
  const Case cases[] = {{DataType::kFloat32, {2, 32, 16, 16}, 8},
                        {DataType::kFloat16, {1, 32, 64, 64}, 32},
                        {DataType::kFloat32, {1, 16, 64, 64}, 4},  // 16384-element groups
                        {DataType::kBFloat16, {2, 6, 9}, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.to_string());
    const int64_t channels = c.shape[1];
    Network gn;
    Tensor x = gn.add_input("x", c.type, c.shape);
    gn.mark_output(gn.group_norm(x, gn.add_input("g", c.type, {channels}), gn.add_input("b", c.type, {channels}),
                                 GroupNormAttributes().set_groups(c.groups)),
                   "y");
    const NamedArrays inputs = named("x", random_array(c.type, c.shape, 20, Fill::kOffset), "g",
                                     random_array(c.type, {channels}, 21), "b", random_array(c.type, {channels}, 22));
    check_every_candidate("kernel.group_norm", std::move(gn), inputs, Match::kClose);
    Network in;
    Tensor y = in.add_input("x", c.type, c.shape);
    in.mark_output(in.instance_norm(y, in.add_input("g", c.type, {channels}), in.add_input("b", c.type, {channels})),
                   "y");
    check_every_candidate("kernel.instance_norm", std::move(in), inputs, Match::kClose);
  }
}

TEST_F(Kernels, BatchNormLinearAndNhwc) {
  for (Layout layout : {Layout::kLinear, Layout::kNhwc}) {
    SCOPED_TRACE(layout_name(layout));
    Network n;
    Tensor x = n.add_input("x", DataType::kFloat16, {2, 16, 9, 9});
    std::vector<Tensor> p;
    for (const char* name : {"scale", "bias", "mean", "var"}) p.push_back(n.add_input(name, DataType::kFloat16, {16}));
    n.mark_output(n.batch_norm(x, p[0], p[1], p[2], p[3]), "y");
    NamedArrays inputs = named(
        "x", random_array(DataType::kFloat16, {2, 16, 9, 9}, 23), "scale", random_array(DataType::kFloat16, {16}, 24),
        "bias", random_array(DataType::kFloat16, {16}, 25), "mean", random_array(DataType::kFloat16, {16}, 26), "var",
        random_array(DataType::kFloat16, {16}, 27, Fill::kPositive));
    // Parameters stay linear ([16] vectors); only the activation takes the layout.
    auto cpu = create_backend("cpu");
    auto expected = (*cpu)->execute(n, views_of(inputs));
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    const OneLayer layer(std::move(n));
    StepInstance step = layer.step();
    step.input_layouts[0] = step.output_layouts[0] = layout;
    const TacticFamily& f = family("kernel.batch_norm");
    ASSERT_TRUE(f.can_implement(step, device_).is_ok());
    auto tactic = f.replay(step, nlohmann::json::object());
    ASSERT_TRUE(tactic.is_ok());
    std::vector<DeviceBuffer> memory;
    StepBuffers buffers;
    for (size_t i = 0; i < layer.node().inputs.size(); ++i) {
      const HostArray& host = inputs.at(layer.net.tensor(layer.node().inputs[i]).name);
      const Layout l = i == 0 ? layout : Layout::kLinear;
      memory.push_back(upload(host, l));
      buffers.inputs.push_back({host.dtype(), host.shape(), l, memory.back().data()});
    }
    DeviceBuffer out = device_memory(2 * 16 * 81 * 2);
    CUDA_OK(cudaMemset(out.data(), 0xFF, 2 * 16 * 81 * 2));
    buffers.outputs = {{DataType::kFloat16, {2, 16, 9, 9}, layout, out.data()}};
    const RunContext ctx{stream_, nullptr, nullptr, &device_};
    ASSERT_TRUE((*tactic)->initialize(step, ctx).is_ok());
    ASSERT_TRUE((*tactic)->run(step, buffers, ctx).is_ok());
    expect_matches("batch norm", download(buffers.outputs[0]), expected->at("y"), Match::kClose);
  }
}


TEST_F(Kernels, QuantizeIsBitExactPerTensorAndPerChannel) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
    for (DataType in : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      for (bool per_channel : {false, true}) {
        SCOPED_TRACE(std::string(data_type_name(in)) + " -> " + std::string(data_type_name(out)) +
                     (per_channel ? " per-channel" : " per-tensor"));
        const Dims shape{3, 10, 4, 5}, scale_shape = per_channel ? Dims{10} : Dims{1};
        Network n;
        Tensor x = n.add_input("x", in, shape);
        Tensor s = n.add_input("s", DataType::kFloat32, scale_shape);
        n.mark_output(n.quantize(x, s, QuantizeAttributes().set_output_type(out).set_axis(1)), "y");
        HostArray scale = random_array(DataType::kFloat32, scale_shape, 29, Fill::kPositive);
        if (!per_channel) scale.data_as<float>()[0] = out == DataType::kInt8 ? 1.0f : 0.01f;  // ties; saturation
        check_every_candidate("kernel.quantize", std::move(n),
                              named("x", quantize_input(in, shape, 28), "s", std::move(scale)), Match::kBitExact);
      }
    }
  }
}

// The per-tensor quantize reads 8 elements a thread where x and y are aligned, one a thread where
// they are not, and the last count % 8 one a thread: every length and both alignments give the
// CPU reference's bytes. x and y sit `offset` elements into their buffers.
TEST_F(Kernels, PerTensorQuantizeIsBitExactAtAnyLengthAndAlignment) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType out : {DataType::kInt8, DataType::kFloat8E4M3}) {
    for (DataType in : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      for (int64_t count : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{13}, int64_t{4101}, int64_t{(1 << 20) + 3}}) {
        for (int64_t offset : {0, 1}) {
          SCOPED_TRACE(std::string(data_type_name(in)) + " -> " + std::string(data_type_name(out)) + ", " +
                       std::to_string(count) + " elements at offset " + std::to_string(offset));
          Network n;
          Tensor x = n.add_input("x", in, {count});
          Tensor s = n.add_input("s", DataType::kFloat32, {1});
          n.mark_output(n.quantize(x, s, QuantizeAttributes().set_output_type(out)), "y");
          HostArray scale = HostArray::zeros(DataType::kFloat32, {1}).value();
          scale.data_as<float>()[0] = out == DataType::kInt8 ? 0.02f : 0.004f;  // some saturate
          const NamedArrays inputs = named("x", quantize_input(in, {count}, 40), "s", std::move(scale));
          auto want = (*create_backend("cpu"))->execute(n, views_of(inputs));
          ASSERT_TRUE(want.is_ok()) << want.status().message();

          const size_t in_width = data_type_size(in);
          DeviceBuffer x_memory = device_memory((count + offset) * in_width);
          DeviceBuffer s_memory = device_memory(sizeof(float));
          DeviceBuffer y_memory = device_memory(count + offset);
          char* x_device = static_cast<char*>(x_memory.data()) + offset * in_width;
          char* y_device = static_cast<char*>(y_memory.data()) + offset;
          CUDA_OK(cudaMemcpy(x_device, inputs.at("x").data(), count * in_width, cudaMemcpyHostToDevice));
          CUDA_OK(cudaMemcpy(s_memory.data(), inputs.at("s").data(), sizeof(float), cudaMemcpyHostToDevice));
          QuantizeArgs args;
          args.count = count;
          args.in_type = in;
          args.out_type = out;
          // Every byte is some int8 value, so run twice over two poisons: an unwritten byte
          // cannot equal the reference both times.
          for (int poison : {0x00, 0xFF}) {
            CUDA_OK(cudaMemset(y_memory.data(), poison, count + offset));
            CUDA_OK(launch_quantize(x_device, s_memory.data(), y_device, args, stream_));
            CUDA_OK(cudaStreamSynchronize(stream_));
            HostArray got = HostArray::zeros(out, {count}).value();
            CUDA_OK(cudaMemcpy(got.data(), y_device, count, cudaMemcpyDeviceToHost));
            const auto* got_bytes = static_cast<const uint8_t*>(got.data());
            const auto* want_bytes = static_cast<const uint8_t*>(want->at("y").data());
            int64_t wrong = 0, first_wrong = -1;
            for (int64_t i = 0; i < count; ++i)
              if (got_bytes[i] != want_bytes[i] && wrong++ == 0) first_wrong = i;
            EXPECT_EQ(wrong, 0) << "poison " << poison << ": first at element " << first_wrong;
          }
        }
      }
    }
  }
}

// Dequantize with fp32 scales reads 8 elements a thread where x is 8-byte and y 16-byte aligned and
// the 8 share a scale; one a thread otherwise. Per tensor at several lengths, per channel with an
// inner extent that is and is not a multiple of 8, aligned and not: the CPU reference's bytes.
TEST_F(Kernels, DequantizeIsBitExactAtAnyLengthAlignmentAndChannelLayout) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  struct Shape {
    Dims dims;
    int64_t channels;  // along axis 1; 1: per tensor
  };
  const Shape shapes[] = {{{1, 1, 7}, 1}, {{1, 1, 13}, 1}, {{1, 1, 4101}, 1}, {{1, 1, (1 << 20) + 3}, 1},
                          {{3, 24, 16}, 24}, {{2, 10, 5}, 10}, {{4, 64, 1}, 64}};
  for (DataType in : {DataType::kInt8, DataType::kFloat8E4M3}) {
    for (DataType out : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      for (const Shape& shape : shapes) {
        for (int64_t offset : {0, 1}) {
          SCOPED_TRACE(std::string(data_type_name(in)) + " -> " + std::string(data_type_name(out)) + ", " +
                       shape.dims.to_string() + " with " + std::to_string(shape.channels) + " scale(s), offset " +
                       std::to_string(offset));
          const Dims scale_shape = shape.channels > 1 ? Dims{shape.channels} : Dims{1};
          Network n;
          Tensor x = n.add_input("x", in, shape.dims);
          Tensor s = n.add_input("s", DataType::kFloat32, scale_shape);
          n.mark_output(n.dequantize(x, s, DequantizeAttributes().set_output_type(out).set_axis(1)), "y");
          const NamedArrays inputs =
              named("x", random_array(in, shape.dims, 41), "s", random_array(DataType::kFloat32, scale_shape, 42, Fill::kPositive));
          auto want = (*create_backend("cpu"))->execute(n, views_of(inputs));
          ASSERT_TRUE(want.is_ok()) << want.status().message();

          const int64_t count = inputs.at("x").element_count();
          const size_t out_width = data_type_size(out);
          DeviceBuffer x_memory = device_memory(count + offset);
          DeviceBuffer s_memory = device_memory(shape.channels * sizeof(float));
          DeviceBuffer y_memory = device_memory((count + offset) * out_width);
          char* x_device = static_cast<char*>(x_memory.data()) + offset;
          char* y_device = static_cast<char*>(y_memory.data()) + offset * out_width;
          CUDA_OK(cudaMemcpy(x_device, inputs.at("x").data(), count, cudaMemcpyHostToDevice));
          CUDA_OK(cudaMemcpy(s_memory.data(), inputs.at("s").data(), shape.channels * sizeof(float), cudaMemcpyHostToDevice));
          QuantizeArgs args;
          args.dequantize = true;
          args.count = count;
          args.channels = shape.channels;
          args.inner = shape.channels > 1 ? shape.dims[2] : 1;
          args.in_type = in;
          args.out_type = out;
          for (int poison : {0x00, 0xFF}) {  // an unwritten element cannot match the reference both times
            CUDA_OK(cudaMemset(y_memory.data(), poison, (count + offset) * out_width));
            CUDA_OK(launch_quantize(x_device, s_memory.data(), y_device, args, stream_));
            CUDA_OK(cudaStreamSynchronize(stream_));
            HostArray got = HostArray::zeros(out, shape.dims).value();
            CUDA_OK(cudaMemcpy(got.data(), y_device, count * out_width, cudaMemcpyDeviceToHost));
            const HostArray& expected = want->at("y");
            int64_t wrong = 0, first_wrong = -1;
            for (int64_t i = 0; i < count; ++i) {
              const double a = load_as_double(out, got.data(), i), b = load_as_double(out, expected.data(), i);
              const bool same = std::memcmp(static_cast<const char*>(got.data()) + i * out_width,
                                            static_cast<const char*>(expected.data()) + i * out_width, out_width) == 0;
              if (!same && !(std::isnan(a) && std::isnan(b)) && wrong++ == 0) first_wrong = i;
            }
            EXPECT_EQ(wrong, 0) << "poison " << poison << ": first at element " << first_wrong;
          }
        }
      }
    }
  }
}

TEST_F(Kernels, DequantizeIsBitExact) {
  if (device_.compute_capability() < 89) GTEST_SKIP() << "fp8 needs compute capability 8.9";
  for (DataType in : {DataType::kInt8, DataType::kFloat8E4M3}) {
    for (DataType out : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      SCOPED_TRACE(std::string(data_type_name(in)) + " -> " + std::string(data_type_name(out)));
      const Dims shape{4, 6, 7};
      Network n;
      Tensor x = n.add_input("x", in, shape);
      Tensor s = n.add_input("s", DataType::kFloat16, {6});
      n.mark_output(n.dequantize(x, s, DequantizeAttributes().set_output_type(out).set_axis(-2)), "y");
      check_every_candidate(
          "kernel.dequantize", std::move(n),
          named("x", random_array(in, shape, 30), "s", random_array(DataType::kFloat16, {6}, 31, Fill::kPositive)),
          Match::kBitExact);
    }
  }
}

// ---- the vector kernel against the interpreter and the CPU

class VectorKernel : public OnGpu {
 protected:
  // The program of a network whose nodes are all pointwise, reading the network's inputs in order.
  static PointwiseProgram program_of(const Network& net) {
    PointwiseProgram p;
    std::map<uint32_t, int> reg;
    for (Tensor t : net.inputs()) {
      reg[t.id] = static_cast<int>(p.inputs.size());
      p.inputs.push_back(net.tensor(t).desc);
    }
    for (size_t i = 0; i < net.num_nodes(); ++i) {
      const Node& node = net.node(i);
      std::vector<int> operands;
      for (Tensor t : node.inputs) operands.push_back(reg.at(t.id));
      auto r = append_pointwise_node(p, node, static_cast<int64_t>(i), net.tensor(node.outputs[0]).desc, operands);
      EXPECT_TRUE(r.is_ok()) << r.status().message();
      if (r.is_ok()) reg[node.outputs[0].id] = *r;
    }
    return p;
  }

  // Runs `launch` with every input `offset` elements past a fresh allocation's (256-byte aligned)
  // start and the output `out_offset` past (default: `offset`), checks that the kernel `path` is
  // taken, and returns the output's storage (in `out_layout`).
  HostArray run_at(const PointwiseLaunch& launch, const std::vector<const HostArray*>& inputs, const TensorDesc& out,
                   int64_t offset, PointwiseVector path, int64_t out_offset = -1) {
    if (out_offset < 0) out_offset = offset;
    std::vector<DeviceBuffer> memory;
    std::vector<const void*> pointers;
    for (const HostArray* host : inputs) {
      const size_t skip = static_cast<size_t>(offset) * data_type_size(host->dtype());
      memory.push_back(device_memory(host->byte_size() + skip));
      char* p = static_cast<char*>(memory.back().data()) + skip;
      EXPECT_EQ(cudaMemcpy(p, host->data(), host->byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
      pointers.push_back(p);
    }
    HostArray result = HostArray::zeros(out.dtype, out.shape).value();
    const size_t skip = static_cast<size_t>(out_offset) * data_type_size(out.dtype);
    DeviceBuffer output = device_memory(result.byte_size() + skip);
    char* o = static_cast<char*>(output.data()) + skip;
    EXPECT_EQ(cudaMemset(output.data(), 0xFF, result.byte_size() + skip), cudaSuccess);  // NaN: never a result here
    EXPECT_EQ(launch.vector_path(pointers.data(), o), path) << "at offset " << offset << ", output at " << out_offset;
    const Status ran = launch.run(pointers.data(), o, stream_);
    EXPECT_TRUE(ran.is_ok()) << ran.message();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(result.data(), o, result.byte_size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return result;
  }

  // The network's single output computed by the vector kernel (aligned tensors, expecting
  // `path`) must be bit-identical to the interpreter's (every tensor one element off, so
  // misaligned) and match the CPU backend (bit for bit with Match::kBitExact). With every input one
  // element off but the output aligned, the kernel must take `misaligned_inputs` (kStrided,
  // reading lane by lane; kNone skips that run) and give the interpreter's bits too.
  void check_vector_kernel(const Network& net, const NamedArrays& inputs, PointwiseVector path, Match match,
                           PointwiseVector misaligned_inputs = PointwiseVector::kStrided) {
    auto cpu = create_backend("cpu");
    ASSERT_TRUE(cpu.is_ok());
    auto want = (*cpu)->execute(net, views_of(inputs));
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    ASSERT_EQ(net.outputs().size(), 1u);
    const TensorDesc out = net.tensor(net.outputs()[0]).desc;
    const PointwiseProgram program = program_of(net);
    auto launch = PointwiseLaunch::prepare(program, {}, out, Layout::kLinear);
    ASSERT_TRUE(launch.is_ok()) << launch.status().message();
    std::vector<const HostArray*> in;
    for (Tensor t : net.inputs()) in.push_back(&inputs.at(net.tensor(t).name));

    const HostArray vector = run_at(*launch, in, out, 0, path);
    const HostArray interpreted = run_at(*launch, in, out, 1, PointwiseVector::kNone);
    ASSERT_EQ(vector.byte_size(), interpreted.byte_size());
    EXPECT_EQ(std::memcmp(vector.data(), interpreted.data(), vector.byte_size()), 0)
        << program.to_string() << ": the vector kernel and the interpreter differ";
    expect_matches(program.to_string(), vector, want->begin()->second, match);
    if (misaligned_inputs != PointwiseVector::kNone) {  // every contiguous input gathered lane by lane
      const HostArray gathered = run_at(*launch, in, out, 1, misaligned_inputs, 0);
      EXPECT_EQ(std::memcmp(gathered.data(), interpreted.data(), gathered.byte_size()), 0)
          << program.to_string() << ": the vector kernel with misaligned inputs and the interpreter differ";
    }
  }

  // `array` with NaN (or, where results are compared bit for bit with the CPU's, whose NaN
  // payloads differ, +inf), +inf, -inf and -0 written over a few elements (first, middle, last).
  static HostArray with_specials(HostArray array, bool nan = true) {
    const double inf = std::numeric_limits<double>::infinity();
    const double specials[] = {nan ? std::numeric_limits<double>::quiet_NaN() : inf, inf,
                               -std::numeric_limits<double>::infinity(), -0.0};
    const int64_t n = array.element_count();
    const int64_t where[] = {0, n / 2, n / 2 + 1, n - 1};
    const size_t width = data_type_size(array.dtype());
    for (int j = 0; j < 4; ++j)
      convert_elements(DataType::kFloat64, &specials[j], array.dtype(),
                       static_cast<char*>(array.data()) + where[j] * width, 1);
    return array;
  }
};

TEST_F(VectorKernel, ActivationsOfTheirOwnOverOddCountsWithNaNAndInfinities) {
  // One activation of one contiguous input: the kernel specialized per activation (4 vectors per
  // thread) and its lane-by-lane tail (7 elements: nothing but the tail).
  for (ActivationKind kind : {ActivationKind::kGeluErf, ActivationKind::kGeluTanh, ActivationKind::kRelu,
                              ActivationKind::kSilu, ActivationKind::kSigmoid, ActivationKind::kTanh}) {
    for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
      for (int64_t count : {int64_t{12345}, int64_t{8000}, int64_t{7}}) {
        SCOPED_TRACE(std::string(data_type_name(type)) + " x " + std::to_string(count) + " kind " +
                     std::to_string(static_cast<int>(kind)));
        Network n;
        Tensor x = n.add_input("x", type, {count});
        n.mark_output(n.activation(x, ActivationAttributes().set_kind(kind)), "y");
        check_vector_kernel(n, named("x", with_specials(random_array(type, {count}, 21))), PointwiseVector::kFlat,
                            Match::kClose);
      }
    }
  }
}

TEST_F(VectorKernel, AStraightGeluChainHasNothingKept) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor x = n.add_input("x", type, {12345});
    n.mark_output(n.relu(n.activation(n.gelu(x), ActivationAttributes().set_kind(ActivationKind::kTanh))), "y");
    check_vector_kernel(n, named("x", with_specials(random_array(type, {12345}, 31))), PointwiseVector::kFlat,
                        Match::kClose);
  }
}

TEST_F(VectorKernel, BertEmbeddingSumOverTwoBroadcastDimsIsBitExact) {
  // word[B, S, H] + pos[1, S, H] + type[1, 1, H]: rank 3, every input in 16-byte vectors.
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor word = n.add_input("word", type, {3, 10, 48});
    Tensor pos = n.add_input("pos", type, {1, 10, 48});
    Tensor kind = n.add_input("type", type, {1, 1, 48});
    n.mark_output(n.add(n.add(word, pos), kind), "y");
    check_vector_kernel(n,
                        named("word", with_specials(random_array(type, {3, 10, 48}, 32), /*nan=*/false), "pos",
                              random_array(type, {1, 10, 48}, 33), "type", random_array(type, {1, 1, 48}, 34)),
                        PointwiseVector::kStrided, Match::kBitExact);
  }
}

TEST_F(VectorKernel, RankFiveBroadcastsRaggedRowsAndOddCountsGather) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    {  // rank 5, whole vectors
      Network n;
      Tensor x = n.add_input("x", type, {2, 3, 4, 5, 8});
      Tensor b = n.add_input("b", type, {2, 1, 4, 1, 8});
      n.mark_output(n.mul(x, b), "y");
      check_vector_kernel(n,
                          named("x", with_specials(random_array(type, {2, 3, 4, 5, 8}, 35), false), "b",
                                random_array(type, {2, 1, 4, 1, 8}, 36)),
                          PointwiseVector::kStrided, Match::kBitExact);
    }
    {  // rows of 3 over 12345 elements: lanes span rows, the last vector is partial
      Network n;
      Tensor x = n.add_input("x", type, {5, 823, 3});
      Tensor b = n.add_input("b", type, {3});
      Tensor s = n.add_input("s", type, {5, 1, 1});
      n.mark_output(n.mul(n.add(x, b), s), "y");
      check_vector_kernel(n,
                          named("x", with_specials(random_array(type, {5, 823, 3}, 37), false), "b",
                                random_array(type, {3}, 38), "s", random_array(type, {5, 1, 1}, 39)),
                          PointwiseVector::kStrided, Match::kClose);
    }
  }
}

TEST_F(VectorKernel, Fp32NchwCastToFp16NhwcIsBitExact) {
  // ResNet's input cast: walked in the output's (NHWC) order, the NCHW planes gathered per lane.
  for (Dims shape : {Dims{2, 3, 14, 14}, Dims{3, 3, 7, 9}}) {
    SCOPED_TRACE(shape.to_string());
    Network n;
    Tensor x = n.add_input("x", DataType::kFloat32, shape);
    n.mark_output(n.cast(x, DataType::kFloat16), "y");
    const NamedArrays inputs = named("x", with_specials(random_array(DataType::kFloat32, shape, 40), false));
    auto cpu = create_backend("cpu");
    ASSERT_TRUE(cpu.is_ok());
    auto want = (*cpu)->execute(n, views_of(inputs));
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    const TensorDesc out{DataType::kFloat16, shape};
    auto launch = PointwiseLaunch::prepare(program_of(n), {Layout::kLinear}, out, Layout::kNhwc);
    ASSERT_TRUE(launch.is_ok()) << launch.status().message();
    const std::vector<const HostArray*> in = {&inputs.at("x")};
    const HostArray vector = run_at(*launch, in, out, 0, PointwiseVector::kStrided);
    const HostArray interpreted = run_at(*launch, in, out, 1, PointwiseVector::kNone);
    EXPECT_EQ(std::memcmp(vector.data(), interpreted.data(), vector.byte_size()), 0)
        << "the vector kernel and the interpreter differ";
    // run_at returns the output's storage: channels-last. Back to NCHW for the reference.
    DeviceBuffer stored = device_memory(vector.byte_size());
    CUDA_OK(cudaMemcpy(stored.data(), vector.data(), vector.byte_size(), cudaMemcpyHostToDevice));
    expect_matches("nchw fp32 -> nhwc fp16", download({DataType::kFloat16, shape, Layout::kNhwc, stored.data()}),
                   want->at("y"), Match::kBitExact);
  }
}

TEST_F(VectorKernel, ADagChainKeepsEarlierRegistersAndReadsAScalar) {
  // y = select(x > s, tanh(x * s) - x, sqrt(|x|)): x and x * s are read again long after they
  // were computed; s is a one-element tensor broadcast over everything.
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor x = n.add_input("x", type, {3, 7, 131});
    Tensor s = n.add_input("s", type, {1});
    Tensor xs = n.mul(x, s);
    Tensor t = n.sub(n.activation(xs, ActivationAttributes().set_kind(ActivationKind::kTanh)), x);
    Tensor r = n.unary(n.unary(xs, UnaryAttributes().set_op(UnaryOp::kAbs)), UnaryAttributes().set_op(UnaryOp::kSqrt));
    Tensor gt = n.elementwise(x, s, ElementwiseAttributes().set_op(ElementwiseOp::kGreater));
    n.mark_output(n.select(gt, t, r), "y");
    check_vector_kernel(n, named("x", with_specials(random_array(type, {3, 7, 131}, 22)), "s",
                                 random_array(type, {1}, 23)),
                        PointwiseVector::kFlat, Match::kClose);
  }
}

TEST_F(VectorKernel, BertBiasAndResidualOverRowsIsBitExact) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(data_type_name(type));
    Network n;
    Tensor x = n.add_input("x", type, {2, 9, 96});
    Tensor bias = n.add_input("bias", type, {96});
    Tensor residual = n.add_input("residual", type, {2, 9, 96});
    n.mark_output(n.add(n.add(x, bias), residual), "y");
    check_vector_kernel(n,
                        named("x", with_specials(random_array(type, {2, 9, 96}, 24), /*nan=*/false), "bias",
                              random_array(type, {96}, 25), "residual", random_array(type, {2, 9, 96}, 26)),
                        PointwiseVector::kStrided, Match::kBitExact);
  }
}

TEST_F(VectorKernel, BiasGeluAndAPerRowScaleOverRows) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat32, {37, 20});
  Tensor bias = n.add_input("bias", DataType::kFloat32, {20});
  Tensor scale = n.add_input("scale", DataType::kFloat32, {37, 1});
  Tensor g = n.activation(n.add(x, bias), ActivationAttributes().set_kind(ActivationKind::kGeluErf));
  n.mark_output(n.mul(g, scale), "y");
  check_vector_kernel(n,
                      named("x", random_array(DataType::kFloat32, {37, 20}, 27), "bias",
                            random_array(DataType::kFloat32, {20}, 28), "scale",
                            random_array(DataType::kFloat32, {37, 1}, 29)),
                      PointwiseVector::kStrided, Match::kClose);
}

TEST_F(VectorKernel, TheOutputMayOverwriteInputZero) {
  Network n;
  Tensor x = n.add_input("x", DataType::kFloat16, {1001});
  n.mark_output(n.relu(n.mul(x, x)), "y");
  const NamedArrays inputs = named("x", random_array(DataType::kFloat16, {1001}, 30));
  auto cpu = create_backend("cpu");
  ASSERT_TRUE(cpu.is_ok());
  auto want = (*cpu)->execute(n, views_of(inputs));
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  auto launch = PointwiseLaunch::prepare(program_of(n), {}, {DataType::kFloat16, {1001}}, Layout::kLinear);
  ASSERT_TRUE(launch.is_ok()) << launch.status().message();
  const HostArray& x_host = inputs.at("x");
  DeviceBuffer memory = device_memory(x_host.byte_size());
  CUDA_OK(cudaMemcpy(memory.data(), x_host.data(), x_host.byte_size(), cudaMemcpyHostToDevice));
  const void* in[] = {memory.data()};
  EXPECT_EQ(launch->vector_path(in, memory.data()), PointwiseVector::kFlat);
  const Status ran = launch->run(in, memory.data(), stream_);
  ASSERT_TRUE(ran.is_ok()) << ran.message();
  expect_matches("in place", download({DataType::kFloat16, {1001}, Layout::kLinear, memory.data()}), want->at("y"),
                 Match::kBitExact);
}

}  // namespace
}  // namespace tensoracle::backends::cuda
