// Stable names of OpKind and of the attribute enumerations (they appear in dumps and in the
// canonical form, so they never change once released).
#include "tensoracle/layers.h"

#include <array>
#include <utility>

namespace tensoracle {

namespace {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <typename E, size_t N>
std::string_view name_in(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> parse_in(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (n == name) return v;
  return std::nullopt;
}

constexpr NameTable<OpKind, 30> kOpKinds{{
    {OpKind::kConstant, "constant"},        {OpKind::kConvolution, "convolution"},
    {OpKind::kDeconvolution, "deconvolution"}, {OpKind::kMatMul, "matmul"},
    {OpKind::kElementwise, "elementwise"},  {OpKind::kUnary, "unary"},
    {OpKind::kActivation, "activation"},    {OpKind::kSoftmax, "softmax"},
    {OpKind::kReduce, "reduce"},            {OpKind::kLayerNorm, "layer_norm"},
    {OpKind::kRmsNorm, "rms_norm"},         {OpKind::kGroupNorm, "group_norm"},
    {OpKind::kInstanceNorm, "instance_norm"}, {OpKind::kBatchNorm, "batch_norm"},
    {OpKind::kPooling, "pooling"},          {OpKind::kResize, "resize"},
    {OpKind::kReshape, "reshape"},          {OpKind::kTranspose, "transpose"},
    {OpKind::kConcat, "concat"},            {OpKind::kSlice, "slice"},
    {OpKind::kPad, "pad"},                  {OpKind::kGather, "gather"},
    {OpKind::kGridSample, "grid_sample"},   {OpKind::kSelect, "select"},
    {OpKind::kTopK, "top_k"},               {OpKind::kAttention, "attention"},
    {OpKind::kQuantize, "quantize"},        {OpKind::kDequantize, "dequantize"},
    {OpKind::kCast, "cast"},                {OpKind::kPlugin, "plugin"},
}};

constexpr NameTable<ElementwiseOp, 14> kElementwiseOps{{
    {ElementwiseOp::kAdd, "add"},     {ElementwiseOp::kSub, "sub"},
    {ElementwiseOp::kMul, "mul"},     {ElementwiseOp::kDiv, "div"},
    {ElementwiseOp::kPow, "pow"},     {ElementwiseOp::kMax, "max"},
    {ElementwiseOp::kMin, "min"},     {ElementwiseOp::kEqual, "equal"},
    {ElementwiseOp::kLess, "less"},   {ElementwiseOp::kGreater, "greater"},
    {ElementwiseOp::kLessEqual, "less_equal"}, {ElementwiseOp::kGreaterEqual, "greater_equal"},
    {ElementwiseOp::kAnd, "and"},     {ElementwiseOp::kOr, "or"},
}};
constexpr NameTable<UnaryOp, 13> kUnaryOps{{
    {UnaryOp::kExp, "exp"},     {UnaryOp::kLog, "log"},     {UnaryOp::kSqrt, "sqrt"},
    {UnaryOp::kRsqrt, "rsqrt"}, {UnaryOp::kRecip, "recip"}, {UnaryOp::kAbs, "abs"},
    {UnaryOp::kNeg, "neg"},     {UnaryOp::kSin, "sin"},     {UnaryOp::kCos, "cos"},
    {UnaryOp::kErf, "erf"},     {UnaryOp::kFloor, "floor"}, {UnaryOp::kCeil, "ceil"},
    {UnaryOp::kRound, "round"},
}};
constexpr NameTable<ActivationKind, 11> kActivations{{
    {ActivationKind::kRelu, "relu"},         {ActivationKind::kLeakyRelu, "leaky_relu"},
    {ActivationKind::kSigmoid, "sigmoid"},   {ActivationKind::kTanh, "tanh"},
    {ActivationKind::kGeluErf, "gelu_erf"},  {ActivationKind::kGeluTanh, "gelu_tanh"},
    {ActivationKind::kSilu, "silu"},         {ActivationKind::kSoftplus, "softplus"},
    {ActivationKind::kClip, "clip"},         {ActivationKind::kHardSigmoid, "hard_sigmoid"},
    {ActivationKind::kHardSwish, "hard_swish"},
}};
constexpr NameTable<ReduceOp, 5> kReduceOps{{
    {ReduceOp::kSum, "sum"}, {ReduceOp::kMean, "mean"}, {ReduceOp::kMax, "max"},
    {ReduceOp::kMin, "min"}, {ReduceOp::kProd, "prod"},
}};
constexpr NameTable<PoolingKind, 2> kPoolingKinds{{{PoolingKind::kMax, "max"}, {PoolingKind::kAverage, "average"}}};
constexpr NameTable<ResizeMode, 2> kResizeModes{{{ResizeMode::kNearest, "nearest"}, {ResizeMode::kLinear, "linear"}}};
constexpr NameTable<ResizeCoordinates, 3> kResizeCoordinates{{
    {ResizeCoordinates::kAsymmetric, "asymmetric"},
    {ResizeCoordinates::kHalfPixel, "half_pixel"},
    {ResizeCoordinates::kAlignCorners, "align_corners"},
}};
constexpr NameTable<PadMode, 4> kPadModes{{
    {PadMode::kConstant, "constant"}, {PadMode::kReflect, "reflect"},
    {PadMode::kReplicate, "replicate"}, {PadMode::kCircular, "circular"},
}};
constexpr NameTable<GridSampleMode, 2> kGridSampleModes{{{GridSampleMode::kBilinear, "bilinear"}, {GridSampleMode::kNearest, "nearest"}}};
constexpr NameTable<GridSamplePadding, 2> kGridSamplePaddings{{{GridSamplePadding::kZeros, "zeros"}, {GridSamplePadding::kBorder, "border"}}};

}  // namespace

std::string_view op_kind_name(OpKind kind) { return name_in(kOpKinds, kind); }
std::optional<OpKind> parse_op_kind(std::string_view name) { return parse_in(kOpKinds, name); }
const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> out;
    for (const auto& entry : kOpKinds) out.push_back(entry.first);
    return out;
  }();
  return kinds;
}

#define TO_ENUM_NAMES_(Type, table)                                                      \
  std::string_view enum_name(Type v) { return name_in(table, v); }                       \
  template <>                                                                            \
  std::optional<Type> parse_enum<Type>(std::string_view name) { return parse_in(table, name); }

TO_ENUM_NAMES_(ElementwiseOp, kElementwiseOps)
TO_ENUM_NAMES_(UnaryOp, kUnaryOps)
TO_ENUM_NAMES_(ActivationKind, kActivations)
TO_ENUM_NAMES_(ReduceOp, kReduceOps)
TO_ENUM_NAMES_(PoolingKind, kPoolingKinds)
TO_ENUM_NAMES_(ResizeMode, kResizeModes)
TO_ENUM_NAMES_(ResizeCoordinates, kResizeCoordinates)
TO_ENUM_NAMES_(PadMode, kPadModes)
TO_ENUM_NAMES_(GridSampleMode, kGridSampleModes)
TO_ENUM_NAMES_(GridSamplePadding, kGridSamplePaddings)
#undef TO_ENUM_NAMES_

}  // namespace tensoracle
