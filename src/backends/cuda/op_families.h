// Which tactic families run each op kind on the cuda backend, in preference order:
// X(Kind, factory). This is the registration itself (tactic_table.cpp builds the FamilyTable
// from it), and it names no CUDA type, so host builds see it too: the op-table test
// (tests/host/ops/op_table_test.cpp) checks that every pointwise and compute op of the op table
// (layers.h) is listed here or in TENSORACLE_CUDA_UNSUPPORTED_OPS with the reason.
#pragma once

#define TENSORACLE_CUDA_FAMILIES(X)                                \
  X(Convolution, make_cudnn_qconv_family())                        \
  X(Convolution, make_cudnn_conv_family(OpKind::kConvolution))     \
  X(Convolution, make_direct_conv_family())                        \
  X(Deconvolution, make_cudnn_conv_family(OpKind::kDeconvolution)) \
  X(Deconvolution, make_direct_conv_family())                      \
  X(MatMul, make_cutlass_qmatmul_family())                         \
  X(MatMul, make_cublaslt_qmatmul_family())                        \
  X(MatMul, make_cublaslt_matmul_family())                         \
  X(Elementwise, make_pointwise_family())                          \
  X(Unary, make_pointwise_family())                                \
  X(Activation, make_pointwise_family())                           \
  X(Cast, make_pointwise_family())                                 \
  X(Select, make_pointwise_family())                               \
  X(Softmax, make_softmax_family())                                \
  X(Reduce, make_reduce_family())                                  \
  X(LayerNorm, make_layer_norm_family())                           \
  X(RmsNorm, make_rms_norm_family())                               \
  X(GroupNorm, make_group_norm_family())                           \
  X(InstanceNorm, make_instance_norm_family())                     \
  X(BatchNorm, make_batch_norm_family())                           \
  X(Quantize, make_quantize_family())                              \
  X(Dequantize, make_dequantize_family())                          \
  X(Reshape, make_reshape_family())                                \
  X(Transpose, make_transpose_family())                            \
  X(Concat, make_concat_family())                                  \
  X(Slice, make_slice_family())                                    \
  X(Pad, make_pad_family())                                        \
  X(Gather, make_gather_family())                                  \
  X(Iota, make_iota_family())                                      \
  X(TopK, make_top_k_family())                                     \
  X(Resize, make_resize_family())                                  \
  X(GridSample, make_grid_sample_family())                         \
  X(Pooling, make_pooling_family())                                \
  X(Attention, make_cudnn_sdpa_family())                           \
  X(Attention, make_composed_attention_family())                   \
  X(Plugin, make_plugin_family())

// Pointwise and compute ops the cuda backend does not run yet: X(Kind, "reason"). Its planner
// refuses a network holding one, naming the layer.
#define TENSORACLE_CUDA_UNSUPPORTED_OPS(X)
