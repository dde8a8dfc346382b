// A convolution or deconvolution step as the convolution tactics see it: the geometry read once
// from the anchor's shapes and attributes (exactly as the CPU reference reads them), the data
// type and the memory layouts, with every limit checked. All three families start here.
#pragma once

#include <array>
#include <vector>

#include "backends/cuda/cudnn/conv_kernels.h"
#include "backends/cuda/cudnn/conv_pad_channels.h"
#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

struct ConvProblem {
  bool transposed = false;  // kDeconvolution
  DataType dtype = DataType::kFloat32;
  int spatial_rank = 2;  // as the network has it: 1, 2 or 3
  int64_t n = 0, c = 0, k = 0, groups = 1;  // c: channels of x, k: channels of y
  // Spatial dims padded to 3 (depth, height, width) with leading size-1 dims.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pre{0, 0, 0}, post{0, 0, 0}, output_padding{0, 0, 0};
  bool has_bias = false;
  // The weight may be nhwc too (a 2-D convolution's [K, C/G, R, S] stored KRSC, the order
  // tensor-core engines read): the builder reorders constant weights of channels-last convolutions.
  Layout x_layout = Layout::kLinear, y_layout = Layout::kLinear, w_layout = Layout::kLinear;
  Dims x_shape, w_shape, y_shape;  // the network's shapes

  int64_t output_elements() const { return n * k * out[0] * out[1] * out[2]; }
  // Element strides over the canonical [N, C, D, H, W] (stride 0 on the padded dims).
  std::array<int64_t, 5> x_strides() const;
  std::array<int64_t, 5> y_strides() const;
  std::array<int64_t, 5> w_strides() const;  // over [K, C/G, D, H, W] (transposed: [C, K/G, ...])
  std::array<int64_t, 5> y_shape5() const { return {n, k, out[0], out[1], out[2]}; }
};

// kUnsupported naming the layer for anything the convolution tactics cannot take: types other
// than fp32/fp16/bf16, mixed types, layouts other than linear (nhwc for rank-4 x and y, and for
// the weight of a rank-4 convolution), a non-linear bias, shapes too large for int64 indexing.
Result<ConvProblem> conv_problem(const StepInstance& step);

// The canonical strides of `shape` (rank 3..5, [N, C, spatial...]) stored in `layout`, or of a
// tensor broadcast to it (size-1 dims of a broadcast operand get stride 0).
std::array<int64_t, 5> canonical_strides(const Dims& shape, Layout layout);

ConvElement conv_element(DataType dtype);

// The direct kernel's arguments for `problem` on these buffers (bias and epilogue in `epilogue`).
DirectConvLaunch direct_conv_launch(const ConvProblem& problem, const void* x, const void* w, void* y,
                                    const EpilogueLaunch& epilogue);

// Padded-channel convolutions (conv_pad_channels.h): the input channels are rounded up to a
// multiple of this (8 fp16/bf16 values = 16 bytes, the vector cuDNN's tensor-core NHWC kernels read).
inline constexpr int64_t kPadChannelsTo = 8;

// ok when `problem` gets padded-channel candidates: fp16/bf16, a convolution (not transposed) of
// rank 4, one group, C not a multiple of kPadChannelsTo and at most 32 (beyond that the padding
// costs more than the engines it unlocks can gain); else kUnsupported with the reason.
Status pad_channels_applicable(const ConvProblem& problem);

// `problem` as the padded graph sees it: C rounded up to `multiple`, x a packed nhwc
// [N, Cp, H, W] and the weight a packed KRSC [K, Cp, R, S]; y, bias and epilogue unchanged.
ConvProblem with_padded_channels(const ConvProblem& problem, int64_t multiple);

// The padding copy's geometry for `problem`'s x [N, C, H, W] and w [K, C, R, S], read through
// their strides, into packed copies with C padded to a multiple of `multiple`; pointers null.
PadChannelsLaunch pad_channels_launch(const ConvProblem& problem, int64_t multiple);

}  // namespace tensoracle::backends::cuda
