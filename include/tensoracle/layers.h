// The layer set of a Network: one OpKind per node kind and one attribute struct per layer.
//
// Attribute structs are small value objects whose setters return *this, so a layer reads as
//   net.convolution(x, w, b, ConvolutionAttributes().set_stride({2, 2}).set_padding({1, 1}));
// Every struct derives from LayerAttributes, which carries the optional layer name (errors and
// dumps use it; a generated "<kind>_<n>" name is used otherwise). The exact semantics of every
// layer and attribute are written down in docs/ops.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/types.h"

namespace tensoracle {

// One value per node kind. The string names (op_kind_name) appear in dumps, the canonical form
// and errors; they never change once released.
enum class OpKind : uint8_t {
  kConstant,
  kConvolution,
  kDeconvolution,
  kMatMul,
  kElementwise,
  kUnary,
  kActivation,
  kSoftmax,
  kReduce,
  kLayerNorm,
  kRmsNorm,
  kGroupNorm,
  kInstanceNorm,
  kBatchNorm,
  kPooling,
  kResize,
  kReshape,
  kTranspose,
  kConcat,
  kSlice,
  kPad,
  kGather,
  kGridSample,
  kSelect,
  kTopK,
  kAttention,
  kQuantize,
  kDequantize,
  kCast,
  kPlugin,
};
std::string_view op_kind_name(OpKind kind);               // "convolution", "matmul", ...
std::optional<OpKind> parse_op_kind(std::string_view name);
const std::vector<OpKind>& all_op_kinds();

// ---- enumerated attribute values (each with a stable lower-case name) ----
enum class ElementwiseOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin,
  kEqual, kLess, kGreater, kLessEqual, kGreaterEqual,  // -> bool
  kAnd, kOr,                                           // bool x bool -> bool
};
enum class UnaryOp : uint8_t {
  kExp, kLog, kSqrt, kRsqrt, kRecip, kAbs, kNeg, kSin, kCos, kErf, kFloor, kCeil, kRound,
};
enum class ActivationKind : uint8_t {
  kRelu, kLeakyRelu, kSigmoid, kTanh, kGeluErf, kGeluTanh, kSilu, kSoftplus, kClip,
  kHardSigmoid, kHardSwish,
};
enum class ReduceOp : uint8_t { kSum, kMean, kMax, kMin, kProd };
enum class PoolingKind : uint8_t { kMax, kAverage };
enum class ResizeMode : uint8_t { kNearest, kLinear };
// How an output coordinate maps to an input coordinate (docs/ops.md "Resize").
enum class ResizeCoordinates : uint8_t {
  kAsymmetric,    // in = out * in_size / out_size            (PyTorch mode="nearest")
  kHalfPixel,     // in = (out + 0.5) * in_size / out_size - 0.5 (PyTorch align_corners=False,
                  //                                              "nearest-exact")
  kAlignCorners,  // in = out * (in_size - 1) / (out_size - 1)
};
enum class PadMode : uint8_t { kConstant, kReflect, kReplicate, kCircular };
enum class GridSampleMode : uint8_t { kBilinear, kNearest };
enum class GridSamplePadding : uint8_t { kZeros, kBorder };

std::string_view enum_name(ElementwiseOp v);
std::string_view enum_name(UnaryOp v);
std::string_view enum_name(ActivationKind v);
std::string_view enum_name(ReduceOp v);
std::string_view enum_name(PoolingKind v);
std::string_view enum_name(ResizeMode v);
std::string_view enum_name(ResizeCoordinates v);
std::string_view enum_name(PadMode v);
std::string_view enum_name(GridSampleMode v);
std::string_view enum_name(GridSamplePadding v);

// Parses a name produced by enum_name. `parse_enum<ElementwiseOp>("add")`.
template <typename E>
std::optional<E> parse_enum(std::string_view name);

// ---- attribute structs ----
template <typename Derived>
struct LayerAttributes {
  std::string name;  // empty: a generated "<kind>_<n>"
  Derived& set_name(std::string value) {
    name = std::move(value);
    return static_cast<Derived&>(*this);
  }
};

// A field with its setter (TO_ATTR_DEFAULT_: with a default value).
#define TO_ATTR_(Type, field, setter) \
  Type field{};                       \
  auto& setter(Type value_) {         \
    field = std::move(value_);        \
    return *this;                     \
  }
#define TO_ATTR_DEFAULT_(Type, field, setter, default_value) \
  Type field = default_value;                                \
  auto& setter(Type value_) {                                \
    field = std::move(value_);                               \
    return *this;                                            \
  }

// Convolution over the trailing 1, 2 or 3 spatial dims of an [N, C, spatial...] input with a
// [K, C/groups, kernel...] weight and an optional [K] bias. Empty vectors mean the defaults
// (stride 1, dilation 1, padding 0) for every spatial dim.
struct ConvolutionAttributes : LayerAttributes<ConvolutionAttributes> {
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)
  TO_ATTR_(std::vector<int64_t>, dilation, set_dilation)
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  // Symmetric padding: sets both pre and post padding.
  ConvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Transposed 2D convolution (PyTorch ConvTranspose2d): [N, C, H, W] input, [C, K/groups, kh, kw]
// weight, optional [K] bias. Output size = (in-1)*stride - pre - post + dilation*(k-1) + 1 +
// output_padding.
struct DeconvolutionAttributes : LayerAttributes<DeconvolutionAttributes> {
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)
  TO_ATTR_(std::vector<int64_t>, dilation, set_dilation)
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_(std::vector<int64_t>, output_padding, set_output_padding)
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  DeconvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Matrix product with numpy.matmul semantics (rank-1 operands, broadcast batch dims), after
// optionally transposing the last two dims of either operand.
struct MatMulAttributes : LayerAttributes<MatMulAttributes> {
  TO_ATTR_DEFAULT_(bool, transpose_a, set_transpose_a, false)
  TO_ATTR_DEFAULT_(bool, transpose_b, set_transpose_b, false)
};

struct ElementwiseAttributes : LayerAttributes<ElementwiseAttributes> {
  TO_ATTR_DEFAULT_(ElementwiseOp, op, set_op, ElementwiseOp::kAdd)
};

struct UnaryAttributes : LayerAttributes<UnaryAttributes> {
  TO_ATTR_DEFAULT_(UnaryOp, op, set_op, UnaryOp::kExp)
};

// alpha/beta: leaky relu slope (alpha, default 0.01); clip bounds [alpha, beta] (default 0, 6);
// hard sigmoid clip(alpha*x + beta, 0, 1) and hard swish x * that (default 1/6, 1/2, PyTorch's);
// softplus
// log(1 + exp(alpha*x)) / alpha (default 1). Unused otherwise.
struct ActivationAttributes : LayerAttributes<ActivationAttributes> {
  TO_ATTR_DEFAULT_(ActivationKind, kind, set_kind, ActivationKind::kRelu)
  TO_ATTR_(std::optional<double>, alpha, set_alpha)
  TO_ATTR_(std::optional<double>, beta, set_beta)
};

struct SoftmaxAttributes : LayerAttributes<SoftmaxAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
};

// Reduces over `axes` (negative counts from the end; empty = every axis).
struct ReduceAttributes : LayerAttributes<ReduceAttributes> {
  TO_ATTR_DEFAULT_(ReduceOp, op, set_op, ReduceOp::kSum)
  TO_ATTR_(std::vector<int64_t>, axes, set_axes)
  TO_ATTR_DEFAULT_(bool, keep_dims, set_keep_dims, false)
};

// Layer norm / RMS norm over the dims [axis, rank): scale and bias have those trailing dims.
struct LayerNormAttributes : LayerAttributes<LayerNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
struct RmsNormAttributes : LayerAttributes<RmsNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-6)
};
// Group norm over [N, C, spatial...]: C split into `groups`; per-channel [C] scale and bias.
struct GroupNormAttributes : LayerAttributes<GroupNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
struct InstanceNormAttributes : LayerAttributes<InstanceNormAttributes> {
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
// Inference batch norm on [N, C, ...] with per-channel scale, bias, running mean and variance.
struct BatchNormAttributes : LayerAttributes<BatchNormAttributes> {
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};

// Pooling over the trailing window.size() dims (1, 2 or 3). `global`: the window is the whole
// spatial extent of an [N, C, spatial...] input (window, stride and padding must be empty).
struct PoolingAttributes : LayerAttributes<PoolingAttributes> {
  TO_ATTR_DEFAULT_(PoolingKind, kind, set_kind, PoolingKind::kMax)
  TO_ATTR_(std::vector<int64_t>, window, set_window)
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)  // empty: = window
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_DEFAULT_(bool, count_include_pad, set_count_include_pad, true)
  TO_ATTR_DEFAULT_(bool, ceil_mode, set_ceil_mode, false)
  TO_ATTR_DEFAULT_(bool, global, set_global, false)
  PoolingAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Resizes the trailing spatial dims of [N, C, spatial...] to `output_size`, or by `scales`
// (output = floor(in * scale); the coordinate mapping then uses 1/scale, as PyTorch does).
struct ResizeAttributes : LayerAttributes<ResizeAttributes> {
  TO_ATTR_DEFAULT_(ResizeMode, mode, set_mode, ResizeMode::kNearest)
  TO_ATTR_DEFAULT_(ResizeCoordinates, coordinates, set_coordinates, ResizeCoordinates::kAsymmetric)
  TO_ATTR_(std::vector<int64_t>, output_size, set_output_size)
  TO_ATTR_(std::vector<double>, scales, set_scales)
};

// New shape: 0 copies the input dim at that index, one -1 is inferred from the element count.
struct ReshapeAttributes : LayerAttributes<ReshapeAttributes> {
  TO_ATTR_(std::vector<int64_t>, shape, set_shape)
};
// output dim i = input dim perm[i].
struct TransposeAttributes : LayerAttributes<TransposeAttributes> {
  TO_ATTR_(std::vector<int64_t>, perm, set_perm)
};
struct ConcatAttributes : LayerAttributes<ConcatAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 0)
};
// Per dim: output[i] = input[start + i*stride] for i < size. stride may be negative; every
// index read must lie inside the input.
struct SliceAttributes : LayerAttributes<SliceAttributes> {
  TO_ATTR_(std::vector<int64_t>, start, set_start)
  TO_ATTR_(std::vector<int64_t>, size, set_size)
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)  // empty: all 1
};
// pre/post per dim (leading dims may be omitted: the vectors cover the trailing dims).
struct PadAttributes : LayerAttributes<PadAttributes> {
  TO_ATTR_(std::vector<int64_t>, pre, set_pre)
  TO_ATTR_(std::vector<int64_t>, post, set_post)
  TO_ATTR_DEFAULT_(PadMode, mode, set_mode, PadMode::kConstant)
  TO_ATTR_DEFAULT_(double, value, set_value, 0.0)
};
struct GatherAttributes : LayerAttributes<GatherAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 0)
};
struct GridSampleAttributes : LayerAttributes<GridSampleAttributes> {
  TO_ATTR_DEFAULT_(GridSampleMode, mode, set_mode, GridSampleMode::kBilinear)
  TO_ATTR_DEFAULT_(GridSamplePadding, padding, set_padding, GridSamplePadding::kZeros)
  TO_ATTR_DEFAULT_(bool, align_corners, set_align_corners, false)
};
struct SelectAttributes : LayerAttributes<SelectAttributes> {};
// The k largest (or smallest) along `axis`, sorted; ties keep the lower index first.
// Outputs: values and int64 indices.
struct TopKAttributes : LayerAttributes<TopKAttributes> {
  TO_ATTR_DEFAULT_(int64_t, k, set_k, 1)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(bool, largest, set_largest, true)
};
// softmax(q k^T * scale + mask) v over [..., L, D] operands. scale defaults to 1/sqrt(D).
// causal: query i attends to keys j <= i (top-left aligned, PyTorch is_causal).
struct AttentionAttributes : LayerAttributes<AttentionAttributes> {
  TO_ATTR_DEFAULT_(bool, causal, set_causal, false)
  TO_ATTR_(std::optional<double>, scale, set_scale)
};
// Quantize: q = saturate(round_half_even(x / scale)) into `output_type` (int8 or fp8e4m3).
// Per-tensor scale (a scalar or [1] tensor) or per-channel ([C] tensor along `axis`).
struct QuantizeAttributes : LayerAttributes<QuantizeAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kInt8)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 1)
};
// Dequantize: y = q * scale, rounded to `output_type` (fp32, fp16 or bf16).
struct DequantizeAttributes : LayerAttributes<DequantizeAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kFloat32)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 1)
};
struct CastAttributes : LayerAttributes<CastAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kFloat32)
};
// A plugin node: the plugin layer (plugin.h) supplies its implementation. Until a plugin is
// resolved the node carries its declared outputs; `params` is the plugin's serialized parameters.
struct PluginAttributes : LayerAttributes<PluginAttributes> {
  TO_ATTR_(std::string, plugin, set_plugin)
  TO_ATTR_(std::string, version, set_version)
  TO_ATTR_(std::string, params, set_params)
  TO_ATTR_(std::vector<DataType>, output_types, set_output_types)
  TO_ATTR_(std::vector<Dims>, output_shapes, set_output_shapes)
};

#undef TO_ATTR_
#undef TO_ATTR_DEFAULT_

}  // namespace tensoracle
