// Ops without a layer of their own, written as a few pointwise and reduce layers (each formula
// is the op's definition in the ONNX operator docs): LogSoftmax, the reductions L1, L2,
// SumSquare, LogSum and LogSumExp, Elu, Selu, Celu, Softsign, ThresholdedRelu, Mish, Swish,
// PRelu, Mean, Tan, Not, IsNaN, IsInf, Trilu and CastLike.
#include <limits>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// Layers named "<node>/<step>" by a counter.
class Composer {
 public:
  explicit Composer(NodeContext& ctx) : ctx_(ctx), net_(ctx.net()) {}
  std::string next() { return fmt::format("{}/{}", ctx_.layer_name(), step_++); }
  Tensor binary(ElementwiseOp op, Tensor a, Tensor b) {
    return net_.elementwise(a, b, ElementwiseAttributes().set_op(op).set_name(next()));
  }
  Tensor unary(UnaryOp op, Tensor x) { return net_.unary(x, UnaryAttributes().set_op(op).set_name(next())); }
  Tensor activation(ActivationKind kind, Tensor x) {
    return net_.activation(x, ActivationAttributes().set_kind(kind).set_name(next()));
  }
  Tensor reduce(ReduceAttributes attrs, Tensor x) { return net_.reduce(x, attrs.set_name(next())); }
  Tensor select(Tensor c, Tensor a, Tensor b) { return net_.select(c, a, b, SelectAttributes().set_name(next())); }
  // A scalar of x's floating type.
  Result<Tensor> scalar(Tensor like, double value) { return float_scalar(ctx_, ctx_.desc(like).dtype, value, next()); }
  Status output(Tensor y) { return ctx_.set_output(0, y); }
  // A bool constant: a scalar `value`, or `mask` of `shape`.
  Result<Tensor> bools(const Dims& shape, const std::vector<bool>& values) {
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kBool, shape));
    for (size_t i = 0; i < values.size(); ++i) array.data_as<uint8_t>()[i] = values[i] ? 1 : 0;
    return net_.add_constant(std::move(array), next());
  }
  Result<Tensor> logical_not(Tensor x) {
    TO_ASSIGN_OR_RETURN(const Tensor no, bools(Dims{}, {false}));
    return binary(ElementwiseOp::kEqual, x, no);
  }

 private:
  NodeContext& ctx_;
  Network& net_;
  int step_ = 0;
};

Status convert_log_softmax(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", -1));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  // x - max - log(sum(exp(x - max))): no exp overflows, no log of an underflowed 0.
  const ReduceAttributes over = ReduceAttributes().set_axes({axis}).set_keep_dims(true);
  const Tensor shifted = c.binary(ElementwiseOp::kSub, x, c.reduce(ReduceAttributes(over).set_op(ReduceOp::kMax), x));
  const Tensor sum = c.reduce(ReduceAttributes(over).set_op(ReduceOp::kSum), c.unary(UnaryOp::kExp, shifted));
  return c.output(c.binary(ElementwiseOp::kSub, shifted, c.unary(UnaryOp::kLog, sum)));
}

enum class Norm { kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

Status convert_norm_reduce(NodeContext& ctx, Norm norm) {
  TO_ASSIGN_OR_RETURN(const std::optional<ReduceAttributes> attrs, reduce_attributes(ctx, ReduceOp::kSum));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  if (!attrs) return ctx.refuse("an empty axes list with noop_with_empty_axes 1 is not supported here");
  Composer c(ctx);
  switch (norm) {
    case Norm::kL1: return c.output(c.reduce(*attrs, c.unary(UnaryOp::kAbs, x)));
    case Norm::kL2: return c.output(c.unary(UnaryOp::kSqrt, c.reduce(*attrs, c.binary(ElementwiseOp::kMul, x, x))));
    case Norm::kSumSquare: return c.output(c.reduce(*attrs, c.binary(ElementwiseOp::kMul, x, x)));
    case Norm::kLogSum: return c.output(c.unary(UnaryOp::kLog, c.reduce(*attrs, x)));
    case Norm::kLogSumExp: {
      ReduceAttributes max = ReduceAttributes(*attrs).set_op(ReduceOp::kMax);
      const Tensor m = c.reduce(ReduceAttributes(max).set_keep_dims(true), x);
      const Tensor sum = c.reduce(*attrs, c.unary(UnaryOp::kExp, c.binary(ElementwiseOp::kSub, x, m)));
      return c.output(c.binary(ElementwiseOp::kAdd, c.unary(UnaryOp::kLog, sum), c.reduce(max, x)));
    }
  }
  return ctx.invalid("unknown reduction");
}

// select(x < 0, alpha * (exp(x) - 1), x).
Status convert_elu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor zero, c.scalar(x, 0.0));
  TO_ASSIGN_OR_RETURN(const Tensor one, c.scalar(x, 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor a, c.scalar(x, alpha));
  const Tensor negative = c.binary(ElementwiseOp::kMul, a, c.binary(ElementwiseOp::kSub, c.unary(UnaryOp::kExp, x), one));
  return c.output(c.select(c.binary(ElementwiseOp::kLess, x, zero), negative, x));
}

Status convert_selu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.67326319217681884765625));
  TO_ASSIGN_OR_RETURN(const double gamma, ctx.attribute_float("gamma", 1.05070102214813232421875));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor zero, c.scalar(x, 0.0));
  TO_ASSIGN_OR_RETURN(const Tensor a, c.scalar(x, alpha));
  TO_ASSIGN_OR_RETURN(const Tensor g, c.scalar(x, gamma));
  const Tensor negative = c.binary(ElementwiseOp::kSub, c.binary(ElementwiseOp::kMul, a, c.unary(UnaryOp::kExp, x)), a);
  const Tensor y = c.select(c.binary(ElementwiseOp::kLessEqual, x, zero), negative, x);
  return c.output(c.binary(ElementwiseOp::kMul, g, y));
}

Status convert_celu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  TO_ASSIGN_OR_RETURN(const Tensor zero, c.scalar(x, 0.0));
  TO_ASSIGN_OR_RETURN(const Tensor one, c.scalar(x, 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor a, c.scalar(x, alpha));
  const Tensor e = c.binary(ElementwiseOp::kSub, c.unary(UnaryOp::kExp, c.binary(ElementwiseOp::kDiv, x, a)), one);
  return c.output(c.binary(ElementwiseOp::kAdd, c.binary(ElementwiseOp::kMax, zero, x),
                           c.binary(ElementwiseOp::kMin, zero, c.binary(ElementwiseOp::kMul, a, e))));
}

Status convert_softsign(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor one, c.scalar(x, 1.0));
  return c.output(c.binary(ElementwiseOp::kDiv, x, c.binary(ElementwiseOp::kAdd, one, c.unary(UnaryOp::kAbs, x))));
}

Status convert_thresholded_relu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor zero, c.scalar(x, 0.0));
  TO_ASSIGN_OR_RETURN(const Tensor a, c.scalar(x, alpha));
  return c.output(c.select(c.binary(ElementwiseOp::kGreater, x, a), x, zero));
}

Status convert_mish(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  const Tensor softplus = c.activation(ActivationKind::kSoftplus, x);
  return c.output(c.binary(ElementwiseOp::kMul, x, c.activation(ActivationKind::kTanh, softplus)));
}

Status convert_prelu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor slope, ctx.input(1));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor zero, c.scalar(x, 0.0));
  return c.output(c.select(c.binary(ElementwiseOp::kLess, x, zero), c.binary(ElementwiseOp::kMul, slope, x), x));
}

Status convert_mean(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(Tensor sum, ctx.input(0));
  Composer c(ctx);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    TO_ASSIGN_OR_RETURN(const Tensor next, ctx.input(i));
    sum = c.binary(ElementwiseOp::kAdd, sum, next);
  }
  TO_ASSIGN_OR_RETURN(const Tensor n, c.scalar(sum, static_cast<double>(ctx.num_inputs())));
  return c.output(c.binary(ElementwiseOp::kDiv, sum, n));
}

Status convert_tan(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  return c.output(c.binary(ElementwiseOp::kDiv, c.unary(UnaryOp::kSin, x), c.unary(UnaryOp::kCos, x)));
}

Status convert_not(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  if (ctx.desc(x).dtype != DataType::kBool) return ctx.invalid("input {} is not bool", ctx.desc(x).to_string());
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor y, c.logical_not(x));
  return c.output(y);
}

Status convert_swish(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 1.0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor a, c.scalar(x, alpha));
  const Tensor gate = c.activation(ActivationKind::kSigmoid, c.binary(ElementwiseOp::kMul, a, x));
  return c.output(c.binary(ElementwiseOp::kMul, x, gate));
}

// NaN is the one value not equal to itself.
Status convert_is_nan(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor y, c.logical_not(c.binary(ElementwiseOp::kEqual, x, x)));
  return c.output(y);
}

Status convert_is_inf(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t negative, ctx.attribute_int("detect_negative", 1));
  TO_ASSIGN_OR_RETURN(const int64_t positive, ctx.attribute_int("detect_positive", 1));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  Composer c(ctx);
  const double inf = std::numeric_limits<double>::infinity();
  if (negative == 0 && positive == 0) return c.output(c.binary(ElementwiseOp::kLess, x, x));  // false everywhere
  TO_ASSIGN_OR_RETURN(const Tensor bound, c.scalar(x, negative != 0 && positive == 0 ? -inf : inf));
  const Tensor compared = negative != 0 && positive != 0 ? c.unary(UnaryOp::kAbs, x) : x;
  return c.output(c.binary(ElementwiseOp::kEqual, compared, bound));
}

// The upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims; the rest 0.
Status convert_trilu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t upper, ctx.attribute_int("upper", 1));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    TO_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.int_list_input(1));
    if (values.size() != 1) return ctx.invalid("k has {} values, expected 1", values.size());
    k = values[0];
  }
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  if (shape.rank() < 2) return ctx.invalid("input {} has fewer than 2 dims", ctx.desc(x).to_string());
  const int64_t rows = shape[shape.rank() - 2];
  const int64_t cols = shape[shape.rank() - 1];
  if (rows < 0 || cols < 0) return ctx.refuse("dynamic matrix dims of {} are not supported", ctx.desc(x).to_string());
  const auto cells = checked_mul(rows, cols);
  if (!cells || *cells > (int64_t{1} << 26)) return ctx.invalid("a {} x {} matrix is too large for a mask", rows, cols);
  std::vector<bool> keep(static_cast<size_t>(*cells));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)  // j - i is small (the mask is bounded), k any int64
      keep[static_cast<size_t>(i * cols + j)] = upper != 0 ? j - i >= k : j - i <= k;
  Composer c(ctx);
  TO_ASSIGN_OR_RETURN(const Tensor mask, c.bools(Dims{rows, cols}, keep));
  TO_ASSIGN_OR_RETURN(HostArray zero, HostArray::zeros(ctx.desc(x).dtype, Dims{}));
  const Tensor zeros = ctx.net().add_constant(std::move(zero), c.next());
  return c.output(c.select(mask, x, zeros));
}

Status convert_cast_like(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor like, ctx.input(1));
  return cast_to(ctx, ctx.desc(like).dtype);
}

#define TO_NORM_(Onnx, Kind) {#Onnx, [](NodeContext& c) { return convert_norm_reduce(c, Norm::k##Kind); }}

}  // namespace

const std::vector<OpConverter>& composite_converters() {
  static const std::vector<OpConverter> converters = {
      {"LogSoftmax", &convert_log_softmax},
      TO_NORM_(ReduceL1, L1), TO_NORM_(ReduceL2, L2), TO_NORM_(ReduceSumSquare, SumSquare),
      TO_NORM_(ReduceLogSum, LogSum), TO_NORM_(ReduceLogSumExp, LogSumExp),
      {"Elu", &convert_elu}, {"Selu", &convert_selu}, {"Celu", &convert_celu}, {"Softsign", &convert_softsign},
      {"ThresholdedRelu", &convert_thresholded_relu}, {"Mish", &convert_mish}, {"PRelu", &convert_prelu},
      {"Mean", &convert_mean}, {"Tan", &convert_tan}, {"Not", &convert_not}, {"CastLike", &convert_cast_like},
      {"Swish", &convert_swish}, {"IsNaN", &convert_is_nan}, {"IsInf", &convert_is_inf}, {"Trilu", &convert_trilu},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
