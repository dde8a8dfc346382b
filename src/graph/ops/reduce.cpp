// reduce: sum, mean, max, min, prod over a set of axes, optionally keeping reduced dims as 1.
#include <set>

#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::reduce(Tensor input, const ReduceAttributes& attrs) {
  AttributeMap map{{"op", std::string(enum_name(attrs.op))}, {"axes", attrs.axes}, {"keep_dims", attrs.keep_dims}};
  return Impl::single(impl_->layer(*this, OpKind::kReduce, {input}, {}, std::move(map), attrs.name));
}

namespace graph {

// The reduced axes in [0, rank), sorted; all axes when `axes` is empty.
Result<std::vector<int64_t>> reduce_axes(const InferContext& ctx) {
  const size_t rank = ctx.in(0).shape.rank();
  std::set<int64_t> axes;
  const std::vector<int64_t> given = get_ints(ctx.attrs, "axes");
  for (int64_t a : given) {
    auto axis = normalize_axis(a, rank);
    if (!axis) return ctx.error("axis {} is out of range for {}", a, ctx.describe(0));
    if (!axes.insert(*axis).second) return ctx.error("axes {} name dim {} twice", join_ints(given), *axis);
  }
  if (given.empty())
    for (size_t i = 0; i < rank; ++i) axes.insert(static_cast<int64_t>(i));
  return std::vector<int64_t>(axes.begin(), axes.end());
}

namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  const std::string op_name = get_string(ctx.attrs, "op");
  auto op = parse_enum<ReduceOp>(op_name);
  if (!op) return ctx.error("unknown op '{}'", op_name);
  if (*op == ReduceOp::kMean) {
    TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  } else {
    TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                            DataType::kInt32, DataType::kInt64},
                                        "input"));
  }
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> axes, reduce_axes(ctx));
  const Dims& in = ctx.in(0).shape;
  const bool keep = get_bool(ctx.attrs, "keep_dims");
  std::vector<int64_t> out;
  size_t next = 0;
  for (size_t i = 0; i < in.rank(); ++i) {
    const bool reduced = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    if (reduced) {
      ++next;
      if ((*op == ReduceOp::kMax || *op == ReduceOp::kMin) && in[i] == 0)
        return ctx.error("{} over an empty dim {} of {} has no value", op_name, i, ctx.describe(0));
      if (keep) out.push_back(1);
    } else {
      out.push_back(in[i]);
    }
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kReduceOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
