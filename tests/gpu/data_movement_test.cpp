// The CUDA data-movement families (reshape, transpose, concat, slice, pad, gather, top-k,
// resize, grid sample, pooling) and launch_reformat, checked against the CPU reference.
//
// - Geometry planning and family decisions (can_implement, variants, replay) are host code:
//   those tests run anywhere.
// - Every candidate of a family is run directly (initialize + run on poisoned outputs) on a
//   one-layer network and compared with the CPU backend: data movement bit for bit, arithmetic
//   within fp32 rel L2 1e-6 (fp16/bf16: their storage precision). Pooling also runs on nhwc
//   tensors made and read back by launch_reformat.
// - Whole networks go through create_backend("cuda") -> execute for big shapes.
// GPU tests skip with the reason where no GPU is present.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "gpu/family_testing.h"
#include "gpu/seeded_arrays.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/kernels/copy_plan.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/cuda/kernels/reformat.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

using testing::candidate_names;
using testing::family;
using testing::Fill;
using testing::index_array;
using testing::Match;
using testing::OneLayer;
using testing::OnGpu;
using testing::random_array;

// ---------------------------------------------------------------- host-only: planning

StridedCopy dense_transpose_2d(int64_t rows, int64_t cols) {
  StridedCopy c;
  c.rank = 2;
  c.shape[0] = cols;  // output [cols, rows] of input [rows, cols]
  c.shape[1] = rows;
  c.in_stride[0] = 1;
  c.in_stride[1] = cols;
  c.out_stride[0] = rows;
  c.out_stride[1] = 1;
  return c;
}

alignas(16) const unsigned char kAligned[64] = {};

TEST(CopyPlan, ALastTwoDimsSwapIsTiled) {
  const CopyPlan plan = plan_strided_copy(dense_transpose_2d(1024, 512), 2, kAligned, kAligned);
  EXPECT_EQ(plan.count, 1024 * 512);
  EXPECT_EQ(plan.word_size, 2u);  // not contiguous on both sides: no wider words
  ASSERT_TRUE(tiled_copy_applies(plan));
  EXPECT_EQ(plan.copy.out_stride[plan.tile_out], 1);
  EXPECT_EQ(plan.copy.in_stride[plan.tile_in], 1);
  EXPECT_TRUE(plan.fits_int32);
}

TEST(CopyPlan, AContiguousCopyIsOneRunOfSixteenByteWords) {
  StridedCopy c;  // [4, 6, 8] fp32 copied as is, with a size-1 dim in between
  c.rank = 4;
  const int64_t shape[] = {4, 1, 6, 8}, strides[] = {48, 48, 8, 1};
  for (int d = 0; d < 4; ++d) {
    c.shape[d] = shape[d];
    c.in_stride[d] = c.out_stride[d] = strides[d];
  }
  const CopyPlan plan = plan_strided_copy(c, 4, kAligned, kAligned);
  EXPECT_EQ(plan.copy.rank, 1);
  EXPECT_EQ(plan.word_size, 16u);
  EXPECT_EQ(plan.count, 4 * 6 * 8 / 4);
  EXPECT_FALSE(tiled_copy_applies(plan));
}

TEST(CopyPlan, AConcatSlabIsTwoDimensionalAndWidensOnlyWhenAligned) {
  StridedCopy c;  // input [2, 3, 8] fp16 into output [2, 12, 8] at axis-1 offset 5
  c.rank = 3;
  const int64_t shape[] = {2, 3, 8}, in[] = {24, 8, 1}, out[] = {96, 8, 1};
  for (int d = 0; d < 3; ++d) {
    c.shape[d] = shape[d];
    c.in_stride[d] = in[d];
    c.out_stride[d] = out[d];
  }
  c.out_offset = 5 * 8;
  const CopyPlan plan = plan_strided_copy(c, 2, kAligned, kAligned);
  ASSERT_EQ(plan.copy.rank, 2);
  EXPECT_EQ(plan.word_size, 16u);
  EXPECT_EQ(plan.copy.shape[1], 24 * 2 / 16);
  EXPECT_EQ(plan.copy.out_offset, 5 * 8 * 2 / 16);

  const CopyPlan misaligned = plan_strided_copy(c, 2, kAligned + 2, kAligned);
  EXPECT_EQ(misaligned.word_size, 2u);
  EXPECT_EQ(misaligned.count, 2 * 3 * 8);
}

TEST(CopyPlan, NegativeStridesWalkBackwards) {
  StridedCopy c;  // the rows of [4, 8] fp32 in reverse order
  c.rank = 2;
  c.shape[0] = 4;
  c.shape[1] = 8;
  c.in_stride[0] = -8;
  c.in_stride[1] = 1;
  c.out_stride[0] = 8;
  c.out_stride[1] = 1;
  c.in_offset = 24;
  CopyPlan plan = plan_strided_copy(c, 4, kAligned, kAligned);
  ASSERT_EQ(plan.copy.rank, 2);
  EXPECT_EQ(plan.word_size, 16u);  // each row is two 16-byte words, still contiguous
  EXPECT_EQ(plan.copy.in_stride[0], -2);
  EXPECT_EQ(plan.copy.in_offset, 6);

  c.in_stride[1] = -1;  // every element reversed: one backward run of single elements
  c.in_offset = 31;
  plan = plan_strided_copy(c, 4, kAligned, kAligned);
  ASSERT_EQ(plan.copy.rank, 1);
  EXPECT_EQ(plan.copy.in_stride[0], -1);
  EXPECT_EQ(plan.word_size, 4u);
  EXPECT_FALSE(tiled_copy_applies(plan));
}

TEST(CopyPlan, AnEmptyDimMeansNothingToCopy) {
  StridedCopy c = dense_transpose_2d(0, 7);
  EXPECT_EQ(plan_strided_copy(c, 4, kAligned, kAligned).count, 0);
}

// The copy of transpose(x, perm) for a dense row-major x of `shape` (output dims in output order).
StridedCopy transpose_copy(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  StridedCopy c;
  c.rank = static_cast<int>(shape.size());
  std::vector<int64_t> in_strides(shape.size(), 1);
  for (size_t d = shape.size() - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * shape[d];
  int64_t out_stride = 1;
  for (int d = c.rank - 1; d >= 0; --d) {
    c.shape[d] = shape[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    c.in_stride[d] = in_strides[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    c.out_stride[d] = out_stride;
    out_stride *= c.shape[d];
  }
  return c;
}

TEST(CopyPlan, BertHeadSplitMovesSixteenByteChunksUntiled) {
  // [32, 128, 12, 64] -> [32, 12, 128, 64] fp16: the innermost 64 elements stay contiguous.
  const CopyPlan plan = plan_strided_copy(transpose_copy({32, 128, 12, 64}, {0, 2, 1, 3}), 2, kAligned, kAligned);
  EXPECT_FALSE(tiled_copy_applies(plan));
  ASSERT_TRUE(chunk_copy_applies(plan));
  ASSERT_EQ(plan.copy.rank, 4);
  EXPECT_EQ(plan.copy.shape[3], 64 * 2 / 16);
  EXPECT_EQ(plan.count, int64_t{32} * 128 * 12 * 64 * 2 / 16);
}

TEST(CopyPlan, ChunksNeedSixteenByteRowsAndAlignedBases) {
  // Rows of 6 fp16 (12 bytes): 4-byte words at most, no chunks.
  EXPECT_FALSE(chunk_copy_applies(plan_strided_copy(transpose_copy({3, 7, 5, 6}, {0, 2, 1, 3}), 2, kAligned, kAligned)));
  const StridedCopy bert_like = transpose_copy({2, 8, 3, 64}, {0, 2, 1, 3});
  EXPECT_TRUE(chunk_copy_applies(plan_strided_copy(bert_like, 2, kAligned, kAligned)));
  EXPECT_FALSE(chunk_copy_applies(plan_strided_copy(bert_like, 2, kAligned + 8, kAligned)));
  EXPECT_FALSE(chunk_copy_applies(plan_strided_copy(bert_like, 2, kAligned, kAligned + 2)));
  // A tiled transpose (inner dims swapped) is never a chunk copy.
  const CopyPlan swap = plan_strided_copy(transpose_copy({8, 64, 32}, {0, 2, 1}), 2, kAligned, kAligned);
  EXPECT_TRUE(tiled_copy_applies(swap));
  EXPECT_FALSE(chunk_copy_applies(swap));
}

TEST(FastDivider, MatchesIntegerDivisionOverTheWholeRange) {
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 1100; ++d) divisors.push_back(d);
  for (uint32_t shift = 11; shift < 31; ++shift)
    for (int64_t delta : {-1, 0, 1}) divisors.push_back(static_cast<uint32_t>((int64_t{1} << shift) + delta));
  divisors.push_back(0x7FFFFFFFu);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<uint32_t> any(0, 0x7FFFFFFFu);
  for (int i = 0; i < 2000; ++i) divisors.push_back(std::max<uint32_t>(1, any(rng) >> (i % 31)));
  for (uint32_t d : divisors) {
    const FastDivider divider(d);
    std::vector<uint32_t> dividends{0, 1, d - 1, d, d + 1, 2 * d - 1, 0x7FFFFFFFu, 0x7FFFFFFEu, 0x40000000u};
    for (int i = 0; i < 200; ++i) dividends.push_back(any(rng) >> (i % 31));
    for (uint32_t n : dividends) {
      if (n > 0x7FFFFFFFu) continue;  // 2 * d - 1 past the range for the largest divisors
      ASSERT_EQ(divider.divide(n), n / d) << n << " / " << d;
    }
  }
}

// ---------------------------------------------------------------- steps of one-layer networks

Network transpose_net(DataType type, Dims shape, std::vector<int64_t> perm) {
  Network n;
  n.mark_output(n.transpose(n.add_input("x", type, shape), TransposeAttributes().set_perm(perm)), "y");
  return n;
}

Network pooling_net(DataType type, Dims shape, const PoolingAttributes& attrs) {
  Network n;
  n.mark_output(n.pooling(n.add_input("x", type, shape), attrs), "y");
  return n;
}

TEST(DataMovementFamilies, EveryLayerKindHasItsFamily) {
  const std::pair<OpKind, const char*> expected[] = {
      {OpKind::kReshape, "kernel.reshape"}, {OpKind::kTranspose, "kernel.transpose"}, {OpKind::kConcat, "kernel.concat"},
      {OpKind::kSlice, "kernel.slice"},     {OpKind::kPad, "kernel.pad"},             {OpKind::kGather, "kernel.gather"},
      {OpKind::kTopK, "kernel.top_k"},      {OpKind::kResize, "kernel.resize"},       {OpKind::kGridSample, "kernel.grid_sample"},
      {OpKind::kPooling, "kernel.pooling"}};
  for (const auto& [kind, name] : expected) {
    bool found = false;
    for (const auto& f : tactic_families().for_kind(kind)) found |= f->name() == name;
    EXPECT_TRUE(found) << name << " for " << op_kind_name(kind);
  }
}

TEST(DataMovementFamilies, TransposeOffersTiledAndStridedForASwapAndReplaysEach) {
  const OneLayer layer(transpose_net(DataType::kFloat16, {8, 64, 32}, {0, 2, 1}));
  const StepInstance step = layer.step();
  const TacticFamily& f = family("kernel.transpose");
  ASSERT_TRUE(f.can_implement(step, DeviceInfo{}).is_ok());
  EXPECT_EQ(candidate_names(f, step), (std::vector<std::string>{"kernel.transpose#tiled", "kernel.transpose#strided"}));
  auto replayed = f.replay(step, nlohmann::json{{"variant", "tiled"}});
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().message();
  EXPECT_EQ((*replayed)->name(), "kernel.transpose#tiled");
  EXPECT_EQ((*replayed)->choice(), (nlohmann::json{{"variant", "tiled"}}));
  EXPECT_FALSE(f.replay(step, nlohmann::json{{"variant", "diagonal"}}).is_ok());
}

TEST(DataMovementFamilies, ATransposeKeepingTheInnerDimIsOnlyStrided) {
  const OneLayer layer(transpose_net(DataType::kInt8, {4, 5, 6}, {1, 0, 2}));
  EXPECT_EQ(candidate_names(family("kernel.transpose"), layer.step()),
            (std::vector<std::string>{"kernel.transpose#strided"}));
}

TEST(DataMovementFamilies, OnlyPoolingTakesNhwc) {
  const OneLayer transpose(transpose_net(DataType::kFloat16, {2, 3, 4, 5}, {0, 1, 3, 2}));
  const Status refused = family("kernel.transpose").can_implement(transpose.step(Layout::kNhwc), DeviceInfo{});
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("layout nhwc"), std::string::npos) << refused.message();

  const OneLayer pool(pooling_net(DataType::kFloat16, {2, 8, 9, 9},
                                  PoolingAttributes().set_window({3, 3}).set_stride({2, 2}).set_padding({1, 1})));
  EXPECT_TRUE(family("kernel.pooling").can_implement(pool.step(Layout::kNhwc), DeviceInfo{}).is_ok());
}

TEST(DataMovementFamilies, LargePoolingWindowsAlsoOfferAWarpPerOutput) {
  const OneLayer global(pooling_net(DataType::kFloat32, {2, 4, 16, 16},
                                    PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true)));
  EXPECT_EQ(candidate_names(family("kernel.pooling"), global.step()),
            (std::vector<std::string>{"kernel.pooling#warp", "kernel.pooling#thread"}));
  const OneLayer small(pooling_net(DataType::kFloat32, {2, 4, 16, 16}, PoolingAttributes().set_window({3, 3})));
  EXPECT_EQ(candidate_names(family("kernel.pooling"), small.step()), (std::vector<std::string>{"kernel.pooling"
                                                                                               "#thread"}));
}

TEST(DataMovementFamilies, AFusedEpilogueIsRefusedWithTheLayerName) {
  Network n;
  Tensor y = n.pad(n.add_input("x", DataType::kFloat32, {2, 3}), PadAttributes().set_pre({1}).set_post({1}).set_name("padder"));
  n.mark_output(y, "y");
  const OneLayer layer(std::move(n));
  StepInstance step = layer.step();
  step.program.inputs.push_back(layer.outputs[0]);
  step.program.instrs.push_back(PointwiseInstr{PointwiseCode::kRelu, 0});
  const Status refused = family("kernel.pad").can_implement(step, DeviceInfo{});
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("layer 'padder'"), std::string::npos) << refused.message();
}

// ---------------------------------------------------------------- on the GPU


NamedArrays one_input(const std::string& name, HostArray array) {
  NamedArrays inputs;
  inputs[name] = std::move(array);
  return inputs;
}

// ---- reformat

class Reformat : public OnGpu {};

TEST_F(Reformat, LinearToNhwcAndBackIsBitExactAndReallyChannelsLast) {
  for (DataType type : {DataType::kFloat16, DataType::kFloat32}) {
    SCOPED_TRACE(std::string(data_type_name(type)));
    const Dims shape{2, 19, 13, 21};
    const HostArray x = random_array(type, shape, 7);
    const size_t e = data_type_size(type);
    auto nhwc = upload(x, Layout::kNhwc);
    // The channels-last buffer holds x[n, c, h, w] at ((n*H + h)*W + w)*C + c.
    HostArray raw = HostArray::zeros(type, shape).value();
    CUDA_OK(cudaMemcpy(raw.data(), nhwc.data(), raw.byte_size(), cudaMemcpyDeviceToHost));
    const int64_t C = 19, H = 13, W = 21;
    int mismatches = 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) {
            const int64_t linear = ((n * C + c) * H + h) * W + w, channels_last = ((n * H + h) * W + w) * C + c;
            mismatches += std::memcmp(static_cast<const char*>(x.data()) + linear * e,
                                      static_cast<const char*>(raw.data()) + channels_last * e, e) != 0;
          }
    EXPECT_EQ(mismatches, 0);
    const HostArray back = download({type, shape, Layout::kNhwc, nhwc.data()});
    expect_matches("round trip", back, x, Match::kBitExact);
  }
}

TEST_F(Reformat, MismatchedShapesAreRefused) {
  const Status s = launch_reformat({DataType::kFloat32, {1, 2, 3, 4}, Layout::kLinear, nullptr},
                                   {DataType::kFloat32, {1, 2, 4, 3}, Layout::kNhwc, nullptr}, stream_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

// ---- shuffle, concat, slice, pad, gather

class DataMovementKernels : public OnGpu {};

TEST_F(DataMovementKernels, Reshape) {
  Network n;
  n.mark_output(n.reshape(n.add_input("x", DataType::kBFloat16, {6, 35}), ReshapeAttributes().set_shape({5, -1, 3})), "y");
  check_every_candidate("kernel.reshape", std::move(n), one_input("x", random_array(DataType::kBFloat16, {6, 35}, 1)), Match::kBitExact);
}

TEST_F(DataMovementKernels, TransposeOf1024x1024Fp16) {
  check_every_candidate("kernel.transpose", transpose_net(DataType::kFloat16, {1024, 1024}, {1, 0}),
                        one_input("x", random_array(DataType::kFloat16, {1024, 1024}, 2)), Match::kBitExact);
}

TEST_F(DataMovementKernels, TransposeOfOtherRanksAndTypes) {
  check_every_candidate("kernel.transpose", transpose_net(DataType::kFloat32, {2, 3, 33, 65}, {0, 2, 3, 1}),
                        one_input("x", random_array(DataType::kFloat32, {2, 3, 33, 65}, 3)), Match::kBitExact);
  check_every_candidate("kernel.transpose", transpose_net(DataType::kInt8, {4, 37, 41}, {2, 0, 1}),
                        one_input("x", random_array(DataType::kInt8, {4, 37, 41}, 4)), Match::kBitExact);
  check_every_candidate("kernel.transpose", transpose_net(DataType::kInt64, {3, 70, 40}, {1, 0, 2}),
                        one_input("x", random_array(DataType::kInt64, {3, 70, 40}, 5)), Match::kBitExact);
}

TEST_F(DataMovementKernels, BertHeadSplitTransposeInSixteenByteChunks) {
  // BERT-base batch 32 (chunk copy), then rows of 6 fp16 (12 bytes: the element kernel) and
  // fp32 / bf16 rows of whole chunks with outer dims that are not powers of two.
  check_every_candidate("kernel.transpose", transpose_net(DataType::kFloat16, {32, 128, 12, 64}, {0, 2, 1, 3}),
                        one_input("x", random_array(DataType::kFloat16, {32, 128, 12, 64}, 6)), Match::kBitExact);
  check_every_candidate("kernel.transpose", transpose_net(DataType::kFloat16, {3, 7, 5, 6}, {0, 2, 1, 3}),
                        one_input("x", random_array(DataType::kFloat16, {3, 7, 5, 6}, 7)), Match::kBitExact);
  check_every_candidate("kernel.transpose", transpose_net(DataType::kFloat32, {3, 7, 5, 12}, {2, 0, 1, 3}),
                        one_input("x", random_array(DataType::kFloat32, {3, 7, 5, 12}, 8)), Match::kBitExact);
  check_every_candidate("kernel.transpose", transpose_net(DataType::kBFloat16, {5, 9, 11, 24}, {1, 2, 0, 3}),
                        one_input("x", random_array(DataType::kBFloat16, {5, 9, 11, 24}, 9)), Match::kBitExact);
}

// The strided copy on raw device memory at given byte offsets from 256-aligned allocations,
// against the definition in copy_strided.h evaluated on the host.
class StridedCopyKernel : public OnGpu {
 protected:
  void check(const StridedCopy& c, size_t element_size, size_t in_shift, size_t out_shift) {
    SCOPED_TRACE(fmt::format("element {} bytes, input at +{}, output at +{}", element_size, in_shift, out_shift));
    int64_t in_span = c.in_offset + 1, out_span = c.out_offset + 1;
    for (int d = 0; d < c.rank; ++d) {
      in_span += (c.shape[d] - 1) * std::abs(c.in_stride[d]);
      out_span += (c.shape[d] - 1) * c.out_stride[d];
    }
    const size_t in_bytes = static_cast<size_t>(in_span) * element_size, out_bytes = static_cast<size_t>(out_span) * element_size;
    std::vector<unsigned char> in(in_bytes), want(out_bytes, 0xAB), got(out_bytes);
    std::mt19937 rng(static_cast<uint32_t>(in_bytes));
    for (unsigned char& b : in) b = static_cast<unsigned char>(rng());
    int64_t count = 1;
    for (int d = 0; d < c.rank; ++d) count *= c.shape[d];
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i, src = c.in_offset, dst = c.out_offset;
      for (int d = c.rank - 1; d >= 0; --d) {
        src += rest % c.shape[d] * c.in_stride[d];
        dst += rest % c.shape[d] * c.out_stride[d];
        rest /= c.shape[d];
      }
      std::memcpy(&want[static_cast<size_t>(dst) * element_size], &in[static_cast<size_t>(src) * element_size], element_size);
    }
    DeviceBuffer din = device_memory(in_bytes + in_shift), dout = device_memory(out_bytes + out_shift);
    unsigned char* in_ptr = static_cast<unsigned char*>(din.data()) + in_shift;
    unsigned char* out_ptr = static_cast<unsigned char*>(dout.data()) + out_shift;
    CUDA_OK(cudaMemcpy(in_ptr, in.data(), in_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(out_ptr, 0xAB, out_bytes));
    CUDA_OK(launch_strided_copy(in_ptr, out_ptr, element_size, c, CopyKernel::kAuto, stream_));
    CUDA_OK(cudaStreamSynchronize(stream_));
    CUDA_OK(cudaMemcpy(got.data(), out_ptr, out_bytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(got == want) << "not the copy's definition";
  }
};

TEST_F(StridedCopyKernel, ChunksAtAlignedBasesAndTheElementKernelElsewhere) {
  const StridedCopy head_split = transpose_copy({4, 16, 3, 64}, {0, 2, 1, 3});
  check(head_split, 2, 0, 0);    // chunks
  check(head_split, 2, 16, 48);  // chunks, bases moved by whole chunks
  check(head_split, 2, 2, 0);    // misaligned input: narrower words
  check(head_split, 2, 0, 6);    // misaligned output
  check(transpose_copy({4, 16, 3, 64}, {0, 2, 1, 3}), 4, 0, 0);
  check(transpose_copy({4, 16, 3, 64}, {0, 2, 1, 3}), 8, 8, 0);  // 8-byte aligned only: no chunks
  check(transpose_copy({7, 5, 3}, {1, 0, 2}), 2, 0, 0);          // 6-byte rows
}

TEST_F(StridedCopyKernel, ChunksWithOffsetsAndBackwardOuterStrides) {
  // Rows of [6, 10, 16] fp32 read in reverse order of the first two dims, from input offset 16,
  // into output rows at offset 32: every row still whole chunks (a reversing slice into a concat).
  StridedCopy c;
  c.rank = 3;
  const int64_t shape[] = {6, 10, 16}, in[] = {-160, -16, 1}, out[] = {320, 32, 1};
  for (int d = 0; d < 3; ++d) {
    c.shape[d] = shape[d];
    c.in_stride[d] = in[d];
    c.out_stride[d] = out[d];
  }
  c.in_offset = 16 + 5 * 160 + 9 * 16;
  c.out_offset = 32;
  check(c, 4, 0, 0);
  check(c, 2, 0, 0);
  check(c, 2, 0, 4);  // the output base misaligned: narrower words
}

TEST_F(DataMovementKernels, ConcatOfThreeOnAnInnerAxis) {
  for (auto [type, axis] : {std::pair{DataType::kFloat32, int64_t{1}}, std::pair{DataType::kBFloat16, int64_t{-1}}}) {
    Network n;
    NamedArrays inputs;
    std::vector<Tensor> parts;
    const std::vector<Dims> shapes = axis == 1 ? std::vector<Dims>{{2, 5, 7}, {2, 3, 7}, {2, 8, 7}}
                                               : std::vector<Dims>{{4, 3, 8}, {4, 3, 16}, {4, 3, 8}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      const std::string name = "x" + std::to_string(i);
      parts.push_back(n.add_input(name, type, shapes[i]));
      inputs[name] = random_array(type, shapes[i], 10 + static_cast<uint32_t>(i));
    }
    n.mark_output(n.concat(parts, ConcatAttributes().set_axis(axis)), "y");
    check_every_candidate("kernel.concat", std::move(n), inputs, Match::kBitExact);
  }
}

TEST_F(DataMovementKernels, SliceWithNegativeStrides) {
  Network a;
  a.mark_output(a.slice(a.add_input("x", DataType::kFloat32, {64, 80}),
                        SliceAttributes().set_start({63, 79}).set_size({32, 40}).set_stride({-2, -2})),
                "y");
  check_every_candidate("kernel.slice", std::move(a), one_input("x", random_array(DataType::kFloat32, {64, 80}, 20)), Match::kBitExact);
  Network b;
  b.mark_output(b.slice(b.add_input("x", DataType::kUInt8, {5, 6, 7}),
                        SliceAttributes().set_start({4, 0, 6}).set_size({5, 3, 7}).set_stride({-1, 2, -1})),
                "y");
  check_every_candidate("kernel.slice", std::move(b), one_input("x", random_array(DataType::kUInt8, {5, 6, 7}, 21)), Match::kBitExact);
}

TEST_F(DataMovementKernels, PadInEveryMode) {
  for (PadMode mode : {PadMode::kConstant, PadMode::kReflect, PadMode::kReplicate, PadMode::kCircular}) {
    SCOPED_TRACE(std::string(enum_name(mode)));
    Network n;
    n.mark_output(n.pad(n.add_input("x", DataType::kFloat16, {2, 3, 9, 10}),
                        PadAttributes().set_pre({2, 3}).set_post({1, 3}).set_mode(mode).set_value(1.5)),
                  "y");
    check_every_candidate("kernel.pad", std::move(n), one_input("x", random_array(DataType::kFloat16, {2, 3, 9, 10}, 30)),
                          Match::kBitExact);
  }
  Network n;
  n.mark_output(n.pad(n.add_input("x", DataType::kInt32, {4, 5, 6}), PadAttributes().set_pre({1, 0, 2}).set_post({0, 3, 1}).set_value(-7)),
                "y");
  check_every_candidate("kernel.pad", std::move(n), one_input("x", random_array(DataType::kInt32, {4, 5, 6}, 31)), Match::kBitExact);
}

TEST_F(DataMovementKernels, GatherWithNegativeIndices) {
  Network a;
  a.mark_output(a.gather(a.add_input("x", DataType::kFloat32, {6, 50, 16}), a.add_input("i", DataType::kInt64, {3, 4}),
                         GatherAttributes().set_axis(1)),
                "y");
  NamedArrays in_a;
  in_a["x"] = random_array(DataType::kFloat32, {6, 50, 16}, 40);
  in_a["i"] = index_array(DataType::kInt64, {3, 4}, 50, 41);
  check_every_candidate("kernel.gather", std::move(a), in_a, Match::kBitExact);

  Network b;  // an embedding lookup, fp16 rows of 64, int32 ids
  b.mark_output(b.gather(b.add_input("table", DataType::kFloat16, {1000, 64}), b.add_input("ids", DataType::kInt32, {8, 16})),
                "y");
  NamedArrays in_b;
  in_b["table"] = random_array(DataType::kFloat16, {1000, 64}, 42);
  in_b["ids"] = index_array(DataType::kInt32, {8, 16}, 1000, 43);
  check_every_candidate("kernel.gather", std::move(b), in_b, Match::kBitExact);
}

// ---- top-k

class TopKKernel : public OnGpu {
 protected:
  void check(DataType type, Dims shape, int64_t k, int64_t axis, bool largest, Fill fill, uint32_t seed) {
    SCOPED_TRACE(fmt::format("{}{} k {} axis {} largest {}", data_type_name(type), shape.to_string(), k, axis, largest));
    Network n;
    TopKOutputs t = n.top_k(n.add_input("x", type, shape), TopKAttributes().set_k(k).set_axis(axis).set_largest(largest));
    n.mark_output(t.values, "values");
    n.mark_output(t.indices, "indices");
    check_every_candidate("kernel.top_k", std::move(n), one_input("x", random_array(type, shape, seed, fill)), Match::kBitExact);
  }
};

TEST_F(TopKKernel, TiesKeepTheLowerIndexFirst) {
  check(DataType::kFloat32, {16, 1000}, 10, -1, true, Fill::kSmallIntegers, 50);
  check(DataType::kFloat32, {50, 12}, 50, 0, false, Fill::kSmallIntegers, 51);  // k = the whole axis
  check(DataType::kBFloat16, {3, 7, 33}, 5, 1, true, Fill::kSmallIntegers, 52);
}

TEST_F(TopKKernel, IntegerInputs) {
  check(DataType::kInt64, {4, 3000}, 17, 1, true, Fill::kMixed, 53);
  check(DataType::kInt32, {4, 3000}, 17, 1, false, Fill::kMixed, 54);
}

TEST_F(TopKKernel, LinesTooLongForSharedMemorySortInTheWorkspace) {
  check(DataType::kFloat32, {3, 20000}, 100, 1, true, Fill::kMixed, 55);
  check(DataType::kFloat16, {3, 20000}, 7, 1, false, Fill::kSmallIntegers, 56);
}

// ---- resize, grid sample, pooling

class SamplingKernels : public OnGpu {};

TEST_F(SamplingKernels, ResizeInEveryModeAndCoordinateMapping) {
  for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kLinear})
    for (ResizeCoordinates co : {ResizeCoordinates::kAsymmetric, ResizeCoordinates::kHalfPixel, ResizeCoordinates::kAlignCorners}) {
      SCOPED_TRACE(fmt::format("{} {}", enum_name(mode), enum_name(co)));
      Network n;
      n.mark_output(n.resize(n.add_input("x", DataType::kFloat32, {2, 3, 5, 4}),
                             ResizeAttributes().set_mode(mode).set_coordinates(co).set_output_size({8, 9})),
                    "y");
      check_every_candidate("kernel.resize", std::move(n), one_input("x", random_array(DataType::kFloat32, {2, 3, 5, 4}, 60)),
                            Match::kClose);
    }
}

TEST_F(SamplingKernels, ResizeByScalesIn1dAnd3dAndHalfPrecision) {
  Network a;
  a.mark_output(a.resize(a.add_input("x", DataType::kFloat32, {2, 3, 10}),
                         ResizeAttributes().set_mode(ResizeMode::kNearest).set_scales({1.7})),
                "y");
  check_every_candidate("kernel.resize", std::move(a), one_input("x", random_array(DataType::kFloat32, {2, 3, 10}, 61)), Match::kClose);
  Network b;
  b.mark_output(b.resize(b.add_input("x", DataType::kFloat32, {1, 2, 4, 5, 6}),
                         ResizeAttributes().set_mode(ResizeMode::kLinear).set_coordinates(ResizeCoordinates::kAlignCorners)
                             .set_output_size({7, 3, 9})),
                "y");
  check_every_candidate("kernel.resize", std::move(b), one_input("x", random_array(DataType::kFloat32, {1, 2, 4, 5, 6}, 62)), Match::kClose);
  Network c;
  c.mark_output(c.resize(c.add_input("x", DataType::kFloat16, {2, 8, 32, 32}),
                         ResizeAttributes().set_mode(ResizeMode::kLinear).set_coordinates(ResizeCoordinates::kHalfPixel)
                             .set_scales({2.0, 2.0})),
                "y");
  check_every_candidate("kernel.resize", std::move(c), one_input("x", random_array(DataType::kFloat16, {2, 8, 32, 32}, 63)), Match::kClose);
}

TEST_F(SamplingKernels, GridSampleInEveryMode) {
  for (DataType type : {DataType::kFloat32, DataType::kFloat16})
    for (GridSampleMode mode : {GridSampleMode::kBilinear, GridSampleMode::kNearest})
      for (GridSamplePadding padding : {GridSamplePadding::kZeros, GridSamplePadding::kBorder})
        for (bool align : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} {} align {}", data_type_name(type), enum_name(mode), enum_name(padding), align));
          Network n;
          n.mark_output(n.grid_sample(n.add_input("x", type, {2, 3, 16, 17}), n.add_input("g", type, {2, 9, 11, 2}),
                                      GridSampleAttributes().set_mode(mode).set_padding(padding).set_align_corners(align)),
                        "y");
          NamedArrays inputs;
          inputs["x"] = random_array(type, {2, 3, 16, 17}, 70);
          inputs["g"] = random_array(type, {2, 9, 11, 2}, 71, Fill::kGrid);
          check_every_candidate("kernel.grid_sample", std::move(n), inputs, Match::kClose);
        }
}

TEST_F(SamplingKernels, PoolingWindowsPaddingAndCeilMode) {
  for (PoolingKind kind : {PoolingKind::kMax, PoolingKind::kAverage})
    for (bool ceil_mode : {false, true})
      for (bool include_pad : {false, true}) {
        SCOPED_TRACE(fmt::format("{} ceil {} include_pad {}", enum_name(kind), ceil_mode, include_pad));
        check_every_candidate("kernel.pooling",
                              pooling_net(DataType::kFloat32, {2, 3, 17, 18},
                                          PoolingAttributes().set_kind(kind).set_window({3, 3}).set_stride({2, 2})
                                              .set_padding({1, 1}).set_ceil_mode(ceil_mode).set_count_include_pad(include_pad)),
                              one_input("x", random_array(DataType::kFloat32, {2, 3, 17, 18}, 80)), Match::kClose);
      }
}

TEST_F(SamplingKernels, Pooling1dAnd3dAndGlobal) {
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat16, {2, 3, 11}, PoolingAttributes().set_window({4}).set_stride({3})),
                        one_input("x", random_array(DataType::kFloat16, {2, 3, 11}, 81)), Match::kClose);
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat32, {1, 2, 9, 10, 11},
                                    PoolingAttributes().set_kind(PoolingKind::kAverage).set_window({3, 3, 3})
                                        .set_stride({2, 2, 2}).set_padding({1, 1, 1}).set_ceil_mode(true)),
                        one_input("x", random_array(DataType::kFloat32, {1, 2, 9, 10, 11}, 82)), Match::kClose);
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat32, {2, 64, 56, 56}, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true)),
                        one_input("x", random_array(DataType::kFloat32, {2, 64, 56, 56}, 83)), Match::kClose);
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kBFloat16, {2, 16, 12, 12}, PoolingAttributes().set_global(true)),
                        one_input("x", random_array(DataType::kBFloat16, {2, 16, 12, 12}, 84)), Match::kClose);
}

TEST_F(SamplingKernels, PoolingOnNhwcTensors) {
  // ResNet's stem max-pool and its global average pool, channels-last in fp16.
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat16, {2, 64, 56, 56},
                                    PoolingAttributes().set_window({3, 3}).set_stride({2, 2}).set_padding({1, 1})),
                        one_input("x", random_array(DataType::kFloat16, {2, 64, 56, 56}, 85)), Match::kClose, Layout::kNhwc);
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat16, {4, 256, 7, 7}, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true)),
                        one_input("x", random_array(DataType::kFloat16, {4, 256, 7, 7}, 86)), Match::kClose, Layout::kNhwc);
  check_every_candidate("kernel.pooling",
                        pooling_net(DataType::kFloat32, {2, 8, 20, 20}, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true)),
                        one_input("x", random_array(DataType::kFloat32, {2, 8, 20, 20}, 87)), Match::kClose, Layout::kNhwc);
}

// Channels-last pooling: the vector kernel (C a multiple of 16 bytes) and its fallback (the element
// kernel), each against the CPU backend and bit for bit against the same tactic on linear tensors
// (one window walk and one arithmetic per channel on both paths).
class NhwcPooling : public OnGpu {
 protected:
  HostArray run_thread_tactic(const PoolingAttributes& attrs, const HostArray& x, Layout layout) {
    const OneLayer layer(pooling_net(x.dtype(), x.shape(), attrs));
    const StepInstance step = layer.step(layout);
    auto tactic = family("kernel.pooling").replay(step, nlohmann::json{{"variant", "thread"}});
    EXPECT_TRUE(tactic.is_ok()) << tactic.status().message();
    HostArray none = HostArray::zeros(x.dtype(), {0}).value();
    if (!tactic.is_ok()) return none;
    auto in = upload(x, layout);
    const TensorDesc& y = layer.outputs[0];
    const size_t bytes = static_cast<size_t>(y.shape.element_count().value()) * data_type_size(y.dtype);
    DeviceBuffer out = device_memory(bytes);
    EXPECT_EQ(cudaMemset(out.data(), 0xFF, bytes), cudaSuccess);
    StepBuffers buffers;
    buffers.inputs.push_back({x.dtype(), x.shape(), layout, in.data()});
    buffers.outputs.push_back({y.dtype, y.shape, layout, out.data()});
    const RunContext ctx{stream_, nullptr, nullptr, &device_};
    const Status init = (*tactic)->initialize(step, ctx);
    EXPECT_TRUE(init.is_ok()) << init.message();
    const Status ran = (*tactic)->run(step, buffers, ctx);
    EXPECT_TRUE(ran.is_ok()) << ran.message();
    if (!init.is_ok() || !ran.is_ok()) return none;
    return download(buffers.outputs[0]);
  }

  // NaN planted at [n, c, h, w] positions of x (its linear, NCHW order).
  static void plant_nans(HostArray& x, const std::vector<std::array<int64_t, 4>>& at) {
    const Dims& s = x.shape();
    const double nan = std::nan("");
    for (const auto& p : at) {
      const int64_t i = ((p[0] * s[1] + p[1]) * s[2] + p[2]) * s[3] + p[3];
      convert_elements(DataType::kFloat64, &nan, x.dtype(), static_cast<char*>(x.data()) + i * data_type_size(x.dtype()), 1);
    }
  }

  void check(DataType type, Dims shape, const PoolingAttributes& attrs, uint32_t seed, bool with_nans = false) {
    SCOPED_TRACE(fmt::format("{}{} {}", data_type_name(type), shape.to_string(), with_nans ? "with NaN" : ""));
    HostArray x = random_array(type, shape, seed);
    if (with_nans) {
      const int64_t c = shape[1] - 1;  // the last lane of the last vector, and a middle lane
      plant_nans(x, {{0, 0, 0, 0}, {1, c, shape[2] - 1, shape[3] - 1}, {1, c / 2, 4, 5}, {0, c / 3, 6, 6}});
    }
    check_every_candidate("kernel.pooling", pooling_net(type, shape, attrs), one_input("x", HostArray::copy_of(x.view()).value()),
                          Match::kClose, Layout::kNhwc);
    expect_matches("nhwc against linear", run_thread_tactic(attrs, x, Layout::kNhwc), run_thread_tactic(attrs, x, Layout::kLinear),
                   Match::kBitExact);
  }
};

PoolingAttributes stem_pool(PoolingKind kind) {
  return PoolingAttributes().set_kind(kind).set_window({3, 3}).set_stride({2, 2}).set_padding({1, 1});
}

TEST_F(NhwcPooling, MaxOverSixtyFourChannelsWithBordersAndNaN) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    check(type, {2, 64, 23, 24}, stem_pool(PoolingKind::kMax), 100, /*with_nans=*/true);
    check(type, {2, 64, 23, 24}, stem_pool(PoolingKind::kMax).set_ceil_mode(true), 101);
  }
}

TEST_F(NhwcPooling, AverageOverSixtyFourChannelsCountingPaddingOrNot) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32})
    for (bool include_pad : {true, false}) {
      check(type, {2, 64, 23, 24}, stem_pool(PoolingKind::kAverage).set_count_include_pad(include_pad), 110);
      check(type, {2, 64, 17, 18}, stem_pool(PoolingKind::kAverage).set_count_include_pad(include_pad).set_ceil_mode(true), 111,
            /*with_nans=*/true);
    }
  check(DataType::kFloat16, {4, 64, 7, 7}, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true), 112);
  check(DataType::kFloat32, {4, 64, 7, 7}, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true), 113);
}

TEST_F(NhwcPooling, ChannelCountsThatAreNotWholeHalfPrecisionVectors) {
  // 3 channels: no vector; 12 channels: a whole number of fp32 vectors (4 lanes) but not of fp16 (8).
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32})
    for (int64_t channels : {3, 12})
      for (PoolingKind kind : {PoolingKind::kMax, PoolingKind::kAverage})
        check(type, {2, channels, 15, 16}, stem_pool(kind).set_count_include_pad(false), 120, /*with_nans=*/true);
}

TEST_F(NhwcPooling, ResNetStemMaxPoolAtBatch8) {
  check(DataType::kFloat16, {8, 64, 112, 112}, stem_pool(PoolingKind::kMax), 130);
}

// ---- whole networks through the cuda backend

class CudaBackendDataMovement : public OnGpu {};

TEST_F(CudaBackendDataMovement, Transpose1024x1024Fp16) {
  check_backend(transpose_net(DataType::kFloat16, {1024, 1024}, {1, 0}),
                one_input("x", random_array(DataType::kFloat16, {1024, 1024}, 90)), Match::kBitExact);
}

TEST_F(CudaBackendDataMovement, ConcatOfThreeOnAxis1) {
  Network n;
  NamedArrays inputs;
  std::vector<Tensor> parts;
  const std::vector<Dims> shapes{{8, 96, 40, 40}, {8, 32, 40, 40}, {8, 64, 40, 40}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    parts.push_back(n.add_input(name, DataType::kFloat32, shapes[i]));
    inputs[name] = random_array(DataType::kFloat32, shapes[i], 91 + static_cast<uint32_t>(i));
  }
  n.mark_output(n.concat(parts, ConcatAttributes().set_axis(1)), "y");
  check_backend(n, inputs, Match::kBitExact);
}

TEST_F(CudaBackendDataMovement, SliceWithNegativeStride) {
  Network n;
  n.mark_output(n.slice(n.add_input("x", DataType::kFloat16, {16, 512, 300}),
                        SliceAttributes().set_start({15, 10, 299}).set_size({8, 250, 150}).set_stride({-2, 2, -2})),
                "y");
  check_backend(n, one_input("x", random_array(DataType::kFloat16, {16, 512, 300}, 95)), Match::kBitExact);
}

}  // namespace
}  // namespace tensoracle::backends::cuda
