// Which kernel runs each node kind. Adding an op: write cpu/<op>.cpp defining its kernel, then
// add its row here (docs/network.md, "How to add an op").
#include "backends/cpu/kernel.h"

namespace tensoracle::backends::cpu {

Status convolution_kernel(const KernelContext&);
Status deconvolution_kernel(const KernelContext&);
Status matmul_kernel(const KernelContext&);
Status elementwise_kernel(const KernelContext&);
Status unary_kernel(const KernelContext&);
Status activation_kernel(const KernelContext&);
Status softmax_kernel(const KernelContext&);
Status reduce_kernel(const KernelContext&);
Status layer_norm_kernel(const KernelContext&);
Status rms_norm_kernel(const KernelContext&);
Status group_norm_kernel(const KernelContext&);
Status instance_norm_kernel(const KernelContext&);
Status batch_norm_kernel(const KernelContext&);
Status pooling_kernel(const KernelContext&);
Status resize_kernel(const KernelContext&);
Status reshape_kernel(const KernelContext&);
Status transpose_kernel(const KernelContext&);
Status concat_kernel(const KernelContext&);
Status slice_kernel(const KernelContext&);
Status pad_kernel(const KernelContext&);
Status gather_kernel(const KernelContext&);
Status grid_sample_kernel(const KernelContext&);
Status select_kernel(const KernelContext&);
Status top_k_kernel(const KernelContext&);
Status attention_kernel(const KernelContext&);
Status quantize_kernel(const KernelContext&);
Status dequantize_kernel(const KernelContext&);
Status cast_kernel(const KernelContext&);

KernelFn find_kernel(OpKind kind) {
  switch (kind) {
    case OpKind::kConvolution: return &convolution_kernel;
    case OpKind::kDeconvolution: return &deconvolution_kernel;
    case OpKind::kMatMul: return &matmul_kernel;
    case OpKind::kElementwise: return &elementwise_kernel;
    case OpKind::kUnary: return &unary_kernel;
    case OpKind::kActivation: return &activation_kernel;
    case OpKind::kSoftmax: return &softmax_kernel;
    case OpKind::kReduce: return &reduce_kernel;
    case OpKind::kLayerNorm: return &layer_norm_kernel;
    case OpKind::kRmsNorm: return &rms_norm_kernel;
    case OpKind::kGroupNorm: return &group_norm_kernel;
    case OpKind::kInstanceNorm: return &instance_norm_kernel;
    case OpKind::kBatchNorm: return &batch_norm_kernel;
    case OpKind::kPooling: return &pooling_kernel;
    case OpKind::kResize: return &resize_kernel;
    case OpKind::kReshape: return &reshape_kernel;
    case OpKind::kTranspose: return &transpose_kernel;
    case OpKind::kConcat: return &concat_kernel;
    case OpKind::kSlice: return &slice_kernel;
    case OpKind::kPad: return &pad_kernel;
    case OpKind::kGather: return &gather_kernel;
    case OpKind::kGridSample: return &grid_sample_kernel;
    case OpKind::kSelect: return &select_kernel;
    case OpKind::kTopK: return &top_k_kernel;
    case OpKind::kAttention: return &attention_kernel;
    case OpKind::kQuantize: return &quantize_kernel;
    case OpKind::kDequantize: return &dequantize_kernel;
    case OpKind::kCast: return &cast_kernel;
    case OpKind::kConstant:
    case OpKind::kPlugin: return nullptr;  // constants are data; plugins bring their own
  }
  return nullptr;
}

}  // namespace tensoracle::backends::cpu
