// The table of node kinds. Adding an op: write ops/<op>.cpp defining k<Op>Op, then add it here
// (docs/network.md, "How to add an op").
#include "graph/op_def.h"

namespace tensoracle::graph {

extern const OpDef kConstantOp, kConvolutionOp, kDeconvolutionOp, kMatMulOp, kElementwiseOp, kUnaryOp,
    kActivationOp, kSoftmaxOp, kReduceOp, kLayerNormOp, kRmsNormOp, kGroupNormOp, kInstanceNormOp, kBatchNormOp,
    kPoolingOp, kResizeOp, kReshapeOp, kTransposeOp, kConcatOp, kSliceOp, kPadOp, kGatherOp, kGridSampleOp,
    kSelectOp, kTopKOp, kAttentionOp, kQuantizeOp, kDequantizeOp, kCastOp, kPluginOp;

const OpDef* find_op_def(OpKind kind) {
  switch (kind) {
    case OpKind::kConstant: return &kConstantOp;
    case OpKind::kConvolution: return &kConvolutionOp;
    case OpKind::kDeconvolution: return &kDeconvolutionOp;
    case OpKind::kMatMul: return &kMatMulOp;
    case OpKind::kElementwise: return &kElementwiseOp;
    case OpKind::kUnary: return &kUnaryOp;
    case OpKind::kActivation: return &kActivationOp;
    case OpKind::kSoftmax: return &kSoftmaxOp;
    case OpKind::kReduce: return &kReduceOp;
    case OpKind::kLayerNorm: return &kLayerNormOp;
    case OpKind::kRmsNorm: return &kRmsNormOp;
    case OpKind::kGroupNorm: return &kGroupNormOp;
    case OpKind::kInstanceNorm: return &kInstanceNormOp;
    case OpKind::kBatchNorm: return &kBatchNormOp;
    case OpKind::kPooling: return &kPoolingOp;
    case OpKind::kResize: return &kResizeOp;
    case OpKind::kReshape: return &kReshapeOp;
    case OpKind::kTranspose: return &kTransposeOp;
    case OpKind::kConcat: return &kConcatOp;
    case OpKind::kSlice: return &kSliceOp;
    case OpKind::kPad: return &kPadOp;
    case OpKind::kGather: return &kGatherOp;
    case OpKind::kGridSample: return &kGridSampleOp;
    case OpKind::kSelect: return &kSelectOp;
    case OpKind::kTopK: return &kTopKOp;
    case OpKind::kAttention: return &kAttentionOp;
    case OpKind::kQuantize: return &kQuantizeOp;
    case OpKind::kDequantize: return &kDequantizeOp;
    case OpKind::kCast: return &kCastOp;
    case OpKind::kPlugin: return &kPluginOp;
  }
  return nullptr;
}

}  // namespace tensoracle::graph
