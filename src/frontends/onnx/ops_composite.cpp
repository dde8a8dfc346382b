// Ops without a layer of their own, written as a few pointwise and reduce layers (each formula
// is the op's definition in the ONNX operator docs): LogSoftmax, the reductions L1, L2,
// SumSquare, LogSum and LogSumExp, Elu, Selu, Celu, Softsign, ThresholdedRelu, Mish, PRelu, Mean,
// Tan, Not and CastLike.
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
  TO_ASSIGN_OR_RETURN(HostArray no, HostArray::zeros(DataType::kBool, Dims{}));
  Composer c(ctx);
  const Tensor false_value = ctx.net().add_constant(std::move(no), c.next());
  return ctx.set_output(0, ctx.net().elementwise(x, false_value, ElementwiseAttributes().set_op(ElementwiseOp::kEqual)
                                                                     .set_name(ctx.layer_name())));
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
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
