// What the tactic families declare to the planner (FamilyTraits, cuda_tactic.h), merged per layer
// kind as the planner asks for them: which layers fuse a pointwise epilogue (plan_lowering.h),
// which may be channels-last (plan_layouts.h) and which read or write the head-split bshd layout
// that turns the transposes around them into views (plan_views.h). Host code: runs anywhere.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cuda/cuda_tactic.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

// The merged traits of a layer of `kind` (its attributes at their defaults).
FamilyTraits traits_of(OpKind kind) {
  Node node;
  node.kind = kind;
  node.name = std::string(op_kind_name(kind));
  return tactic_families().traits(node);
}

bool declares_anything(const FamilyTraits& t) {
  return t.epilogue || t.nhwc || t.prefers_nhwc || !t.nhwc_constant_inputs.empty() || !t.bshd_inputs.empty() ||
         t.bshd_output;
}

TEST(FamilyTraits, MatrixProductsAndConvolutionsFuseAnEpilogue) {
  for (OpKind kind : {OpKind::kMatMul, OpKind::kConvolution, OpKind::kDeconvolution})
    EXPECT_TRUE(traits_of(kind).epilogue) << op_kind_name(kind);
}

TEST(FamilyTraits, APointwiseLayerTakesTheRestOfItsChainAndChannelsLast) {
  for (OpKind kind : all_op_kinds()) {
    if (!is_pointwise(kind)) continue;
    const FamilyTraits t = traits_of(kind);
    EXPECT_TRUE(t.epilogue) << op_kind_name(kind);
    EXPECT_TRUE(t.nhwc) << op_kind_name(kind);
    EXPECT_FALSE(t.prefers_nhwc) << op_kind_name(kind) << ": channels-last is for the convolutions around it";
  }
}

TEST(FamilyTraits, ConvolutionsPreferChannelsLastWithTheirWeightAndDeconvolutionsStayLinear) {
  const FamilyTraits conv = traits_of(OpKind::kConvolution);
  EXPECT_TRUE(conv.nhwc);
  EXPECT_TRUE(conv.prefers_nhwc);
  EXPECT_EQ(conv.nhwc_constant_inputs, std::vector<size_t>{1});
  const FamilyTraits deconv = traits_of(OpKind::kDeconvolution);
  EXPECT_FALSE(deconv.nhwc);
  EXPECT_FALSE(deconv.prefers_nhwc);
  EXPECT_TRUE(deconv.nhwc_constant_inputs.empty());
  const FamilyTraits pooling = traits_of(OpKind::kPooling);
  EXPECT_TRUE(pooling.nhwc);
  EXPECT_FALSE(pooling.prefers_nhwc);
  EXPECT_FALSE(pooling.epilogue);
}

// Matrix products and convolutions fuse quantization, and the quantize and dequantize kernels take
// channels-last tensors (one scale) without asking for them: next to Q/DQ-fused convolutions.
TEST(FamilyTraits, ConvolutionsFuseQuantizationAndQuantizeLayersTakeChannelsLast) {
  EXPECT_TRUE(traits_of(OpKind::kConvolution).quantize_fusion);
  EXPECT_TRUE(traits_of(OpKind::kMatMul).quantize_fusion);
  EXPECT_FALSE(traits_of(OpKind::kDeconvolution).quantize_fusion);
  for (OpKind kind : {OpKind::kQuantize, OpKind::kDequantize}) {
    const FamilyTraits t = traits_of(kind);
    EXPECT_TRUE(t.nhwc) << op_kind_name(kind);
    EXPECT_FALSE(t.prefers_nhwc || t.epilogue || t.quantize_fusion || !t.nhwc_constant_inputs.empty())
        << op_kind_name(kind);
  }
}

// A plugin step takes channels-last neighbours and converts them to the formats it negotiated.
TEST(FamilyTraits, PluginsTakeChannelsLastAndNoEpilogue) {
  const FamilyTraits t = traits_of(OpKind::kPlugin);
  EXPECT_TRUE(t.nhwc);
  EXPECT_FALSE(t.epilogue || t.quantize_fusion);
}

TEST(FamilyTraits, AttentionReadsQKVAndWritesItsOutputHeadSplit) {
  FamilyTraits t = traits_of(OpKind::kAttention);
  std::sort(t.bshd_inputs.begin(), t.bshd_inputs.end());
  EXPECT_EQ(t.bshd_inputs, (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(t.bshd_output);
  EXPECT_FALSE(t.epilogue);
  EXPECT_FALSE(t.nhwc);
}

TEST(FamilyTraits, EveryOtherLayerIsOfferedLinearTensorsAndNoEpilogue) {
  for (OpKind kind : all_op_kinds()) {
    if (is_pointwise(kind)) continue;
    switch (kind) {
      case OpKind::kMatMul:
      case OpKind::kConvolution:
      case OpKind::kDeconvolution:
      case OpKind::kPooling:
      case OpKind::kQuantize:
      case OpKind::kDequantize:
      case OpKind::kAttention:
      case OpKind::kPlugin: continue;
      default: break;
    }
    EXPECT_FALSE(declares_anything(traits_of(kind))) << op_kind_name(kind);
  }
}

TEST(FamilyTraits, MergingKeepsEverythingEitherDeclares) {
  FamilyTraits a, b;
  a.nhwc = true;
  a.bshd_inputs = {0, 2};
  b.epilogue = true;
  b.bshd_inputs = {2, 1};
  b.nhwc_constant_inputs = {1};
  a.merge(b);
  EXPECT_TRUE(a.nhwc);
  EXPECT_TRUE(a.epilogue);
  EXPECT_FALSE(a.prefers_nhwc);
  EXPECT_EQ(a.bshd_inputs, (std::vector<size_t>{0, 2, 1}));
  EXPECT_EQ(a.nhwc_constant_inputs, std::vector<size_t>{1});
}

}  // namespace
}  // namespace tensoracle::backends::cuda
